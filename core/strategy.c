/* The tables of sebt/strategy.def's feature columns and signal terms. */
#include <string.h>

#include "sebt/sebt.h"

const sebt_feature_info sebt_feature_table[SEBT_N_FEATURES] = {
#define SEBT_FEATURE(name, inputs, window) { #name, inputs, window },
#include "sebt/strategy.def"
};

#define RHS_COLUMN(x) SEBT_FI_##x, -1
#define RHS_PARAM(x) -1, SEBT_PI_##x
#define SEBT_PI_ALWAYS (-1)
const sebt_term_info sebt_term_table[SEBT_N_TERMS] = {
#define SEBT_TERM(name, column, cmp, rhs_kind, rhs, enable) \
    { #name, SEBT_FI_##column, SEBT_CMP_##cmp, RHS_##rhs_kind(rhs), SEBT_PI_##enable },
#include "sebt/strategy.def"
};

/* A term's switch is a boolean parameter (or ALWAYS, here a field too). */
typedef struct {
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) ctype name;
#include "sebt/strategy.def"
    bool ALWAYS;
} term_switches;
#define SEBT_TERM(name, column, cmp, rhs_kind, rhs, enable) \
    _Static_assert(_Generic(((term_switches *)0)->enable, bool: 1, default: 0), #name "'s switch is a boolean");
#include "sebt/strategy.def"

bool sebt_term_on(int k, const sebt_params *p)
{
    int e = sebt_term_table[k].enable;
    return e < 0 || sebt_params_get_double(p, e) != 0.0;
}

int sebt_feature_index(const char *name)
{
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        if (strcmp(name, sebt_feature_table[c].name) == 0)
            return c;
    return -1;
}
