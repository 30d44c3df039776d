/* Out-of-sample checks (core/oos.c, core/walkforward.c; docs/out-of-sample.md).
 *
 * A split at a date cuts the series into in-sample bars (open time before
 * it) and out-of-sample bars (at or after it), and backtests each part as
 * a series of its own: indicators warm up again at the start of each part
 * and a position open at the end of one part is not carried into the
 * other (docs/decisions.md). Every out-of-sample number is therefore a
 * plain backtest of a sub-series, which every backend computes and parity
 * covers.
 *
 * A walk-forward slides a train window and the test window after it along
 * the series: on each train window the grid is swept and the best combo
 * under a condition (sebt_sweep_where, sebt/sweep.h) by a metric is picked, then run on its
 * test window with its trades; the test windows' trades, chained in time
 * order, are one out-of-sample result with SPEC §7 metrics. */
#ifndef SEBT_OOS_H
#define SEBT_OOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sebt/backend.h"
#include "sebt/grid.h"
#include "sebt/types.h"
#include "sebt/where.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SPEC §7 over trades[0 .. n), in order, with its arithmetic in SPEC's
 * order (the reference's and the oracle's results, bit for bit;
 * core/metrics.c). */
void sebt_trades_metrics(const sebt_trade *trades, size_t n, sebt_metrics *m);

/* The first bar whose open time is >= ts (s->n when none). */
size_t sebt_series_cut(const sebt_series *s, int64_t ts);

/* A Sharpe (SPEC §7: per trade, mean R over its sample standard deviation)
 * from fewer trades than this is flagged wherever split and walk-forward
 * show one: its standard error is about 1/sqrt(n), larger than any Sharpe
 * a combo of this strategy earns, so it says nothing of an edge. */
#define SEBT_FEW_TRADES 10

/* ---- split ------------------------------------------------------------------- */

/* One window of combos, both parts' results side by side. */
typedef struct {
    uint64_t first;               /* input index of combos[0] */
    size_t count;
    const sebt_params *combos;
    const sebt_result *in_sample;  /* count results, checked, no trades */
    const sebt_result *out_sample;
} sebt_split_window;

/* Called once per window in input order; nonzero stops the run. */
typedef int (*sebt_split_window_fn)(void *user, const sebt_split_window *w);

/* A combo kept by the ranking: in-sample record and out-of-sample metrics. */
typedef struct {
    uint64_t combo;
    sebt_params params;
    sebt_result in_sample, out_sample;   /* no trades */
} sebt_split_pick;

typedef struct {
    const sebt_grid *grid;        /* the combos: a grid, or ... */
    const sebt_params *combos;    /* ... an array */
    size_t n_combos;
    int64_t split_ts;             /* the first out-of-sample open time (ms) */
    int threads;                  /* 0: the backend's default */
    size_t window;                /* combos per window; 0: 65,536 */
    size_t top;                   /* keep the top best by in-sample metric (0: none) */
    int metric;                   /* sebt_metric */
    const sebt_where *where;      /* over in-sample columns; NULL: none */
    sebt_split_window_fn on_window;   /* may be NULL */
    void *user;
    sebt_progress_fn progress;    /* combos done of n_combos; may be NULL */
    void *progress_user;
} sebt_split_opts;

typedef struct {
    size_t cut;                   /* in-sample bars: [0, cut); out-of-sample: [cut, n) */
    size_t combos_done, passing;  /* passing: combos that met the condition in sample */
    int stopped;
    sebt_split_pick *top;         /* best first; free with sebt_split_result_free */
    size_t n_top;
} sebt_split_result;

/* Errors: SEBT_ERR_USAGE (no bars on one side of the cut, bad options),
 * SEBT_ERR_NOMEM, a backend's failure, SEBT_ERR_INTERNAL (a result failing
 * sebt_result_check), SEBT_ERR_INPUT (a result that does not fit). */
sebt_status sebt_split_run(const sebt_backend *b, const sebt_series *s, const sebt_split_opts *o,
                           sebt_split_result *out, sebt_error *err);
void sebt_split_result_free(sebt_split_result *r);

/* ---- walk-forward ----------------------------------------------------------- */

typedef struct {
    const sebt_grid *grid;
    const sebt_params *combos;
    size_t n_combos;
    /* Window lengths: bars, or milliseconds of open time when by_time.
     * Window k trains on [start + k*test, start + k*test + train) and
     * tests on the test span after it; only whole test spans are run. */
    int64_t train, test;
    bool by_time;
    int metric;                   /* what picks the best (sebt_metric) */
    const sebt_where *where;      /* the condition the pick must meet; NULL: none */
    int threads;
    size_t window;                /* the sweep's combos per window; 0: default */
    /* Combos of the grid, evenly spaced, whose train metrics are kept
     * for sebt_walkforward_check (0: the picks only). */
    size_t sample;
    sebt_progress_fn progress;    /* train windows swept of all; may be NULL */
    void *progress_user;
} sebt_wf_opts;

typedef struct {
    size_t train_from, train_to;  /* bars [from, to) of the whole series */
    size_t test_from, test_to;
    size_t passing;               /* combos meeting the condition on train */
    bool picked;                  /* false: none did; the test window trades nothing */
    uint64_t combo;               /* the pick's input index */
    sebt_params params;
    sebt_result train;            /* the pick on its train window, no trades */
    /* The pick on the test window; trades' bar indices are into the whole
     * series. */
    sebt_result test;
    /* The sampled combos' metrics on the train window (sebt_wf_result's
     * n_sample of them); all zero where the window is skipped. */
    sebt_metrics *sample_metrics;
} sebt_wf_window;

typedef struct {
    sebt_wf_window *windows;
    size_t n_windows;
    sebt_trade *trades;           /* the test windows' trades, chained */
    size_t n_trades;
    sebt_metrics metrics;         /* SPEC §7 over trades (sebt_trades_metrics) */
    /* The sampled combos (opts.sample, at most n_combos): input indices,
     * ascending, and parameters. */
    uint64_t *sample_ids;
    sebt_params *sample_params;
    size_t n_sample;
} sebt_wf_result;

/* Most windows of one run, and most sampled combos times windows: a short
 * test window over a long series, or a large sample, is refused before
 * anything is allocated for it. */
#define SEBT_WF_MAX_WINDOWS 100000
#define SEBT_WF_MAX_SAMPLED 1000000

/* A window whose train or test span holds no bars (a hole in the data,
 * windows in time) is skipped by the run and by sebt_walkforward_check: it
 * is not swept, has passing 0, picks nothing and trades nothing. */
bool sebt_wf_window_skipped(const sebt_wf_window *w);

/* Errors as sebt_split_run; SEBT_ERR_USAGE also when the series holds no
 * whole train and test window, or more windows than the limits above. */
sebt_status sebt_walkforward_run(const sebt_backend *b, const sebt_series *s, const sebt_wf_opts *o,
                                 sebt_wf_result *out, sebt_error *err);
void sebt_walkforward_free(sebt_wf_result *r);

/* Runs every window's pick (train and test) and sampled combos (train),
 * skipped windows aside, again on ref and compares: metrics, open position and every trade
 * field bit for bit. *compared counts the runs compared. SEBT_OK when all
 * agree; SEBT_ERR_INTERNAL naming the first window, combo and field that
 * differ; a backend's failure. */
sebt_status sebt_walkforward_check(const sebt_backend *ref, const sebt_series *s, const sebt_wf_result *r,
                                   size_t *compared, sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
