/* sebt/strategy.def against what is written elsewhere by hand: SPEC.md §2's
 * table (the parameters' names, order, types, defaults and rules) and the
 * tables made from the declaration. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"

static char *trim(char *s)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

Test(strategy, spec_section_2_is_the_declaration)
{
    FILE *f = fopen(SEBT_FIXTURES_DIR "/../SPEC.md", "r");
    cr_assert(f, "SPEC.md not found");
    char line[512];
    bool in2 = false;
    int row = 0;
    sebt_params def = sebt_params_default();
    static const char *const types[] = { [SEBT_PARAM_INT] = "int bars", [SEBT_PARAM_DOUBLE] = "double",
                                         [SEBT_PARAM_BOOL] = "bool" };
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0)
            in2 = strncmp(line, "## 2.", 5) == 0;
        if (!in2 || line[0] != '|' || strncmp(line, "| name", 6) == 0 || strncmp(line, "|---", 4) == 0)
            continue;
        char *cell[4];
        char *p = line + 1;
        for (int c = 0; c < 4; c++) {
            char *bar = strchr(p, '|');
            cr_assert(bar, "SPEC §2 row %d has fewer than 4 cells", row);
            *bar = '\0';
            cell[c] = trim(p);
            p = bar + 1;
        }
        cr_assert(row < SEBT_N_PARAMS, "SPEC §2 has more rows than sebt/strategy.def: %s", cell[0]);
        const sebt_param_info *info = &sebt_param_table[row];
        cr_expect_str_eq(cell[0], info->name, "SPEC §2 row %d", row);
        cr_expect_str_eq(cell[1], types[info->type], "%s's type", info->name);
        char v[64], rule[64], want[80] = "";
        sebt_params_format(&def, row, v, sizeof v);
        if (info->type == SEBT_PARAM_BOOL)
            cr_expect_str_eq(cell[2], v, "%s's default", info->name);
        else
            cr_expect_eq(strtod(cell[2], NULL), sebt_params_get_double(&def, row), "%s's default", info->name);
        cr_expect_eq(info->default_value, sebt_params_get_double(&def, row), "%s: the table's default", info->name);
        sebt_param_rule(row, rule, sizeof rule);
        if (*cell[3]) {
            char *comma = strstr(cell[3], ", ");
            if (comma)
                snprintf(want, sizeof want, "must be %.*s and %s", (int)(comma - cell[3]), cell[3], comma + 2);
            else
                snprintf(want, sizeof want, "must be %s", cell[3]);
        }
        cr_expect_str_eq(rule, want, "%s's rule", info->name);
        row++;
    }
    fclose(f);
    cr_assert_eq(row, SEBT_N_PARAMS, "SPEC §2 lists %d parameters, sebt/strategy.def %d", row, SEBT_N_PARAMS);
}

Test(strategy, terms_name_columns_and_parameters)
{
    for (int k = 0; k < SEBT_N_TERMS; k++) {
        const sebt_term_info *t = &sebt_term_table[k];
        cr_assert(t->column >= 0 && t->column < SEBT_N_FEATURES, "%s", t->name);
        cr_assert((t->rhs_column >= 0) != (t->rhs_param >= 0), "%s: one right-hand side", t->name);
        if (t->rhs_param >= 0)
            cr_assert_eq(sebt_param_table[t->rhs_param].role, SEBT_ROLE_SIGNAL, "%s", t->name);
        if (t->enable >= 0)
            cr_assert_eq(sebt_param_table[t->enable].type, SEBT_PARAM_BOOL, "%s", t->name);
    }
    /* SPEC §4's terms, in its order. */
    cr_assert_str_eq(sebt_term_table[0].name, "ema");
    cr_assert_eq(sebt_term_table[0].cmp, SEBT_CMP_LT);
    cr_assert_eq(sebt_term_table[0].rhs_column, sebt_feature_index("ema_s"));
    cr_assert_eq(sebt_term_table[3].rhs_param, sebt_param_index("cloc_min"));
    cr_assert_str_eq(sebt_term_table[4].name, "rsi");
    cr_assert_eq(sebt_term_table[4].cmp, SEBT_CMP_LE);
    cr_assert_eq(sebt_term_table[4].rhs_param, sebt_param_index("rsi_max"));
    cr_assert_eq(sebt_term_table[4].enable, sebt_param_index("use_rsi"));
    sebt_params p = sebt_params_default();
    cr_assert(!sebt_term_on(4, &p), "the RSI filter is off by default");
    p.use_rsi = true;
    cr_assert(sebt_term_on(4, &p));
}

/* An entry filter (SEBT_FILTER) is a switched term with a parameter on the
 * right, over a column whose window its row names: the fast backends build
 * its rows from those. Every switched term is one, so none is left to code
 * written per term. */
Test(strategy, a_filter_is_a_switched_term_over_its_columns_window)
{
    int n_filters = 0, n_switched = 0;
#define SEBT_FILTER(f_name, f_col, f_cmp, f_rhs, f_on, f_win)                                                   \
    {                                                                                                           \
        int k = 0;                                                                                              \
        while (k < SEBT_N_TERMS && strcmp(sebt_term_table[k].name, #f_name) != 0)                               \
            k++;                                                                                                \
        cr_assert_lt(k, SEBT_N_TERMS, "filter %s is a term", #f_name);                                          \
        cr_expect_eq(sebt_term_table[k].column, sebt_feature_index(#f_col));                                    \
        cr_expect_eq(sebt_term_table[k].cmp, SEBT_CMP_##f_cmp);                                                 \
        cr_expect_eq(sebt_term_table[k].rhs_param, sebt_param_index(#f_rhs));                                   \
        cr_expect_eq(sebt_term_table[k].enable, sebt_param_index(#f_on));                                       \
        cr_expect_str_eq(sebt_feature_table[sebt_feature_index(#f_col)].window, #f_win,                         \
                         "filter %s: its column's window", #f_name);                                            \
        cr_expect_eq(sebt_param_table[sebt_param_index(#f_win)].role, SEBT_ROLE_WINDOW, "%s", #f_name);         \
        n_filters++;                                                                                            \
    }
#include "sebt/strategy.def"
    for (int k = 0; k < SEBT_N_TERMS; k++)
        n_switched += sebt_term_table[k].enable >= 0;
    cr_expect_eq(n_filters, n_switched);
    cr_expect_geq(n_filters, 1, "SPEC's RSI confirmation");
}

Test(strategy, features_by_name_are_features_by_index)
{
    sebt_features f;
    cr_assert_eq(sebt_features_alloc(&f, 3, NULL), SEBT_OK);
    cr_assert_eq(f.col[SEBT_FI_ema_f], f.ema_f);
    cr_assert_eq(f.col[SEBT_FI_cloc], f.cloc);
    cr_assert_eq(sebt_feature_index("tr_z"), SEBT_FI_tr_z);
    cr_assert_eq(sebt_feature_index("nope"), -1);
    sebt_features_free(&f);
}
