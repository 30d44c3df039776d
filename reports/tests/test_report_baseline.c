/* sebt report --baseline: the gate compares ratios measured within one run,
 * and flags a planted slowdown of fast_cpu. Inputs are hand-written JSON in
 * data/ (see data/README.md for the numbers). */
#include <criterion/criterion.h>

#include "run_sebt.h"

#define DATA SEBT_REPORT_TEST_DATA

static void baseline(const char *old_file, const char *new_file, const char *extra, sebt_run_result *r)
{
    char args[4096];
    snprintf(args, sizeof args, "report --baseline '%s/%s' '%s/%s' %s", DATA, old_file, DATA, new_file, extra);
    run_sebt("", args, r);
}

static sebt_run_result r;

Test(report_baseline, planted_slowdown_is_flagged)
{
    baseline("run_ok.json", "run_planted_slowdown.json", "", &r);
    cr_assert_eq(r.status, 1, "exit %d:\n%s", r.status, r.out);
    cr_assert(strstr(r.out, "REGRESSION"), "%s", r.out);
    /* sweep_combos over 10 combos: reference 8000 ms; fast_cpu 60 ms, then
     * 120 ms: 133.33x falls to 66.67x, a change of -50%. */
    const char *line = strstr(r.out, "sweep_combos bars:152832 combos:10 threads:0: fast_cpu/reference");
    cr_assert(line, "%s", r.out);
    cr_assert(strstr(line, "133.33x") && strstr(line, "66.67x") && strstr(line, "-50.0%"), "%s", line);
}

Test(report_baseline, same_run_passes)
{
    baseline("run_ok.json", "run_ok.json", "", &r);
    cr_assert_eq(r.status, 0, "exit %d:\n%s", r.status, r.out);
    /* Features, 2 bar sweeps and 2 combo sweeps ran on both backends. */
    cr_assert(strstr(r.out, "ok: 5 ratio(s) compared"), "%s", r.out);
}

Test(report_baseline, a_slower_machine_is_not_a_regression)
{
    /* Every time 1.6x longer and fast_cpu 10% worse on top: -9.1% < 25%. */
    baseline("run_ok.json", "run_other_machine.json", "", &r);
    cr_assert_eq(r.status, 0, "exit %d:\n%s", r.status, r.out);
    cr_assert(strstr(r.out, "-9.1%"), "%s", r.out);
    /* Absolute times are shown but not gated: 1.6 and 1.76 times slower. */
    cr_assert(strstr(r.out, "1.60") && strstr(r.out, "1.76"), "%s", r.out);
}

Test(report_baseline, threshold_decides)
{
    baseline("run_ok.json", "run_other_machine.json", "--threshold 5", &r);
    cr_assert_eq(r.status, 1, "exit %d:\n%s", r.status, r.out);
    baseline("run_ok.json", "run_planted_slowdown.json", "--threshold 60", &r);
    cr_assert_eq(r.status, 0, "exit %d:\n%s", r.status, r.out);
}

Test(report_baseline, broken_parity_in_the_new_run_is_flagged)
{
    baseline("run_ok.json", "run_parity_failed.json", "", &r);
    cr_assert_eq(r.status, 1, "exit %d:\n%s", r.status, r.out);
    cr_assert(strstr(r.out, "fast_cpu fails parity in the new run"), "%s", r.out);
}

Test(report_baseline, bad_usage_and_input)
{
    run_sebt("", "report --baseline only_one.json", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    baseline("run_ok.json", "run_ok.json", "--threshold -3", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    baseline("run_ok.json", "run_ok.json", "--threshold abc", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    baseline("run_ok.json", "does_not_exist.json", "", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.out, "does_not_exist.json"), "%s", r.out);
    /* A file that is not Google Benchmark JSON: its name and what is wrong. */
    baseline("run_ok.json", "README.md", "", &r);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.out, "README.md:1:1: expected a value, got 'H'"), "%s", r.out);
}
