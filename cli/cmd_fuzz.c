/* `sebt fuzz`: differential fuzzing of a backend against the reference,
 * and `--self-test`, which proves the fuzzer catches every planted bug. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "fuzz_mpi.h"
#include "mpi.h"
#include "select.h"
#include "sebt/grid.h"

typedef struct {
    const char *backend;
    uint64_t seed, stream;
    uint64_t iterations;
    double time_s;
    double big_share;        /* < 0: none */
    const char *base;
    double max_tie_rate;
    bool json;
    bool self_test, no_parity, no_suite;
    bool shrink;
    bool no_save;
    const char *save_dir;
    const char *junit;
    int threads;             /* 0: each case's own */
    bool one_case, one_big;  /* --case N / --big-case N */
    uint64_t case_index;
} fuzz_args;

#define DEFAULT_SAVE_DIR "sebt-fuzz-repro"
#define DEFAULT_BASE cli_share("fixtures/data/BTCUSDT-15m-2017-2021.csv.gz")

static void fuzz_epilog(FILE *f)
{
    fputs("\nMutants (planted bugs, for --self-test and --backend mutant:BUG):\n", f);
    for (size_t i = 0; i < sebt_mutant_count(); i++)
        fprintf(f, "  %-22s %s\n", sebt_mutant_at(i)->name, sebt_mutant_bug(i));
    fputs("\nExit codes: 0 nothing found (self-test: every mutant caught), 1 a divergence or too\n"
          "many ties (self-test: a mutant missed), 2 bad usage, 3 no usable GPU.\n", f);
}

enum { OPT_BACKEND, OPT_SEED, OPT_STREAM, OPT_ITERATIONS, OPT_TIME, OPT_BIG_SHARE, OPT_BASE, OPT_MAX_TIE_RATE,
       OPT_SAVE, OPT_NO_SAVE, OPT_NO_SHRINK, OPT_SELF_TEST, OPT_NO_PARITY, OPT_NO_SUITE, OPT_FORMAT, OPT_JUNIT,
       OPT_CASE, OPT_BIG_CASE, OPT_THREADS };
static const cli_opt fuzz_opts[] = {
    [OPT_BACKEND] = { "--backend", CLI_TEXT, "NAME", "reference, fast_cpu, cuda, cpu|gpu|auto, mutant:BUG, a plugin's\n"
                      "path, or exec:CMD, a kernel command ('exec:python3 mine.py',\n"
                      "docs/kernel-protocol.md)",
                      .complete = cli_backend_words },
    [OPT_SEED] = { "--seed", CLI_UINT, "S", "the case sequence (default 1)", .umax = CLI_UINT_MAX },
    [OPT_STREAM] = { "--stream", CLI_UINT, "K", "one of several disjoint case sequences of the seed (default 0;\n"
                     "shards or MPI ranks take one each)", .umax = CLI_UINT_MAX },
    [OPT_ITERATIONS] = { "--iterations", CLI_UINT, "N", "run N cases (default 1000 when --time is not given)",
                         .umin = 1, .umax = CLI_UINT_MAX },
    [OPT_TIME] = { "--time", CLI_REAL, "SECONDS", "run cases for this long (with --self-test: per mutant, default 30)",
                   .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = 1e7 },
    [OPT_BIG_SHARE] = { "--big-share", CLI_REAL, "F", "share of the time spent on big cases, 0 to 1 (default 0.3)",
                        .rmin = 0, .rmax = 1 },
    [OPT_BASE] = { "--base", CLI_FILE, "FILE", "real bars big cases are cut from (default: the bundled\n"
                   "fixtures/data/BTCUSDT-15m-2017-2021.csv.gz)" },
    [OPT_MAX_TIE_RATE] = { "--max-tie-rate", CLI_REAL, "R",
                           "fail when more than R decisions per 10^6 are adjudicated ties\n"
                           "(default 100; exact backends never tie)", .rmin = 0, .rmax = 1e6 },
    [OPT_SAVE] = { "--save", CLI_DIR, "DIR", "where to write the reproducer (default: ./sebt-fuzz-repro in\n"
                   "the current folder; mutants are not saved unless --save is given)" },
    [OPT_NO_SAVE] = { "--no-save", CLI_FLAG, NULL, "do not write the reproducer" },
    [OPT_NO_SHRINK] = { "--no-shrink", CLI_FLAG, NULL, "report the case as generated" },
    [OPT_SELF_TEST] = { "--self-test", CLI_FLAG, NULL, "the mutation score: every mutant below must be caught by the\n"
                        "fuzzer within the time, with a shrunk reproducer of at most 50\n"
                        "bars unless its bug needs more; parity on the bundled data and\n"
                        "the regression fixtures are scored too" },
    [OPT_NO_PARITY] = { "--no-parity", CLI_FLAG, NULL, "self-test: skip the parity score" },
    [OPT_NO_SUITE] = { "--no-suite", CLI_FLAG, NULL, "self-test: skip the regression-fixture score" },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "text (default) or json", .choices = cli_text_json },
    [OPT_JUNIT] = { "--junit", CLI_FILE, "FILE",
                    "also write a JUnit XML report (one testcase: the campaign) to FILE" },
    [OPT_CASE] = { "--case", CLI_UINT, "N", "run only small case N of the seed (what a replay command names)",
                   .umax = CLI_UINT_MAX },
    [OPT_BIG_CASE] = { "--big-case", CLI_UINT, "N", "run only big case N of the seed (cut from --base)",
                       .umax = CLI_UINT_MAX },
    [OPT_THREADS] = CLI_OPT_THREADS("run every case on N threads instead of its own (small cases 1,\n"
                                    "big cases 2-8), except the batch-size cases and wide calls,\n"
                                    "whose thread count (1-8) is part of the case"),
};

const cli_command cli_cmd_fuzz_spec = {
    .name = "fuzz",
    .summary = "differential fuzzing of a backend against the reference",
    .usage = "--backend NAME [--seed S] [--stream K] [--iterations N | --time SECONDS] [--big-share F] [--base FILE] [--max-tie-rate R] [--format text|json] [--junit FILE] [--save DIR | --no-save] [--no-shrink]\n"
             "--self-test [--seed S] [--time SECONDS] [--no-parity] [--no-suite] [--format text|json]\n",
    .about = "Generates series and combos meant to break backends and checks the backend against\n"
             "the reference on each. Small cases (0 to 2,500 bars, 1 to 6 combos, one thread):\n"
             "random walks at prices from 1e-6 to 1e6, holes everywhere, flat and high == low\n"
             "bars, gaps through the stop, bars that touch a stop or target exactly, windows of\n"
             "1, 2 and longer than the series; about one in eight a sweep-shaped grid of 2 to\n"
             "1,100 combos (past 256 and 1,024) with budgets that split it, 1-4 threads; about\n"
             "one in eight a 10^12-10^15 volume spike, subnormal or huge prices or a flat run,\n"
             "then thresholds tied to the reference's own values. By case number k: k mod 32 = 2\n"
             "adds a sweep over costs and time limits, k mod 32 = 5 a batch of 7 to 513 random\n"
             "combos (at and around powers of two, multiples of 8) on 1-8 threads, k mod 256 =\n"
             "18 a wide call of 8,192+ combos on 2-8 threads. Each call runs with trades\n"
             "recorded and again metrics-only (the path a sweep takes); fast_cpu and cuda also\n"
             "tallied, their analysis columns compared with the reference's. Big cases (a share of the\n"
             "time): 100,000 to 140,000 real bars with holes punched in and holes or price jumps\n"
             "at 2^16, 10^5 and 2^17, many combos on either side of the 10^6 bars x combos\n"
             "point, 2-8 threads and memory budgets down to 1 byte; or a sweep of 65,537+ combos\n"
             "on a short series. With --backend cuda under host execution each case gets a\n"
             "device memory size of its own (SEBT_CUDA_HOST_MEMORY, unless set). The same seed\n"
             "gives the same cases on every machine. The first divergence is shrunk to a small\n"
             "case of the same kind (keeping the batch when the bug needs one), written as a\n"
             "regression fixture, and printed.\n",
    .opts = CLI_OPTS(fuzz_opts),
    .epilog_fn = fuzz_epilog,
    .fn = cli_cmd_fuzz,
    .mpi = true,
};

static int parse_args(int argc, char **argv, fuzz_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->shrink = true;
    a->big_share = SEBT_FUZZ_DEFAULT_BIG_SHARE;
    a->max_tie_rate = SEBT_DEFAULT_MAX_TIE_RATE;
    cli_args o;
    int rc = cli_parse(&cli_cmd_fuzz_spec, argc, argv, &o);
    if (rc >= 0)
        return rc;
    a->self_test = cli_given(&o, OPT_SELF_TEST);
    a->shrink = !cli_given(&o, OPT_NO_SHRINK);
    a->no_save = cli_given(&o, OPT_NO_SAVE);
    a->no_parity = cli_given(&o, OPT_NO_PARITY);
    a->no_suite = cli_given(&o, OPT_NO_SUITE);
    if (cli_given(&o, OPT_SEED))
        a->seed = o.v[OPT_SEED].u;
    a->stream = o.v[OPT_STREAM].u;
    if (cli_given(&o, OPT_BIG_SHARE))
        a->big_share = o.v[OPT_BIG_SHARE].r;
    if (cli_given(&o, OPT_MAX_TIE_RATE))
        a->max_tie_rate = o.v[OPT_MAX_TIE_RATE].r;
    a->base = cli_str(&o, OPT_BASE);
    a->backend = cli_str(&o, OPT_BACKEND);
    a->iterations = o.v[OPT_ITERATIONS].u;
    a->time_s = o.v[OPT_TIME].r;
    a->junit = cli_str(&o, OPT_JUNIT);
    a->save_dir = cli_str(&o, OPT_SAVE);
    a->json = cli_given(&o, OPT_FORMAT) && o.v[OPT_FORMAT].choice == 1;
    a->threads = cli_given(&o, OPT_THREADS) ? (int)o.v[OPT_THREADS].u : 0;
    a->one_case = cli_given(&o, OPT_CASE) || cli_given(&o, OPT_BIG_CASE);
    a->one_big = cli_given(&o, OPT_BIG_CASE);
    a->case_index = a->one_big ? o.v[OPT_BIG_CASE].u : o.v[OPT_CASE].u;
    bool have_iter = cli_given(&o, OPT_ITERATIONS), have_time = cli_given(&o, OPT_TIME);
    if (cli_given(&o, OPT_CASE) && cli_given(&o, OPT_BIG_CASE))
        return cli_usage_error(cmd, "give --case or --big-case, not both");
    if (a->one_case && (have_iter || have_time || a->self_test))
        return cli_usage_error(cmd, "--case and --big-case run one case: no --iterations, --time or --self-test");
    if (have_iter && have_time)
        return cli_usage_error(cmd, "give --iterations or --time, not both");
    if (a->save_dir && a->no_save)
        return cli_usage_error(cmd, "--save and --no-save contradict each other");
    if (!a->self_test && (a->no_parity || a->no_suite))
        return cli_usage_error(cmd, "--no-parity and --no-suite go with --self-test");
    if (a->self_test && a->backend)
        return cli_usage_error(cmd, "--self-test fuzzes the built-in mutants; it takes no --backend");
    if (!a->self_test && !a->backend)
        return cli_usage_error(cmd, "--backend NAME is required (or --self-test)");
    if (a->self_test && !have_iter && !have_time)
        a->time_s = 30;
    if (!a->self_test && !have_iter && !have_time)
        a->iterations = 1000;
    /* --save holds one folder per reproducer. */
    const sebt_path_use paths[] = { { "--base", a->base, SEBT_PATH_INPUT, NULL },
                                    { "--backend", a->backend, SEBT_PATH_INPUT, NULL },
                                    { "--junit", a->junit, SEBT_PATH_OUTPUT, NULL },
                                    { "--save", a->no_save ? NULL : a->save_dir ? a->save_dir : DEFAULT_SAVE_DIR,
                                      SEBT_PATH_OUTPUT_DIR, "*/*" } };
    rc = cli_check_paths(cmd, paths, sizeof paths / sizeof paths[0]);
    return rc != CLI_EXIT_OK ? rc : -1;
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

/* The real bars big cases are cut from: --base, else the bundled 15m file.
 * Without it big cases are synthetic (said in the summary). */
static int load_base(const char *cmd, const fuzz_args *a, sebt_series *base, bool *have)
{
    *have = false;
    if (!(a->big_share > 0) && !a->one_big)
        return CLI_EXIT_OK;
    const char *path = a->base ? a->base : DEFAULT_BASE;
    FILE *probe = a->base ? NULL : fopen(path, "rb");
    if (!a->base && !probe)
        return CLI_EXIT_OK;
    if (probe)
        fclose(probe);
    sebt_load_opts lo = { 0 };
    sebt_error err = { 0 };
    if (sebt_load_csv(path, &lo, base, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    *have = true;
    return CLI_EXIT_OK;
}

static void print_paths(const sebt_fuzz_report *r, bool real_base)
{
    const sebt_fuzz_paths *p = &r->paths;
    printf("big cases %llu of %llu (%s bars), largest %zu bars x %zu combos\n",
           (unsigned long long)p->big_cases, (unsigned long long)r->cases_run,
           real_base ? "real" : "synthetic", p->max_bars, p->max_combos);
    if (!p->stats_reported) {
        printf("paths: the backend reports no path statistics (sebt_batch_stats), so the threads,\n"
               "       batches and blocks it took are unknown\n");
        return;
    }
    printf("paths: %llu cases on several threads (up to %d), %llu in several batches (up to %zu),\n"
           "       %llu in several blocks (up to %zu)\n",
           (unsigned long long)p->multi_thread_cases, p->max_threads,
           (unsigned long long)p->multi_batch_cases, p->max_batches,
           (unsigned long long)p->multi_block_cases, p->max_blocks);
}

static void json_paths(cli_json *j, const sebt_fuzz_report *r, bool real_base)
{
    const sebt_fuzz_paths *p = &r->paths;
    cli_json_begin_object(j, "paths");
    cli_json_bool(j, "stats_reported", p->stats_reported);
    cli_json_int(j, "big_cases", (int64_t)p->big_cases);
    cli_json_bool(j, "big_cases_real_bars", real_base);
    cli_json_int(j, "multi_thread_cases", (int64_t)p->multi_thread_cases);
    cli_json_int(j, "multi_batch_cases", (int64_t)p->multi_batch_cases);
    cli_json_int(j, "multi_block_cases", (int64_t)p->multi_block_cases);
    cli_json_int(j, "max_threads", p->max_threads);
    cli_json_int(j, "max_batches", (int64_t)p->max_batches);
    cli_json_int(j, "max_blocks", (int64_t)p->max_blocks);
    cli_json_int(j, "max_bars", (int64_t)p->max_bars);
    cli_json_int(j, "max_combos", (int64_t)p->max_combos);
    cli_json_end_object(j);
}

static int fuzz_one(const fuzz_args *a)
{
    const char *cmd = "fuzz";
    const sebt_backend *b = NULL;
    /* Under MPI every rank sets up alike: an error is printed once. */
    cli_mpi_quiet_begin();
    int rc = cli_select_oracle_backend(cmd, a->backend, &b);
    sebt_series base;
    bool have_base = false;
    if (rc == CLI_EXIT_OK)
        rc = load_base(cmd, a, &base, &have_base);
    rc = cli_mpi_quiet_end(cmd, rc);
    if (rc != CLI_EXIT_OK) {
        if (have_base)
            sebt_series_free(&base);
        return rc;
    }
    bool mutant = strncmp(b->name, "mutant:", 7) == 0;
    const char *save = a->no_save ? NULL : a->save_dir;
    if (!save && !a->no_save && !mutant)
        save = DEFAULT_SAVE_DIR;
    /* Ranks: rank r fuzzes stream --stream + r (a reproducer replays it on
     * one process with that --stream), --iterations is shared out, and the
     * first divergence stops every rank. */
    bool ranks = cli_mpi.active && cli_mpi.size > 1;
    uint64_t iterations = a->iterations;
    if (ranks)
        cli_fuzz_rank_share(a->iterations, &iterations);
    cli_progress prog;
    cli_progress_init(&prog, "fuzz");
    cli_progress_units(&prog, iterations ? "cases" : "s", iterations ? 1.0 : 0.1);
    if (cli_mpi.rank != 0)
        prog.tty = false;
    sebt_fuzz_opts o = { .seed = a->seed, .stream = a->stream + (uint64_t)cli_mpi.rank, .iterations = iterations,
                         .time_s = a->time_s, .big_share = a->big_share > 0 ? a->big_share : -1,
                         .base = have_base ? &base : NULL, .shrink = a->shrink, .save_dir = save,
                         .progress = cli_progress_update, .progress_user = &prog,
                         .should_stop = ranks ? cli_fuzz_should_stop : NULL, .threads = a->threads,
                         .one_case = a->one_case, .one_big = a->one_big, .case_index = a->case_index,
                         .base_path = have_base ? (a->base ? a->base : DEFAULT_BASE) : NULL };
    bool vary_memory = cli_vary_device_memory(b);
    if (vary_memory)
        o.before_case = cli_device_memory_hook;
    sebt_fuzz_opts finish = o;
    if (ranks) {
        o.shrink = false;        /* only the winning rank shrinks and saves */
        o.save_dir = NULL;
    }
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    sebt_status st = SEBT_OK;
    if (a->iterations && iterations == 0)
        memset(&r, 0, sizeof r);     /* more ranks than cases: nothing for this one */
    else
        st = sebt_fuzz_run(b, &o, &r, &err);
    cli_progress_finish(&prog);
    if (have_base)
        sebt_series_free(&base);
    if (st) {
        rc = cli_report_error(cli_mpi_cmd(cmd), &err);
        /* A kernel process that broke: the same cases break it again. */
        const char *sel = sebt_backend_selector(b);
        if ((strncmp(sel, "exec:", 5) == 0 || strncmp(sel, "'exec:", 6) == 0) && cli_mpi.rank == 0) {
            fprintf(stderr, "replay: sebt fuzz --backend %s --seed %" PRIu64, sel, a->seed);
            if (a->stream)
                fprintf(stderr, " --stream %" PRIu64, a->stream);
            if (a->iterations)
                fprintf(stderr, " --iterations %" PRIu64, a->iterations);
            else
                fprintf(stderr, " --time %g", a->time_s);
            fprintf(stderr, " --no-save\n");
        }
        if (ranks)
            cli_mpi_abort(rc);
        return rc;
    }
    cli_fuzz_ranks rk = { .size = 1, .winner = r.found ? 0 : -1, .cases = NULL };
    if (ranks) {
        rc = cli_fuzz_combine(cmd, b, &finish, &r, &rk);
        if (rc != CLI_EXIT_OK)
            cli_mpi_abort(rc);
        if (cli_mpi.rank != 0) {
            sebt_fuzz_report_free(&r);
            return cli_mpi_agree(CLI_EXIT_OK);
        }
    }
    double rate = sebt_oracle_tie_rate(r.ties, r.decisions);
    bool tie_ok = rate <= a->max_tie_rate;
    if (a->json) {
        cli_json j;
        cli_json_begin_check(&j, 1, "fuzz", b);
        cli_json_int(&j, "seed", (int64_t)a->seed);
        cli_json_int(&j, "stream", (int64_t)a->stream);
        cli_json_int(&j, "ranks", rk.size);
        if (rk.cases) {
            cli_json_begin_array(&j, "cases_per_rank");
            for (int k = 0; k < rk.size; k++)
                cli_json_int(&j, NULL, (int64_t)rk.cases[k]);
            cli_json_end_array(&j);
        }
        cli_json_int(&j, "cases", (int64_t)r.cases_run);
        cli_json_int(&j, "combos_checked", (int64_t)r.combos_checked);
        cli_json_int(&j, "decisions", (int64_t)r.decisions);
        cli_json_int(&j, "ties_adjudicated", (int64_t)r.ties);
        cli_json_double(&j, "ties_per_million", rate);
        cli_json_double(&j, "max_tie_rate", a->max_tie_rate);
        cli_json_bool(&j, "tie_rate_ok", tie_ok);
        json_paths(&j, &r, have_base);
        cli_json_double(&j, "seconds", r.seconds);
        cli_json_bool(&j, "found", r.found);
        if (r.found) {
            cli_json_int(&j, "found_by_rank", rk.winner);
            cli_json_int(&j, "found_in_stream", (int64_t)(a->stream + (uint64_t)rk.winner));
            cli_json_string(&j, "case_kind", r.found_big ? "big" : "small");
            cli_json_int(&j, "case", (int64_t)r.found_iteration);
            cli_json_double(&j, "seconds_to_find", r.seconds_to_find);
            cli_json_int(&j, "original_bars", (int64_t)r.original_bars);
            cli_json_int(&j, "reproducer_bars", (int64_t)r.repro.n);
            cli_json_int(&j, "reproducer_combos", (int64_t)r.repro_n_combos);
            cli_json_int(&j, "reproducer_threads", r.repro_threads);
            cli_json_int(&j, "reproducer_memory_budget", (int64_t)r.repro_memory_budget);
            cli_json_divergence(&j, "divergence", &r.divergence);
            cli_json_divergence(&j, "divergence_as_found", &r.original);
            cli_json_bool(&j, "nondeterministic", r.nondeterministic);
            cli_json_bool(&j, "state_between_calls", r.after_previous);
            if (r.nondeterministic)
                cli_json_string(&j, "nondeterministic_detail", r.nondet_detail);
            if (r.saved_path[0])
                cli_json_string(&j, "fixture", r.saved_path);
            else
                cli_json_null(&j, "fixture");
        }
        cli_json_bool(&j, "pass", !r.found && tie_ok);
        cli_json_end_object(&j);
        cli_json_finish(&j);
    } else {
        printf("fuzz %s (%s", b->name, b->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
        if (b->contract.kind == SEBT_CONTRACT_TOLERANT)
            printf(", tol %g", b->contract.tol);
        printf("), seed %" PRIu64, a->seed);
        if (a->stream)
            printf(", stream %" PRIu64, a->stream);
        printf("\ncases %" PRIu64 ", combos checked %zu, %.1f s\n", r.cases_run, r.combos_checked, r.seconds);
        if (rk.cases) {
            printf("ranks %d:", rk.size);
            for (int k = 0; k < rk.size; k++)
                printf("%s rank %d %" PRIu64 " cases (stream %" PRIu64 ")", k ? "," : "", k, rk.cases[k],
                       a->stream + (uint64_t)k);
            printf("\n");
        }
        printf("ties adjudicated %zu of %" PRIu64 " decisions (%.3g per 10^6; limit %g)\n", r.ties,
               r.decisions, rate, a->max_tie_rate);
        print_paths(&r, have_base);
        if (!r.found) {
            printf("result: %s\n", tie_ok ? "no divergence" : "FAIL: too many ties (--max-tie-rate)");
        } else {
            char text[2048];
            if (r.after_previous)
                printf("result: STATE KEPT BETWEEN CALLS in %s %" PRIu64 " (%s) after %.2f s: %s; the case is "
                       "kept as generated (%zu bars), with the %d case%s before it that it needs",
                       r.found_big ? "big case" : "case", r.found_iteration, r.shape, r.seconds_to_find,
                       r.nondet_detail, r.repro.n, r.n_needed, r.n_needed == 1 ? "" : "s");
            else if (r.nondeterministic)
                printf("result: NON-DETERMINISTIC in %s %" PRIu64 " (%s) after %.2f s: the same call gave "
                       "different results (%s); the case is kept as generated (%zu bars)",
                       r.found_big ? "big case" : "case", r.found_iteration, r.shape, r.seconds_to_find,
                       r.nondet_detail, r.repro.n);
            else
                printf("result: DIVERGENCE in %s %" PRIu64 " (%s) after %.2f s; shrunk from %zu to %zu bars",
                       r.found_big ? "big case" : "case", r.found_iteration, r.shape, r.seconds_to_find,
                       r.original_bars, r.repro.n);
            if (rk.cases)
                printf(" (rank %d, stream %" PRIu64 ": `sebt fuzz --seed %" PRIu64 " --stream %" PRIu64
                       "` replays its cases on one process)", rk.winner, a->stream + (uint64_t)rk.winner,
                       a->seed, a->stream + (uint64_t)rk.winner);
            if (r.repro_n_combos > 1 && !r.nondeterministic)
                printf(", %zu combos in one batch (%d threads, memory budget %zu bytes): the bug needs "
                       "the batch%s", r.repro_n_combos, r.repro_threads, r.repro_memory_budget,
                       r.alone_agrees ? " (alone the combo agrees with the reference; in this batch it does not)" : "");
            printf("\n");
            const char *dm = vary_memory ? getenv("SEBT_CUDA_HOST_MEMORY") : NULL;
            if (dm && *dm)
                printf("device memory: %s bytes (SEBT_CUDA_HOST_MEMORY, drawn for this case; the replay "
                       "below draws it again)\n", dm);
            if (!r.nondeterministic && (strcmp(r.original.what, r.divergence.what) != 0 ||
                                        r.original.bar != r.divergence.bar)) {
                sebt_divergence_text(&r.original, text, sizeof text);
                printf("as found:\n%sshrunk:\n", text);
            }
            sebt_divergence_text(&r.divergence, text, sizeof text);
            fputs(text, stdout);
            sebt_fuzz_opts at = o;
            at.stream = a->stream + (uint64_t)(rk.winner > 0 ? rk.winner : 0);
            char again[1600];
            sebt_fuzz_replay_command(b, &at, &r, again, sizeof again);
            printf("the case as generated: %s\n", again);
            printf("reproducer (%zu bars):\n", r.repro.n);
            if (r.repro.n <= 200)
                print_series(stdout, &r.repro);
            if (r.saved_path[0] && r.after_previous) {
                printf("saved to %s (the cases before it in %s/before)\nreplay: sebt validate --backend %s "
                       "--replay %s\n", r.saved_path, r.saved_path, sebt_backend_selector(b), r.saved_path);
            } else if (r.saved_path[0]) {
                printf("saved to %s\nreplay: sebt run --backend %s --data %s/series.csv", r.saved_path,
                       sebt_backend_selector(b), r.saved_path);
                print_params(stdout, &r.repro_params);
                printf("\n");
            }
        }
    }
    int code = r.found || !tie_ok ? CLI_EXIT_CHECK_FAILED : CLI_EXIT_OK;
    if (a->junit) {
        /* One testcase for the campaign; a failure carries the divergence
         * and the command that replays it. */
        char name[300], msg[1200], text[4096] = "", suite[300];
        snprintf(name, sizeof name, "%s seed %llu", b->name, (unsigned long long)a->seed);
        snprintf(suite, sizeof suite, "sebt fuzz %s", b->name);
        if (r.found) {
            if (r.nondeterministic)
                snprintf(msg, sizeof msg, "%s in %scase %llu (%s): %s",
                         r.after_previous ? "state kept between calls" : "non-deterministic", r.found_big ? "big " : "",
                         (unsigned long long)r.found_iteration, r.shape, r.nondet_detail);
            else
                snprintf(msg, sizeof msg, "divergence in %scase %llu (%s), shrunk from %zu to %zu bars",
                         r.found_big ? "big " : "", (unsigned long long)r.found_iteration, r.shape,
                         r.original_bars, r.repro.n);
            sebt_divergence_text(&r.divergence, text, sizeof text);
            size_t len = strlen(text);
            if (r.saved_path[0])
                snprintf(text + len, sizeof text - len, "replay: sebt validate --backend %s --replay %s\n",
                         sebt_backend_selector(b), r.saved_path);
        } else {
            snprintf(msg, sizeof msg, "%s", tie_ok ? "no divergence" : "too many adjudicated ties");
        }
        cli_junit_case c = { .classname = "sebt.fuzz", .name = name, .seconds = r.seconds,
                             .outcome = code ? CLI_JUNIT_FAILURE : CLI_JUNIT_PASSED, .message = msg,
                             .text = text };
        if (cli_junit_write(cmd, a->junit, suite, &c, 1) != CLI_EXIT_OK)
            code = CLI_EXIT_USAGE;
    }
    sebt_fuzz_report_free(&r);
    free(rk.cases);
    return ranks ? cli_mpi_agree(code) : code;
}

#define SELF_TEST_MAX_BARS 50
/* A self-test bounded by cases alone interleaves its big cases by count,
 * not by time, so the same cases run in the same order on any machine and
 * its verdict never depends on the machine's speed or load. */
#define SELF_TEST_BIG_EVERY 500
#define REGRESSIONS_DIR cli_share("fixtures/regressions")
#define PARITY_COMBOS cli_share("parity-combos.csv")
#define BUNDLED_DATA cli_share("fixtures/data")

typedef struct {
    bool fuzz_ok, parity, suite;
    double parity_s;
    char parity_where[400];
    char suite_first[200];
} mutant_score;

/* The grid-shaped combos on one input, as validate runs them; true when
 * they caught the mutant (where: m->parity_where). */
static sebt_status grid_parity(const sebt_backend *b, const sebt_parity_input *in, const sebt_parity_opts *o,
                               mutant_score *m, sebt_error *err)
{
    sebt_params grid[SEBT_PARITY_GRID_COMBOS];
    size_t ng = sebt_parity_grid_combos(grid, SEBT_PARITY_GRID_COMBOS);
    sebt_parity_result gr;
    sebt_status st = sebt_parity_run(b, in, 1, grid, ng, o, &gr, err);
    if (st == SEBT_OK && gr.report.combos_diverged) {
        m->parity = true;
        snprintf(m->parity_where, sizeof m->parity_where, "%.200s, grid-shaped combo %zu: %.180s", gr.input.label,
                 gr.report.details[0].combo, gr.report.details[0].what);
    }
    return st;
}

/* Parity on the bundled data, stopping at the first diverging combo: the
 * grid-shaped combos on the first (smallest) file, then the parity combos
 * on every input, then the grid-shaped ones on the other single files. The
 * cheapest run first: the grid-shaped combos catch what the parity combos
 * cannot (the RSI filter on, work shared between combos), which the whole
 * bundled suite would otherwise run before. */
static sebt_status score_parity(const sebt_backend *b, const sebt_params *combos, size_t n,
                                mutant_score *m, sebt_error *err)
{
    sebt_parity_input inputs[16];
    static char paths[8][SEBT_PARITY_PATH_MAX];
    size_t ni = sebt_parity_default_inputs(BUNDLED_DATA, inputs, 16, paths, 8);
    sebt_parity_result res[16];
    sebt_parity_opts o = { .threads = 1, .stop_first = true };
    double t0 = cli_now();
    bool single0 = ni > 0 && inputs[0].n_paths == 1 && !inputs[0].fill_gaps;
    sebt_status st = single0 ? grid_parity(b, &inputs[0], &o, m, err) : SEBT_OK;
    if (st == SEBT_OK && !m->parity)
        st = sebt_parity_run(b, inputs, ni, combos, n, &o, res, err);
    for (size_t i = 0; st == SEBT_OK && !m->parity && i < ni; i++)
        if (res[i].ran && res[i].report.combos_diverged) {
            m->parity = true;
            const sebt_divergence *d = &res[i].report.details[0];
            snprintf(m->parity_where, sizeof m->parity_where, "%.200s, combo %zu: %.180s", res[i].input.label,
                     d->combo, d->what);
        }
    for (size_t i = single0 ? 1 : 0; st == SEBT_OK && i < ni && !m->parity; i++)
        if (inputs[i].n_paths == 1 && !inputs[i].fill_gaps)
            st = grid_parity(b, &inputs[i], &o, m, err);
    m->parity_s = cli_now() - t0;
    return st;
}

static int self_test(const fuzz_args *a)
{
    const char *cmd = "fuzz";
    size_t n = sebt_mutant_count();
    sebt_params *pcombos = NULL;
    size_t n_pcombos = 0;
    sebt_error err = { 0 };
    if (!a->no_parity && sebt_combos_load(PARITY_COMBOS, &pcombos, &n_pcombos, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    sebt_series base;
    bool have_base;
    int rc = load_base(cmd, a, &base, &have_base);
    if (rc != CLI_EXIT_OK) {
        free(pcombos);
        return rc;
    }
    size_t by_fuzz = 0, by_parity = 0, by_suite = 0, by_any = 0;
    bool all = true;
    cli_json j;
    if (a->json) {
        cli_json_init(&j, stdout, 2);
        cli_json_begin_object(&j, NULL);
        cli_json_schema(&j, "fuzz-self-test");
        cli_json_int(&j, "seed", (int64_t)a->seed);
        cli_json_begin_array(&j, "mutants");
    } else {
        printf("self-test: %zu mutants, seed %" PRIu64 ", fuzz %s %g each%s%s\n\n", n, a->seed,
               a->iterations ? "cases" : "seconds", a->iterations ? (double)a->iterations : a->time_s,
               a->no_parity ? "" : ", parity on the bundled data", a->no_suite ? "" : ", regression fixtures");
        printf("%-22s %-7s %8s %9s %6s  %-24s %-6s %-5s\n", "mutant", "fuzz", "seconds", "case", "bars",
               "first divergence", "parity", "suite");
    }
    for (size_t i = 0; i < n; i++) {
        const sebt_backend *b = sebt_mutant_at(i);
        const char *needs = sebt_mutant_needs(i);
        cli_progress prog;
        cli_progress_init(&prog, b->name);
        cli_progress_units(&prog, a->iterations ? "cases" : "s", a->iterations ? 1.0 : 0.1);
        sebt_fuzz_opts o = { .seed = a->seed, .stream = a->stream, .iterations = a->iterations,
                             .time_s = a->time_s, .big_share = a->big_share > 0 ? a->big_share : -1,
                             .base = have_base ? &base : NULL, .shrink = a->shrink,
                             .save_dir = a->no_save ? NULL : a->save_dir,
                             .progress = cli_progress_update, .progress_user = &prog, .skip_wide = true,
                             .big_every = a->time_s > 0 ? 0 : SELF_TEST_BIG_EVERY };
        sebt_fuzz_report r;
        mutant_score m = { 0 };
        sebt_status st = sebt_fuzz_run(b, &o, &r, &err);
        cli_progress_finish(&prog);
        /* A mutant parity cannot show (sebt_mutant_parity_blind) is not run
         * through it: the bundled suite, minutes of the reference's walk,
         * could only say missed. */
        const char *blind = sebt_mutant_parity_blind(i);
        if (st == SEBT_OK && !a->no_parity && !blind)
            st = score_parity(b, pcombos, n_pcombos, &m, &err);
        else if (blind)
            snprintf(m.parity_where, sizeof m.parity_where, "not run: %s", blind);
        size_t nf = 0, nd = 0;
        if (st == SEBT_OK && !a->no_suite) {
            st = sebt_fixtures_check(b, REGRESSIONS_DIR, &nf, &nd, m.suite_first, sizeof m.suite_first, &err);
            m.suite = nd > 0;
        }
        if (st) {
            free(pcombos);
            if (have_base)
                sebt_series_free(&base);
            return cli_report_error(cmd, &err);
        }
        bool small = r.found && (r.repro.n <= SELF_TEST_MAX_BARS || needs != NULL);
        m.fuzz_ok = r.found && small;
        bool ok = m.fuzz_ok && (a->no_parity || m.parity || blind);
        all = all && ok;
        by_fuzz += r.found;
        by_parity += m.parity;
        by_suite += m.suite;
        by_any += r.found || m.parity || m.suite;
        if (a->json) {
            cli_json_begin_object(&j, NULL);
            cli_json_string(&j, "mutant", b->name);
            cli_json_string(&j, "bug", sebt_mutant_bug(i));
            cli_json_bool(&j, "caught", r.found);
            if (r.found) {
                cli_json_double(&j, "seconds_to_catch", r.seconds_to_find);
                cli_json_string(&j, "case_kind", r.found_big ? "big" : "small");
                cli_json_int(&j, "case", (int64_t)r.found_iteration);
                cli_json_int(&j, "reproducer_bars", (int64_t)r.repro.n);
                cli_json_int(&j, "reproducer_combos", (int64_t)r.repro_n_combos);
                cli_json_divergence(&j, "divergence", &r.divergence);
            }
            if (needs)
                cli_json_string(&j, "reproducer_needs", needs);
            else
                cli_json_null(&j, "reproducer_needs");
            if (!a->no_parity) {
                cli_json_bool(&j, "caught_by_parity", m.parity);
                cli_json_string(&j, "parity_divergence", m.parity_where);
                cli_json_double(&j, "parity_seconds", m.parity_s);
            }
            if (!a->no_suite) {
                cli_json_bool(&j, "caught_by_suite", m.suite);
                cli_json_string(&j, "suite_fixture", m.suite_first);
            }
            cli_json_bool(&j, "ok", ok);
            cli_json_end_object(&j);
        } else {
            char what[64] = "-", when[16] = "-", where[32] = "-", bars[16] = "-";
            if (r.found) {
                if (r.divergence.bar >= 0)
                    snprintf(what, sizeof what, "%.14s at bar %" PRId64, r.divergence.what, r.divergence.bar);
                else
                    snprintf(what, sizeof what, "%.24s", r.divergence.what);
                snprintf(when, sizeof when, "%.2f", r.seconds_to_find);
                snprintf(where, sizeof where, "%s%" PRIu64, r.found_big ? "big " : "", r.found_iteration);
                snprintf(bars, sizeof bars, "%zu%s", r.repro.n, r.repro_n_combos > 1 ? "*" : "");
            }
            printf("%-22s %-7s %8s %9s %6s  %-24s %-6s %-5s\n", b->name,
                   !r.found ? "MISSED" : small ? "caught" : "TOO BIG", when, where, bars, what,
                   a->no_parity ? "" : m.parity ? "caught" : blind ? "blind" : "MISSED",
                   a->no_suite ? "" : m.suite ? "yes" : "no");
            if (needs && r.found && r.repro.n > SELF_TEST_MAX_BARS)
                printf("%-22s   (its reproducer needs %s)\n", "", needs);
            if (blind && !a->no_parity)
                printf("%-22s   (not run through parity, which cannot show it: %s)\n", "", blind);
            if (r.found && r.repro_n_combos > 1)
                printf("%-22s   (* %zu combos in one batch: the bug needs many combos, not many bars)\n",
                       "", r.repro_n_combos);
        }
        fflush(stdout);
        sebt_fuzz_report_free(&r);
    }
    free(pcombos);
    if (have_base)
        sebt_series_free(&base);
    if (a->json) {
        cli_json_end_array(&j);
        cli_json_begin_object(&j, "mutation_score");
        cli_json_int(&j, "total", (int64_t)n);
        cli_json_int(&j, "fuzz", (int64_t)by_fuzz);
        if (!a->no_parity)
            cli_json_int(&j, "parity", (int64_t)by_parity);
        else
            cli_json_null(&j, "parity");
        if (!a->no_suite)
            cli_json_int(&j, "suite", (int64_t)by_suite);
        else
            cli_json_null(&j, "suite");
        cli_json_int(&j, "any", (int64_t)by_any);
        cli_json_end_object(&j);
        cli_json_bool(&j, "all_caught", all);
        cli_json_end_object(&j);
        cli_json_finish(&j);
    } else {
        printf("\nmutation score: fuzz %zu/%zu", by_fuzz, n);
        if (!a->no_parity)
            printf(", parity %zu/%zu", by_parity, n);
        if (!a->no_suite)
            printf(", suite (regression fixtures) %zu/%zu", by_suite, n);
        printf(", any %zu/%zu\n", by_any, n);
        printf("%s\n", all ? "every mutant caught by fuzz (reproducers of at most 50 bars where the bug "
                             "allows) and by parity where it can show the bug"
                           : "FAILED: a mutant was missed, or its reproducer is over 50 bars");
    }
    return all ? CLI_EXIT_OK : CLI_EXIT_CHECK_FAILED;
}

int cli_cmd_fuzz(int argc, char **argv)
{
    fuzz_args a;
    cli_mpi_quiet_begin();
    int rc = parse_args(argc, argv, &a);
    if (rc < 0 && a.self_test && cli_mpi.size > 1)
        rc = cli_usage_error(argv[0], "--self-test runs on one process: start it without mpirun");
    int agreed = cli_mpi_quiet_end(argv[0], rc < 0 ? CLI_EXIT_OK : rc);
    if (rc >= 0 || agreed != CLI_EXIT_OK)
        return rc >= 0 ? rc : agreed;
    return a.self_test ? self_test(&a) : fuzz_one(&a);
}
