/* The reference's literal analysis figures (analysis.c) equal the
 * library's one-pass sebt_trade_stats_of bit for bit: on the trades of
 * hundreds of combos of a real series, on trades drawn at random, and on
 * the edge cases worked by hand (no trade, no losing trade, one trade, a
 * position open at the end, a series that spans no time). The sweep's
 * proof judges the library's columns by the literal form, so the two must
 * agree wherever the library is right. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../ref.h"
#include "sebt/analysis.h"
#include "sebt/sebt.h"

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every figure of the two, bit for bit; what differs into the failure. */
static void assert_same(const sebt_series *s, const sebt_result *r, const char *what)
{
    sebt_trade_stats lib, lit;
    sebt_trade_stats_of(s, r, &lib);
    sebt_ref_trade_stats(s, r, &lit);
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        cr_assert_eq(lib.exits[k], lit.exits[k], "%s: exits[%d] %" PRId64 " vs %" PRId64, what, k, lib.exits[k],
                     lit.exits[k]);
    cr_assert_eq(lib.bars_in_market, lit.bars_in_market, "%s: bars_in_market %" PRId64 " vs %" PRId64, what,
                 lib.bars_in_market, lit.bars_in_market);
    const double a[] = { lib.gross_profit, lib.gross_loss, lib.profit_factor, lib.exposure, lib.years, lib.sharpe_annual };
    const double b[] = { lit.gross_profit, lit.gross_loss, lit.profit_factor, lit.exposure, lit.years, lit.sharpe_annual };
    static const char *const names[] = { "gross_profit", "gross_loss", "profit_factor", "exposure", "years",
                                         "sharpe_annual" };
    for (int i = 0; i < 6; i++)
        cr_assert(same_bits(a[i], b[i]), "%s: %s %.17g vs %.17g", what, names[i], a[i], b[i]);
}

/* ---- a real series ----------------------------------------------------------- */

#define N_REAL 240

Test(analysis_literal, real_series_combos)
{
    sebt_series s;
    sebt_error err = { 0 };
    sebt_load_opts o = { .fill_gaps = true };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz", &o, &s, &err), SEBT_OK, "%s",
                 err.msg);
    static sebt_params c[N_REAL];
    static sebt_result r[N_REAL];
    for (int i = 0; i < N_REAL; i++) {
        c[i] = sebt_params_default();
        c[i].z_window = 48;
        c[i].ema_fast = 6 + 3 * (i % 10);
        c[i].vol_z = 1.0 + 0.5 * ((i / 10) % 4);
        if ((i / 10) % 4 == 3)   /* few trades, or none: z over 48 bars never reaches 100 */
            c[i].vol_z = i % 4 == 3 ? 100.0 : 5.5 + 0.5 * (i % 4);
        c[i].reward_r = 1.0 + 0.5 * ((i / 40) % 3);
        c[i].use_tp = (i / 120) % 2 == 0;
        c[i].max_hold = (i / 40) % 2 ? 20000 : 48;   /* a long hold: likely open at the end */
        c[i].fee_bp = (i % 3) * 2.5;
        c[i].slippage_bp = (i % 2) * 2.0;
    }
    const sebt_backend *fast;
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK, "%s", err.msg);
    sebt_batch_opts bo = { .threads = 2, .want_trades = true };
    memset(r, 0, sizeof r);
    cr_assert_eq(fast->run_batch(fast, &s, c, N_REAL, &bo, r, &err), SEBT_OK, "%s", err.msg);
    size_t none = 0, open = 0, lossless = 0, traded = 0;
    for (int i = 0; i < N_REAL; i++) {
        char what[40];
        snprintf(what, sizeof what, "combo %d", i);
        assert_same(&s, &r[i], what);
        sebt_trade_stats st;
        sebt_ref_trade_stats(&s, &r[i], &st);
        none += r[i].n_trades == 0;
        open += r[i].open_at_end.open;
        lossless += r[i].n_trades > 0 && isnan(st.profit_factor);
        traded += r[i].n_trades >= 10;
    }
    /* The cases the grid is there to reach were reached. */
    cr_assert(traded > N_REAL / 2, "%zu combos with 10 trades or more", traded);
    cr_assert(open > 0, "no combo open at the end");
    cr_assert(none > 0 && lossless > 0, "%zu combos without a trade, %zu without a losing trade", none, lossless);
    sebt_results_free(r, N_REAL);
    sebt_series_free(&s);
}

/* ---- trades drawn at random ----------------------------------------------------- */

static uint64_t next_u64(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* In [-1, 1), with a few exact zeros and negative zeros among them. */
static double draw_pnl(uint64_t *x)
{
    uint64_t u = next_u64(x);
    if (u % 17 == 0)
        return u % 2 ? 0.0 : -0.0;
    return (double)(int64_t)(u >> 11) / (double)(INT64_C(1) << 52) - 1.0;
}

Test(analysis_literal, random_trades)
{
    enum { CASES = 3000, MAX_TRADES = 40 };
    static sebt_trade t[MAX_TRADES];
    int64_t ts[2];
    sebt_series s;
    memset(&s, 0, sizeof s);
    s.ts = ts;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int c = 0; c < CASES; c++) {
        size_t n = next_u64(&x) % (MAX_TRADES + 1);
        memset(t, 0, sizeof t);
        for (size_t i = 0; i < n; i++) {
            t[i].pnl = draw_pnl(&x) * (double)(1 + next_u64(&x) % 1000);
            t[i].reason = (sebt_exit_reason)(next_u64(&x) % SEBT_EXIT_KINDS);
            t[i].bars_held = (int32_t)(next_u64(&x) % 500);
        }
        sebt_result r;
        memset(&r, 0, sizeof r);
        r.trades = t;
        r.n_trades = n;
        r.valid_bars = (size_t)(next_u64(&x) % 100000);
        r.open_at_end.open = next_u64(&x) % 4 == 0;
        r.open_at_end.bars_held = (int32_t)(next_u64(&x) % 300);
        r.metrics.n = (int64_t)n;
        r.metrics.sharpe = n >= 2 ? draw_pnl(&x) : 0.0;
        ts[0] = 1500000000000 + (int64_t)(next_u64(&x) % 100000000);
        ts[1] = ts[0] + (int64_t)(next_u64(&x) % (INT64_C(10) * 31557600000));
        s.n = next_u64(&x) % 5 == 0 ? 1 : 2;   /* one bar: no span */
        char what[40];
        snprintf(what, sizeof what, "random case %d", c);
        assert_same(&s, &r, what);
    }
}

/* ---- by hand ---------------------------------------------------------------------- */

/* Two bars a 365.25-day year apart. */
static const int64_t a_year[2] = { 1546300800000, 1546300800000 + 31557600000 };

static sebt_series year_series(void)
{
    sebt_series s;
    memset(&s, 0, sizeof s);
    s.n = 2;
    s.ts = (int64_t *)a_year;
    return s;
}

Test(analysis_literal, no_trades)
{
    sebt_series s = year_series();
    sebt_result r;
    memset(&r, 0, sizeof r);
    r.valid_bars = 10;
    assert_same(&s, &r, "no trades");
    sebt_trade_stats st;
    sebt_ref_trade_stats(&s, &r, &st);
    cr_assert(isnan(st.profit_factor) && st.gross_profit == 0 && st.gross_loss == 0);
    cr_assert(st.bars_in_market == 0 && st.exposure == 0 && st.years == 1 && st.sharpe_annual == 0);
}

Test(analysis_literal, one_trade_and_no_losing_trade)
{
    sebt_series s = year_series();
    sebt_trade t[3];
    memset(t, 0, sizeof t);
    t[0] = (sebt_trade){ .pnl = 2.5, .reason = SEBT_EXIT_TP, .bars_held = 3 };
    sebt_result r;
    memset(&r, 0, sizeof r);
    r.trades = t;
    r.n_trades = 1;
    r.valid_bars = 8;
    r.metrics.n = 1;
    assert_same(&s, &r, "one trade");
    sebt_trade_stats st;
    sebt_ref_trade_stats(&s, &r, &st);
    cr_assert(st.exits[SEBT_EXIT_TP] == 1 && st.gross_profit == 2.5 && isnan(st.profit_factor));
    cr_assert(st.bars_in_market == 4 && st.exposure == 0.5);

    /* A flat trade and a win: still nothing lost. */
    t[1] = (sebt_trade){ .pnl = 0.0, .reason = SEBT_EXIT_TIME, .bars_held = 0 };
    t[2] = (sebt_trade){ .pnl = 1.0, .reason = SEBT_EXIT_STOP_GAP, .bars_held = 1 };
    r.n_trades = 3;
    r.metrics.n = 3;
    r.metrics.sharpe = 0.25;
    assert_same(&s, &r, "no losing trade");
    sebt_ref_trade_stats(&s, &r, &st);
    cr_assert(isnan(st.profit_factor) && st.gross_loss == 0 && st.gross_profit == 3.5);
    cr_assert_eq(st.sharpe_annual, 0.25 * sqrt(3.0));

    /* Then one loss: 3.5 / 0.5. */
    t[1].pnl = -0.5;
    assert_same(&s, &r, "one loss");
    sebt_ref_trade_stats(&s, &r, &st);
    cr_assert_eq(st.profit_factor, 7.0);
}

Test(analysis_literal, open_at_the_end)
{
    sebt_series s = year_series();
    sebt_trade t = { .pnl = -1.0, .reason = SEBT_EXIT_STOP, .bars_held = 5 };
    sebt_result r;
    memset(&r, 0, sizeof r);
    r.trades = &t;
    r.n_trades = 1;
    r.valid_bars = 20;
    r.open_at_end.open = true;
    r.open_at_end.bars_held = 3;
    assert_same(&s, &r, "open at the end");
    sebt_trade_stats st;
    sebt_ref_trade_stats(&s, &r, &st);
    cr_assert_eq(st.bars_in_market, 6 + 4);   /* each from its entry bar */
    cr_assert_eq(st.exposure, 0.5);
    cr_assert_eq(st.profit_factor, 0.0);
}

Test(analysis_literal, no_span)
{
    sebt_trade t[2] = { { .pnl = 1.0, .reason = SEBT_EXIT_TP }, { .pnl = -2.0, .reason = SEBT_EXIT_STOP } };
    sebt_result r;
    memset(&r, 0, sizeof r);
    r.trades = t;
    r.n_trades = 2;
    r.valid_bars = 4;
    r.metrics.n = 2;
    r.metrics.sharpe = 0.3;
    const int64_t one[1] = { 1546300800000 };
    sebt_series s;
    memset(&s, 0, sizeof s);
    s.ts = (int64_t *)one;
    for (size_t n = 0; n < 2; n++) {   /* no bar, one bar: no time spanned */
        s.n = n;
        assert_same(&s, &r, "no span");
        sebt_trade_stats st;
        sebt_ref_trade_stats(&s, &r, &st);
        cr_assert(st.years == 0 && st.sharpe_annual == 0);
    }
}
