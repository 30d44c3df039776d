/* The fast_cpu backend: a sweep of many combos over one series with OpenMP,
 * built on what the combos share (fast_cpu/README.md has the whole plan and
 * the memory bound).
 *
 *   1. series-wide, once: TR, cloc, the exit-search trees over low and -high;
 *      per atr_window: ATR and the valid bars;
 *   2. per batch of z windows (as many as the memory budget holds; results
 *      never depend on it): the rolling vol_z per z window, then per
 *      (z_window, atr_window) pair the rolling tr_z, and the bars where the
 *      pair's loosest thresholds could hold (the rolling z only as a
 *      pre-filter, SEBT_K_Z_MARGIN from the threshold); there the reference's
 *      exact z-scores decide which bars are candidates;
 *   3. per atr_window, U: the union of its pairs' candidates; bitsets over U
 *      per EMA pair (ema_f < ema_s), per vol_z and tr_z threshold of each
 *      pair and per cloc_min;
 *   4. combos grouped by exit key (atr_window and exit parameters), in
 *      parallel: each combo ANDs its four bitsets on the fly and hops from
 *      signal to signal through the exit key's memo (combo_kernel.h), filled
 *      lazily, once per candidate a combo of the task actually takes.
 * Every decision is taken on the reference's bits, and nothing a combo
 * computes depends on the thread, the task or the batch it falls in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "fast_cpu_internal.h"

/* OMP_NUM_THREADS=100000 made GOMP abort or crash creating the team; no
 * result depends on the thread count, so more than this is never asked
 * of it (the CLI refuses such a value, as it refuses --threads). */
#define FAST_MAX_THREADS 4096

/* ---- series-wide pieces -------------------------------------------------- */

void fast_tr_column(const sebt_series *s, double *out)
{
    for (size_t t = 0; t < s->n; t++)
        out[t] = sebt_k_tr_at(s->high, s->low, s->close, (int64_t)t);
}

void fast_cloc_column(const sebt_series *s, double *out)
{
    for (size_t t = 0; t < s->n; t++)
        out[t] = sebt_k_cloc_at(s->high, s->low, s->close, (int64_t)t);
}

/* ATR(w) for bars [from, to): the reference's naive sums, computed for a
 * block of bars side by side so the compiler vectorises across bars. Each
 * bar's sum still adds its window oldest first, so the bits are the
 * reference's. */
#define ATR_BLOCK 512
void fast_atr_range(const double *tr, size_t n, int32_t w, size_t from, size_t to, double *out)
{
    size_t ws = (size_t)w;
    size_t t = from;
    for (; t < to && t + 1 < ws; t++)
        out[t] = NAN;
    double acc[ATR_BLOCK];
    while (t < to) {
        size_t len = to - t < ATR_BLOCK ? to - t : ATR_BLOCK;
        fast_window_sums(tr + (t + 1 - ws), ws, len, acc);    /* from bar t's window start */
        for (size_t j = 0; j < len; j++)
            out[t + j] = acc[j] / (double)w;
        t += len;
    }
    (void)n;
}

void fast_valid_from_atr(const double *atr, size_t n, uint8_t *valid, int32_t *rank, int32_t *vbar,
                         int64_t *n_valid)
{
    int32_t k = 0;
    for (size_t t = 0; t < n; t++) {
        rank[t] = k;
        valid[t] = !isnan(atr[t]);
        if (valid[t])
            vbar[k++] = (int32_t)t;
    }
    *n_valid = k;
}

/* Replaces the rolling z (column z of x, window w) by the reference's bits
 * at every bar where z > pre (pre is sebt_k_z_prefilter of the loosest
 * threshold), cloc > cmin, and, when gate is given, gate > gate_min (the
 * other z-score, already exact where it matters). Returns -1 when out of
 * memory (z is then unchanged). */
int fast_z_refine(const double *x, size_t n, int32_t w, double *z, double pre, const double *cloc, double cmin,
                  const double *gate, double gate_min)
{
    size_t count = 0;
    for (size_t t = 0; t < n; t++)
        count += z[t] > pre && cloc[t] > cmin && (!gate || gate[t] > gate_min);
    if (!count)
        return 0;
    int32_t *bars = malloc(count * sizeof *bars);
    double *vals = malloc(count * sizeof *vals);
    if (!bars || !vals) {
        free(bars);
        free(vals);
        return -1;
    }
    size_t k = 0;
    for (size_t t = 0; t < n; t++)
        if (z[t] > pre && cloc[t] > cmin && (!gate || gate[t] > gate_min))
            bars[k++] = (int32_t)t;
    fast_zscore_exact_at(x, w, bars, count, vals);
    for (size_t i = 0; i < count; i++)
        z[bars[i]] = vals[i];
    free(bars);
    free(vals);
    return 0;
}

sebt_status fast_market_build(const sebt_series *s, fast_market *fm, sebt_error *err)
{
    memset(fm, 0, sizeof *fm);
    int64_t n = (int64_t)s->n;
    sebt_k_market *m = &fm->m;
    m->n = n;
    m->open = s->open;
    m->high = s->high;
    m->low = s->low;
    m->close = s->close;
    fm->neg_high = malloc((s->n ? s->n : 1) * sizeof(double));
    if (!fm->neg_high)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu bars", s->n);
    for (size_t t = 0; t < s->n; t++)
        fm->neg_high[t] = -s->high[t];

    sebt_k_tree *trees[2] = { &m->low_min, &m->neg_high_min };
    const double *bases[2] = { s->low, fm->neg_high };
    for (int k = 0; k < 2; k++) {
        sebt_k_tree *tr = trees[k];
        tr->nlev = 1;
        tr->len[0] = n;
        tr->lev[0] = bases[k];
        while (tr->len[tr->nlev - 1] > 1 && tr->nlev < SEBT_K_MAX_LEVELS) {
            int L = tr->nlev;
            int64_t len = (tr->len[L - 1] + SEBT_K_FAN - 1) / SEBT_K_FAN;
            double *lev = malloc((size_t)len * sizeof(double));
            if (!lev) {
                fast_market_free(fm);
                return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for search trees");
            }
            sebt_k_tree_build_level(tr->lev[L - 1], tr->len[L - 1], lev, len);
            tr->lev[L] = lev;
            tr->len[L] = len;
            tr->nlev++;
        }
    }
    return SEBT_OK;
}

void fast_market_free(fast_market *fm)
{
    sebt_k_tree *trees[2] = { &fm->m.low_min, &fm->m.neg_high_min };
    for (int k = 0; k < 2; k++)
        for (int L = 1; L < trees[k]->nlev; L++)
            free((void *)trees[k]->lev[L]);
    free(fm->neg_high);
    memset(fm, 0, sizeof *fm);
}


/* ---- the sweep ----------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Threads for the planning passes over the combos: one per 8,192 combos at
 * most, so a small window is not split into pieces that cost more to hand
 * out than to run. */
static int plan_threads(const fast_sweep *w, size_t n)
{
    size_t t = n / 8192 + 1;
    return t < (size_t)w->threads ? (int)t : w->threads;
}

static int team_size(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

size_t fast_memory_budget(void)
{
    const char *e = getenv("SEBT_FAST_CPU_MEMORY_MB");
    if (e && *e) {
        char *end = NULL;
        unsigned long long mb = strtoull(e, &end, 10);
        if (end != e && *end == '\0' && mb > 0)
            return (size_t)mb << 20;
    }
    return (size_t)FAST_DEFAULT_BUDGET_MB << 20;
}


static int cmp_d(double a, double b) { return a < b ? -1 : a > b; }
static int cmp_i(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int exit_cmp(const fast_combo_ref *a, const fast_combo_ref *b)
{
    int c;
    if ((c = cmp_i(a->batch, b->batch)) || (c = cmp_i(a->a, b->a)) || (c = cmp_i(a->use_stop, b->use_stop)) ||
        (c = cmp_d(a->stop_mult, b->stop_mult)) || (c = cmp_i(a->use_tp, b->use_tp)) ||
        (c = cmp_d(a->reward, b->reward)) || (c = cmp_i(a->use_time, b->use_time)) ||
        (c = cmp_i(a->max_hold, b->max_hold)) || (c = cmp_d(a->cost, b->cost)))
        return c;
    return 0;
}

static int ref_cmp(const void *pa, const void *pb)
{
    const fast_combo_ref *a = pa, *b = pb;
    int c;
    if ((c = exit_cmp(a, b)) || (c = cmp_i(a->z, b->z)) || (c = cmp_i(a->fast, b->fast)) ||
        (c = cmp_i(a->slow, b->slow)) || (c = cmp_d(a->vz, b->vz)) || (c = cmp_d(a->tz, b->tz)) ||
        (c = cmp_d(a->cm, b->cm)))
        return c;
    return cmp_i((int64_t)a->index, (int64_t)b->index);
}

static int i32_cmp(const void *a, const void *b) { return cmp_i(*(const int32_t *)a, *(const int32_t *)b); }
static int dbl_cmp(const void *a, const void *b) { return cmp_d(*(const double *)a, *(const double *)b); }

/* Sorted distinct values of v[0 .. n) in place; returns their count.
 * A sweep's columns hold few distinct values, mostly in runs (a grid's
 * axes), and this runs serially between parallel steps: the values are
 * gathered into a short sorted list (binary insertion), and only when it
 * outgrows UNIQ_FEW are all n sorted. Equal values are one value either way
 * (-0 and 0 too: every later use compares with < and >, where they agree). */
#define UNIQ_FEW 64

/* One body for both column types; a NaN (doubles only) has no place in the
 * short list's order, so it sends the column to the full sort. */
#define UNIQ_DEFINE(name, T, cmp_fn, is_nan)                                  \
    static size_t name(T *v, size_t n)                                        \
    {                                                                         \
        T few[UNIQ_FEW];                                                      \
        size_t k = 0;                                                         \
        for (size_t i = 0; i < n; i++) {                                      \
            T x = v[i];                                                       \
            if (i > 0 && x == v[i - 1])                                       \
                continue;                                                     \
            if (is_nan(x))                                                    \
                goto sort_all;                                                \
            size_t a = 0, b = k;                                              \
            while (a < b) {                                                   \
                size_t m = a + (b - a) / 2;                                   \
                if (few[m] < x) a = m + 1; else b = m;                        \
            }                                                                 \
            if (a < k && few[a] == x)                                         \
                continue;                                                     \
            if (k == UNIQ_FEW)                                                \
                goto sort_all;                                                \
            memmove(few + a + 1, few + a, (k - a) * sizeof *few);             \
            few[a] = x;                                                       \
            k++;                                                              \
        }                                                                     \
        memcpy(v, few, k * sizeof *v);                                        \
        return k;                                                             \
    sort_all:                                                                 \
        qsort(v, n, sizeof *v, cmp_fn);                                       \
        k = 0;                                                                \
        for (size_t i = 0; i < n; i++)                                        \
            if (k == 0 || v[i] != v[k - 1])                                   \
                v[k++] = v[i];                                                \
        return k;                                                             \
    }

#define UNIQ_NEVER_NAN(x) ((void)(x), 0)
UNIQ_DEFINE(uniq_i32, int32_t, i32_cmp, UNIQ_NEVER_NAN)
UNIQ_DEFINE(uniq_d, double, dbl_cmp, isnan)

static int32_t find_i32(const int32_t *v, size_t n, int32_t x)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (v[m] < x) a = m + 1; else b = m;
    }
    return (int32_t)a;
}

static int32_t find_d(const double *v, size_t n, double x)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (v[m] < x) a = m + 1; else b = m;
    }
    return (int32_t)a;
}




void fast_sweep_end(fast_sweep *w)
{
    free(w->tr);
    free(w->cloc);
    fast_market_free(&w->fm);
    for (size_t a = 0; a < w->n_atrs; a++) {
        if (w->atr_col) free(w->atr_col[a]);
        if (w->valid) free(w->valid[a]);
        if (w->rank) free(w->rank[a]);
        if (w->vbar) free(w->vbar[a]);
    }
    free(w->atr_col);
    free(w->valid);
    free(w->rank);
    free(w->vbar);
    free(w->n_valid);
    free(w->atrs);
    free(w->zs);
    free(w->refs);
}

static void zpair_free(fast_zpair *p)
{
    free(p->bar);
    free(p->idx);
    free(p->vz);
    free(p->tz);
    free(p->vthr);
    free(p->tthr);
    free(p->vbits);
    free(p->tbits);
}

static void aset_free(fast_aset *s)
{
    free(s->bar);
    free(s->atr);
    free(s->cthr);
    free(s->cbits);
    free(s->spans);
    free(s->ema_at);
    free(s->pairs);
    free(s->ebits);
}

/* The bars of one z window where its loosest thresholds could hold, with
 * the reference's vol_z there: the rolling vol_z (into scratch) as a
 * pre-filter, then the exact z at the bars it lets through. */
typedef struct {
    double vmin, cmin;             /* loosest among the batch's pairs of this z */
    size_t n;
    int32_t *bar;
    double *vz;
} zlist;

/* Rolling passes (the pre-filters) run in pieces of the series so that one
 * z window, or one pair, spreads over every thread: a streamed window
 * holds one or two of each, and their rolling passes, one thread each,
 * were a large part of what it computed before its combos could start. A piece of bars [t0, t1) starts its
 * pass w - 1 bars early (at bar 0 at the latest): its first value then
 * comes from the exact window moments, as at bar 0 of a whole pass, so the
 * pre-filter's bound (indicators.h) holds in every piece; the pass's NaN
 * and flat-window counts see whole windows there. A piece is at least 4
 * windows long, so the repeated warm-up costs under a quarter. The pieces
 * depend on the series and the window only; and a pre-filter only drops
 * bars that cannot pass on the exact z, so no result depends on them. */
#define ROLL_PIECE 16384

static size_t roll_piece(int32_t w)
{
    size_t len = 4 * (size_t)w;
    return len > ROLL_PIECE ? len : ROLL_PIECE;
}

static size_t roll_start(size_t t0, int32_t w)
{
    return t0 > (size_t)w - 1 ? t0 - ((size_t)w - 1) : 0;
}

/* Piece k: list list[k], bars [t0[k], t1[k]). */
typedef struct {
    size_t n;
    uint32_t *list;
    size_t *t0, *t1;
} rpieces;

/* Pieces of bars [0, len[i]) of each list i, for its window win[i]. */
static int rpieces_make(rpieces *rp, const size_t *len, const int32_t *win, size_t n_lists)
{
    size_t n = 0;
    for (size_t i = 0; i < n_lists; i++)
        n += (len[i] + roll_piece(win[i]) - 1) / roll_piece(win[i]);
    rp->n = 0;
    rp->list = malloc((n ? n : 1) * sizeof *rp->list);
    rp->t0 = malloc((n ? n : 1) * sizeof *rp->t0);
    rp->t1 = malloc((n ? n : 1) * sizeof *rp->t1);
    if (!rp->list || !rp->t0 || !rp->t1)
        return -1;
    for (size_t i = 0; i < n_lists; i++)
        for (size_t t = 0; t < len[i]; t += roll_piece(win[i])) {
            rp->list[rp->n] = (uint32_t)i;
            rp->t0[rp->n] = t;
            rp->t1[rp->n++] = len[i] - t < roll_piece(win[i]) ? len[i] : t + roll_piece(win[i]);
        }
    return 0;
}

static void rpieces_free(rpieces *rp)
{
    free(rp->list);
    free(rp->t0);
    free(rp->t1);
    memset(rp, 0, sizeof *rp);
}

/* The bars of [t0, t1) that z window zw's pre-filter lets through, into a
 * new array *out of *count bars. */
static int z_piece(const fast_sweep *w, const zlist *zl, int32_t zw, size_t t0, size_t t1, double *scratch,
                   int32_t **out, size_t *count)
{
    size_t s = roll_start(t0, zw);
    sebt_k_zscore(w->s->volume + s, (int64_t)(t1 - s), zw, scratch);
    double pre = sebt_k_z_prefilter(zl->vmin);
    size_t c = 0;
    for (size_t t = t0; t < t1; t++)
        c += w->cloc[t] > zl->cmin && scratch[t - s] > pre;
    *out = malloc((c ? c : 1) * sizeof **out);
    if (!*out)
        return -1;
    size_t k = 0;
    for (size_t t = t0; t < t1; t++)
        if (w->cloc[t] > zl->cmin && scratch[t - s] > pre)
            (*out)[k++] = (int32_t)t;
    *count = c;
    return 0;
}

/* Each z window's list: its pieces' bars, in order (a list's pieces are
 * consecutive, ascending). The exact vol_z there comes next, in pieces. */
static int z_gather(zlist *zls, size_t nz, const rpieces *rp, int32_t *const *sel, const size_t *cnt)
{
    for (size_t k = 0; k < rp->n; k++)
        zls[rp->list[k]].n += cnt[k];
    for (size_t z = 0; z < nz; z++) {
        zlist *zl = &zls[z];
        if (!(zl->vmin < INFINITY))
            continue;
        size_t m = zl->n ? zl->n : 1;
        zl->bar = malloc(m * sizeof *zl->bar);
        zl->vz = malloc(m * sizeof *zl->vz);
        if (!zl->bar || !zl->vz)
            return -1;
        zl->n = 0;
    }
    for (size_t k = 0; k < rp->n; k++) {
        zlist *zl = &zls[rp->list[k]];
        memcpy(zl->bar + zl->n, sel[k], cnt[k] * sizeof *sel[k]);
        zl->n += cnt[k];
    }
    return 0;
}

static void z_keep(zlist *zl)
{
    size_t k = 0;
    for (size_t i = 0; i < zl->n; i++)
        if (zl->vz[i] > zl->vmin) {
            zl->bar[k] = zl->bar[i];
            zl->vz[k] = zl->vz[i];
            k++;
        }
    zl->n = k;
}

/* Candidates of one pair: the bars where its loosest thresholds hold on the
 * reference's bits. From its z window's list (vol_z exact), the bars where
 * the pair's own vol_z and cloc thresholds hold (pair_select); there tr_z
 * is computed exactly. When they are so many that O(z_window) per bar costs
 * more than a rolling pass, the rolling tr_z pre-filters them first (*roll);
 * either way the NaN and flat windows are dropped by a pass over the bars,
 * in pieces (pair_piece), which marks the bars kept in *keep. */
static int pair_select(const fast_sweep *w, fast_zpair *p, const zlist *zl, uint8_t **keep, bool *roll)
{
    size_t n = w->n;
    int32_t zw = w->zs[p->z];
    size_t m = zl->n ? zl->n : 1;
    int32_t *bars = malloc(m * sizeof *bars);
    double *ve = malloc(m * sizeof *ve), *te = malloc(m * sizeof *te);
    *keep = malloc(m);
    if (!bars || !ve || !te || !*keep) {
        free(bars), free(ve), free(te), free(*keep);
        *keep = NULL;
        return -1;
    }
    size_t count = 0;
    for (size_t i = 0; i < zl->n; i++)
        if (zl->vz[i] > p->vmin && w->cloc[zl->bar[i]] > p->cmin) {
            bars[count] = zl->bar[i];
            ve[count] = zl->vz[i];
            count++;
        }
    /* ~2 z_window flops per exact bar against ~40 per bar for a rolling pass. */
    *roll = (double)count * 2.0 * (double)zw > 40.0 * (double)n;
    p->n = count;
    p->bar = bars;
    p->vz = ve;
    p->tz = te;
    return 0;
}

static size_t first_at_or_after(const int32_t *bar, size_t n, size_t t)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if ((size_t)bar[m] < t) a = m + 1; else b = m;
    }
    return a;
}

/* keep[i] for the pair's bars in [t0, t1). */
static void pair_piece(const fast_sweep *w, const fast_zpair *p, bool roll, size_t t0, size_t t1, uint8_t *keep,
                       double *scratch)
{
    size_t i0 = first_at_or_after(p->bar, p->n, t0), i1 = first_at_or_after(p->bar, p->n, t1);
    if (i0 == i1)
        return;
    int32_t zw = w->zs[p->z];
    const double *atr = w->atr_col[p->a];
    size_t s = roll_start(t0, zw), end = (size_t)p->bar[i1 - 1] + 1;
    if (roll) {
        sebt_k_zscore(atr + s, (int64_t)(end - s), zw, scratch);
        double pre = sebt_k_z_prefilter(p->tmin);
        for (size_t i = i0; i < i1; i++)
            keep[i] = scratch[(size_t)p->bar[i] - s] > pre;
        return;
    }
    /* NaN and flat windows are the reference's NaN (SPEC §3): decided by
     * counting, in one pass (bars ascending), as sebt_k_zscore does. */
    size_t ws = (size_t)zw, clean = 0, run = 0, i = i0;
    for (size_t t = s; t < end; t++) {
        clean = isnan(atr[t]) ? 0 : clean + 1;
        run = t > s && atr[t] == atr[t - 1] ? run + 1 : 1;
        if ((size_t)p->bar[i] != t)
            continue;
        keep[i++] = clean >= ws && run < ws;
    }
}

/* The pair's bars that pair_piece kept; the exact tr_z there comes next,
 * in pieces. */
static void pair_compact(fast_zpair *p, const uint8_t *keep)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (keep[i]) {
            p->bar[k] = p->bar[i];
            p->vz[k] = p->vz[i];
            k++;
        }
    p->n = k;
}

static int pair_keep(fast_zpair *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->tz[i] > p->tmin) {
            p->bar[k] = p->bar[i];
            p->vz[k] = p->vz[i];
            p->tz[k] = p->tz[i];
            k++;
        }
    p->n = k;
    p->idx = malloc((k ? k : 1) * sizeof *p->idx);
    return p->idx ? 0 : -1;
}

/* Bitset rows: row r has bit j set where val[j] > thr[r] (val has n
 * entries, positions pos[j] in U, or j itself when pos is NULL). */
static void threshold_bits(uint64_t *bits, size_t words, const double *thr, size_t n_thr, const double *val,
                           const int32_t *pos, size_t n)
{
    memset(bits, 0, n_thr * words * sizeof *bits);
    for (size_t r = 0; r < n_thr; r++) {
        uint64_t *row = bits + r * words;
        for (size_t j = 0; j < n; j++)
            if (val[j] > thr[r]) {
                size_t b = pos ? (size_t)pos[j] : j;
                row[b >> 6] |= (uint64_t)1 << (b & 63);
            }
    }
}

/* Everything of atr set s that does not need the EMAs: U, ATR at U, the
 * pairs' positions in U and their threshold bitsets, the cloc bitsets. */
static int aset_build(const fast_sweep *w, fast_aset *s, int32_t a, fast_zpair *pairs, size_t n_pairs, uint8_t *mask)
{
    size_t n = w->n;
    memset(mask, 0, n ? n : 1);
    for (size_t i = 0; i < n_pairs; i++)
        if (pairs[i].a == a)
            for (size_t k = 0; k < pairs[i].n; k++)
                mask[pairs[i].bar[k]] = 1;
    size_t count = 0;
    for (size_t t = 0; t < n; t++)
        count += mask[t];
    size_t m = count ? count : 1;
    s->n = count;
    s->words = (count + 63) / 64;
    s->bar = malloc(m * sizeof *s->bar);
    s->atr = malloc(m * sizeof *s->atr);
    if (!s->bar || !s->atr)
        return -1;
    size_t k = 0;
    for (size_t t = 0; t < n; t++)
        if (mask[t]) {
            s->bar[k] = (int32_t)t;
            s->atr[k] = w->atr_col[a][t];
            k++;
        }
    size_t wd = s->words ? s->words : 1;
    for (size_t i = 0; i < n_pairs; i++) {
        fast_zpair *p = &pairs[i];
        if (p->a != a)
            continue;
        size_t j = 0;
        for (size_t q = 0; q < p->n; q++) {
            while (s->bar[j] < p->bar[q])
                j++;
            p->idx[q] = (int32_t)j;
        }
        p->vbits = malloc((p->n_vthr ? p->n_vthr : 1) * wd * sizeof *p->vbits);
        p->tbits = malloc((p->n_tthr ? p->n_tthr : 1) * wd * sizeof *p->tbits);
        if (!p->vbits || !p->tbits)
            return -1;
        threshold_bits(p->vbits, s->words, p->vthr, p->n_vthr, p->vz, p->idx, p->n);
        threshold_bits(p->tbits, s->words, p->tthr, p->n_tthr, p->tz, p->idx, p->n);
    }
    double *cl = malloc(m * sizeof *cl);
    s->cbits = malloc((s->n_cthr ? s->n_cthr : 1) * wd * sizeof *s->cbits);
    s->ema_at = malloc((s->n_spans ? s->n_spans : 1) * m * sizeof *s->ema_at);
    s->ebits = malloc((s->n_pairs ? s->n_pairs : 1) * wd * sizeof *s->ebits);
    if (!cl || !s->cbits || !s->ema_at || !s->ebits) {
        free(cl);
        return -1;
    }
    for (size_t j = 0; j < count; j++)
        cl[j] = w->cloc[s->bar[j]];
    /* SPEC §4's cloc > cloc_min, per distinct cloc_min of the set. */
    memset(s->cbits, 0, s->n_cthr * s->words * sizeof *s->cbits);
    for (size_t r = 0; r < s->n_cthr; r++)
        for (size_t j = 0; j < count; j++)
            if (cl[j] > s->cthr[r])
                s->cbits[r * s->words + (j >> 6)] |= (uint64_t)1 << (j & 63);
    free(cl);
    return 0;
}

void fast_zbatch_free(fast_zbatch *zb)
{
    for (size_t i = 0; zb->pairs && i < zb->n_pairs; i++)
        zpair_free(&zb->pairs[i]);
    free(zb->pairs);
    for (size_t i = 0; zb->sets && i < zb->n_sets; i++)
        aset_free(&zb->sets[i]);
    free(zb->sets);
    free(zb->set_of_atr);
    free(zb->task_start);
    memset(zb, 0, sizeof *zb);
}

/* A batch under construction: what the steps of fast_zbatch_build hand on. */
typedef struct {
    fast_sweep *w;
    size_t q0, q1, z0, nz;         /* its combos refs[q0 .. q1), its z slots [z0, z0 + nz) */
    zlist *zls;                    /* per z window of the batch */
    fast_zpair *pairs;             /* per (z_window, atr_window) */
    size_t n_pairs;
    fast_aset *sets;               /* per atr_window */
    size_t n_sets;
    int32_t *set_atr;              /* the atr slot of each set */
} zbuild;

/* Step 1: the atr sets (refs are sorted by atr slot within the batch) and
 * the (z, atr) pairs, each with the loosest thresholds of its combos. */
static int group_combos(zbuild *b)
{
    fast_combo_ref *R = b->w->refs;
    size_t q0 = b->q0, q1 = b->q1, nz = b->nz, z0 = b->z0, n_atrs = b->w->n_atrs;
    for (size_t q = q0; q < q1; q++)
        if (q == q0 || R[q].a != R[q - 1].a)
            b->n_sets++;
    b->sets = calloc(b->n_sets ? b->n_sets : 1, sizeof *b->sets);
    b->set_atr = malloc((b->n_sets ? b->n_sets : 1) * sizeof *b->set_atr);
    size_t n_slots = n_atrs * nz > 0 ? n_atrs * nz : 1;
    int32_t *pair_of = malloc(n_slots * sizeof *pair_of);
    if (!b->sets || !b->set_atr || !pair_of) {
        free(pair_of);
        return -1;
    }
    for (size_t i = 0; i < n_atrs * nz; i++)
        pair_of[i] = -1;
    size_t si = (size_t)-1;
    for (size_t q = q0; q < q1; q++) {
        if (q == q0 || R[q].a != R[q - 1].a) {
            b->sets[++si].q0 = q;
            b->set_atr[si] = R[q].a;
        }
        b->sets[si].q1 = q + 1;
        int32_t *slot = &pair_of[(size_t)R[q].a * nz + (size_t)(R[q].z - (int32_t)z0)];
        if (*slot < 0)
            *slot = (int32_t)b->n_pairs++;
    }
    b->pairs = calloc(b->n_pairs ? b->n_pairs : 1, sizeof *b->pairs);
    if (!b->pairs) {
        free(pair_of);
        return -1;
    }
    for (size_t i = 0; i < b->n_pairs; i++)
        b->pairs[i].vmin = b->pairs[i].tmin = b->pairs[i].cmin = INFINITY;
    for (size_t q = q0; q < q1; q++) {
        R[q].pair = pair_of[(size_t)R[q].a * nz + (size_t)(R[q].z - (int32_t)z0)];
        fast_zpair *p = &b->pairs[R[q].pair];
        p->z = R[q].z;
        p->a = R[q].a;
        p->vmin = fmin(p->vmin, R[q].vz);
        p->tmin = fmin(p->tmin, R[q].tz);
        p->cmin = fmin(p->cmin, R[q].cm);
    }
    free(pair_of);
    return 0;
}

/* A list of n distinct values trimmed to its length (at least one, so the
 * pointer stays valid); the list is freed when that fails. */
static void *trim_list(void *list, size_t n, size_t size)
{
    void *t = realloc(list, (n ? n : 1) * size);
    if (!t)
        free(list);
    return t;
}

/* Step 2a: pair i's distinct vol_z (which 0) or tr_z (which 1) thresholds,
 * ascending (the rows of its sebt_k_sigbits bitsets), from its combos
 * R[order[start[i] .. start[i + 1])). */
static int pair_thresholds(zbuild *b, size_t i, int which, const size_t *start, const size_t *order)
{
    const fast_combo_ref *R = b->w->refs;
    size_t k = 0, len = start[i + 1] - start[i];
    double *dv = malloc((len ? len : 1) * sizeof *dv);
    if (!dv)
        return -1;
    for (size_t j = start[i]; j < start[i + 1]; j++)
        dv[k++] = which ? R[order[j]].tz : R[order[j]].vz;
    k = uniq_d(dv, k);
    double *thr = trim_list(dv, k, sizeof *thr);
    if (!thr)
        return -1;
    if (which) {
        b->pairs[i].tthr = thr;
        b->pairs[i].n_tthr = k;
    } else {
        b->pairs[i].vthr = thr;
        b->pairs[i].n_vthr = k;
    }
    return 0;
}

/* The distinct (fast, slow) EMA pairs of set s, sorted, into s->pairs
 * (flattened); pv: scratch for 2 (q1 - q0) spans. */
static int set_ema_pairs(const fast_combo_ref *R, fast_aset *s, int32_t *pv)
{
    size_t np = 0;
    for (size_t q = s->q0; q < s->q1; q++)
        if (q == s->q0 || R[q].fast != R[q - 1].fast || R[q].slow != R[q - 1].slow ||
            R[q].z != R[q - 1].z || exit_cmp(&R[q], &R[q - 1])) {
            pv[2 * np] = R[q].fast;
            pv[2 * np + 1] = R[q].slow;
            np++;
        }
    s->pairs = malloc((np ? np : 1) * 2 * sizeof *s->pairs);
    /* As fast * 2^31 + slow, sorted, repeats dropped. */
    int64_t *keys = malloc((np ? np : 1) * sizeof *keys);
    if (!s->pairs || !keys) {
        free(keys);
        return -1;
    }
    for (size_t i = 0; i < np; i++)
        keys[i] = ((int64_t)pv[2 * i] << 31) | pv[2 * i + 1];
    for (size_t i = 1; i < np; i++) {   /* insertion sort: few pairs, mostly sorted */
        int64_t x = keys[i];
        size_t j = i;
        while (j > 0 && keys[j - 1] > x) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = x;
    }
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || keys[i] != keys[u - 1])
            keys[u++] = keys[i];
    s->n_pairs = u;
    for (size_t i = 0; i < u; i++) {
        s->pairs[2 * i] = (int32_t)(keys[i] >> 31);
        s->pairs[2 * i + 1] = (int32_t)(keys[i] & 0x7fffffff);
    }
    free(keys);
    return 0;
}

/* Step 2b: set s's distinct cloc_min values (which 0), EMA spans (1) or
 * EMA pairs (2). */
static int set_distinct(const fast_combo_ref *R, fast_aset *s, int which)
{
    size_t k = 0, cnt = s->q1 - s->q0 ? s->q1 - s->q0 : 1;
    if (which == 0) {
        double *dv = malloc(cnt * sizeof *dv);
        if (!dv)
            return -1;
        for (size_t q = s->q0; q < s->q1; q++)
            dv[k++] = R[q].cm;
        s->n_cthr = uniq_d(dv, k);
        s->cthr = trim_list(dv, s->n_cthr, sizeof *s->cthr);
        return s->cthr ? 0 : -1;
    }
    int32_t *iv = malloc(2 * cnt * sizeof *iv);
    if (!iv)
        return -1;
    if (which == 2) {
        int rc = set_ema_pairs(R, s, iv);
        free(iv);
        return rc;
    }
    for (size_t q = s->q0; q < s->q1; q++) {
        iv[k++] = R[q].fast;
        iv[k++] = R[q].slow;
    }
    s->n_spans = uniq_i32(iv, k);
    s->spans = trim_list(iv, s->n_spans, sizeof *s->spans);
    return s->spans ? 0 : -1;
}

/* Step 2: the distinct values the bitsets have rows for, each list a task
 * of its own on the team (serial, they were a few percent of a sweep's
 * compute with the other threads idle). The combos are bucketed by pair
 * first (one pass), so the cost does not grow with pairs x combos. */
static int distinct_values(zbuild *b)
{
    const fast_combo_ref *R = b->w->refs;
    size_t np = b->n_pairs, cnt = b->q1 - b->q0;
    size_t *start = calloc(np + 1, sizeof *start);
    size_t *order = malloc((cnt ? cnt : 1) * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return -1;
    }
    for (size_t q = b->q0; q < b->q1; q++)
        start[R[q].pair + 1]++;
    for (size_t i = 0; i < np; i++)
        start[i + 1] += start[i];
    for (size_t q = b->q0; q < b->q1; q++)
        order[start[R[q].pair]++] = q;
    for (size_t i = np; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    size_t n_tasks = 2 * np + 3 * b->n_sets;
    int failed = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(plan_threads(b->w, cnt)) reduction(|:failed)
    for (size_t k = 0; k < n_tasks; k++) {
        if (failed)
            continue;
        if (k < 2 * np)
            failed = pair_thresholds(b, k / 2, (int)(k % 2), start, order) != 0;
        else
            failed = set_distinct(R, &b->sets[(k - 2 * np) / 3], (int)((k - 2 * np) % 3)) != 0;
    }
    free(start);
    free(order);
    return failed ? -1 : 0;
}

/* The exact z-scores of many bar lists, cut into pieces of Z_PIECE bars
 * so that a batch of one or two z windows still spreads over every thread:
 * piece k covers list list[k], bars [from[k], from[k] + Z_PIECE). Each
 * bar's z is computed alone, so the cut changes no bit. */
#define Z_PIECE 256
typedef struct {
    size_t n;
    uint32_t *list;
    size_t *from;
} zpieces;

static int zpieces_make(zpieces *zp, const size_t *len, size_t n_lists)
{
    size_t n = 0;
    for (size_t i = 0; i < n_lists; i++)
        n += (len[i] + Z_PIECE - 1) / Z_PIECE;
    zp->n = 0;
    zp->list = malloc((n ? n : 1) * sizeof *zp->list);
    zp->from = malloc((n ? n : 1) * sizeof *zp->from);
    if (!zp->list || !zp->from)
        return -1;
    zp->n = n;
    n = 0;
    for (size_t i = 0; i < n_lists; i++)
        for (size_t f = 0; f < len[i]; f += Z_PIECE) {
            zp->list[n] = (uint32_t)i;
            zp->from[n++] = f;
        }
    return 0;
}

static void zpieces_free(zpieces *zp)
{
    free(zp->list);
    free(zp->from);
    zp->list = NULL;
    zp->from = NULL;
}

/* Step 3: per z window of the batch, the bars its vol_z thresholds let
 * through (exact vol_z); then each pair's candidates (exact tr_z): the
 * bars where some combo of the pair could signal. One parallel region:
 * the rolling pre-filters in pieces of the series (rpieces), the exact
 * z-scores in pieces of the lists (zpieces). */
static int find_candidates(zbuild *b)
{
    size_t nz = b->nz, z0 = b->z0, n_pairs = b->n_pairs, n = b->w->n, cols = n ? n : 1;
    const fast_sweep *w = b->w;
    zlist *zls = b->zls;
    fast_zpair *pairs = b->pairs;
    for (size_t i = 0; i < n_pairs; i++) {
        zlist *zl = &zls[(size_t)pairs[i].z - z0];
        zl->vmin = fmin(zl->vmin, pairs[i].vmin);
        zl->cmin = fmin(zl->cmin, pairs[i].cmin);
    }
    size_t nl = nz > n_pairs ? nz : n_pairs;
    size_t *len = malloc((nl ? nl : 1) * sizeof *len);
    int32_t *win = malloc((nl ? nl : 1) * sizeof *win);
    uint8_t **keep = calloc(n_pairs ? n_pairs : 1, sizeof *keep);
    bool *roll = calloc(n_pairs ? n_pairs : 1, sizeof *roll);
    rpieces rp = { 0 };
    zpieces zp = { 0 };
    int32_t **sel = NULL;
    size_t *cnt = NULL;
    int failed = !len || !win || !keep || !roll;
    if (!failed) {
        for (size_t z = 0; z < nz; z++) {
            len[z] = zls[z].vmin < INFINITY ? n : 0;
            win[z] = w->zs[z0 + z];
        }
        failed = rpieces_make(&rp, len, win, nz) != 0;
    }
    if (!failed) {
        sel = calloc(rp.n ? rp.n : 1, sizeof *sel);
        cnt = calloc(rp.n ? rp.n : 1, sizeof *cnt);
        failed = !sel || !cnt;
    }
    if (failed) {
        free(len), free(win), free(keep), free(roll), free(sel), free(cnt);
        rpieces_free(&rp);
        return -1;
    }
    #pragma omp parallel num_threads(w->threads)
    {
        double *scratch = malloc(cols * sizeof(double));
        if (!scratch) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < rp.n; k++) {
            uint32_t z = rp.list[k];
            if (scratch && z_piece(w, &zls[z], win[z], rp.t0[k], rp.t1[k], scratch, &sel[k], &cnt[k]) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        }
        #pragma omp single
        {
            if (!failed && z_gather(zls, nz, &rp, sel, cnt) != 0)
                failed = 1;
            for (size_t k = 0; k < rp.n; k++)
                free(sel[k]);
            for (size_t z = 0; z < nz; z++)
                len[z] = failed ? 0 : zls[z].n;
            if (zpieces_make(&zp, len, nz) != 0)
                failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < zp.n; k++) {
            zlist *zl = &zls[zp.list[k]];
            size_t f = zp.from[k], m = zl->n - f < Z_PIECE ? zl->n - f : Z_PIECE;
            fast_zscore_exact_at(w->s->volume, w->zs[z0 + zp.list[k]], zl->bar + f, m, zl->vz + f);
        }
        int ok;   /* read once after a barrier: other threads may set failed inside a loop */
        #pragma omp atomic read
        ok = failed;
        ok = !ok;
        #pragma omp for schedule(static)
        for (size_t z = 0; z < nz; z++)
            if (ok && zls[z].vmin < INFINITY)
                z_keep(&zls[z]);
        #pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < n_pairs; i++)
            if (ok && pair_select(w, &pairs[i], &zls[(size_t)pairs[i].z - z0], &keep[i], &roll[i]) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        #pragma omp single
        {
            rpieces_free(&rp);
            for (size_t i = 0; i < n_pairs; i++) {
                len[i] = failed || !pairs[i].n ? 0 : (size_t)pairs[i].bar[pairs[i].n - 1] + 1;
                win[i] = w->zs[pairs[i].z];
            }
            if (rpieces_make(&rp, len, win, n_pairs) != 0)
                failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < rp.n; k++) {
            uint32_t i = rp.list[k];
            if (scratch)
                pair_piece(w, &pairs[i], roll[i], rp.t0[k], rp.t1[k], keep[i], scratch);
        }
        #pragma omp atomic read
        ok = failed;
        ok = !ok;
        #pragma omp for schedule(static)
        for (size_t i = 0; i < n_pairs; i++)
            if (ok)
                pair_compact(&pairs[i], keep[i]);
        #pragma omp single
        {
            zpieces_free(&zp);
            for (size_t i = 0; i < n_pairs; i++)
                len[i] = failed ? 0 : pairs[i].n;
            if (zpieces_make(&zp, len, n_pairs) != 0)
                failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < zp.n; k++) {
            fast_zpair *p = &pairs[zp.list[k]];
            size_t f = zp.from[k], m = p->n - f < Z_PIECE ? p->n - f : Z_PIECE;
            fast_zscore_exact_at(w->atr_col[p->a], w->zs[p->z], p->bar + f, m, p->tz + f);
        }
        #pragma omp atomic read
        ok = failed;
        ok = !ok;
        #pragma omp for schedule(static)
        for (size_t i = 0; i < n_pairs; i++)
            if (ok && pair_keep(&pairs[i]) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        free(scratch);
    }
    for (size_t i = 0; i < n_pairs; i++)
        free(keep[i]);
    rpieces_free(&rp);
    zpieces_free(&zp);
    free(len), free(win), free(keep), free(roll), free(sel), free(cnt);
    return failed ? -1 : 0;
}

/* Step 4: U per atr set (sebt_k_union) and the threshold bitsets over it
 * (vol_z, tr_z, cloc rows of sebt_k_sigbits). */
static int build_unions(zbuild *b)
{
    int failed = 0;
    size_t cols = b->w->n ? b->w->n : 1;
    #pragma omp parallel num_threads(b->w->threads) reduction(|:failed)
    {
        uint8_t *mask = malloc(cols);
        if (!mask)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t si = 0; si < b->n_sets; si++)
            if (!failed && aset_build(b->w, &b->sets[si], b->set_atr[si], b->pairs, b->n_pairs, mask) != 0)
                failed = 1;
        free(mask);
    }
    return failed ? -1 : 0;
}

/* Step 5: the EMA rows of sebt_k_sigbits: each distinct span of the batch
 * computed once, kept only at each set's U, then ema_f < ema_s per pair. */
static int ema_bits(zbuild *b)
{
    const fast_sweep *w = b->w;
    size_t n = w->n, cols = n ? n : 1, n_span_all = 0;
    fast_aset *sets = b->sets;
    for (size_t si = 0; si < b->n_sets; si++)
        n_span_all += sets[si].n_spans;
    int32_t *span_list = malloc((n_span_all ? n_span_all : 1) * sizeof *span_list);
    if (!span_list)
        return -1;
    n_span_all = 0;
    for (size_t si = 0; si < b->n_sets; si++)
        for (size_t k = 0; k < sets[si].n_spans; k++)
            span_list[n_span_all++] = sets[si].spans[k];
    n_span_all = uniq_i32(span_list, n_span_all);
    int failed = 0;
    #pragma omp parallel num_threads(w->threads) reduction(|:failed)
    {
        double *col = malloc(cols * sizeof(double));
        if (!col)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < n_span_all; k++) {
            if (failed)
                continue;
            sebt_k_ema(w->s->close, (int64_t)n, span_list[k], col);
            for (size_t si = 0; si < b->n_sets; si++) {
                fast_aset *s = &sets[si];
                int32_t j = find_i32(s->spans, s->n_spans, span_list[k]);
                if ((size_t)j >= s->n_spans || s->spans[j] != span_list[k])
                    continue;
                double *dst = s->ema_at + (size_t)j * s->n;
                for (size_t u = 0; u < s->n; u++)
                    dst[u] = col[s->bar[u]];
            }
        }
        free(col);
    }
    free(span_list);
    if (failed)
        return -1;
    for (size_t si = 0; si < b->n_sets; si++) {
        fast_aset *s = &sets[si];
        memset(s->ebits, 0, s->n_pairs * s->words * sizeof *s->ebits);
        for (size_t pi = 0; pi < s->n_pairs; pi++) {
            const double *ef = s->ema_at + (size_t)find_i32(s->spans, s->n_spans, s->pairs[2 * pi]) * s->n;
            const double *es = s->ema_at + (size_t)find_i32(s->spans, s->n_spans, s->pairs[2 * pi + 1]) * s->n;
            uint64_t *row = s->ebits + pi * s->words;
            for (size_t u = 0; u < s->n; u++)
                if (ef[u] < es[u])
                    row[u >> 6] |= (uint64_t)1 << (u & 63);
        }
    }
    return 0;
}

/* Step 6: each combo's four rows (its sebt_k_sigbits): vol_z, tr_z and
 * cloc threshold slots, EMA pair slot. */
static void combo_slots(zbuild *b)
{
    fast_combo_ref *R = b->w->refs;
    for (size_t si = 0; si < b->n_sets; si++) {
        const fast_aset *s = &b->sets[si];
        #pragma omp parallel for schedule(static) num_threads(plan_threads(b->w, s->q1 - s->q0))
        for (size_t q = s->q0; q < s->q1; q++) {
            const fast_zpair *p = &b->pairs[R[q].pair];
            R[q].vslot = find_d(p->vthr, p->n_vthr, R[q].vz);
            R[q].tslot = find_d(p->tthr, p->n_tthr, R[q].tz);
            R[q].cslot = find_d(s->cthr, s->n_cthr, R[q].cm);
            int64_t key = ((int64_t)R[q].fast << 31) | R[q].slow;
            size_t lo = 0, hi = s->n_pairs;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int64_t k2 = ((int64_t)s->pairs[2 * mid] << 31) | s->pairs[2 * mid + 1];
                if (k2 < key)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            R[q].ema = (int32_t)lo;
        }
    }
}

/* Step 7: the tasks: runs of one exit key (one sebt_k_memo each), split so
 * that every thread gets work. A task's memo is its own (filled lazily),
 * so the split changes what is computed twice, never a result. */
static int split_tasks(zbuild *b, size_t **task_start_out, size_t *n_tasks_out)
{
    const fast_combo_ref *R = b->w->refs;
    size_t q0 = b->q0, q1 = b->q1;
    size_t task_size = (q1 - q0) / ((size_t)b->w->threads * 8);
    if (task_size < 32)
        task_size = 32;
    /* Where the exit key changes, found on every thread; the cut itself
     * (a byte scan) stays serial. */
    uint8_t *edge = malloc(q1 - q0 ? q1 - q0 : 1);
    if (!edge)
        return -1;
    #pragma omp parallel for schedule(static) num_threads(plan_threads(b->w, q1 - q0))
    for (size_t q = q0; q < q1; q++)
        edge[q - q0] = q == q0 || exit_cmp(&R[q], &R[q - 1]) != 0;
    size_t n_tasks = 0;
    for (size_t q = q0, run = 0; q < q1; q++, run++)
        if (edge[q - q0] || run >= task_size) {
            n_tasks++;
            run = 0;
        }
    size_t *task_start = malloc((n_tasks + 1) * sizeof *task_start);
    if (!task_start) {
        free(edge);
        return -1;
    }
    n_tasks = 0;
    for (size_t q = q0, run = 0; q < q1; q++, run++)
        if (edge[q - q0] || run >= task_size) {
            task_start[n_tasks++] = q;
            run = 0;
        }
    task_start[n_tasks] = q1;
    free(edge);
    *task_start_out = task_start;
    *n_tasks_out = n_tasks;
    return 0;
}

static void zbuild_free(zbuild *b)
{
    for (size_t z = 0; b->zls && z < b->nz; z++) {
        free(b->zls[z].bar);
        free(b->zls[z].vz);
    }
    free(b->zls);
    for (size_t i = 0; b->pairs && i < b->n_pairs; i++)
        zpair_free(&b->pairs[i]);
    free(b->pairs);
    for (size_t i = 0; b->sets && i < b->n_sets; i++)
        aset_free(&b->sets[i]);
    free(b->sets);
    free(b->set_atr);
}

/* Everything the combos refs[q0 .. q1) of one batch read (their z slots
 * are [z0, z1)), in the order of the plan at the top of combo_kernel.h:
 * candidates, unions, bitsets, each combo's bitset slots, the tasks (one
 * memo each). fast_cpu and the cuda backend both run combos from it. */
sebt_status fast_zbatch_build(fast_sweep *w, size_t q0, size_t q1, size_t z0, size_t z1, fast_zbatch *zb,
                              sebt_error *err)
{
    memset(zb, 0, sizeof *zb);
    zbuild b = { .w = w, .q0 = q0, .q1 = q1, .z0 = z0, .nz = z1 - z0 };
    b.zls = calloc(b.nz ? b.nz : 1, sizeof *b.zls);
    size_t *task_start = NULL, n_tasks = 0;
    int32_t *set_of_atr = NULL;
    if (!b.zls)
        goto nomem;
    for (size_t z = 0; z < b.nz; z++)
        b.zls[z].vmin = b.zls[z].cmin = INFINITY;
    if (group_combos(&b) != 0 || distinct_values(&b) != 0 || find_candidates(&b) != 0 ||
        build_unions(&b) != 0 || ema_bits(&b) != 0)
        goto nomem;
    combo_slots(&b);
    if (split_tasks(&b, &task_start, &n_tasks) != 0)
        goto nomem;
    set_of_atr = malloc((w->n_atrs ? w->n_atrs : 1) * sizeof *set_of_atr);
    if (!set_of_atr) {
        free(task_start);
        goto nomem;
    }
    for (size_t si = 0; si < b.n_sets; si++)
        set_of_atr[b.set_atr[si]] = (int32_t)si;
    size_t umax = 1;
    for (size_t si = 0; si < b.n_sets; si++)
        if (b.sets[si].n + 1 > umax)
            umax = b.sets[si].n + 1;

    *zb = (fast_zbatch){ .q0 = q0, .q1 = q1, .pairs = b.pairs, .n_pairs = b.n_pairs, .sets = b.sets,
                         .n_sets = b.n_sets, .set_of_atr = set_of_atr, .task_start = task_start,
                         .n_tasks = n_tasks, .umax = umax };
    b.pairs = NULL;
    b.sets = NULL;
    zbuild_free(&b);
    return SEBT_OK;
nomem:
    zbuild_free(&b);
    return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for a batch of %zu combos over %zu bars",
                     q1 - q0, w->n);
}

/* The four signal bitsets of combo ref q over its atr set s. */
static sebt_k_sigbits combo_sigbits(const fast_aset *s, const fast_zpair *pairs, const fast_combo_ref *q)
{
    const fast_zpair *p = &pairs[q->pair];
    sebt_k_sigbits sb = { { s->ebits + (size_t)q->ema * s->words, p->vbits + (size_t)q->vslot * s->words,
                            p->tbits + (size_t)q->tslot * s->words, s->cbits + (size_t)q->cslot * s->words } };
    return sb;
}

/* Whether two combos have one stop and one target, whose exits searched to
 * the last valid bar they then share (sebt_k_raw_exits). */
static bool same_stop_and_target(const fast_combo_ref *x, const fast_combo_ref *y)
{
    return x->batch == y->batch && x->a == y->a && x->use_stop == y->use_stop && x->stop_mult == y->stop_mult &&
           x->use_tp == y->use_tp && x->reward == y->reward;
}

/* Whether task t (refs[ts[t] .. ts[t+1])) can share walks with task t - 1
 * (sebt_k_walk): its combos differ from that task's, one for one and in
 * order, only in their costs (fee_bp + slippage_bp), which the sort puts
 * last in the exit key; a grid with a fee axis makes such runs. */
static bool cost_twin(const fast_combo_ref *R, const size_t *ts, size_t t)
{
    size_t a0 = ts[t - 1], b0 = ts[t], len = ts[t + 1] - b0;
    if (ts[t] - a0 != len)
        return false;
    const fast_combo_ref *x = &R[a0], *y = &R[b0];
    if (!same_stop_and_target(x, y) || x->use_time != y->use_time || x->max_hold != y->max_hold)
        return false;
    for (size_t i = 0; i < len; i++) {
        x = &R[a0 + i];
        y = &R[b0 + i];
        if (x->pair != y->pair || x->ema != y->ema || x->vslot != y->vslot || x->tslot != y->tslot ||
            x->cslot != y->cslot)
            return false;
    }
    return true;
}

/* The units run_zbatch hands out: runs of cost twins (cost_twin), a task
 * alone otherwise. unit_start[k] is the first task of unit k. And, per
 * task, an epoch for the exits it shares with the tasks of its stop and
 * target (sebt_k_raw_exits): the sort makes those a run of tasks, numbered
 * by their first. */
static size_t *plan_units(const fast_sweep *w, const fast_zbatch *zb, bool want_trades, size_t *n_units,
                          uint32_t **raw_epoch_out)
{
    size_t nt = zb->n_tasks;
    uint8_t *twin = calloc(nt ? nt : 1, 1);
    size_t *unit_start = malloc((nt + 1) * sizeof *unit_start);
    uint32_t *raw_epoch = malloc((nt ? nt : 1) * sizeof *raw_epoch);
    if (!twin || !unit_start || !raw_epoch) {
        free(twin);
        free(unit_start);
        free(raw_epoch);
        return NULL;
    }
    for (size_t t = 0; t < nt; t++)
        raw_epoch[t] = t && same_stop_and_target(&w->refs[zb->task_start[t - 1]], &w->refs[zb->task_start[t]])
                           ? raw_epoch[t - 1]
                           : (uint32_t)t + 1;
    *raw_epoch_out = raw_epoch;
    if (!want_trades) {   /* walks give metrics only */
        #pragma omp parallel for schedule(dynamic, 64) num_threads(plan_threads(w, zb->q1 - zb->q0))
        for (size_t t = 1; t < nt; t++)
            twin[t] = cost_twin(w->refs, zb->task_start, t);
    }
    size_t n = 0;
    for (size_t t = 0; t < nt; t++)
        if (!twin[t])
            unit_start[n++] = t;
    unit_start[n] = nt;
    free(twin);
    *n_units = n;
    return unit_start;
}

/* A unit of n_twins cost twins (their first combos at ts[0 .. n_twins)):
 * each signal set is walked once through the unit's memo of exits
 * (its link and geom: filled for epoch), and each twin sums its costs over
 * it. */
static void run_twins(fast_sweep *w, const sebt_k_valid *v, const sebt_k_union *u, const fast_aset *s,
                      const fast_zpair *pairs, const size_t *ts, size_t n_twins, uint32_t epoch,
                      const sebt_k_memo *memo, sebt_k_memo_geom *geom, int32_t *path, double *rbuf)
{
    const fast_combo_ref *R = w->refs;
    for (size_t i = 0; i < ts[1] - ts[0]; i++) {
        sebt_k_sigbits sb = combo_sigbits(s, pairs, &R[ts[0] + i]);
        int64_t open_j, n = sebt_k_walk(&w->fm.m, v, u, &sb, memo->link, geom, &memo->raw, epoch,
                                        &w->combos[R[ts[0] + i].index], path, &open_j);
        for (size_t k = 0; k < n_twins; k++) {
            size_t idx = R[ts[k] + i].index;
            sebt_result *r = &w->results[idx];
            memset(r, 0, sizeof *r);
            sebt_k_run_combo_path(&w->fm.m, v, u, geom, path, n, open_j, &w->combos[idx], rbuf, r);
        }
    }
}

/* The combos of a built batch, in parallel, one unit at a time: a task, or
 * tasks that are cost twins, whose combos then share each walk. */
static sebt_status run_zbatch(fast_sweep *w, const fast_zbatch *zb, sebt_error *err)
{
    int nt = w->threads, failed = 0;
    const fast_combo_ref *R = w->refs;
    const fast_zpair *pairs = zb->pairs;
    const fast_aset *sets = zb->sets;
    const int32_t *set_of_atr = zb->set_of_atr;
    const size_t *task_start = zb->task_start;
    size_t umax = zb->umax;
    bool want_trades = w->opts && w->opts->want_trades;
    sebt_progress_fn progress = w->opts ? w->opts->progress : NULL;
    void *puser = w->opts ? w->opts->progress_user : NULL;
    size_t n_units = 0;
    uint32_t *raw_epoch = NULL;
    size_t *unit_start = plan_units(w, zb, want_trades, &n_units, &raw_epoch);
    if (!unit_start)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory running a batch of %zu combos",
                         zb->q1 - zb->q0);
    w->stats.chunks += n_units;
    #pragma omp parallel num_threads(nt) reduction(|:failed)
    {
        sebt_k_memo memo = { calloc(umax, sizeof *memo.link),   /* stamps 0: nothing filled */
                             malloc(umax * sizeof *memo.val),
                             { malloc(umax * sizeof *memo.raw.e), calloc(umax, sizeof *memo.raw.stamp), 0 } };
        double *rbuf = malloc(2 * umax * sizeof *rbuf), *rbuf_b = rbuf ? rbuf + umax : NULL;
        sebt_k_memo_geom *geom = NULL;
        int32_t *path = NULL;
        if (!memo.link || !memo.val || !memo.raw.e || !memo.raw.stamp || !rbuf)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t unit = 0; unit < n_units; unit++) {
            if (failed)
                continue;
            size_t task = unit_start[unit], n_twins = unit_start[unit + 1] - task;
            size_t t0 = task_start[task], t1 = task_start[task + 1];
            int32_t a = R[t0].a;
            const fast_aset *s = &sets[set_of_atr[a]];
            sebt_k_valid v = { w->valid[a], w->rank[a], w->vbar[a], w->n_valid[a] };
            sebt_k_union u = { (int64_t)s->n, s->bar, s->atr };
            uint32_t epoch = (uint32_t)task + 1;   /* a unit's first task is its own */
            memo.raw.epoch = raw_epoch[task];
            if (n_twins > 1) {
                if (!geom && (!(geom = malloc(umax * sizeof *geom)) || !(path = malloc(umax * sizeof *path)))) {
                    failed = 1;
                    continue;
                }
                run_twins(w, &v, &u, s, pairs, task_start + task, n_twins, epoch, &memo, geom, path, rbuf);
            } else {
                for (size_t q = t0; q < t1 && !failed; q++) {
                    sebt_k_sigbits sb = combo_sigbits(s, pairs, &R[q]);
                    size_t idx = R[q].index;
                    const sebt_params *cp = &w->combos[idx];
                    sebt_result *r = &w->results[idx];
                    memset(r, 0, sizeof *r);
                    if (!want_trades && q + 1 < t1) {   /* two at once: sebt_k_run_combo_pair_hop */
                        sebt_k_sigbits sb_b = combo_sigbits(s, pairs, &R[q + 1]);
                        size_t idx_b = R[q + 1].index;
                        sebt_result *r_b = &w->results[idx_b];
                        memset(r_b, 0, sizeof *r_b);
                        sebt_k_run_combo_pair_hop(&w->fm.m, &v, &u, &memo, epoch, &sb, cp, rbuf, r, &sb_b,
                                                  &w->combos[idx_b], rbuf_b, r_b, (int64_t)umax);
                        q++;
                        continue;
                    }
                    sebt_k_run_combo_hop(&w->fm.m, &v, &u, &sb, &memo, epoch, cp, NULL, 0, rbuf,
                                         (int64_t)umax, r);
                    if (want_trades && r->n_trades) {
                        sebt_trade *tt = malloc(r->n_trades * sizeof *tt);
                        if (!tt) {
                            failed = 1;
                            break;
                        }
                        sebt_k_run_combo_hop(&w->fm.m, &v, &u, &sb, &memo, epoch, cp, tt,
                                             (int64_t)r->n_trades, rbuf, (int64_t)umax, r);
                        r->trades = tt;
                    }
                }
            }
            size_t d;
            #pragma omp atomic capture
            { w->done += task_start[task + n_twins] - task_start[task]; d = w->done; }
            if (progress && thread_id() == 0) {
                double t = now_s();
                if (t - w->last_progress >= 0.25) {
                    w->last_progress = t;
                    progress(puser, d, w->total);
                }
            }
        }
        free(memo.link);
        free(memo.val);
        free(memo.raw.e);
        free(memo.raw.stamp);
        free(rbuf);
        free(geom);
        free(path);
    }
    free(unit_start);
    free(raw_epoch);
    if (failed)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory running a batch of %zu combos",
                         zb->q1 - zb->q0);
    return SEBT_OK;
}

/* sebt_batch_check's verdict and message, with the combos and the series
 * checked in pieces on every thread, in one loop: serial, the check of a
 * streamed sweep's window (and of a whole sweep's million combos) left the
 * other threads waiting, and as the first loop of a call, taken
 * dynamically, it also covers the time the other threads take to wake.
 * Each piece goes through sebt_params_validate or sebt_series_check
 * itself, so the verdict is theirs; a series piece starts a bar early, so
 * every timestamp is still compared with the one before (a per-bar column
 * added to sebt_series must be offset here too). A failure is then named
 * by sebt_batch_check (the first bad combo before the series, in its
 * order), which stops there. */
#define CHECK_PIECE 8192
static sebt_status check_combos(const sebt_series *s, const sebt_params *combos, size_t n, const sebt_result *results,
                                int threads, sebt_error *err)
{
    size_t bad = SIZE_MAX, n_cp = (n + CHECK_PIECE - 1) / CHECK_PIECE, n_sp = (s->n + CHECK_PIECE - 1) / CHECK_PIECE;
    int series_bad = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(min:bad) reduction(|:series_bad)
    for (size_t k = 0; k < n_cp + n_sp; k++) {
        sebt_error e;
        if (k < n_cp) {
            size_t end = (k + 1) * CHECK_PIECE < n ? (k + 1) * CHECK_PIECE : n;
            for (size_t i = k * CHECK_PIECE; i < end && i < bad; i++)
                if (sebt_params_validate(&combos[i], &e) != SEBT_OK)
                    bad = i;
            continue;
        }
        size_t from = (k - n_cp) * CHECK_PIECE, to = from + CHECK_PIECE < s->n ? from + CHECK_PIECE : s->n;
        from = from ? from - 1 : 0;
        sebt_series piece = *s;
        piece.n = to - from;
        piece.ts += from;
        piece.open += from;
        piece.high += from;
        piece.low += from;
        piece.close += from;
        piece.volume += from;
        series_bad |= sebt_series_check(&piece, &e) != SEBT_OK;
    }
    if (bad < n)
        return sebt_batch_check("fast_cpu", s, combos, bad + 1, results, err);
    return series_bad ? sebt_batch_check("fast_cpu", s, combos, 0, results, err) : SEBT_OK;
}

sebt_status fast_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                           size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                           sebt_error *err)
{
    (void)self;
    if (opts && opts->stats)
        memset(opts->stats, 0, sizeof *opts->stats);
    if (!s || (n_combos && (!combos || !results)))
        return sebt_batch_check("fast_cpu", s, combos, n_combos, results, err);

    int threads = opts && opts->threads > 0 ? opts->threads : 0;
#ifdef _OPENMP
    if (threads == 0)
        threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    if (threads > FAST_MAX_THREADS)
        threads = FAST_MAX_THREADS;
    /* A sweep of well under a millisecond of work gains nothing from a
     * thread team and, on a loaded machine, loses to its wake-up and spin
     * costs. Results do not depend on this choice. */
    if ((double)s->n * (double)n_combos < 1e6)
        threads = 1;

    sebt_status st = check_combos(s, combos, n_combos, results, threads, err);
    if (st != SEBT_OK)
        return st;
    if (s->n >= (size_t)INT32_MAX)
        return sebt_fail(err, SEBT_ERR_INPUT, "fast_cpu: %zu bars is more than it handles (%d)", s->n,
                         INT32_MAX - 1);
    if (n_combos == 0)
        return SEBT_OK;

    fast_sweep w;
    st = fast_sweep_begin(s, combos, n_combos, opts, threads, results, &w, err);
    if (st != SEBT_OK)
        return st;
    for (size_t q0 = 0; q0 < n_combos;) {
        size_t q1, z0, z1;
        fast_sweep_next_batch(&w, q0, &q1, &z0, &z1);
        w.stats.batches++;
        fast_zbatch zb;
        st = fast_zbatch_build(&w, q0, q1, z0, z1, &zb, err);
        if (st == SEBT_OK)
            st = run_zbatch(&w, &zb, err);
        fast_zbatch_free(&zb);
        if (st != SEBT_OK) {
            sebt_results_free(results, n_combos);
            fast_sweep_end(&w);
            return st;
        }
        q0 = q1;
    }
    if (opts && opts->progress)
        opts->progress(opts->progress_user, n_combos, n_combos);
    if (opts && opts->stats)
        *opts->stats = w.stats;
    fast_sweep_end(&w);
    return SEBT_OK;
}

/* The combos refs[q0 .. *q1) of one batch and its z slots [*z0, *z1). */
void fast_sweep_next_batch(const fast_sweep *w, size_t q0, size_t *q1, size_t *z0, size_t *z1)
{
    size_t q = q0 + 1;
    while (q < w->total && w->refs[q].batch == w->refs[q0].batch)
        q++;
    *q1 = q;
    *z0 = (size_t)w->refs[q0].batch * w->zper;
    *z1 = *z0 + w->zper < w->n_zs ? *z0 + w->zper : w->n_zs;
}

/* ATR and the valid bars (SPEC §5: sebt_k_valid) per atr_window of the
 * sweep: ATR in blocks of bars, so one window still spreads over the threads. */
static int atr_columns(fast_sweep *w)
{
    size_t n = w->n, cols = n ? n : 1, na = w->n_atrs;
    w->atr_col = calloc(na ? na : 1, sizeof *w->atr_col);
    w->valid = calloc(na ? na : 1, sizeof *w->valid);
    w->rank = calloc(na ? na : 1, sizeof *w->rank);
    w->vbar = calloc(na ? na : 1, sizeof *w->vbar);
    w->n_valid = calloc(na ? na : 1, sizeof *w->n_valid);
    if (!w->atr_col || !w->valid || !w->rank || !w->vbar || !w->n_valid)
        return -1;
    for (size_t a = 0; a < na; a++)
        if (!(w->atr_col[a] = malloc(cols * sizeof(double))) || !(w->valid[a] = malloc(cols)) ||
            !(w->rank[a] = malloc(cols * sizeof(int32_t))) || !(w->vbar[a] = malloc(cols * sizeof(int32_t))))
            return -1;
    size_t atr_blocks = (n + 8191) / 8192;
    w->stats.blocks = na * atr_blocks;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(w->threads)
    for (size_t q = 0; q < na * atr_blocks; q++) {
        size_t a = q / atr_blocks, blk = q % atr_blocks;
        size_t from = blk * 8192, to = from + 8192 < n ? from + 8192 : n;
        fast_atr_range(w->tr, n, w->atrs[a], from, to, w->atr_col[a]);
    }
    #pragma omp parallel for schedule(dynamic, 1) num_threads(w->threads)
    for (size_t a = 0; a < na; a++)
        fast_valid_from_atr(w->atr_col[a], n, w->valid[a], w->rank[a], w->vbar[a], &w->n_valid[a]);
    return 0;
}

/* Batches of z windows: what stays for the whole sweep is fixed (the
 * series-wide columns and trees, 17 B a bar per atr_window, two scratch
 * columns per thread); each z window of a batch adds one rolling vol_z
 * column. At least one z window per batch. */
static size_t z_windows_per_batch(const fast_sweep *w, size_t budget)
{
    size_t n = w->n, cols = n ? n : 1;
    size_t fixed = n * (24 + 2 + 17 * w->n_atrs + 17 * (size_t)w->threads);
    size_t per_z = 16 * cols;   /* worst case of a z window's list (every bar) and its pieces' bars */
    size_t zper = budget > fixed ? (budget - fixed) / per_z : 1;
    return zper < 1 ? 1 : zper;
}

/* Combo i as the sweep sorts it: its window slots, batch and exit key. */
static void combo_ref(const fast_sweep *w, const sebt_params *p, size_t i, fast_combo_ref *r)
{
    memset(r, 0, sizeof *r);
    r->a = find_i32(w->atrs, w->n_atrs, p->atr_window);
    r->z = find_i32(w->zs, w->n_zs, p->z_window);
    r->batch = (int32_t)((size_t)r->z / w->zper);
    r->fast = p->ema_fast;
    r->slow = p->ema_slow;
    r->use_stop = p->use_stop;
    r->stop_mult = p->use_stop ? p->atr_stop_mult : 0.0;
    r->use_tp = p->use_tp;
    r->reward = p->use_tp ? p->reward_r : 0.0;
    r->use_time = p->use_time;
    r->max_hold = p->use_time ? p->max_hold : 0;
    r->cost = p->fee_bp + p->slippage_bp;
    r->vz = p->vol_z;
    r->tz = p->tr_z;
    r->cm = p->cloc_min;
    r->index = i;
}

/* One digit of the sort key: a combo field's distinct values (its rank is
 * the position there), gathered as uniq_d gathers them (binary insertion,
 * -0 and 0 one value); over marks more than UNIQ_FEW values or a NaN, where
 * the key is not used. */
typedef struct {
    double vals[UNIQ_FEW];
    size_t n;
    bool over;
} rank_axis;

static void axis_add(rank_axis *ax, double x)
{
    if (ax->over)
        return;
    if (isnan(x)) {
        ax->over = true;
        return;
    }
    size_t a = 0, b = ax->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (ax->vals[m] < x) a = m + 1; else b = m;
    }
    if (a < ax->n && ax->vals[a] == x)
        return;
    if (ax->n == UNIQ_FEW) {
        ax->over = true;
        return;
    }
    memmove(ax->vals + a + 1, ax->vals + a, (ax->n - a) * sizeof *ax->vals);
    ax->vals[a] = x;
    ax->n++;
}

/* The ranked fields of ref_cmp, integers as doubles (exact). */
static double ref_field(const fast_combo_ref *r, int k)
{
    switch (k) {
    case 0: return r->stop_mult;
    case 1: return r->reward;
    case 2: return r->max_hold;
    case 3: return r->cost;
    case 4: return r->fast;
    case 5: return r->slow;
    case 6: return r->vz;
    case 7: return r->tz;
    default: return r->cm;
    }
}

/* w->refs in ref_cmp's order. ref_cmp's fields, most significant first,
 * each replaced by its rank among the field's distinct values (equal values,
 * -0 and 0 included, have one rank, as cmp_d has them equal), make one
 * integer key; a stable LSD radix sort of (key, index) from index order then
 * gives ref_cmp's order with its final tie-break, the input index. The
 * records are then made in that order straight from the combos (a record is
 * a function of its combo and index), so none is moved. Every pass over the
 * combos runs on the whole team: this runs once per run_batch call, and on
 * a streamed sweep once per window, before any combo can start; serial, it
 * was the largest piece of the second thread's idle time. The stable sort
 * has one outcome, so neither the thread count nor the pieces change the
 * order. The comparison sort of ~100-byte records stays where the key would
 * not fit 64 bits or a field has many distinct values (a combos file of
 * random thresholds). Returns -1 when out of memory. */
static int sort_refs(fast_sweep *w)
{
    size_t n = w->total;
    fast_combo_ref *R = w->refs;
    const sebt_params *C = w->combos;
    enum { N_AX = 9, RB = 11, NB = 1 << RB };
    int nt = plan_threads(w, n);
    rank_axis ax[N_AX];
    memset(ax, 0, sizeof ax);
    bool fallback = n > UINT32_MAX;
    rank_axis *tax = fallback ? NULL : calloc((size_t)nt * N_AX, sizeof *tax);
    if (!fallback && !tax)
        return -1;
    if (!fallback) {
        #pragma omp parallel num_threads(nt)
        {
            rank_axis *mine = tax + (size_t)thread_id() * N_AX;
            double last[N_AX];
            bool first = true;
            #pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++) {
                fast_combo_ref r;
                combo_ref(w, &C[i], i, &r);
                for (int k = 0; k < N_AX; k++) {
                    double f = ref_field(&r, k);
                    if (first || !(f == last[k]))   /* runs of one value are usual */
                        axis_add(&mine[k], last[k] = f);
                }
                first = false;
            }
        }
        for (int t = 0; t < nt; t++)
            for (int k = 0; k < N_AX; k++) {
                const rank_axis *m = &tax[(size_t)t * N_AX + k];
                if (m->over)
                    ax[k].over = true;
                for (size_t j = 0; j < m->n; j++)
                    axis_add(&ax[k], m->vals[j]);
            }
        for (int k = 0; k < N_AX; k++)
            fallback = fallback || ax[k].over;
    }
    free(tax);
    size_t n_batch = w->zper ? (w->n_zs + w->zper - 1) / w->zper : 1;
    size_t radix[] = { n_batch, w->n_atrs, 2, ax[0].n, 2, ax[1].n, 2, ax[2].n, ax[3].n, w->n_zs,
                       ax[4].n, ax[5].n, ax[6].n, ax[7].n, ax[8].n };
    enum { N_DIG = sizeof radix / sizeof radix[0] };
    uint64_t span = 1;
    for (size_t d = 0; d < N_DIG && !fallback; d++) {
        size_t r = radix[d] ? radix[d] : 1;
        if (span > UINT64_MAX / r)
            fallback = true;
        else
            span *= r;
    }
    if (fallback) {
        #pragma omp parallel for schedule(static) num_threads(nt)
        for (size_t i = 0; i < n; i++)
            combo_ref(w, &C[i], i, &R[i]);
        if (n > 1)
            qsort(R, n, sizeof *R, ref_cmp);
        return 0;
    }
    int bits = 0;
    while (bits < 64 && (span - 1) >> bits)
        bits++;
    int rc = -1;
    uint64_t *key = malloc((n ? n : 1) * sizeof *key), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx), *itmp = malloc((n ? n : 1) * sizeof *itmp);
    size_t *cnt = malloc((size_t)nt * NB * sizeof *cnt);   /* per thread, per bucket */
    if (!key || !tmp || !idx || !itmp || !cnt)
        goto out;
    #pragma omp parallel num_threads(nt)
    {
        int me = thread_id(), nth = team_size();
        size_t lo = n * (size_t)me / (size_t)nth, hi = n * (size_t)(me + 1) / (size_t)nth;
        static const int pos[N_AX] = { 3, 5, 7, 8, 10, 11, 12, 13, 14 };
        double last[N_AX];
        uint64_t last_rank[N_AX];
        for (size_t i = lo; i < hi; i++) {
            fast_combo_ref r;
            combo_ref(w, &C[i], i, &r);
            uint64_t dig[N_DIG] = { (uint64_t)r.batch, (uint64_t)r.a, r.use_stop, 0, r.use_tp, 0, r.use_time, 0, 0,
                                    (uint64_t)r.z, 0, 0, 0, 0, 0 };
            for (int k = 0; k < N_AX; k++) {
                double f = ref_field(&r, k);
                if (i == lo || !(f == last[k]))
                    last_rank[k] = (uint64_t)find_d(ax[k].vals, ax[k].n, last[k] = f);
                dig[pos[k]] = last_rank[k];
            }
            uint64_t kk = 0;
            for (size_t d = 0; d < N_DIG; d++)
                kk = kk * (radix[d] ? radix[d] : 1) + dig[d];
            key[i] = kk;
            idx[i] = (uint32_t)i;
        }
        /* Stable LSD passes: each thread counts its own slice, the slices
         * take their places bucket by bucket in slice order, each thread
         * moves its own. */
        size_t *my = cnt + (size_t)me * NB;
        for (int shift = 0; shift < bits; shift += RB) {
            memset(my, 0, NB * sizeof *my);
            for (size_t i = lo; i < hi; i++)
                my[(key[i] >> shift) & (NB - 1)]++;
            #pragma omp barrier
            #pragma omp single
            {
                size_t sum = 0;
                for (size_t b = 0; b < NB; b++)
                    for (int t = 0; t < nth; t++) {
                        size_t c = cnt[(size_t)t * NB + b];
                        cnt[(size_t)t * NB + b] = sum;
                        sum += c;
                    }
            }
            for (size_t i = lo; i < hi; i++) {
                size_t d = my[(key[i] >> shift) & (NB - 1)]++;
                tmp[d] = key[i];
                itmp[d] = idx[i];
            }
            #pragma omp barrier
            #pragma omp single
            {
                uint64_t *t = key; key = tmp; tmp = t;
                uint32_t *u = idx; idx = itmp; itmp = u;
            }
        }
        #pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++)
            combo_ref(w, &C[idx[i]], idx[i], &R[i]);
    }
    rc = 0;
out:
    free(key);
    free(tmp);
    free(idx);
    free(itmp);
    free(cnt);
    return rc;
}

/* The sweep's distinct atr and z windows into w->atrs and w->zs: gathered
 * on every thread (a grid has few, in runs), like the sort key's fields;
 * every combo's value sorted only where some thread meets many. */
static void distinct_windows(fast_sweep *w)
{
    size_t n = w->total;
    int nt = plan_threads(w, n);
    rank_axis *tax = calloc((size_t)nt * 2, sizeof *tax);
    bool many = !tax;
    if (tax) {
        #pragma omp parallel num_threads(nt)
        {
            rank_axis *mine = tax + (size_t)thread_id() * 2;
            int32_t la = 0, lz = 0;
            bool first = true;
            #pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++) {
                const sebt_params *p = &w->combos[i];
                if (first || p->atr_window != la)
                    axis_add(&mine[0], la = p->atr_window);
                if (first || p->z_window != lz)
                    axis_add(&mine[1], lz = p->z_window);
                first = false;
            }
        }
        for (int t = 0; t < nt && !many; t++)
            for (int k = 0; k < 2; k++) {
                many = many || tax[2 * t + k].over;
                for (size_t j = 0; j < tax[2 * t + k].n; j++)
                    axis_add(&tax[k], tax[2 * t + k].vals[j]);
            }
        many = many || tax[0].over || tax[1].over;
    }
    if (!many) {
        for (size_t j = 0; j < tax[0].n; j++)
            w->atrs[j] = (int32_t)tax[0].vals[j];
        for (size_t j = 0; j < tax[1].n; j++)
            w->zs[j] = (int32_t)tax[1].vals[j];
        w->n_atrs = tax[0].n;
        w->n_zs = tax[1].n;
    } else {
        for (size_t i = 0; i < n; i++) {
            w->atrs[i] = w->combos[i].atr_window;
            w->zs[i] = w->combos[i].z_window;
        }
        w->n_atrs = uniq_i32(w->atrs, n);
        w->n_zs = uniq_i32(w->zs, n);
    }
    free(tax);
}

/* Everything a sweep computes once, before its batches: series-wide
 * columns, trees, ATR and valid bars per atr_window, the combos sorted into
 * batches and exit keys. The combos and series must be valid already. */
sebt_status fast_sweep_begin(const sebt_series *s, const sebt_params *combos, size_t n_combos,
                             const sebt_batch_opts *opts, int threads, sebt_result *results, fast_sweep *w_out,
                             sebt_error *err)
{
#ifdef _OPENMP
    if (threads <= 0)
        threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    if (threads > FAST_MAX_THREADS)
        threads = FAST_MAX_THREADS;
    fast_sweep w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.combos = combos;
    w.results = results;
    w.opts = opts;
    w.n = s->n;
    w.total = n_combos;
    w.threads = threads;
    w.last_progress = now_s();
    w.stats.threads_used = threads;
    size_t n = s->n, cols = n ? n : 1;
    w.tr = malloc(cols * sizeof(double));
    w.cloc = malloc(cols * sizeof(double));
    w.refs = malloc(n_combos * sizeof *w.refs);
    w.atrs = malloc(n_combos * sizeof *w.atrs);
    w.zs = malloc(n_combos * sizeof *w.zs);
    if (!w.tr || !w.cloc || !w.refs || !w.atrs || !w.zs)
        goto nomem;

    distinct_windows(&w);

    /* Three independent whole-series passes side by side, then ATR and the
     * valid bars per atr_window; then each combo sorted into its batch and
     * exit key. */
    sebt_error market_err = { 0 };
    sebt_status market_st = SEBT_OK;
    #pragma omp parallel sections num_threads(threads < 3 ? threads : 3)
    {
        #pragma omp section
        fast_tr_column(s, w.tr);
        #pragma omp section
        fast_cloc_column(s, w.cloc);
        #pragma omp section
        market_st = fast_market_build(s, &w.fm, &market_err);
    }
    if (market_st != SEBT_OK) {
        if (err)
            *err = market_err;
        fast_sweep_end(&w);
        return market_st;
    }
    if (atr_columns(&w) != 0)
        goto nomem;
    size_t budget = opts && opts->memory_budget ? opts->memory_budget : fast_memory_budget();
    w.zper = z_windows_per_batch(&w, budget);
    if (sort_refs(&w) != 0)
        goto nomem;
    *w_out = w;
    return SEBT_OK;

nomem:
    fast_sweep_end(&w);
    return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu bars and %zu combos", n, n_combos);
}
