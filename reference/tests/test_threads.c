/* The reference on several threads: the bars of its Z columns are shared
 * out in pieces (reference/signal.c), every bar still computed from its
 * own window by sebt_ref_zscore_bars. Held to the one-thread reference bit
 * for bit: every feature column, the signal, the valid bars and the trades,
 * over a random walk with holes, flat runs and jumps, at windows short,
 * middling and long, on 2, 3 and 8 threads (pieces at and off any power of
 * two). Without OpenMP the pieces run one after another: the same check. */
#include "ref_fixture.h"

#include "../ref.h"

enum { N = 40000 };
static bar5 bars[N];

static sebt_series walk(void)
{
    uint64_t x = 0x2545f4914f6cdd1du;
    double c = 100.0, v = 10.0;
    for (size_t t = 0; t < N; t++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double u = (double)(x >> 11) * 0x1p-53;
        if (u < 0.01 && t < N / 4) {   /* holes early only: long windows read the rest */
            bar5 m = MISSING;
            memcpy(bars[t], m, sizeof m);
            continue;
        }
        if (u > 0.2)   /* else flat: price and volume unchanged */
            c += (u - 0.6) * (u > 0.995 ? ((x >> 3) & 1 ? 50.0 : -50.0) : 1.0), v = 1.0 + 20.0 * u;
        bar5 b = { c, c + 0.3 + u, c - 0.3 - u, c + (u - 0.5) * 0.5, v };
        memcpy(bars[t], b, sizeof b);
    }
    return make_series(bars, N);
}

static void alloc(sebt_features *f)
{
    sebt_error err = { 0 };
    cr_assert_eq(sebt_features_alloc(f, N, &err), SEBT_OK, "%s", err.msg);
}

Test(reference_threads, zscore_in_pieces_is_the_column)
{
    static double x[N], want[N], got[N];
    sebt_series s = walk();
    memcpy(x, s.volume, sizeof x);
    const int32_t windows[] = { 2, 3, 97, 700, N + 5 };
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
        int32_t w = windows[k];
        sebt_ref_zscore(x, N, w, want);
        for (size_t from = 0; from < N;) {
            size_t to = from + 1 + (from * 13 + (size_t)w) % 1531;
            to = to < N ? to : N;
            sebt_ref_zscore_bars(x, w, from, from, got);   /* an empty piece writes nothing */
            sebt_ref_zscore_bars(x, w, from, to, got);
            from = to;
        }
        for (size_t t = 0; t < N; t++)
            cr_assert(same_double(got[t], want[t]), "w %d, bar %zu: in pieces %.17g, whole %.17g", w, t, got[t],
                      want[t]);
    }
    sebt_series_free(&s);
}

Test(reference_threads, features_on_threads_are_the_one_thread_bits)
{
    sebt_series s = walk();
    sebt_features want, got;
    alloc(&want);
    alloc(&got);
    const int32_t windows[] = { 2, 40, 700 };
    const int threads[] = { 2, 3, 8 };
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
        sebt_params p = sebt_params_default();
        p.z_window = windows[k];
        p.ema_fast = 5;
        p.ema_slow = 50;
        p.vol_z = 0.5;
        p.tr_z = 0.2;
        p.cloc_min = 0.3;
        sebt_ref_compute(&s, &p, &want);
        size_t defined = 0, signals = 0;
        for (size_t t = 0; t < N; t++)
            defined += !isnan(want.vol_z[t]) && !isnan(want.tr_z[t]), signals += want.signal[t];
        cr_assert_gt(defined, N / 10, "w %d: too few z readings to prove anything", p.z_window);
        cr_assert_gt(signals, 0, "w %d: no signal", p.z_window);
        for (size_t j = 0; j < sizeof threads / sizeof threads[0]; j++) {
            for (int c = 0; c < SEBT_N_FEATURES; c++)
                for (size_t t = 0; t < N; t++)
                    got.col[c][t] = (double)c + 0.25;   /* a bar left unwritten shows */
            sebt_ref_compute_threads(&s, &p, &got, threads[j]);
            for (int c = 0; c < SEBT_N_FEATURES; c++)
                for (size_t t = 0; t < N; t++)
                    cr_assert(same_double(got.col[c][t], want.col[c][t]),
                              "w %d, %d threads, column %d, bar %zu: %.17g, one thread %.17g", p.z_window,
                              threads[j], c, t, got.col[c][t], want.col[c][t]);
            cr_assert_eq(memcmp(got.signal, want.signal, N), 0, "w %d, %d threads: signal", p.z_window, threads[j]);
            cr_assert_eq(memcmp(got.valid, want.valid, N), 0, "w %d, %d threads: valid", p.z_window, threads[j]);
        }
    }
    sebt_features_free(&want);
    sebt_features_free(&got);
    sebt_series_free(&s);
}

Test(reference_threads, run_batch_on_threads_gives_the_same_trades)
{
    sebt_series s = walk();
    sebt_params p = sebt_params_default();
    p.z_window = 300;
    p.ema_fast = 5;
    p.ema_slow = 50;
    p.vol_z = 0.5;
    p.tr_z = 0.2;
    p.cloc_min = 0.3;
    sebt_result one, many;
    memset(&one, 0, sizeof one);
    memset(&many, 0, sizeof many);
    sebt_error err = { 0 };
    sebt_batch_opts o1 = { .threads = 1, .want_trades = true }, o8 = { .threads = 8, .want_trades = true };
    const sebt_backend *ref = &sebt_reference_backend;
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, &o1, &one, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(ref->run_batch(ref, &s, &p, 1, &o8, &many, &err), SEBT_OK, "%s", err.msg);
    cr_assert_gt(one.n_trades, 0, "no trade: nothing compared");
    cr_assert_eq(many.n_trades, one.n_trades);
    cr_assert_eq(memcmp(many.trades, one.trades, one.n_trades * sizeof *one.trades), 0, "the trades differ");
    cr_assert_eq(memcmp(&many.metrics, &one.metrics, sizeof one.metrics), 0, "the metrics differ");
    sebt_result_free(&one);
    sebt_result_free(&many);
    sebt_series_free(&s);
}
