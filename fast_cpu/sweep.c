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

static int z_prefilter(const fast_sweep *w, int32_t zw, zlist *zl, double *scratch)
{
    size_t n = w->n;
    sebt_k_zscore(w->s->volume, (int64_t)n, zw, scratch);
    double pre = sebt_k_z_prefilter(zl->vmin);
    size_t count = 0;
    for (size_t t = 0; t < n; t++)
        count += w->cloc[t] > zl->cmin && scratch[t] > pre;
    size_t m = count ? count : 1;
    zl->bar = malloc(m * sizeof *zl->bar);
    zl->vz = malloc(m * sizeof *zl->vz);
    if (!zl->bar || !zl->vz)
        return -1;
    size_t k = 0;
    for (size_t t = 0; t < n; t++)
        if (w->cloc[t] > zl->cmin && scratch[t] > pre)
            zl->bar[k++] = (int32_t)t;
    zl->n = count;   /* the exact vol_z there comes next, in pieces */
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
 * the pair's own vol_z and cloc thresholds hold; there tr_z is computed
 * exactly. When they are so many that O(z_window) per bar costs more than a
 * rolling pass, the rolling tr_z (into scratch) pre-filters them first. */
static int pair_prefilter(const fast_sweep *w, fast_zpair *p, const zlist *zl, double *scratch)
{
    size_t n = w->n;
    int32_t zw = w->zs[p->z];
    const double *atr = w->atr_col[p->a];
    size_t m = zl->n ? zl->n : 1;
    int32_t *bars = malloc(m * sizeof *bars);
    double *ve = malloc(m * sizeof *ve), *te = malloc(m * sizeof *te);
    if (!bars || !ve || !te) {
        free(bars), free(ve), free(te);
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
    if ((double)count * 2.0 * (double)zw > 40.0 * (double)n) {
        sebt_k_zscore(atr, (int64_t)n, zw, scratch);
        double pre = sebt_k_z_prefilter(p->tmin);
        size_t k = 0;
        for (size_t i = 0; i < count; i++)
            if (scratch[bars[i]] > pre) {
                bars[k] = bars[i];
                ve[k] = ve[i];
                k++;
            }
        count = k;
    } else {
        /* NaN and flat windows are the reference's NaN (SPEC §3): decided
         * by counting, in one pass (bars ascending), as sebt_k_zscore does. */
        size_t k = 0, i = 0, ws = (size_t)zw, clean = 0, run = 0;
        for (size_t t = 0; t < n && i < count; t++) {
            clean = isnan(atr[t]) ? 0 : clean + 1;
            run = t > 0 && atr[t] == atr[t - 1] ? run + 1 : 1;
            if ((size_t)bars[i] != t)
                continue;
            if (clean >= ws && run < ws) {
                bars[k] = bars[i];
                ve[k] = ve[i];
                k++;
            }
            i++;
        }
        count = k;
    }
    p->n = count;    /* the exact tr_z there comes next, in pieces */
    p->bar = bars;
    p->vz = ve;
    p->tz = te;
    return 0;
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

/* Step 2a: each pair's distinct vol_z and tr_z thresholds, ascending (the
 * rows of its sebt_k_sigbits bitsets). dv: scratch for q1 - q0 values. The
 * combos are bucketed by pair first (one pass), so the cost does not grow
 * with pairs x combos. */
static int pair_thresholds(zbuild *b, double *dv)
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
    int failed = 0;
    for (size_t i = 0; i < np && !failed; i++) {
        for (int which = 0; which < 2; which++) {
            size_t k = 0;
            for (size_t j = start[i]; j < start[i + 1]; j++)
                dv[k++] = which ? R[order[j]].tz : R[order[j]].vz;
            k = uniq_d(dv, k);
            double *thr = malloc((k ? k : 1) * sizeof *thr);
            if (!thr) {
                failed = 1;
                break;
            }
            memcpy(thr, dv, k * sizeof *thr);
            if (which) {
                b->pairs[i].tthr = thr;
                b->pairs[i].n_tthr = k;
            } else {
                b->pairs[i].vthr = thr;
                b->pairs[i].n_vthr = k;
            }
        }
    }
    free(start);
    free(order);
    return failed ? -1 : 0;
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

/* Step 2b: each set's distinct cloc_min values, EMA spans and EMA pairs. */
static int set_distinct(zbuild *b, double *dv, int32_t *iv, int32_t *pv)
{
    const fast_combo_ref *R = b->w->refs;
    for (size_t si = 0; si < b->n_sets; si++) {
        fast_aset *s = &b->sets[si];
        size_t k = 0;
        for (size_t q = s->q0; q < s->q1; q++)
            dv[k++] = R[q].cm;
        s->n_cthr = uniq_d(dv, k);
        s->cthr = malloc((s->n_cthr ? s->n_cthr : 1) * sizeof *s->cthr);
        k = 0;
        for (size_t q = s->q0; q < s->q1; q++) {
            iv[k++] = R[q].fast;
            iv[k++] = R[q].slow;
        }
        s->n_spans = uniq_i32(iv, k);
        s->spans = malloc((s->n_spans ? s->n_spans : 1) * sizeof *s->spans);
        if (!s->cthr || !s->spans || set_ema_pairs(R, s, pv) != 0)
            return -1;
        memcpy(s->cthr, dv, s->n_cthr * sizeof *dv);
        memcpy(s->spans, iv, s->n_spans * sizeof *iv);
    }
    return 0;
}

/* Step 2: the distinct values the bitsets have rows for. */
static int distinct_values(zbuild *b)
{
    size_t cnt = b->q1 - b->q0 ? b->q1 - b->q0 : 1;
    double *dv = malloc(cnt * sizeof *dv);
    int32_t *iv = malloc(2 * cnt * sizeof *iv);
    int32_t *pv = malloc(2 * cnt * sizeof *pv);
    int failed = !dv || !iv || !pv || pair_thresholds(b, dv) != 0 || set_distinct(b, dv, iv, pv) != 0;
    free(dv);
    free(iv);
    free(pv);
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
 * the rolling pre-filters per z window and per pair, the exact z-scores in
 * pieces across all lists. */
static int find_candidates(zbuild *b)
{
    size_t nz = b->nz, z0 = b->z0, n_pairs = b->n_pairs, cols = b->w->n ? b->w->n : 1;
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
    if (!len)
        return -1;
    zpieces zp = { 0 };
    int failed = 0;
    #pragma omp parallel num_threads(w->threads)
    {
        double *scratch = malloc(cols * sizeof(double));
        if (!scratch) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t z = 0; z < nz; z++)
            if (scratch && zls[z].vmin < INFINITY && z_prefilter(w, w->zs[z0 + z], &zls[z], scratch) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        #pragma omp single
        {
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
            if (scratch && ok && pair_prefilter(w, &pairs[i], &zls[(size_t)pairs[i].z - z0], scratch) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
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
    zpieces_free(&zp);
    free(len);
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
    size_t n_tasks = 0;
    for (size_t q = q0, run = 0; q < q1; q++, run++)
        if (q == q0 || exit_cmp(&R[q], &R[q - 1]) || run >= task_size) {
            n_tasks++;
            run = 0;
        }
    size_t *task_start = malloc((n_tasks + 1) * sizeof *task_start);
    if (!task_start)
        return -1;
    n_tasks = 0;
    for (size_t q = q0, run = 0; q < q1; q++, run++)
        if (q == q0 || exit_cmp(&R[q], &R[q - 1]) || run >= task_size) {
            task_start[n_tasks++] = q;
            run = 0;
        }
    task_start[n_tasks] = q1;
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
    w->stats.chunks += n_tasks;

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

/* The combos of a built batch, in parallel, one task at a time. */
static sebt_status run_zbatch(fast_sweep *w, const fast_zbatch *zb, sebt_error *err)
{
    int nt = w->threads, failed = 0;
    const fast_combo_ref *R = w->refs;
    const fast_zpair *pairs = zb->pairs;
    const fast_aset *sets = zb->sets;
    const int32_t *set_of_atr = zb->set_of_atr;
    const size_t *task_start = zb->task_start;
    size_t n_tasks = zb->n_tasks, umax = zb->umax;
    bool want_trades = w->opts && w->opts->want_trades;
    sebt_progress_fn progress = w->opts ? w->opts->progress : NULL;
    void *puser = w->opts ? w->opts->progress_user : NULL;
    #pragma omp parallel num_threads(nt) reduction(|:failed)
    {
        sebt_k_memo memo = { calloc(umax, sizeof *memo.link),   /* stamps 0: nothing filled */
                             malloc(umax * sizeof *memo.val) };
        double *rbuf = malloc(umax * sizeof *rbuf);
        if (!memo.link || !memo.val || !rbuf)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t task = 0; task < n_tasks; task++) {
            if (failed)
                continue;
            size_t t0 = task_start[task], t1 = task_start[task + 1];
            int32_t a = R[t0].a;
            const fast_aset *s = &sets[set_of_atr[a]];
            sebt_k_valid v = { w->valid[a], w->rank[a], w->vbar[a], w->n_valid[a] };
            sebt_k_union u = { (int64_t)s->n, s->bar, s->atr };
            uint32_t epoch = (uint32_t)task + 1;
            for (size_t q = t0; q < t1 && !failed; q++) {
                const fast_zpair *p = &pairs[R[q].pair];
                sebt_k_sigbits sb = { { s->ebits + (size_t)R[q].ema * s->words,
                                        p->vbits + (size_t)R[q].vslot * s->words,
                                        p->tbits + (size_t)R[q].tslot * s->words,
                                        s->cbits + (size_t)R[q].cslot * s->words } };
                size_t idx = R[q].index;
                const sebt_params *cp = &w->combos[idx];
                sebt_result *r = &w->results[idx];
                memset(r, 0, sizeof *r);
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
            size_t d;
            #pragma omp atomic capture
            { w->done += t1 - t0; d = w->done; }
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
        free(rbuf);
    }
    if (failed)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory running a batch of %zu combos",
                         zb->q1 - zb->q0);
    return SEBT_OK;
}

sebt_status fast_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                           size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                           sebt_error *err)
{
    (void)self;
    if (opts && opts->stats)
        memset(opts->stats, 0, sizeof *opts->stats);
    sebt_status st = sebt_batch_check("fast_cpu", s, combos, n_combos, results, err);
    if (st != SEBT_OK)
        return st;
    if (s->n >= (size_t)INT32_MAX)
        return sebt_fail(err, SEBT_ERR_INPUT, "fast_cpu: %zu bars is more than it handles (%d)", s->n,
                         INT32_MAX - 1);
    if (n_combos == 0)
        return SEBT_OK;

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
    size_t per_z = 12 * cols;   /* worst case of a z window's list: every bar */
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
 * the position there). */
typedef struct {
    double vals[UNIQ_FEW];
    size_t n;
} rank_axis;

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
 * gives ref_cmp's order with its final tie-break, the input index; 24 bytes
 * a combo of scratch (a qsort of the records took 112). The
 * comparison sort of ~100-byte records stays where the key would not fit
 * 64 bits or a field has many distinct values (a combos file of random
 * thresholds). Returns -1 when out of memory. */
static int sort_refs(fast_sweep *w)
{
    size_t n = w->total;
    fast_combo_ref *R = w->refs;
    enum { N_AX = 9 };
    if (n < 2)
        return 0;
    rank_axis ax[N_AX];
    memset(ax, 0, sizeof ax);
    uint64_t *key = NULL, *tmp = NULL;
    uint32_t *idx = NULL, *itmp = NULL;
    int rc = -1;
    bool fallback = n > UINT32_MAX;
    double *sc = fallback ? NULL : malloc(n * sizeof *sc);
    if (!fallback && !sc)
        return -1;
    for (int k = 0; k < N_AX && !fallback; k++) {
        for (size_t i = 0; i < n; i++)
            sc[i] = ref_field(&R[i], k);
        ax[k].n = uniq_d(sc, n);
        if (ax[k].n > UNIQ_FEW)
            fallback = true;
        else
            memcpy(ax[k].vals, sc, ax[k].n * sizeof *sc);
    }
    free(sc);
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
        qsort(R, n, sizeof *R, ref_cmp);
        rc = 0;
        goto out;
    }
    key = malloc(n * sizeof *key);
    tmp = malloc(n * sizeof *tmp);
    idx = malloc(n * sizeof *idx);
    itmp = malloc(n * sizeof *itmp);
    if (!key || !tmp || !idx || !itmp)
        goto out;
    double last[N_AX];
    uint64_t last_rank[N_AX];
    for (size_t i = 0; i < n; i++) {
        const fast_combo_ref *r = &R[i];
        uint64_t dig[N_DIG] = { (uint64_t)r->batch, (uint64_t)r->a, r->use_stop, 0, r->use_tp, 0, r->use_time, 0, 0,
                                (uint64_t)r->z, 0, 0, 0, 0, 0 };
        static const int pos[N_AX] = { 3, 5, 7, 8, 10, 11, 12, 13, 14 };
        for (int k = 0; k < N_AX; k++) {
            double f = ref_field(r, k);
            if (i == 0 || !(f == last[k]))   /* runs of one value are usual */
                last_rank[k] = (uint64_t)find_d(ax[k].vals, ax[k].n, last[k] = f);
            dig[pos[k]] = last_rank[k];
        }
        uint64_t kk = 0;
        for (size_t d = 0; d < N_DIG; d++)
            kk = kk * (radix[d] ? radix[d] : 1) + dig[d];
        key[i] = kk;
        idx[i] = (uint32_t)i;
    }
    int bits = 0;
    while (bits < 64 && (span - 1) >> bits)
        bits++;
    enum { RB = 11 };
    size_t cnt[1 << RB];
    for (int shift = 0; shift < bits; shift += RB) {
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(key[i] >> shift) & ((1 << RB) - 1)]++;
        size_t sum = 0;
        for (size_t b = 0; b < (1 << RB); b++) {
            size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t d = cnt[(key[i] >> shift) & ((1 << RB) - 1)]++;
            tmp[d] = key[i];
            itmp[d] = idx[i];
        }
        uint64_t *t = key; key = tmp; tmp = t;
        uint32_t *u = idx; idx = itmp; itmp = u;
    }
    /* R[i] = old R[idx[i]], in place, cycle by cycle (no second copy of
     * the records: a whole sweep's can be a GB); idx[j] = j marks done. */
    for (size_t i = 0; i < n; i++) {
        if (idx[i] == i)
            continue;
        fast_combo_ref hold = R[i];
        size_t j = i;
        for (;;) {
            size_t k = idx[j];
            idx[j] = (uint32_t)j;
            if (k == i) {
                R[j] = hold;
                break;
            }
            R[j] = R[k];
            j = k;
        }
    }
    rc = 0;
out:
    free(key);
    free(tmp);
    free(idx);
    free(itmp);
    return rc;
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

    /* Distinct windows. */
    for (size_t i = 0; i < n_combos; i++) {
        w.atrs[i] = combos[i].atr_window;
        w.zs[i] = combos[i].z_window;
    }
    w.n_atrs = uniq_i32(w.atrs, n_combos);
    w.n_zs = uniq_i32(w.zs, n_combos);

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
    for (size_t i = 0; i < n_combos; i++)
        combo_ref(&w, &combos[i], i, &w.refs[i]);
    if (sort_refs(&w) != 0)
        goto nomem;
    *w_out = w;
    return SEBT_OK;

nomem:
    fast_sweep_end(&w);
    return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu bars and %zu combos", n, n_combos);
}
