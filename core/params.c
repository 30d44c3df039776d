#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/number.h"

#define P(name, type, min, excluded) { #name, type, offsetof(sebt_params, name), min, excluded }
const sebt_param_info sebt_param_table[SEBT_N_PARAMS] = {
    P(ema_fast, SEBT_PARAM_INT, 1, false),
    P(ema_slow, SEBT_PARAM_INT, 1, false),
    P(z_window, SEBT_PARAM_INT, 2, false),
    P(atr_window, SEBT_PARAM_INT, 1, false),
    P(vol_z, SEBT_PARAM_DOUBLE, -INFINITY, false),
    P(tr_z, SEBT_PARAM_DOUBLE, -INFINITY, false),
    P(cloc_min, SEBT_PARAM_DOUBLE, -INFINITY, false),
    P(use_stop, SEBT_PARAM_BOOL, -INFINITY, false),
    P(atr_stop_mult, SEBT_PARAM_DOUBLE, 0, false),
    P(use_tp, SEBT_PARAM_BOOL, -INFINITY, false),
    P(reward_r, SEBT_PARAM_DOUBLE, 0, true),
    P(use_time, SEBT_PARAM_BOOL, -INFINITY, false),
    P(max_hold, SEBT_PARAM_INT, 1, false),
    P(fee_bp, SEBT_PARAM_DOUBLE, 0, false),
    P(slippage_bp, SEBT_PARAM_DOUBLE, 0, false),
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
        const char *known[SEBT_N_PARAMS];
        for (int k = 0; k < SEBT_N_PARAMS; k++)
            known[k] = sebt_param_table[k].name;
        int near = sebt_nearest_name(name, known, SEBT_N_PARAMS);
        if (near >= 0)
            return sebt_fail(err, SEBT_ERR_PARAM, "unknown parameter '%s': did you mean %s? (valid: %s)", name,
                             known[near], names);
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

void sebt_param_rule(int idx, char *buf, size_t bufsize)
{
    const sebt_param_info *info = &sebt_param_table[idx];
    const char *finite = info->type == SEBT_PARAM_DOUBLE ? "finite" : "";
    if (isinf(info->min))
        snprintf(buf, bufsize, "%s", info->type == SEBT_PARAM_DOUBLE ? "must be finite" : "");
    else
        snprintf(buf, bufsize, "must be %s%s%s %g", finite, *finite ? " and " : "",
                 info->min_excluded ? ">" : ">=", info->min);
}

sebt_status sebt_params_validate(const sebt_params *p, sebt_error *err)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const sebt_param_info *info = &sebt_param_table[i];
        if (info->type == SEBT_PARAM_BOOL)
            continue;
        double v = sebt_params_get_double(p, i);
        bool ok = (info->type != SEBT_PARAM_DOUBLE || isfinite(v)) &&
                  (info->min_excluded ? v > info->min : v >= info->min);
        if (!ok) {
            char rule[64];
            sebt_param_rule(i, rule, sizeof rule);
            return sebt_fail(err, SEBT_ERR_PARAM, "parameter %s = %.17g breaks its rule: %s", info->name,
                             v, rule);
        }
    }
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
        char num[SEBT_DOUBLE_CHARS];
        sebt_format_double(v, num);
        snprintf(buf, bufsize, "%s", num);
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
