/* SPEC §3 RSI(w): simple means of gains and losses (Cutler's form). */
#include <math.h>

#include "ref.h"

/* Bar t's gain and loss: false where undefined (t == 0, or bar t or bar
 * t-1 missing). */
static bool change_at(const sebt_series *s, size_t t, double *gain, double *loss)
{
    if (t == 0 || isnan(s->close[t]) || isnan(s->close[t - 1]))
        return false;
    double d = s->close[t] - s->close[t - 1];
    *gain = d > 0 ? d : 0.0;
    *loss = d < 0 ? -d : 0.0;
    return true;
}

void sebt_ref_rsi(const sebt_series *s, int32_t w, double *out)
{
    size_t ws = (size_t)w;
    for (size_t t = 0; t < s->n; t++) {
        out[t] = NAN;
        if (t + 1 < ws)                 /* t < w-1: not enough bars yet */
            continue;
        /* Naive on purpose: the window is summed afresh, oldest first. */
        double gains = 0.0, losses = 0.0;
        int hole = 0;
        for (size_t i = t + 1 - ws; i <= t; i++) {
            double g, l;
            if (!change_at(s, i, &g, &l)) {
                hole = 1;
                break;
            }
            gains += g;
            losses += l;
        }
        if (hole)
            continue;
        double G = gains / (double)w, L = losses / (double)w;
        if (G + L == 0)                 /* no movement, no reading */
            continue;
        out[t] = (100.0 * G) / (G + L);
    }
}
