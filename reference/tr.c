/* SPEC §3 true range. */
#include <math.h>

#include "ref.h"

static double max2(double x, double y)
{
    return x > y ? x : y;
}

void sebt_ref_tr(const sebt_series *s, double *out)
{
    for (size_t t = 0; t < s->n; t++) {
        double h = s->high[t], l = s->low[t];
        if (isnan(h)) {                 /* missing bar */
            out[t] = NAN;
            continue;
        }
        double hl = h - l;
        if (t == 0 || isnan(s->close[t - 1])) {   /* no previous close */
            out[t] = hl;
            continue;
        }
        double pc = s->close[t - 1];
        out[t] = max2(max2(hl, fabs(h - pc)), fabs(l - pc));
    }
}
