/* fast_cpu against the reference (SPEC §8, exact): the same trades and
 * metrics, field for field, on
 * random walks with holes and on a slice of the real BTCUSDT 15m series,
 * for grids that move every parameter. The reference is the independent
 * oracle here: it shares no code with fast_cpu. */
#include "parity_util.h"

/* A grid over every parameter, small enough to run under ASan. */
static size_t every_param_grid(sebt_params *out, size_t cap, int small_windows)
{
    static const int32_t fast_s[] = { 3, 24 }, slow_s[] = { 10, 96 }, zw_s[] = { 2, 5, 48 },
                         atr_s[] = { 1, 4, 14 };
    static const int32_t fast_l[] = { 24, 96 }, slow_l[] = { 96, 672 }, zw_l[] = { 96, 672 },
                         atr_l[] = { 14, 96 };
    const int32_t *fast = small_windows ? fast_s : fast_l, *slow = small_windows ? slow_s : slow_l;
    const int32_t *zw = small_windows ? zw_s : zw_l, *atr = small_windows ? atr_s : atr_l;
    size_t nz = small_windows ? 3 : 2, na = small_windows ? 3 : 2;
    size_t n = 0;
    uint64_t st = 99;
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < 2; b++)
            for (size_t z = 0; z < nz; z++)
                for (size_t w = 0; w < na; w++) {
                    /* The cheap parameters vary per combo, pseudo-randomly. */
                    for (int k = 0; k < 3 && n < cap; k++) {
                        sebt_params p = sebt_params_default();
                        p.ema_fast = fast[a];
                        p.ema_slow = slow[b];
                        p.z_window = zw[z];
                        p.atr_window = atr[w];
                        p.vol_z = -0.5 + 3.0 * xs_unit(&st);
                        p.tr_z = -0.5 + 2.5 * xs_unit(&st);
                        p.cloc_min = xs_unit(&st);
                        p.use_stop = xs_unit(&st) < 0.8;
                        p.atr_stop_mult = 2.0 * xs_unit(&st);
                        p.use_tp = xs_unit(&st) < 0.8;
                        p.reward_r = 0.25 + 3.0 * xs_unit(&st);
                        p.use_time = xs_unit(&st) < 0.8;
                        p.max_hold = 1 + (int32_t)(xs_next(&st) % 200);
                        p.fee_bp = xs_unit(&st) < 0.2 ? 0.0 : 10.0 * xs_unit(&st);
                        p.slippage_bp = xs_unit(&st) < 0.2 ? 0.0 : 10.0 * xs_unit(&st);
                        out[n++] = p;
                    }
                }
    return n;
}

Test(parity, random_walk_with_holes)
{
    sebt_series s = random_series(3000, 7, 100.0, 1e9, 397);
    sebt_params combos[200];
    size_t n = every_param_grid(combos, 200, 1);
    size_t trades = check_against_reference(&s, combos, n, 2);
    cr_assert_gt(trades, 100, "only %zu trades: the grid tests too little", trades);
    sebt_series_free(&s);
}

Test(parity, price_and_volume_scales)
{
    /* Tiny prices with huge volumes and the reverse. */
    double prices[] = { 1e-6, 1e6 }, vols[] = { 1e12, 1e-3 };
    for (int k = 0; k < 2; k++) {
        sebt_series s = random_series(1500, 11 + (uint64_t)k, prices[k], vols[k], 211);
        sebt_params combos[200];
        size_t n = every_param_grid(combos, 200, 1);
        check_against_reference(&s, combos, n, 2);
        sebt_series_free(&s);
    }
}

Test(parity, real_btcusdt_slice)
{
    sebt_series full, s;
    sebt_error err = { 0 };
    sebt_load_opts lo = { 0 };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz", &lo, &full, &err),
                 SEBT_OK, "%s", err.msg);
    const char *env = getenv("SEBT_TEST_BARS");
    size_t bars = env ? (size_t)strtoull(env, NULL, 10) : 20000;
    if (bars > full.n)
        bars = full.n;
    cr_assert_eq(sebt_series_slice(&full, full.n - bars, bars, &s, &err), SEBT_OK, "%s", err.msg);
    sebt_params combos[100];
    size_t n = every_param_grid(combos, 100, 0);
    size_t trades = check_against_reference(&s, combos, n, 2);
    cr_assert_gt(trades, 50, "only %zu trades", trades);
    sebt_series_free(&s);
    sebt_series_free(&full);
}

/* Features of one combo: every column bit-identical (SPEC §8 exact). */
Test(parity, features_columns)
{
    sebt_series s = random_series(4000, 5, 50000.0, 1e10, 1503);
    const sebt_backend *ref = &sebt_reference_backend, *fast = &sebt_fast_cpu_backend;
    int32_t zws[] = { 2, 3, 50, 700 };
    for (size_t k = 0; k < 4; k++) {
        sebt_params p = sebt_params_default();
        p.z_window = zws[k];
        p.atr_window = 1 + (int32_t)k * 5;
        sebt_features a, b;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_features_alloc(&a, s.n, &err), SEBT_OK);
        cr_assert_eq(sebt_features_alloc(&b, s.n, &err), SEBT_OK);
        cr_assert_eq(ref->features(ref, &s, &p, &a, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(fast->features(fast, &s, &p, &b, &err), SEBT_OK, "%s", err.msg);
        size_t n = s.n;
        cr_assert_eq(memcmp(a.ema_f, b.ema_f, n * sizeof(double)), 0);
        cr_assert_eq(memcmp(a.ema_s, b.ema_s, n * sizeof(double)), 0);
        cr_assert_eq(memcmp(a.tr, b.tr, n * sizeof(double)), 0);
        cr_assert_eq(memcmp(a.atr, b.atr, n * sizeof(double)), 0);
        cr_assert_eq(memcmp(a.cloc, b.cloc, n * sizeof(double)), 0);
        cr_assert_eq(memcmp(a.valid, b.valid, n), 0);
        cr_assert_eq(memcmp(a.vol_z, b.vol_z, n * sizeof(double)), 0, "vol_z, z_window %d", (int)zws[k]);
        cr_assert_eq(memcmp(a.tr_z, b.tr_z, n * sizeof(double)), 0, "tr_z, z_window %d", (int)zws[k]);
        cr_assert_eq(memcmp(a.signal, b.signal, n), 0);
        size_t defined = 0;
        for (size_t t = 0; t < n; t++)
            defined += !isnan(a.tr_z[t]);
        cr_assert_gt(defined, n / 4, "z_window %d: %zu defined", (int)zws[k], defined);
        sebt_features_free(&a);
        sebt_features_free(&b);
    }
    sebt_series_free(&s);
}
