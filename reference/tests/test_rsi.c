/* SPEC §3 RSI(w) worked by hand on closes of a few bars. The numbers are
 * chosen so each step is exact in binary (halves, quarters) except where
 * the expected value is written as the SPEC's own arithmetic. Only close
 * matters to RSI; the other fields make each bar a valid one. */
#include "ref_fixture.h"

#include "../../fast_cpu/fast_cpu_internal.h"
#include "../ref.h"

#define C(x) { x, x, x, x, 1 }

static void rsi_of(const bar5 *bars, size_t n, int32_t w, double *out)
{
    sebt_series s = make_series(bars, n);
    sebt_ref_rsi(&s, w, out);
    sebt_series_free(&s);
}

Test(rsi, window2_gains_losses_hole_and_no_movement)
{
    /* closes 10, 13, 12, 12, 15, missing, 16, 18, 18, 18
     * change (gain, loss): t0 none (t == 0); t1 +3 (3, 0); t2 -1 (0, 1);
     * t3 0 (0, 0); t4 +3 (3, 0); t5 none (missing); t6 none (bar 5
     * missing); t7 +2 (2, 0); t8 0 (0, 0); t9 0 (0, 0).
     * w = 2:
     *   t0 NaN (t < w-1);  t1 NaN (t0's gain undefined);
     *   t2 G = (3+0)/2 = 1.5, L = (0+1)/2 = 0.5: 100*1.5/2 = 75;
     *   t3 G = 0, L = 0.5: 0;
     *   t4 G = 1.5, L = 0: 100;
     *   t5, t6, t7 NaN (a window holding t5's or t6's undefined change);
     *   t8 G = (2+0)/2 = 1, L = 0: 100;
     *   t9 G = L = 0: G + L == 0, NaN. */
    bar5 bars[] = { C(10), C(13), C(12), C(12), C(15), MISSING, C(16), C(18), C(18), C(18) };
    double out[NBARS(bars)];
    rsi_of(bars, NBARS(bars), 2, out);
    double want[] = { NAN, NAN, 75, 0, 100, NAN, NAN, NAN, 100, NAN };
    assert_column(out, want, NBARS(bars));
}

Test(rsi, window1_is_the_bar_s_own_direction)
{
    /* w = 1: 100 on a rise, 0 on a fall, NaN when flat or undefined. */
    bar5 bars[] = { C(10), C(13), C(12), C(12), MISSING, C(11) };
    double out[NBARS(bars)];
    rsi_of(bars, NBARS(bars), 1, out);
    double want[] = { NAN, 100, 0, NAN, NAN, NAN };
    assert_column(out, want, NBARS(bars));
}

Test(rsi, warm_up_and_windows_longer_than_the_series)
{
    /* w = 3 over 5 rising closes: t0..t2 NaN (t < w-1 at t0, t1; t2's
     * window holds t0), then 100. w = 9 over the same: all NaN. */
    bar5 bars[] = { C(1), C(2), C(3), C(4), C(5) };
    double out[NBARS(bars)];
    rsi_of(bars, NBARS(bars), 3, out);
    double want[] = { NAN, NAN, NAN, 100, 100 };
    assert_column(out, want, NBARS(bars));
    rsi_of(bars, NBARS(bars), 9, out);
    double none[] = { NAN, NAN, NAN, NAN, NAN };
    assert_column(out, none, NBARS(bars));
}

Test(rsi, window_summed_oldest_first)
{
    /* closes 1, 0, 1, 2, 2 + 2^53; w = 4 at t4 holds changes -1, +1, +1,
     * +2^53. Gains oldest first: 0 + 0 + 1 + 1 = 2, 2 + 2^53 exact, so
     * G = (2^53 + 2)/4 = 2^51 + 0.5; newest first would lose both ones to
     * rounding (2^53 + 1 rounds to 2^53) and give 2^51. L = 1/4 = 0.25.
     * rsi = (100*G)/(G + L), the SPEC's arithmetic in its order. */
    bar5 bars[] = { C(1), C(0), C(1), C(2), C(0x1p53 + 2) };
    double out[NBARS(bars)];
    rsi_of(bars, NBARS(bars), 4, out);
    double G = 0x1p51 + 0.5, L = 0.25;
    double want[] = { NAN, NAN, NAN, NAN, (100.0 * G) / (G + L) };
    assert_column(out, want, NBARS(bars));
    double G_newest_first = 0x1p51;
    cr_assert_neq(out[4], (100.0 * G_newest_first) / (G_newest_first + L), "the order shows in the bits");
}

/* fast_cpu's form (fast_cpu/sweep.c: fast_rsi_range, for fast_cpu and
 * cuda), held to this file bit for bit: random walks with holes, flat runs
 * and large jumps, every window from 1 to 40 and a long one, the bars
 * computed in pieces of odd sizes. */
Test(rsi, fast_cpu_form_is_the_reference_bit_for_bit)
{
    enum { N = 3000 };
    static bar5 bars[N];
    uint64_t x = 0x9e3779b97f4a7c15u;
    double c = 100.0;
    for (size_t t = 0; t < N; t++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double u = (double)(x >> 11) * 0x1p-53;
        if (u < 0.03 && t < N / 2) {   /* holes in the first half only: long windows read the second */
            bar5 m = MISSING;
            memcpy(bars[t], m, sizeof m);
            continue;
        }
        if (u > 0.25)   /* else flat: no movement */
            c += (u - 0.6) * (u > 0.97 ? 1e6 : 1.0);
        bar5 b = C(c);
        memcpy(bars[t], b, sizeof b);
    }
    sebt_series s = make_series(bars, N);
    static double want[N], got[N];
    int32_t windows[41];
    for (int k = 0; k < 40; k++)
        windows[k] = k + 1;
    windows[40] = 700;
    for (int k = 0; k < 41; k++) {
        int32_t w = windows[k];
        sebt_ref_rsi(&s, w, want);
        sebt_k_bars b = sebt_k_bars_of(&s);
        for (size_t t = 0; t < N; t++)
            got[t] = sebt_k_filter_rsi(&b, (int64_t)t, w);
        size_t defined = 0;
        for (size_t t = 0; t < N; t++) {
            cr_assert(same_double(got[t], want[t]), "w %d, bar %zu: fast %.17g, reference %.17g", w, t, got[t],
                      want[t]);
            defined += !isnan(want[t]);
        }
        cr_assert_gt(defined, 0, "w %d: a series with no reading proves nothing", w);
    }
    sebt_series_free(&s);
}

/* ---- SPEC §4's fifth term: rsi <= rsi_max, when use_rsi ------------------
 *
 * small_params (ema_fast 1, ema_slow 3, atr_window 1, z_window 2, vol_z 0,
 * tr_z 0, cloc_min 0.5). Volume rises every bar (vol_z +1 from t1) and so
 * does TR (tr_z +1 from t1); every close sits above its bar's middle.
 * t  o=c  h     l      TR                     ema_s              cloc        four terms
 * 0  20   20.25 19.25  1                      20                 0.75        no (vol_z NaN)
 * 1  18   18.5  17     max(1.5,1.5,3)=3       .5*18+.5*20=19     1/1.5       yes
 * 2  19   19.5  15.5   max(4,1.5,2.5)=4       .5*19+.5*19=19     3.5/4       no (19 < 19 fails)
 * 3  17   19    14     max(5,0,5)=5           .5*17+.5*19=18     3/5         yes
 * 4  16   16.5  10     max(6.5,.5,7)=7        .5*16+.5*18=17     6/6.5       yes
 * 5  17   17.5  9      max(8.5,1.5,7)=8.5     .5*17+.5*17=17     8/8.5       no (17 < 17 fails)
 * Changes (gain, loss): t1 (0, 2), t2 (1, 0), t3 (0, 2), t4 (0, 1), t5 (1, 0).
 * RSI(2): t0, t1 NaN (t0's change undefined); t2 G = .5, L = 1:
 * 100*.5/1.5; t3 the same; t4 G = 0, L = 1.5: 0; t5 G = L = .5: 50.
 * RSI(1): t1 0, t2 100, t3 0, t4 0, t5 100. */
static bar5 rsi_sig_bars[] = {
    { 20, 20.25, 19.25, 20, 1 }, { 18, 18.5, 17, 18, 2 }, { 19, 19.5, 15.5, 19, 3 },
    { 17, 19, 14, 17, 4 },       { 16, 16.5, 10, 16, 5 }, { 17, 17.5, 9, 17, 6 },
};

static void signal_with(sebt_params p, const uint8_t *want, const char *what)
{
    sebt_series s = make_series(rsi_sig_bars, NBARS(rsi_sig_bars));
    sebt_features f;
    compute_features(&s, &p, &f);
    for (size_t t = 0; t < NBARS(rsi_sig_bars); t++)
        cr_assert_eq(f.signal[t], want[t], "%s: signal[%zu] = %d, expected %d", what, t, f.signal[t], want[t]);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(rsi_signal, the_column_and_the_filter_off_by_default)
{
    sebt_series s = make_series(rsi_sig_bars, NBARS(rsi_sig_bars));
    sebt_params p = small_params();
    p.rsi_window = 2;
    sebt_features f;
    compute_features(&s, &p, &f);
    double third = (100.0 * 0.5) / 1.5;
    double rsi[] = { NAN, NAN, third, third, 0, 50 };
    assert_column(f.rsi, rsi, NBARS(rsi_sig_bars));
    sebt_features_free(&f);
    sebt_series_free(&s);
    /* use_rsi false: the four terms alone, whatever rsi_max says. */
    uint8_t four[] = { 0, 1, 0, 1, 1, 0 };
    p.rsi_max = -1000;
    signal_with(p, four, "use_rsi false");
}

Test(rsi_signal, the_filter_keeps_the_oversold_bars)
{
    sebt_params p = small_params();
    p.use_rsi = true;
    p.rsi_window = 2;
    p.rsi_max = 30;          /* t1 NaN (no signal in the RSI's warm-up), t3 33.3 > 30, t4 0 */
    uint8_t at30[] = { 0, 0, 0, 0, 1, 0 };
    signal_with(p, at30, "rsi_max 30");
    p.rsi_max = (100.0 * 0.5) / 1.5;   /* t3's RSI exactly: <= holds at equality */
    uint8_t at_t3[] = { 0, 0, 0, 1, 1, 0 };
    signal_with(p, at_t3, "rsi_max = t3's rsi");
    p.rsi_max = 0;           /* t4's RSI is 0: still <= */
    signal_with(p, at30, "rsi_max 0");
    p.rsi_max = -1;          /* nothing is that oversold */
    uint8_t none[] = { 0, 0, 0, 0, 0, 0 };
    signal_with(p, none, "rsi_max -1");
    p.rsi_window = 1;        /* RSI(1) reads t1 (0): t1, t3, t4 all 0 */
    p.rsi_max = 30;
    uint8_t w1[] = { 0, 1, 0, 1, 1, 0 };
    signal_with(p, w1, "rsi_window 1");
}

Test(rsi_signal, its_trades)
{
    /* The one signal of rsi_max 30 (t4) enters at t5's open, 17, and the
     * position is still open at the end: no trade, open_at_end from t4. */
    sebt_series s = make_series(rsi_sig_bars, NBARS(rsi_sig_bars));
    sebt_params p = small_params();
    p.use_rsi = true;
    p.rsi_window = 2;
    p.rsi_max = 30;
    sebt_result r = run_one(&s, &p);
    cr_assert_eq(r.n_trades, 0);
    cr_assert(r.open_at_end.open);
    cr_assert_eq(r.open_at_end.signal_index, 4);
    cr_assert_eq(r.open_at_end.entry_price, 17);
    sebt_result_free(&r);
    sebt_series_free(&s);
}
