/* On a device: cuda against fast_cpu, bit for bit, for a sweep (metrics and
 * trades) and for one combo's feature columns. Skips without a device.
 * (cuda against the reference under its contract is the oracle's job:
 * `sebt parity --backend cuda`, `sebt fuzz --backend cuda`.) */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/gpu.h"
#include "sweep_fixture.h"

static const sebt_backend *open_cuda_or_skip(void)
{
    const sebt_backend *b = NULL;
    sebt_error err = { 0 };
    if (sebt_backend_get("cuda", &b, &err) != SEBT_OK)
        cr_skip_test("no CUDA device: %s", err.msg);
    return b;
}

/* Equal bits, or NaN on both sides (a device's NaN may carry another payload). */
static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

Test(device_parity, sweep_same_bits_as_fast_cpu)
{
    const sebt_backend *cuda = open_cuda_or_skip();
    const sebt_backend *fast;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK);
    sebt_series s;
    fixture_series(&s);
    sebt_params combos[FIXTURE_COMBOS];
    fixture_combos(combos);
    sebt_result rf[FIXTURE_COMBOS], rc[FIXTURE_COMBOS];
    memset(rf, 0, sizeof rf);
    memset(rc, 0, sizeof rc);
    sebt_batch_opts opts = { .threads = 2, .want_trades = true };
    cr_assert_eq(fast->run_batch(fast, &s, combos, FIXTURE_COMBOS, &opts, rf, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(cuda->run_batch(cuda, &s, combos, FIXTURE_COMBOS, &opts, rc, &err), SEBT_OK, "%s", err.msg);
    size_t trades = 0;
    for (size_t i = 0; i < FIXTURE_COMBOS; i++) {
        cr_assert_eq(memcmp(&rf[i].metrics, &rc[i].metrics, sizeof rf[i].metrics), 0, "combo %zu metrics", i);
        cr_assert_eq(rf[i].n_trades, rc[i].n_trades, "combo %zu", i);
        cr_assert_eq(rf[i].valid_bars, rc[i].valid_bars, "combo %zu", i);
        cr_assert_eq(rf[i].open_at_end.open, rc[i].open_at_end.open, "combo %zu", i);
        for (size_t k = 0; k < rf[i].n_trades; k++) {
            const sebt_trade *a = &rf[i].trades[k], *b = &rc[i].trades[k];
            cr_assert_eq(a->exit_index, b->exit_index, "combo %zu trade %zu", i, k);
            cr_assert_eq(a->reason, b->reason, "combo %zu trade %zu", i, k);
            cr_assert_eq(memcmp(&a->entry_price, &b->entry_price, 7 * sizeof(double)), 0, "combo %zu trade %zu", i, k);
        }
        trades += rf[i].n_trades;
    }
    cr_assert_gt(trades, 100);
    sebt_results_free(rf, FIXTURE_COMBOS);
    sebt_results_free(rc, FIXTURE_COMBOS);
    sebt_series_free(&s);
}

Test(device_parity, features_same_bits_as_fast_cpu)
{
    const sebt_backend *cuda = open_cuda_or_skip();
    const sebt_backend *fast;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK);
    sebt_series s;
    fixture_series(&s);
    sebt_params combos[FIXTURE_COMBOS];
    fixture_combos(combos);
    for (size_t i = 0; i < FIXTURE_COMBOS; i += 7) {
        sebt_features ff, fc;
        cr_assert_eq(sebt_features_alloc(&ff, s.n, &err), SEBT_OK);
        cr_assert_eq(sebt_features_alloc(&fc, s.n, &err), SEBT_OK);
        cr_assert_eq(fast->features(fast, &s, &combos[i], &ff, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(cuda->features(cuda, &s, &combos[i], &fc, &err), SEBT_OK, "%s", err.msg);
        const double *a[7] = { ff.ema_f, ff.ema_s, ff.tr, ff.atr, ff.vol_z, ff.tr_z, ff.cloc };
        const double *b[7] = { fc.ema_f, fc.ema_s, fc.tr, fc.atr, fc.vol_z, fc.tr_z, fc.cloc };
        size_t signals = 0;
        for (size_t t = 0; t < s.n; t++) {
            for (int c = 0; c < 7; c++)
                cr_assert(same_double(a[c][t], b[c][t]), "combo %zu column %d bar %zu: %.17g vs %.17g", i, c, t,
                          a[c][t], b[c][t]);
            cr_assert_eq(ff.signal[t], fc.signal[t], "combo %zu bar %zu", i, t);
            cr_assert_eq(ff.valid[t], fc.valid[t], "combo %zu bar %zu", i, t);
            signals += ff.signal[t];
        }
        cr_assert_gt(signals, 0, "combo %zu never signals", i);
        sebt_features_free(&ff);
        sebt_features_free(&fc);
    }
    sebt_series_free(&s);
}

Test(device_parity, bad_combo_is_named)
{
    const sebt_backend *cuda = open_cuda_or_skip();
    sebt_series s;
    fixture_series(&s);
    sebt_params combos[3] = { sebt_params_default(), sebt_params_default(), sebt_params_default() };
    combos[2].ema_fast = 0;
    sebt_result r[3];
    memset(r, 0, sizeof r);
    sebt_error err = { 0 };
    sebt_batch_opts opts = { 0 };
    cr_assert_eq(cuda->run_batch(cuda, &s, combos, 3, &opts, r, &err), SEBT_ERR_PARAM);
    cr_assert_not_null(strstr(err.msg, "combo 2"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "ema_fast"), "%s", err.msg);
    sebt_series_free(&s);
}
