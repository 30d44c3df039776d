/* The fast_cpu backend's table and its features(): the columns of one
 * combo through the same functions a sweep uses (indicators.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast_cpu_internal.h"

static sebt_status fast_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                 sebt_features *out, sebt_error *err)
{
    (void)self;
    sebt_status st = sebt_features_check("fast_cpu", s, p, out, err);
    if (st != SEBT_OK)
        return st;
    size_t n = s->n;
    sebt_k_ema(s->close, (int64_t)n, p->ema_fast, out->ema_f);
    sebt_k_ema(s->close, (int64_t)n, p->ema_slow, out->ema_s);
    fast_tr_column(s, out->tr);
    fast_atr_range(out->tr, n, p->atr_window, 0, n, out->atr);
    fast_zscore_exact(s->volume, n, p->z_window, out->vol_z);
    fast_zscore_exact(out->atr, n, p->z_window, out->tr_z);
    fast_cloc_column(s, out->cloc);
    /* A filter's column for every bar: fast_filter_column_<column>, many
     * bars side by side with the bits of sebt_k_filter_<column>. */
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
    fast_filter_column_##column(s, p->window, out->column);
#include "sebt/strategy.def"
    for (size_t t = 0; t < n; t++) {
        out->signal[t] = sebt_k_signal_at((const double *const *)out->col, (int64_t)t, p);
        out->valid[t] = !isnan(out->atr[t]);
    }
    return SEBT_OK;
}

const sebt_backend sebt_fast_cpu_backend = {
    .name = "fast_cpu",
    .description = "OpenMP sweeps: shared indicator series, exact z-scores, tree-searched exits",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = fast_features,
    .run_batch = fast_run_batch,
    .state = NULL,
};
