/* SPEC §3 EMA(span s) over close. */
#include <math.h>

#include "ref.h"

void sebt_ref_ema(const double *close, size_t n, int32_t span, double *out)
{
    /* (double)span + 1.0 rather than span + 1: the same value for every
     * valid span, and no int overflow at INT32_MAX. */
    double a = 2.0 / ((double)span + 1.0);
    double b = 1.0 - a;
    double y = NAN;
    int seeded = 0;

    for (size_t t = 0; t < n; t++) {
        if (isnan(close[t])) {          /* missing: y unchanged, output NaN */
            out[t] = NAN;
            continue;
        }
        if (!seeded) {                  /* first present bar: y = close */
            y = close[t];
            seeded = 1;
        } else {
            y = a * close[t] + b * y;
        }
        out[t] = y;
    }
}
