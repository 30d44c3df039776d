/* The reference's literal count of a split's and walk-forward windows'
 * bars (windows.c): by hand on a series with a hole, and the split's cut
 * equal to the library's binary search (sebt_series_cut) at every open
 * time, between them, before the first and after the last. */
#include <criterion/criterion.h>
#include <string.h>

#include "../ref.h"
#include "sebt/oos.h"

/* Minute bars 0..9, then a hole of 5 minutes, then 15..19: 15 bars. */
static int64_t ts[15];

static sebt_series holed(void)
{
    for (int i = 0; i < 15; i++)
        ts[i] = 60000 * (i < 10 ? i : i + 5);
    sebt_series s;
    memset(&s, 0, sizeof s);
    s.n = 15;
    s.ts = ts;
    s.interval_ms = 60000;
    return s;
}

Test(windows_literal, split_cut)
{
    sebt_series s = holed();
    cr_assert_eq(sebt_ref_split_cut(&s, 0), 0);
    cr_assert_eq(sebt_ref_split_cut(&s, 60000), 1);       /* the bar at 60000 is out of sample */
    cr_assert_eq(sebt_ref_split_cut(&s, 12 * 60000), 10); /* in the hole */
    cr_assert_eq(sebt_ref_split_cut(&s, 20 * 60000), 15);
    for (int64_t t = -60000; t <= 21 * 60000; t += 30000)
        cr_assert_eq(sebt_ref_split_cut(&s, t), sebt_series_cut(&s, t), "at %lld", (long long)t);
}

Test(windows_literal, walkforward)
{
    sebt_series s = holed();
    size_t e[8][4];
    /* Bars: train 6, test 3: windows from bars 0, 3 and 6 (the last ends at the series end, 15). */
    cr_assert_eq(sebt_ref_wf_windows(&s, 6, 3, false, 8, e), 3);
    cr_assert(e[0][0] == 0 && e[0][1] == 6 && e[0][2] == 6 && e[0][3] == 9);
    cr_assert(e[2][0] == 6 && e[2][1] == 12 && e[2][3] == 15);
    /* Time: train 6 minutes, test 4 from minute 0: window 0 trains on
     * minutes [0, 6), tests on [6, 10); window 1 trains on [4, 10), tests
     * on [10, 14), the hole: no bars; window 2 tests on [14, 18); window 3
     * on [18, 22), past the last bar's end (20): not whole. */
    cr_assert_eq(sebt_ref_wf_windows(&s, 6 * 60000, 4 * 60000, true, 8, e), 3);
    cr_assert(e[0][0] == 0 && e[0][1] == 6 && e[0][3] == 10);
    cr_assert(e[1][0] == 4 && e[1][1] == 10 && e[1][3] == 10);
    cr_assert(e[2][0] == 8 && e[2][1] == 10 && e[2][3] == 13);
    cr_assert_eq(sebt_ref_wf_windows(&s, 6 * 60000, 4 * 60000, true, 2, e), 2);   /* at most max */
}
