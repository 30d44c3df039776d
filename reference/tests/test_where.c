/* The reference's literal reading of a `--where` condition (where.c):
 * worked by hand on the language's corners (NaN, `!=`, `not`, precedence,
 * booleans, a leading minus), and equal to the sweep's compiled condition
 * (core/where.c) on every row of many conditions over rows drawn at random,
 * NaN and ties included. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../ref.h"
#include "sebt/where.h"

static const char *const names[] = { "n", "sharpe", "max_dd", "use_tp", "profit_factor", "ema_fast" };
static const bool is_bool[] = { false, false, false, true, false, false };
#define N_COLS (sizeof names / sizeof names[0])

static int decide(const char *text, const double *values)
{
    sebt_ref_row row = { names, values, N_COLS };
    char why[160] = "";
    int d = sebt_ref_where(text, &row, why, sizeof why);
    cr_assert(d >= 0, "'%s' does not read: %s", text, why);
    return d;
}

Test(where_literal, by_hand)
{
    const double v[N_COLS] = { 30, -0.25, -0.1, 1, NAN, 24 };
    cr_assert_eq(decide("n >= 30", v), 1);
    cr_assert_eq(decide("n > 30", v), 0);
    cr_assert_eq(decide("n <= 30 and n == 30 and n != 31", v), 1);
    cr_assert_eq(decide("sharpe > -0.3 and max_dd >= -1e-1", v), 1);
    cr_assert_eq(decide("profit_factor > 1", v), 0);     /* NaN compares false */
    cr_assert_eq(decide("profit_factor != 1", v), 0);    /* != too */
    cr_assert_eq(decide("not profit_factor < 1", v), 1);
    cr_assert_eq(decide("use_tp", v), 1);
    cr_assert_eq(decide("use_tp == false or n < 5", v), 0);
    cr_assert_eq(decide("n < 5 or n > 10 and ema_fast == 24", v), 1);     /* and binds tighter */
    cr_assert_eq(decide("(n < 5 or n > 10) and ema_fast == 12", v), 0);
    cr_assert_eq(decide("not not (n == 30)", v), 1);
    cr_assert_eq(decide("(n > 1) == true", v), 1);
    cr_assert_eq(decide(" n>=30\tand ema_fast<.5e2 ", v), 1);
    sebt_ref_row row = { names, v, N_COLS };
    char why[160];
    cr_assert_eq(sebt_ref_where("n >= ", &row, why, sizeof why), -1);
    cr_assert_eq(sebt_ref_where("trades > 3", &row, why, sizeof why), -1);
    cr_assert_eq(sebt_ref_where("1 < n < 5", &row, why, sizeof why), -1);
    cr_assert_eq(sebt_ref_where("(n > 1", &row, why, sizeof why), -1);
}

static uint64_t next_u64(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

Test(where_literal, equals_the_compiled_condition)
{
    static const char *const conds[] = {
        "n >= 30", "n > 30", "n <= 30", "n < 30", "n == 30", "n != 30",
        "sharpe >= 0 and max_dd > -0.2", "profit_factor > 1.5 or use_tp == false",
        "not (n >= 10 and sharpe < 0.1)", "not profit_factor >= 1", "use_tp", "not use_tp",
        "use_tp != true or ema_fast >= 24 and n < 40", "(use_tp or n > 35) and not (sharpe <= -0.5)",
        "-0.5 < sharpe", "ema_fast == 24 and profit_factor != 2", "max_dd >= -1e-1 or 30 <= n",
        "((n > 20)) == (sharpe > 0)",
    };
    uint64_t x = 0x2545f4914f6cdd1du;
    for (size_t c = 0; c < sizeof conds / sizeof conds[0]; c++) {
        sebt_where *w;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_where_compile(conds[c], names, is_bool, N_COLS, &w, &err), SEBT_OK, "%s", err.msg);
        for (int k = 0; k < 2000; k++) {
            /* Values near the conditions' bounds, ties on them, NaN now and then. */
            double v[N_COLS] = { (double)(25 + next_u64(&x) % 15), ((double)(next_u64(&x) % 21) - 10) / 20,
                                 -((double)(next_u64(&x) % 5)) / 10, (double)(next_u64(&x) % 2),
                                 (double)(next_u64(&x) % 9) / 4, (double)(12 * (next_u64(&x) % 3)) };
            if (next_u64(&x) % 7 == 0)
                v[1 + next_u64(&x) % 2] = NAN;
            if (next_u64(&x) % 3 == 0)
                v[4] = NAN;
            cr_assert_eq(decide(conds[c], v), sebt_where_eval(w, v), "'%s' on row %d", conds[c], k);
        }
        sebt_where_free(w);
    }
}
