/* `sebt fuzz`: differential fuzzing of a backend against the reference,
 * and `--self-test`, which proves the fuzzer catches every planted bug. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fputs("usage: sebt fuzz --backend NAME [--seed S] [--iterations N | --time SECONDS]\n"
          "                 [--format text|json] [--save DIR | --no-save] [--no-shrink]\n"
          "       sebt fuzz --self-test [--seed S] [--time SECONDS] [--format text|json]\n"
          "\n"
          "Generates series and combos meant to break backends (random walks at prices from\n"
          "1e-6 to 1e6, volumes to 1e12, holes everywhere, flat and high == low bars, gaps\n"
          "through the stop, windows of 1, 2 and longer than the series, 0-2 bar series...)\n"
          "and checks the backend against the reference on each. The same seed gives the\n"
          "same cases on every machine. The first divergence is shrunk to a small case,\n"
          "written as a regression fixture, and printed.\n"
          "\n"
          "  --backend NAME     reference, fast_cpu, cuda, cpu|gpu|auto, or mutant:BUG\n"
          "  --seed S           the case sequence (default 1)\n"
          "  --iterations N     run N cases (default 1000 when --time is not given)\n"
          "  --time SECONDS     run cases for this long (with --self-test: per mutant, default 30)\n"
          "  --save DIR         where to write the reproducer (default: the source tree's\n"
          "                     fixtures/regressions; mutants are not saved unless --save is given)\n"
          "  --no-save          do not write the reproducer\n"
          "  --no-shrink        report the case as generated\n"
          "  --self-test        fuzz every mutant below; each must be caught within the time\n"
          "                     with a shrunk reproducer of at most 50 bars\n"
          "  --format FMT       text (default) or json\n"
          "  -h, --help         this help\n"
          "\n"
          "Mutants (planted bugs, for --self-test and --backend mutant:BUG):\n", f);
    for (size_t i = 0; i < sebt_mutant_count(); i++)
        fprintf(f, "  %-20s %s\n", sebt_mutant_at(i)->name, sebt_mutant_bug(i));
    fputs("\nExit codes: 0 nothing found (self-test: every mutant caught), 1 a divergence\n"
          "(self-test: a mutant missed), 2 bad usage, 3 no usable GPU.\n", f);
}

typedef struct {
    const char *backend;
    uint64_t seed;
    uint64_t iterations;
    double time_s;
    bool json;
    bool self_test;
    bool shrink;
    bool no_save;
    const char *save_dir;
} fuzz_args;

static int parse_u64(const char *cmd, const char *flag, const char *v, uint64_t *out)
{
    char *end;
    if (!v || !*v || *v == '-')
        return cli_usage_error(cmd, "%s expects a whole number, got '%s'", flag, v ? v : "");
    unsigned long long x = strtoull(v, &end, 10);
    if (*end)
        return cli_usage_error(cmd, "%s expects a whole number, got '%s'", flag, v);
    *out = x;
    return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, fuzz_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->shrink = true;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
    bool have_iter = false, have_time = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        bool missing = false;
        int rc = CLI_EXIT_OK;
        if (strcmp(arg, "--self-test") == 0) {
            a->self_test = true;
        } else if (strcmp(arg, "--no-shrink") == 0) {
            a->shrink = false;
        } else if (strcmp(arg, "--no-save") == 0) {
            a->no_save = true;
        } else if (cli_opt_value(argc, argv, &i, "--backend", &v, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--backend needs a NAME");
            a->backend = v;
        } else if (cli_opt_value(argc, argv, &i, "--seed", &v, &missing)) {
            rc = parse_u64(cmd, "--seed", v, &a->seed);
        } else if (cli_opt_value(argc, argv, &i, "--iterations", &v, &missing)) {
            rc = parse_u64(cmd, "--iterations", v, &a->iterations);
            if (rc == CLI_EXIT_OK && a->iterations == 0)
                return cli_usage_error(cmd, "--iterations must be at least 1");
            have_iter = true;
        } else if (cli_opt_value(argc, argv, &i, "--time", &v, &missing)) {
            char *end = NULL;
            a->time_s = v ? strtod(v, &end) : 0;
            if (!v || end == v || *end || !(a->time_s > 0) || a->time_s > 1e7)
                return cli_usage_error(cmd, "--time expects a number of seconds > 0, got '%s'", v ? v : "");
            have_time = true;
        } else if (cli_opt_value(argc, argv, &i, "--save", &v, &missing)) {
            if (missing)
                return cli_usage_error(cmd, "--save needs a DIR");
            a->save_dir = v;
        } else if (cli_opt_value(argc, argv, &i, "--format", &v, &missing)) {
            if (missing || (strcmp(v, "text") != 0 && strcmp(v, "json") != 0))
                return cli_usage_error(cmd, "--format expects text or json");
            a->json = strcmp(v, "json") == 0;
        } else if (arg[0] == '-') {
            return cli_usage_error(cmd, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(cmd, "unexpected argument '%s'", arg);
        }
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (have_iter && have_time)
        return cli_usage_error(cmd, "give --iterations or --time, not both");
    if (a->save_dir && a->no_save)
        return cli_usage_error(cmd, "--save and --no-save contradict each other");
    if (a->self_test && a->backend)
        return cli_usage_error(cmd, "--self-test fuzzes the built-in mutants; it takes no --backend");
    if (!a->self_test && !a->backend)
        return cli_usage_error(cmd, "--backend NAME is required (or --self-test)");
    if (a->self_test && !have_iter && !have_time)
        a->time_s = 30;
    if (!a->self_test && !have_iter && !have_time)
        a->iterations = 1000;
    return -1;
}

/* The shortest decimal that reads back to the same double: a reproducer
 * is for reading, and 608.5893329 reads better than 608.58933290000004. */
static void shortest(double v, char *buf, size_t size)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        bool exp_form = strchr(buf, 'e') != NULL && fabs(v) >= 1e-4 && fabs(v) < 1e15;
        if ((strtod(buf, NULL) == v && !exp_form) || v != v)
            return;
    }
}

static void print_series(FILE *f, const sebt_series *s)
{
    fprintf(f, "  %4s  %-20s  %-24s %-24s %-24s %-24s %s\n", "bar", "time (UTC)", "open", "high",
            "low", "close", "volume");
    for (size_t t = 0; t < s->n; t++) {
        char when[40];
        cli_format_utc(s->ts[t], when, sizeof when);
        fprintf(f, "  %4zu  %-20s", t, when);
        double v[5] = { s->open[t], s->high[t], s->low[t], s->close[t], s->volume[t] };
        for (int i = 0; i < 5; i++) {
            char buf[40];
            shortest(v[i], buf, sizeof buf);
            fprintf(f, " %-24s", buf);
        }
        fputc('\n', f);
    }
}

static void print_params(FILE *f, const sebt_params *p)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        char v[64];
        sebt_params_format(p, i, v, sizeof v);
        fprintf(f, " --set %s=%s", sebt_param_table[i].name, v);
    }
}

static int fuzz_one(const fuzz_args *a)
{
    const char *cmd = "fuzz";
    const sebt_backend *b;
    int rc = cli_select_oracle_backend(cmd, a->backend, &b);
    if (rc != CLI_EXIT_OK)
        return rc;
    bool mutant = strncmp(b->name, "mutant:", 7) == 0;
    const char *save = a->no_save ? NULL : a->save_dir;
    if (!save && !a->no_save && !mutant)
        save = SEBT_FIXTURES_DIR "/regressions";
    cli_progress prog;
    cli_progress_init(&prog, "fuzz");
    sebt_fuzz_opts o = { .seed = a->seed, .iterations = a->iterations, .time_s = a->time_s,
                         .shrink = a->shrink, .save_dir = save, .progress = cli_progress_update,
                         .progress_user = &prog };
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    sebt_status st = sebt_fuzz_run(b, &o, &r, &err);
    cli_progress_finish(&prog);
    if (st)
        return cli_report_error(cmd, &err);
    if (a->json) {
        cli_json j;
        cli_json_init(&j, stdout, 1);
        cli_json_begin_object(&j, NULL);
        cli_json_string(&j, "backend", b->name);
        cli_json_int(&j, "seed", (int64_t)a->seed);
        cli_json_int(&j, "cases", (int64_t)r.cases_run);
        cli_json_int(&j, "combos_checked", (int64_t)r.combos_checked);
        cli_json_int(&j, "ties_adjudicated", (int64_t)r.ties);
        cli_json_double(&j, "seconds", r.seconds);
        cli_json_bool(&j, "found", r.found);
        if (r.found) {
            cli_json_int(&j, "case", (int64_t)r.found_iteration);
            cli_json_double(&j, "seconds_to_find", r.seconds_to_find);
            cli_json_int(&j, "original_bars", (int64_t)r.original_bars);
            cli_json_int(&j, "reproducer_bars", (int64_t)r.repro.n);
            cli_json_divergence(&j, "divergence", &r.divergence);
            if (r.saved_path[0])
                cli_json_string(&j, "fixture", r.saved_path);
            else
                cli_json_null(&j, "fixture");
        }
        cli_json_end_object(&j);
        cli_json_finish(&j);
    } else {
        printf("fuzz %s (%s", b->name, b->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
        if (b->contract.kind == SEBT_CONTRACT_TOLERANT)
            printf(", tol %g", b->contract.tol);
        printf("), seed %" PRIu64 "\n", a->seed);
        printf("cases %" PRIu64 ", combos checked %zu, ties adjudicated %zu, %.1f s\n", r.cases_run,
               r.combos_checked, r.ties, r.seconds);
        if (!r.found) {
            printf("result: no divergence\n");
        } else {
            char text[2048];
            printf("result: DIVERGENCE in case %" PRIu64 " (%s) after %.2f s; shrunk from %zu to %zu bars\n",
                   r.found_iteration, r.shape, r.seconds_to_find, r.original_bars, r.repro.n);
            sebt_divergence_text(&r.divergence, text, sizeof text);
            fputs(text, stdout);
            printf("reproducer (%zu bars):\n", r.repro.n);
            if (r.repro.n <= 200)
                print_series(stdout, &r.repro);
            if (r.saved_path[0]) {
                printf("saved to %s\nreplay: sebt run --backend %s --data %s/series.csv", r.saved_path,
                       b->name, r.saved_path);
                print_params(stdout, &r.repro_params);
                printf("\n");
            }
        }
    }
    int code = r.found ? CLI_EXIT_CHECK_FAILED : CLI_EXIT_OK;
    sebt_fuzz_report_free(&r);
    return code;
}

#define SELF_TEST_MAX_BARS 50

static int self_test(const fuzz_args *a)
{
    size_t n = sebt_mutant_count();
    bool all = true;
    cli_json j;
    if (a->json) {
        cli_json_init(&j, stdout, 2);
        cli_json_begin_object(&j, NULL);
        cli_json_int(&j, "seed", (int64_t)a->seed);
        cli_json_begin_array(&j, "mutants");
    } else {
        printf("self-test: fuzzing %zu mutants, seed %" PRIu64 ", %s %g each\n\n", n, a->seed,
               a->iterations ? "cases" : "seconds", a->iterations ? (double)a->iterations : a->time_s);
        printf("%-20s %-7s %9s %6s %6s  %s\n", "mutant", "caught", "seconds", "case", "bars", "first divergence");
    }
    for (size_t i = 0; i < n; i++) {
        const sebt_backend *b = sebt_mutant_at(i);
        cli_progress prog;
        cli_progress_init(&prog, b->name);
        sebt_fuzz_opts o = { .seed = a->seed, .iterations = a->iterations, .time_s = a->time_s,
                             .shrink = a->shrink, .save_dir = a->no_save ? NULL : a->save_dir,
                             .progress = cli_progress_update, .progress_user = &prog };
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        sebt_status st = sebt_fuzz_run(b, &o, &r, &err);
        cli_progress_finish(&prog);
        if (st)
            return cli_report_error("fuzz", &err);
        bool ok = r.found && r.repro.n <= SELF_TEST_MAX_BARS;
        all = all && ok;
        if (a->json) {
            cli_json_begin_object(&j, NULL);
            cli_json_string(&j, "mutant", b->name);
            cli_json_string(&j, "bug", sebt_mutant_bug(i));
            cli_json_bool(&j, "caught", r.found);
            if (r.found) {
                cli_json_double(&j, "seconds_to_catch", r.seconds_to_find);
                cli_json_int(&j, "case", (int64_t)r.found_iteration);
                cli_json_int(&j, "reproducer_bars", (int64_t)r.repro.n);
                cli_json_divergence(&j, "divergence", &r.divergence);
            }
            cli_json_bool(&j, "ok", ok);
            cli_json_end_object(&j);
        } else if (r.found) {
            char where[64] = "";
            if (r.divergence.bar >= 0)
                snprintf(where, sizeof where, " at bar %" PRId64, r.divergence.bar);
            printf("%-20s %-7s %9.2f %6" PRIu64 " %6zu  %s%s%s\n", b->name, ok ? "yes" : "TOO BIG",
                   r.seconds_to_find, r.found_iteration, r.repro.n, r.divergence.what, where,
                   r.saved_path[0] ? "" : "");
        } else {
            printf("%-20s %-7s %9s %6s %6s  not caught in %" PRIu64 " cases\n", b->name, "NO", "-", "-",
                   "-", r.cases_run);
        }
        fflush(stdout);
        sebt_fuzz_report_free(&r);
    }
    if (a->json) {
        cli_json_end_array(&j);
        cli_json_bool(&j, "all_caught", all);
        cli_json_end_object(&j);
        cli_json_finish(&j);
    } else {
        printf("\n%s\n", all ? "every mutant caught, each with a reproducer of at most 50 bars"
                             : "FAILED: a mutant was missed or its reproducer is over 50 bars");
    }
    return all ? CLI_EXIT_OK : CLI_EXIT_CHECK_FAILED;
}

int cli_cmd_fuzz(int argc, char **argv)
{
    fuzz_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    return a.self_test ? self_test(&a) : fuzz_one(&a);
}
