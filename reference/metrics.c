/* SPEC §7: the metrics of one combo, over its trades in order.
 *
 * The library has the same function (core/metrics.c, sebt_trades_metrics);
 * this copy stays on purpose: the reference is the oracle, written from
 * SPEC alone and depending on nothing but the public types, so it must not
 * share code with what it judges. */
#include <math.h>

#include "ref.h"

void sebt_ref_metrics(const sebt_trade *trades, size_t n, sebt_metrics *m)
{
    *m = (sebt_metrics){ 0 };           /* with no trades every metric is 0 */
    if (n == 0)
        return;

    size_t wins = 0;
    double sum_r = 0.0, total = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (trades[i].pnl > 0)
            wins++;
        sum_r += trades[i].r;
        total += trades[i].pnl;
    }

    /* Drawdown against the running maximum of the cumulative pnl after each
     * trade (the curve starts at the first trade, as pandas' cummax does:
     * the flat 0 before any trade is not a peak). */
    double cum = 0.0, peak = 0.0, max_dd = 0.0;
    for (size_t i = 0; i < n; i++) {
        cum += trades[i].pnl;
        if (i == 0 || cum > peak)
            peak = cum;
        double dd = cum - peak;
        if (dd < max_dd)
            max_dd = dd;
    }

    double mean_r = sum_r / (double)n;
    double sharpe = 0.0;
    if (n >= 2) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (trades[i].r - mean_r) * (trades[i].r - mean_r);
        double sd = sqrt(ss / (double)(n - 1));
        if (sd != 0.0)
            sharpe = mean_r / sd;
    }

    m->n = (int64_t)n;
    m->win_rate = (double)wins / (double)n;
    m->avg_r = mean_r;
    m->total_pnl = total;
    m->max_dd = max_dd;
    m->sharpe = sharpe;
}
