/* The reference backend through its public table: run_batch end to end,
 * SPEC §2 parameter errors, SPEC §1 series errors, series of 0/1/2 bars. */
#include "ref_fixture.h"

static const sebt_backend *ref = &sebt_reference_backend;

/* The signal series of test_indicators.c (signal at t2 only):
 * stop = low[2] - 0.5*ATR[2] = 2 - 0.5*6 = -1; entry = open[3] = 7;
 * risk = 7 - (-1) = 8; tp = 7 + 2*8 = 23. No later bar reaches -1 or 23:
 * t4 (6,7,5,6.5) is bar 1 held, t5 (6.5,12,6,11) bar 2. */
static bar5 sig_bars[] = {
    { 10, 11, 9, 10, 1 }, { 10, 10, 6, 7, 2 }, { 7, 8, 2, 7, 3 },
    { 7, 9, 1, 6, 2 },    { 6, 7, 5, 6.5, 4 }, { 6.5, 12, 6, 11, 5 },
};

typedef struct {
    size_t calls, last_done, last_total;
} progress_log;

static void on_progress(void *user, size_t done, size_t total)
{
    progress_log *log = user;
    log->calls++;
    log->last_done = done;
    log->last_total = total;
}

Test(run_batch, three_combos_in_input_order)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params c[3] = { small_params(), small_params(), small_params() };
    c[0].max_hold = 2;      /* TIME at t5 close 11: pnl 4, R 4/8 = 0.5 */
    c[1].max_hold = 1;      /* TIME at t4 close 6.5: pnl -0.5, R -0.0625 */
    c[2].max_hold = 1000;   /* still open at the end, 2 bars held */
    sebt_result r[3];
    memset(r, 0, sizeof r);
    progress_log log = { 0 };
    sebt_batch_opts opts = { .want_trades = true, .progress = on_progress, .progress_user = &log };
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, &s, c, 3, &opts, r, &err), SEBT_OK, "%s", err.msg);

    cr_assert_eq(r[0].n_trades, 1);
    const sebt_trade *t = &r[0].trades[0];
    cr_assert_eq(t->signal_index, 2);
    cr_assert_eq(t->entry_index, 3);
    cr_assert_eq(t->exit_index, 5);
    cr_assert_eq(t->entry_price, 7);
    cr_assert_eq(t->stop, -1);
    cr_assert_eq(t->tp, 23);
    cr_assert_eq(t->risk, 8);
    cr_assert_eq(t->exit_price, 11);
    cr_assert_eq(t->pnl, 4);
    cr_assert_eq(t->r, 0.5);
    cr_assert_eq(t->reason, SEBT_EXIT_TIME);
    cr_assert_eq(t->bars_held, 2);
    cr_assert_eq(r[0].metrics.n, 1);
    cr_assert_eq(r[0].metrics.win_rate, 1);
    cr_assert_eq(r[0].metrics.avg_r, 0.5);
    cr_assert_eq(r[0].metrics.total_pnl, 4);
    cr_assert_eq(r[0].metrics.sharpe, 0);
    cr_assert_eq(r[0].valid_bars, 6);

    cr_assert_eq(r[1].n_trades, 1);
    cr_assert_eq(r[1].trades[0].exit_index, 4);
    cr_assert_eq(r[1].trades[0].pnl, -0.5);
    cr_assert_eq(r[1].trades[0].r, -0.0625);
    cr_assert_eq(r[1].metrics.win_rate, 0);

    cr_assert_eq(r[2].n_trades, 0);
    cr_assert_null(r[2].trades);
    cr_assert(r[2].open_at_end.open);
    cr_assert_eq(r[2].open_at_end.signal_index, 2);
    cr_assert_eq(r[2].open_at_end.entry_index, 3);
    cr_assert_eq(r[2].open_at_end.bars_held, 2);

    cr_assert_geq(log.calls, 1);
    cr_assert_eq(log.last_done, 3);
    cr_assert_eq(log.last_total, 3);
    sebt_results_free(r, 3);
    sebt_series_free(&s);
}

Test(run_batch, trades_not_wanted_still_counted)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params p = small_params();
    p.max_hold = 2;
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_batch_opts opts = { .want_trades = false };
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, &opts, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_null(r.trades);
    cr_assert_eq(r.n_trades, 1);
    cr_assert_eq(r.metrics.total_pnl, 4);
    /* opts may be NULL: no trades, no progress. */
    memset(&r, 0, sizeof r);
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, NULL, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_null(r.trades);
    cr_assert_eq(r.n_trades, 1);
    sebt_series_free(&s);
}

Test(run_batch, zero_combos_is_a_no_op)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, &s, NULL, 0, NULL, NULL, &err), SEBT_OK, "%s", err.msg);
    sebt_series_free(&s);
}

/* ---- SPEC §2: one test per rule, the bad combo second ----------------- */

static void expect_param_error(void (*spoil)(sebt_params *), const char *needle)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params c[2] = { small_params(), small_params() };
    spoil(&c[1]);
    sebt_result r[2];
    memset(r, 0, sizeof r);
    sebt_error err = { 0 };
    sebt_batch_opts opts = { .want_trades = true };
    cr_assert_eq(ref->run_batch(ref, &s, c, 2, &opts, r, &err), SEBT_ERR_PARAM, "%s", err.msg);
    cr_assert_eq(err.code, SEBT_ERR_PARAM);
    cr_assert(strstr(err.msg, "combo 1") != NULL, "message: %s", err.msg);
    cr_assert(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
    /* Nothing was run, not even the good combo 0. */
    cr_assert_eq(r[0].valid_bars, 0);
    cr_assert_null(r[0].trades);

    sebt_features f;
    cr_assert_eq(sebt_features_alloc(&f, s.n, &err), SEBT_OK);
    err.msg[0] = '\0';
    cr_assert_eq(ref->features(ref, &s, &c[1], &f, &err), SEBT_ERR_PARAM);
    cr_assert(strstr(err.msg, needle) != NULL, "features message: %s", err.msg);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

#define PARAM_CASE(tname, stmt, needle)                 \
    static void spoil_##tname(sebt_params *p) { stmt; } \
    Test(params, tname) { expect_param_error(spoil_##tname, needle); }

PARAM_CASE(ema_fast_0, p->ema_fast = 0, "ema_fast = 0")
PARAM_CASE(ema_slow_negative, p->ema_slow = -5, "ema_slow = -5")
PARAM_CASE(z_window_1, p->z_window = 1, "z_window = 1")
PARAM_CASE(atr_window_0, p->atr_window = 0, "atr_window = 0")
PARAM_CASE(vol_z_nan, p->vol_z = NAN, "vol_z = nan")
PARAM_CASE(tr_z_inf, p->tr_z = INFINITY, "tr_z = inf")
PARAM_CASE(cloc_min_neg_inf, p->cloc_min = -INFINITY, "cloc_min = -inf")
PARAM_CASE(atr_stop_mult_negative, p->atr_stop_mult = -0.5, "atr_stop_mult = -0.5")
PARAM_CASE(atr_stop_mult_nan, p->atr_stop_mult = NAN, "atr_stop_mult = nan")
PARAM_CASE(reward_r_0, p->reward_r = 0, "reward_r = 0")
PARAM_CASE(reward_r_inf, p->reward_r = INFINITY, "reward_r = inf")
PARAM_CASE(max_hold_0, p->max_hold = 0, "max_hold = 0")
PARAM_CASE(fee_bp_negative, p->fee_bp = -1, "fee_bp = -1")
PARAM_CASE(slippage_bp_nan, p->slippage_bp = NAN, "slippage_bp = nan")

Test(params, boundary_values_are_accepted)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params p = small_params();
    p.ema_fast = 1;
    p.ema_slow = 1;
    p.z_window = 2;
    p.atr_window = 1;
    p.vol_z = -1e308;
    p.atr_stop_mult = 0;
    p.reward_r = 1e-300;
    p.max_hold = 1;
    p.fee_bp = 0;
    p.slippage_bp = 0;
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, NULL, &r, &err), SEBT_OK, "%s", err.msg);
    sebt_series_free(&s);
}

/* ---- SPEC §1: the reference refuses a series it cannot read ---------- */

Test(series, half_missing_bar_is_refused)
{
    bar5 bars[] = { { 10, 11, 9, 10, 1 }, { 10, 11, 9, NAN, 1 } };
    sebt_series s = make_series(bars, 2);
    sebt_params p = small_params();
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, NULL, &r, &err), SEBT_ERR_INPUT);
    cr_assert(strstr(err.msg, "bar 1") != NULL, "%s", err.msg);
    sebt_series_free(&s);
}

Test(series, high_below_close_is_refused)
{
    bar5 bars[] = { { 10, 11, 9, 10, 1 }, { 10, 11, 9, 12, 1 } };
    sebt_series s = make_series(bars, 2);
    sebt_params p = small_params();
    sebt_features f;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_features_alloc(&f, 2, &err), SEBT_OK);
    cr_assert_eq(ref->features(ref, &s, &p, &f, &err), SEBT_ERR_INPUT);
    cr_assert(strstr(err.msg, "bar 1") != NULL, "%s", err.msg);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(series, repeated_timestamp_is_refused)
{
    bar5 bars[] = { { 10, 11, 9, 10, 1 }, { 10, 11, 9, 10, 1 } };
    sebt_series s = make_series(bars, 2);
    s.ts[1] = s.ts[0];
    sebt_params p = small_params();
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, NULL, &r, &err), SEBT_ERR_INPUT);
    cr_assert(strstr(err.msg, "timestamp") != NULL, "%s", err.msg);
    sebt_series_free(&s);
}

Test(series, features_out_of_the_wrong_size_is_a_usage_error)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params p = small_params();
    sebt_features f;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_features_alloc(&f, 3, &err), SEBT_OK);
    cr_assert_eq(ref->features(ref, &s, &p, &f, &err), SEBT_ERR_USAGE);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

/* ---- tiny series ------------------------------------------------------- */

static void run_tiny(const bar5 *bars, size_t n, const sebt_params *p, size_t valid)
{
    sebt_series s = make_series(bars, n);
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_error err = { 0 };
    sebt_batch_opts opts = { .want_trades = true };
    cr_assert_eq(ref->run_batch(ref, &s, p, 1, &opts, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.valid_bars, valid, "n=%zu: valid_bars %zu", n, r.valid_bars);
    cr_assert_eq(r.n_trades, 0);
    cr_assert_null(r.trades);
    cr_assert(!r.open_at_end.open);
    cr_assert_eq(r.metrics.n, 0);
    cr_assert_eq(r.metrics.sharpe, 0);

    sebt_features f;
    cr_assert_eq(sebt_features_alloc(&f, n, &err), SEBT_OK);
    cr_assert_eq(ref->features(ref, &s, p, &f, &err), SEBT_OK, "%s", err.msg);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(tiny, zero_one_two_bars)
{
    sebt_params p = small_params();
    /* Bar 0 can never signal (z needs 2 bars), so 2 bars give no entry. */
    run_tiny(sig_bars, 0, &p, 0);
    run_tiny(sig_bars, 1, &p, 1);
    run_tiny(sig_bars, 2, &p, 2);
    sebt_params d = sebt_params_default();   /* windows far longer than the series */
    run_tiny(sig_bars, 0, &d, 0);
    run_tiny(sig_bars, 1, &d, 0);
    run_tiny(sig_bars, 2, &d, 0);
    run_tiny(sig_bars, 6, &d, 0);
}

Test(tiny, all_bars_missing)
{
    bar5 bars[] = { MISSING, MISSING, MISSING };
    sebt_params p = small_params();
    run_tiny(bars, 3, &p, 0);
    sebt_series s = make_series(bars, 3);
    sebt_features f;
    compute_features(&s, &p, &f);
    for (size_t t = 0; t < 3; t++) {
        cr_assert(isnan(f.ema_f[t]) && isnan(f.ema_s[t]) && isnan(f.tr[t]) && isnan(f.atr[t]));
        cr_assert(isnan(f.vol_z[t]) && isnan(f.tr_z[t]) && isnan(f.cloc[t]));
        cr_assert_eq(f.signal[t], 0);
        cr_assert_eq(f.valid[t], 0);
    }
    sebt_features_free(&f);
    sebt_series_free(&s);
}
