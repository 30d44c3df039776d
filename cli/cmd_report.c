/* sebt report: run the benchmarks (or read an earlier run) and write the
 * performance report folder; or compare two runs and gate on regressions. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "report.h"
#include "sebt/outfile.h"
#include "sebt/spawn.h"

#ifndef SEBT_BENCH_NAME
#define SEBT_BENCH_NAME "sebt_bench"
#endif

#define CMD "report"
#define DEFAULT_THRESHOLD_PCT 25.0
/* --baseline: no regression shown, but a drop the repetitions cannot
 * confirm. Not 1: a CI that treats it as a failure would cry wolf on a
 * noisy machine; not 0: someone should look, or re-run. */
#define EXIT_INCONCLUSIVE 4

static void report_about(FILE *f)
{
    fprintf(f,
            "The first form runs the benchmarks (sebt_bench, installed in PREFIX/lib/sebt,\n"
            "or SEBT_BENCH_BINARY; its console output goes to DIR/bench.log) or reads an\n"
            "earlier run's JSON (--from), and writes DIR with index.html (opens without a\n"
            "network), report.md, bench.json and the figures as .svg and .png (drawn by\n"
            "gnuplot; SEBT_GNUPLOT names another one). Every point is repeated (5 times in\n"
            "--quick, 7 in a full run), shown as the median with its min-max range, with\n"
            "its coefficient of variation and what else the machine was running. The numba\n"
            "peer (bench/peers/numba_peer.py) runs on the same data when numba is installed.\n"
            "--quick caps the sizes so the whole run takes about two minutes on two cores.\n"
            "DIR is written beside itself (.DIR.tmp-PID-N) and replaces DIR whole at the end,\n"
            "so an interrupted or failed run leaves the previous report as it was; an\n"
            "existing DIR must be empty or an earlier report (other files: exit 2).\n"
            "The report shows the big-sweep benchmark of bench/run_big_sweeps.sh: its\n"
            "runs.jsonl as installed with sebt (share/sebt/" SEBT_BIG_SWEEPS_SHARE "; a build folder\n"
            "links it to " SEBT_BIG_SWEEPS_DEFAULT "), whatever the working folder, or\n"
            "--big-sweeps FILE; it says how to make one when there is none.\n"
            "A new run appends one line to the history file (default\n"
            "$XDG_STATE_HOME/sebt/history.csv, else ~/.local/state/sebt/history.csv: never\n"
            "the source tree; 'none' for no history), which the report plots; a redraw\n"
            "(--from) appends only with --append-history (a run made elsewhere, say a CI\n"
            "artifact). The project's own record is bench/results/history.csv, named with\n"
            "--history.\n\n"
            "The second form compares two runs' JSON. Machines differ and are noisy, so\n"
            "it gates only on ratios measured within one run: fast_cpu over the reference\n"
            "on one thread each (CPU time), cuda over fast_cpu on the same work. Each\n"
            "repetition gives one ratio; the two runs' ratios are compared with a\n"
            "Mann-Whitney U test (two-sided, alpha %.2f). A ratio whose median fell by more\n"
            "than PCT percent (default %.0f, the minimum effect size) is a regression when\n"
            "the test confirms it (p < alpha) and every new repetition fell by more than\n"
            "PCT percent from the old median, and inconclusive when either does not: a\n"
            "loaded or noisy run is inconclusive (exit 4), never a regression.\n"
            "Absolute times are shown, not gated. With --out DIR too, it draws NEW.json's report\n"
            "into DIR with the comparison as its verdict and a section of its own (the same\n"
            "exit codes).\n",
            SEBT_BASELINE_ALPHA, DEFAULT_THRESHOLD_PCT);
}

enum { OPT_OUT, OPT_QUICK, OPT_FROM, OPT_HISTORY, OPT_APPEND_HISTORY, OPT_BIG_SWEEPS, OPT_BASELINE, OPT_THRESHOLD };
static const cli_opt report_opts[] = {
    [OPT_OUT] = { "--out", CLI_DIR, "DIR", "the report folder to write" },
    [OPT_QUICK] = { "--quick", CLI_FLAG, NULL, "cap the sizes: about two minutes on two cores" },
    [OPT_FROM] = { "--from", CLI_FILE, "BENCH.json", "draw the report of an earlier run instead of running" },
    [OPT_HISTORY] = { "--history", CLI_FILE, "FILE|none", "the history file a new run appends to ('none': no history)" },
    [OPT_APPEND_HISTORY] = { "--append-history", CLI_FLAG, NULL, "with --from: append that run to the history too" },
    [OPT_BIG_SWEEPS] = { "--big-sweeps", CLI_FILE, "FILE|none",
                         "the big-sweep runs to show (default: the copy installed with sebt)" },
    [OPT_BASELINE] = { "--baseline", CLI_FILE, "OLD.json NEW.json", "compare two runs' JSON and gate on regressions",
                       .words = 2 },
    [OPT_THRESHOLD] = { "--threshold", CLI_REAL, "PCT", "with --baseline: the drop in percent that counts",
                        .rmin = 0, .rmax = INFINITY },
};

const cli_command cli_cmd_report_spec = {
    .name = "report",
    .summary = "benchmark and write a performance report",
    .usage = "--out DIR [--quick] [--history FILE|none]\n"
             "--out DIR --from BENCH.json [--history FILE|none [--append-history]]\n"
             "--baseline OLD.json NEW.json [--threshold PCT] [--out DIR [--history FILE|none] [--big-sweeps FILE|none]]\n",
    .about_fn = report_about,
    .opts = CLI_OPTS(report_opts),
    .epilog = "Exit codes: 0 ok; 1 a backend failed parity in the run, or a regression;\n"
              "2 bad usage or input, or the benchmark program or gnuplot is missing;\n"
              "4 inconclusive (--baseline: a drop the repetitions cannot confirm: too noisy\n"
              "or too few repetitions; run again on a quieter machine).\n",
    .fn = cli_cmd_report,
};

/* ---- finding the programs ----------------------------------------------- */

static int find_bench(char *out, size_t size)
{
    const char *env = getenv("SEBT_BENCH_BINARY");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        if (cli_executable(out))
            return CLI_EXIT_OK;
        fprintf(stderr, "sebt %s: error: SEBT_BENCH_BINARY=%s is not an executable file\n", CMD, env);
        return CLI_EXIT_USAGE;
    }
    /* PREFIX/lib/sebt/sebt_bench, or the top of the build folder. */
    if (sebt_part_path(SEBT_BENCH_NAME, out, size) && cli_executable(out)) {
        /* The benchmarks run this sebt and read these shared files, not
         * whatever another installation would find. */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0 && !getenv("SEBT_BINARY")) {
            self[n] = '\0';
            setenv("SEBT_BINARY", self, 1);
        }
        if (sebt_data_dir() && !getenv("SEBT_SHARE_DIR"))
            setenv("SEBT_SHARE_DIR", sebt_data_dir(), 1);
        return CLI_EXIT_OK;
    }
    fprintf(stderr, "sebt %s: error: the benchmark program %s is not installed with sebt "
                    "(looked for %s): install Google Benchmark (apt-get install libbenchmark-dev) and "
                    "rebuild, set SEBT_BENCH_BINARY, or pass --from BENCH.json\n",
            CMD, SEBT_BENCH_NAME, out);
    return CLI_EXIT_USAGE;
}

/* The history a new run appends to unless told (--history): outside any
 * checkout, where the user's state lives (XDG base directories), so a
 * report never edits the source tree. NULL when there is no home. */
static const char *default_history(void)
{
    static char path[PATH_MAX];
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    if (state && state[0] == '/')
        snprintf(path, sizeof path, "%s/sebt/history.csv", state);
    else if (home && home[0] == '/')
        snprintf(path, sizeof path, "%s/.local/state/sebt/history.csv", home);
    else
        return NULL;
    return path;
}

/* mkdir -p of the folder holding path. */
static int make_parent(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* ---- running the benchmarks --------------------------------------------- */

/* The benchmark's console table goes to a log file beside the report:
 * stdout stays for the short summary. It runs in its own process group
 * (include/sebt/spawn.h): a signal to sebt stops it and all it started. */
static int run_bench(const char *bench, const char *json_path, const char *log_path, bool quick)
{
    char out_flag[PATH_MAX + 32];
    snprintf(out_flag, sizeof out_flag, "--benchmark_out=%s", json_path);
    char *argv[] = { (char *)bench, out_flag, (char *)"--benchmark_out_format=json",
                     quick ? (char *)"--quick" : NULL, NULL };
    sebt_error err = { 0 };
    sebt_child c;
    int status;
    if (sebt_child_start(&c, bench, argv, NULL, log_path, &err) != SEBT_OK ||
        sebt_child_wait(&c, &status, &err) != SEBT_OK) {
        fprintf(stderr, "sebt %s: error: %s\n", CMD, err.msg);
        return CLI_EXIT_USAGE;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[600];
        sebt_report_log_tail(log_path, tail, sizeof tail);
        fprintf(stderr, "sebt %s: error: %s %s %d; no report written; its last output: %s\n", CMD, bench,
                WIFEXITED(status) ? "exited with status" : "was killed by signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail[0] ? tail : "nothing");
        return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_OK;
}

/* ---- the report folder --------------------------------------------------- */

/* Copies a redrawn run's bench.log into the new folder, which replaces the
 * one it may have come from. A missing log is no error. */
static int copy_log(const char *from, const char *to)
{
    sebt_error err = { 0 };
    char *text;
    size_t len;
    if (access(from, R_OK) != 0 || sebt_read_file(from, &text, &len, &err) != SEBT_OK)
        return CLI_EXIT_OK;
    sebt_outfile of;
    if (sebt_outfile_open(&of, to, &err) != SEBT_OK) {
        free(text);
        return cli_report_error(CMD, &err);
    }
    fwrite(text, 1, len, of.f);
    free(text);
    if (sebt_outfile_commit(&of, &err) != SEBT_OK)
        return cli_report_error(CMD, &err);
    return CLI_EXIT_OK;
}

/* Everything is written into od->tmp, a folder beside DIR, and only a
 * whole report replaces DIR (sebt_outdir_commit): an interrupted or failed
 * run leaves the previous report as it was. */
/* What --baseline found, as its exit code: 1 a regression, 4 inconclusive,
 * 2 nothing to compare, 0 ok. */
static int baseline_code(const sebt_baseline *b)
{
    return b->n_flagged ? CLI_EXIT_CHECK_FAILED : b->n_compared == 0 ? CLI_EXIT_USAGE
           : b->n_inconclusive ? EXIT_INCONCLUSIVE : CLI_EXIT_OK;
}

typedef struct {
    const char *old_path;      /* --baseline OLD (with --out): compare the drawn run with it */
    double threshold;
} baseline_arg;

static int write_into(sebt_outdir *od, const char *dir, const char *from, bool quick, const char *history,
                      bool force_append, const char *gnuplot, const sebt_big_sweeps *big, const baseline_arg *ba)
{
    char bench[PATH_MAX], json_path[PATH_MAX + 16], source[PATH_MAX + 64], log_path[PATH_MAX + 16];
    int rc;
    if (from) {
        snprintf(json_path, sizeof json_path, "%s", from);
        snprintf(source, sizeof source, "read from %s", from);
        /* the benchmark's console output, if it lies beside the JSON */
        const char *slash = strrchr(from, '/');
        snprintf(log_path, sizeof log_path, "%.*s/bench.log", slash ? (int)(slash - from) : 1, slash ? from : ".");
    } else {
        rc = find_bench(bench, sizeof bench);
        if (rc != CLI_EXIT_OK)
            return rc;
        snprintf(json_path, sizeof json_path, "%s/bench.json", od->tmp);
        snprintf(source, sizeof source, "measured by %s%s for this report", SEBT_BENCH_NAME,
                 quick ? " --quick" : "");
        snprintf(log_path, sizeof log_path, "%s/bench.log", od->tmp);
        fprintf(stderr, "sebt %s: running %s%s (%s; its output goes to %s/bench.log)\n", CMD, bench,
                quick ? " --quick" : "", quick ? "about two minutes" : "tens of minutes", dir);
        rc = run_bench(bench, json_path, log_path, quick);
        if (rc != CLI_EXIT_OK)
            return rc;
    }

    sebt_error err = { 0 };
    char *json;
    size_t len;
    if (sebt_read_file(json_path, &json, &len, &err) != SEBT_OK)
        return cli_report_error(CMD, &err);
    /* Parsed before anything is published: a truncated bench.json never
     * replaces a good one. */
    sebt_bench_set set;
    if (sebt_bench_parse(json_path, json, len, &set, &err) != SEBT_OK) {
        free(json);
        return cli_report_error(CMD, &err);
    }
    const char *planted = sebt_bench_context(&set, "sebt_planted_slowdown");
    bool is_planted = planted && strcmp(planted, "true") == 0;
    /* A redraw (--from) is not a new measurement, and a planted slowdown is
     * a test of the gate, not the engine: neither goes into the history. */
    /* The verdict weighs this run against the history before it is appended. */
    sebt_report_summary summary;
    sebt_report_summary_of(&set, history, log_path, &summary);
    sebt_report_opts opts = { .gnuplot = gnuplot, .source = source, .history = history,
                              .append_history = history && (!from || force_append) && !is_planted,
                              .summary = &summary, .big_sweeps = big };
    sebt_baseline base;
    int base_rc = CLI_EXIT_OK;
    if (ba->old_path) {
        sebt_bench_set old_set;
        if (sebt_bench_read(ba->old_path, &old_set, &err) != SEBT_OK ||
            sebt_baseline_compare(&old_set, &set, ba->threshold, &base, &err) != SEBT_OK) {
            if (old_set.runs)
                sebt_bench_set_free(&old_set);
            sebt_bench_set_free(&set);
            free(json);
            return cli_report_error(CMD, &err);
        }
        sebt_bench_set_free(&old_set);
        sebt_report_summary_baseline(&summary, &base, ba->old_path);
        opts.baseline = &base;
        opts.baseline_name = ba->old_path;
        base_rc = baseline_code(&base);
    }
    if (opts.append_history && make_parent(history) != 0) {
        fprintf(stderr, "sebt %s: error: cannot create the folder of the history file %s: %s "
                        "(--history FILE or none)\n", CMD, history, strerror(errno));
        sebt_bench_set_free(&set);
        free(json);
        return CLI_EXIT_USAGE;
    }
    if (from) {
        char to[PATH_MAX + 16];
        snprintf(to, sizeof to, "%s/bench.log", od->tmp);
        rc = copy_log(log_path, to);
        if (rc != CLI_EXIT_OK) {
            if (opts.baseline)
                sebt_baseline_free(&base);
            sebt_bench_set_free(&set);
            free(json);
            return rc;
        }
    }
    sebt_status st = sebt_report_write(&set, json, len, od->tmp, &opts, &err);
    if (opts.baseline)
        sebt_baseline_free(&base);
    free(json);
    if (st == SEBT_OK)
        st = sebt_outdir_commit(od, &err);
    if (st != SEBT_OK) {
        sebt_bench_set_free(&set);
        return cli_report_error(CMD, &err);
    }

    size_t failed = 0, errors = 0;
    for (size_t i = 0; i < set.n_runs; i++) {
        const sebt_bench_run *r = &set.runs[i];
        if (r->status == SEBT_RUN_PARITY_FAILED || r->status == SEBT_RUN_ERROR) {
            fprintf(stderr, "sebt %s: %s: %s\n", CMD, r->name, r->message);
            failed += r->status == SEBT_RUN_PARITY_FAILED;
            errors += r->status == SEBT_RUN_ERROR;
        }
    }
    /* What the report leads with, in the same words: the verdict, one
     * speed figure, and what could make them wrong, each once. */
    printf("sebt report: %s\nsebt report: %s\n", summary.verdict, summary.headline);
    char why[256];
    if (sebt_run_loaded(&set, why, sizeof why))
        printf("sebt report: the machine was loaded: %s\n", why);
    if (summary.warning[0])
        printf("sebt report: %s\n", summary.warning);
    if (opts.append_history)
        printf("sebt report: appended this run to %s\n", history);
    else if (history && is_planted)
        printf("sebt report: not appended to the history (SEBT_FAST_CPU_PLANTED_SLOWDOWN is set)\n");
    printf("sebt report: wrote %s/index.html (also report.md, bench.json and %d figures as .svg and .png)\n",
           dir, SEBT_REPORT_N_FIGURES + (int)sebt_report_has_big_figure(big));
    sebt_bench_set_free(&set);
    if (failed || errors) {
        fprintf(stderr, "sebt %s: %zu benchmark(s) failed parity and %zu failed to run: see the report\n",
                CMD, failed, errors);
        return CLI_EXIT_CHECK_FAILED;
    }
    return base_rc;
}

static int write_report(const char *dir, const char *from, bool quick, const char *history, bool force_append,
                        const char *big_path, const baseline_arg *ba)
{
    char gnuplot[PATH_MAX];
    /* Both programs are looked for, and the folder checked, before minutes
     * of benchmarking. */
    int rc = cli_find_gnuplot(CMD, "draw the report's figures", gnuplot, sizeof gnuplot);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!from) {
        char bench[PATH_MAX];
        rc = find_bench(bench, sizeof bench);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    sebt_error err = { 0 };
    sebt_big_sweeps big;
    if (sebt_big_sweeps_read(big_path, &big, &err) != SEBT_OK)
        return cli_report_error(CMD, &err);
    sebt_outdir od;
    if (sebt_report_folder_check(dir, &err) != SEBT_OK || sebt_outdir_open(&od, dir, &err) != SEBT_OK) {
        sebt_big_sweeps_free(&big);
        return cli_report_error(CMD, &err);
    }
    rc = write_into(&od, dir, from, quick, history, force_append, gnuplot, big_path ? &big : NULL, ba);
    sebt_outdir_abort(&od); /* after a commit: nothing left to do */
    if (rc == CLI_EXIT_OK || rc == CLI_EXIT_CHECK_FAILED || (ba->old_path && rc == EXIT_INCONCLUSIVE)) {
        if (big.found && big.n_rows)
            printf("sebt report: big sweeps: %zu runs in %zu workloads from %s\n", big.n_runs, big.n_rows, big.path);
        else if (big_path)
            printf("sebt report: no big-sweep benchmark at %s (bench/run_big_sweeps.sh makes one)\n", big_path);
        else
            printf("sebt report: no big-sweep benchmark: sebt's shared files were not found "
                   "(--big-sweeps FILE names one)\n");
    }
    sebt_big_sweeps_free(&big);
    return rc;
}

/* ---- the baseline gate --------------------------------------------------- */

static void print_ratio(double v)
{
    if (isfinite(v))
        printf("%9.2fx", v);
    else
        printf("%10s", "-");
}

static void print_range(double lo, double hi)
{
    char buf[64] = "-";
    if (isfinite(lo) && isfinite(hi))
        snprintf(buf, sizeof buf, "%.4g-%.4g", lo, hi);
    printf(" %-17s", buf);
}

static int compare_runs(const char *old_path, const char *new_path, double threshold)
{
    sebt_error err = { 0 };
    sebt_bench_set old_set, new_set;
    if (sebt_bench_read(old_path, &old_set, &err) != SEBT_OK)
        return cli_report_error(CMD, &err);
    if (sebt_bench_read(new_path, &new_set, &err) != SEBT_OK) {
        sebt_bench_set_free(&old_set);
        return cli_report_error(CMD, &err);
    }
    sebt_baseline b;
    int rc = CLI_EXIT_OK;
    if (sebt_baseline_compare(&old_set, &new_set, threshold, &b, &err) != SEBT_OK) {
        rc = cli_report_error(CMD, &err);
        goto done;
    }
    printf("Ratios within each run (how many times faster; median and min-max over the repetitions).\n"
           "A drop beyond %g%% is a regression when a Mann-Whitney U test of the two runs' ratios\n"
           "gives p < %g and every new repetition fell that far below the old median, inconclusive\n"
           "when either does not.\n", threshold, b.alpha);
    printf("  %-68s %4s %10s %-17s %10s %-17s %8s %7s  %s\n", "work: faster/slower backend", "time", "old",
           " (range, n)", "new", " (range, n)", "change", "p", "verdict");
    for (size_t i = 0; i < b.n_ratios; i++) {
        const sebt_ratio_row *r = &b.ratios[i];
        printf("  %-68s %4s ", r->what, r->measure ? r->measure : "");
        print_ratio(r->old_ratio);
        print_range(r->old_min, r->old_max);
        printf(" ");
        print_ratio(r->new_ratio);
        print_range(r->new_min, r->new_max);
        if (isfinite(r->change_pct))
            printf(" %+7.1f%%", r->change_pct);
        else
            printf(" %8s", "-");
        if (isfinite(r->p_value))
            printf(" %7.4f", r->p_value);
        else
            printf(" %7s", "-");
        printf("  %s (n = %zu, %zu)\n", r->note, r->old_n, r->new_n);
    }
    char why[256];
    bool old_loaded = sebt_run_loaded(&old_set, why, sizeof why);
    printf("\nold run: %s%s\n", old_loaded ? "LOADED: " : "quiet: ", why);
    bool new_loaded = sebt_run_loaded(&new_set, why, sizeof why);
    printf("new run: %s%s\n", new_loaded ? "LOADED: " : "quiet: ", why);
    if (b.n_times > 0) {
        printf("\nTime per iteration across the runs (new/old median; machines differ, not gated):\n");
        for (size_t i = 0; i < b.n_times; i++)
            printf("  %-70s %8.2f\n", b.times[i].name, b.times[i].ratio);
    }
    printf("\n");
    if (b.n_flagged > 0) {
        printf("REGRESSION: %zu of %zu ratio(s) flagged (minimum effect %g%%, p < %g)\n", b.n_flagged,
               b.n_ratios, threshold, b.alpha);
        rc = CLI_EXIT_CHECK_FAILED;
    } else if (b.n_compared == 0) {
        fprintf(stderr, "sebt %s: error: %s and %s share no ratio to compare (no backend pair ran the "
                        "same work in both)\n", CMD, old_path, new_path);
        rc = CLI_EXIT_USAGE;
    } else if (b.n_inconclusive > 0) {
        printf("INCONCLUSIVE: %zu of %zu ratio(s) fell by more than %g%% but the repetitions do not confirm "
               "it; no regression is claimed (exit %d)\n", b.n_inconclusive, b.n_compared, threshold,
               EXIT_INCONCLUSIVE);
        rc = EXIT_INCONCLUSIVE;
    } else {
        printf("ok: %zu ratio(s) compared, none fell by more than %g%%\n", b.n_compared, threshold);
    }
    if (b.n_dropped)
        printf("DROP, not gated: %zu ratio(s) against the numba peer fell by more than %g%% (marked DROP above)\n",
               b.n_dropped, threshold);
    sebt_baseline_free(&b);
done:
    sebt_bench_set_free(&old_set);
    sebt_bench_set_free(&new_set);
    return rc;
}

int cli_cmd_report(int argc, char **argv)
{
    cli_args o;
    int rc = cli_parse(&cli_cmd_report_spec, argc, argv, &o);
    if (rc >= 0)
        return rc;
    const char *out = cli_str(&o, OPT_OUT), *from = cli_str(&o, OPT_FROM), *old_path = NULL, *new_path = NULL;
    if (cli_given(&o, OPT_BASELINE)) {
        old_path = o.v[OPT_BASELINE].values[0];
        new_path = o.v[OPT_BASELINE].values[1];
    }
    const char *history = default_history();
    bool have_history = cli_given(&o, OPT_HISTORY), force_append = cli_given(&o, OPT_APPEND_HISTORY);
    if (have_history)
        history = strcmp(cli_str(&o, OPT_HISTORY), "none") == 0 ? NULL : cli_str(&o, OPT_HISTORY);
    bool quick = cli_given(&o, OPT_QUICK), have_threshold = cli_given(&o, OPT_THRESHOLD);
    double threshold = have_threshold ? o.v[OPT_THRESHOLD].r : DEFAULT_THRESHOLD_PCT;
    if (old_path && !out) {
        if (from || quick || have_history || cli_given(&o, OPT_BIG_SWEEPS))
            return cli_usage_error(CMD, "--baseline compares two files; it takes no --from, --quick, --history "
                                        "or --big-sweeps (with --out DIR it draws NEW.json's report)");
        return compare_runs(old_path, new_path, threshold);
    }
    if (old_path) {
        if (from || quick)
            return cli_usage_error(CMD, "--baseline OLD.json NEW.json --out DIR draws NEW.json's report: it takes "
                                        "no --from or --quick");
        from = new_path;
    }
    if (have_threshold && !old_path)
        return cli_usage_error(CMD, "--threshold goes with --baseline");
    if (!out)
        return cli_usage_error(CMD, "--out DIR is required (or --baseline OLD.json NEW.json)");
    if (from && quick)
        return cli_usage_error(CMD, "--quick sizes a new run; it has no meaning with --from");
    if (force_append && !from)
        return cli_usage_error(CMD, "--append-history goes with --from (a new run is always appended)");
    if (force_append && !history)
        return cli_usage_error(CMD, "--append-history needs a history file (--history FILE)");
    /* Read from sebt's shared files, never from the working folder: the
     * same report from anywhere. */
    const char *big = sebt_data_dir() ? cli_share(SEBT_BIG_SWEEPS_SHARE) : NULL;
    if (cli_given(&o, OPT_BIG_SWEEPS)) {
        big = strcmp(cli_str(&o, OPT_BIG_SWEEPS), "none") == 0 ? NULL : cli_str(&o, OPT_BIG_SWEEPS);
        if (big && access(big, R_OK) != 0) {
            fprintf(stderr, "sebt %s: error: --big-sweeps %s: %s\n", CMD, big, strerror(errno));
            return CLI_EXIT_USAGE;
        }
    }
    /* The history is appended to as it is (an output beside the inputs);
     * --out is replaced whole, so the history may not lie in it. The inputs
     * may: each is read whole before the folder is swapped, and a redraw in
     * place (--from DIR/bench.json --out DIR) carries bench.json over. */
    bool appends = history && (!from || force_append);
    const sebt_path_use paths[] = {
        { "--history", history, appends ? SEBT_PATH_OUTPUT : SEBT_PATH_INPUT, NULL },
        { "--from", old_path ? NULL : from, SEBT_PATH_INPUT, NULL },
        { "--baseline", old_path, SEBT_PATH_INPUT, NULL },
        { "--baseline", new_path, SEBT_PATH_INPUT, NULL },
        { "--big-sweeps", big, SEBT_PATH_INPUT, NULL },
    };
    const sebt_path_use folder[] = { { "--out", out, SEBT_PATH_OUTPUT_DIR, NULL },
                                     { "--history", history, SEBT_PATH_OUTPUT, NULL } };
    if ((rc = cli_check_paths(CMD, paths, sizeof paths / sizeof paths[0])) != CLI_EXIT_OK ||
        (rc = cli_check_paths(CMD, folder, 2)) != CLI_EXIT_OK)
        return rc;
    baseline_arg ba = { old_path, threshold };
    return write_report(out, from, quick, history, force_append, big, &ba);
}
