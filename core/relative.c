/* The relative measures (sebt/analysis.h; docs/formats.md "The relative
 * measures" defines each with its formula and NaN rule): a combo's trades
 * as returns on the money put in, compounded at a fraction of an equity.
 * Every sum runs in trade order, so a literal form written from the
 * formulas (python/tests/package/test_relative.py) gives the same bits. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/analysis.h"
#include "sebt/sebt.h"

#define MS_PER_YEAR (365.25 * 86400000.0)

static double trade_return(const sebt_trade *t)
{
    return t->entry_price > 0 ? t->pnl / t->entry_price : NAN;
}

/* The equity after each trade, its peaks and drawdowns. Drawdown episodes:
 * from a peak until the equity reaches it again (or the series ends). */
typedef struct {
    double equity, peak;
    int64_t peak_bar;          /* where the peak was set: bar 0 for the capital */
    double depth;              /* the episode's deepest equity / peak - 1 (<= 0) */
    bool in_dd;
    double max_dd, sum_depth;
    int64_t n_episodes, longest;
} equity_walk;

static void close_episode(equity_walk *w, int64_t bar)
{
    w->sum_depth += w->depth;
    w->n_episodes++;
    if (bar - w->peak_bar > w->longest)
        w->longest = bar - w->peak_bar;
    w->in_dd = false;
    w->depth = 0.0;
}

static void equity_step(equity_walk *w, double growth, int64_t bar)
{
    w->equity = growth > 0 ? w->equity * growth : 0.0;   /* ruined: nothing left to compound */
    if (w->equity >= w->peak) {
        if (w->in_dd)
            close_episode(w, bar);
        w->peak = w->equity;
        w->peak_bar = bar;
        return;
    }
    double dd = w->equity / w->peak - 1.0;
    w->in_dd = true;
    if (dd < w->depth)
        w->depth = dd;
    if (dd < w->max_dd)
        w->max_dd = dd;
}

/* Mean, sample standard deviation and downside deviation of x[0..n). */
static void spread(const double *x, size_t n, double *mean, double *sd, double *down)
{
    double sum = 0.0, sq = 0.0, dn = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += x[k];
    *mean = n ? sum / (double)n : NAN;
    for (size_t k = 0; k < n; k++) {
        double d = x[k] - *mean, neg = x[k] < 0 ? x[k] : 0.0;
        sq += d * d;
        dn += neg * neg;
    }
    *sd = n >= 2 ? sqrt(sq / (double)(n - 1)) : NAN;
    *down = n ? sqrt(dn / (double)n) : NAN;
}

static double ratio_or_nan(double num, double den)
{
    return den > 0 && isfinite(den) ? num / den : NAN;
}

/* The figures of the trades' returns ret_k = pnl_k / entry_price_k. */
static void return_figures(const sebt_result *r, double fraction, double per_year, sebt_relative_stats *st,
                           double *ret, double *rr)
{
    size_t n = r->n_trades;
    double best = -INFINITY, worst = INFINITY, log_growth = 0.0, bars = 0.0;
    int64_t longest = 0;
    for (size_t k = 0; k < n; k++) {
        ret[k] = trade_return(&r->trades[k]);
        rr[k] = r->trades[k].r;
        best = ret[k] > best || isnan(ret[k]) ? ret[k] : best;
        worst = ret[k] < worst || isnan(ret[k]) ? ret[k] : worst;
        log_growth += log1p(ret[k]);
        bars += (double)r->trades[k].bars_held;
        if (r->trades[k].bars_held > longest)
            longest = r->trades[k].bars_held;
    }
    double mean, sd, down, mean_r, sd_r, unused;
    spread(ret, n, &mean, &sd, &down);
    spread(rr, n, &mean_r, &sd_r, &unused);
    st->best_trade_pct = n ? 100.0 * best : NAN;
    st->worst_trade_pct = n ? 100.0 * worst : NAN;
    st->avg_trade_pct = n ? 100.0 * expm1(log_growth / (double)n) : NAN;
    st->expectancy_pct = 100.0 * mean;
    st->avg_trade_bars = n ? bars / (double)n : NAN;
    st->longest_trade_bars = longest;
    st->volatility_pct = 100.0 * fraction * sd * sqrt(per_year);
    st->return_sharpe = ratio_or_nan(mean, sd) * sqrt(per_year);
    st->return_sortino = ratio_or_nan(mean, down) * sqrt(per_year);
    st->sqn = ratio_or_nan(mean_r, sd_r) * sqrt((double)n);
}

/* The equity compounded trade by trade; NaN throughout where a return is. */
static void equity_figures(const sebt_series *s, const sebt_result *r, const double *ret, double years,
                           sebt_relative_stats *st)
{
    equity_walk w = { .equity = st->capital, .peak = st->capital };
    bool defined = true;
    for (size_t k = 0; k < r->n_trades && defined; k++) {
        defined = !isnan(ret[k]);
        equity_step(&w, 1.0 + st->fraction * ret[k], r->trades[k].exit_index);
    }
    if (!defined) {
        st->final_equity = st->total_return_pct = st->annual_return_pct = NAN;
        st->max_dd_pct = st->avg_dd_pct = st->calmar = NAN;
        st->longest_dd_bars = -1;
        return;
    }
    if (w.in_dd)
        close_episode(&w, s->n ? (int64_t)s->n - 1 : 0);
    st->final_equity = w.equity;
    st->total_return_pct = 100.0 * (w.equity / st->capital - 1.0);
    st->annual_return_pct = years > 0 ? 100.0 * (pow(w.equity / st->capital, 1.0 / years) - 1.0) : NAN;
    st->max_dd_pct = 100.0 * w.max_dd;
    st->avg_dd_pct = w.n_episodes ? 100.0 * (w.sum_depth / (double)w.n_episodes) : 0.0;
    st->longest_dd_bars = w.longest;
    st->calmar = w.max_dd < 0 ? st->annual_return_pct / -st->max_dd_pct : NAN;
}

sebt_status sebt_relative_stats_of(const sebt_series *s, const sebt_result *r, const sebt_relative_opts *o,
                                   sebt_relative_stats *st, sebt_error *err)
{
    double capital = o ? o->capital : SEBT_RELATIVE_CAPITAL, fraction = o ? o->fraction : SEBT_RELATIVE_FRACTION;
    if (!(capital > 0) || !isfinite(capital))
        return sebt_fail(err, SEBT_ERR_INPUT, "capital %g: expected a positive amount", capital);
    if (!(fraction > 0 && fraction <= 1))
        return sebt_fail(err, SEBT_ERR_INPUT, "fraction %g: expected a share of the equity in (0, 1]", fraction);
    *st = (sebt_relative_stats){ .capital = capital, .fraction = fraction };
    size_t n = r->n_trades;
    double *x = calloc(2 * n + 1, sizeof *x);   /* calloc: gcc cannot see that n = 0 reads nothing */
    if (!x)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for the relative measures of %zu trades", n);
    double years = s->n >= 2 ? (double)(s->ts[s->n - 1] - s->ts[0]) / MS_PER_YEAR : 0.0;
    double per_year = years > 0 ? (double)n / years : NAN;
    return_figures(r, fraction, per_year, st, x, x + n);
    equity_figures(s, r, x, years, st);
    free(x);
    st->buy_hold_pct = s->n && s->open[0] > 0 ? 100.0 * (s->close[s->n - 1] / s->open[0] - 1.0) : NAN;
    return SEBT_OK;
}

/* In the struct's order. */
#define F(name, count, what) { #name, count, what, offsetof(sebt_relative_stats, name) }
const sebt_relative_field sebt_relative_fields[SEBT_N_RELATIVE] = {
    F(capital, false, "the equity before the first trade"),
    F(fraction, false, "the share of the equity put in each trade"),
    F(final_equity, false, "the equity after the last trade"),
    F(total_return_pct, false, "100 (final equity / capital - 1)"),
    F(annual_return_pct, false, "100 ((final equity / capital)^(1 / years) - 1)"),
    F(buy_hold_pct, false, "100 (last close / first open - 1): holding the asset over the same bars"),
    F(volatility_pct, false, "100 fraction sd(trade return) sqrt(trades per year)"),
    F(return_sharpe, false, "mean / sd of the trade returns x sqrt(trades per year)"),
    F(return_sortino, false, "mean / downside deviation of the trade returns x sqrt(trades per year)"),
    F(calmar, false, "annual return % / -max drawdown %"),
    F(max_dd_pct, false, "the equity's deepest fall from a peak, % of the peak"),
    F(avg_dd_pct, false, "the mean depth of the equity's drawdowns, % of their peaks"),
    F(longest_dd_bars, true, "bars from a peak to its recovery (or the last bar)"),
    F(best_trade_pct, false, "the best trade's return, pnl / entry price"),
    F(worst_trade_pct, false, "the worst trade's return"),
    F(avg_trade_pct, false, "the trades' geometric mean return"),
    F(expectancy_pct, false, "the trades' arithmetic mean return"),
    F(avg_trade_bars, false, "mean bars held"),
    F(longest_trade_bars, true, "most bars held"),
    F(sqn, false, "sqrt(trades) mean(R) / sd(R): the system quality number"),
};
#undef F

const int sebt_relative_count = SEBT_N_RELATIVE;

double sebt_relative_value(const sebt_relative_stats *st, int i)
{
    const char *at = (const char *)st + sebt_relative_fields[i].offset;
    if (sebt_relative_fields[i].count) {
        int64_t v;
        memcpy(&v, at, sizeof v);
        return (double)v;
    }
    double v;
    memcpy(&v, at, sizeof v);
    return v;
}
