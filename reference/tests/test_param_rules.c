/* The reference keeps its own literal copy of SPEC §2 (reference/check.c:
 * it calls no core code). This holds it to the one table, core's
 * sebt_param_table: at each row's bound, just past it and at the
 * non-finite values, both accept or both refuse, with the same message. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../ref.h"
#include "sebt/sebt.h"

static void set_value(sebt_params *p, int i, double v)
{
    char *at = (char *)p + sebt_param_table[i].offset;
    if (sebt_param_table[i].type == SEBT_PARAM_INT) {
        int32_t iv = (int32_t)v;
        memcpy(at, &iv, sizeof iv);
    } else {
        memcpy(at, &v, sizeof v);
    }
}

/* The values that tell a rule apart: its bound, the nearest value on each
 * side, the infinities and NaN (doubles), 0 and a large value. */
static size_t probes(int i, double *v)
{
    const sebt_param_info *info = &sebt_param_table[i];
    size_t n = 0;
    v[n++] = 0.0;
    v[n++] = 1e9;
    if (info->type == SEBT_PARAM_DOUBLE) {
        v[n++] = INFINITY;
        v[n++] = -INFINITY;
        v[n++] = NAN;
    }
    if (isfinite(info->min)) {
        v[n++] = info->min;
        v[n++] = info->type == SEBT_PARAM_INT ? info->min - 1 : nextafter(info->min, -INFINITY);
        v[n++] = info->type == SEBT_PARAM_INT ? info->min + 1 : nextafter(info->min, INFINITY);
    }
    return n;
}

Test(param_rules, the_reference_agrees_with_the_table_at_every_bound)
{
    size_t checked = 0, refused = 0;
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        if (sebt_param_table[i].type == SEBT_PARAM_BOOL)
            continue;
        double v[8];
        size_t n = probes(i, v);
        for (size_t k = 0; k < n; k++) {
            sebt_params p = sebt_params_default();
            set_value(&p, i, v[k]);
            sebt_error core = { 0 }, ref = { 0 };
            sebt_status a = sebt_params_validate(&p, &core);
            sebt_status b = sebt_ref_check_params(&p, 7, &ref);
            cr_expect_eq(a, b, "%s = %g: the table says %d, the reference %d", sebt_param_table[i].name,
                         v[k], a, b);
            if (a != SEBT_OK && b != SEBT_OK) {
                /* "combo 7: " + the table's own message. */
                cr_expect_str_eq(ref.msg + strlen("combo 7: "), core.msg, "%s", sebt_param_table[i].name);
                refused++;
            }
            checked++;
        }
    }
    cr_expect_gt(checked, 40);
    cr_expect_gt(refused, 20, "the probes must cross the rules, not only pass them");
}

/* The rule in words comes from the table: spot-check it against SPEC §2. */
Test(param_rules, rules_in_words)
{
    char buf[64];
    sebt_param_rule(sebt_param_index("z_window"), buf, sizeof buf);
    cr_expect_str_eq(buf, "must be >= 2");
    sebt_param_rule(sebt_param_index("reward_r"), buf, sizeof buf);
    cr_expect_str_eq(buf, "must be finite and > 0");
    sebt_param_rule(sebt_param_index("fee_bp"), buf, sizeof buf);
    cr_expect_str_eq(buf, "must be finite and >= 0");
    sebt_param_rule(sebt_param_index("vol_z"), buf, sizeof buf);
    cr_expect_str_eq(buf, "must be finite");
    sebt_param_rule(sebt_param_index("use_tp"), buf, sizeof buf);
    cr_expect_str_eq(buf, "");
}
