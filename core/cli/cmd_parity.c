/* `sebt parity`: the gate on real data. Every combo of a grid or a combos
 * file runs on the candidate and is judged against the reference (SPEC §8);
 * exit 0 only when every combo agrees. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sebt/grid.h"

int cli_select_oracle_backend(const char *cmd, const char *name, const sebt_backend **out)
{
    if (name && strncmp(name, "mutant:", 7) == 0) {
        sebt_error err = { 0 };
        if (sebt_mutant_get(name, out, &err) != SEBT_OK)
            return cli_usage_error(cmd, "--backend: %s", err.msg);
        return CLI_EXIT_OK;
    }
    return cli_select_backend(cmd, name, 0, 0, out);
}

void cli_json_divergence(cli_json *j, const char *key, const sebt_divergence *d)
{
    cli_json_begin_object(j, key);
    cli_json_int(j, "combo", (int64_t)d->combo);
    cli_json_params(j, "params", &d->params);
    cli_json_string(j, "what", d->what);
    if (d->bar >= 0) {
        char when[40];
        cli_format_utc(d->ts, when, sizeof when);
        cli_json_int(j, "bar", d->bar);
        cli_json_int(j, "ts", d->ts);
        cli_json_string(j, "time", when);
    } else {
        cli_json_null(j, "bar");
        cli_json_null(j, "ts");
        cli_json_null(j, "time");
    }
    cli_json_double(j, "reference", d->ref_value);
    cli_json_double(j, "candidate", d->cand_value);
    cli_json_double(j, "margin", d->margin);
    cli_json_string(j, "detail", d->detail);
    cli_json_end_object(j);
}

static const char usage[] =
    "usage: sebt parity --data FILE (--grid FILE | --combos FILE) --backend NAME\n"
    "                   [--format text|json] [--lenient] [--fill-gaps] [--threads N]\n"
    "\n"
    "Runs every combo on the backend and checks it against the reference (SPEC §8):\n"
    "exact backends bit for bit; tolerant ones within their tolerance, with near-tie\n"
    "decisions adjudicated (the oracle follows the backend and counts the tie).\n"
    "\n"
    "  --data FILE        CSV with a header, or a Binance kline file; .gz is read as gzip\n"
    "  --grid FILE        a parameter grid (as for sebt sweep)\n"
    "  --combos FILE      a CSV of combos, one per row (as for sebt sweep)\n"
    "  --backend NAME     reference, fast_cpu, cuda, cpu|gpu|auto, or mutant:BUG (see\n"
    "                     sebt fuzz --help for the mutants)\n"
    "  --format FMT       text (default) or json\n"
    "  --lenient          keep a bad row as a missing bar instead of failing\n"
    "  --fill-gaps        insert missing bars where timestamps skip\n"
    "  --threads N        threads for the backend (default: OMP_NUM_THREADS or all cores)\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit codes: 0 every combo agrees, 1 a divergence, 2 bad usage or input, 3 no usable GPU.\n";

typedef struct {
    const char *data, *grid, *combos, *backend;
    bool json, lenient, fill_gaps;
    int threads;
} parity_args;

static int parse_args(int argc, char **argv, parity_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        bool missing = false;
        if (strcmp(arg, "--lenient") == 0) {
            a->lenient = true;
        } else if (strcmp(arg, "--fill-gaps") == 0) {
            a->fill_gaps = true;
        } else if (cli_opt_value(argc, argv, &i, "--data", &v, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--data needs a FILE");
            a->data = v;
        } else if (cli_opt_value(argc, argv, &i, "--grid", &v, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--grid needs a FILE");
            a->grid = v;
        } else if (cli_opt_value(argc, argv, &i, "--combos", &v, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--combos needs a FILE");
            a->combos = v;
        } else if (cli_opt_value(argc, argv, &i, "--backend", &v, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--backend needs a NAME");
            a->backend = v;
        } else if (cli_opt_value(argc, argv, &i, "--format", &v, &missing)) {
            if (missing || (strcmp(v, "text") != 0 && strcmp(v, "json") != 0))
                return cli_usage_error(cmd, "--format expects text or json");
            a->json = strcmp(v, "json") == 0;
        } else if (cli_opt_value(argc, argv, &i, "--threads", &v, &missing)) {
            char *end = NULL;
            long n = v ? strtol(v, &end, 10) : 0;
            if (!v || end == v || *end || n < 1 || n > 4096)
                return cli_usage_error(cmd, "--threads expects a whole number from 1 to 4096, got '%s'",
                                       v ? v : "");
            a->threads = (int)n;
        } else if (arg[0] == '-') {
            return cli_usage_error(cmd, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(cmd, "unexpected argument '%s'", arg);
        }
    }
    if (!a->data)
        return cli_usage_error(cmd, "--data FILE is required");
    if (!a->grid == !a->combos)
        return cli_usage_error(cmd, "give exactly one of --grid FILE or --combos FILE");
    if (!a->backend)
        return cli_usage_error(cmd, "--backend NAME is required");
    return -1;
}

/* The combos of --grid or --combos. */
static int load_combos(const char *cmd, const parity_args *a, sebt_params **out, size_t *n)
{
    sebt_error err = { 0 };
    sebt_status st = a->grid ? sebt_grid_load(a->grid, out, n, &err)
                             : sebt_combos_load(a->combos, out, n, &err);
    if (st)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

static void write_text(const sebt_backend *b, const parity_args *a, const sebt_series *s,
                       const sebt_oracle_report *r, double seconds)
{
    printf("parity %s (%s", b->name, b->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
    if (b->contract.kind == SEBT_CONTRACT_TOLERANT)
        printf(", tol %g", b->contract.tol);
    printf(") against reference on %s (%zu bars)\n", a->data, s->n);
    printf("combos checked %zu, ties adjudicated %zu, divergences %zu, %.1f s\n", r->combos_checked,
           r->ties, r->combos_diverged, seconds);
    for (size_t i = 0; i < r->n_details; i++) {
        char text[2048];
        sebt_divergence_text(&r->details[i], text, sizeof text);
        printf("\n%s", text);
    }
    if (r->combos_diverged > r->n_details)
        printf("\n... and %zu more diverging combos\n", r->combos_diverged - r->n_details);
    printf("\nresult: %s\n", r->combos_diverged ? "FAIL" : "pass");
}

static void write_json(const sebt_backend *b, const parity_args *a, const sebt_series *s,
                       const sebt_oracle_report *r, double seconds)
{
    cli_json j;
    cli_json_init(&j, stdout, 2);
    cli_json_begin_object(&j, NULL);
    cli_json_string(&j, "backend", b->name);
    cli_json_string(&j, "contract", b->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
    cli_json_double(&j, "tol", b->contract.tol);
    cli_json_string(&j, "data", a->data);
    cli_json_int(&j, "bars", (int64_t)s->n);
    cli_json_int(&j, "combos_checked", (int64_t)r->combos_checked);
    cli_json_int(&j, "ties_adjudicated", (int64_t)r->ties);
    cli_json_int(&j, "divergences", (int64_t)r->combos_diverged);
    cli_json_double(&j, "seconds", seconds);
    cli_json_bool(&j, "pass", r->combos_diverged == 0);
    cli_json_begin_array(&j, "details");
    for (size_t i = 0; i < r->n_details; i++)
        cli_json_divergence(&j, NULL, &r->details[i]);
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

int cli_cmd_parity(int argc, char **argv)
{
    const char *cmd = argv[0];
    parity_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    const sebt_backend *b;
    rc = cli_select_oracle_backend(cmd, a.backend, &b);
    if (rc != CLI_EXIT_OK)
        return rc;
    sebt_params *combos = NULL;
    size_t n = 0;
    rc = load_combos(cmd, &a, &combos, &n);
    if (rc != CLI_EXIT_OK)
        return rc;
    sebt_series s;
    rc = cli_load_series(cmd, a.data, a.lenient, a.fill_gaps, &s);
    if (rc != CLI_EXIT_OK) {
        free(combos);
        return rc;
    }
    cli_progress prog;
    cli_progress_init(&prog, "parity");
    sebt_oracle_opts o = { .threads = a.threads, .progress = cli_progress_update, .progress_user = &prog };
    sebt_oracle_report r;
    sebt_error err = { 0 };
    double t0 = cli_now();
    sebt_status st = sebt_oracle_check(b, &s, combos, n, &o, &r, &err);
    double seconds = cli_now() - t0;
    cli_progress_finish(&prog);
    if (st) {
        free(combos);
        sebt_series_free(&s);
        return cli_report_error(cmd, &err);
    }
    if (a.json)
        write_json(b, &a, &s, &r, seconds);
    else
        write_text(b, &a, &s, &r, seconds);
    free(combos);
    sebt_series_free(&s);
    return r.combos_diverged ? CLI_EXIT_CHECK_FAILED : CLI_EXIT_OK;
}
