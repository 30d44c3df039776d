/* The overfitting measures (sebt/overfit.h) against values worked out
 * apart from the code: Φ⁻¹ and the DSR example against mpmath at 40
 * digits (the inverse by root finding on its own normal distribution
 * function), PBO on two-combo grids by hand. The literal recomputation
 * from a real sweep's trades is overfit_literal.py's (cli/tests). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/overfit.h"
#include "../overfit_internal.h"

static void near(double got, double want, double rel)
{
    cr_expect(fabs(got - want) <= rel * fabs(want), "got %.17g, want %.17g", got, want);
}

Test(overfit, ppf_known_values)
{
    near(sebt_norm_ppf(0.975), 1.9599639845400542355, 1e-15);
    near(sebt_norm_ppf(0.025), -1.9599639845400542355, 1e-15);
    near(sebt_norm_ppf(0.999), 3.0902323061678135415, 1e-15);
    near(sebt_norm_ppf(1e-10), -6.3613409024040562047, 1e-15);
    near(sebt_norm_ppf(0.02), -2.0537489106318230529, 1e-15);
    near(sebt_norm_ppf(0.99), 2.3263478740408411009, 1e-15);
    cr_expect(sebt_norm_ppf(0.5) == 0.0);
    cr_expect(sebt_norm_ppf(0.0) == -INFINITY && sebt_norm_ppf(1.0) == INFINITY);
    cr_expect(isnan(sebt_norm_ppf(-0.1)) && isnan(sebt_norm_ppf(1.5)) && isnan(sebt_norm_ppf(NAN)));
    for (double p = 1e-12; p < 1.0; p *= 1.7)
        near(sebt_norm_cdf(sebt_norm_ppf(p)), p, 1e-13);
}

Test(overfit, dsr_example)
{
    /* N = 100 trials of per-trade Sharpe variance 0.01; the best, 0.2 over
     * 50 trades of skew -0.5 and kurtosis 4. */
    near(sebt_expected_max_sharpe(100, 1.0), 2.5306028932016820309, 1e-14);
    sebt_dsr d = { .n_trials = 100, .var_sr = 0.01, .sr = 0.2, .skew = -0.5, .kurt = 4.0, .t = 50 };
    sebt_dsr_compute(&d);
    near(d.sr0, 0.25306028932016820309, 1e-14);
    near(d.dsr, 0.36339284644650659822, 1e-13);
    cr_expect(sebt_expected_max_sharpe(1, 1.0) == 0.0);
    cr_expect(isnan(sebt_expected_max_sharpe(10, -1.0)) && isnan(sebt_expected_max_sharpe(10, NAN)));
    cr_expect(isnan(sebt_probabilistic_sharpe(0.2, 0.1, 1, 0.0, 3.0)));
    /* 1 - skew sr + (kurt-1)/4 sr² = 1 - 10 + 0 <= 0: no variance, NaN. */
    cr_expect(isnan(sebt_probabilistic_sharpe(1.0, 0.0, 30, 10.0, 1.0)));
}

/* Rounded as a paper prints it: |got - want| within half a unit of its
 * last printed digit. */
static void printed(double got, double want, double half_unit)
{
    cr_expect(fabs(got - want) <= half_unit, "got %.17g, the paper prints %g", got, want);
}

Test(overfit, dsr_paper_numerical_example)
{
    /* Bailey and López de Prado (2014), "The Deflated Sharpe Ratio",
     * section "A numerical example": N = 100 trials whose annualised
     * Sharpe ratios have variance 1/2, the best an annualised 2.5 over
     * T = 1,250 daily returns (five years of 250 days) of skewness -3 and
     * kurtosis 10. The formulas take the per-observation Sharpe, so both
     * are de-annualised: SR = 2.5 / sqrt(250), V = 1/2 / 250. The paper
     * prints SR0 = 0.1132 and DSR = 0.9004 (the best does not pass at
     * 95%); with N = 46 it would (0.9505), and with normal returns
     * (skew 0, kurtosis 3) it takes N = 88 to bring DSR down to 0.9505.
     * (The PDF itself was not reachable from the project; these are the
     * example's figures as several independent implementations quote and
     * test them.) */
    double v = 0.5 / 250.0, sr = 2.5 / sqrt(250.0);
    double sr0 = sebt_expected_max_sharpe(100, v);
    printed(sr0, 0.1132, 0.5e-4);
    printed(sebt_probabilistic_sharpe(sr, sr0, 1250, -3.0, 10.0), 0.9004, 0.5e-4);
    sebt_dsr d = { .n_trials = 100, .var_sr = v, .sr = sr, .skew = -3.0, .kurt = 10.0, .t = 1250 };
    sebt_dsr_compute(&d);
    cr_expect(d.sr0 == sr0 && d.dsr < 0.95);
    printed(sebt_probabilistic_sharpe(sr, sebt_expected_max_sharpe(46, v), 1250, -3.0, 10.0), 0.9505, 0.5e-4);
    printed(sebt_probabilistic_sharpe(sr, sebt_expected_max_sharpe(88, v), 1250, 0.0, 3.0), 0.9505, 0.5e-4);
}

Test(overfit, moments)
{
    const double x[] = { 1, 2, 3, 10 };
    double sk, ku;
    /* mean 4; deviations -3 -2 -1 6: m2 = 50/4, m3 = 180/4, m4 = 1394/4. */
    sebt_moments(x, 4, &sk, &ku);
    near(sk, 45.0 / pow(12.5, 1.5), 1e-15);
    near(ku, 348.5 / (12.5 * 12.5), 1e-15);
    const double flat[] = { 2, 2, 2 };
    sebt_moments(flat, 3, &sk, &ku);
    cr_expect(isnan(sk) && isnan(ku));
}

Test(overfit, blocks_and_sharpe)
{
    cr_expect(sebt_overfit_block(0, 10, 4) == 0 && sebt_overfit_block(2, 10, 4) == 0);
    cr_expect(sebt_overfit_block(3, 10, 4) == 1 && sebt_overfit_block(9, 10, 4) == 3);
    /* R 1 and 2: mean 1.5, sample variance 0.5. */
    near(sebt_overfit_sharpe(2, 3, 5), 1.5 / sqrt(0.5), 1e-15);
    cr_expect(isnan(sebt_overfit_sharpe(1, 3, 9)) && isnan(sebt_overfit_sharpe(2, 2, 2)));
    sebt_trade t[3];
    memset(t, 0, sizeof t);
    t[0].exit_index = 1, t[0].r = 1.0;
    t[1].exit_index = 2, t[1].r = -2.0;
    t[2].exit_index = 9, t[2].r = 0.5;
    sebt_result r = { .n_trades = 3, .trades = t };
    double row[12] = { 0 };
    sebt_overfit_add_trades(row, 4, 10, &r);
    const double want[12] = { 2, -1, 5, 0, 0, 0, 0, 0, 0, 1, 0.5, 0.25 };
    for (int i = 0; i < 12; i++)
        cr_expect(row[i] == want[i], "row[%d] %g, want %g", i, row[i], want[i]);
}

/* A: R 1, 2 in block 0 (Sharpe 1.5/sqrt 0.5) and -1, 0 in block 1
 * (-0.5/sqrt 0.5); B the other way round. Each half's best is the other
 * half's worst: ω = (0 + 0 + 1)/3 = 1/3, logit ln(1/2) < 0, PBO 1. */
Test(overfit, pbo_by_hand_always_overfit)
{
    const double stats[] = { 2, 3, 5, 2, -1, 1, /* A */ 2, -1, 1, 2, 3, 5 /* B */ };
    sebt_pbo p;
    sebt_error e = { 0 };
    cr_assert(sebt_pbo_compute(stats, 2, 2, 1, &p, &e) == SEBT_OK, "%s", e.msg);
    cr_expect(p.n_splits == 2 && p.n_counted == 2);
    cr_expect(p.mask[0] == 1 && p.mask[1] == 2);
    cr_expect(p.best[0] == 0 && p.best[1] == 1);
    near(p.omega[0], 1.0 / 3.0, 1e-16);
    near(p.logit[1], log(0.5), 1e-15);
    cr_expect(p.pbo == 1.0);
    near(p.oos_sharpe[0], -0.5 / sqrt(0.5), 1e-15);
    cr_expect(p.prob_oos_loss == 1.0);
    cr_expect(isnan(p.slope));   /* both splits' in-sample Sharpe equal: no spread */
    sebt_pbo_free(&p);
}

/* A better than B in both halves: ω = (2 + 0 + 2)/6 = 2/3, PBO 0. A third
 * combo with one trade (no Sharpe anywhere) ranks below both. */
Test(overfit, pbo_by_hand_never_overfit)
{
    const double stats[] = { 2, 3, 5, 2, 3, 5, /* A */ 2, -1, 1, 2, -1, 1, /* B */ 1, 9, 81, 0, 0, 0 };
    sebt_pbo p;
    sebt_error e = { 0 };
    cr_assert(sebt_pbo_compute(stats, 2, 2, 2, &p, &e) == SEBT_OK, "%s", e.msg);
    near(p.omega[0], 2.0 / 3.0, 1e-16);
    near(p.logit[0], log(2.0), 1e-15);
    cr_expect(p.pbo == 0.0);
    near(p.logit_median, log(2.0), 1e-15);
    sebt_pbo_free(&p);
    cr_assert(sebt_pbo_compute(stats, 3, 2, 0, &p, &e) == SEBT_OK, "%s", e.msg);
    near(p.omega[0], 6.0 / 8.0, 1e-16);   /* (2*2 + 0 + 2) / (2*4) */
    sebt_pbo_free(&p);
}

Test(overfit, pbo_refuses)
{
    double stats[12] = { 0 };
    sebt_pbo p;
    sebt_error e = { 0 };
    cr_expect(sebt_pbo_compute(stats, 2, 3, 1, &p, &e) == SEBT_ERR_USAGE);
    cr_expect(sebt_pbo_compute(stats, 1, 2, 1, &p, &e) == SEBT_ERR_USAGE);
    cr_expect(sebt_pbo_compute(stats, 2, 26, 1, &p, &e) == SEBT_ERR_USAGE);
    /* A count that is not a whole number >= 0 (1.5 could round across 2 in
     * the float filter), named by combo and block. */
    const double bad[] = { 1.5, -1, NAN, INFINITY };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        stats[6 + 3] = bad[k];
        cr_expect(sebt_pbo_compute(stats, 2, 2, 1, &p, &e) == SEBT_ERR_USAGE, "count %g", bad[k]);
        cr_expect(strstr(e.msg, "combo 1, block 1") != NULL, "%s", e.msg);
    }
    stats[6 + 3] = 0;
    /* No combo has a Sharpe in any half: no split counted, PBO NaN. */
    cr_assert(sebt_pbo_compute(stats, 2, 2, 1, &p, &e) == SEBT_OK);
    cr_expect(p.n_counted == 0 && isnan(p.pbo) && p.best[0] == SIZE_MAX);
    sebt_pbo_free(&p);
}

/* ---- PBO against a literal loop, where the comparisons are closest ----------
 * The docs' definition written out plainly (every split, every combo, the
 * sums in the documented order, one Sharpe at a time), over combos made to
 * sit where a shortcut would slip: exact duplicates (ties: the first wins,
 * and equal out of sample), copies one unit in the last place apart in one
 * block's sum, copies scaled by 2^300, 2^-300 and 2^-500 (the same Sharpe,
 * bit for bit, from sums of very different size, the last near underflow),
 * combos with one trade or none (no Sharpe). */

static double lit_sharpe(double n, double s, double q)
{
    double d = n * q - s * s;
    if (!(n >= 2 && d > 0))
        return NAN;
    return s * sqrt((n - 1) / (n * d));
}

static double lit_set(const double *row, int S, uint32_t set)
{
    double lo[3] = { 0, 0, 0 }, hi[3] = { 0, 0, 0 };
    for (int b = 0; b < S; b++)
        if (set >> b & 1u)
            for (int k = 0; k < 3; k++)
                (b < S / 2 ? lo : hi)[k] += row[3 * b + k];
    return lit_sharpe(lo[0] + hi[0], lo[1] + hi[1], lo[2] + hi[2]);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 11;
}

/* PBO over st (n combos, s blocks) against a literal loop, bit for bit,
 * in threads, chunk combos to a chunk (0: its own choice) and the float
 * filter no wider than widest; returns how often a split's best met
 * out-of-sample equals. */
static size_t assert_pbo_literal_run(const double *st, size_t N, int S, int threads, size_t chunk, int widest)
{
    sebt_pbo p;
    sebt_error e = { 0 };
    cr_assert(pbo_compute_chunked(st, N, S, threads, chunk, widest, &p, &e) == SEBT_OK, "%s", e.msg);
    size_t ties_seen = 0, splits = 0;
    for (uint32_t m = 0; m < 1u << S; m++)
        splits += __builtin_popcount(m) == S / 2;
    cr_assert_eq(p.n_splits, splits);
    for (size_t sp = 0; sp < p.n_splits; sp++) {
        uint32_t in = p.mask[sp], out = ((1u << S) - 1) & ~in;
        size_t best = SIZE_MAX;
        double bv = NAN;
        for (size_t i = 0; i < N; i++) {
            double v = lit_set(st + i * 3 * S, S, in);
            if (!isnan(v) && (best == SIZE_MAX || v > bv)) {
                best = i;
                bv = v;
            }
        }
        cr_assert_eq(p.best[sp], best, "split %zu (%d threads, chunk %zu, width %d): best %zu, the loop's %zu", sp,
                     threads, chunk, widest, p.best[sp], best);
        if (best == SIZE_MAX)
            continue;
        double ob = lit_set(st + best * 3 * S, S, out);
        size_t below = 0, equal = 0;
        for (size_t i = 0; i < N; i++) {
            if (i == best)
                continue;
            double v = lit_set(st + i * 3 * S, S, out);
            if (isnan(ob)) {
                equal += isnan(v);
            } else {
                below += isnan(v) || v < ob;
                equal += v == ob;
            }
        }
        ties_seen += equal;
        double omega = (double)(2 * below + equal + 2) / (double)(2 * (N + 1));
        cr_assert(same_bits(p.is_sharpe[sp], bv) && same_bits(p.oos_sharpe[sp], ob) &&
                      same_bits(p.omega[sp], omega),
                  "split %zu (%d threads, chunk %zu, width %d): in %.17g out %.17g omega %.17g, the loop's %.17g %.17g %.17g",
                  sp, threads, chunk, widest, p.is_sharpe[sp], p.oos_sharpe[sp], p.omega[sp], bv, ob, omega);
    }
    sebt_pbo_free(&p);
    return ties_seen;
}

/* assert_pbo_literal_run over one, two and three threads, three chunk
 * sizes (its own; 16 and 23 combos: a walk of many chunks, where splits
 * meet their final best late and their counts are redone, and chunks not
 * a multiple of the float filter's 16 lanes) and the float filter in each
 * width the machine runs; the fewest equals met over the runs. */
static size_t assert_pbo_literal(const double *st, size_t N, int S)
{
    size_t fewest_ties = SIZE_MAX;
    static const size_t chunks[] = { 0, 16, 23 };
    static const int widths[] = { PBO_AVX512, PBO_AVX2, PBO_PLAIN };
    for (int run = 0; run < 27; run++) {
        size_t ties_seen = assert_pbo_literal_run(st, N, S, 1 + run % 3, chunks[run / 3 % 3], widths[run / 9]);
        fewest_ties = ties_seen < fewest_ties ? ties_seen : fewest_ties;
    }
    return fewest_ties;
}

/* trades trades of R from -1.9 to 2.1 in steps of 0.001, into one block's
 * count, sum and sum of squares. */
static void add_random_trades(double *block, int trades, uint64_t *x)
{
    for (int t = 0; t < trades; t++) {
        double r = (double)(int64_t)(lcg(x) % 4001) / 1000.0 - 1.9;
        block[0] += 1.0;
        block[1] += r;
        block[2] += r * r;
    }
}

Test(overfit, pbo_equals_a_literal_loop_at_ties_and_extremes)
{
    enum { S = 8, N = 700 };
    double *st = calloc((size_t)N * 3 * S, sizeof *st);
    uint64_t x = 12345;
    for (size_t i = 0; i < N; i++) {
        double *row = st + i * 3 * S;
        int kind = (int)(i % 7);
        if (i >= 7 && kind >= 1 && kind <= 5) {
            const double *src = st + (i - 1) * 3 * S;
            static const double scale[] = { 0, 1, 1, 0x1p300, 0x1p-300, 0x1p-500 };
            for (int k = 0; k < 3 * S; k++)
                row[k] = k % 3 == 0 ? src[k] : k % 3 == 1 ? src[k] * scale[kind] : src[k] * scale[kind] * scale[kind];
            if (kind == 2)
                row[1] = nextafter(row[1], INFINITY);
            continue;
        }
        for (int b = 0; b < S; b++)
            add_random_trades(row + 3 * b, kind == 6 ? (b == 0) : (int)(lcg(&x) % 6), &x);
    }
    cr_assert_gt(assert_pbo_literal(st, N, S), 70, "the best met its equals too seldom");
    free(st);
}

/* Combos a relative 2^-20 to 2^-40 apart in their sums of R: closer than
 * float's roundings, so PBO's float filter must leave them to the double
 * one (with no margin it orders some of them wrongly). */
Test(overfit, pbo_equals_a_literal_loop_near_float_ties)
{
    enum { S = 8, N = 600 };
    double *st = calloc((size_t)N * 3 * S, sizeof *st);
    uint64_t x = 777;
    for (size_t i = 0; i < N; i++) {
        double *row = st + i * 3 * S;
        if (i % 6 != 0) {
            const double *src = st + (i - i % 6) * 3 * S;
            double eps = ldexp((double)(int64_t)(lcg(&x) % 201) - 100.0, -20 - (int)(lcg(&x) % 21));
            for (int k = 0; k < 3 * S; k++)
                row[k] = k % 3 == 1 ? src[k] * (1.0 + eps) : src[k];
            continue;
        }
        for (int b = 0; b < S; b++)
            add_random_trades(row + 3 * b, 2 + (int)(lcg(&x) % 5), &x);
    }
    assert_pbo_literal(st, N, S);
    free(st);
}

/* Groups of 16 combos the AVX-512 walk takes as surely valid in every
 * split (3 to 6 trades of varied R in each block), so its fast step and
 * per-combo margins decide them: every fifth a copy of another with its
 * sums of R off by a relative 2^-12 to 2^-22 (about that margin). And, at
 * the walk's end (lowest full-sample Sharpe), two combos whose low half is
 * trades of nearly one R, 20 combos of Sharpe -0.7 between them (-0.5 and
 * -0.8): the split on that half has the first as its best in the middle of
 * the last chunk, with a Sharpe of about 10^6 (beyond the float filter's
 * range), then the second (4 times that) a group later. */
static void nearly_one_r(double *row, int S, double spread, double low)
{
    for (int b = 0; b < S; b++)
        for (int t = 0; t < 4; t++) {
            double r = b < S / 2 ? 1.0 + ldexp((double)(t + b), spread) : low + 0.01 * (double)(t - b);
            row[3 * b] += 1.0;
            row[3 * b + 1] += r;
            row[3 * b + 2] += r * r;
        }
}

Test(overfit, pbo_equals_a_literal_loop_where_groups_are_surely_valid)
{
    enum { S = 8, N = 640, LATE = 500, LATER = 521 };
    double *st = calloc((size_t)N * 3 * S, sizeof *st);
    uint64_t x = 4242;
    for (size_t i = 0; i < N; i++) {
        double *row = st + i * 3 * S;
        if (i == LATE || i == LATER) {
            nearly_one_r(row, S, i == LATE ? -20 : -22, i == LATE ? -3.0 : -9.0);
            continue;
        }
        if (i > LATE && i < LATE + 21) {
            for (int b = 0; b < S; b++)
                for (int t = 0; t < 4; t++) {
                    double r = (t % 2 ? 0.3 : -1.7) + ldexp((double)(i + (size_t)b), -30);
                    row[3 * b] += 1.0;
                    row[3 * b + 1] += r;
                    row[3 * b + 2] += r * r;
                }
            continue;
        }
        if (i % 5 == 4) {
            const double *src = st + (i - 1) * 3 * S;
            double eps = ldexp((double)(int64_t)(lcg(&x) % 9) - 4.0, -12 - (int)(lcg(&x) % 11));
            int only = lcg(&x) % 2 ? (int)(lcg(&x) % (uint64_t)S) : -1;
            for (int k = 0; k < 3 * S; k++)
                row[k] = k % 3 == 1 && (only < 0 || k / 3 == only) ? src[k] * (1.0 + eps) : src[k];
            continue;
        }
        for (int b = 0; b < S; b++)
            add_random_trades(row + 3 * b, 3 + (int)(lcg(&x) % 4), &x);
    }
    assert_pbo_literal(st, N, S);
    free(st);
}

/* Combos made for the float filter's edges, walked in every chunk size
 * from 1 to 40 (a chunk's last part of 1 to 15 combos, masked in the
 * AVX-512 filter; chunks under its 16 lanes), each width, one to three
 * threads: copies of a combo with its sums of R off by a relative 2^-12
 * to 2^-20 (about the float filter's 2^-16 margin: some decided, some
 * left to the double path), counts of exactly 2 with two equal R (d zero,
 * or a few units in the last place from the roundings), halves whose sums
 * cancel (2^16 against -2^16 plus a little), sets of blocks whose trades
 * all have one R (d zero but for roundings, or fewer than 2 trades), counts at and past float's
 * 2^23 in a half, sums of squares at and past its 2^30, and copies scaled
 * by 2^-40 to 2^-75 (below the filter's floor; the last with R^2 below
 * float's normal range). */
static void edge_combo(double *row, int S, size_t i, const double *base, uint64_t *x)
{
    int kind = (int)(i % 8);
    if (i < 8 || kind == 0) {
        for (int b = 0; b < S; b++)
            add_random_trades(row + 3 * b, 2 + (int)(lcg(x) % 4), x);
        return;
    }
    switch (kind) {
    case 1:
    case 2: {   /* near the margin, in one block's sum or in all */
        double eps = ldexp((double)(int64_t)(lcg(x) % 9) - 4.0, -12 - (int)(lcg(x) % 9));
        int only = kind == 1 ? (int)(lcg(x) % (uint64_t)S) : -1;
        for (int k = 0; k < 3 * S; k++)
            row[k] = k % 3 == 1 && (only < 0 || k / 3 == only) ? base[k] * (1.0 + eps) : base[k];
        break;
    }
    case 3: {   /* two or three trades of one R in each block; or of one R in every block, 0 to 2 a block */
        bool one_r = lcg(x) % 4 != 0;
        double r1 = (double)(int64_t)(lcg(x) % 41) / 10.0 - 2.0;
        for (int b = 0; b < S; b++) {
            double r = one_r ? r1 : (double)(int64_t)(lcg(x) % 41) / 10.0 - 2.0;
            double n = one_r ? (double)(lcg(x) % 5 / 2) : lcg(x) % 4 ? 2.0 : 3.0;
            row[3 * b] = n;
            row[3 * b + 1] = n * r;
            row[3 * b + 2] = n * (r * r);
        }
        break;
    }
    case 4:   /* the halves cancel */
        for (int b = 0; b < S; b++) {
            double r = (b < S / 2 ? 0x1p14 : -0x1p14) + (double)(int64_t)(lcg(x) % 2001) / 1000.0 - 1.0;
            row[3 * b] = 4.0;
            row[3 * b + 1] = 4.0 * r;
            row[3 * b + 2] = 4.0 * (r * r) + (double)(lcg(x) % 3);
        }
        break;
    case 5:   /* counts about float's 2^23 in a half */
        for (int b = 0; b < S; b++) {
            double n = (double)((lcg(x) % 3 + 1) << 20) + (double)(lcg(x) % 3);
            row[3 * b] = n;
            row[3 * b + 1] = n * 0.01 * (double)(int64_t)(lcg(x) % 21 - 10);
            row[3 * b + 2] = n * 0.5;
        }
        break;
    case 6: {   /* sums of squares about float's 2^30 */
        double r = 0x1p13 + (double)(lcg(x) % 4096);
        for (int k = 0; k < 3 * S; k++)
            row[k] = k % 3 == 0 ? base[k] : k % 3 == 1 ? base[k] * r : base[k] * (r * r);
        break;
    }
    default: {   /* tiny copies */
        static const int down[] = { -40, -60, -63, -75 };
        double f = ldexp(1.0, down[lcg(x) % 4]);
        for (int k = 0; k < 3 * S; k++)
            row[k] = k % 3 == 0 ? base[k] : k % 3 == 1 ? base[k] * f : base[k] * (f * f);
        break;
    }
    }
}

Test(overfit, pbo_equals_a_literal_loop_at_the_float_filters_edges_in_every_chunk_size)
{
    enum { S = 8, N = 83 };
    double *st = calloc((size_t)N * 3 * S, sizeof *st);
    uint64_t x = 4242;
    for (size_t i = 0; i < N; i++)
        edge_combo(st + i * 3 * S, S, i, st + (i - i % 8) * 3 * S, &x);
    /* A strong combo (30) and a copy (77) better in block 6 alone: the copy
     * is walked first, and every split without block 6 in sample finds both
     * with the same in-sample Sharpe, where the lower index must win over
     * the best met before it (on the float filter's undecided lanes). */
    enum { LOW = 30, HIGH = 77 };
    double *lo = st + LOW * 3 * S, *hi = st + HIGH * 3 * S;
    memset(lo, 0, 3 * S * sizeof *lo);
    for (int b = 0; b < S; b++)
        for (int t = 0; t < 4; t++) {
            double r = 1.0 + (double)(lcg(&x) % 201) / 1000.0;
            lo[3 * b] += 1.0;
            lo[3 * b + 1] += r;
            lo[3 * b + 2] += r * r;
        }
    memcpy(hi, lo, 3 * S * sizeof *lo);
    hi[3 * 6] = 4.0;
    hi[3 * 6 + 1] = 4.0 * 1.1;
    hi[3 * 6 + 2] = 4.0 * (1.1 * 1.1);
    cr_assert_gt(lit_set(hi, S, 0xff), lit_set(lo, S, 0xff));
    size_t tied_best = 0;
    for (uint32_t m = 0; m < 0xff; m++)
        tied_best += __builtin_popcount(m) == 4 && !(m >> 6 & 1u) && lit_set(lo, S, m) >= lit_set(hi, S, m);
    cr_assert_eq(tied_best, 35);
    static const int widths[] = { PBO_AVX512, PBO_AVX2, PBO_PLAIN };
    for (size_t chunk = 1; chunk <= 40; chunk++)
        for (int w = 0; w < 3; w++)
            assert_pbo_literal_run(st, N, S, 1 + (int)((chunk + (size_t)w) % 3), chunk, widths[w]);
    free(st);
}

/* A block's sum of squares below zero (no trades give one, but the call
 * takes any): a split's two halves' sums of squares then cancel, and
 * float's roundings of each, 2^29 apart, are no longer bounded by their
 * sum, so the float filter must leave such a combo to the double path
 * (here it took d for negative: no Sharpe, where the exact one is 0.29). */
Test(overfit, pbo_equals_a_literal_loop_where_a_sum_of_squares_is_negative)
{
    enum { S = 4, N = 6 };
    double st[N * 3 * S] = { 0 };
    uint64_t x = 99;
    for (size_t i = 0; i < N - 1; i++)
        for (int b = 0; b < S; b++)
            add_random_trades(st + i * 3 * S + 3 * b, 3, &x);
    static const double odd[3 * S] = { 2, 1, -(0x1p29 + 0.3), 2, -1, 5, 2, 1, 0x1p29 + 10.3, 2, -1, 5 };
    memcpy(st + (N - 1) * 3 * S, odd, sizeof odd);
    static const int widths[] = { PBO_AVX512, PBO_AVX2, PBO_PLAIN };
    for (size_t chunk = 0; chunk <= N; chunk++)
        for (int w = 0; w < 3; w++)
            assert_pbo_literal_run(st, N, S, 1 + (int)((chunk + (size_t)w) % 3), chunk, widths[w]);
}

/* Copies of every split's best scaled by 2^-60 to 2^-76: the same Sharpe
 * bit for bit, in or out of sample, from sums of squares about 2^-118 to
 * 2^-150, at and below float's normal range, where its roundings keep few
 * bits or none: the float filter must leave each to the double path (its
 * floor), or the best's out-of-sample equals are counted below or above
 * it (as they are with a floor of 0). */
Test(overfit, pbo_equals_a_literal_loop_on_copies_of_the_best_near_float_underflow)
{
    enum { S = 8, N = 24 };
    double *st = calloc((size_t)N * 3 * S, sizeof *st);
    uint64_t x = 31337;
    for (int b = 0; b < S; b++)
        for (int t = 0; t < 4; t++) {
            double r = 1.0 + (double)(lcg(&x) % 201) / 1000.0;
            st[3 * b] += 1.0;
            st[3 * b + 1] += r;
            st[3 * b + 2] += r * r;
        }
    for (size_t i = 1; i < N; i++) {
        double *row = st + i * 3 * S;
        if (i % 3 == 0) {
            for (int b = 0; b < S; b++)
                add_random_trades(row + 3 * b, 2 + (int)(lcg(&x) % 4), &x);
            continue;
        }
        double f = ldexp(1.0, -60 - (int)(i % 17));
        for (int k = 0; k < 3 * S; k++)
            row[k] = k % 3 == 0 ? st[k] : k % 3 == 1 ? st[k] * f : st[k] * (f * f);
    }
    static const int widths[] = { PBO_AVX512, PBO_AVX2, PBO_PLAIN };
    for (size_t chunk = 0; chunk <= 5; chunk++)
        for (int w = 0; w < 3; w++)
            cr_assert_gt(assert_pbo_literal_run(st, N, S, 1 + (int)((chunk + (size_t)w) % 3), chunk, widths[w]), 70);
    free(st);
}
