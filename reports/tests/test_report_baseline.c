/* sebt report --baseline: the gate compares ratios measured within one run,
 * repetition by repetition, with a Mann-Whitney U test and a minimum effect
 * size. Inputs: hand-written JSON in data/ (one repetition each) and four
 * quick runs recorded on the shared 2-core machine in data/recorded/ (see
 * data/README.md for how each was made and how loaded the machine was). */
#include <criterion/criterion.h>
#include <math.h>

#include "report.h"
#include "run_sebt.h"

#define DATA SEBT_REPORT_TEST_DATA

/* `sebt report --baseline` of two runs in the test data, extra its other
 * arguments. */
static void baseline_run(const char *old_file, const char *new_file, const char *extra, sebt_run_result *r)
{
    char args[4096];
    snprintf(args, sizeof args, "report --baseline '%s/%s' '%s/%s' %s", DATA, old_file, DATA, new_file, extra);
    run_sebt("", args, r);
}

/* The same, which must exit with want. */
static void baseline(const char *old_file, const char *new_file, const char *extra, int want, sebt_run_result *r)
{
    baseline_run(old_file, new_file, extra, r);
    cr_assert_eq(r->status, want, "exit %d, not %d:\n%s", r->status, want, r->out);
}

static sebt_run_result r;

/* ---- the rank test, against values worked out by enumerating every
 * arrangement of the samples (a few lines of Python with itertools) ---- */

Test(mann_whitney, exact_p_values)
{
    const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
    /* wholly apart: 2 of the C(10,5) = 252 arrangements are as extreme */
    cr_assert_float_eq(sebt_mann_whitney_p(a, 5, b, 5), 2.0 / 252, 1e-12);
    cr_assert_float_eq(sebt_mann_whitney_p(b, 5, a, 5), 2.0 / 252, 1e-12);
    const double c[] = { 1, 3, 5, 7, 9 }, d[] = { 2, 4, 6, 8, 10 };
    cr_assert_float_eq(sebt_mann_whitney_p(c, 5, d, 5), 0.6904761904761905, 1e-12);
    const double e[] = { 1.0, 2.5, 3.1, 7.2 }, f[] = { 2.0, 4.0, 5.5, 6.0, 8.0, 9.0 };
    cr_assert_float_eq(sebt_mann_whitney_p(e, 4, f, 6), 0.2571428571428571, 1e-12);
    /* one a side can never be significant; an empty side is no test */
    cr_assert_float_eq(sebt_mann_whitney_p(a, 1, b, 1), 1.0, 1e-12);
    cr_assert(isnan(sebt_mann_whitney_p(a, 0, b, 1)));
}

Test(mann_whitney, ties_use_the_normal_approximation)
{
    const double a[] = { 1, 1, 1, 1, 1 }, b[] = { 1, 1, 1, 1, 1 };
    cr_assert_float_eq(sebt_mann_whitney_p(a, 5, b, 5), 1.0, 1e-12);
    const double c[] = { 1, 1, 2, 2, 3, 3 }, d[] = { 4, 4, 5, 5, 6, 6 };
    /* U = 0, mean 18, tie-corrected variance 36/12 * (13 - 36/132) = 38.18..:
     * z = (18 - 0.5)/sqrt(38.18) = 2.832, p = erfc(z/sqrt 2) = 0.00462 */
    cr_assert_float_eq(sebt_mann_whitney_p(c, 6, d, 6), 0.004624, 2e-5);
}

/* ---- recorded runs: the same commit, quiet, busy, and with the planted
 * slowdown ---- */

Test(report_baseline, same_commit_on_a_busier_machine_is_never_a_regression)
{
    baseline_run("recorded/normal.json", "recorded/busy.json", "", &r);
    cr_assert(r.status == 0 || r.status == 4, "exit %d:\n%s", r.status, r.out);
    cr_assert_null(strstr(r.out, "REGRESSION"), "%s", r.out);
    baseline_run("recorded/busy.json", "recorded/normal.json", "", &r);
    cr_assert(r.status == 0 || r.status == 4, "exit %d:\n%s", r.status, r.out);
    cr_assert_null(strstr(r.out, "REGRESSION"), "%s", r.out);
    /* the busy run says it was loaded */
    baseline_run("recorded/normal.json", "recorded/busy.json", "", &r);
    cr_assert(strstr(r.out, "new run: LOADED"), "%s", r.out);
}

Test(report_baseline, planted_slowdown_is_flagged_quiet_and_loaded)
{
    baseline("recorded/normal.json", "recorded/normal_planted.json", "", 1, &r);
    cr_assert(strstr(r.out, "REGRESSION: fast_cpu lost"), "%s", r.out);
    baseline("recorded/normal.json", "recorded/busy_planted.json", "", 1, &r);
    cr_assert(strstr(r.out, "REGRESSION: fast_cpu lost"), "%s", r.out);
    baseline("recorded/busy.json", "recorded/busy_planted.json", "", 1, &r);
}

/* Three runs of one later commit on another machine (data/README.md): the
 * quick report committed as the baseline, the same with both cores busy
 * beside it, and the gated groups with the planted slowdown. */
Test(report_baseline, both_cores_busy_is_never_a_regression_and_the_planted_slowdown_is)
{
    baseline_run("recorded/main-quick.json", "recorded/main-busy.json", "", &r);
    cr_assert(r.status == 0 || r.status == 4, "exit %d:\n%s", r.status, r.out);
    cr_assert_null(strstr(r.out, "REGRESSION"), "%s", r.out);
    baseline("recorded/main-quick.json", "recorded/main-planted.json", "", 1, &r);
    cr_assert(strstr(r.out, "REGRESSION: 3 of 3 ratio(s) flagged"), "%s", r.out);
    baseline("recorded/main-busy.json", "recorded/main-planted.json", "", 1, &r);
}

Test(report_baseline, the_gated_ratio_is_cpu_time_on_one_thread)
{
    baseline("recorded/normal.json", "recorded/normal.json", "", 0, &r);
    const char *row = strstr(r.out, "pair bars:10000 combos:8 threads:1: fast_cpu/reference ");
    cr_assert(row, "%s", r.out);
    cr_assert(strstr(row, " cpu ") && strstr(row, " cpu ") < strchr(row, '\n'), "%s", row);
    cr_assert(strstr(r.out, "ok: 3 ratio(s) compared"), "%s", r.out);
}

/* ---- hand-written runs: one repetition each ---- */

Test(report_baseline, one_repetition_cannot_confirm_a_drop)
{
    /* every fast_cpu time doubled: the micro ratios halve, but 1 and 1
     * repetitions can never give p < 0.05: inconclusive, exit 4 */
    baseline("run_ok.json", "run_planted_slowdown.json", "", 4, &r);
    cr_assert(strstr(r.out, "INCONCLUSIVE: 1 and 1 repetitions cannot reach p < 0.05"), "%s", r.out);
    cr_assert(strstr(r.out, "-50.0%"), "%s", r.out);
    cr_assert_null(strstr(r.out, "REGRESSION"), "%s", r.out);
}

Test(report_baseline, same_run_passes)
{
    baseline("run_ok.json", "run_ok.json", "", 0, &r);
    /* micro_features ran on both backends, one thread */
    cr_assert(strstr(r.out, "ok: 1 ratio(s) compared"), "%s", r.out);
}

Test(report_baseline, a_slower_machine_is_not_a_regression)
{
    /* Every time 1.6x longer and fast_cpu 10% worse on top: -9.1% < 25%. */
    baseline("run_ok.json", "run_other_machine.json", "", 0, &r);
    cr_assert(strstr(r.out, "-9.1%"), "%s", r.out);
    /* Absolute times are shown but not gated: 1.6 and 1.76 times slower. */
    cr_assert(strstr(r.out, "1.60") && strstr(r.out, "1.76"), "%s", r.out);
}

Test(report_baseline, threshold_decides)
{
    /* beyond a 5% effect, but one repetition a side confirms nothing */
    baseline("run_ok.json", "run_other_machine.json", "--threshold 5", 4, &r);
    baseline("run_ok.json", "run_planted_slowdown.json", "--threshold 60", 0, &r);
}

Test(report_baseline, broken_parity_in_the_new_run_is_flagged)
{
    baseline("run_ok.json", "run_parity_failed.json", "", 1, &r);
    cr_assert(strstr(r.out, "fast_cpu fails parity in the new run"), "%s", r.out);
}

Test(report_baseline, bad_usage_and_input)
{
    run_sebt("", "report --baseline only_one.json", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    baseline("run_ok.json", "run_ok.json", "--threshold -3", 2, &r);
    baseline("run_ok.json", "run_ok.json", "--threshold abc", 2, &r);
    baseline("run_ok.json", "does_not_exist.json", "", 2, &r);
    cr_assert(strstr(r.out, "does_not_exist.json"), "%s", r.out);
    /* A file that is not Google Benchmark JSON: its name and what is wrong. */
    baseline("run_ok.json", "README.md", "", 2, &r);
    cr_assert(strstr(r.out, "README.md:1:1: invalid token near 'Hand'"), "%s", r.out);
}

/* ---- a drop against the numba peer: shown, flagged, not gated ----
 * Built in memory: fast_cpu and the numba peer each timed 1000 combos over
 * 152832 bars on one thread, and the gated pair so that there is something
 * gated to compare. Old run: numba 13.77 s, fast_cpu 0.1 s: 137.7 x. New
 * run: numba 7.84 s, fast_cpu 0.1 s: 78.4 x, a drop of 43% (78.4/137.7 =
 * 0.569), beyond the default 25%. The pair's CPU times are the same in
 * both runs (ratio 250 each repetition): no gated change. */
static sebt_bench_run mem_run(const char *group, const char *backend, long long bars, long long combos, int threads,
                              double seconds)
{
    sebt_bench_run r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s/%s/bars:%lld/combos:%lld/threads:%d", group, backend, bars, combos, threads);
    snprintf(r.group, sizeof r.group, "%s", group);
    snprintf(r.backend, sizeof r.backend, "%s", backend);
    r.bars = bars;
    r.combos = combos;
    r.threads = threads;
    r.status = SEBT_RUN_OK;
    r.seconds = r.seconds_min = r.seconds_max = seconds;
    r.cpu_seconds = seconds;
    r.n_reps = 5;
    for (size_t k = 0; k < 5; k++)
        r.rep_seconds[k] = r.rep_cpu_seconds[k] = seconds;
    r.combos_per_s = (double)combos / seconds;
    r.others_busy = r.load_avg = NAN;
    return r;
}

Test(report_baseline, a_drop_against_the_peer_is_flagged_but_not_gated)
{
    sebt_bench_run old_runs[4], new_runs[4];
    old_runs[0] = mem_run("pair", "reference", 10000, 8, 1, 1.0);
    old_runs[1] = mem_run("pair", "fast_cpu", 10000, 8, 1, 0.004);
    old_runs[2] = mem_run("sweep_combos", "fast_cpu", 152832, 1000, 1, 0.1);
    old_runs[3] = mem_run("peer", "numba", 152832, 1000, 1, 13.77);
    memcpy(new_runs, old_runs, sizeof old_runs);
    new_runs[3] = mem_run("peer", "numba", 152832, 1000, 1, 7.84);
    sebt_bench_set o = { .n_runs = 4, .runs = old_runs }, n = { .n_runs = 4, .runs = new_runs };
    sebt_baseline b;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_baseline_compare(&o, &n, 25, &b, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(b.n_flagged, 0);
    cr_assert_eq(b.n_dropped, 1);
    const sebt_ratio_row *peer = NULL;
    for (size_t i = 0; i < b.n_ratios; i++)
        if (strstr(b.ratios[i].what, "fast_cpu/numba"))
            peer = &b.ratios[i];
    cr_assert_not_null(peer);
    cr_assert_not(peer->gated);
    cr_assert(peer->dropped);
    cr_assert_float_eq(peer->old_ratio, 137.7, 1e-9);
    cr_assert_float_eq(peer->new_ratio, 78.4, 1e-9);
    cr_assert_float_eq(peer->change_pct, 100 * (78.4 / 137.7 - 1), 1e-9);
    cr_assert(strstr(peer->note, "DROP: fast_cpu lost 43% of its lead over numba"), "%s", peer->note);
    /* The report's verdict: a pass on the gate, the drop named in it. */
    sebt_report_summary s;
    memset(&s, 0, sizeof s);
    sebt_report_summary_baseline(&s, &b, "old.json");
    cr_assert_eq(s.call, SEBT_CALL_PASS);
    cr_assert(strstr(s.verdict, "verdict: pass against the baseline old.json: 1 gated ratio(s) compared, none fell "
                                "by more than 25%; flagged though not gated: peer bars:152832 combos:1000 threads:1: "
                                "fast_cpu/numba (not gated) 137.7 x -> 78.4 x (-43%)"), "%s", s.verdict);
    sebt_baseline_free(&b);
}
