/* SPEC §3-5 for one combo: the indicator columns, the signal, the valid bars. */
#include <math.h>

#include "ref.h"

void sebt_ref_compute(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    size_t n = s->n;

    sebt_ref_ema(s->close, n, p->ema_fast, f->ema_f);
    sebt_ref_ema(s->close, n, p->ema_slow, f->ema_s);
    sebt_ref_tr(s, f->tr);
    sebt_ref_atr(f->tr, n, p->atr_window, f->atr);
    sebt_ref_zscore(s->volume, n, p->z_window, f->vol_z);
    sebt_ref_zscore(f->atr, n, p->z_window, f->tr_z);
    sebt_ref_cloc(s, f->cloc);

    for (size_t t = 0; t < n; t++) {
        /* SPEC §4: a comparison with NaN is false, as C's are. */
        f->signal[t] = f->ema_f[t] < f->ema_s[t] &&
                       f->vol_z[t] > p->vol_z &&
                       f->tr_z[t] > p->tr_z &&
                       f->cloc[t] > p->cloc_min;
        /* SPEC §5: valid iff ATR is defined. */
        f->valid[t] = !isnan(f->atr[t]);
    }
}
