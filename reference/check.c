/* SPEC §1 and §2 checked by the reference itself. It calls no core code on
 * purpose: the reference is what everything else is judged against, so a
 * bug in core (the parameter table, the error formatter, the series check)
 * must not be able to hide in it too. These are therefore its own literal
 * copies of the rules and its own error formatter (sebt_ref_fail); the
 * copy of SPEC §2 is held to core's table by reference/tests/
 * test_param_rules.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "ref.h"

sebt_status sebt_ref_fail(sebt_error *err, sebt_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

static sebt_status bad_int(sebt_error *err, size_t i, const char *name, int32_t v, const char *rule)
{
    return sebt_ref_fail(err, SEBT_ERR_PARAM, "combo %zu: parameter %s = %d breaks its rule: %s",
                         i, name, (int)v, rule);
}

static sebt_status bad_double(sebt_error *err, size_t i, const char *name, double v, const char *rule)
{
    return sebt_ref_fail(err, SEBT_ERR_PARAM, "combo %zu: parameter %s = %.17g breaks its rule: %s",
                         i, name, v, rule);
}

/* The table of SPEC §2, row by row. */
sebt_status sebt_ref_check_params(const sebt_params *p, size_t i, sebt_error *err)
{
    if (!(p->ema_fast >= 1)) return bad_int(err, i, "ema_fast", p->ema_fast, "must be >= 1");
    if (!(p->ema_slow >= 1)) return bad_int(err, i, "ema_slow", p->ema_slow, "must be >= 1");
    if (!(p->z_window >= 2)) return bad_int(err, i, "z_window", p->z_window, "must be >= 2");
    if (!(p->atr_window >= 1)) return bad_int(err, i, "atr_window", p->atr_window, "must be >= 1");
    if (!isfinite(p->vol_z)) return bad_double(err, i, "vol_z", p->vol_z, "must be finite");
    if (!isfinite(p->tr_z)) return bad_double(err, i, "tr_z", p->tr_z, "must be finite");
    if (!isfinite(p->cloc_min)) return bad_double(err, i, "cloc_min", p->cloc_min, "must be finite");
    if (!isfinite(p->atr_stop_mult) || !(p->atr_stop_mult >= 0))
        return bad_double(err, i, "atr_stop_mult", p->atr_stop_mult, "must be finite and >= 0");
    if (!isfinite(p->reward_r) || !(p->reward_r > 0))
        return bad_double(err, i, "reward_r", p->reward_r, "must be finite and > 0");
    if (!(p->max_hold >= 1)) return bad_int(err, i, "max_hold", p->max_hold, "must be >= 1");
    if (!isfinite(p->fee_bp) || !(p->fee_bp >= 0))
        return bad_double(err, i, "fee_bp", p->fee_bp, "must be finite and >= 0");
    if (!isfinite(p->slippage_bp) || !(p->slippage_bp >= 0))
        return bad_double(err, i, "slippage_bp", p->slippage_bp, "must be finite and >= 0");
    if (!(p->rsi_window >= 1)) return bad_int(err, i, "rsi_window", p->rsi_window, "must be >= 1");
    if (!isfinite(p->rsi_max)) return bad_double(err, i, "rsi_max", p->rsi_max, "must be finite");
    return SEBT_OK;
}

static int bar_missing(const sebt_series *s, size_t t)
{
    return isnan(s->open[t]) && isnan(s->high[t]) && isnan(s->low[t]) &&
           isnan(s->close[t]) && isnan(s->volume[t]);
}

static int bar_present(const sebt_series *s, size_t t)
{
    double o = s->open[t], h = s->high[t], l = s->low[t], c = s->close[t], v = s->volume[t];
    if (!isfinite(o) || !isfinite(h) || !isfinite(l) || !isfinite(c) || !isfinite(v))
        return 0;
    double lo = o < c ? o : c, hi = o > c ? o : c;
    return l <= lo && h >= hi && l >= 0 && v >= 0;
}

/* The indicators assume every bar is wholly present or wholly missing; a
 * half-NaN bar would leak into them silently, so it is refused here. */
sebt_status sebt_ref_check_series(const sebt_series *s, sebt_error *err)
{
    if (s->n && (!s->ts || !s->open || !s->high || !s->low || !s->close || !s->volume))
        return sebt_ref_fail(err, SEBT_ERR_USAGE, "reference: series of %zu bars has a NULL column", s->n);
    for (size_t t = 0; t < s->n; t++) {
        if (t > 0 && !(s->ts[t] > s->ts[t - 1]))
            return sebt_ref_fail(err, SEBT_ERR_INPUT,
                                 "reference: bar %zu: timestamp %lld is not after bar %zu's %lld",
                                 t, (long long)s->ts[t], t - 1, (long long)s->ts[t - 1]);
        if (!bar_present(s, t) && !bar_missing(s, t))
            return sebt_ref_fail(err, SEBT_ERR_INPUT,
                                 "reference: bar %zu (ts %lld) is neither present nor missing (SPEC §1): "
                                 "open=%.17g high=%.17g low=%.17g close=%.17g volume=%.17g",
                                 t, (long long)s->ts[t], s->open[t], s->high[t], s->low[t],
                                 s->close[t], s->volume[t]);
    }
    return SEBT_OK;
}
