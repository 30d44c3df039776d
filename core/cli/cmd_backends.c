/* `sebt backends`: what this binary can run and what each backend promises
 * (SPEC §8). A backend that cannot be opened here (cuda without a module,
 * driver or device) is listed as unavailable with the reason: knowing why
 * is the point of asking, so it is not an error. */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: sebt backends [--format text|json]\n"
    "\n"
    "The backends built into this binary, their parity contract against the\n"
    "reference (exact, or tolerant(tol)) and a description; a backend that\n"
    "cannot be opened here is listed as unavailable, with the reason.\n"
    "\n"
    "  --format FMT   text (default) or json\n"
    "  -h, --help     this help\n";

static void contract_text(const sebt_contract *c, char *buf, size_t n)
{
    if (c->kind == SEBT_CONTRACT_EXACT)
        snprintf(buf, n, "exact");
    else
        snprintf(buf, n, "tolerant(%g)", c->tol);
}

int cli_cmd_backends(int argc, char **argv)
{
    const char *cmd = argv[0];
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        bool missing = false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        } else if (cli_opt_value(argc, argv, &i, "--format", &value, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--format needs text or json");
            if (strcmp(value, "json") == 0)
                json = true;
            else if (strcmp(value, "text") == 0)
                json = false;
            else
                return cli_usage_error(cmd, "--format %s: expected text or json", value);
        } else if (argv[i][0] == '-') {
            return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
        } else {
            return cli_usage_error(cmd, "unexpected argument '%s'", argv[i]);
        }
    }

    cli_json j;
    if (json) {
        cli_json_init(&j, stdout, 2);
        cli_json_begin_object(&j, NULL);
        cli_json_schema(&j, "backends");
        cli_json_begin_array(&j, "backends");
    } else {
        printf("%-10s  %-16s  %s\n", "name", "contract", "description");
    }
    for (size_t i = 0; i < sebt_backend_count(); i++) {
        const char *name = sebt_backend_name_at(i);
        const sebt_backend *b = NULL;
        sebt_error err = { 0 };
        bool ok = sebt_backend_get(name, &b, &err) == SEBT_OK && b;
        char contract[64] = "unavailable";
        if (ok)
            contract_text(&b->contract, contract, sizeof contract);
        const char *about = ok ? (b->description ? b->description : "") : err.msg;
        if (json) {
            cli_json_begin_object(&j, NULL);
            cli_json_string(&j, "name", name);
            cli_json_bool(&j, "available", ok);
            if (ok) {
                cli_json_string(&j, "contract", b->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
                cli_json_double(&j, "tol", b->contract.tol);
                cli_json_string(&j, "description", about);
            } else {
                cli_json_string(&j, "reason", about);
            }
            cli_json_end_object(&j);
        } else {
            printf("%-10s  %-16s  %s\n", name, contract, about);
        }
    }
    if (json) {
        cli_json_end_array(&j);
        cli_json_end_object(&j);
        cli_json_finish(&j);
    }
    return cli_close_output(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}
