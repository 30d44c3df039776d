/* The big-sweep section of the report: bench/run_big_sweeps.sh's
 * runs.jsonl read into one row per workload (medians of its repetitions,
 * parallel efficiency of compute), shown as a table and a figure. The
 * fixture (data/big-sweeps/runs.jsonl) is hand-written; every value below
 * is worked out by hand from it. */
#include <criterion/criterion.h>
#include <math.h>
#include <unistd.h>

#include "../../core/tests/scratch_dir.h"
#include "run_sebt.h"
#include "report.h"
#include "sebt/sebt.h"

#define DATA SEBT_REPORT_TEST_DATA
#define RUNS DATA "/big-sweeps/runs.jsonl"

/* A row's threads and repetitions, and the medians of its end to end,
 * compute and CPU seconds and of its peak RSS (kB). */
static void assert_medians(const sebt_big_row *r, int threads, size_t reps, double end_to_end, double compute,
                           double cpu, double rss_kb)
{
    cr_assert_eq(r->threads, threads);
    cr_assert_eq(r->reps, reps);
    cr_assert_float_eq(r->end_to_end_s, end_to_end, 1e-12);
    cr_assert_float_eq(r->compute_s, compute, 1e-12);
    cr_assert_float_eq(r->cpu_s, cpu, 1e-12);
    cr_assert_float_eq(r->peak_rss_kb, rss_kb, 1e-9);
}

Test(big_sweeps, one_row_per_workload_with_medians)
{
    sebt_big_sweeps bs;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_big_sweeps_read(RUNS, &bs, &err), SEBT_OK, "%s", err.msg);
    cr_assert(bs.found);
    /* 7 runs; the blank line is nothing, the prose line and the line with
     * no combos (line 10) are skipped, the first of them on line 9. */
    cr_assert_eq(bs.n_runs, 7);
    cr_assert_eq(bs.skipped, 2);
    cr_assert_eq(bs.first_skipped, 9);
    cr_assert_eq(bs.n_rows, 4);
    cr_assert_float_eq(bs.load_min, 0.5, 1e-12);
    cr_assert_float_eq(bs.load_max, 3.5, 1e-12);

    /* csv, 1 thread, 3 runs: end to end 3, 5, 4 -> 4; compute 2, 3, 2.5 ->
     * 2.5; CPU 2.0, 2.2, 2.1 -> 2.1; RSS 20480, 20000, 21000 -> 20480. */
    const sebt_big_row *r = &bs.rows[0];
    cr_assert_str_eq(r->engine, "sebt");
    cr_assert_str_eq(r->format, "csv");
    assert_medians(r, 1, 3, 4.0, 2.5, 2.1, 20480);
    cr_assert(isnan(r->efficiency));
    cr_assert_float_eq(r->load_min, 0.5, 1e-12);
    cr_assert_float_eq(r->load_max, 2.5, 1e-12);

    /* csv, 2 threads, 2 runs: medians of two are their mean: end to end
     * 2.5, compute 1.5, CPU 2.5, RSS 23040; efficiency 2.5 / (2 x 1.5). */
    r = &bs.rows[1];
    assert_medians(r, 2, 2, 2.5, 1.5, 2.5, 23040);
    cr_assert_float_eq(r->efficiency, 2.5 / 3.0, 1e-12);

    /* json at 10^5 combos: no cpu_s in the file, no 1-thread run. */
    r = &bs.rows[2];
    cr_assert_eq(r->combos, 100000);
    cr_assert_str_eq(r->format, "json");
    cr_assert_float_eq(r->end_to_end_s, 40.0, 1e-12);
    cr_assert(isnan(r->cpu_s));
    cr_assert(isnan(r->efficiency));

    /* The numba peer after this build's rows: no format, no compute. */
    r = &bs.rows[3];
    cr_assert_str_eq(r->engine, "numba");
    cr_assert_str_eq(r->format, "-");
    cr_assert_float_eq(r->end_to_end_s, 9.0, 1e-12);
    cr_assert(isnan(r->compute_s));
    sebt_big_sweeps_free(&bs);
}

Test(big_sweeps, a_missing_file_is_none_found)
{
    sebt_big_sweeps bs;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_big_sweeps_read("/nonexistent/runs.jsonl", &bs, &err), SEBT_OK);
    cr_assert(!bs.found);
    cr_assert_eq(bs.n_rows, 0);
    sebt_big_sweeps_free(&bs);
}

static char *slurp(const char *name) { return slurp_in(dir, name); }

Test(big_sweeps, the_table_and_figure_in_the_report)
{
    SKIP_WITHOUT_GNUPLOT();
    scratch_make("big_sweeps");
    sebt_run_result r;
    run_sebt_expect(&r, "", 0, "report --out '%s' --from '%s/run_ok.json' --history none --big-sweeps '%s'", dir,
                    DATA, RUNS);
    cr_assert(strstr(r.out, "big sweeps: 7 runs in 4 workloads from "), "%s", r.out);
    char *md = slurp("report.md");
    cr_assert(strstr(md, "## Big sweeps\n"), "%s", md);
    /* end to end, per combo, compute, CPU, RSS (MiB), output (MB), efficiency, load */
    cr_assert(strstr(md, "| sebt | g-1000 | 1000 | csv | 1 | 3 | 4 s | 4 ms | 2.5 s | 2.1 s | 20.0 MiB | 1.5 MB | - | 0.5-2.5 |\n"), "%s", md);
    cr_assert(strstr(md, "| sebt | g-1000 | 1000 | csv | 2 | 2 | 2.5 s | 2.5 ms | 1.5 s | 2.5 s | 22.5 MiB | 1.5 MB | 83% | 2.5-3.5 |\n"), "%s", md);
    cr_assert(strstr(md, "| sebt | g-100000 | 100000 | json | 2 | 1 | 40 s | 400 us | 30 s | - | 50.0 MiB | 45.0 MB | - | 1.0-1.2 |\n"), "%s", md);
    cr_assert(strstr(md, "| numba peer | g-1000 | 1000 | - | 2 | 1 | 9 s | 9 ms | - | 10 s | 200.0 MiB | - | - | 1.0-1.1 |\n"), "%s", md);
    cr_assert(strstr(md, "7 runs of `sebt sweep` in 4 workloads"), "%s", md);
    cr_assert(strstr(md, "load average was from 0.5 to 3.5 while they ran (MEASURED UNDER LOAD"), "%s", md);
    /* 3.5 is above the most threads a run used (2) plus one: the figure says so. */
    cr_assert(strstr(md, "(log-log; medians). **MEASURED UNDER LOAD"), "%s", md);
    cr_assert(strstr(md, "2 line(s) that are not a run were skipped (the first: line 9)"), "%s", md);
    cr_assert(strstr(md, "![big_sweeps](big_sweeps.svg)"), "%s", md);
    free(md);
    /* The figure's lines: csv at 2 threads (its most), json, numba. */
    char *dat = slurp("gnuplot/big_sweeps.0.dat");
    cr_assert(strstr(dat, "sebt csv, 2 threads") && strstr(dat, "\n1000 2.5\n"), "%s", dat);
    free(dat);
    dat = slurp("gnuplot/big_sweeps.1.dat");
    cr_assert(strstr(dat, "sebt json, 2 threads") && strstr(dat, "\n100000 40\n"), "%s", dat);
    free(dat);
    dat = slurp("gnuplot/big_sweeps.2.dat");
    cr_assert(strstr(dat, "numba peer, 2 threads") && strstr(dat, "\n1000 9\n"), "%s", dat);
    free(dat);
    char *html = slurp("index.html");
    cr_assert(strstr(html, "<h2>Big sweeps</h2>") && strstr(html, "<figure id=\"big_sweeps\">"));
    free(html);
    char path[512];
    snprintf(path, sizeof path, "%s/big_sweeps.png", dir);
    cr_assert_eq(access(path, R_OK), 0);

    /* None among sebt's shared files (SEBT_SHARE_DIR names an empty
     * folder): the report says where it looked and how to make one, and
     * draws no such figure. */
    char env[512], want[768];
    snprintf(env, sizeof env, "SEBT_SHARE_DIR='%s' ", dir);
    run_sebt_expect(&r, env, 0, "report --out '%s/none' --from '%s/run_ok.json' --history none", dir, DATA);
    snprintf(want, sizeof want, "No big-sweep benchmark was found (looked for %s/big-sweeps/runs.jsonl). "
             "bench/run_big_sweeps.sh BUILD_DIR makes one", dir);
    strcat(dir, "/none");
    md = slurp("report.md");
    cr_assert(strstr(md, want), "%s", md);
    cr_assert_null(strstr(md, "big_sweeps.svg"), "%s", md);
    free(md);
    dir[strlen(dir) - 5] = '\0';
    scratch_remove();
}
