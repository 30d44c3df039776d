/* The cuda backend is exact (SPEC §8): its real sources, run by host
 * execution (libsebt_cuda_host.so, gpu/host), give the reference's bits on
 * every trade, metric and feature column. The reference shares no code with
 * it. Skipped (ctest says so) when the host-execution module is not built. */
#include <criterion/criterion.h>
#include <dlfcn.h>

#include "../../fast_cpu/tests/parity_util.h"
#include "sebt/analysis.h"
#include "sebt/backends.h"
#include "sweep_fixture.h"

static const sebt_backend *open_host_cuda(void)
{
#ifndef SEBT_CUDA_HOST_MODULE
    cr_skip_test("libsebt_cuda_host.so is not built here (no C++ compiler)");
    return NULL;
#else
    void *h = dlopen(SEBT_CUDA_HOST_MODULE, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h, "dlopen %s: %s", SEBT_CUDA_HOST_MODULE, dlerror());
    sebt_cuda_open_fn open = (sebt_cuda_open_fn)(uintptr_t)dlsym(h, SEBT_CUDA_OPEN_SYMBOL);
    cr_assert_not_null(open);
    sebt_error err = { 0 };
    const sebt_backend *b = open(&err);
    cr_assert_not_null(b, "%s", err.msg);
    return b;
#endif
}

Test(host_exact, sweep_and_features_are_the_references_bits, .timeout = 240)
{
    const sebt_backend *cuda = open_host_cuda();
    cr_assert_eq(cuda->contract.kind, SEBT_CONTRACT_EXACT, "cuda declares itself exact");
    sebt_series s;
    fixture_series(&s);
    sebt_params c[FIXTURE_COMBOS];
    fixture_combos(c);
    /* Thresholds that real prices hit exactly (cloc 1/2) and EMAs equal
     * (span 1 on both sides) for some combos: the planted single-line
     * bugs (bench/plant_bugs.sh) show there. */
    c[0].ema_fast = c[0].ema_slow = 1;
    c[1].cloc_min = 0.0;
    c[2].vol_z = -1.0;
    c[2].tr_z = -1.0;
    size_t n = FIXTURE_COMBOS;
    sebt_result *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    sebt_batch_opts opts = { .threads = 2, .want_trades = true };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, &s, c, n, &opts, want, &err), SEBT_OK,
                 "%s", err.msg);
    cr_assert_eq(cuda->run_batch(cuda, &s, c, n, &opts, got, &err), SEBT_OK, "%s", err.msg);
    size_t trades = 0;
    for (size_t i = 0; i < n; i++) {
        assert_same_result(&want[i], &got[i], 0.0, i);
        trades += want[i].n_trades;
    }
    cr_assert_gt(trades, 500, "only %zu trades", trades);
    for (size_t i = 0; i < 4; i++) {
        sebt_features a, b;
        cr_assert_eq(sebt_features_alloc(&a, s.n, &err), SEBT_OK);
        cr_assert_eq(sebt_features_alloc(&b, s.n, &err), SEBT_OK);
        cr_assert_eq(sebt_reference_backend.features(&sebt_reference_backend, &s, &c[i * 9], &a, &err), SEBT_OK);
        cr_assert_eq(cuda->features(cuda, &s, &c[i * 9], &b, &err), SEBT_OK, "%s", err.msg);
        double *ca[] = { a.ema_f, a.ema_s, a.tr, a.atr, a.vol_z, a.tr_z, a.cloc };
        double *cb[] = { b.ema_f, b.ema_s, b.tr, b.atr, b.vol_z, b.tr_z, b.cloc };
        for (int k = 0; k < 7; k++)
            cr_assert_eq(memcmp(ca[k], cb[k], s.n * sizeof(double)), 0, "combo %zu column %d", i * 9, k);
        cr_assert_eq(memcmp(a.signal, b.signal, s.n), 0);
        cr_assert_eq(memcmp(a.valid, b.valid, s.n), 0);
        sebt_features_free(&a);
        sebt_features_free(&b);
    }
    sebt_results_free(want, n);
    sebt_results_free(got, n);
    free(want);
    free(got);
    sebt_series_free(&s);
}

/* The analysis tally the cuda hops keep (sebt_cuda_run_tallied, which the
 * registry finds beside sebt_cuda_open): each combo's figures from it are
 * those sebt_trade_stats_of gives from the reference's trades, bit for
 * bit, cost twins, strict combos without a trade or with one among them. */
Test(host_exact, tallied_analysis_is_the_trade_paths, .timeout = 240)
{
    const sebt_backend *cuda = open_host_cuda();
#ifdef SEBT_CUDA_HOST_MODULE
    void *h = dlopen(SEBT_CUDA_HOST_MODULE, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    cr_assert_not_null(h);
    sebt_tally_batch_fn tallied = (sebt_tally_batch_fn)(uintptr_t)dlsym(h, SEBT_CUDA_TALLIED_SYMBOL);
    cr_assert_not_null(tallied, "the module has no %s", SEBT_CUDA_TALLIED_SYMBOL);
    sebt_series s;
    fixture_series(&s);
    enum { N = 2 * FIXTURE_COMBOS };
    sebt_params c[N];
    fixture_combos(c);
    for (size_t i = 0; i < FIXTURE_COMBOS; i++) {   /* cost twins of the first half */
        c[FIXTURE_COMBOS + i] = c[i];
        c[FIXTURE_COMBOS + i].fee_bp = c[i].fee_bp + 7.5;
    }
    for (size_t i = 0; i < N; i += 5) {   /* strict: few trades or none */
        double k = (double)((i / 5) % 4);
        c[i].vol_z = 1.5 + 1.5 * k;
        c[i].tr_z = 1.0 + 0.7 * k;
        c[i].cloc_min = 0.6 + 0.1 * k;
    }
    sebt_result *want = calloc(N, sizeof *want), *got = calloc(N, sizeof *got);
    sebt_trade_tally *t = calloc(N, sizeof *t);
    sebt_batch_opts ro = { .threads = 2, .want_trades = true }, co = { .threads = 2 };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, &s, c, N, &ro, want, &err), SEBT_OK,
                 "%s", err.msg);
    cr_assert_eq(tallied(cuda, &s, c, N, &co, got, t, &err), SEBT_OK, "%s", err.msg);
    size_t none = 0, one = 0, trades = 0;
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(memcmp(&want[i].metrics, &got[i].metrics, sizeof want[i].metrics), 0, "combo %zu", i);
        sebt_trade_stats a, b;
        sebt_trade_stats_of(&s, &want[i], &a);
        sebt_trade_stats_of_tally(&s, &got[i], &t[i], &b);
        cr_assert_eq(memcmp(&a, &b, sizeof a), 0,
                     "combo %zu (%zu trades): bars %lld, gross %.17g %.17g; the reference's bars %lld, gross "
                     "%.17g %.17g", i, want[i].n_trades, (long long)b.bars_in_market, b.gross_profit,
                     b.gross_loss, (long long)a.bars_in_market, a.gross_profit, a.gross_loss);
        none += want[i].n_trades == 0;
        one += want[i].n_trades == 1;
        trades += want[i].n_trades;
    }
    cr_assert_gt(none, 0, "no combo without a trade");
    cr_assert_gt(one, 0, "no combo with one trade");
    cr_assert_gt(trades, 500, "only %zu trades", trades);
    sebt_results_free(want, N);
    free(want);
    free(got);
    free(t);
    sebt_series_free(&s);
#else
    (void)cuda;
#endif
}
