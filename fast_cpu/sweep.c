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

#include "sweep_internal.h"

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

#define ATR_BLOCK 512

/* ATR(w) for bars [from, to): the reference's naive sums, computed for a
 * block of bars side by side so the compiler vectorises across bars. Each
 * bar's sum still adds its window oldest first, so the bits are the
 * reference's. */
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
    threads = sweep_threads(threads);
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
    if (fast_sort_refs(&w) != 0)
        goto nomem;
    *w_out = w;
    return SEBT_OK;

nomem:
    fast_sweep_end(&w);
    return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for %zu bars and %zu combos", n, n_combos);
}
