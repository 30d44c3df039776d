/* The fast_cpu backend: a sweep of many combos over one series with OpenMP.
 *
 * Plan of a sweep (fast_cpu/README.md has the memory bound):
 *   1. series-wide, once: TR, cloc, the exit-search trees over low and -high;
 *   2. combos sorted by indicator key (atr_window, z_window, ema_fast,
 *      ema_slow); keys are processed in batches that fit the memory budget;
 *   3. per batch, each distinct series once, in parallel: EMA by span, ATR
 *      and the valid bars by atr_window, vol_z by z_window, tr_z by
 *      (z_window, atr_window); then each key's candidate signal bars, and
 *      the series are freed;
 *   4. the batch's combos in parallel (dynamic schedule), each on its own
 *      through combo_kernel.h, each writing its own result slot once.
 * Nothing a combo computes depends on which thread runs it or on the batch
 * it falls in, so results do not depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "fast_cpu_internal.h"

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
        const double *base = tr + (t + 1 - ws);   /* window start of bar t */
        for (size_t j = 0; j < len; j++)
            acc[j] = 0.0;
        for (size_t i = 0; i < ws; i++) {
            const double *row = base + i;
            for (size_t j = 0; j < len; j++)
                acc[j] += row[j];
        }
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

typedef struct {
    int32_t atr, z, fast, slow;
} ind_key;

static int key_cmp(const ind_key *a, const ind_key *b);

typedef struct {
    ind_key key;
    double vz, tz, cm;      /* signal thresholds: combos sharing them share signals */
    size_t index;
} keyed_combo;

static int same_signals(const keyed_combo *a, const keyed_combo *b)
{
    return key_cmp(&a->key, &b->key) == 0 && a->vz == b->vz && a->tz == b->tz && a->cm == b->cm;
}

static int key_cmp(const ind_key *a, const ind_key *b)
{
    if (a->atr != b->atr) return a->atr < b->atr ? -1 : 1;
    if (a->z != b->z) return a->z < b->z ? -1 : 1;
    if (a->fast != b->fast) return a->fast < b->fast ? -1 : 1;
    if (a->slow != b->slow) return a->slow < b->slow ? -1 : 1;
    return 0;
}

static int keyed_cmp(const void *pa, const void *pb)
{
    const keyed_combo *a = pa, *b = pb;
    int c = key_cmp(&a->key, &b->key);
    if (c)
        return c;
    if (a->vz != b->vz) return a->vz < b->vz ? -1 : 1;
    if (a->tz != b->tz) return a->tz < b->tz ? -1 : 1;
    if (a->cm != b->cm) return a->cm < b->cm ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* One indicator key: its combos are order[first .. first+count). */
typedef struct {
    ind_key key;
    size_t first, count;
    double vmin, tmin, cmin;     /* loosest thresholds among its combos */
    int atr_slot, z_slot, trz_slot, fast_slot, slow_slot;
    sebt_k_cands cands;
    void *cand_mem;
} group;

/* The distinct series of one batch. */
typedef struct {
    int32_t *spans;  size_t n_spans;  double **ema;
    int32_t *atrs;   size_t n_atrs;   double **atr;
    uint8_t **valid; int32_t **rank;  int32_t **vbar;  int64_t *n_valid;
    int32_t *zs;     size_t n_zs;     double **volz;
    int32_t (*trz_keys)[2]; size_t n_trz; double **trz;   /* (z slot, atr slot) */
} batch_series;

static int find_or_add(int32_t *list, size_t *n, int32_t v)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == v)
            return (int)i;
    list[*n] = v;
    return (int)(*n)++;
}

static int find_or_add_pair(int32_t (*list)[2], size_t *n, int32_t a, int32_t b)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i][0] == a && list[i][1] == b)
            return (int)i;
    list[*n][0] = a;
    list[*n][1] = b;
    return (int)(*n)++;
}

static void free_columns(double **cols, size_t n)
{
    for (size_t i = 0; cols && i < n; i++)
        free(cols[i]);
    free(cols);
}

static void batch_series_free(batch_series *b)
{
    free_columns(b->ema, b->n_spans);
    free_columns(b->atr, b->n_atrs);
    free_columns(b->volz, b->n_zs);
    free_columns(b->trz, b->n_trz);
    for (size_t i = 0; i < b->n_atrs; i++) {
        if (b->valid) free(b->valid[i]);
        if (b->rank) free(b->rank[i]);
        if (b->vbar) free(b->vbar[i]);
    }
    free(b->valid);
    free(b->rank);
    free(b->vbar);
    free(b->n_valid);
    free(b->spans);
    free(b->atrs);
    free(b->zs);
    free(b->trz_keys);
    memset(b, 0, sizeof *b);
}

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

/* Bytes a batch of groups [g0, g1) may need at most, given its distinct
 * series counts: 8N per series column, 9N + 4K per atr window kept for
 * the combos, and 36 bytes per candidate (at most one per bar per key). */
static size_t batch_bytes(size_t n, size_t spans, size_t atrs, size_t zs, size_t trz, size_t groups)
{
    return n * (8 * (spans + atrs + zs + trz) + 13 * atrs + 36 * groups);
}

typedef struct {
    const sebt_series *s;
    const double *tr, *cloc;
    const fast_market *fm;
    const sebt_params *combos;
    const keyed_combo *order;
    group *groups;
    size_t n_groups;
    const sebt_batch_opts *opts;
    sebt_result *results;
    size_t total, done;
    double last_progress;
    int threads;
    int failed;     /* an allocation inside a parallel loop failed */
} sweep_ctx;

static sebt_status run_batch_groups(sweep_ctx *x, size_t g0, size_t g1, sebt_error *err)
{
    size_t n = x->s->n;
    size_t ng = g1 - g0;
    batch_series b;
    memset(&b, 0, sizeof b);
    sebt_status st = SEBT_OK;
    b.spans = malloc(2 * ng * sizeof *b.spans);
    b.atrs = malloc(ng * sizeof *b.atrs);
    b.zs = malloc(ng * sizeof *b.zs);
    b.trz_keys = malloc(ng * sizeof *b.trz_keys);
    if (!b.spans || !b.atrs || !b.zs || !b.trz_keys)
        goto nomem;
    for (size_t g = g0; g < g1; g++) {
        group *gr = &x->groups[g];
        gr->fast_slot = find_or_add(b.spans, &b.n_spans, gr->key.fast);
        gr->slow_slot = find_or_add(b.spans, &b.n_spans, gr->key.slow);
        gr->atr_slot = find_or_add(b.atrs, &b.n_atrs, gr->key.atr);
        gr->z_slot = find_or_add(b.zs, &b.n_zs, gr->key.z);
        gr->trz_slot = find_or_add_pair(b.trz_keys, &b.n_trz, gr->z_slot, gr->atr_slot);
    }
    size_t cols = n ? n : 1;
    b.ema = calloc(b.n_spans, sizeof *b.ema);
    b.atr = calloc(b.n_atrs, sizeof *b.atr);
    b.valid = calloc(b.n_atrs, sizeof *b.valid);
    b.rank = calloc(b.n_atrs, sizeof *b.rank);
    b.vbar = calloc(b.n_atrs, sizeof *b.vbar);
    b.n_valid = calloc(b.n_atrs, sizeof *b.n_valid);
    b.volz = calloc(b.n_zs, sizeof *b.volz);
    b.trz = calloc(b.n_trz, sizeof *b.trz);
    if (!b.ema || !b.atr || !b.valid || !b.rank || !b.vbar || !b.n_valid || !b.volz || !b.trz)
        goto nomem;
    for (size_t i = 0; i < b.n_spans; i++)
        if (!(b.ema[i] = malloc(cols * sizeof(double)))) goto nomem;
    for (size_t i = 0; i < b.n_atrs; i++) {
        if (!(b.atr[i] = malloc(cols * sizeof(double)))) goto nomem;
        if (!(b.valid[i] = malloc(cols))) goto nomem;
        if (!(b.rank[i] = malloc(cols * sizeof(int32_t)))) goto nomem;
        if (!(b.vbar[i] = malloc(cols * sizeof(int32_t)))) goto nomem;
    }
    for (size_t i = 0; i < b.n_zs; i++)
        if (!(b.volz[i] = malloc(cols * sizeof(double)))) goto nomem;
    for (size_t i = 0; i < b.n_trz; i++)
        if (!(b.trz[i] = malloc(cols * sizeof(double)))) goto nomem;

    int nt = x->threads;
    /* EMAs, vol_z and ATR blocks are independent jobs. */
    size_t atr_blocks = (n + 8191) / 8192;
    size_t jobs1 = b.n_spans + b.n_zs + b.n_atrs * atr_blocks;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (size_t j = 0; j < jobs1; j++) {
        if (j < b.n_spans) {
            sebt_k_ema(x->s->close, (int64_t)n, b.spans[j], b.ema[j]);
        } else if (j < b.n_spans + b.n_zs) {
            size_t z = j - b.n_spans;
            sebt_k_zscore(x->s->volume, (int64_t)n, b.zs[z], b.volz[z]);
        } else {
            size_t q = j - b.n_spans - b.n_zs;
            size_t a = q / atr_blocks, blk = q % atr_blocks;
            size_t from = blk * 8192, to = from + 8192 < n ? from + 8192 : n;
            fast_atr_range(x->tr, n, b.atrs[a], from, to, b.atr[a]);
        }
    }
    /* The valid bars per ATR, then tr_z per (z, atr). */
    size_t jobs2 = b.n_atrs + b.n_trz;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (size_t j = 0; j < jobs2; j++) {
        if (j < b.n_atrs) {
            fast_valid_from_atr(b.atr[j], n, b.valid[j], b.rank[j], b.vbar[j], &b.n_valid[j]);
        } else {
            size_t q = j - b.n_atrs;
            sebt_k_zscore(b.atr[b.trz_keys[q][1]], (int64_t)n, b.zs[b.trz_keys[q][0]], b.trz[q]);
        }
    }
    /* The z-scores above are rolling: a pre-filter only. Every bar where a
     * combo of the batch could take a decision on one of them (the value
     * within SEBT_K_Z_MARGIN of the loosest threshold or above, and cloc
     * above the loosest cloc_min) gets the reference's bits; elsewhere the
     * rolling value is far below every threshold, as the reference's is. */
    double *zmin = malloc((b.n_zs + 2 * b.n_trz + b.n_zs + b.n_trz) * sizeof *zmin);
    if (!zmin)
        goto nomem;
    double *zcmin = zmin + b.n_zs, *tvmin = zcmin + b.n_zs, *ttmin = tvmin + b.n_trz, *tcmin = ttmin + b.n_trz;
    for (size_t i = 0; i < b.n_zs; i++)
        zmin[i] = zcmin[i] = INFINITY;
    for (size_t i = 0; i < b.n_trz; i++)
        tvmin[i] = ttmin[i] = tcmin[i] = INFINITY;
    for (size_t g = g0; g < g1; g++) {
        const group *gr = &x->groups[g];
        zmin[gr->z_slot] = fmin(zmin[gr->z_slot], gr->vmin);
        zcmin[gr->z_slot] = fmin(zcmin[gr->z_slot], gr->cmin);
        tvmin[gr->trz_slot] = fmin(tvmin[gr->trz_slot], gr->vmin);
        ttmin[gr->trz_slot] = fmin(ttmin[gr->trz_slot], gr->tmin);
        tcmin[gr->trz_slot] = fmin(tcmin[gr->trz_slot], gr->cmin);
    }
    int failed = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nt) reduction(|:failed)
    for (size_t z = 0; z < b.n_zs; z++)
        failed |= fast_z_refine(x->s->volume, n, b.zs[z], b.volz[z], sebt_k_z_prefilter(zmin[z]), x->cloc,
                                zcmin[z], NULL, 0.0) != 0;
    if (!failed) {
        #pragma omp parallel for schedule(dynamic, 1) num_threads(nt) reduction(|:failed)
        for (size_t q = 0; q < b.n_trz; q++)
            failed |= fast_z_refine(b.atr[b.trz_keys[q][1]], n, b.zs[b.trz_keys[q][0]], b.trz[q],
                                    sebt_k_z_prefilter(ttmin[q]), x->cloc, tcmin[q], b.volz[b.trz_keys[q][0]],
                                    tvmin[q]) != 0;
    }
    free(zmin);
    if (failed)
        goto nomem;

    /* Each key's candidate bars: every bar that could signal for one of
     * its combos, with the values the combos compare and ATR for the stop. */
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nt) reduction(|:failed)
    for (size_t g = g0; g < g1; g++) {
        group *gr = &x->groups[g];
        const double *ef = b.ema[gr->fast_slot], *es = b.ema[gr->slow_slot];
        const double *vz = b.volz[gr->z_slot], *tz = b.trz[gr->trz_slot];
        const double *atr = b.atr[gr->atr_slot];
        size_t count = 0;
        for (size_t t = 0; t < n; t++)
            count += ef[t] < es[t] && vz[t] > gr->vmin && tz[t] > gr->tmin && x->cloc[t] > gr->cmin;
        size_t m = count ? count : 1;
        char *mem = malloc(m * (4 * sizeof(double) + sizeof(int32_t)));
        if (!mem) {
            failed = 1;
            continue;
        }
        double *cvz = (double *)mem, *ctz = cvz + m, *ccl = ctz + m, *catr = ccl + m;
        int32_t *cbar = (int32_t *)(catr + m);
        size_t k = 0;
        for (size_t t = 0; t < n; t++) {
            if (ef[t] < es[t] && vz[t] > gr->vmin && tz[t] > gr->tmin && x->cloc[t] > gr->cmin) {
                cbar[k] = (int32_t)t;
                cvz[k] = vz[t];
                ctz[k] = tz[t];
                ccl[k] = x->cloc[t];
                catr[k] = atr[t];
                k++;
            }
        }
        gr->cand_mem = mem;
        gr->cands.n = (int64_t)count;
        gr->cands.bar = cbar;
        gr->cands.vol_z = cvz;
        gr->cands.tr_z = ctz;
        gr->cands.cloc = ccl;
        gr->cands.atr = catr;
    }
    if (failed)
        goto nomem;
    /* The columns are no longer needed: only the valid bars are. */
    free_columns(b.ema, b.n_spans);
    free_columns(b.volz, b.n_zs);
    free_columns(b.trz, b.n_trz);
    free_columns(b.atr, b.n_atrs);
    b.ema = b.volz = b.trz = b.atr = NULL;

    /* The combos, in tasks of up to FAST_TASK_COMBOS neighbours (in key and
     * threshold order) that share their signals: a task filters its key's
     * candidates once by the thresholds, then runs each combo on the result. */
    size_t first = x->groups[g0].first;
    size_t last = x->groups[g1 - 1].first + x->groups[g1 - 1].count;
    size_t n_tasks = 0;
    for (size_t q = first; q < last; q++)
        if (q == first || !same_signals(&x->order[q], &x->order[q - 1]) || (q - first) % FAST_TASK_COMBOS == 0)
            n_tasks++;
    size_t *task_start = malloc((n_tasks + 1) * sizeof *task_start);
    if (!task_start)
        goto nomem;
    n_tasks = 0;
    for (size_t q = first; q < last; q++)
        if (q == first || !same_signals(&x->order[q], &x->order[q - 1]) || (q - first) % FAST_TASK_COMBOS == 0)
            task_start[n_tasks++] = q;
    task_start[n_tasks] = last;
    size_t rcap = 0, ccap = 1;
    for (size_t a = 0; a < b.n_atrs; a++)
        if ((size_t)b.n_valid[a] > rcap)
            rcap = (size_t)b.n_valid[a];
    for (size_t g = g0; g < g1; g++)
        if ((size_t)x->groups[g].cands.n > ccap)
            ccap = (size_t)x->groups[g].cands.n;
    bool want_trades = x->opts && x->opts->want_trades;
    sebt_progress_fn progress = x->opts ? x->opts->progress : NULL;
    void *puser = x->opts ? x->opts->progress_user : NULL;
    failed = 0;
    #pragma omp parallel num_threads(nt) reduction(|:failed)
    {
        double *rbuf = malloc((rcap ? rcap : 1) * sizeof(double));
        char *fmem = malloc(ccap * (4 * sizeof(double) + sizeof(int32_t)));
        sebt_trade *tbuf = NULL;
        int64_t tcap = 0;
        if (!rbuf || !fmem)
            failed = 1;
        double *fvz = (double *)fmem, *ftz = fvz + ccap, *fcl = ftz + ccap, *fatr = fcl + ccap;
        int32_t *fbar = (int32_t *)(fatr + ccap);
        #pragma omp for schedule(dynamic, 1)
        for (size_t task = 0; task < n_tasks; task++) {
            if (failed)
                continue;
            size_t q0 = task_start[task], q1 = task_start[task + 1];
            /* The key of q0: keys are contiguous in order[]. */
            size_t lo = g0, hi = g1;
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (x->groups[mid].first <= q0)
                    lo = mid;
                else
                    hi = mid;
            }
            const group *gr = &x->groups[lo];
            const sebt_params *p0 = &x->combos[x->order[q0].index];
            const sebt_k_cands *c = &gr->cands;
            int64_t k = 0;
            for (int64_t i = 0; i < c->n; i++) {
                if (c->vol_z[i] > p0->vol_z && c->tr_z[i] > p0->tr_z && c->cloc[i] > p0->cloc_min) {
                    fbar[k] = c->bar[i];
                    fvz[k] = c->vol_z[i];
                    ftz[k] = c->tr_z[i];
                    fcl[k] = c->cloc[i];
                    fatr[k] = c->atr[i];
                    k++;
                }
            }
            sebt_k_cands sig = { k, fbar, fvz, ftz, fcl, fatr };
            sebt_k_valid v = { b.valid[gr->atr_slot], b.rank[gr->atr_slot], b.vbar[gr->atr_slot],
                               b.n_valid[gr->atr_slot] };
            for (size_t q = q0; q < q1 && !failed; q++) {
                size_t idx = x->order[q].index;
                sebt_result *r = &x->results[idx];
                memset(r, 0, sizeof *r);
                sebt_k_run_combo(&x->fm->m, &v, &sig, &x->combos[idx], tbuf, want_trades ? tcap : 0, rbuf,
                                 (int64_t)rcap, r);
                if (!want_trades || r->n_trades == 0)
                    continue;
                if ((int64_t)r->n_trades > tcap) {
                    free(tbuf);
                    tcap = (int64_t)r->n_trades * 2;
                    tbuf = malloc((size_t)tcap * sizeof *tbuf);
                    if (!tbuf) {
                        tcap = 0;
                        failed = 1;
                        break;
                    }
                    sebt_k_run_combo(&x->fm->m, &v, &sig, &x->combos[idx], tbuf, tcap, rbuf, (int64_t)rcap, r);
                }
                r->trades = malloc(r->n_trades * sizeof *r->trades);
                if (!r->trades) {
                    failed = 1;
                    break;
                }
                memcpy(r->trades, tbuf, r->n_trades * sizeof *r->trades);
            }
            size_t d;
            #pragma omp atomic capture
            { x->done += q1 - q0; d = x->done; }
            if (progress && thread_id() == 0) {
                double t = now_s();
                if (t - x->last_progress >= 0.25) {
                    x->last_progress = t;
                    progress(puser, d, x->total);
                }
            }
        }
        free(rbuf);
        free(fmem);
        free(tbuf);
    }
    free(task_start);
    for (size_t g = g0; g < g1; g++) {
        free(x->groups[g].cand_mem);
        x->groups[g].cand_mem = NULL;
    }
    batch_series_free(&b);
    if (failed)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory while running combos");
    return SEBT_OK;

nomem:
    for (size_t g = g0; g < g1; g++) {
        free(x->groups[g].cand_mem);
        x->groups[g].cand_mem = NULL;
    }
    batch_series_free(&b);
    (void)st;
    return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory preparing indicator series for %zu bars", n);
}

sebt_status fast_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                           size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                           sebt_error *err)
{
    (void)self;
    if (!s || (n_combos && (!combos || !results)))
        return sebt_fail(err, SEBT_ERR_USAGE, "fast_cpu run_batch: series, combos and results are required");
    for (size_t i = 0; i < n_combos; i++) {
        sebt_error e = { 0 };
        if (sebt_params_validate(&combos[i], &e) != SEBT_OK)
            return sebt_fail(err, SEBT_ERR_PARAM, "combo %zu: %s", i, e.msg);
    }
    sebt_status st = sebt_series_check(s, err);
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
    /* A sweep of well under a millisecond of work gains nothing from a
     * thread team and, on a loaded machine, loses to its wake-up and spin
     * costs. Results do not depend on this choice. */
    if ((double)s->n * (double)n_combos < 1e6)
        threads = 1;

    size_t n = s->n;
    size_t cols = n ? n : 1;
    double *tr = malloc(cols * sizeof(double));
    double *cloc = malloc(cols * sizeof(double));
    keyed_combo *order = malloc(n_combos * sizeof *order);
    group *groups = NULL;
    fast_market fm;
    memset(&fm, 0, sizeof fm);
    if (!tr || !cloc || !order) {
        st = sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu bars and %zu combos", n, n_combos);
        goto done;
    }
    /* Three independent whole-series passes: side by side, so that the
     * serial part of a sweep does not cap its thread scaling. */
    sebt_error market_err = { 0 };
    sebt_status market_st = SEBT_OK;
    #pragma omp parallel sections num_threads(threads < 3 ? threads : 3)
    {
        #pragma omp section
        fast_tr_column(s, tr);
        #pragma omp section
        fast_cloc_column(s, cloc);
        #pragma omp section
        market_st = fast_market_build(s, &fm, &market_err);
    }
    if (market_st != SEBT_OK) {
        st = market_st;
        if (err)
            *err = market_err;
        goto done;
    }

    for (size_t i = 0; i < n_combos; i++) {
        const sebt_params *p = &combos[i];
        order[i].key = (ind_key){ p->atr_window, p->z_window, p->ema_fast, p->ema_slow };
        order[i].vz = p->vol_z;
        order[i].tz = p->tr_z;
        order[i].cm = p->cloc_min;
        order[i].index = i;
    }
    qsort(order, n_combos, sizeof *order, keyed_cmp);
    size_t n_groups = 0;
    for (size_t i = 0; i < n_combos; i++)
        if (i == 0 || key_cmp(&order[i].key, &order[i - 1].key) != 0)
            n_groups++;
    groups = calloc(n_groups, sizeof *groups);
    if (!groups) {
        st = sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu indicator keys", n_groups);
        goto done;
    }
    size_t g = (size_t)-1;
    for (size_t i = 0; i < n_combos; i++) {
        const sebt_params *p = &combos[order[i].index];
        if (i == 0 || key_cmp(&order[i].key, &order[i - 1].key) != 0) {
            g++;
            groups[g].key = order[i].key;
            groups[g].first = i;
            groups[g].vmin = p->vol_z;
            groups[g].tmin = p->tr_z;
            groups[g].cmin = p->cloc_min;
        }
        groups[g].count++;
        if (p->vol_z < groups[g].vmin) groups[g].vmin = p->vol_z;
        if (p->tr_z < groups[g].tmin) groups[g].tmin = p->tr_z;
        if (p->cloc_min < groups[g].cmin) groups[g].cmin = p->cloc_min;
    }

    /* Distinct EMA spans of the whole sweep, for the batch estimate. */
    size_t n_spans_total = 0;
    {
        int32_t *seen = malloc(2 * n_groups * sizeof *seen);
        if (!seen) {
            st = sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu indicator keys", n_groups);
            goto done;
        }
        for (size_t q = 0; q < n_groups; q++) {
            find_or_add(seen, &n_spans_total, groups[q].key.fast);
            find_or_add(seen, &n_spans_total, groups[q].key.slow);
        }
        free(seen);
    }
    sweep_ctx x = { s, tr, cloc, &fm, combos, order, groups, n_groups, opts, results,
                    n_combos, 0, now_s(), threads, 0 };
    size_t budget = fast_memory_budget();
    size_t g0 = 0;
    while (g0 < n_groups) {
        /* Grow the batch while its worst case fits (always one key). The
         * distinct counts are over-estimated: a z repeated under another
         * atr_window is counted again. */
        size_t g1 = g0 + 1, atrs = 1, zs = 1;
        for (; g1 < n_groups && g1 - g0 < FAST_MAX_KEYS_PER_BATCH; g1++) {
            size_t k = g1 + 1 - g0;
            if (groups[g1].key.atr != groups[g1 - 1].key.atr)
                atrs++;
            if (groups[g1].key.z != groups[g1 - 1].key.z || groups[g1].key.atr != groups[g1 - 1].key.atr)
                zs++;
            size_t spans = 2 * k < n_spans_total ? 2 * k : n_spans_total;
            if (batch_bytes(n, spans, atrs, zs, zs, k) > budget)
                break;
        }
        st = run_batch_groups(&x, g0, g1, err);
        if (st != SEBT_OK) {
            sebt_results_free(results, n_combos);
            goto done;
        }
        g0 = g1;
    }
    if (opts && opts->progress)
        opts->progress(opts->progress_user, n_combos, n_combos);

done:
    free(tr);
    free(cloc);
    free(order);
    free(groups);
    fast_market_free(&fm);
    return st;
}
