/* `sebt features`: the indicator columns and signal of one combo as CSV,
 * one row per bar of the loaded series (missing bars included), so any
 * column can be checked against SPEC §3-5 or another backend. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "options.h"

static void write_features(FILE *f, const sebt_series *s, const sebt_features *x)
{
    cli_print_features_header(f);
    for (size_t t = 0; t < s->n; t++) {
        fprintf(f, "%" PRId64, s->ts[t]);
        for (int c = 0; c < SEBT_N_FEATURES; c++) {
            fputc(',', f);
            cli_print_double(f, x->col[c][t]);
        }
        fprintf(f, ",%d,%d\n", x->signal[t] ? 1 : 0, x->valid[t] ? 1 : 0);
    }
}

int cli_cmd_features(int argc, char **argv)
{
    const char *cmd = argv[0];
    cli_combo_args a;
    int rc = cli_parse_combo_args(&cli_cmd_features_spec, argc, argv, &a);
    if (rc >= 0)
        return rc;

    sebt_series s = { 0 };
    const sebt_backend *b;
    if ((rc = cli_combo_open(cmd, &a, &s, &b)) != CLI_EXIT_OK)
        return rc;

    sebt_features x;
    memset(&x, 0, sizeof x);
    sebt_error err = { 0 };
    if (sebt_features_alloc(&x, s.n, &err) != SEBT_OK ||
        sebt_backend_features(b, &s, &a.params, &x, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }

    FILE *f = cli_open_output(cmd, a.output);
    if (!f) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    write_features(f, &s, &x);
    if (cli_close_output(f) != 0)
        rc = CLI_EXIT_USAGE;

done:
    sebt_features_free(&x);
    sebt_series_free(&s);
    return rc;
}

static const cli_opt features_opts[] = {
    [COMBO_DATA] = { "--data", CLI_FILE, "FILE", "CSV with a header, or a Binance kline file; .gz is read as gzip" },
    [COMBO_SET] = { "--set", CLI_ASSIGN, "NAME=VALUE",
                    "a parameter of the strategy (repeatable); see 'sebt run --help'", .flags = CLI_REPEAT },
    [COMBO_PICK] = { "--combo", CLI_TEXT, "FILE:ID", "the parameters of combo ID (the 'combo' column) of a sweep's\n"
                     "CSV or npy output; --set then changes some" },
    [COMBO_BACKEND] = { "--backend", CLI_TEXT, "NAME", "reference, fast_cpu, cuda, cpu|gpu|auto, a plugin's path, or\n"
                        "exec:CMD, a kernel command ('exec:python3 mine.py',\n"
                        "docs/kernel-protocol.md) (default: BACKTEST_BACKEND, else cpu)", .complete = cli_backend_words },
    [COMBO_OUTPUT] = { "--output", CLI_FILE, "FILE", "write there instead of stdout" },
    [COMBO_LENIENT] = { "--lenient", CLI_FLAG, NULL,
                        "keep a bad row as a missing bar (counted on stderr) instead of failing" },
    [COMBO_FILL_GAPS] = { "--fill-gaps", CLI_FLAG, NULL, "insert missing bars where timestamps skip" },
};

static void features_about(FILE *f)
{
    fputs("The indicators and signal of one combo, one CSV row per bar:\n  ", f);
    cli_print_features_header(f);
    fputs("ts in milliseconds (UTC), doubles in the shortest form that reads back bit-exact,\n"
          "undefined values as nan, signal and valid as 0|1.\n", f);
}

const cli_command cli_cmd_features_spec = {
    .name = "features",
    .summary = "the indicator columns and signal of one combo, as CSV",
    .usage = "--data FILE [--combo FILE:ID] [--set NAME=VALUE]... [--backend NAME] [--output FILE] [--lenient] [--fill-gaps]\n",
    .about_fn = features_about,
    .opts = CLI_OPTS(features_opts),
    .epilog = "Exit codes: 0 ok, 2 bad usage, parameter or input, 3 no usable GPU.\n",
    .epilog_fn = cli_print_param_table,
    .fn = cli_cmd_features,
};
