/* `sebt parity`: the gate on real data. Every combo of a grid or a combos
 * file runs on the candidate and is judged against the reference (SPEC §8);
 * exit 0 only when every combo agrees. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
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

static const char *exit_outcome_name(double v)
{
    const char *name = sebt_exit_outcome_name(v);
    return name ? name : "unknown";
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
    if (strcmp(d->what, "exit") == 0 || strcmp(d->what, "exit reason") == 0) {
        /* SPEC §6 outcomes by name (stop_gap, stop, tp, time, "no exit"), as
         * trades write their reason. */
        cli_json_string(j, "reference", exit_outcome_name(d->ref_value));
        cli_json_string(j, "candidate", exit_outcome_name(d->cand_value));
    } else {
        cli_json_double(j, "reference", d->ref_value);
        cli_json_double(j, "candidate", d->cand_value);
    }
    cli_json_double(j, "margin", d->margin);
    cli_json_string(j, "detail", d->detail);
    cli_json_end_object(j);
}

void cli_analysis_line(const sebt_backend *b, bool from_walk, size_t compared, char *buf, size_t size)
{
    if (!from_walk) {
        snprintf(buf, size, "analysis columns: from the backend's trades (compared through its trades)");
        return;
    }
    char how[64] = "bit for bit";
    if (b->contract.kind != SEBT_CONTRACT_EXACT)
        snprintf(how, sizeof how, "within tol %g, counts exactly", b->contract.tol);
    snprintf(buf, size, "analysis columns: from the backend's walk (its tally), compared with the reference's, "
             "%zu combos, %s", compared, how);
}

const char *cli_analysis_source(bool from_walk) { return from_walk ? "walk" : "trades"; }

#define MAX_DATA 8
#define MAX_INPUTS 16

typedef struct {
    const char *data[MAX_DATA];
    size_t n_data;
    const char *grid, *combos, *backend, *junit;
    bool json, lenient;
    sebt_parity_gaps gaps;
    int threads;
    size_t memory_budget;
    double max_tie_rate;
} parity_args;

enum { OPT_BACKEND, OPT_DATA, OPT_GRID, OPT_COMBOS, OPT_GAPS, OPT_FILL_GAPS, OPT_LENIENT, OPT_THREADS,
       OPT_MEMORY_BUDGET, OPT_MAX_TIE_RATE, OPT_FORMAT, OPT_JUNIT };
static const char *const gaps_modes[] = { "both", "plain", "filled", NULL };
static const cli_opt parity_opts[] = {
    [OPT_BACKEND] = { "--backend", CLI_TEXT, "NAME", "reference, fast_cpu, cuda, cpu|gpu|auto, mutant:BUG (see\n"
                      "sebt fuzz --help for the mutants), a plugin's path, or exec:CMD,\n"
                      "a kernel command ('exec:python3 mine.py', docs/kernel-protocol.md)", .complete = cli_backend_words },
    [OPT_DATA] = { "--data", CLI_FILE, "FILE", "a data file (repeatable); CSV with a header or a Binance kline\n"
                   "file, .gz read as gzip", .flags = CLI_REPEAT, .max_count = MAX_DATA },
    [OPT_GRID] = { "--grid", CLI_FILE, "FILE", "a parameter grid (as for sebt sweep)" },
    [OPT_COMBOS] = { "--combos", CLI_FILE, "FILE", "a CSV of combos, one per row (as for sebt sweep)" },
    [OPT_GAPS] = { "--gaps", CLI_CHOICE, "MODE", "each --data file: both (default: as loaded, then gap-filled),\n"
                   "plain (as loaded) or filled (gap-filled)", .choices = gaps_modes },
    [OPT_FILL_GAPS] = { "--fill-gaps", CLI_FLAG, NULL, "the same as --gaps filled" },
    [OPT_LENIENT] = { "--lenient", CLI_FLAG, NULL, "keep a bad row as a missing bar instead of failing" },
    [OPT_THREADS] = CLI_OPT_THREADS("CPU threads, 1 to 4096 (default: OMP_NUM_THREADS, else every core)"),
    [OPT_MEMORY_BUDGET] = { "--memory-budget", CLI_UINT, "B",
                            "the backend's working-memory budget in bytes (default: its own)", .umin = 1,
                            .umax = CLI_UINT_MAX },
    [OPT_MAX_TIE_RATE] = { "--max-tie-rate", CLI_REAL, "R",
                           "fail when more than R decisions per 10^6 are adjudicated ties\n"
                           "(default 100; exact backends never tie)", .rmin = 0, .rmax = 1e6 },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "text (default) or json", .choices = cli_text_json },
    [OPT_JUNIT] = { "--junit", CLI_FILE, "FILE", "also write a JUnit XML report (a testcase per series) to FILE" },
};

const cli_command cli_cmd_parity_spec = {
    .name = "parity",
    .summary = "check a backend against the reference on real data",
    .usage = "--backend NAME [--data FILE]... [--grid FILE | --combos FILE] [--gaps both|plain|filled] [--fill-gaps] [--lenient] [--threads N] [--memory-budget BYTES] [--max-tie-rate R] [--format text|json]\n",
    .about = "Runs every combo on the backend and checks it against the reference (SPEC §8):\n"
             "exact backends bit for bit; tolerant ones within their tolerance, a differing\n"
             "decision adjudicated only where the reference margin is a near-tie and the\n"
             "backend's own operands are not the reference's bits (rounding can explain it).\n"
             "A backend whose walk keeps the analysis tally (fast_cpu, cuda) also runs tallied:\n"
             "every analysis column (sweep --analysis) is compared with the reference's figures\n"
             "over its own trades; other backends' columns come from their trades, compared.\n"
             "\n"
             "With no --data it checks the bundled data set (fixtures/data): each file as\n"
             "loaded and gap-filled, smallest first, then the one-minute files joined into one\n"
             "569,276-bar series run with a 1-byte memory budget (as many batches as the\n"
             "backend makes). With no --grid or --combos it uses oracle/parity-combos.csv,\n"
             "whose combos make every planted bug of sebt fuzz --self-test fail.\n",
    .opts = CLI_OPTS(parity_opts),
    .epilog = "Exit codes: 0 every combo agrees, 1 a divergence or too many ties, 2 bad usage or\n"
              "input, 3 no usable GPU.\n",
    .fn = cli_cmd_parity,
};

static int parse_args(int argc, char **argv, parity_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->max_tie_rate = SEBT_DEFAULT_MAX_TIE_RATE;
    cli_args o;
    int rc = cli_parse(&cli_cmd_parity_spec, argc, argv, &o);
    if (rc >= 0)
        return rc;
    static const sebt_parity_gaps modes[] = { SEBT_PARITY_BOTH, SEBT_PARITY_PLAIN, SEBT_PARITY_FILLED };
    bool have_gaps = cli_given(&o, OPT_GAPS) || cli_given(&o, OPT_FILL_GAPS);
    if (cli_given(&o, OPT_GAPS))
        a->gaps = modes[o.v[OPT_GAPS].choice];
    if (cli_given(&o, OPT_FILL_GAPS)) {
        if (cli_given(&o, OPT_GAPS) && a->gaps != SEBT_PARITY_FILLED)
            return cli_usage_error(cmd, "--fill-gaps contradicts the --gaps given");
        a->gaps = SEBT_PARITY_FILLED;
    }
    for (int k = 0; k < o.v[OPT_DATA].count; k++)
        a->data[a->n_data++] = o.v[OPT_DATA].values[k];
    a->grid = cli_str(&o, OPT_GRID);
    a->combos = cli_str(&o, OPT_COMBOS);
    a->backend = cli_str(&o, OPT_BACKEND);
    a->junit = cli_str(&o, OPT_JUNIT);
    a->json = cli_given(&o, OPT_FORMAT) && o.v[OPT_FORMAT].choice == 1;
    a->lenient = cli_given(&o, OPT_LENIENT);
    a->threads = (int)o.v[OPT_THREADS].u;
    a->memory_budget = (size_t)o.v[OPT_MEMORY_BUDGET].u;
    if (cli_given(&o, OPT_MAX_TIE_RATE))
        a->max_tie_rate = o.v[OPT_MAX_TIE_RATE].r;
    if (a->grid && a->combos)
        return cli_usage_error(cmd, "give one of --grid FILE or --combos FILE, not both");
    if (!a->backend)
        return cli_usage_error(cmd, "--backend NAME is required");
    if (have_gaps && a->n_data == 0)
        return cli_usage_error(cmd, "--gaps and --fill-gaps apply to --data files; the bundled data "
                                    "set always runs each file both ways");
    sebt_path_use paths[MAX_DATA + 3] = { { "--grid", a->grid, SEBT_PATH_INPUT, NULL },
                                          { "--combos", a->combos, SEBT_PATH_INPUT, NULL },
                                          { "--junit", a->junit, SEBT_PATH_OUTPUT, NULL } };
    for (size_t k = 0; k < a->n_data; k++)
        paths[3 + k] = (sebt_path_use){ "--data", a->data[k], SEBT_PATH_INPUT, NULL };
    rc = cli_check_paths(cmd, paths, 3 + a->n_data);
    return rc != CLI_EXIT_OK ? rc : -1;
}

#define DEFAULT_COMBOS cli_share("parity-combos.csv")
#define BUNDLED_DATA cli_share("fixtures/data")

/* The combos of --grid or --combos, else the default file. */
static int load_combos(const char *cmd, const parity_args *a, sebt_params **out, size_t *n)
{
    sebt_error err = { 0 };
    sebt_status st = a->grid ? sebt_grid_load(a->grid, out, n, &err)
                             : sebt_combos_load(a->combos ? a->combos : DEFAULT_COMBOS, out, n, &err);
    if (st)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

typedef struct {
    size_t combos_checked, diverged, ties, analysis_compared;
    bool analysis_from_walk;
    uint64_t decisions;
    int max_threads;
    size_t max_batches, max_blocks;
    double seconds;
} totals;

static totals sum_up(const sebt_parity_result *r, size_t n)
{
    totals t = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (!r[i].ran)
            continue;
        const sebt_oracle_report *p = &r[i].report;
        t.combos_checked += p->combos_checked;
        t.diverged += p->combos_diverged;
        t.ties += p->ties;
        t.decisions += p->decisions;
        t.analysis_compared += p->analysis_compared;
        t.analysis_from_walk = p->analysis_from_walk;
        if (p->stats.threads_used > t.max_threads)
            t.max_threads = p->stats.threads_used;
        if (p->stats.batches > t.max_batches)
            t.max_batches = p->stats.batches;
        if (p->stats.blocks > t.max_blocks)
            t.max_blocks = p->stats.blocks;
        t.seconds += r[i].seconds;
    }
    return t;
}

static void contract_text(const sebt_backend *b, char *buf, size_t size)
{
    if (b->contract.kind == SEBT_CONTRACT_EXACT)
        snprintf(buf, size, "exact");
    else
        snprintf(buf, size, "tolerant, tol %g", b->contract.tol);
}

static void write_text(const sebt_backend *b, const char *combos_from, size_t n_combos,
                       const sebt_parity_result *r, size_t n, const totals *t, const parity_args *a,
                       bool tie_ok)
{
    char contract[64];
    contract_text(b, contract, sizeof contract);
    printf("parity %s (%s) against reference: %zu combos from %s\n", b->name, contract, n_combos,
           combos_from);
    printf("  %-72s %8s %7s %9s %5s %11s %7s  %s\n", "series", "bars", "missing", "diverged", "ties",
           "decisions", "seconds", "threads/batches");
    for (size_t i = 0; i < n; i++) {
        if (!r[i].ran)
            continue;
        const sebt_oracle_report *p = &r[i].report;
        char paths[32] = "-";
        if (p->stats.threads_used || p->stats.batches)
            snprintf(paths, sizeof paths, "%d/%zu", p->stats.threads_used, p->stats.batches);
        printf("  %-72s %8zu %7zu %4zu/%-4zu %5zu %11llu %7.1f  %s\n", r[i].input.label, r[i].bars,
               r[i].missing, p->combos_diverged, p->combos_checked, p->ties,
               (unsigned long long)p->decisions, r[i].seconds, paths);
    }
    printf("combos checked %zu, divergences %zu, ties adjudicated %zu (%.3g per 10^6 decisions of "
           "%llu; limit %g), %.1f s\n", t->combos_checked, t->diverged, t->ties,
           sebt_oracle_tie_rate(t->ties, t->decisions), (unsigned long long)t->decisions,
           a->max_tie_rate, t->seconds);
    char analysis[200];
    cli_analysis_line(b, t->analysis_from_walk, t->analysis_compared, analysis, sizeof analysis);
    printf("%s\n", analysis);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 8; i++)
        for (size_t k = 0; r[i].ran && k < r[i].report.n_details && shown < 8; k++, shown++) {
            char text[2048];
            sebt_divergence_text(&r[i].report.details[k], text, sizeof text);
            printf("\n%s:\n%s", r[i].input.label, text);
        }
    if (t->diverged > shown)
        printf("\n... and %zu more diverging combos\n", t->diverged - shown);
    if (!tie_ok)
        printf("\ntoo many ties: %.3g adjudicated per 10^6 decisions, the limit is %g (--max-tie-rate):\n"
               "the backend decides near thresholds in a way of its own\n",
               sebt_oracle_tie_rate(t->ties, t->decisions), a->max_tie_rate);
    printf("\nresult: %s\n", t->diverged == 0 && tie_ok ? "pass" : "FAIL");
}

static void json_stats(cli_json *j, const char *key, const sebt_batch_stats *s)
{
    cli_json_begin_object(j, key);
    cli_json_int(j, "threads_used", s->threads_used);
    cli_json_int(j, "batches", (int64_t)s->batches);
    cli_json_int(j, "chunks", (int64_t)s->chunks);
    cli_json_int(j, "blocks", (int64_t)s->blocks);
    cli_json_end_object(j);
}

static void write_json(const sebt_backend *b, const char *combos_from, const sebt_parity_result *r,
                       size_t n, const totals *t, const parity_args *a, bool tie_ok)
{
    cli_json j;
    cli_json_begin_check(&j, 3, "parity", b);
    cli_json_double(&j, "tol", b->contract.tol);
    cli_json_string(&j, "combos_from", combos_from);
    cli_json_begin_array(&j, "inputs");
    for (size_t i = 0; i < n; i++) {
        if (!r[i].ran)
            continue;
        const sebt_oracle_report *p = &r[i].report;
        cli_json_begin_object(&j, NULL);
        cli_json_string(&j, "label", r[i].input.label);
        cli_json_begin_array(&j, "files");
        for (size_t k = 0; k < r[i].input.n_paths; k++)
            cli_json_string(&j, NULL, r[i].input.paths[k]);
        cli_json_end_array(&j);
        cli_json_bool(&j, "gap_filled", r[i].input.fill_gaps);
        cli_json_int(&j, "memory_budget", (int64_t)(r[i].input.memory_budget ? r[i].input.memory_budget
                                                                               : a->memory_budget));
        cli_json_int(&j, "bars", (int64_t)r[i].bars);
        cli_json_int(&j, "missing", (int64_t)r[i].missing);
        cli_json_int(&j, "combos_checked", (int64_t)p->combos_checked);
        cli_json_int(&j, "divergences", (int64_t)p->combos_diverged);
        cli_json_int(&j, "ties_adjudicated", (int64_t)p->ties);
        cli_json_int(&j, "decisions", (int64_t)p->decisions);
        cli_json_int(&j, "analysis_combos_compared", (int64_t)p->analysis_compared);
        cli_json_double(&j, "seconds", r[i].seconds);
        json_stats(&j, "paths", &p->stats);
        cli_json_begin_array(&j, "details");
        for (size_t k = 0; k < p->n_details; k++)
            cli_json_divergence(&j, NULL, &p->details[k]);
        cli_json_end_array(&j);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_int(&j, "combos_checked", (int64_t)t->combos_checked);
    cli_json_int(&j, "divergences", (int64_t)t->diverged);
    cli_json_int(&j, "ties_adjudicated", (int64_t)t->ties);
    cli_json_int(&j, "decisions", (int64_t)t->decisions);
    cli_json_double(&j, "ties_per_million", sebt_oracle_tie_rate(t->ties, t->decisions));
    cli_json_double(&j, "max_tie_rate", a->max_tie_rate);
    cli_json_bool(&j, "tie_rate_ok", tie_ok);
    cli_json_string(&j, "analysis_columns", cli_analysis_source(t->analysis_from_walk));
    cli_json_int(&j, "analysis_combos_compared", (int64_t)t->analysis_compared);
    cli_json_double(&j, "seconds", t->seconds);
    cli_json_bool(&j, "pass", t->diverged == 0 && tie_ok);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

typedef struct {
    cli_progress prog;
    bool json;
} parity_ui;

static void on_input(void *user, size_t i, size_t n, const sebt_parity_input *in)
{
    parity_ui *ui = user;
    cli_progress_finish(&ui->prog);
    char label[200];
    snprintf(label, sizeof label, "parity %zu/%zu", i + 1, n);
    (void)in;
    cli_progress_init(&ui->prog, label);
}

/* A testcase per series; a failure carries its first divergences and the
 * command that replays that series alone. */
static int write_junit(const sebt_backend *b, const char *combos_from, const sebt_parity_result *r, size_t n,
                       const parity_args *a)
{
    cli_junit_case *cases = calloc(n ? n : 1, sizeof *cases);
    char (*msgs)[200] = calloc(n ? n : 1, sizeof *msgs);
    char (*texts)[6144] = calloc(n ? n : 1, sizeof *texts);
    char (*outs)[200] = calloc(n ? n : 1, sizeof *outs);
    int rc = CLI_EXIT_USAGE;
    if (cases && msgs && texts && outs) {
        for (size_t i = 0; i < n; i++) {
            const sebt_oracle_report *p = &r[i].report;
            cli_analysis_line(b, p->analysis_from_walk, p->analysis_compared, outs[i], sizeof outs[i]);
            size_t len = 0;
            for (size_t k = 0; r[i].ran && k < p->n_details && len + 1 < sizeof texts[i]; k++) {
                sebt_divergence_text(&p->details[k], texts[i] + len, sizeof texts[i] - len);
                len = strlen(texts[i]);
            }
            /* A joined series is only in the bundled set: replay that set. */
            bool one = r[i].input.n_paths == 1;
            snprintf(texts[i] + len, sizeof texts[i] - len, "replay: sebt parity --backend %s --%s %s%s%s%s\n",
                     sebt_backend_selector(b), a->grid ? "grid" : "combos", combos_from, one ? " --data " : "",
                     one ? r[i].input.paths[0] : "", one && r[i].input.fill_gaps ? " --gaps filled"
                                                     : one ? " --gaps plain" : "");
            snprintf(msgs[i], sizeof msgs[i], "%zu of %zu combos diverge", p->combos_diverged, p->combos_checked);
            cases[i] = (cli_junit_case){ .classname = "sebt.parity", .name = r[i].input.label,
                                         .seconds = r[i].seconds,
                                         .outcome = !r[i].ran ? CLI_JUNIT_SKIPPED
                                                    : p->combos_diverged ? CLI_JUNIT_FAILURE : CLI_JUNIT_PASSED,
                                         .message = r[i].ran ? msgs[i] : "not reached", .text = texts[i],
                                         .output = r[i].ran ? outs[i] : NULL };
        }
        char suite[300];
        snprintf(suite, sizeof suite, "sebt parity %s", b->name);
        rc = cli_junit_write("parity", a->junit, suite, cases, n);
    }
    free(cases);
    free(msgs);
    free(texts);
    free(outs);
    return rc;
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
    const char *combos_from = a.grid ? a.grid : a.combos ? a.combos : "oracle/parity-combos.csv";
    sebt_parity_input inputs[MAX_INPUTS];
    static char paths[8][SEBT_PARITY_PATH_MAX];
    size_t n_inputs = a.n_data
                          ? sebt_parity_inputs_for_files(a.data, a.n_data, a.gaps, inputs, MAX_INPUTS)
                          : sebt_parity_default_inputs(BUNDLED_DATA, inputs, MAX_INPUTS, paths, 8);
    if (n_inputs == 0) {
        free(combos);
        return cli_usage_error(cmd, "no data: the bundled files under %s are missing; give --data FILE",
                               BUNDLED_DATA);
    }
    for (size_t i = 0; i < n_inputs; i++)
        inputs[i].lenient = a.lenient;
    parity_ui ui = { .json = a.json };
    cli_progress_init(&ui.prog, "parity");
    cli_progress_units(&ui.prog, "combos", 1.0);
    sebt_parity_opts o = { .threads = a.threads, .memory_budget = a.memory_budget, .on_input = on_input,
                           .progress = cli_progress_update, .user = &ui };
    sebt_parity_result *res = calloc(n_inputs, sizeof *res);
    if (!res) {
        free(combos);
        sebt_error e = { SEBT_ERR_NOMEM, "out of memory" };
        return cli_report_error(cmd, &e);
    }
    sebt_error err = { 0 };
    sebt_status st = sebt_parity_run(b, inputs, n_inputs, combos, n, &o, res, &err);
    cli_progress_finish(&ui.prog);
    free(combos);
    if (st) {
        free(res);
        return cli_report_error(cmd, &err);
    }
    totals t = sum_up(res, n_inputs);
    bool tie_ok = sebt_oracle_tie_rate(t.ties, t.decisions) <= a.max_tie_rate;
    if (a.json)
        write_json(b, combos_from, res, n_inputs, &t, &a, tie_ok);
    else
        write_text(b, combos_from, n, res, n_inputs, &t, &a, tie_ok);
    int junit_rc = a.junit ? write_junit(b, combos_from, res, n_inputs, &a) : CLI_EXIT_OK;
    free(res);
    if (t.diverged || !tie_ok)
        return CLI_EXIT_CHECK_FAILED;
    return junit_rc;
}
