/* Small hand-built series for the reference's SPEC tests. A bar is written
 * as {open, high, low, close, volume}; MISSING marks a hole (SPEC §1). */
#ifndef REF_FIXTURE_H
#define REF_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/sebt.h"

#define MISSING { NAN, NAN, NAN, NAN, NAN }
#define NBARS(a) (sizeof(a) / sizeof((a)[0]))

typedef double bar5[5];

static inline sebt_series make_series(const bar5 *bars, size_t n)
{
    sebt_series s;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_alloc(&s, n, &err), SEBT_OK, "%s", err.msg);
    for (size_t t = 0; t < n; t++) {
        s.ts[t] = 1500000000000 + (int64_t)t * 60000;
        s.open[t] = bars[t][0];
        s.high[t] = bars[t][1];
        s.low[t] = bars[t][2];
        s.close[t] = bars[t][3];
        s.volume[t] = bars[t][4];
    }
    return s;
}

/* Parameters that make a hand-worked case easy to follow: ema_fast = 1
 * (ema_f == close), ema_slow = 3 (a = b = 0.5), atr_window = 1 (ATR ==
 * TR), z_window = 2 (z of the newer value is +1 rising, -1 falling, NaN
 * equal: m = (x0+x1)/2, sd = |x1-x0|/2), no fees, no time limit. */
static inline sebt_params small_params(void)
{
    sebt_params p = sebt_params_default();
    p.ema_fast = 1;
    p.ema_slow = 3;
    p.z_window = 2;
    p.atr_window = 1;
    p.vol_z = 0.0;
    p.tr_z = 0.0;
    p.cloc_min = 0.5;
    p.atr_stop_mult = 0.5;
    p.reward_r = 2.0;
    p.max_hold = 1000;
    p.fee_bp = 0.0;
    p.slippage_bp = 0.0;
    return p;
}

/* Bit-for-bit equality, NaN equal to NaN: the reference is the contract. */
static inline int same_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

#define assert_column(col, expect, n)                                               \
    do {                                                                            \
        for (size_t i_ = 0; i_ < (n); i_++)                                         \
            cr_assert(same_double((col)[i_], (expect)[i_]),                         \
                      "%s[%zu] = %.17g, expected %.17g", #col, i_, (col)[i_],       \
                      (expect)[i_]);                                                \
    } while (0)

static inline void compute_features(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    sebt_error err = { 0 };
    cr_assert_eq(sebt_features_alloc(f, s->n, &err), SEBT_OK, "%s", err.msg);
    sebt_status st = sebt_reference_backend.features(&sebt_reference_backend, s, p, f, &err);
    cr_assert_eq(st, SEBT_OK, "features failed: %s", err.msg);
}

static inline sebt_result run_one(const sebt_series *s, const sebt_params *p)
{
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_error err = { 0 };
    sebt_batch_opts opts = { .want_trades = true };
    sebt_status st = sebt_reference_backend.run_batch(&sebt_reference_backend, s, p, 1, &opts, &r, &err);
    cr_assert_eq(st, SEBT_OK, "run_batch failed: %s", err.msg);
    return r;
}

#endif
