/* The figures beside SPEC §7 (sebt/analysis.h), worked by hand: exit
 * counts, profit factor (and undefined with no losing trade), bars in the
 * market with and without a position open at the end, exposure, the
 * series' span and the annualised Sharpe. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/analysis.h"

/* A year of 365.25 days apart: the first and last of three bars. */
static const int64_t ts3[3] = { 0, 15778800000LL, 31557600000LL };

static sebt_series series_of_three(void)
{
    sebt_series s;
    memset(&s, 0, sizeof s);
    s.n = 3;
    s.ts = (int64_t *)ts3;
    return s;
}

Test(analysis, by_hand)
{
    sebt_trade t[4];
    memset(t, 0, sizeof t);
    const double pnl[] = { 3, -1, 0, -0.5 };
    const sebt_exit_reason why[] = { SEBT_EXIT_TP, SEBT_EXIT_STOP, SEBT_EXIT_TIME, SEBT_EXIT_STOP };
    const int held[] = { 2, 1, 96, 0 };
    for (int i = 0; i < 4; i++) {
        t[i].pnl = pnl[i];
        t[i].reason = why[i];
        t[i].bars_held = held[i];
    }
    sebt_series s = series_of_three();
    sebt_result r;
    memset(&r, 0, sizeof r);
    r.trades = t;
    r.n_trades = 4;
    r.valid_bars = 400;
    r.metrics.n = 4;
    r.metrics.sharpe = 0.5;
    sebt_trade_stats st;
    sebt_trade_stats_of(&s, &r, &st);
    cr_assert_eq(st.exits[SEBT_EXIT_STOP_GAP], 0);
    cr_assert_eq(st.exits[SEBT_EXIT_STOP], 2);
    cr_assert_eq(st.exits[SEBT_EXIT_TP], 1);
    cr_assert_eq(st.exits[SEBT_EXIT_TIME], 1);
    cr_assert_eq(st.gross_profit, 3.0);
    cr_assert_eq(st.gross_loss, -1.5);      /* the 0 pnl is neither */
    cr_assert_eq(st.profit_factor, 2.0);
    cr_assert_eq(st.bars_in_market, 3 + 2 + 97 + 1);   /* entry bar to exit bar */
    cr_assert_eq(st.exposure, 103.0 / 400.0);
    cr_assert_eq(st.years, 1.0);
    cr_assert_eq(st.sharpe_annual, 0.5 * 2.0);   /* 4 trades in one year */

    /* Still in the market at the end: 5 bars from the entry bar. */
    r.open_at_end.open = true;
    r.open_at_end.bars_held = 4;
    sebt_trade_stats_of(&s, &r, &st);
    cr_assert_eq(st.bars_in_market, 103 + 5);

    /* Only winners and flat trades: no loss to divide by. */
    t[1].pnl = 1;
    t[3].pnl = 0;
    sebt_trade_stats_of(&s, &r, &st);
    cr_assert(isnan(st.profit_factor));
    cr_assert_eq(st.gross_loss, 0.0);
}

Test(analysis, nothing_to_count)
{
    sebt_series s = series_of_three();
    s.n = 1;   /* one bar spans no time */
    sebt_result r;
    memset(&r, 0, sizeof r);
    r.metrics.sharpe = 1.0;
    sebt_trade_stats st;
    sebt_trade_stats_of(&s, &r, &st);
    cr_assert(st.years == 0.0 && st.sharpe_annual == 0.0 && st.exposure == 0.0 && st.bars_in_market == 0);
    cr_assert(isnan(st.profit_factor));
}
