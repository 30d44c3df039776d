/* SPEC §3 Z(x, w): the z-score of x[t] within its own trailing window. */
#include <math.h>

#include "ref.h"

static double window_z(const double *x, size_t from, size_t t, int32_t w)
{
    double sum = 0.0;
    for (size_t i = from; i <= t; i++)
        sum += x[i];
    /* A NaN in the window leaves the sum NaN, so only then is it looked
     * for (a NaN sum can also come of inf - inf, which goes on below). */
    if (isnan(sum))
        for (size_t i = from; i <= t; i++)
            if (isnan(x[i]))
                return NAN;

    /* A flat window has no spike (SPEC): compared exactly, and the first
     * value that differs settles it. */
    size_t differs = from + 1;
    while (differs <= t && x[differs] == x[from])
        differs++;
    if (differs > t)
        return NAN;

    double m = sum / (double)w;

    double ss = 0.0;
    for (size_t i = from; i <= t; i++)
        ss += (x[i] - m) * (x[i] - m);
    double var = ss / (double)w;

    /* Values that differ by less than rounding can still give var == 0
     * (the squares underflow). Such a window is flat for every practical
     * purpose, so it is NaN like a flat one, not +-inf. */
    if (var == 0.0)
        return NAN;
    return (x[t] - m) / sqrt(var);
}

void sebt_ref_zscore_bars(const double *x, int32_t w, size_t from, size_t to, double *out)
{
    size_t ws = (size_t)w;
    for (size_t t = from; t < to; t++)
        out[t] = t + 1 < ws ? NAN : window_z(x, t + 1 - ws, t, w);
}

void sebt_ref_zscore(const double *x, size_t n, int32_t w, double *out)
{
    sebt_ref_zscore_bars(x, w, 0, n, out);
}
