/* The options that `sebt run` and `sebt features` share: one data file,
 * one combo, one backend. */
#include <string.h>

#include "cli.h"

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_parse_combo_args(int argc, char **argv, bool allow_format, const char *usage,
                         cli_combo_args *out)
{
    const char *cmd = argv[0];
    memset(out, 0, sizeof *out);
    out->params = sebt_params_default();

    /* --help wins wherever it stands, so a half-typed command line still
     * gets its help rather than an error about some other word. */
    for (int i = 1; i < argc; i++)
        if (is_help(argv[i])) {
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        }

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        bool missing = false;
        if (strcmp(arg, "--lenient") == 0) {
            out->lenient = true;
        } else if (strcmp(arg, "--fill-gaps") == 0) {
            out->fill_gaps = true;
        } else if (cli_opt_value(argc, argv, &i, "--data", &value, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--data needs a FILE");
            out->data = value;
        } else if (cli_opt_value(argc, argv, &i, "--backend", &value, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--backend needs a NAME");
            out->backend = value;
        } else if (cli_opt_value(argc, argv, &i, "--output", &value, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--output needs a FILE");
            out->output = value;
        } else if (allow_format && cli_opt_value(argc, argv, &i, "--format", &value, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--format needs one of json, csv, text");
            out->format = value;
        } else if (cli_opt_value(argc, argv, &i, "--set", &value, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--set needs NAME=VALUE");
            int rc = cli_apply_set(cmd, &out->params, value);
            if (rc != CLI_EXIT_OK)
                return rc;
        } else if (arg[0] == '-') {
            return cli_usage_error(cmd, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(cmd, "unexpected argument '%s'", arg);
        }
    }
    if (!out->data)
        return cli_usage_error(cmd, "--data FILE is required");
    /* Parameters are checked before the data is read: a bad combo is an
     * error however large the file. */
    int rc = cli_validate_params(cmd, &out->params);
    if (rc != CLI_EXIT_OK)
        return rc;
    return -1;
}
