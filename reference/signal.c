/* SPEC §3-5 for one combo: the indicator columns, the signal, the valid bars. */
#include <math.h>

#include "ref.h"

void sebt_ref_indicators(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    size_t n = s->n;

    sebt_ref_ema(s->close, n, p->ema_fast, f->ema_f);
    sebt_ref_ema(s->close, n, p->ema_slow, f->ema_s);
    sebt_ref_tr(s, f->tr);
    sebt_ref_atr(f->tr, n, p->atr_window, f->atr);
    sebt_ref_zscore(s->volume, n, p->z_window, f->vol_z);
    sebt_ref_zscore(f->atr, n, p->z_window, f->tr_z);
    sebt_ref_cloc(s, f->cloc);
}

void sebt_ref_signal_terms(const sebt_features *f, const sebt_params *p, size_t t,
                           double lhs[SEBT_REF_SIGNAL_TERMS], double rhs[SEBT_REF_SIGNAL_TERMS])
{
    lhs[0] = f->ema_s[t]; rhs[0] = f->ema_f[t];     /* ema_f < ema_s */
    lhs[1] = f->vol_z[t]; rhs[1] = p->vol_z;        /* vol_z > vol_z threshold */
    lhs[2] = f->tr_z[t];  rhs[2] = p->tr_z;         /* tr_z > tr_z threshold */
    lhs[3] = f->cloc[t];  rhs[3] = p->cloc_min;     /* cloc > cloc_min */
}

void sebt_ref_decide_bars(sebt_features *f, const sebt_params *p)
{
    for (size_t t = 0; t < f->n; t++) {
        /* SPEC §4: all four hold; a comparison with NaN is false, as C's are. */
        double lhs[SEBT_REF_SIGNAL_TERMS], rhs[SEBT_REF_SIGNAL_TERMS];
        sebt_ref_signal_terms(f, p, t, lhs, rhs);
        f->signal[t] = lhs[0] > rhs[0] && lhs[1] > rhs[1] && lhs[2] > rhs[2] && lhs[3] > rhs[3];
        /* SPEC §5: valid iff ATR is defined. */
        f->valid[t] = !isnan(f->atr[t]);
    }
}

void sebt_ref_compute(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    sebt_ref_indicators(s, p, f);
    sebt_ref_decide_bars(f, p);
}
