/* A heatmap's cells (core/plot.c, sebt/plot.h): each aggregate of a
 * hand-made set of rows, every expected value worked out by hand from the
 * definitions in sebt/plot.h (linear interpolation between the sorted
 * values at h = (m - 1) * p; NaN rows left out; the mean a sum in row
 * order over the count). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/plot.h"
#include "sebt/sebt.h"

/* Four cells, rows interleaved:
 *   x=1 y=10: 4, 1, NaN, 2, 8  -> sorted 1 2 4 8 (m = 4)
 *   x=2 y=10: -1, 3, 0.5       -> sorted -1 0.5 3 (m = 3)
 *   x=1 y=20: NaN, NaN         -> no value
 *   x=2 y=20: 2.5              -> m = 1 */
static const double X[] = { 1, 2, 1, 1, 2, 1, 2, 1, 1, 2, 1 };
static const double Y[] = { 10, 10, 10, 20, 20, 10, 10, 20, 10, 10, 10 };
static const double M[] = { 4, -1, 1, NAN, 2.5, NAN, 3, NAN, 2, 0.5, 8 };
static const uint64_t COMBO[] = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
#define N_ROWS 11

static sebt_heatmap make(int agg)
{
    sebt_heatmap h;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_heatmap_make_agg(X, Y, M, COMBO, N_ROWS, agg, &h, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(h.nx, 2);
    cr_assert_eq(h.ny, 2);
    cr_assert_eq(h.agg, agg);
    /* Whatever the aggregate: rows, rows with a value, the best row's combo. */
    const size_t rows[] = { 5, 3, 2, 1 }, counted[] = { 4, 3, 0, 1 };
    const uint64_t best_combo[] = { 20, 16, 13, 14 };
    for (int c = 0; c < 4; c++) {
        cr_assert_eq(h.rows[c], rows[c], "cell %d rows", c);
        cr_assert_eq(h.counted[c], counted[c], "cell %d counted", c);
        cr_assert_eq(h.combo[c], best_combo[c], "cell %d combo %llu", c, (unsigned long long)h.combo[c]);
    }
    cr_assert(isnan(h.value[2]), "a cell of NaN rows has no value, got %.17g", h.value[2]);
    return h;
}

static void expect(int agg, double c0, double c1, double c3, size_t best)
{
    sebt_heatmap h = make(agg);
    cr_assert_eq(h.value[0], c0, "%s: cell x=1 y=10 is %.17g, want %.17g", sebt_heatmap_agg_name(agg), h.value[0], c0);
    cr_assert_eq(h.value[1], c1, "%s: cell x=2 y=10 is %.17g, want %.17g", sebt_heatmap_agg_name(agg), h.value[1], c1);
    cr_assert_eq(h.value[3], c3, "%s: cell x=2 y=20 is %.17g, want %.17g", sebt_heatmap_agg_name(agg), h.value[3], c3);
    cr_assert_eq(h.best, best, "%s: the highest cell is %zu, want %zu", sebt_heatmap_agg_name(agg), h.best, best);
    sebt_heatmap_free(&h);
}

Test(heatmap, best_is_the_highest_row)
{
    expect(SEBT_HEATMAP_BEST, 8, 3, 2.5, 0);
}

Test(heatmap, median_interpolates_between_the_middle_two)
{
    /* m = 4: h = 1.5, 2 + 0.5 * (4 - 2) = 3; m = 3: h = 1, 0.5. */
    expect(SEBT_HEATMAP_MEDIAN, 3, 0.5, 2.5, 0);
}

Test(heatmap, mean_leaves_out_nan_rows)
{
    /* (4 + 1 + 2 + 8) / 4 = 3.75; (-1 + 3 + 0.5) / 3 = 2.5 / 3. */
    expect(SEBT_HEATMAP_MEAN, 3.75, 2.5 / 3.0, 2.5, 0);
}

Test(heatmap, quartiles_interpolate_linearly)
{
    /* q25: m = 4, h = 0.75: 1 + 0.75 * (2 - 1) = 1.75; m = 3, h = 0.5:
     * -1 + 0.5 * (0.5 - -1) = -0.25; the single row 2.5 is the highest. */
    expect(SEBT_HEATMAP_Q25, 1.75, -0.25, 2.5, 3);
    /* q75: m = 4, h = 2.25: 4 + 0.25 * (8 - 4) = 5; m = 3, h = 1.5:
     * 0.5 + 0.5 * (3 - 0.5) = 1.75. */
    expect(SEBT_HEATMAP_Q75, 5, 1.75, 2.5, 0);
}

Test(heatmap, the_aggregate_is_named_and_a_bad_one_refused)
{
    const char *want[] = { "best", "median", "mean", "q25", "q75" };
    for (int a = 0; a < SEBT_HEATMAP_AGGS; a++)
        cr_assert_str_eq(sebt_heatmap_agg_name(a), want[a]);
    cr_assert_null(sebt_heatmap_agg_name(SEBT_HEATMAP_AGGS));
    cr_assert_null(sebt_heatmap_agg_name(-1));
    sebt_heatmap h;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_heatmap_make_agg(X, Y, M, COMBO, N_ROWS, 7, &h, &err), SEBT_ERR_USAGE);
    /* sebt_heatmap_make is the best row's. */
    cr_assert_eq(sebt_heatmap_make(X, Y, M, COMBO, N_ROWS, &h, &err), SEBT_OK);
    cr_assert_eq(h.agg, SEBT_HEATMAP_BEST);
    cr_assert_eq(h.value[0], 8);
    sebt_heatmap_free(&h);
}

/* The title and colour bar say which aggregate is drawn, and --where's
 * condition beside the fixed parameters. */
Test(heatmap, the_script_names_the_aggregate_and_the_condition)
{
    sebt_heatmap h = make(SEBT_HEATMAP_MEDIAN);
    sebt_plot_opts o = { .format = SEBT_PLOT_SVG, .output = "out.svg" };
    char *s = NULL;
    size_t len = 0;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_plot_heatmap_script_ex(&h, "ema_fast", "vol_z", "sharpe", "use_tp=false", "n >= 30", &o, &s,
                                             &len, &err), SEBT_OK, "%s", err.msg);
    cr_assert(strstr(s, "set title 'median sharpe over ema_fast and vol_z (use_tp=false fixed; rows where n >= 30; "
                        "each cell the median of its rows over the other parameters, NaN rows left out)'"),
              "%s", s);
    cr_assert(strstr(s, "highest median: 3 at ema_fast=1 vol_z=10 (of 4 rows)"), "%s", s);
    cr_assert(strstr(s, "set cblabel 'median sharpe of the cell''s rows'"), "%s", s);
    free(s);
    sebt_heatmap_free(&h);
}
