/* What a backtest tool shows beside SPEC §7's metrics, from one combo's
 * trades (core/metrics.c; docs/decisions.md says what each figure means and
 * why it is defined so). The figures need the trades, so they come with a
 * run of one combo (`sebt run`, `sebt run --combo FILE:ID`, the Python
 * package's RunResult.stats) and with a sweep that asks for them (`sebt
 * sweep --analysis`, sebt_sweep_opts.analysis), which runs its combos with
 * their trades; a plain sweep's rows keep SPEC §7's metrics, which every
 * backend computes while it trades. */
#ifndef SEBT_ANALYSIS_H
#define SEBT_ANALYSIS_H

#include <stdint.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

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
} sebt_trade_stats;

/* The figures of r (with its trades) over the series s it was run on. */
void sebt_trade_stats_of(const sebt_series *s, const sebt_result *r, sebt_trade_stats *st);

#ifdef __cplusplus
}
#endif

#endif
