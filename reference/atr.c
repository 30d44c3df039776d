/* SPEC §3 ATR(w): the mean of TR over bars t-w+1..t. */
#include <math.h>

#include "ref.h"

void sebt_ref_atr(const double *tr, size_t n, int32_t w, double *out)
{
    size_t ws = (size_t)w;
    for (size_t t = 0; t < n; t++) {
        out[t] = NAN;
        if (t + 1 < ws)                 /* t < w-1: not enough bars yet */
            continue;
        /* Naive on purpose: the window is summed afresh, oldest first. */
        double sum = 0.0;
        int hole = 0;
        for (size_t i = t + 1 - ws; i <= t; i++) {
            if (isnan(tr[i])) {
                hole = 1;
                break;
            }
            sum += tr[i];
        }
        if (!hole)
            out[t] = sum / (double)w;
    }
}
