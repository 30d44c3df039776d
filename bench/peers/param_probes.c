/* The values that tell SPEC §2's rules apart, from the one table
 * (sebt_param_table), each with the verdict sebt_params_validate gives it:
 * "name value ok|refused" per line. bench/peers/test_numba_param_rules.sh
 * feeds them to the numba peer, which keeps its own copy of the rules. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sebt/sebt.h"

static void probe(int i, double v)
{
    const sebt_param_info *info = &sebt_param_table[i];
    sebt_params p = sebt_params_default();
    char text[64];
    if (info->type == SEBT_PARAM_INT)
        snprintf(text, sizeof text, "%d", (int)v);
    else if (isnan(v))
        snprintf(text, sizeof text, "nan");
    else if (isinf(v))
        snprintf(text, sizeof text, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(text, sizeof text, "%.17g", v);
    sebt_error err = { 0 };
    if (sebt_params_set(&p, info->name, text, &err) != SEBT_OK)
        return;     /* not a value of its type: no rule to compare */
    printf("%s %s %s\n", info->name, text, sebt_params_validate(&p, &err) == SEBT_OK ? "ok" : "refused");
}

int main(void)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const sebt_param_info *info = &sebt_param_table[i];
        if (info->type == SEBT_PARAM_BOOL)
            continue;
        probe(i, 0.0);
        probe(i, 1e9);
        if (info->type == SEBT_PARAM_DOUBLE) {
            probe(i, INFINITY);
            probe(i, -INFINITY);
            probe(i, NAN);
        }
        if (isfinite(info->min)) {
            bool whole = info->type == SEBT_PARAM_INT;
            probe(i, info->min);
            probe(i, whole ? info->min - 1 : nextafter(info->min, -INFINITY));
            probe(i, whole ? info->min + 1 : nextafter(info->min, INFINITY));
        }
    }
    return 0;
}
