/* `sebt backends`: what this binary can run and what each backend promises
 * (SPEC §8). A backend that cannot be opened here (cuda without a module,
 * driver or device) is listed as unavailable with the reason: knowing why
 * is the point of asking, so it is not an error. */
#include <string.h>

#include "cli.h"
#include "options.h"
#include "sebt/backends.h"
#include "sebt/plugin.h"

enum { OPT_BACKEND, OPT_FORMAT };
static const cli_opt backends_opts[] = {
    [OPT_BACKEND] = { "--backend", CLI_TEXT, "X", "show only X: a built-in name, or the path of a plugin\n"
                      "(./libmine.so); a plugin that cannot be loaded is an error",
                      .complete = cli_backend_words },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "text (default) or json", .choices = cli_text_json },
};

const cli_command cli_cmd_backends_spec = {
    .name = "backends",
    .summary = "the backends built into this binary and their contracts",
    .usage = "[--backend NAME|PATH] [--format text|json]\n",
    .about = "The backends built into this binary, their parity contract against the\n"
             "reference (exact, or tolerant(tol)), where a sweep's --analysis columns\n"
             "come from (walk: counted in its metrics-only walk; trades: from each\n"
             "combo's recorded trades, slower), where --overfit takes each combo's\n"
             "block sums from (walk: the sweep's own walk; trades: a second run of\n"
             "every combo on the trade path) and a description; a backend that\n"
             "cannot be opened here is listed as unavailable, with the reason.\n",
    .opts = CLI_OPTS(backends_opts),
    .fn = cli_cmd_backends,
};

/* Where a sweep with --analysis takes b's columns from (sebt_backend_tally_batch). */
static const char *analysis_source(const sebt_backend *b)
{
    return sebt_backend_tally_batch(b) ? "walk" : "trades";
}

/* Where a sweep with --overfit takes b's block sums from (sebt_backend_blocks_batch). */
static const char *overfit_source(const sebt_backend *b)
{
    return sebt_backend_blocks_batch(b) ? "walk" : "trades";
}

static void header_line(void)
{
    printf("%-10s  %-16s  %-8s  %-7s  %s\n", "name", "contract", "analysis", "overfit", "description");
}

/* One plugin, or one built-in by name: its table as the registry opens it. */
static int show_one(const char *cmd, const char *value, bool json)
{
    const sebt_backend *b = NULL;
    sebt_error err = { 0 };
    if (sebt_backend_get(value, &b, &err) != SEBT_OK) {
        if (!sebt_backend_is_path(value) && !sebt_backend_is_kernel(value) && err.code != SEBT_ERR_USAGE && !json) {
            /* A built-in that cannot open here is an answer, as in the list. */
            printf("%-10s  %-16s  %-8s  %-7s  %s\n", value, "unavailable", "-", "-", err.msg);
            return CLI_EXIT_OK;
        }
        return cli_report_error(cmd, &err);
    }
    bool plugin = sebt_backend_is_path(value);
    char contract[64];
    cli_contract_text(&b->contract, contract, sizeof contract);
    if (json) {
        cli_json j;
        cli_json_init(&j, stdout, 2);
        cli_json_begin_object(&j, NULL);
        cli_json_schema(&j, "backends");
        cli_json_begin_array(&j, "backends");
        cli_json_begin_object(&j, NULL);
        cli_json_string(&j, "name", b->name);
        cli_json_bool(&j, "available", true);
        cli_json_contract(&j, b);
        cli_json_double(&j, "tol", b->contract.tol);
        cli_json_string(&j, "analysis", analysis_source(b));
        cli_json_string(&j, "overfit", overfit_source(b));
        cli_json_string(&j, "description", b->description ? b->description : "");
        if (plugin) {
            cli_json_string(&j, "plugin", sebt_backend_selector(b));
            cli_json_int(&j, "abi", SEBT_PLUGIN_ABI_VERSION);
        } else {
            cli_json_null(&j, "plugin");
        }
        if (sebt_backend_is_kernel(value)) {
            cli_json_string(&j, "kernel", sebt_backend_selector(b));
            cli_json_int(&j, "protocol", SEBT_KERNEL_PROTOCOL_VERSION);
        }
        cli_json_end_object(&j);
        cli_json_end_array(&j);
        cli_json_end_object(&j);
        cli_json_finish(&j);
    } else {
        header_line();
        printf("%-10s  %-16s  %-8s  %-7s  %s\n", b->name, contract, analysis_source(b), overfit_source(b),
               b->description ? b->description : "");
        if (plugin)
            printf("plugin: %s (ABI %d)\n", sebt_backend_selector(b), SEBT_PLUGIN_ABI_VERSION);
        if (sebt_backend_is_kernel(value))
            printf("kernel: %s (kernel protocol %d)\n", sebt_backend_selector(b), SEBT_KERNEL_PROTOCOL_VERSION);
    }
    return cli_close_stdout("backends") ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

int cli_cmd_backends(int argc, char **argv)
{
    const char *cmd = argv[0];
    cli_args a;
    int rc = cli_parse(&cli_cmd_backends_spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    bool json = cli_given(&a, OPT_FORMAT) && a.v[OPT_FORMAT].choice == 1;
    const char *only = cli_str(&a, OPT_BACKEND);
    if (only)
        return show_one(cmd, only, json);

    cli_json j;
    if (json) {
        cli_json_init(&j, stdout, 2);
        cli_json_begin_object(&j, NULL);
        cli_json_schema(&j, "backends");
        cli_json_begin_array(&j, "backends");
    } else {
        header_line();
    }
    for (size_t i = 0; i < sebt_backend_count(); i++) {
        const char *name = sebt_backend_name_at(i);
        const sebt_backend *b = NULL;
        sebt_error err = { 0 };
        bool ok = sebt_backend_get(name, &b, &err) == SEBT_OK && b;
        char contract[64] = "unavailable";
        if (ok)
            cli_contract_text(&b->contract, contract, sizeof contract);
        const char *about = ok ? (b->description ? b->description : "") : err.msg;
        if (json) {
            cli_json_begin_object(&j, NULL);
            cli_json_string(&j, "name", name);
            cli_json_bool(&j, "available", ok);
            if (ok) {
                cli_json_contract(&j, b);
                cli_json_double(&j, "tol", b->contract.tol);
                cli_json_string(&j, "analysis", analysis_source(b));
                cli_json_string(&j, "overfit", overfit_source(b));
                cli_json_string(&j, "description", about);
            } else {
                cli_json_string(&j, "reason", about);
            }
            cli_json_end_object(&j);
        } else {
            printf("%-10s  %-16s  %-8s  %-7s  %s\n", name, contract, ok ? analysis_source(b) : "-",
                   ok ? overfit_source(b) : "-", about);
        }
    }
    if (json) {
        cli_json_end_array(&j);
        cli_json_end_object(&j);
        cli_json_finish(&j);
    }
    return cli_close_stdout("backends") ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}
