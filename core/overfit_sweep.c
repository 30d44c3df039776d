/* A sweep's overfitting in one pass over its combos (sebt/overfit.h): the
 * combos run with their trades through the streamed sweep driver, each
 * combo's trades folded into its row of the CSCV statistics, the best
 * combo's trade R kept for its skew and kurtosis. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sebt/backends.h"
#include "sebt/overfit.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"

typedef struct {
    int s;
    size_t n_bars;
    double *stats;      /* n_combos rows of 3 s */
    double *sharpe;     /* each combo's SPEC §7 Sharpe (NaN with < 2 trades) */
    size_t best;
    double best_sharpe;
    double *best_r;
    size_t best_n, best_cap;
    bool nomem;
} pass;

static int take_window(void *user, const sebt_sweep_window *w)
{
    pass *p = user;
    for (size_t k = 0; k < w->count; k++) {
        size_t i = (size_t)w->first + k;
        const sebt_result *r = &w->results[k];
        sebt_overfit_add_trades(p->stats + i * (size_t)(SEBT_OVERFIT_STATS * p->s), p->s, p->n_bars, r);
        p->sharpe[i] = r->metrics.n >= 2 ? r->metrics.sharpe : NAN;
        if (p->best != SIZE_MAX && !(r->metrics.sharpe > p->best_sharpe))
            continue;
        if (r->n_trades > p->best_cap) {
            double *g = realloc(p->best_r, r->n_trades * sizeof *g);
            if (!g) {
                p->nomem = true;
                return 1;
            }
            p->best_r = g;
            p->best_cap = r->n_trades;
        }
        for (size_t t = 0; t < r->n_trades; t++)
            p->best_r[t] = r->trades[t].r;
        p->best_n = r->n_trades;
        p->best = i;
        p->best_sharpe = r->metrics.sharpe;
    }
    return 0;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The sample variance (n - 1) of the defined Sharpe ratios; *count of them. */
static double sharpe_variance(const double *x, size_t n, size_t *count)
{
    double s = 0.0;
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) {
            s += x[i];
            c++;
        }
    *count = c;
    if (c < 2)
        return NAN;
    double m = s / (double)c, v = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i]))
            v += (x[i] - m) * (x[i] - m);
    return v / (double)(c - 1);
}

double *sebt_overfit_stats_new(size_t n_combos, int blocks)
{
    size_t n = n_combos * (size_t)(SEBT_OVERFIT_STATS * blocks);
    if (blocks <= 0 || (n_combos && n / n_combos != (size_t)(SEBT_OVERFIT_STATS * blocks)) || n > SIZE_MAX / sizeof(double))
        return NULL;
    double *x = calloc(n ? n : 1, sizeof *x);
    /* Each page written here (a volatile store: a memset after malloc
     * becomes calloc again), not left untouched: a sweep's first touch of
     * such a page reads it (the row's sums are added to), maps the shared
     * zero page, and its write then copies it and flushes every running
     * thread's TLB (an interrupt to each CPU, dear in a VM: a tenth of a
     * second over 10^5 combos at S = 16). */
    for (size_t i = 0; x && i < n; i += 4096 / sizeof *x)
        ((volatile double *)x)[i] = 0.0;
    return x;
}

void sebt_overfit_free(sebt_overfit *o)
{
    sebt_pbo_free(&o->pbo);
}

/* DSR and PBO from a pass's figures (p: stats, sharpe, the best and its
 * trade R), the same whichever run gathered them. */
static sebt_status finish(pass *p, size_t n_combos, int blocks, int threads, sebt_overfit *out, sebt_error *err)
{
    out->version = SEBT_OVERFIT_VERSION;
    out->best = p->best;
    out->dsr.n_trials = n_combos;
    out->dsr.var_sr = sharpe_variance(p->sharpe, n_combos, &out->with_sharpe);
    out->dsr.sr = p->best_sharpe;
    out->dsr.t = p->best_n;
    sebt_moments(p->best_r, p->best_n, &out->dsr.skew, &out->dsr.kurt);
    sebt_dsr_compute(&out->dsr);
    double t1 = wall_s();
    sebt_status st = sebt_pbo_compute(p->stats, n_combos, blocks, threads, &out->pbo, err);
    out->pbo_seconds = wall_s() - t1;
    return st;
}

static sebt_status stats_nomem(size_t n_combos, int blocks, sebt_error *err)
{
    return sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for %zu combos' block statistics (%zu bytes)",
                     n_combos, n_combos * (size_t)(SEBT_OVERFIT_STATS * blocks) * sizeof(double));
}

/* sebt_overfit_sweep on a backend whose walk sums the block statistics:
 * one metrics-only sweep gathers them, no trades recorded. */
static sebt_status overfit_walked(const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                                  const sebt_params *combos, size_t n_combos, int blocks, int threads,
                                  sebt_overfit *out, sebt_error *err)
{
    double t0 = wall_s();
    sebt_overfit_gather g = { .blocks = blocks };
    g.stats = sebt_overfit_stats_new(n_combos, blocks);
    g.n = malloc(n_combos * sizeof *g.n);
    g.sharpe = malloc(n_combos * sizeof *g.sharpe);
    sebt_status st = SEBT_OK;
    if (!g.stats || !g.n || !g.sharpe)
        st = stats_nomem(n_combos, blocks, err);
    if (st == SEBT_OK) {
        sebt_sweep_opts so = { .grid = grid, .combos = grid ? NULL : combos, .n_combos = n_combos,
                               .threads = threads, .rows = SEBT_ROWS_NONE, .overfit = &g,
                               .verify = SEBT_VERIFY_OFF };
        sebt_sweep_result sr;
        memset(&sr, 0, sizeof sr);
        st = sebt_sweep_run(b, s, &so, &sr, err);
        sebt_sweep_result_free(&sr);
    }
    if (st == SEBT_OK)
        st = sebt_overfit_gathered(b, s, grid, combos, n_combos, &g, threads, out, err);
    out->seconds = wall_s() - t0;
    free(g.stats);
    free(g.n);
    free(g.sharpe);
    return st;
}

sebt_status sebt_overfit_sweep(const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                               const sebt_params *combos, size_t n_combos, int blocks, int threads,
                               sebt_overfit *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    if (blocks == 0)
        blocks = SEBT_OVERFIT_BLOCKS;
    sebt_status st = sebt_pbo_check(blocks, n_combos, err);
    if (st != SEBT_OK)
        return st;
    if (sebt_backend_blocks_batch(b))
        return overfit_walked(b, s, grid, combos, n_combos, blocks, threads, out, err);
    double t0 = wall_s();
    pass p = { .s = blocks, .n_bars = s->n, .best = SIZE_MAX };
    p.stats = sebt_overfit_stats_new(n_combos, blocks);
    p.sharpe = malloc(n_combos * sizeof *p.sharpe);
    if (!p.stats || !p.sharpe) {
        free(p.stats);
        free(p.sharpe);
        return stats_nomem(n_combos, blocks, err);
    }
    /* With the analysis on, the driver sizes its windows by their trades. */
    sebt_sweep_opts so = { .grid = grid, .combos = grid ? NULL : combos, .n_combos = n_combos, .threads = threads,
                           .want_trades = true, .analysis = true, .rows = SEBT_ROWS_NONE,
                           .on_window = take_window, .user = &p, .verify = SEBT_VERIFY_OFF };
    sebt_sweep_result sr;
    memset(&sr, 0, sizeof sr);
    st = sebt_sweep_run(b, s, &so, &sr, err);
    sebt_sweep_result_free(&sr);
    if (st == SEBT_OK && p.nomem)
        st = sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for the best combo's trades");
    if (st == SEBT_OK)
        st = finish(&p, n_combos, blocks, threads, out, err);
    out->seconds = wall_s() - t0;
    free(p.stats);
    free(p.sharpe);
    free(p.best_r);
    return st;
}

sebt_status sebt_overfit_gathered(const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                                  const sebt_params *combos, size_t n_combos, const sebt_overfit_gather *g,
                                  int threads, sebt_overfit *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    sebt_status st = sebt_pbo_check(g->blocks, n_combos, err);
    if (st != SEBT_OK)
        return st;
    double t0 = wall_s();
    pass p = { .s = g->blocks, .n_bars = s->n, .best = SIZE_MAX, .stats = g->stats };
    p.sharpe = malloc((n_combos ? n_combos : 1) * sizeof *p.sharpe);
    if (!p.sharpe)
        return sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for %zu combos' Sharpe ratios", n_combos);
    for (size_t i = 0; i < n_combos; i++) {
        p.sharpe[i] = g->n[i] >= 2 ? g->sharpe[i] : NAN;
        if (p.best == SIZE_MAX || g->sharpe[i] > p.best_sharpe) {
            p.best = i;
            p.best_sharpe = g->sharpe[i];
        }
    }
    /* The best's trades, for their skew and kurtosis: that combo alone again. */
    sebt_params best;
    if (grid)
        sebt_grid_combos(grid, p.best, 1, &best);
    else
        best = combos[p.best];
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_batch_opts bo = { .threads = threads, .want_trades = true };
    st = sebt_backend_status(b, b->run_batch(b, s, &best, 1, &bo, &r, err), err);
    if (st == SEBT_OK && (r.metrics.n != g->n[p.best] || !same_bits(r.metrics.sharpe, g->sharpe[p.best])))
        st = sebt_fail(err, SEBT_ERR_INTERNAL, "overfit: combo %zu run again gives %lld trades and Sharpe %.17g, "
                       "the sweep %lld and %.17g", p.best, (long long)r.metrics.n, r.metrics.sharpe,
                       (long long)g->n[p.best], g->sharpe[p.best]);
    if (st == SEBT_OK) {
        p.best_r = malloc((r.n_trades ? r.n_trades : 1) * sizeof *p.best_r);
        if (!p.best_r)
            st = sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for the best combo's trades");
        for (size_t t = 0; p.best_r && t < r.n_trades; t++)
            p.best_r[t] = r.trades[t].r;
        p.best_n = r.n_trades;
    }
    sebt_result_free(&r);
    if (st == SEBT_OK)
        st = finish(&p, n_combos, g->blocks, threads, out, err);
    out->seconds = wall_s() - t0;
    free(p.sharpe);
    free(p.best_r);
    return st;
}
