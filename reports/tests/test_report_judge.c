/* The baseline gate's verdict on one ratio, fed per-repetition ratios
 * written here (no benchmark, no clock): a regression needs a drop beyond
 * the threshold in the median, p < 0.05, and in every repetition. */
#include <criterion/criterion.h>
#include <math.h>

#include "report.h"

#define N(a) (sizeof(a) / sizeof(a)[0])

static sebt_ratio_row row;

static sebt_verdict judge(const double *o, size_t no, const double *n, size_t nn, double threshold)
{
    memset(&row, 0, sizeof row);
    return sebt_ratio_judge(o, no, n, nn, threshold, SEBT_BASELINE_ALPHA, "fast_cpu", &row);
}

/* fast_cpu over the reference, five repetitions, as micro_features gives
 * on a quiet machine: median 6.4 */
static const double quiet[] = { 6.3, 6.2, 6.5, 6.9, 6.4 };

Test(ratio_judge, a_planted_2x_slowdown_is_a_regression)
{
    const double halved[] = { 3.15, 3.1, 3.25, 3.45, 3.2 };
    cr_assert_eq(judge(quiet, N(quiet), halved, N(halved), 25), SEBT_VERDICT_REGRESSION, "%s", row.note);
    cr_assert_float_eq(row.change_pct, -50.0, 1e-9);
    cr_assert_float_eq(row.p_value, 2.0 / 252, 1e-12); /* wholly apart: 2 of C(10,5) */
    cr_assert(strstr(row.note, "REGRESSION: fast_cpu lost 50% of its lead"), "%s", row.note);
}

Test(ratio_judge, a_halving_with_noise_is_still_a_regression)
{
    /* the worst of the recorded planted runs: ratios spread 1.5x, all below
     * 6.4 * 0.75 = 4.8 */
    const double halved[] = { 2.15, 3.28, 3.19, 3.0, 2.6 };
    cr_assert_eq(judge(quiet, N(quiet), halved, N(halved), 25), SEBT_VERDICT_REGRESSION, "%s", row.note);
}

Test(ratio_judge, a_drop_one_repetition_does_not_show_is_inconclusive)
{
    /* median -50%, ranks wholly apart (p = 2/252), but one repetition at
     * 6.0 sits above 4.8: not every repetition dropped */
    const double unstable[] = { 3.1, 3.2, 3.0, 3.3, 6.0 };
    cr_assert_eq(judge(quiet, N(quiet), unstable, N(unstable), 25), SEBT_VERDICT_INCONCLUSIVE, "%s", row.note);
    cr_assert_float_eq(row.p_value, 2.0 / 252, 1e-12);
    cr_assert(strstr(row.note, "1 of 5 repetitions do not show"), "%s", row.note);
}

Test(ratio_judge, a_noisy_drop_is_inconclusive)
{
    /* median 4.5 (-29.7%), but the samples overlap the old ones: p = 0.095 */
    const double noisy[] = { 4.5, 6.6, 2.0, 4.4, 4.7 };
    cr_assert_eq(judge(quiet, N(quiet), noisy, N(noisy), 25), SEBT_VERDICT_INCONCLUSIVE, "%s", row.note);
    cr_assert(row.p_value > SEBT_BASELINE_ALPHA, "p = %g", row.p_value);
    cr_assert(strstr(row.note, "too noisy"), "%s", row.note);
}

Test(ratio_judge, too_few_repetitions_are_inconclusive)
{
    const double one_old[] = { 6.4 }, one_new[] = { 3.2 };
    cr_assert_eq(judge(one_old, 1, one_new, 1, 25), SEBT_VERDICT_INCONCLUSIVE, "%s", row.note);
    cr_assert(strstr(row.note, "1 and 1 repetitions cannot reach p < 0.05"), "%s", row.note);
}

Test(ratio_judge, load_that_shaves_every_ratio_is_within_the_threshold)
{
    /* every ratio 20% lower (another process sharing the caches): wholly
     * apart, p = 2/252, but below the effect size */
    double loaded[N(quiet)];
    for (size_t i = 0; i < N(quiet); i++)
        loaded[i] = quiet[i] * 0.8;
    cr_assert_eq(judge(quiet, N(quiet), loaded, N(loaded), 25), SEBT_VERDICT_OK, "%s", row.note);
    cr_assert_float_eq(row.change_pct, -20.0, 1e-9);
}

Test(ratio_judge, the_threshold_decides)
{
    const double halved[] = { 3.15, 3.1, 3.25, 3.45, 3.2 };
    cr_assert_eq(judge(quiet, N(quiet), halved, N(halved), 60), SEBT_VERDICT_OK, "%s", row.note);
    /* at 49%: the median fell 50%, but 3.45 is above 6.4 * 0.51 = 3.264 */
    cr_assert_eq(judge(quiet, N(quiet), halved, N(halved), 49), SEBT_VERDICT_INCONCLUSIVE, "%s", row.note);
}

Test(ratio_judge, gains)
{
    const double doubled[] = { 12.6, 12.4, 13.0, 13.8, 12.8 };
    cr_assert_eq(judge(quiet, N(quiet), doubled, N(doubled), 25), SEBT_VERDICT_IMPROVED, "%s", row.note);
    cr_assert_float_eq(row.change_pct, 100.0, 1e-9);
    const double one_old[] = { 6.4 }, one_new[] = { 12.8 };
    cr_assert_eq(judge(one_old, 1, one_new, 1, 25), SEBT_VERDICT_OK, "%s", row.note);
}

Test(ratio_judge, no_repetitions_are_not_compared)
{
    cr_assert_eq(judge(quiet, N(quiet), quiet, 0, 25), SEBT_VERDICT_NOT_COMPARED, "%s", row.note);
    cr_assert(isnan(row.p_value));
}
