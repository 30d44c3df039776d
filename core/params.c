#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"

#define P(name, type) { #name, type, offsetof(sebt_params, name) }
const sebt_param_info sebt_param_table[SEBT_N_PARAMS] = {
    P(ema_fast, SEBT_PARAM_INT),
    P(ema_slow, SEBT_PARAM_INT),
    P(z_window, SEBT_PARAM_INT),
    P(atr_window, SEBT_PARAM_INT),
    P(vol_z, SEBT_PARAM_DOUBLE),
    P(tr_z, SEBT_PARAM_DOUBLE),
    P(cloc_min, SEBT_PARAM_DOUBLE),
    P(use_stop, SEBT_PARAM_BOOL),
    P(atr_stop_mult, SEBT_PARAM_DOUBLE),
    P(use_tp, SEBT_PARAM_BOOL),
    P(reward_r, SEBT_PARAM_DOUBLE),
    P(use_time, SEBT_PARAM_BOOL),
    P(max_hold, SEBT_PARAM_INT),
    P(fee_bp, SEBT_PARAM_DOUBLE),
    P(slippage_bp, SEBT_PARAM_DOUBLE),
};
#undef P

sebt_params sebt_params_default(void)
{
    sebt_params p = {
        .ema_fast = 96, .ema_slow = 672, .z_window = 672, .atr_window = 96,
        .vol_z = 2.0, .tr_z = 1.2, .cloc_min = 0.6,
        .use_stop = true, .atr_stop_mult = 0.7,
        .use_tp = true, .reward_r = 2.0,
        .use_time = true, .max_hold = 96,
        .fee_bp = 5.0, .slippage_bp = 5.0,
    };
    return p;
}

int sebt_param_index(const char *name)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        if (strcmp(sebt_param_table[i].name, name) == 0)
            return i;
    return -1;
}

static void list_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < SEBT_N_PARAMS && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", sebt_param_table[i].name);
}

sebt_status sebt_params_set(sebt_params *p, const char *name, const char *value, sebt_error *err)
{
    int i = sebt_param_index(name);
    if (i < 0) {
        char names[400];
        list_names(names, sizeof names);
        return sebt_fail(err, SEBT_ERR_PARAM, "unknown parameter '%s' (valid: %s)", name, names);
    }
    const sebt_param_info *info = &sebt_param_table[i];
    char *at = (char *)p + info->offset;
    char *end = NULL;
    errno = 0;
    switch (info->type) {
    case SEBT_PARAM_INT: {
        long v = strtol(value, &end, 10);
        if (end == value || *end != '\0' || errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
            return sebt_fail(err, SEBT_ERR_PARAM, "parameter %s: expected a whole number of bars, got '%s'",
                             name, value);
        int32_t iv = (int32_t)v;
        memcpy(at, &iv, sizeof iv);
        break;
    }
    case SEBT_PARAM_DOUBLE: {
        double v = strtod(value, &end);
        if (end == value || *end != '\0')
            return sebt_fail(err, SEBT_ERR_PARAM, "parameter %s: expected a number, got '%s'", name, value);
        memcpy(at, &v, sizeof v);
        break;
    }
    case SEBT_PARAM_BOOL: {
        bool v;
        if (strcmp(value, "true") == 0)
            v = true;
        else if (strcmp(value, "false") == 0)
            v = false;
        else
            return sebt_fail(err, SEBT_ERR_PARAM, "parameter %s: expected true or false, got '%s'", name, value);
        memcpy(at, &v, sizeof v);
        break;
    }
    }
    return SEBT_OK;
}

static sebt_status bad(sebt_error *err, const char *name, const char *rule, double v)
{
    return sebt_fail(err, SEBT_ERR_PARAM, "parameter %s = %.17g breaks its rule: %s", name, v, rule);
}

sebt_status sebt_params_validate(const sebt_params *p, sebt_error *err)
{
    if (p->ema_fast < 1) return bad(err, "ema_fast", "must be >= 1", p->ema_fast);
    if (p->ema_slow < 1) return bad(err, "ema_slow", "must be >= 1", p->ema_slow);
    if (p->z_window < 2) return bad(err, "z_window", "must be >= 2", p->z_window);
    if (p->atr_window < 1) return bad(err, "atr_window", "must be >= 1", p->atr_window);
    if (!isfinite(p->vol_z)) return bad(err, "vol_z", "must be finite", p->vol_z);
    if (!isfinite(p->tr_z)) return bad(err, "tr_z", "must be finite", p->tr_z);
    if (!isfinite(p->cloc_min)) return bad(err, "cloc_min", "must be finite", p->cloc_min);
    if (!isfinite(p->atr_stop_mult) || p->atr_stop_mult < 0)
        return bad(err, "atr_stop_mult", "must be finite and >= 0", p->atr_stop_mult);
    if (!isfinite(p->reward_r) || !(p->reward_r > 0))
        return bad(err, "reward_r", "must be finite and > 0", p->reward_r);
    if (p->max_hold < 1) return bad(err, "max_hold", "must be >= 1", p->max_hold);
    if (!isfinite(p->fee_bp) || p->fee_bp < 0) return bad(err, "fee_bp", "must be finite and >= 0", p->fee_bp);
    if (!isfinite(p->slippage_bp) || p->slippage_bp < 0)
        return bad(err, "slippage_bp", "must be finite and >= 0", p->slippage_bp);
    return SEBT_OK;
}

void sebt_params_format(const sebt_params *p, int idx, char *buf, size_t bufsize)
{
    const sebt_param_info *info = &sebt_param_table[idx];
    const char *at = (const char *)p + info->offset;
    switch (info->type) {
    case SEBT_PARAM_INT: {
        int32_t v;
        memcpy(&v, at, sizeof v);
        snprintf(buf, bufsize, "%d", (int)v);
        break;
    }
    case SEBT_PARAM_DOUBLE: {
        double v;
        memcpy(&v, at, sizeof v);
        snprintf(buf, bufsize, "%.17g", v);
        break;
    }
    case SEBT_PARAM_BOOL: {
        bool v;
        memcpy(&v, at, sizeof v);
        snprintf(buf, bufsize, "%s", v ? "true" : "false");
        break;
    }
    }
}

double sebt_params_get_double(const sebt_params *p, int idx)
{
    const sebt_param_info *info = &sebt_param_table[idx];
    const char *at = (const char *)p + info->offset;
    switch (info->type) {
    case SEBT_PARAM_INT: { int32_t v; memcpy(&v, at, sizeof v); return v; }
    case SEBT_PARAM_DOUBLE: { double v; memcpy(&v, at, sizeof v); return v; }
    case SEBT_PARAM_BOOL: { bool v; memcpy(&v, at, sizeof v); return v ? 1.0 : 0.0; }
    }
    return 0.0;
}
