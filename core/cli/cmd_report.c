/* sebt report: run the benchmarks (or read an earlier run) and write the
 * performance report folder; or compare two runs and gate on regressions. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

#ifndef SEBT_GNUPLOT_PATH
#define SEBT_GNUPLOT_PATH ""
#endif
#ifndef SEBT_BENCH_NAME
#define SEBT_BENCH_NAME "sebt_bench"
#endif

#define CMD "report"
#define DEFAULT_THRESHOLD_PCT 25.0

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sebt report --out DIR [--quick] [--from BENCH.json]\n"
            "       sebt report --baseline OLD.json NEW.json [--threshold PCT]\n\n"
            "The first form runs the benchmarks (sebt_bench, found next to sebt or through\n"
            "SEBT_BENCH_BINARY) or reads an earlier run's JSON (--from), and writes DIR with\n"
            "index.html (opens without a network), report.md, bench.json and the figures\n"
            "as .svg and .png (drawn by gnuplot; SEBT_GNUPLOT names another one).\n"
            "--quick caps the sizes so the whole run takes under two minutes on two cores.\n\n"
            "The second form compares two runs' JSON. Machines differ and are noisy, so\n"
            "it gates only on ratios measured within one run (fast_cpu over reference,\n"
            "cuda over fast_cpu on the same work): a ratio that fell by more than PCT\n"
            "percent (default %.0f) is a regression. Absolute times are shown, not gated.\n\n"
            "Exit codes: 0 ok; 1 a backend failed parity in the run, or a regression was\n"
            "flagged; 2 bad usage or input, or the benchmark program or gnuplot is missing.\n",
            DEFAULT_THRESHOLD_PCT);
}

/* ---- finding the programs ----------------------------------------------- */

static bool executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* A program name without a slash is looked up on PATH, as exec would. */
static bool find_program(const char *name, char *out, size_t size)
{
    if (strchr(name, '/')) {
        snprintf(out, size, "%s", name);
        return executable(name);
    }
    const char *path = getenv("PATH");
    if (!path)
        return false;
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, size, "%.*s/%s", (int)len, len ? path : ".", name);
        if (executable(out))
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

static int find_gnuplot(char *out, size_t size)
{
    const char *env = getenv("SEBT_GNUPLOT");
    const char *want = env && *env ? env : SEBT_GNUPLOT_PATH[0] ? SEBT_GNUPLOT_PATH : "gnuplot";
    if (find_program(want, out, size))
        return CLI_EXIT_OK;
    fprintf(stderr, "sebt %s: error: gnuplot is needed to draw the report's figures and '%s' %s; "
                    "install it (apt-get install gnuplot-nox) or set SEBT_GNUPLOT\n",
            CMD, want, strchr(want, '/') ? "is not an executable file" : "is not on PATH");
    return CLI_EXIT_USAGE;
}

static int find_bench(char *out, size_t size)
{
    const char *env = getenv("SEBT_BENCH_BINARY");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        if (executable(out))
            return CLI_EXIT_OK;
        fprintf(stderr, "sebt %s: error: SEBT_BENCH_BINARY=%s is not an executable file\n", CMD, env);
        return CLI_EXIT_USAGE;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        int w = snprintf(out, size, "%s/%s", self, SEBT_BENCH_NAME);
        if (w > 0 && (size_t)w < size && executable(out))
            return CLI_EXIT_OK;
    }
    fprintf(stderr, "sebt %s: error: the benchmark program %s is not built next to sebt "
                    "(%s): install Google Benchmark (apt-get install libbenchmark-dev) and "
                    "rebuild, set SEBT_BENCH_BINARY, or pass --from BENCH.json\n",
            CMD, SEBT_BENCH_NAME, n > 0 ? out : "cannot read /proc/self/exe");
    return CLI_EXIT_USAGE;
}

/* ---- running the benchmarks --------------------------------------------- */

/* The benchmark's console table goes to our stderr: stdout stays for the
 * one line that says where the report is. */
static int run_bench(const char *bench, const char *json_path, bool quick)
{
    char out_flag[PATH_MAX + 32];
    snprintf(out_flag, sizeof out_flag, "--benchmark_out=%s", json_path);
    char *argv[] = { (char *)bench, out_flag, (char *)"--benchmark_out_format=json",
                     quick ? (char *)"--quick" : NULL, NULL };
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sebt %s: error: cannot start %s: %s\n", CMD, bench, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execv(bench, argv);
        fprintf(stderr, "sebt %s: error: cannot run %s: %s\n", CMD, bench, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "sebt %s: error: waiting for %s: %s\n", CMD, bench, strerror(errno));
            return CLI_EXIT_USAGE;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "sebt %s: error: %s %s %d; no report written\n", CMD, bench,
                WIFEXITED(status) ? "exited with status" : "was killed by signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_OK;
}

/* ---- the report folder --------------------------------------------------- */

static int write_report(const char *dir, const char *from, bool quick)
{
    char gnuplot[PATH_MAX], bench[PATH_MAX], json_path[PATH_MAX + 16], source[PATH_MAX + 64];
    /* Both programs are looked for before minutes of benchmarking. */
    int rc = find_gnuplot(gnuplot, sizeof gnuplot);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (from) {
        snprintf(json_path, sizeof json_path, "%s", from);
        snprintf(source, sizeof source, "read from %s", from);
    } else {
        rc = find_bench(bench, sizeof bench);
        if (rc != CLI_EXIT_OK)
            return rc;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "sebt %s: error: cannot create %s: %s\n", CMD, dir, strerror(errno));
            return CLI_EXIT_USAGE;
        }
        snprintf(json_path, sizeof json_path, "%s/bench.json", dir);
        snprintf(source, sizeof source, "measured by %s%s for this report", SEBT_BENCH_NAME,
                 quick ? " --quick" : "");
        fprintf(stderr, "sebt %s: running %s%s (its table follows)\n", CMD, bench, quick ? " --quick" : "");
        rc = run_bench(bench, json_path, quick);
        if (rc != CLI_EXIT_OK)
            return rc;
    }

    sebt_error err = { 0 };
    char *json;
    size_t len;
    if (sebt_read_file(json_path, &json, &len, &err) != SEBT_OK)
        return cli_report_error(CMD, &err);
    sebt_bench_set set;
    if (sebt_bench_parse(json_path, json, len, &set, &err) != SEBT_OK) {
        free(json);
        return cli_report_error(CMD, &err);
    }
    sebt_report_opts opts = { .gnuplot = gnuplot, .source = source };
    sebt_status st = sebt_report_write(&set, json, len, dir, &opts, &err);
    free(json);
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
    printf("sebt report: wrote %s/index.html (also report.md, bench.json and %d figures as .svg and .png)\n",
           dir, SEBT_REPORT_N_FIGURES);
    sebt_bench_set_free(&set);
    if (failed || errors) {
        fprintf(stderr, "sebt %s: %zu benchmark(s) failed parity and %zu failed to run: see the report\n",
                CMD, failed, errors);
        return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_OK;
}

/* ---- the baseline gate --------------------------------------------------- */

static void print_ratio(double v)
{
    if (isfinite(v))
        printf("%10.2fx", v);
    else
        printf("%11s", "-");
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
    printf("Ratios within each run (how many times faster; gated at -%g%%):\n", threshold);
    printf("  %-62s %11s %11s %8s  %s\n", "work: faster/slower backend", "old", "new", "change", "");
    for (size_t i = 0; i < b.n_ratios; i++) {
        const sebt_ratio_row *r = &b.ratios[i];
        printf("  %-62s ", r->what);
        print_ratio(r->old_ratio);
        printf(" ");
        print_ratio(r->new_ratio);
        if (isfinite(r->change_pct))
            printf(" %+7.1f%%", r->change_pct);
        else
            printf(" %8s", "-");
        printf("  %s\n", r->note);
    }
    if (b.n_times > 0) {
        printf("\nTime per iteration across the runs (new/old; machines differ, not gated):\n");
        for (size_t i = 0; i < b.n_times; i++)
            printf("  %-86s %8.2f\n", b.times[i].name, b.times[i].ratio);
    }
    printf("\n");
    if (b.n_flagged > 0) {
        printf("REGRESSION: %zu of %zu ratio(s) flagged (threshold %g%%)\n", b.n_flagged, b.n_ratios, threshold);
        rc = CLI_EXIT_CHECK_FAILED;
    } else if (b.n_compared == 0) {
        fprintf(stderr, "sebt %s: error: %s and %s share no ratio to compare (no backend pair ran the "
                        "same work in both)\n", CMD, old_path, new_path);
        rc = CLI_EXIT_USAGE;
    } else {
        printf("ok: %zu ratio(s) compared, none fell by more than %g%%\n", b.n_compared, threshold);
    }
    sebt_baseline_free(&b);
done:
    sebt_bench_set_free(&old_set);
    sebt_bench_set_free(&new_set);
    return rc;
}

int cli_cmd_report(int argc, char **argv)
{
    const char *out = NULL, *from = NULL, *old_path = NULL, *new_path = NULL;
    bool quick = false, have_threshold = false;
    double threshold = DEFAULT_THRESHOLD_PCT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--quick") == 0) {
            quick = true;
        } else if (strcmp(a, "--out") == 0 || strcmp(a, "--from") == 0 || strcmp(a, "--threshold") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error(CMD, "%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--out") == 0) {
                out = v;
            } else if (strcmp(a, "--from") == 0) {
                from = v;
            } else {
                char *end;
                errno = 0;
                threshold = strtod(v, &end);
                if (end == v || *end != '\0' || errno || !isfinite(threshold) || threshold < 0)
                    return cli_usage_error(CMD, "--threshold takes a percentage >= 0, got '%s'", v);
                have_threshold = true;
            }
        } else if (strcmp(a, "--baseline") == 0) {
            if (i + 2 >= argc)
                return cli_usage_error(CMD, "--baseline needs two files: OLD.json NEW.json");
            old_path = argv[++i];
            new_path = argv[++i];
        } else {
            return cli_usage_error(CMD, "unknown argument '%s'", a);
        }
    }
    if (old_path) {
        if (out || from || quick)
            return cli_usage_error(CMD, "--baseline compares two files; it takes no --out, --from or --quick");
        return compare_runs(old_path, new_path, threshold);
    }
    if (have_threshold)
        return cli_usage_error(CMD, "--threshold goes with --baseline");
    if (!out)
        return cli_usage_error(CMD, "--out DIR is required (or --baseline OLD.json NEW.json)");
    if (from && quick)
        return cli_usage_error(CMD, "--quick sizes a new run; it has no meaning with --from");
    return write_report(out, from, quick);
}
