/* SPEC §3-5 worked by hand on series of a few bars. Every expected value is
 * a literal with its arithmetic beside it; the numbers are chosen so each
 * step is exact in binary (halves, quarters), except where noted. */
#include "ref_fixture.h"

#define NAN_ NAN

/* ---- EMA ------------------------------------------------------------- */

Test(ema, span3_missing_bar_keeps_state_and_outputs_nan)
{
    /* span 3: a = 2/4 = 0.5, b = 0.5.
     * t0: seed 10;  t1: 0.5*20 + 0.5*10 = 15;  t2: missing -> NaN, y stays 15;
     * t3: 0.5*40 + 0.5*15 = 27.5 */
    bar5 bars[] = { { 10, 11, 9, 10, 1 }, { 20, 21, 19, 20, 1 }, MISSING, { 40, 41, 39, 40, 1 } };
    sebt_series s = make_series(bars, NBARS(bars));
    sebt_params p = small_params();
    p.ema_fast = 3;
    p.ema_slow = 7;
    sebt_features f;
    compute_features(&s, &p, &f);
    double fast[] = { 10, 15, NAN_, 27.5 };
    /* span 7: a = 2/8 = 0.25, b = 0.75.
     * t0: 10;  t1: 0.25*20 + 0.75*10 = 5 + 7.5 = 12.5;  t2: NaN;
     * t3: 0.25*40 + 0.75*12.5 = 10 + 9.375 = 19.375 */
    double slow[] = { 10, 12.5, NAN_, 19.375 };
    assert_column(f.ema_f, fast, 4);
    assert_column(f.ema_s, slow, 4);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(ema, seeded_at_first_present_bar)
{
    /* Two holes first: NaN, NaN; then seed 8; then 0.25*16 + 0.75*8 = 10;
     * then 0.25*4 + 0.75*10 = 1 + 7.5 = 8.5 (span 7). */
    bar5 bars[] = { MISSING, MISSING, { 8, 9, 7, 8, 1 }, { 16, 17, 15, 16, 1 }, { 4, 5, 3, 4, 1 } };
    sebt_series s = make_series(bars, NBARS(bars));
    sebt_params p = small_params();
    p.ema_slow = 7;
    sebt_features f;
    compute_features(&s, &p, &f);
    double slow[] = { NAN_, NAN_, 8, 10, 8.5 };
    double fast[] = { NAN_, NAN_, 8, 16, 4 };   /* span 1: a = 1, b = 0: y = close */
    assert_column(f.ema_s, slow, 5);
    assert_column(f.ema_f, fast, 5);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

/* ---- TR and ATR ------------------------------------------------------ */

/* t  bar (o,h,l,c)     TR
 * 0  10 12  9 11       first bar: h-l = 3
 * 1  11 15 10 14       max(5, |15-11|=4, |10-11|=1) = 5
 * 2  14 14  8  9       max(6, |14-14|=0, |8-14|=6) = 6
 * 3  20 22 19 21       gap up: max(3, |22-9|=13, |19-9|=10) = 13
 * 4  12 13 11 12       gap down: max(2, |13-21|=8, |11-21|=10) = 10
 * 5  missing           NaN
 * 6  30 31 29 30       previous bar missing: h-l = 2 (not |31-12| = 19)
 * 7  30 33 29 32       max(4, |33-30|=3, |29-30|=1) = 4
 * 8  32 33 31 32       max(2, 1, 1) = 2 */
static bar5 tr_bars[] = {
    { 10, 12, 9, 11, 1 }, { 11, 15, 10, 14, 2 }, { 14, 14, 8, 9, 3 }, { 20, 22, 19, 21, 4 },
    { 12, 13, 11, 12, 5 }, MISSING, { 30, 31, 29, 30, 6 }, { 30, 33, 29, 32, 7 }, { 32, 33, 31, 32, 8 },
};

Test(tr, first_bar_gaps_and_bar_after_hole)
{
    sebt_series s = make_series(tr_bars, NBARS(tr_bars));
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    double tr[] = { 3, 5, 6, 13, 10, NAN_, 2, 4, 2 };
    assert_column(f.tr, tr, 9);
    /* atr_window 1: ATR == TR, and valid exactly where ATR is defined. */
    assert_column(f.atr, tr, 9);
    uint8_t valid[] = { 1, 1, 1, 1, 1, 0, 1, 1, 1 };
    for (size_t t = 0; t < 9; t++)
        cr_assert_eq(f.valid[t], valid[t], "valid[%zu]", t);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(atr, window2_warmup_and_hole)
{
    sebt_series s = make_series(tr_bars, NBARS(tr_bars));
    sebt_params p = small_params();
    p.atr_window = 2;
    sebt_features f;
    compute_features(&s, &p, &f);
    /* t0: t < w-1 -> NaN; (3+5)/2 = 4; (5+6)/2 = 5.5; (6+13)/2 = 9.5;
     * (13+10)/2 = 11.5; t5: hole -> NaN; t6: window {5,6} touches the
     * hole -> NaN; (2+4)/2 = 3; (4+2)/2 = 3. */
    double atr[] = { NAN_, 4, 5.5, 9.5, 11.5, NAN_, NAN_, 3, 3 };
    assert_column(f.atr, atr, 9);
    /* SPEC §5: the bar after the hole is still warming up. */
    uint8_t valid[] = { 0, 1, 1, 1, 1, 0, 0, 1, 1 };
    for (size_t t = 0; t < 9; t++)
        cr_assert_eq(f.valid[t], valid[t], "valid[%zu]", t);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(atr, window3_sums_oldest_first_then_divides)
{
    sebt_series s = make_series(tr_bars, NBARS(tr_bars));
    sebt_params p = small_params();
    p.atr_window = 3;
    sebt_features f;
    compute_features(&s, &p, &f);
    /* (3+5+6)/3 = 14/3; (5+6+13)/3 = 8; (6+13+10)/3 = 29/3; then the hole
     * poisons t5..t7; (2+4+2)/3 = 8/3. 14/3, 29/3, 8/3 are the doubles
     * nearest the fractions, which one division of the exact sum gives. */
    double atr[] = { NAN_, NAN_, 14.0 / 3, 8, 29.0 / 3, NAN_, NAN_, NAN_, 8.0 / 3 };
    assert_column(f.atr, atr, 9);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(atr, window_longer_than_series_is_all_nan)
{
    sebt_series s = make_series(tr_bars, NBARS(tr_bars));
    sebt_params p = small_params();
    p.atr_window = 10;
    sebt_features f;
    compute_features(&s, &p, &f);
    for (size_t t = 0; t < s.n; t++) {
        cr_assert(isnan(f.atr[t]) && isnan(f.tr_z[t]), "bar %zu", t);
        cr_assert_eq(f.valid[t], 0);
        cr_assert_eq(f.signal[t], 0);
    }
    sebt_features_free(&f);
    sebt_series_free(&s);
}

/* ---- Z --------------------------------------------------------------- */

static sebt_series volume_series(const double *vol, size_t n)
{
    bar5 bars[16];
    cr_assert(n <= 16);
    for (size_t t = 0; t < n; t++) {
        if (isnan(vol[t])) {
            for (int k = 0; k < 5; k++)
                bars[t][k] = NAN;
        } else {
            bars[t][0] = 10, bars[t][1] = 11, bars[t][2] = 9, bars[t][3] = 10, bars[t][4] = vol[t];
        }
    }
    return make_series(bars, n);
}

Test(zscore, window2_is_plus_or_minus_one)
{
    /* w = 2: m = (x0+x1)/2, var = ((x1-x0)/2)^2, z = (x1-m)/|x1-x0|*2 = sign.
     * vol 1,3 -> +1; 3,2 -> -1; 2,2 -> flat -> NaN; 2,100 -> +1. */
    double vol[] = { 1, 3, 2, 2, 100 };
    sebt_series s = volume_series(vol, 5);
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    double z[] = { NAN_, 1, -1, NAN_, 1 };
    assert_column(f.vol_z, z, 5);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(zscore, window5_population_variance)
{
    /* w = 5 over 0,0,0,0,5: m = 5/5 = 1; var = (1+1+1+1+16)/5 = 4; z = (5-1)/2 = 2.
     * next window 0,0,0,5,0: m = 1, var = 4, z = (0-1)/2 = -0.5. */
    double vol[] = { 0, 0, 0, 0, 5, 0 };
    sebt_series s = volume_series(vol, 6);
    sebt_params p = small_params();
    p.z_window = 5;
    sebt_features f;
    compute_features(&s, &p, &f);
    double z[] = { NAN_, NAN_, NAN_, NAN_, 2, -0.5 };
    assert_column(f.vol_z, z, 6);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(zscore, flat_window_is_nan)
{
    double vol[] = { 7, 7, 7, 8, 7 };
    sebt_series s = volume_series(vol, 5);
    sebt_params p = small_params();
    p.z_window = 3;
    sebt_features f;
    compute_features(&s, &p, &f);
    /* t2: 7,7,7 flat -> NaN. t3: 7,7,8: m = 22/3, var = (1/9+1/9+4/9)/3 =
     * 2/9, z = (2/3)/(sqrt(2)/3) = sqrt(2). t4: 7,8,7: z = (-1/3)/(sqrt(2)/3)
     * = -1/sqrt(2). Thirds are inexact, so these two are checked loosely. */
    cr_assert(isnan(f.vol_z[0]) && isnan(f.vol_z[1]) && isnan(f.vol_z[2]));
    cr_assert(f.vol_z[3] > 1.4 && f.vol_z[3] < 1.415, "%.17g", f.vol_z[3]);  /* sqrt(2) */
    cr_assert(f.vol_z[4] < -0.7 && f.vol_z[4] > -0.71, "%.17g", f.vol_z[4]); /* -1/sqrt(2) */
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(zscore, window_touching_a_hole_is_nan)
{
    /* Window 2: t1 = +1; t2 missing; t3 window {t2,t3} has the hole -> NaN;
     * t4: 4,1 -> -1. */
    double vol[] = { 1, 2, NAN, 4, 1 };
    sebt_series s = volume_series(vol, 5);
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    double z[] = { NAN_, 1, NAN_, NAN_, -1 };
    assert_column(f.vol_z, z, 5);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(zscore, variance_that_underflows_to_zero_is_nan)
{
    /* Decision (docs/decisions.md): 1e-200 and 2e-200 are not equal, but (x-m)^2 =
     * (5e-201)^2 underflows to 0, so var == 0. Such a window is flat for
     * every purpose: NaN, not +inf. */
    double vol[] = { 1e-200, 2e-200 };
    sebt_series s = volume_series(vol, 2);
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    cr_assert(isnan(f.vol_z[1]), "%.17g", f.vol_z[1]);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(zscore, tr_z_is_z_of_atr_and_sees_holes_through_it)
{
    /* tr_bars with atr_window 1 (ATR = TR = 3,5,6,13,10,NaN,2,4,2), z 2:
     * signs of the steps: +,+,+,-, hole, NaN (window has the hole), +, -. */
    sebt_series s = make_series(tr_bars, NBARS(tr_bars));
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    double z[] = { NAN_, 1, 1, 1, -1, NAN_, NAN_, 1, -1 };
    assert_column(f.tr_z, z, 9);
    sebt_features_free(&f);
    sebt_series_free(&s);

    /* atr_window 2 (ATR = NaN,4,5.5,9.5,11.5,NaN,NaN,3,3), z 2: t1 has a
     * NaN in its window, t8 is a flat window (3,3). */
    s = make_series(tr_bars, NBARS(tr_bars));
    p.atr_window = 2;
    compute_features(&s, &p, &f);
    double z2[] = { NAN_, NAN_, 1, 1, 1, NAN_, NAN_, NAN_, NAN_ };
    assert_column(f.tr_z, z2, 9);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

/* ---- cloc ------------------------------------------------------------ */

Test(cloc, position_in_range_high_equals_low_and_missing)
{
    /* (13-10)/(14-10) = 0.75; (10-10)/2 = 0; high == low -> NaN; missing -> NaN;
     * (12-10)/(12-10) = 1. */
    bar5 bars[] = { { 10, 14, 10, 13, 1 }, { 12, 12, 10, 10, 1 }, { 5, 5, 5, 5, 1 }, MISSING, { 11, 12, 10, 12, 1 } };
    sebt_series s = make_series(bars, NBARS(bars));
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    double cloc[] = { 0.75, 0, NAN_, NAN_, 1 };
    assert_column(f.cloc, cloc, 5);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

/* ---- signal ---------------------------------------------------------- */

/* small_params: ema_fast 1, ema_slow 3, atr 1, z 2, thresholds 0, 0, 0.5.
 * t  o    h   l  c    v   TR                  ema_s                     vol_z tr_z cloc     fails
 * 0  10   11  9  10   1   2                   10                        NaN   NaN  0.5      (warm-up)
 * 1  10   10  6  7    2   max(4,0,4)=4        .5*7+.5*10=8.5            +1    +1   0.25     cloc
 * 2  7    8   2  7    3   max(6,1,5)=6        .5*7+.5*8.5=7.75          +1    +1   5/6      -> SIGNAL
 * 3  7    9   1  6    2   max(8,2,6)=8        .5*6+.5*7.75=6.875        -1    +1   0.625    vol_z
 * 4  6    7   5  6.5  4   max(2,1,1)=2        .5*6.5+.5*6.875=6.6875    +1    -1   0.75     tr_z
 * 5  6.5  12  6  11   5   max(6,5.5,.5)=6     .5*11+.5*6.6875=8.84375   +1    +1   5/6      ema (11 > 8.84)
 */
static bar5 sig_bars[] = {
    { 10, 11, 9, 10, 1 }, { 10, 10, 6, 7, 2 }, { 7, 8, 2, 7, 3 },
    { 7, 9, 1, 6, 2 },    { 6, 7, 5, 6.5, 4 }, { 6.5, 12, 6, 11, 5 },
};

Test(signal, all_four_conditions_each_failing_once)
{
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params p = small_params();
    sebt_features f;
    compute_features(&s, &p, &f);
    double tr[] = { 2, 4, 6, 8, 2, 6 };
    double ema_s[] = { 10, 8.5, 7.75, 6.875, 6.6875, 8.84375 };
    double ema_f[] = { 10, 7, 7, 6, 6.5, 11 };
    double vol_z[] = { NAN_, 1, 1, -1, 1, 1 };
    double tr_z[] = { NAN_, 1, 1, 1, -1, 1 };
    double cloc[] = { 0.5, 0.25, 5.0 / 6, 0.625, 0.75, 5.0 / 6 };
    assert_column(f.tr, tr, 6);
    assert_column(f.ema_s, ema_s, 6);
    assert_column(f.ema_f, ema_f, 6);
    assert_column(f.vol_z, vol_z, 6);
    assert_column(f.tr_z, tr_z, 6);
    assert_column(f.cloc, cloc, 6);
    uint8_t sig[] = { 0, 0, 1, 0, 0, 0 };
    for (size_t t = 0; t < 6; t++) {
        cr_assert_eq(f.signal[t], sig[t], "signal[%zu]", t);
        cr_assert_eq(f.valid[t], 1, "valid[%zu]", t);
    }
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(signal, comparisons_are_strict)
{
    /* At t2 vol_z = tr_z = 1 exactly: a threshold of 1 is not exceeded. */
    sebt_series s = make_series(sig_bars, NBARS(sig_bars));
    sebt_params p = small_params();
    sebt_features f;
    p.vol_z = 1.0;
    compute_features(&s, &p, &f);
    cr_assert_eq(f.signal[2], 0);
    sebt_features_free(&f);
    p.vol_z = 0.0;
    p.tr_z = 1.0;
    compute_features(&s, &p, &f);
    cr_assert_eq(f.signal[2], 0);
    sebt_features_free(&f);
    /* cloc at t2 is 5/6; at cloc_min 5/6 the bar no longer signals. */
    p.tr_z = 0.0;
    p.cloc_min = 5.0 / 6;
    compute_features(&s, &p, &f);
    cr_assert_eq(f.signal[2], 0);
    sebt_features_free(&f);
    /* Equal EMAs (ema_fast = ema_slow) never signal: ema_f < ema_s fails. */
    p.cloc_min = 0.5;
    p.ema_fast = 3;
    compute_features(&s, &p, &f);
    for (size_t t = 0; t < 6; t++)
        cr_assert_eq(f.signal[t], 0, "signal[%zu]", t);
    sebt_features_free(&f);
    sebt_series_free(&s);
}

Test(signal, nan_comparisons_are_false)
{
    /* A hole at t1 makes every indicator NaN there and poisons the z window
     * at t2, so neither can signal even with thresholds nothing fails. */
    bar5 bars[] = { { 10, 11, 9, 10, 1 }, MISSING, { 7, 8, 2, 7, 3 }, { 7, 8, 2, 6, 4 } };
    sebt_series s = make_series(bars, NBARS(bars));
    sebt_params p = small_params();
    p.vol_z = -1e300;
    p.tr_z = -1e300;
    p.cloc_min = -1e300;
    sebt_features f;
    compute_features(&s, &p, &f);
    /* t3: ema_f 6 < ema_s .5*6+.5*7 = 6.5; vol 3->4 z=+1; TR t2 = h-l = 6
     * (after hole), t3 = max(6,1,5) = 6 -> flat z window -> NaN -> false. */
    uint8_t sig[] = { 0, 0, 0, 0 };
    for (size_t t = 0; t < 4; t++)
        cr_assert_eq(f.signal[t], sig[t], "signal[%zu]", t);
    cr_assert(isnan(f.tr_z[3]));
    cr_assert_eq(f.vol_z[3], 1.0);
    sebt_features_free(&f);
    sebt_series_free(&s);
}
