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
    static double want[N], got[N], gain[N], loss[N];
    fast_rsi_changes(&s, gain, loss);
    int32_t windows[41];
    for (int k = 0; k < 40; k++)
        windows[k] = k + 1;
    windows[40] = 700;
    for (int k = 0; k < 41; k++) {
        int32_t w = windows[k];
        sebt_ref_rsi(&s, w, want);
        for (size_t from = 0; from < N;) {
            size_t to = from + 1 + (from * 7 + (size_t)w) % 997;
            to = to < N ? to : N;
            fast_rsi_range(gain, loss, N, w, from, to, got);
            from = to;
        }
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
