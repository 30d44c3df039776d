/* cuda against fast_cpu, bit for bit: sweeps (metrics only and with trades,
 * in one chunk and in many) and one combo's feature columns. Run twice by
 * ctest (device_main.h): under host execution (gpu_test_device_parity_host,
 * always) and on a real device (gpu_test_device_parity, skipped without
 * one). cuda against the reference is the oracle's job (`sebt parity
 * --backend cuda`, `sebt fuzz --backend cuda`; ctest gpu_host_cli_*). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "device_main.h"
#include "sweep_fixture.h"

static const sebt_backend *open_cuda(void)
{
    const sebt_backend *b = NULL;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("cuda", &b, &err), SEBT_OK, "the gate opened cuda, now: %s", err.msg);
    return b;
}

/* Equal bits, or NaN on both sides (a device's NaN may carry another payload). */
static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void expect_same_results(const sebt_result *rf, const sebt_result *rc, size_t n, bool trades)
{
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(memcmp(&rf[i].metrics, &rc[i].metrics, sizeof rf[i].metrics), 0, "combo %zu metrics", i);
        cr_assert_eq(rf[i].n_trades, rc[i].n_trades, "combo %zu", i);
        cr_assert_eq(rf[i].valid_bars, rc[i].valid_bars, "combo %zu", i);
        cr_assert_eq(rf[i].open_at_end.open, rc[i].open_at_end.open, "combo %zu", i);
        cr_assert_eq(rf[i].open_at_end.entry_index, rc[i].open_at_end.entry_index, "combo %zu", i);
        if (!trades) {
            cr_assert_null(rc[i].trades, "combo %zu: trades not asked for", i);
            continue;
        }
        cr_assert(rc[i].n_trades == 0 || rc[i].trades, "combo %zu: trades asked for", i);
        for (size_t k = 0; k < rf[i].n_trades; k++) {
            const sebt_trade *a = &rf[i].trades[k], *b = &rc[i].trades[k];
            cr_assert_eq(a->signal_index, b->signal_index, "combo %zu trade %zu", i, k);
            cr_assert_eq(a->entry_index, b->entry_index, "combo %zu trade %zu", i, k);
            cr_assert_eq(a->exit_index, b->exit_index, "combo %zu trade %zu", i, k);
            cr_assert_eq(a->reason, b->reason, "combo %zu trade %zu", i, k);
            cr_assert_eq(a->bars_held, b->bars_held, "combo %zu trade %zu", i, k);
            cr_assert_eq(memcmp(&a->entry_price, &b->entry_price, 7 * sizeof(double)), 0, "combo %zu trade %zu", i, k);
        }
    }
}

/* fast_cpu then cuda over the fixture; budget 0 is the default memory. */
static void sweep_both(bool trades, size_t budget, sebt_batch_stats *stats)
{
    const sebt_backend *cuda = open_cuda();
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
    sebt_batch_opts fo = { .threads = 2, .want_trades = trades };
    sebt_batch_opts co = { .threads = 2, .want_trades = trades, .memory_budget = budget, .stats = stats };
    cr_assert_eq(fast->run_batch(fast, &s, combos, FIXTURE_COMBOS, &fo, rf, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(cuda->run_batch(cuda, &s, combos, FIXTURE_COMBOS, &co, rc, &err), SEBT_OK, "%s", err.msg);
    expect_same_results(rf, rc, FIXTURE_COMBOS, trades);
    size_t n_trades = 0;
    for (size_t i = 0; i < FIXTURE_COMBOS; i++)
        n_trades += rf[i].n_trades;
    cr_assert_gt(n_trades, 100, "the fixture should trade");
    sebt_results_free(rf, FIXTURE_COMBOS);
    sebt_results_free(rc, FIXTURE_COMBOS);
    sebt_series_free(&s);
}

Test(device_parity, sweep_with_trades)
{
    sebt_batch_stats st = { 0 };
    sweep_both(true, 0, &st);
    cr_assert_geq(st.chunks, 1, "chunks %zu", st.chunks);
    cr_assert_eq(st.batches, 1, "the whole fixture fits one batch (%zu)", st.batches);
}

Test(device_parity, sweep_metrics_only)
{
    sweep_both(false, 0, NULL);
}

/* A budget of 48 kB: keys in several batches, combos in several chunks,
 * the trades pass in pieces; the bits must not move. */
Test(device_parity, sweep_in_many_chunks)
{
    sebt_batch_stats one = { 0 }, st = { 0 };
    sweep_both(false, 0, &one);
    sweep_both(true, 48 << 10, &st);
    cr_assert_gt(st.chunks, one.chunks, "chunks %zu, %zu with the default budget", st.chunks, one.chunks);
    cr_assert_gt(st.batches, 1, "batches %zu", st.batches);
}

Test(device_parity, features_same_bits_as_fast_cpu)
{
    const sebt_backend *cuda = open_cuda();
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
    const sebt_backend *cuda = open_cuda();
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
