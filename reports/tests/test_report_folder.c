/* sebt report --out DIR --from JSON writes the whole folder: HTML that
 * needs no network, the Markdown copy, the JSON and every figure. */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../../core/tests/scratch_dir.h"
#include "run_sebt.h"
#include "report.h"
#include "sebt/sebt.h"

#define DATA SEBT_REPORT_TEST_DATA

static sebt_run_result r;

static char *slurp(const char *name) { return slurp_in(dir, name); }

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

SEBT_SCRATCH_SUITE(report_folder, "report");

Test(report_folder, every_file_is_written)
{
    SKIP_WITHOUT_GNUPLOT();
    run_sebt_expect(&r, "", 0, "report --out '%s/out' --from '%s/run_ok.json' --big-sweeps none", dir, DATA);
    cr_assert(strstr(r.out, "/out/index.html"), "it says where the report is: %s", r.out);

    strcat(dir, "/out");
    const char *files[] = { "index.html", "report.md", "bench.json", "gnuplot/figures.gp" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        cr_assert_gt(file_size(dir, files[i]), 0, "%s", files[i]);
    for (int i = 0; i < SEBT_REPORT_N_FIGURES; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s.svg", sebt_report_figures[i]);
        cr_assert_gt(file_size(dir, name), 0, "%s", name);
        snprintf(name, sizeof name, "%s.png", sebt_report_figures[i]);
        cr_assert_gt(file_size(dir, name), 0, "%s", name);
    }
    cr_assert_eq(file_size(dir, "bench.json"), file_size(DATA, "run_ok.json"));

    char *html = slurp("index.html");
    /* Every figure inline; nothing fetched from a network. */
    cr_assert_eq(count(html, "data:image/svg+xml;base64,"), SEBT_REPORT_N_FIGURES);
    cr_assert_eq(count(html, "http://"), 0);
    cr_assert_eq(count(html, "https://"), 0);
    cr_assert_eq(count(html, "<script"), 0);
    cr_assert_eq(count(html, "<link"), 0);
    free(html);

    char *md = slurp("report.md");
    /* No peer in this run, and the report says so. */
    cr_assert(strstr(md, "numba: the peer was not run"), "%s", md);
    /* The verdict first; run_ok has no gated pair and no history. */
    cr_assert(strncmp(md, "# sebt performance report\n\n**verdict: pass: parity ok on every backend that ran; the "
                          "gated pair", 90) == 0, "%s", md);
    /* cuda's reason, said once: in its row of the Backends table. */
    cr_assert(strstr(md, "| cuda | not recorded | not run here: unavailable: no usable CUDA device"), "%s", md);
    cr_assert_eq(count(md, "no usable CUDA device"), 1, "%s", md);
    /* Sorted: sweep_bars before sweep_combos, the reference after fast_cpu, sizes up. */
    const char *a = strstr(md, "| sweep_bars | fast_cpu | 1000 |"), *b = strstr(md, "| sweep_bars | fast_cpu | 10000 |"),
               *c = strstr(md, "| sweep_bars | reference | 1000 |"), *d = strstr(md, "| sweep_combos | fast_cpu | 152832 | 1 |");
    cr_assert(a && b && c && d && a < b && b < c && c < d, "%s", md);
    /* A range in one cell, one unit, no spaces to wrap at: 0.8 ms, one repetition. */
    cr_assert(strstr(md, "| 800 us | 800-800 us |"), "%s", md);
    cr_assert(strstr(md, "Test CPU, 2 logical cores"), "%s", md);
    cr_assert(strstr(md, "0123456789abcdef"), "%s", md);
    free(md);

    /* The figures' data: fast_cpu over the reference at 10 combos x 152832
     * bars (8000 ms / 60 ms), on the line of the combo sweeps (line 0); one
     * repetition, so the range is the point itself. */
    char *dat = slurp("gnuplot/ratios_within_run.0.dat");
    cr_assert(strstr(dat, "fast_cpu / reference, more combos"), "%s", dat);
    cr_assert(strstr(dat, "1528320 133.33333333333334 133.33333333333334 133.33333333333334"), "%s", dat);
    free(dat);
    dat = slurp("gnuplot/thread_scaling.0.dat");
    cr_assert(strstr(dat, "1 1 1 1 \"-\"\n2 1.8999999999999999 "), "%s", dat);
    free(dat);
}

Test(report_folder, a_parity_failure_is_shown_and_fails_the_command)
{
    SKIP_WITHOUT_GNUPLOT();
    run_sebt_expect(&r, "", 1, "report --out '%s' --from '%s/run_parity_failed.json'", dir, DATA);
    cr_assert_gt(file_size(dir, "index.html"), 0);
    char *md = slurp("report.md");
    cr_assert(strstr(md, "**verdict: FAIL: 1 benchmark(s) diverged from the oracle"), "%s", md);
    cr_assert(strstr(md, "| FAILED: 1 benchmark(s) diverged from the oracle and are not timed; first: "), "%s", md);
    /* Its speed is not shown: the row has no time and no rates. */
    cr_assert(strstr(md, "| sweep_combos | fast_cpu | 152832 | 1000 | all | - | - | - | 0 | - | - | - | PARITY FAILED (not timed) |"),
              "%s", md);
    free(md);
    char *dat = slurp("gnuplot/throughput_vs_combos.1.dat");
    cr_assert(strstr(dat, "fast_cpu"), "%s", dat);
    cr_assert_null(strstr(dat, "\n1000 "), "%s", dat);
    free(dat);
}

Test(report_folder, missing_programs_are_named)
{
    run_sebt_expect(&r, "SEBT_GNUPLOT=/nonexistent/gnuplot ", 2, "report --out '%s' --from '%s/run_ok.json'", dir,
                    DATA);
    cr_assert(strstr(r.out, "gnuplot is needed") && strstr(r.out, "/nonexistent/gnuplot"), "%s", r.out);

    if (!have_gnuplot())
        return;
    run_sebt_expect(&r, "SEBT_BENCH_BINARY=/nonexistent/sebt_bench ", 2, "report --out '%s' --quick", dir);
    cr_assert(strstr(r.out, "/nonexistent/sebt_bench"), "%s", r.out);
}

Test(report_folder, bad_usage)
{
    run_sebt("", "report", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.out, "--out DIR is required"), "%s", r.out);
    run_sebt("", "report --out x --from y --quick", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    run_sebt("", "report --frob", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.out, "unknown option '--frob'"), "%s", r.out);
}

/* A quick run recorded on the shared 2-core machine (data/recorded/,
 * Google Benchmark's aggregates dropped): repetitions become error bars,
 * the numba peer is in the summary, the loaded machine is said. */
Test(report_folder, a_recorded_quick_run)
{
    SKIP_WITHOUT_GNUPLOT();
    run_sebt_expect(&r, "", 0, "report --out '%s/out' --from '%s/recorded/normal.json' --history none", dir, DATA);
    /* normal.json: fast_cpu 292.1 x the reference (262.6-306.3), the history test below. */
    cr_assert(strstr(r.out, "sebt report: verdict: pass: parity ok on every backend that ran; fast_cpu = 292 x the "
                            "reference (263-306; one thread each, CPU time); no earlier --quick run"), "%s", r.out);
    cr_assert(strstr(r.out, "sebt report: speed: fast_cpu runs "), "%s", r.out);
    cr_assert(strstr(r.out, "the machine was loaded"), "%s", r.out);
    strcat(dir, "/out");
    char *md = slurp("report.md");
    cr_assert(strstr(md, "| fast_cpu / reference (gated by --baseline) | 292 | 263-306 | 8 combos x 10000 bars | 1 each | CPU time |"), "%s", md);
    cr_assert(strstr(md, "| fast_cpu / numba | ") && strstr(md, " | 100 combos x 152832 bars | every core (2) | wall time |"), "%s", md);
    cr_assert(strstr(md, "MACHINE LOADED while measuring"), "%s", md);
    cr_assert(strstr(md, "| numba | a peer: trade counts checked on a sample | ok: 1 benchmarks, 3 sampled combos"),
              "%s", md);
    /* every sweep row shows its 5 repetitions */
    cr_assert(strstr(md, "| sweep_combos | fast_cpu | 152832 | 100 | all | "), "%s", md);
    free(md);
    /* fast_cpu's combo sweep (line 1 after the reference): medians inside
     * their ranges, and the ranges are not all points (5 repetitions) */
    char *dat = slurp("gnuplot/throughput_vs_combos.1.dat");
    cr_assert(strstr(dat, "fast_cpu"), "%s", dat);
    size_t rows = 0, spread = 0;
    for (const char *p = strchr(dat, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        double x, y, lo, hi;
        if (p[1] == '#' || sscanf(p + 1, "%lf %lf %lf %lf", &x, &y, &lo, &hi) != 4)
            continue;
        rows++;
        cr_assert(lo <= y && y <= hi, "%g not in [%g, %g]", y, lo, hi);
        spread += lo < hi;
    }
    cr_assert_geq(rows, 5, "%s", dat);
    cr_assert_eq(spread, rows, "%s", dat);
    free(dat);
    /* the peer has a line of its own (line 2) in the same figure */
    dat = slurp("gnuplot/throughput_vs_combos.2.dat");
    cr_assert(strstr(dat, "numba peer") && strstr(dat, "\n100 "), "%s", dat);
    free(dat);
}

/* The history: --append-history with --from adds one line per call (a
 * redraw alone adds none), and the history figure plots every line. */
Test(report_folder, history_lines_are_appended_and_plotted)
{
    SKIP_WITHOUT_GNUPLOT();
    for (int i = 0; i < 2; i++) {
        run_sebt_expect(&r, "", 0, "report --out '%s/out' --from '%s/recorded/normal.json' --history '%s/h.csv' "
                        "--append-history", dir, DATA, dir);
    }
    run_sebt_expect(&r, "", 0, "report --out '%s/out' --from '%s/recorded/normal.json' --history '%s/h.csv'", dir,
                    DATA, dir);
    char *h = slurp("h.csv");
    cr_assert_eq(count(h, "\n"), 3, "a header and two lines:\n%s", h);
    cr_assert(strncmp(h, "date,commit,mode,machine,cpus,", 30) == 0, "%s", h);
    /* normal.json: commit 63d6b36..., a quick run, fast_cpu 292.1x the
     * reference (median of the 5 one-thread CPU-time ratios) */
    cr_assert_eq(count(h, ",63d6b3688b4b,quick,AMD EPYC,2,"), 2, "%s", h);
    cr_assert_eq(count(h, ",292.108,262.647,306.27,"), 2, "%s", h);
    free(h);
    char *dat = slurp("out/gnuplot/history.0.dat");
    cr_assert(strstr(dat, "\n1 292.108") && strstr(dat, "\n2 292.108"), "%s", dat);
    free(dat);
}
