/* SPEC §7 from a list of trades, the library's one copy: the metrics of a
 * chain of trades (a walk-forward's out-of-sample result, core/walkforward.c)
 * and the equity curve with its drawdown, point by point (the pictures,
 * core/plot.c). The backends compute the same metrics while they trade.
 *
 * The reference keeps its own literal copy (reference/metrics.c) on
 * purpose: it is the oracle these results are judged against, written from
 * SPEC alone and depending on nothing but the public types, so a bug here
 * shows as a divergence from it (core/tests/test_oos.c compares the two)
 * instead of being shared by both. */
#include <math.h>
#include <stdbool.h>

#include "sebt/oos.h"
#include "sebt/plot.h"

/* SPEC §7's drawdown one trade at a time: the cumulative pnl less its
 * running maximum, which starts at the first trade's cumulative pnl (the
 * flat 0 before any trade is not a peak, as pandas' cummax has it). */
typedef struct {
    double cum, peak;
    bool started;
} drawdown_walk;

static double drawdown_step(drawdown_walk *w, double pnl)
{
    w->cum += pnl;
    if (!w->started || w->cum > w->peak)
        w->peak = w->cum;
    w->started = true;
    return w->cum - w->peak;
}

void sebt_trades_metrics(const sebt_trade *trades, size_t n, sebt_metrics *m)
{
    *m = (sebt_metrics){ 0 };
    if (n == 0)
        return;
    size_t wins = 0;
    double sum_r = 0.0, total = 0.0, max_dd = 0.0;
    drawdown_walk dd = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (trades[i].pnl > 0)
            wins++;
        sum_r += trades[i].r;
        total += trades[i].pnl;
        double d = drawdown_step(&dd, trades[i].pnl);
        if (d < max_dd)
            max_dd = d;
    }
    double mean_r = sum_r / (double)n, sharpe = 0.0;
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

void sebt_equity_curve(const sebt_result *r, double *equity, double *drawdown)
{
    drawdown_walk dd = { 0 };
    for (size_t i = 0; i < r->n_trades; i++) {
        drawdown[i] = drawdown_step(&dd, r->trades[i].pnl);
        equity[i] = dd.cum;
    }
}
