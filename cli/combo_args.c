/* The options that `sebt run` and `sebt features` share: one data file,
 * one combo, one backend. Their tables (cmd_run.c, cmd_features.c) list
 * these options in the order of cli_combo_opt. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sweep_file.h"

#include "cli.h"
#include "options.h"

/* --combo FILE:ID: the parameters of combo ID in a sweep's output. The
 * path may hold colons; the ID follows the last one. */
int cli_pick_combo(const char *cmd, const char *arg, cli_combo_args *out)
{
    const char *colon = strrchr(arg, ':');
    char *end = NULL;
    errno = 0;
    unsigned long long id = colon && colon[1] >= '0' && colon[1] <= '9' ? strtoull(colon + 1, &end, 10) : 0;
    if (!colon || colon == arg || !end || *end || errno)
        return cli_usage_error(cmd, "--combo %s: expected FILE:ID, a sweep's CSV or npy output and a combo's "
                               "index from its 'combo' column (sweep.csv:17)", arg);
    size_t len = (size_t)(colon - arg);
    if (len >= sizeof out->sweep_file)
        return cli_usage_error(cmd, "--combo: a path of more than %zu bytes", sizeof out->sweep_file - 1);
    memcpy(out->sweep_file, arg, len);
    out->sweep_file[len] = '\0';
    out->sweep_combo = (uint64_t)id;
    sebt_error err = { 0 };
    if (sebt_sweep_file_combo_columns(out->sweep_file, out->sweep_combo, &out->params, &out->sweep_row,
                                      out->sweep_param_column, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

int cli_parse_combo_args(const cli_command *c, int argc, char **argv, cli_combo_args *out)
{
    const char *cmd = c->name;
    memset(out, 0, sizeof *out);
    out->params = sebt_params_default();
    cli_args a;
    int rc = cli_parse(c, argc, argv, &a);
    if (rc >= 0)
        return rc;
    out->data = cli_str(&a, COMBO_DATA);
    out->backend = cli_str(&a, COMBO_BACKEND);
    out->output = cli_str(&a, COMBO_OUTPUT);
    out->lenient = cli_given(&a, COMBO_LENIENT);
    out->fill_gaps = cli_given(&a, COMBO_FILL_GAPS);
    if (c->n_opts > COMBO_FORMAT)
        out->format = cli_str(&a, COMBO_FORMAT);
    out->relative = (sebt_relative_opts){ SEBT_RELATIVE_CAPITAL, SEBT_RELATIVE_FRACTION };
    if (c->n_opts > COMBO_FRACTION) {
        if (cli_given(&a, COMBO_CAPITAL))
            out->relative.capital = a.v[COMBO_CAPITAL].r;
        if (cli_given(&a, COMBO_FRACTION))
            out->relative.fraction = a.v[COMBO_FRACTION].r;
    }
    const char *pick = cli_str(&a, COMBO_PICK);
    if (pick && (rc = cli_pick_combo(cmd, pick, out)) != CLI_EXIT_OK)
        return rc;
    out->sets = a.v[COMBO_SET].count > 0;
    for (int k = 0; k < a.v[COMBO_SET].count; k++) {
        rc = cli_apply_set(cmd, &out->params, a.v[COMBO_SET].values[k]);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (!out->data)
        return cli_usage_error(cmd, "--data FILE is required");
    /* Parameters are checked before the data is read: a bad combo is an
     * error however large the file. */
    rc = cli_validate_params(cmd, &out->params);
    if (rc != CLI_EXIT_OK)
        return rc;
    return -1;
}

int cli_combo_open(const char *cmd, const cli_combo_args *a, sebt_series *s, const sebt_backend **b)
{
    const sebt_path_use paths[] = {
        { "--data", a->data, SEBT_PATH_INPUT, NULL },
        { "--combo", a->sweep_file, SEBT_PATH_INPUT, NULL },
        { "--output", a->output, SEBT_PATH_OUTPUT, NULL },
        { "--script", a->script, SEBT_PATH_OUTPUT, NULL },
    };
    int rc = cli_check_paths(cmd, paths, sizeof paths / sizeof paths[0]);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_load_series(cmd, a->data, a->lenient, a->fill_gaps, s);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!a->fill_gaps)
        cli_warn_gaps(cmd, a->data, s);
    *b = NULL;
    rc = cli_select_backend(cmd, a->backend, s->n, 1, b);
    if (rc != CLI_EXIT_OK)
        sebt_series_free(s);
    return rc;
}

void cli_print_param_table(FILE *f)
{
    static const char *const types[] = { [SEBT_PARAM_INT] = "int bars", [SEBT_PARAM_DOUBLE] = "double",
                                         [SEBT_PARAM_BOOL] = "bool" };
    fputs("\nParameters (--set NAME=VALUE; SPEC.md section 2):\n", f);
    sebt_params def = sebt_params_default();
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        char v[64], rule[64];
        sebt_params_format(&def, i, v, sizeof v);
        sebt_param_rule(i, rule, sizeof rule);
        fprintf(f, "  %-15s %-9s default %-6s%s%s\n", sebt_param_table[i].name, types[sebt_param_table[i].type],
                v, *rule ? " " : "", rule);
    }
}

void cli_print_features_header(FILE *f)
{
    fputs("ts", f);
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        fprintf(f, ",%s", sebt_feature_table[c].name);
    fputs(",signal,valid\n", f);
}
