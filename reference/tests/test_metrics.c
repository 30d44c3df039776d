/* SPEC §7 worked by hand on lists of trades. */
#include "../ref.h"
#include "ref_fixture.h"

static sebt_metrics metrics_of(const double *pnl, const double *r, size_t n)
{
    sebt_trade t[8];
    memset(t, 0, sizeof t);
    cr_assert(n <= 8);
    for (size_t i = 0; i < n; i++) {
        t[i].pnl = pnl[i];
        t[i].r = r[i];
    }
    sebt_metrics m;
    sebt_ref_metrics(t, n, &m);
    return m;
}

Test(metrics, four_trades)
{
    /* pnl 2, -3, 4, -1; R 1, -1.5, 2, -0.5.
     * win_rate = 2/4 = 0.5; avg_R = (1 - 1.5 + 2 - 0.5)/4 = 1/4 = 0.25;
     * total = 2; cum 2, -1, 3, 2; running max 2, 2, 3, 3; dd 0, -3, 0, -1
     * -> max_dd = -3. sharpe: deviations .75, -1.75, 1.75, -.75; squares
     * .5625 + 3.0625 + 3.0625 + .5625 = 7.25; sd = sqrt(7.25/3);
     * sharpe = 0.25 / sqrt(7.25/3). */
    double pnl[] = { 2, -3, 4, -1 }, r[] = { 1, -1.5, 2, -0.5 };
    sebt_metrics m = metrics_of(pnl, r, 4);
    cr_assert_eq(m.n, 4);
    cr_assert_eq(m.win_rate, 0.5);
    cr_assert_eq(m.avg_r, 0.25);
    cr_assert_eq(m.total_pnl, 2);
    cr_assert_eq(m.max_dd, -3);
    cr_assert_eq(m.sharpe, 0.25 / sqrt(7.25 / 3.0));
}

Test(metrics, two_trades_sharpe)
{
    /* R 1, 3: mean 2, deviations -1, 1, sd = sqrt(2/1); sharpe = 2/sqrt(2).
     * pnl 0 is not a win: win_rate 1/2. cum 0, 6 -> no drawdown. */
    double pnl[] = { 0, 6 }, r[] = { 1, 3 };
    sebt_metrics m = metrics_of(pnl, r, 2);
    cr_assert_eq(m.win_rate, 0.5);
    cr_assert_eq(m.avg_r, 2);
    cr_assert_eq(m.total_pnl, 6);
    cr_assert_eq(m.max_dd, 0);
    cr_assert_eq(m.sharpe, 2 / sqrt(2.0));
}

Test(metrics, one_trade_has_zero_sharpe)
{
    /* n < 2: sharpe 0. A single losing trade: cum -2, running max of the
     * cumulative pnl -2, drawdown 0 (decision: the curve starts at the
     * first trade, as pandas' cummax does; the 0 before it is no peak). */
    double pnl[] = { -2 }, r[] = { -1 };
    sebt_metrics m = metrics_of(pnl, r, 1);
    cr_assert_eq(m.n, 1);
    cr_assert_eq(m.win_rate, 0);
    cr_assert_eq(m.avg_r, -1);
    cr_assert_eq(m.total_pnl, -2);
    cr_assert_eq(m.max_dd, 0);
    cr_assert_eq(m.sharpe, 0);
}

Test(metrics, drawdown_after_a_first_loss_counts_from_the_first_trade)
{
    /* cum -2, -5, -4: running max -2, -2, -2; dd 0, -3, -2 -> -3. */
    double pnl[] = { -2, -3, 1 }, r[] = { -1, -1.5, 0.5 };
    sebt_metrics m = metrics_of(pnl, r, 3);
    cr_assert_eq(m.max_dd, -3);
    cr_assert_eq(m.total_pnl, -4);
}

Test(metrics, zero_deviation_has_zero_sharpe)
{
    double pnl[] = { 2, 2, 2 }, r[] = { 1, 1, 1 };
    sebt_metrics m = metrics_of(pnl, r, 3);
    cr_assert_eq(m.win_rate, 1);
    cr_assert_eq(m.avg_r, 1);
    cr_assert_eq(m.sharpe, 0);
    cr_assert_eq(m.max_dd, 0);
}

Test(metrics, no_trades_all_zero)
{
    sebt_metrics m = metrics_of(NULL, NULL, 0);
    cr_assert_eq(m.n, 0);
    cr_assert_eq(m.win_rate, 0);
    cr_assert_eq(m.avg_r, 0);
    cr_assert_eq(m.total_pnl, 0);
    cr_assert_eq(m.max_dd, 0);
    cr_assert_eq(m.sharpe, 0);
}
