#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/number.h"

const sebt_param_info sebt_param_table[SEBT_N_PARAMS] = {
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) \
    { #name, SEBT_PARAM_##kind, offsetof(sebt_params, name), min, min_excluded, def, SEBT_ROLE_##role },
#include "sebt/strategy.def"
};

/* A parameter's C type is the one its kind reads and writes. */
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) \
    _Static_assert(sizeof(((sebt_params *)0)->name) == sizeof(ctype) && \
                   (SEBT_PARAM_##kind != SEBT_PARAM_INT || sizeof(ctype) == sizeof(int32_t)) && \
                   (SEBT_PARAM_##kind != SEBT_PARAM_BOOL || sizeof(ctype) == sizeof(bool)), #name);
#include "sebt/strategy.def"

/* SPEC §6's chain: the exit rules in order are sebt_exit_reason's values,
 * each switched by a boolean parameter. */
enum {
#define SEBT_EXIT(name, enable) EXIT_ORDER_##name,
#include "sebt/strategy.def"
    EXIT_RULES
};
_Static_assert(EXIT_RULES == SEBT_EXIT_KINDS, "strategy.def's exit rules are sebt_exit_reason's");
#define SEBT_EXIT(name, enable) \
    _Static_assert((int)EXIT_ORDER_##name == (int)SEBT_EXIT_##name, #name " out of chain order"); \
    _Static_assert(sizeof(((sebt_params *)0)->enable) == sizeof(bool), #enable " is a switch");
#include "sebt/strategy.def"

sebt_params sebt_params_default(void)
{
    sebt_params p = {
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) .name = def,
#include "sebt/strategy.def"
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

/* Whether value v of a parameter of kind INT, DOUBLE or BOOL keeps its
 * rule (sebt/strategy.def: >= min, or > min where min_excluded; a double
 * finite; a bool always). */
static inline bool param_ok_INT(double v, double min, bool min_excluded)
{
    return min_excluded ? v > min : v >= min;
}

static inline bool param_ok_DOUBLE(double v, double min, bool min_excluded)
{
    return isfinite(v) && param_ok_INT(v, min, min_excluded);
}

static inline bool param_ok_BOOL(double v, double min, bool min_excluded)
{
    (void)v;
    (void)min;
    (void)min_excluded;
    return true;
}

static sebt_status param_broken(int i, double v, sebt_error *err)
{
    char rule[64];
    sebt_param_rule(i, rule, sizeof rule);
    return sebt_fail(err, SEBT_ERR_PARAM, "parameter %s = %.17g breaks its rule: %s", sebt_param_table[i].name, v,
                     rule);
}

sebt_status sebt_params_validate(const sebt_params *p, sebt_error *err)
{
    /* Field by field from the declaration: every combo of a sweep is
     * checked, and a lookup per field cost it a few percent. */
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role)      \
    if (!param_ok_##kind((double)p->name, min, min_excluded)) \
        return param_broken(SEBT_PI_##name, (double)p->name, err);
#include "sebt/strategy.def"
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

bool sebt_params_same(const sebt_params *a, const sebt_params *b)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        double x = sebt_params_get_double(a, i), y = sebt_params_get_double(b, i);
        if (memcmp(&x, &y, sizeof x) != 0 && !(isnan(x) && isnan(y)))
            return false;
    }
    return true;
}
