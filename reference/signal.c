/* SPEC §3-5 for one combo: the indicator columns, the signal, the valid bars. */
#include <math.h>

#include "ref.h"

/* Below this many bars a column is not worth handing out in pieces. */
#define ZSCORE_PIECE_BARS 1024

/* Z(x, w) over n bars: in one piece, or in pieces taken by `threads`
 * threads; sebt_ref_zscore_bars computes every bar either way. */
static void zscore_column(const double *x, size_t n, int32_t w, double *out, int threads)
{
    size_t pieces = threads > 1 ? 4 * (size_t)threads : 1;
    if (pieces == 1 || n < pieces * ZSCORE_PIECE_BARS) {
        sebt_ref_zscore(x, n, w, out);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (size_t k = 0; k < pieces; k++)
        sebt_ref_zscore_bars(x, w, n / pieces * k, k + 1 == pieces ? n : n / pieces * (k + 1), out);
}

static void indicators(const sebt_series *s, const sebt_params *p, sebt_features *f, int threads)
{
    size_t n = s->n;

    sebt_ref_ema(s->close, n, p->ema_fast, f->ema_f);
    sebt_ref_ema(s->close, n, p->ema_slow, f->ema_s);
    sebt_ref_tr(s, f->tr);
    sebt_ref_atr(f->tr, n, p->atr_window, f->atr);
    zscore_column(s->volume, n, p->z_window, f->vol_z, threads);
    zscore_column(f->atr, n, p->z_window, f->tr_z, threads);
    sebt_ref_cloc(s, f->cloc);
    sebt_ref_rsi(s, p->rsi_window, f->rsi);
}

void sebt_ref_indicators(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    indicators(s, p, f, 1);
}

void sebt_ref_signal_terms(const sebt_features *f, const sebt_params *p, size_t t,
                           bool holds[SEBT_REF_SIGNAL_TERMS], double lhs[SEBT_REF_SIGNAL_TERMS],
                           double rhs[SEBT_REF_SIGNAL_TERMS])
{
    lhs[0] = f->ema_s[t]; rhs[0] = f->ema_f[t];     /* ema_f < ema_s */
    lhs[1] = f->vol_z[t]; rhs[1] = p->vol_z;        /* vol_z > vol_z threshold */
    lhs[2] = f->tr_z[t];  rhs[2] = p->tr_z;         /* tr_z > tr_z threshold */
    lhs[3] = f->cloc[t];  rhs[3] = p->cloc_min;     /* cloc > cloc_min */
    for (int i = 0; i < 4; i++)
        holds[i] = lhs[i] > rhs[i];                 /* false with a NaN, as C's > is */
    if (p->use_rsi) {
        lhs[4] = p->rsi_max; rhs[4] = f->rsi[t];    /* rsi <= rsi_max */
        holds[4] = lhs[4] >= rhs[4];
    } else {
        lhs[4] = rhs[4] = NAN;                      /* RSI plays no part */
        holds[4] = true;
    }
}

void sebt_ref_decide_bars(sebt_features *f, const sebt_params *p)
{
    for (size_t t = 0; t < f->n; t++) {
        /* SPEC §4: every term holds; a comparison with NaN is false. */
        bool holds[SEBT_REF_SIGNAL_TERMS];
        double lhs[SEBT_REF_SIGNAL_TERMS], rhs[SEBT_REF_SIGNAL_TERMS];
        sebt_ref_signal_terms(f, p, t, holds, lhs, rhs);
        f->signal[t] = holds[0] && holds[1] && holds[2] && holds[3] && holds[4];
        /* SPEC §5: valid iff ATR is defined. */
        f->valid[t] = !isnan(f->atr[t]);
    }
}

void sebt_ref_compute(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    sebt_ref_compute_threads(s, p, f, 1);
}

void sebt_ref_compute_threads(const sebt_series *s, const sebt_params *p, sebt_features *f, int threads)
{
    indicators(s, p, f, threads);
    sebt_ref_decide_bars(f, p);
}
