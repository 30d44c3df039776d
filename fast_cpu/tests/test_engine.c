/* fast_cpu's machinery: the exit-search tree against a plain scan, the
 * rolling z-score against the reference where cancellation would bite, and
 * results that do not depend on thread count or memory budget. */
#include "parity_util.h"

#include "../combo_kernel.h"
#include "../fast_cpu_internal.h"

Test(tree, first_le_matches_a_scan)
{
    uint64_t st = 3;
    for (int round = 0; round < 20; round++) {
        size_t n = 1 + (size_t)(xs_next(&st) % 5000);
        double *x = malloc(n * sizeof *x);
        for (size_t i = 0; i < n; i++)
            x[i] = xs_unit(&st) < 0.02 ? NAN : xs_unit(&st);
        /* Build the tree as fast_market_build does. */
        sebt_k_tree tr = { .nlev = 1, .len = { (int64_t)n }, .lev = { x } };
        double *levels[SEBT_K_MAX_LEVELS] = { 0 };
        while (tr.len[tr.nlev - 1] > 1) {
            int L = tr.nlev;
            tr.len[L] = (tr.len[L - 1] + SEBT_K_FAN - 1) / SEBT_K_FAN;
            levels[L] = malloc((size_t)tr.len[L] * sizeof(double));
            sebt_k_tree_build_level(tr.lev[L - 1], tr.len[L - 1], levels[L], tr.len[L]);
            tr.lev[L] = levels[L];
            tr.nlev++;
        }
        for (int q = 0; q < 300; q++) {
            int64_t a = (int64_t)(xs_next(&st) % n), b = a + (int64_t)(xs_next(&st) % (n - (size_t)a));
            double thr = xs_unit(&st) * xs_unit(&st) * xs_unit(&st);
            int64_t want = -1;
            for (int64_t j = a; j <= b; j++)
                if (x[j] <= thr) {
                    want = j;
                    break;
                }
            int64_t got = sebt_k_first_le(&tr, a, b, thr);
            cr_assert_eq(got, want, "n %zu [%lld, %lld] <= %g: %lld, want %lld", n, (long long)a,
                         (long long)b, thr, (long long)got, (long long)want);
        }
        for (int L = 1; L < tr.nlev; L++)
            free(levels[L]);
        free(x);
    }
}

/* Volumes from 1e3 to 1e12 with spikes entering and leaving the window:
 * where a sum of squares would cancel every digit. */
Test(zscore, stable_across_spikes)
{
    size_t n = 6000;
    sebt_series s = random_series(n, 21, 1e5, 1e3, 0);
    uint64_t st = 8;
    for (size_t t = 0; t < n; t++) {
        if (t % 700 == 350)
            s.volume[t] = 1e12;
        if (t % 1300 > 1200)
            s.volume[t] = 1e9 + (double)(xs_next(&st) % 3);   /* near-flat at a high level */
    }
    int32_t zws[] = { 2, 30, 96, 672 };
    for (int k = 0; k < 4; k++) {
        sebt_params p = sebt_params_default();
        p.z_window = zws[k];
        sebt_features a, b;
        sebt_error err = { 0 };
        sebt_features_alloc(&a, n, &err);
        sebt_features_alloc(&b, n, &err);
        cr_assert_eq(sebt_reference_backend.features(&sebt_reference_backend, &s, &p, &a, &err), SEBT_OK);
        cr_assert_eq(sebt_fast_cpu_backend.features(&sebt_fast_cpu_backend, &s, &p, &b, &err), SEBT_OK);
        /* features are exact; the rolling pre-filter within its margin. */
        cr_assert_eq(memcmp(a.vol_z, b.vol_z, n * sizeof(double)), 0, "z_window %d", (int)zws[k]);
        double *roll = malloc(n * sizeof *roll);
        sebt_k_zscore(s.volume, (int64_t)n, zws[k], roll);
        for (size_t t = 0; t < n; t++)
            ASSERT_NEAR(a.vol_z[t], roll[t], 1e-9, "z_window %d bar %zu", (int)zws[k], t);
        free(roll);
        sebt_features_free(&a);
        sebt_features_free(&b);
    }
    sebt_series_free(&s);
}

/* A flat window is NaN exactly where the reference says, also right after
 * a NaN leaves and for windows of 2. */
Test(zscore, flat_and_nan_windows)
{
    double x[] = { 1, 1, 1, 2, 2, 2, 2, NAN, 3, 3, 4, 4, 4, 4, 5, 1, 1, 1, 1, 1 };
    size_t n = sizeof x / sizeof x[0];
    for (int32_t w = 2; w <= 5; w++) {
        double out[20];
        sebt_k_zscore(x, (int64_t)n, w, out);
        for (size_t t = 0; t < n; t++) {
            int nan_expected = t + 1 < (size_t)w;
            int flat = 1;
            for (size_t i = t + 1 - (size_t)w; !nan_expected && i <= t; i++) {
                if (isnan(x[i]))
                    nan_expected = 1;
                if (x[i] != x[t])
                    flat = 0;
            }
            nan_expected |= flat;
            cr_assert_eq(isnan(out[t]) != 0, nan_expected, "w %d bar %zu: %g", (int)w, t, out[t]);
        }
    }
    /* w = 2: z is +1 when the second value is larger, -1 when smaller. */
    double out[20];
    sebt_k_zscore(x, (int64_t)n, 2, out);
    cr_assert_eq(out[3], 1.0);
    cr_assert_eq(out[15], -1.0);
}

static sebt_result *run_fast(const sebt_series *s, const sebt_params *c, size_t n, int threads)
{
    sebt_result *r = calloc(n, sizeof *r);
    sebt_batch_opts opts = { .threads = threads, .want_trades = true };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fast_cpu_backend.run_batch(&sebt_fast_cpu_backend, s, c, n, &opts, r, &err), SEBT_OK,
                 "%s", err.msg);
    return r;
}

static size_t mixed_grid(sebt_params *c, size_t cap)
{
    size_t n = 0;
    uint64_t st = 17;
    while (n < cap) {
        sebt_params p = sebt_params_default();
        p.ema_fast = 2 + (int32_t)(xs_next(&st) % 40);
        p.ema_slow = 10 + (int32_t)(xs_next(&st) % 100);
        p.z_window = 2 + (int32_t)(xs_next(&st) % 60);
        p.atr_window = 1 + (int32_t)(xs_next(&st) % 30);
        p.vol_z = xs_unit(&st) * 2.0;
        p.tr_z = xs_unit(&st) * 1.5;
        p.cloc_min = xs_unit(&st);
        p.max_hold = 1 + (int32_t)(xs_next(&st) % 50);
        p.use_time = xs_unit(&st) < 0.7;
        c[n++] = p;
    }
    return n;
}

Test(determinism, thread_count_does_not_change_a_bit)
{
    sebt_series s = random_series(5000, 4, 300.0, 1e6, 777);
    sebt_params c[300];
    size_t n = mixed_grid(c, 300);
    sebt_result *one = run_fast(&s, c, n, 1), *two = run_fast(&s, c, n, 2), *three = run_fast(&s, c, n, 3);
    assert_identical_results(one, two, n);
    assert_identical_results(one, three, n);
    size_t trades = 0;
    for (size_t i = 0; i < n; i++)
        trades += one[i].n_trades;
    cr_assert_gt(trades, 1000);
    sebt_results_free(one, n);
    sebt_results_free(two, n);
    sebt_results_free(three, n);
    free(one);
    free(two);
    free(three);
    sebt_series_free(&s);
}

/* A budget of 1 MiB forces one key per batch: same results. */
Test(determinism, memory_budget_does_not_change_a_bit)
{
    sebt_series s = random_series(5000, 6, 300.0, 1e6, 0);
    sebt_params c[120];
    size_t n = mixed_grid(c, 120);
    unsetenv("SEBT_FAST_CPU_MEMORY_MB");
    sebt_result *big = run_fast(&s, c, n, 2);
    setenv("SEBT_FAST_CPU_MEMORY_MB", "1", 1);
    sebt_result *small = run_fast(&s, c, n, 2);
    unsetenv("SEBT_FAST_CPU_MEMORY_MB");
    assert_identical_results(big, small, n);
    sebt_results_free(big, n);
    sebt_results_free(small, n);
    free(big);
    free(small);
    sebt_series_free(&s);
}

/* A budget of a few bytes through the batch options: one z window per
 * batch, many batches, 1, 2 and 3 threads, the same bits as one batch on
 * one thread; the path statistics say what ran. */
Test(determinism, tiny_budget_many_batches_any_threads)
{
    sebt_series s = random_series(6000, 12, 300.0, 1e6, 911);
    sebt_params c[400];
    size_t n = mixed_grid(c, 400);
    size_t distinct_z = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < i && c[k].z_window != c[i].z_window)
            k++;
        distinct_z += k == i;
    }
    sebt_result *base = calloc(n, sizeof *base);
    sebt_batch_stats st0 = { 0 };
    sebt_batch_opts o0 = { .threads = 1, .want_trades = true, .stats = &st0 };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fast_cpu_backend.run_batch(&sebt_fast_cpu_backend, &s, c, n, &o0, base, &err), SEBT_OK, "%s",
                 err.msg);
    cr_assert_eq(st0.batches, 1, "the default budget holds this sweep in one batch (%zu)", st0.batches);
    cr_assert_eq(st0.threads_used, 1);
    cr_assert_gt(st0.chunks, 0);
    cr_assert_gt(st0.blocks, 0);
    for (int threads = 1; threads <= 3; threads++) {
        sebt_result *r = calloc(n, sizeof *r);
        sebt_batch_stats st = { 0 };
        sebt_batch_opts o = { .threads = threads, .want_trades = true, .memory_budget = 64, .stats = &st };
        cr_assert_eq(sebt_fast_cpu_backend.run_batch(&sebt_fast_cpu_backend, &s, c, n, &o, r, &err), SEBT_OK, "%s",
                     err.msg);
        cr_assert_eq(st.batches, distinct_z, "%d threads: %zu batches for %zu z windows", threads, st.batches,
                     distinct_z);
#ifdef SEBT_TEST_OPENMP
        cr_assert_eq(st.threads_used, threads);
#else
        cr_assert_eq(st.threads_used, 1, "built without OpenMP: one thread");
#endif
        assert_identical_results(base, r, n);
        sebt_results_free(r, n);
        free(r);
    }
    size_t trades = 0;
    for (size_t i = 0; i < n; i++)
        trades += base[i].n_trades;
    cr_assert_gt(trades, 1000);
    /* And the reference agrees with all of it. */
    check_against_reference(&s, c, 40, 2);
    sebt_results_free(base, n);
    free(base);
    sebt_series_free(&s);
}

/* Without trades asked for, the metrics are the same bits (sharpe then
 * comes from the R buffer or a second pass, never from the trades). */
Test(determinism, metrics_without_trades)
{
    sebt_series s = random_series(3000, 9, 300.0, 1e6, 0);
    sebt_params c[60];
    size_t n = mixed_grid(c, 60);
    sebt_result *with = run_fast(&s, c, n, 2);
    sebt_result *without = calloc(n, sizeof *without);
    sebt_batch_opts opts = { .threads = 2 };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fast_cpu_backend.run_batch(&sebt_fast_cpu_backend, &s, c, n, &opts, without, &err), SEBT_OK);
    for (size_t i = 0; i < n; i++) {
        cr_assert_null(without[i].trades);
        cr_assert_eq(memcmp(&with[i].metrics, &without[i].metrics, sizeof with[i].metrics), 0, "combo %zu", i);
    }
    /* The kernel's own second pass (no buffers at all) agrees too. */
    sebt_results_free(with, n);
    sebt_results_free(without, n);
    free(with);
    free(without);
    sebt_series_free(&s);
}

Test(errors, bad_combo_names_index_and_parameter)
{
    sebt_series s = random_series(100, 1, 10.0, 1.0, 0);
    sebt_params c[3] = { sebt_params_default(), sebt_params_default(), sebt_params_default() };
    c[2].ema_fast = 0;
    sebt_result r[3];
    memset(r, 0, sizeof r);
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fast_cpu_backend.run_batch(&sebt_fast_cpu_backend, &s, c, 3, NULL, r, &err), SEBT_ERR_PARAM);
    cr_assert(strstr(err.msg, "combo 2") && strstr(err.msg, "ema_fast"), "%s", err.msg);
    sebt_series_free(&s);
}

Test(edges, tiny_series_and_windows_longer_than_it)
{
    for (size_t n = 0; n < 4; n++) {
        sebt_series s = random_series(n, 2, 10.0, 1.0, 0);
        sebt_params c[2] = { sebt_params_default(), sebt_params_default() };
        c[1].atr_window = 1;
        c[1].z_window = 2;
        c[1].vol_z = -10;
        c[1].tr_z = -10;
        c[1].cloc_min = -1;
        c[1].ema_fast = 1;
        c[1].ema_slow = 1000;
        check_against_reference(&s, c, 2, 1);
        sebt_series_free(&s);
    }
}

/* A grid's combos (few values per parameter) take the planner's radix sort
 * of rank keys; scattered thresholds (more than 64 distinct values of a
 * parameter) take the comparison sort. Both must give the reference's bits,
 * whatever the combos' order: a grid in input order, the same combos
 * shuffled, and the grid with one scattered combo added (which sends the
 * whole batch to the other sort). fee 0 and -0 are one value to the plan. */
Test(plan, grid_order_shuffle_and_scattered_combos)
{
    sebt_series s = random_series(4000, 31, 300.0, 1e6, 0);
    enum { N = 3 * 2 * 3 * 2 * 2 * 3 * 2 * 2 };
    sebt_params c[N + 70];
    size_t n = 0;
    static const double vz[] = { 1.0, 0.5, 1.5 }, rr[] = { 2.5, 1.0 }, sm[] = { 1.5, 0.5, 1.0 };   /* not ascending */
    static const double fee[] = { 0.0, -0.0 };
    for (int a = 0; a < 3; a++)
        for (int z = 0; z < 2; z++)
            for (int v = 0; v < 3; v++)
                for (int t = 0; t < 2; t++)
                    for (int r = 0; r < 2; r++)
                        for (int m = 0; m < 3; m++)
                            for (int h = 0; h < 2; h++)
                                for (int f = 0; f < 2; f++) {
                                    sebt_params p = sebt_params_default();
                                    p.ema_fast = 5;
                                    p.ema_slow = 40;
                                    p.atr_window = 4 + 6 * a;
                                    p.z_window = 12 + 20 * z;
                                    p.vol_z = vz[v];
                                    p.tr_z = 0.2 + 0.4 * t;
                                    p.cloc_min = 0.4;
                                    p.reward_r = rr[r];
                                    p.atr_stop_mult = sm[m];
                                    p.max_hold = 10 + 30 * h;
                                    p.fee_bp = fee[f];
                                    p.slippage_bp = 0.0;
                                    c[n++] = p;
                                }
    cr_assert_eq(n, (size_t)N);
    size_t trades = check_against_reference(&s, c, n, 2);
    cr_assert_gt(trades, 1000, "only %zu trades", trades);
    sebt_result *in_order = run_fast(&s, c, n, 3);

    sebt_params sh[N];
    size_t perm[N];
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t st = 5;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(xs_next(&st) % (i + 1));
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        sh[i] = c[perm[i]];
    sebt_result *shuffled = run_fast(&s, sh, n, 2);
    for (size_t i = 0; i < n; i++)
        assert_identical_results(&in_order[perm[i]], &shuffled[i], 1);

    for (size_t k = 0; k < 70; k++) {   /* 70 more distinct vol_z values */
        c[n + k] = c[k];
        c[n + k].vol_z = 0.01 * (double)(k + 1) + 0.003;
    }
    sebt_result *scattered = run_fast(&s, c, n + 70, 1);
    assert_identical_results(in_order, scattered, n);
    check_against_reference(&s, c + n, 70, 1);
    sebt_results_free(in_order, n);
    sebt_results_free(shuffled, n);
    sebt_results_free(scattered, n + 70);
    free(in_order);
    free(shuffled);
    free(scattered);
    sebt_series_free(&s);
}

/* Combos that differ only in fee_bp and slippage_bp take the same trades;
 * fast_cpu walks each signal set once for all of them (sebt_k_walk) and
 * sums each combo's own pnl and R over that walk. Their metrics and open
 * positions must still be the reference's bits, exit rules on and off,
 * and a fee axis must add no work units (chunks): the walks were shared.
 * With one combo missing, the runs no longer line up and the combos are
 * run one by one: the same bits again. */
static void assert_metrics_as_reference(const sebt_series *s, const sebt_params *c, size_t n, int threads,
                                        sebt_batch_stats *st)
{
    sebt_result *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    sebt_error err = { 0 };
    sebt_batch_opts ro = { .threads = 1 }, fo = { .threads = threads, .stats = st };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, s, c, n, &ro, want, &err), SEBT_OK, "%s",
                 err.msg);
    cr_assert_eq(sebt_fast_cpu_backend.run_batch(&sebt_fast_cpu_backend, s, c, n, &fo, got, &err), SEBT_OK, "%s",
                 err.msg);
    size_t trades = 0, open = 0;
    for (size_t i = 0; i < n; i++) {
        assert_same_result(&want[i], &got[i], 0.0, i);
        cr_assert_eq(memcmp(&want[i].metrics, &got[i].metrics, sizeof want[i].metrics), 0, "combo %zu", i);
        trades += got[i].n_trades;
        open += got[i].open_at_end.open;
    }
    cr_assert_gt(trades, 2000, "only %zu trades", trades);
    cr_assert_gt(open, 10, "only %zu positions open at the end", open);
    sebt_results_free(want, n);
    sebt_results_free(got, n);
    free(want);
    free(got);
}

Test(plan, combos_differing_only_in_costs_share_walks)
{
    sebt_series s = random_series(4000, 41, 300.0, 1e6, 0);
    static const double one_fee[] = { 5.0 }, no_slip[] = { 0.0 };
    static const double fees[] = { 7.5, 0.0, 2.5 }, slips[] = { 0.0, 1.75 };   /* not ascending */
    enum { BASE = 2 * 3 * 2 * 4 * 2 * 2 };
    sebt_params *c = malloc(BASE * 6 * sizeof *c);
    size_t n0 = fee_grid(c, one_fee, 1, no_slip, 1);
    sebt_batch_stats st0 = { 0 }, st1 = { 0 }, st2 = { 0 };
    assert_metrics_as_reference(&s, c, n0, 1, &st0);
    size_t n = fee_grid(c, fees, 3, slips, 2);
    cr_assert_eq(n, (size_t)BASE * 6);
    assert_metrics_as_reference(&s, c, n, 1, &st1);
    cr_assert_eq(st1.chunks, st0.chunks, "%zu work units for 6 costs, %zu for one", st1.chunks, st0.chunks);
    assert_metrics_as_reference(&s, c, n, 3, &st2);
    c[7] = c[n - 1];   /* one combo twice, another gone: runs misaligned */
    assert_metrics_as_reference(&s, c, n - 1, 2, &st2);
    free(c);
    sebt_series_free(&s);
}
