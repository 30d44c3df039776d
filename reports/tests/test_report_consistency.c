/* One report, one truth: every figure the report leads with is checked
 * against bench.json, read here with jansson (not through the report's own
 * reader), and against the tables below it, in index.html and report.md.
 *
 * The run is recorded/normal.json: a --quick run on a 2-core machine that
 * others were loading (README.md in the data folder). What the report must
 * say is worked out from its repetitions:
 * - the headline: fast_cpu's sweep of 10000 combos over 152832 bars on
 *   every core; backtests/s = 10000 / the median real time of its 5
 *   repetitions, its range 10000 / the slowest and / the fastest;
 * - the gated ratio: per repetition, the reference's CPU time over
 *   fast_cpu's on the pair sweep; the report gives the median and range;
 * - one workload, one number: the thread-scaling row on 2 threads (every
 *   core) is the same workload as the combo sweep of 1000 combos on every
 *   core, so both rows show 1000 / that sweep's median real time. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/tests/scratch_dir.h"
#include "run_sebt.h"
#include "sebt/sebt.h"

#define DATA SEBT_REPORT_TEST_DATA

static sebt_run_result r;

static char *slurp(const char *sub, const char *name)
{
    char folder[512];
    snprintf(folder, sizeof folder, "%s/%s", dir, sub);
    return slurp_in(folder, name);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The repetitions of one benchmark in Google Benchmark's JSON, in seconds:
 * real time, or CPU time. */
static size_t reps_of(json_t *root, const char *name, bool cpu, double *out, size_t max)
{
    size_t n = 0, i;
    json_t *b;
    json_array_foreach(json_object_get(root, "benchmarks"), i, b) {
        const char *nm = json_string_value(json_object_get(b, "name"));
        const char *type = json_string_value(json_object_get(b, "run_type"));
        if (!nm || strncmp(nm, name, strlen(name)) != 0 || (nm[strlen(name)] && nm[strlen(name)] != '/') ||
            (type && strcmp(type, "aggregate") == 0) || n == max)
            continue;
        const char *unit = json_string_value(json_object_get(b, "time_unit"));
        double scale = !unit || strcmp(unit, "ns") == 0 ? 1e-9 : strcmp(unit, "us") == 0 ? 1e-6
                     : strcmp(unit, "ms") == 0 ? 1e-3 : 1;
        out[n++] = json_number_value(json_object_get(b, cpu ? "cpu_time" : "real_time")) * scale;
    }
    return n;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A rate as the report prints it: three significant digits, k/M. */
static void rate_text(double v, char *buf, size_t size)
{
    const char *unit = "";
    if (v >= 1e6) {
        v /= 1e6;
        unit = " M";
    } else if (v >= 1e3) {
        v /= 1e3;
        unit = " k";
    }
    snprintf(buf, size, "%.3g%s", v, unit);
}

typedef struct {
    char rate[32], lo[32], hi[32];
    size_t n;
} sweep_rate;

static sweep_rate rate_of(json_t *root, const char *name, long long combos)
{
    double t[64];
    sweep_rate s;
    s.n = reps_of(root, name, false, t, 64);
    cr_assert_gt(s.n, 0, "%s is not in bench.json", name);
    double med = median(t, s.n);
    rate_text((double)combos / med, s.rate, sizeof s.rate);
    rate_text((double)combos / t[s.n - 1], s.lo, sizeof s.lo);
    rate_text((double)combos / t[0], s.hi, sizeof s.hi);
    return s;
}

#define HAS(hay, needle) cr_assert(strstr((hay), (needle)), "expected\n  %s\nin the report", (needle))

/* The text of the HTML element that starts with open, up to close. */
static char *between(const char *hay, const char *open, const char *close, char *buf, size_t size)
{
    const char *a = strstr(hay, open);
    cr_assert_not_null(a, "no %s in the report", open);
    a += strlen(open);
    const char *b = strstr(a, close);
    cr_assert_not_null(b);
    snprintf(buf, size, "%.*s", (int)(b - a), a);
    return buf;
}

/* A cell of the HTML row that starts with row_start: the skip-th after it
 * (1: the next). */
static void html_cell(const char *html, const char *row_start, int skip, char *out, size_t size)
{
    const char *p = strstr(html, row_start);
    cr_assert_not_null(p, "no row %s", row_start);
    p += strlen(row_start);
    for (int k = 0; k < skip; k++) {
        p = strstr(p, "<td>");
        cr_assert_not_null(p);
        p += 4;
    }
    const char *e = strstr(p, "</td>");
    snprintf(out, size, "%.*s", (int)(e - p), p);
}

/* A cell of the Markdown row that starts with row_start (which ends with
 * "| "): 0 the next, skip cells further on. */
static void md_cell(const char *md, const char *row_start, int skip, char *out, size_t size)
{
    const char *p = strstr(md, row_start);
    cr_assert_not_null(p, "no Markdown row %s", row_start);
    p += strlen(row_start);
    for (int k = 0; k < skip; k++) {
        p = strstr(p, " | ");
        cr_assert_not_null(p);
        p += 3;
    }
    size_t len = strcspn(p, "|");
    while (len && p[len - 1] == ' ')
        len--;
    snprintf(out, size, "%.*s", (int)len, p);
}

SEBT_SCRATCH_SUITE(report_truth, "report_truth");

Test(report_truth, each_headline_figure_matches_bench_json_and_the_tables)
{
    SKIP_WITHOUT_GNUPLOT();
    run_sebt_expect(&r, "", 0, "report --out '%s/out' --from '%s/recorded/normal.json' --history none "
                    "--big-sweeps none", dir, DATA);
    char *html = slurp("out", "index.html"), *md = slurp("out", "report.md");
    char path[4096];
    snprintf(path, sizeof path, "%s/out/bench.json", dir);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    cr_assert_not_null(root, "%s", jerr.text);

    /* The headline: fixed workload, its number from the repetitions. */
    sweep_rate h = rate_of(root, "sweep_combos/fast_cpu/bars:152832/combos:10000/threads:0", 10000);
    char want[512], got[2048];
    snprintf(want, sizeof want, "speed: fast_cpu runs %s backtests/s (%s-%s over %zu repetitions): sweeps of 10000 "
             "combos over 152832 bars, every core (2 threads); MEASURED UNDER LOAD", h.rate, h.lo, h.hi, h.n);
    between(html, "<p class=\"speed\">", "</p>", got, sizeof got);
    cr_assert(strncmp(got, want, strlen(want)) == 0, "headline\n  %s\nwanted\n  %s", got, want);
    HAS(md, want);
    /* ... and the same number in the Sweeps table's row and the Backends table. */
    html_cell(html, "<tr><td>sweep_combos</td><td>fast_cpu</td><td>152832</td><td>10000</td><td>all</td>", 6,
              got, sizeof got);
    cr_assert_str_eq(got, h.rate, "the Sweeps table's HTML row says %s", got);
    md_cell(md, "| sweep_combos | fast_cpu | 152832 | 10000 | all | ", 5, got, sizeof got);
    cr_assert_str_eq(got, h.rate, "the Sweeps table's Markdown row says %s", got);
    snprintf(want, sizeof want, "measured: %s backtests/s on 10000 combos x 152832 bars, every core (2 threads)",
             h.rate);
    HAS(html, want);
    HAS(md, want);

    /* The gated ratio: the reference's CPU time over fast_cpu's, per repetition. */
    double ref[64], fast[64], ratio[64];
    size_t nr = reps_of(root, "pair/reference/bars:10000/combos:8/threads:1", true, ref, 64);
    size_t nf = reps_of(root, "pair/fast_cpu/bars:10000/combos:8/threads:1", true, fast, 64);
    cr_assert(nr == nf && nr > 0);
    for (size_t i = 0; i < nr; i++)
        ratio[i] = ref[i] / fast[i];
    double med = median(ratio, nr);
    snprintf(want, sizeof want, "fast_cpu = %.0f x the reference (%.0f-%.0f; one thread each, CPU time)", med,
             ratio[0], ratio[nr - 1]);
    between(html, "<p class=\"verdict ", "</p>", got, sizeof got);
    HAS(got, want);
    HAS(md, want);
    char cellbuf[64], wmed[32];
    snprintf(wmed, sizeof wmed, "%.0f", med);
    html_cell(html, "<tr><td>fast_cpu / reference (gated by --baseline)</td>", 1, cellbuf, sizeof cellbuf);
    cr_assert_str_eq(cellbuf, wmed, "the Ratios table says %s", cellbuf);

    /* One workload, one number: 1000 combos on every core (2 threads). */
    sweep_rate t = rate_of(root, "sweep_combos/fast_cpu/bars:152832/combos:1000/threads:0", 1000);
    html_cell(html, "<tr><td>sweep_combos</td><td>fast_cpu</td><td>152832</td><td>1000</td><td>all</td>", 6, got,
              sizeof got);
    cr_assert_str_eq(got, t.rate);
    html_cell(html, "<tr><td>threads</td><td>fast_cpu</td><td>152832</td><td>1000</td><td>2</td>", 6, got,
              sizeof got);
    cr_assert_str_eq(got, t.rate, "the threads row says %s where the combo sweep of the same workload says %s",
                     got, t.rate);
    md_cell(md, "| threads | fast_cpu | 152832 | 1000 | 2 | ", 5, got, sizeof got);
    cr_assert_str_eq(got, t.rate);

    /* Taken under load (others used most of the CPUs): every figure of
     * this run says so, in both formats. */
    static const char *const figs[] = { "throughput_vs_combos", "throughput_vs_bars", "ratios_within_run",
                                        "thread_scaling" };
    for (size_t i = 0; i < 4; i++) {
        char open[128];
        snprintf(open, sizeof open, "<figure id=\"%s\">", figs[i]);
        const char *fig = strstr(html, open);
        cr_assert_not_null(fig, "%s", figs[i]);
        const char *cap = strstr(fig, "<figcaption>"), *end = strstr(fig, "</figcaption>");
        cr_assert(cap && end);
        snprintf(got, sizeof got, "%.*s", (int)(end - cap), cap);
        HAS(got, "MEASURED UNDER LOAD");
        snprintf(open, sizeof open, "![%s](%s.svg)", figs[i], figs[i]);
        const char *m = strstr(md, open);
        cr_assert_not_null(m);
        const char *next = strstr(m + 1, "![");
        snprintf(got, sizeof got, "%.*s", (int)(next ? next - m : (long)strlen(m)), m);
        HAS(got, "MEASURED UNDER LOAD");
    }
    json_decref(root);
    free(html);
    free(md);
}

/* --baseline with --out: the gate's verdict leads the HTML and the
 * Markdown, its table is there, and the exit code is the gate's. The
 * planted run did every fast_cpu call twice: the gated ratio halves. */
Test(report_truth, the_baseline_verdict_is_in_the_report)
{
    SKIP_WITHOUT_GNUPLOT();
    run_sebt_expect(&r, "", 1, "report --baseline '%s/recorded/normal.json' '%s/recorded/normal_planted.json' "
                    "--out '%s/b' --history none --big-sweeps none", DATA, DATA, dir);
    char *html = slurp("b", "index.html"), *md = slurp("b", "report.md"), got[2048];
    between(html, "<p class=\"verdict bad\">", "</p>", got, sizeof got);
    HAS(got, "verdict: REGRESSION against the baseline ");
    HAS(md, "**verdict: REGRESSION against the baseline ");
    HAS(html, "<h2>Against the baseline</h2>");
    HAS(html, "<tr class=\"flag\"><td>pair bars:10000 combos:8 threads:1: fast_cpu/reference</td>");
    HAS(md, "## Against the baseline");
    HAS(md, "**REGRESSION: fast_cpu lost ");
    free(html);
    free(md);
}

/* The big sweeps come from sebt's shared files, not the working folder:
 * the same section from / as from the checkout, its engines named. */
Test(report_truth, the_same_report_from_any_folder)
{
    SKIP_WITHOUT_GNUPLOT();
    char args[4096];
    snprintf(args, sizeof args, "report --out '%s/a' --from '%s/recorded/normal.json' --history none", dir, DATA);
    char here[4096];
    cr_assert_not_null(getcwd(here, sizeof here));
    cr_assert_eq(chdir("/"), 0);
    run_sebt("", args, &r);
    cr_assert_eq(chdir(here), 0);
    cr_assert_eq(r.status, 0, "%s", r.out);
    char *html = slurp("a", "index.html");
    HAS(html, "<h2>Big sweeps</h2>");
    HAS(html, "<figure id=\"big_sweeps\">");
    cr_assert_null(strstr(html, "No big-sweep benchmark was found"));
    cr_assert_null(strstr(html, "<td>sebt-old</td>"), "an unexplained engine name");
    free(html);
}
