/* The series (core/series.c): allocation, slices, missing bars, the SPEC §1
 * check and the recount of n_missing and interval_ms. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/sebt.h"

/* n present bars, one minute apart, open=low=10, high=12, close=11. */
static sebt_series make(size_t n)
{
    sebt_series s;
    cr_assert_eq(sebt_series_alloc(&s, n, NULL), SEBT_OK);
    for (size_t t = 0; t < n; t++) {
        s.ts[t] = 1609459200000LL + (int64_t)t * 60000;
        s.open[t] = s.low[t] = 10;
        s.high[t] = 12;
        s.close[t] = 11;
        s.volume[t] = 5;
    }
    return s;
}

static void check_fails(const sebt_series *s, const char *what)
{
    sebt_error e = { 0 };
    cr_assert_eq(sebt_series_check(s, &e), SEBT_ERR_INPUT);
    cr_assert(strstr(e.msg, what) != NULL, "message '%s' does not say '%s'", e.msg, what);
}

Test(series, alloc_zero_bars_keeps_pointers_valid)
{
    sebt_series s;
    cr_assert_eq(sebt_series_alloc(&s, 0, NULL), SEBT_OK);
    cr_assert_eq(s.n, 0);
    cr_assert_not_null(s.ts);
    cr_assert_not_null(s.volume);
    cr_assert_eq(sebt_series_check(&s, NULL), SEBT_OK);
    sebt_series_recount(&s);
    cr_assert_eq(s.interval_ms, 0);
    sebt_series_free(&s);
    cr_assert_null(s.ts);
    sebt_series_free(&s); /* twice is harmless */
}

Test(series, missing_bars)
{
    sebt_series s = make(3);
    cr_assert_not(sebt_series_is_missing(&s, 1));
    sebt_series_set_missing(&s, 1);
    cr_assert(sebt_series_is_missing(&s, 1));
    cr_assert(isnan(s.open[1]) && isnan(s.volume[1]));
    cr_assert_eq(sebt_series_check(&s, NULL), SEBT_OK);
    sebt_series_recount(&s);
    cr_assert_eq(s.n_missing, 1);
    sebt_series_free(&s);
}

Test(series, slice)
{
    sebt_series s = make(5), d;
    sebt_series_set_missing(&s, 3);
    cr_assert_eq(sebt_series_slice(&s, 2, 3, &d, NULL), SEBT_OK);
    cr_assert_eq(d.n, 3);
    cr_assert_eq(d.ts[0], s.ts[2]);
    cr_assert(sebt_series_is_missing(&d, 1));
    cr_assert_eq(d.n_missing, 1);
    cr_assert_eq(d.interval_ms, 60000);
    sebt_series_free(&d);

    sebt_error e = { 0 };
    cr_assert_eq(sebt_series_slice(&s, 4, 2, &d, &e), SEBT_ERR_USAGE);
    cr_assert(strstr(e.msg, "slice [4, 6) is outside a series of 5 bars") != NULL, "%s", e.msg);
    cr_assert_eq(sebt_series_slice(&s, 5, 0, &d, NULL), SEBT_OK);
    cr_assert_eq(d.n, 0);
    sebt_series_free(&d);
    sebt_series_free(&s);
}

Test(series, check_each_rule)
{
    sebt_series s = make(3);
    s.ts[2] = s.ts[1];
    check_fails(&s, "bar 2: timestamp 1609459260000 is not after");
    sebt_series_free(&s);

    s = make(3);
    s.close[1] = NAN;
    check_fails(&s, "bar 1: a bar is either all finite or all NaN");
    sebt_series_free(&s);

    s = make(3);
    s.high[1] = INFINITY;
    check_fails(&s, "bar 1: a bar is either all finite or all NaN");
    sebt_series_free(&s);

    const struct { int field; double v; } breaks[] = {
        { 0, 9.5 },  /* open below low */
        { 1, 10.5 }, /* high below close */
        { 2, 10.5 }, /* low above open */
        { 3, 12.5 }, /* close above high */
        { 4, -1 },   /* negative volume */
    };
    for (size_t i = 0; i < sizeof breaks / sizeof breaks[0]; i++) {
        s = make(3);
        double *cols[] = { s.open, s.high, s.low, s.close, s.volume };
        cols[breaks[i].field][2] = breaks[i].v;
        check_fails(&s, "bar 2: breaks low <= min(open, close)");
        sebt_series_free(&s);
    }

    /* Negative low with everything else in order. */
    s = make(1);
    s.open[0] = s.low[0] = -1;
    check_fails(&s, "bar 0: breaks");
    sebt_series_free(&s);

    /* Edges that are fine: high == low, zero volume. */
    s = make(2);
    s.open[1] = s.high[1] = s.low[1] = s.close[1] = 10;
    s.volume[1] = 0;
    cr_assert_eq(sebt_series_check(&s, NULL), SEBT_OK);
    sebt_series_free(&s);
}

Test(series, recount_interval_is_the_most_common_step)
{
    /* Steps 60 120 120 60 120 s: 120 s is the most common. */
    sebt_series s = make(6);
    const int64_t at[] = { 0, 60, 180, 300, 360, 480 };
    for (size_t t = 0; t < 6; t++)
        s.ts[t] = at[t] * 1000;
    sebt_series_recount(&s);
    cr_assert_eq(s.interval_ms, 120000);
    sebt_series_free(&s);

    /* A tie goes to the smaller step, whatever order the steps come in. */
    s = make(3);
    s.ts[1] = s.ts[0] + 120000;
    s.ts[2] = s.ts[1] + 60000;
    sebt_series_recount(&s);
    cr_assert_eq(s.interval_ms, 60000);
    sebt_series_free(&s);

    s = make(1);
    sebt_series_recount(&s);
    cr_assert_eq(s.interval_ms, 0);
    sebt_series_free(&s);
}
