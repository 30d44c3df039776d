/* SPEC §3 close location within the bar's range. */
#include <math.h>

#include "ref.h"

void sebt_ref_cloc(const sebt_series *s, double *out)
{
    for (size_t t = 0; t < s->n; t++) {
        double h = s->high[t], l = s->low[t];
        if (isnan(h) || h == l)         /* missing, or no range to locate in */
            out[t] = NAN;
        else
            out[t] = (s->close[t] - l) / (h - l);
    }
}
