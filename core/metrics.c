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

#include "sebt/analysis.h"
#include "sebt/oos.h"
#include "sebt/plot.h"
#include "test_faults.h"

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

/* 365.25 days of milliseconds: a calendar year on average, leap days in. */
#define MS_PER_YEAR (365.25 * 86400000.0)

void sebt_trade_stats_of_tally(const sebt_series *s, const sebt_result *r, const sebt_trade_tally *t,
                               sebt_trade_stats *st)
{
    *st = (sebt_trade_stats){ 0 };
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        st->exits[k] = t->exits[k];
    st->gross_profit = t->gross_profit;
    st->gross_loss = t->gross_loss;
    st->bars_in_market = t->bars_in_market - (SEBT_FAULT("bars_in_market_one_short") ? r->metrics.n : 0);
    if (r->open_at_end.open)
        st->bars_in_market += (int64_t)r->open_at_end.bars_held + 1;
    double loss = SEBT_FAULT("profit_factor_sign_flipped") ? st->gross_loss : -st->gross_loss;
    st->profit_factor = st->gross_loss < 0 ? st->gross_profit / loss : NAN;
    if (r->valid_bars)
        st->exposure = (double)st->bars_in_market / (double)r->valid_bars;
    if (s->n >= 2)
        st->years = (double)(s->ts[s->n - 1] - s->ts[0]) / (SEBT_FAULT("year_of_365_days") ? 365 * 86400000.0 : MS_PER_YEAR);
    if (st->years > 0 && r->metrics.sharpe != 0.0)
        st->sharpe_annual = r->metrics.sharpe * sqrt((double)r->metrics.n / st->years);
}

void sebt_trade_stats_of(const sebt_series *s, const sebt_result *r, sebt_trade_stats *st)
{
    sebt_trade_tally t = { 0 };
    for (size_t i = 0; i < r->n_trades; i++) {
        const sebt_trade *tr = &r->trades[i];
        if ((unsigned)tr->reason < SEBT_EXIT_KINDS)
            t.exits[tr->reason]++;
        if (tr->pnl > 0)
            t.gross_profit += tr->pnl;
        else if (tr->pnl < 0)
            t.gross_loss += tr->pnl;
        t.bars_in_market += (int64_t)tr->bars_held + 1;
    }
    sebt_trade_stats_of_tally(s, r, &t, st);
}
