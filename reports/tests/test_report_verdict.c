/* The report's first lines (reports/verdict.c): the verdict against the
 * last history line of the same mode and machine, and the speed headline.
 * The runs are built in memory with round numbers:
 *
 * - the gated pair, one thread each, CPU time per repetition: the
 *   reference 1 s every time, fast_cpu 4 ms, 5 ms, 2.5 ms, so the ratios
 *   are 250, 200 and 400: median 250, range 200-400;
 * - the headline's fixed workload, fast_cpu's sweep of 10000 combos over
 *   152832 bars on every core, in 2 s (min 1 s, max 2.5 s): 5000
 *   backtests/s, its range 5000 * 2/2.5 = 4000 to 5000 * 2/1 = 10000. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

static char *keys[] = { "sebt_cpu_model", "sebt_cpu_cores", "sebt_quick" };
static char *values[] = { "Test CPU", "2", "true" };

static sebt_bench_run runs[3];
static sebt_bench_set set;
static char dir[64], history[128];

static void run_of(sebt_bench_run *r, const char *group, const char *backend, long long bars, long long combos,
                   int threads, double busy)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s/%s/bars:%lld/combos:%lld/threads:%d", group, backend, bars, combos,
             threads);
    snprintf(r->group, sizeof r->group, "%s", group);
    snprintf(r->backend, sizeof r->backend, "%s", backend);
    r->bars = bars;
    r->combos = combos;
    r->threads = threads;
    r->status = SEBT_RUN_OK;
    r->others_busy = busy;
    r->load_avg = NAN;
    r->combos_per_s = r->bar_combos_per_s = NAN;
}

/* busy: the share of the CPUs other processes used during every run. */
static void build(double busy)
{
    run_of(&runs[0], "pair", "reference", 10000, 8, 1, busy);
    run_of(&runs[1], "pair", "fast_cpu", 10000, 8, 1, busy);
    const double ref[] = { 1, 1, 1 }, fast[] = { 0.004, 0.005, 0.0025 };
    for (int k = 0; k < 3; k++) {
        runs[0].rep_cpu_seconds[k] = ref[k];
        runs[1].rep_cpu_seconds[k] = fast[k];
    }
    runs[0].n_reps = runs[1].n_reps = 3;
    run_of(&runs[2], "sweep_combos", "fast_cpu", 152832, 10000, 0, busy);
    runs[2].seconds = 2;
    runs[2].seconds_min = 1;
    runs[2].seconds_max = 2.5;
    runs[2].combos_per_s = 5000;
    runs[2].n_reps = 3;
    set = (sebt_bench_set){ .n_runs = 3, .runs = runs, .n_context = 3, .context_keys = keys,
                            .context_values = values };
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

#define HEADER                                                                                            \
    "date,commit,mode,machine,cpus,load_avg,others_busy,fast_cpu_x_reference,fast_cpu_x_reference_min,"   \
    "fast_cpu_x_reference_max,fast_cpu_x_numba,fast_cpu_x_numba_1thread,numba_combos,"                    \
    "fast_cpu_backtests_per_s,numba_backtests_per_s,reference_backtests_per_s\n"

/* One history line of a quick run on the test machine. */
static void history_with(const char *machine, double busy, double ratio, double lo, double hi)
{
    char text[2048];
    snprintf(text, sizeof text,
             HEADER "2026-01-01T00:00:00+00:00,abc1234,full,Test CPU,2,0.5,0.01,1,1,1,nan,nan,0,1,nan,1\n"
                    "2026-01-02T00:00:00+00:00,def5678,quick,%s,2,0.50,%.3f,%g,%g,%g,nan,nan,0,1,nan,1\n",
             machine, busy, ratio, lo, hi);
    put(history, text);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/sebt_verdict_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(history, sizeof history, "%s/history.csv", dir);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The summary of the run build() made against a history whose last quick
 * run is history_with's. */
static void summary_after(const char *machine, double busy, double ratio, double lo, double hi,
                          sebt_report_summary *s)
{
    history_with(machine, busy, ratio, lo, hi);
    sebt_report_summary_of(&set, history, NULL, s);
}

TestSuite(verdict, .init = setup, .fini = teardown);

#define HAS(s, needle) cr_assert(strstr((s), (needle)), "expected\n  %s\nin\n  %s", (needle), (s))

Test(verdict, the_speed_headline_names_its_workload_and_threads)
{
    build(0.01);
    sebt_report_summary s;
    sebt_report_summary_of(&set, NULL, NULL, &s);
    cr_assert_str_eq(s.headline, "speed: fast_cpu runs 5 k backtests/s (4 k-10 k over 3 repetitions): sweeps of "
                                 "10000 combos over 152832 bars, every core (2 threads)");
    cr_assert_str_empty(s.warning);
}

/* The headline's workload is fixed: a faster sweep of another size (here
 * 1000 combos on one thread at 9000/s) never takes its place, and a run
 * without the fixed workload says so rather than quoting another. */
Test(verdict, the_headline_workload_is_the_same_every_run)
{
    build(0.01);
    sebt_bench_run more[4];
    memcpy(more, runs, sizeof runs);
    run_of(&more[3], "sweep_combos", "fast_cpu", 152832, 1000, 1, 0.01);
    more[3].seconds = more[3].seconds_min = more[3].seconds_max = 1000.0 / 9000;
    more[3].combos_per_s = 9000;
    more[3].n_reps = 3;
    sebt_bench_set s4 = set;
    s4.runs = more;
    s4.n_runs = 4;
    sebt_report_summary s;
    sebt_report_summary_of(&s4, NULL, NULL, &s);
    HAS(s.headline, "speed: fast_cpu runs 5 k backtests/s (4 k-10 k over 3 repetitions): sweeps of 10000 combos");
    s4.runs = more + 3;
    s4.n_runs = 1;
    sebt_report_summary_of(&s4, NULL, NULL, &s);
    cr_assert_str_eq(s.headline, "speed: fast_cpu's sweep of 10000 combos over 152832 bars, every core (2 threads), "
                                 "was not timed in this run");
}

/* Others used 90% of the CPUs while the fixed workload ran: the headline
 * carries the flag. */
Test(verdict, the_headline_is_flagged_when_measured_under_load)
{
    build(0.90);
    sebt_report_summary s;
    sebt_report_summary_of(&set, NULL, NULL, &s);
    HAS(s.headline, "every core (2 threads); MEASURED UNDER LOAD: other processes used 90% of the CPUs");
}

/* 250 x (200-400) against a last run of 300 x (260-350): the ranges
 * overlap, so no change is shown, but 250 is below 260: never "within". */
Test(verdict, within_only_when_the_median_is_inside_the_range)
{
    build(0.01);
    sebt_report_summary s;
    summary_after("Test CPU", 0.01, 300, 260, 350, &s);
    cr_assert_eq(s.call, SEBT_CALL_PASS);
    cr_assert_null(strstr(s.verdict, "within"), "%s", s.verdict);
    HAS(s.verdict, "fast_cpu = 250 x the reference (200-400; one thread each, CPU time), below the range but "
                   "overlapping it (no change shown) of the last --quick run on this machine (def5678, "
                   "2026-01-02: 300 x, 260-350)");
}

Test(verdict, pass_when_there_is_nothing_to_compare_with)
{
    build(0.01);
    sebt_report_summary s;
    sebt_report_summary_of(&set, NULL, NULL, &s);
    cr_assert_eq(s.call, SEBT_CALL_PASS);
    cr_assert_str_eq(s.verdict, "verdict: pass: parity ok on every backend that ran; fast_cpu = 250 x the "
                                "reference (200-400; one thread each, CPU time); no earlier --quick run on this "
                                "machine in a history to compare with");
    /* A line of another machine, or of the full mode, is no baseline. */
    summary_after("Other CPU", 0.01, 1000, 900, 1100, &s);
    cr_assert_eq(s.call, SEBT_CALL_PASS);
    HAS(s.verdict, "no earlier --quick run on this machine in ");
}

Test(verdict, pass_within_the_range_of_the_last_run)
{
    build(0.01);
    sebt_report_summary s;
    summary_after("Test CPU", 0.01, 300, 250, 350, &s);
    cr_assert_eq(s.call, SEBT_CALL_PASS);
    cr_assert_str_eq(s.verdict, "verdict: pass: parity ok; fast_cpu = 250 x the reference (200-400; one thread "
                                "each, CPU time), within the range of the last --quick run on this machine "
                                "(def5678, 2026-01-02: 300 x, 250-350)");
}

Test(verdict, slower_or_faster_when_the_ranges_part_on_quiet_machines)
{
    build(0.01);
    sebt_report_summary s;
    summary_after("Test CPU", 0.01, 1000, 900, 1100, &s); /* 400 < 900 */
    cr_assert_eq(s.call, SEBT_CALL_SLOWER, "%s", s.verdict);
    HAS(s.verdict, "verdict: slower: parity ok; fast_cpu = 250 x the reference (200-400; one thread each, CPU "
                   "time), below the range of the last --quick run on this machine (def5678, 2026-01-02: 1000 x, "
                   "900-1100), both on a quiet machine");
    summary_after("Test CPU", 0.01, 100, 90, 110, &s); /* 200 > 110 */
    cr_assert_eq(s.call, SEBT_CALL_FASTER, "%s", s.verdict);
    HAS(s.verdict, "verdict: faster: ");
    HAS(s.verdict, "above the range of the last --quick run");
}

Test(verdict, inconclusive_when_either_machine_was_loaded)
{
    build(0.01);
    sebt_report_summary s;
    summary_after("Test CPU", 0.50, 1000, 900, 1100, &s); /* that run: others used 50% */
    cr_assert_eq(s.call, SEBT_CALL_INCONCLUSIVE, "%s", s.verdict);
    HAS(s.verdict, "(def5678, 2026-01-02: 1000 x, 900-1100, machine loaded), but that run's machine was loaded");
    build(0.90); /* this run: others used 90% */
    summary_after("Test CPU", 0.01, 1000, 900, 1100, &s);
    cr_assert_eq(s.call, SEBT_CALL_INCONCLUSIVE, "%s", s.verdict);
    HAS(s.verdict, "but this run's machine was loaded");
}

/* The demo's report called a quiet machine loaded: others used 0% of the
 * CPUs, but the 1-minute load average (3.25 on 2 cores) counted the
 * benchmark's own two threads. The measured share decides when it exists. */
Test(verdict, the_share_of_others_decides_over_the_load_average)
{
    cr_assert_not(sebt_machine_loaded(0.0, 3.25, 2));
    cr_assert(sebt_machine_loaded(0.30, 0.5, 2));
    cr_assert(sebt_machine_loaded(NAN, 3.25, 2));
    cr_assert_not(sebt_machine_loaded(NAN, 1.5, 2));
    cr_assert_not(sebt_machine_loaded(NAN, NAN, 2));
    build(0.0);
    for (size_t i = 0; i < set.n_runs; i++)
        set.runs[i].load_avg = 3.25;
    char why[256];
    cr_assert_not(sebt_run_loaded(&set, why, sizeof why), "%s", why);
    build(0.40);
    cr_assert(sebt_run_loaded(&set, why, sizeof why), "%s", why);
}

Test(verdict, fail_when_a_backend_diverged)
{
    build(0.01);
    runs[2].status = SEBT_RUN_PARITY_FAILED;
    snprintf(runs[2].message, sizeof runs[2].message, "parity FAILED: combo 3 diverged");
    sebt_report_summary s;
    sebt_report_summary_of(&set, NULL, NULL, &s);
    cr_assert_eq(s.call, SEBT_CALL_FAIL);
    cr_assert_str_eq(s.verdict, "verdict: FAIL: 1 benchmark(s) diverged from the oracle and 0 failed to run; "
                                "first: sweep_combos/fast_cpu/bars:152832/combos:10000/threads:0: parity FAILED: "
                                "combo 3 diverged");
}

Test(verdict, the_benchmark_library_warning_is_said_once)
{
    build(0.01);
    char log[128];
    snprintf(log, sizeof log, "%s/bench.log", dir);
    put(log, "Running sebt_bench\n***WARNING*** Library was built as DEBUG. Timings may be affected.\n");
    sebt_report_summary s;
    sebt_report_summary_of(&set, NULL, log, &s);
    HAS(s.warning, "Library was built as DEBUG");
    put(log, "Running sebt_bench\n");
    sebt_report_summary_of(&set, NULL, log, &s);
    cr_assert_str_empty(s.warning);
}
