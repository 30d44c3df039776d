/* The figures beside SPEC §7 (include/sebt/analysis.h) written literally
 * from their definitions (docs/decisions.md, "The figures beside SPEC §7"),
 * one figure at a time. The library computes them in one pass
 * (core/metrics.c, sebt_trade_stats_of) for `sebt run` and for a sweep's
 * analysis columns; the sweep's proof recomputes the columns here, so a
 * slip in the library's pass shows as a difference instead of agreeing
 * with itself. Each sum runs over the trades in their order, as the
 * definitions read ("the sum of the pnl > 0"), which is the one order
 * that gives the same bits. */
#include <math.h>

#include "ref.h"

/* A calendar year on average, leap days in: 365.25 days of 24 hours of
 * milliseconds (exactly 31,557,600,000, a whole double). */
static const double ms_per_year = 365.25 * 24.0 * 60.0 * 60.0 * 1000.0;

/* Trades that closed for `reason`. */
static int64_t exits_by(const sebt_result *r, sebt_exit_reason reason)
{
    int64_t k = 0;
    for (size_t i = 0; i < r->n_trades; i++)
        k += r->trades[i].reason == reason;
    return k;
}

/* The sum of the pnl on the side `sign` (+1: the pnl > 0; -1: the pnl < 0). */
static double gross(const sebt_result *r, int sign)
{
    double sum = 0.0;
    for (size_t i = 0; i < r->n_trades; i++) {
        double pnl = r->trades[i].pnl;
        if (sign > 0 ? pnl > 0.0 : pnl < 0.0)
            sum += pnl;
    }
    return sum;
}

static bool some_trade_lost(const sebt_result *r)
{
    for (size_t i = 0; i < r->n_trades; i++)
        if (r->trades[i].pnl < 0.0)
            return true;
    return false;
}

/* Each trade holds its entry bar and the bars_held bars after it up to
 * its exit bar; a position open at the end, its entry bar and the bars
 * counted after it up to the last valid bar. */
static int64_t bars_held_in_market(const sebt_result *r)
{
    int64_t bars = 0;
    for (size_t i = 0; i < r->n_trades; i++)
        bars += 1 + (int64_t)r->trades[i].bars_held;
    if (r->open_at_end.open)
        bars += 1 + (int64_t)r->open_at_end.bars_held;
    return bars;
}

/* The series' span, first bar to last, in years; a series of fewer than
 * two bars spans none. */
static double span_years(const sebt_series *s)
{
    if (s->n < 2)
        return 0.0;
    int64_t span_ms = s->ts[s->n - 1] - s->ts[0];
    return (double)span_ms / ms_per_year;
}

void sebt_ref_trade_stats(const sebt_series *s, const sebt_result *r, sebt_trade_stats *st)
{
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        st->exits[k] = exits_by(r, (sebt_exit_reason)k);
    st->gross_profit = gross(r, +1);
    st->gross_loss = gross(r, -1);
    /* Undefined, not infinite, with nothing lost to divide by. */
    st->profit_factor = some_trade_lost(r) ? st->gross_profit / -st->gross_loss : NAN;
    st->bars_in_market = bars_held_in_market(r);
    st->exposure = r->valid_bars == 0 ? 0.0 : (double)st->bars_in_market / (double)r->valid_bars;
    st->years = span_years(s);
    double trades = (double)r->n_trades;
    st->sharpe_annual = r->metrics.sharpe == 0.0 || st->years <= 0.0
                            ? 0.0
                            : r->metrics.sharpe * sqrt(trades / st->years);
}
