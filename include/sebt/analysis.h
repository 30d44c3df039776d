/* What a backtest tool shows beside SPEC §7's metrics, from one combo's
 * trades (core/metrics.c; docs/decisions.md says what each figure means and
 * why it is defined so). The figures need the trades, so they come with a
 * run of one combo (`sebt run`, `sebt run --combo FILE:ID`, the Python
 * package's RunResult.stats) and with a sweep that asks for them (`sebt
 * sweep --analysis`, sebt_sweep_opts.analysis), which takes them from the
 * tally a backend keeps in its walk (sebt_trade_tally below) or else from
 * its combos' trades; a plain sweep's rows keep SPEC §7's metrics, which
 * every backend computes while it trades. */
#ifndef SEBT_ANALYSIS_H
#define SEBT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the relative measures (core/relative.c; docs/formats.md "The
 * relative measures", each with its formula and NaN rule) ----------------
 * pnl and max_dd are in price units of one unit of the asset, so they do
 * not carry across periods or assets; these do. A trade's return is its
 * pnl over its entry price (after fees and slippage); the equity starts at
 * capital and grows by 1 + fraction * return at each trade's exit (marked
 * at exits, not bar by bar). Undefined figures are NaN. */
#define SEBT_RELATIVE_CAPITAL 10000.0   /* the default equity before the first trade */
#define SEBT_RELATIVE_FRACTION 1.0      /* the default share of the equity put in each trade */

typedef struct {
    double capital;          /* > 0 */
    double fraction;         /* in (0, 1] */
} sebt_relative_opts;

typedef struct {
    double capital, fraction;
    double final_equity;
    double total_return_pct;    /* 100 (final / capital - 1) */
    double annual_return_pct;   /* 100 ((final / capital)^(1 / years) - 1) */
    double buy_hold_pct;        /* 100 (last close / first open - 1) over the same bars */
    double volatility_pct;      /* 100 fraction sd(return) sqrt(trades per year) */
    double return_sharpe;       /* mean(return) / sd(return) sqrt(trades per year) */
    double return_sortino;      /* mean(return) / downside deviation sqrt(trades per year) */
    double calmar;              /* annual return % / -max drawdown % */
    double max_dd_pct;          /* the equity's deepest fall from a peak, in % (<= 0) */
    double avg_dd_pct;          /* the mean depth of its drawdowns, in % (<= 0) */
    int64_t longest_dd_bars;    /* bars from a peak to its recovery (or the last bar); -1 undefined */
    double best_trade_pct, worst_trade_pct;
    double avg_trade_pct;       /* geometric mean: 100 (prod(1 + return)^(1/n) - 1) */
    double expectancy_pct;      /* arithmetic mean: 100 mean(return) */
    double avg_trade_bars;      /* mean bars_held */
    int64_t longest_trade_bars; /* max bars_held */
    double sqn;                 /* sqrt(n) mean(R) / sd(R) (Van Tharp's system quality number) */
} sebt_relative_stats;

typedef struct {
    /* Trades by how they closed, indexed by sebt_exit_reason (stop_gap,
     * stop, tp, time); they add up to the trade count. */
    int64_t exits[SEBT_EXIT_KINDS];
    double gross_profit;     /* the sum of the pnl > 0 */
    double gross_loss;       /* the sum of the pnl < 0 (<= 0) */
    /* gross_profit / -gross_loss; NaN (undefined) when no trade lost. */
    double profit_factor;
    /* Valid bars with a position held: each trade from its entry bar to
     * its exit bar (bars_held + 1), and a position open at the end from
     * its entry bar to the last valid bar. */
    int64_t bars_in_market;
    double exposure;         /* bars_in_market / valid bars; 0 without any */
    /* The series' span, first to last bar, in years of 365.25 days. */
    double years;
    /* The per-trade Sharpe scaled by the square root of the trades per
     * year: sharpe * sqrt(n / years); 0 when the Sharpe is 0 or the series
     * spans no time. */
    double sharpe_annual;
    /* With a sweep's relative columns (sebt_sweep_opts.relative): the
     * relative measures at the default capital and fraction, from the
     * same trades; has_relative false and relative zero otherwise. */
    bool has_relative;
    sebt_relative_stats relative;
} sebt_trade_stats;

/* The figures of r (with its trades) over the series s it was run on. */
void sebt_trade_stats_of(const sebt_series *s, const sebt_result *r, sebt_trade_stats *st);

/* What the figures need of a combo's closed trades beyond SPEC §7's
 * metrics, as running sums in trade order: a backend whose metrics-only
 * walk keeps them (fast_cpu, cuda; sebt_backend_tally_batch) gives a sweep its
 * analysis columns without recording trades. */
typedef struct {
    int64_t exits[SEBT_EXIT_KINDS];   /* trades by sebt_exit_reason */
    double gross_profit;     /* 0.0, plus each pnl > 0 in trade order */
    double gross_loss;       /* 0.0, plus each pnl < 0 in trade order */
    int64_t bars_in_market;  /* the sum of bars_held + 1 over the closed trades */
} sebt_trade_tally;

/* The figures of r (its metrics, open position and valid bars; no trades
 * needed) from its closed trades' tally t: those sebt_trade_stats_of gives
 * from the trades, bit for bit. */
void sebt_trade_stats_of_tally(const sebt_series *s, const sebt_result *r, const sebt_trade_tally *t,
                               sebt_trade_stats *st);

/* Each field of sebt_relative_stats once, in order, for every writer (JSON,
 * text, the package): its name, whether it is a count, and what it is. */
#define SEBT_N_RELATIVE 20
typedef struct {
    const char *name;
    bool count;              /* int64_t, else double */
    const char *what;        /* for people, one line */
    size_t offset;           /* in sebt_relative_stats */
} sebt_relative_field;
extern const sebt_relative_field sebt_relative_fields[SEBT_N_RELATIVE];
extern const int sebt_relative_count;   /* SEBT_N_RELATIVE, for readers of the table without the header */
double sebt_relative_value(const sebt_relative_stats *st, int i);

/* The relative measures of r (with its trades) over s; o NULL: the
 * defaults. SEBT_ERR_INPUT names a capital or fraction out of range. */
sebt_status sebt_relative_stats_of(const sebt_series *s, const sebt_result *r, const sebt_relative_opts *o,
                                   sebt_relative_stats *st, sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
