/* The report's first two lines: the verdict, against what, and one speed
 * figure with its workload. A reviewer reads these and stops; the tables
 * below are for when the verdict is not pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sebt/sebt.h"

const char *sebt_call_name(sebt_call c)
{
    switch (c) {
    case SEBT_CALL_PASS: return "pass";
    case SEBT_CALL_SLOWER: return "slower";
    case SEBT_CALL_FASTER: return "faster";
    case SEBT_CALL_INCONCLUSIVE: return "inconclusive";
    case SEBT_CALL_FAIL: return "FAIL";
    }
    return "?";
}

static void rate_text(double v, char *buf, size_t size)
{
    static const char *const prefix[] = { "", " k", " M", " G", " T" };
    int k = 0;
    while (fabs(v) >= 1000 && k < 4) {
        v /= 1000;
        k++;
    }
    snprintf(buf, size, "%.3g%s", v, prefix[k]);
}

static void threads_text(const sebt_bench_set *set, int threads, char *buf, size_t size)
{
    const char *cores = sebt_bench_context(set, "sebt_cpu_cores");
    if (threads > 0)
        snprintf(buf, size, "%d thread%s", threads, threads == 1 ? "" : "s");
    else if (cores)
        snprintf(buf, size, "every core (%s threads)", cores);
    else
        snprintf(buf, size, "every core");
}

static void headline(const sebt_bench_set *set, char *buf, size_t size)
{
    const sebt_bench_run *best = NULL;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (strcmp(r->backend, "fast_cpu") == 0 && strcmp(r->group, "sweep_combos") == 0 &&
            r->status == SEBT_RUN_OK && r->combos_per_s > 0 && (!best || r->combos_per_s > best->combos_per_s))
            best = r;
    }
    if (!best) {
        snprintf(buf, size, "speed: no fast_cpu sweep was timed in this run");
        return;
    }
    char rate[32], lo[32], hi[32], threads[64];
    rate_text(best->combos_per_s, rate, sizeof rate);
    /* A rate's range follows its time: rate = work / time. */
    rate_text(best->combos_per_s * best->seconds / best->seconds_max, lo, sizeof lo);
    rate_text(best->combos_per_s * best->seconds / best->seconds_min, hi, sizeof hi);
    threads_text(set, best->threads, threads, sizeof threads);
    snprintf(buf, size, "speed: fast_cpu runs %s backtests/s (%s-%s over %zu repetitions): sweeps of %lld combos "
             "over %lld bars, %s", rate, lo, hi, best->n_reps, best->combos, best->bars, threads);
}

/* Google Benchmark prints "***WARNING*** Library was built as DEBUG.
 * Timings may be affected." on every run of Debian's package; said once,
 * with what it means here, instead of hidden in bench.log. */
static void library_warning(const char *bench_log, char *buf, size_t size)
{
    char *text;
    size_t len;
    sebt_error err = { 0 };
    if (!bench_log || sebt_read_file(bench_log, &text, &len, &err) != SEBT_OK)
        return;
    if (strstr(text, "Library was built as DEBUG"))
        snprintf(buf, size, "Google Benchmark warned: \"Library was built as DEBUG. Timings may be affected.\" "
                 "That is Debian's libbenchmark: its bookkeeping between iterations is unoptimised, the timed "
                 "code is sebt's own optimised build, and every ratio compares runs that share the overhead");
    free(text);
}

void sebt_report_summary_of(const sebt_bench_set *set, const char *history, const char *bench_log,
                            sebt_report_summary *s)
{
    memset(s, 0, sizeof *s);
    headline(set, s->headline, sizeof s->headline);
    library_warning(bench_log, s->warning, sizeof s->warning);

    size_t failed = 0, errors = 0;
    const sebt_bench_run *first = NULL;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (r->status == SEBT_RUN_PARITY_FAILED || r->status == SEBT_RUN_ERROR) {
            failed += r->status == SEBT_RUN_PARITY_FAILED;
            errors += r->status == SEBT_RUN_ERROR;
            if (!first)
                first = r;
        }
    }
    if (first) {
        s->call = SEBT_CALL_FAIL;
        snprintf(s->verdict, sizeof s->verdict, "verdict: FAIL: %zu benchmark(s) diverged from the oracle and %zu "
                 "failed to run; first: %s: %.300s", failed, errors, first->name, first->message);
        return;
    }

    sebt_headline h;
    sebt_headline_of(set, &h);
    char now[160];
    if (isfinite(h.vs_reference))
        snprintf(now, sizeof now, "fast_cpu = %.0f x the reference (%.0f-%.0f; one thread each, CPU time)",
                 h.vs_reference, h.vs_reference_min, h.vs_reference_max);
    else
        snprintf(now, sizeof now, "the gated pair (fast_cpu and the reference, one thread each) was not timed");
    const char *quick = sebt_bench_context(set, "sebt_quick");
    const char *mode = quick && strcmp(quick, "true") == 0 ? "--quick" : "full";
    sebt_history_row prev;
    if (!isfinite(h.vs_reference) || !sebt_history_previous(history, set, &prev)) {
        s->call = SEBT_CALL_PASS;
        snprintf(s->verdict, sizeof s->verdict, "verdict: pass: parity ok on every backend that ran; %s; no "
                 "earlier %s run on this machine in %s to compare with", now, mode, history ? history : "a history");
        return;
    }
    char against[320];
    bool prev_loaded = sebt_history_row_loaded(&prev);
    snprintf(against, sizeof against, "the last %s run on this machine (%.12s, %.10s: %.0f x, %.0f-%.0f%s)", mode,
             prev.commit, prev.date, prev.vs_reference, prev.vs_reference_min, prev.vs_reference_max,
             prev_loaded ? ", machine loaded" : "");
    bool loaded = sebt_run_loaded(set, NULL, 0);
    bool below = h.vs_reference_max < prev.vs_reference_min, above = h.vs_reference_min > prev.vs_reference_max;
    if (!below && !above) {
        s->call = SEBT_CALL_PASS;
        snprintf(s->verdict, sizeof s->verdict, "verdict: pass: parity ok; %s, within the range of %s", now,
                 against);
    } else if (loaded || prev_loaded) {
        s->call = SEBT_CALL_INCONCLUSIVE;
        snprintf(s->verdict, sizeof s->verdict, "verdict: inconclusive: parity ok; %s, %s the range of %s, but %s "
                 "machine was loaded: measure again on a quiet one, or gate with sebt report --baseline",
                 now, below ? "below" : "above", against, loaded && prev_loaded ? "each" : loaded ? "this run's" : "that run's");
    } else {
        s->call = below ? SEBT_CALL_SLOWER : SEBT_CALL_FASTER;
        snprintf(s->verdict, sizeof s->verdict, "verdict: %s: parity ok; %s, %s the range of %s, both on a quiet "
                 "machine%s", below ? "slower" : "faster", now, below ? "below" : "above", against,
                 below ? ": confirm with sebt report --baseline OLD/bench.json NEW/bench.json" : "");
    }
}
