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
    case SEBT_CALL_REGRESSION: return "REGRESSION";
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

/* One workload in every run, so that two headlines compare: fast_cpu's
 * sweep of SEBT_HEADLINE_COMBOS combos over the 15m series on every core,
 * the number of its row in the Sweeps table. */
static void headline(const sebt_bench_set *set, char *buf, size_t size)
{
    const sebt_bench_run *r = sebt_bench_find(set, "sweep_combos", "fast_cpu", SEBT_HEADLINE_BARS,
                                              SEBT_HEADLINE_COMBOS, 0);
    char threads[64];
    threads_text(set, 0, threads, sizeof threads);
    if (!r || r->status != SEBT_RUN_OK || !(r->combos_per_s > 0)) {
        snprintf(buf, size, "speed: fast_cpu's sweep of %d combos over %d bars, %s, was not timed in this run",
                 SEBT_HEADLINE_COMBOS, SEBT_HEADLINE_BARS, threads);
        return;
    }
    char rate[32], lo[32], hi[32], load[160] = "";
    rate_text(r->combos_per_s, rate, sizeof rate);
    /* A rate's range follows its time: rate = work / time. */
    rate_text(r->combos_per_s * r->seconds / r->seconds_max, lo, sizeof lo);
    rate_text(r->combos_per_s * r->seconds / r->seconds_min, hi, sizeof hi);
    if (sebt_bench_run_loaded(set, r)) {
        if (isfinite(r->others_busy))
            snprintf(load, sizeof load, "; MEASURED UNDER LOAD: other processes used %.0f%% of the CPUs",
                     100 * r->others_busy);
        else
            snprintf(load, sizeof load, "; MEASURED UNDER LOAD: load average %.2f", r->load_avg);
    }
    snprintf(buf, size, "speed: fast_cpu runs %s backtests/s (%s-%s over %zu repetitions): sweeps of %lld combos "
             "over %lld bars, %s%s", rate, lo, hi, r->n_reps, r->combos, r->bars, threads, load);
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
        /* "Within" only when the median is inside that run's range; a
         * median outside it whose range still overlaps shows no change. */
        s->call = SEBT_CALL_PASS;
        bool inside = h.vs_reference >= prev.vs_reference_min && h.vs_reference <= prev.vs_reference_max;
        snprintf(s->verdict, sizeof s->verdict, "verdict: pass: parity ok; %s, %s %s", now,
                 inside ? "within the range of"
                 : h.vs_reference < prev.vs_reference_min ? "below the range but overlapping it (no change shown) of"
                                                          : "above the range but overlapping it (no change shown) of",
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

void sebt_report_summary_baseline(sebt_report_summary *s, const sebt_baseline *b, const char *old_name)
{
    if (s->call == SEBT_CALL_FAIL)
        return;
    const sebt_ratio_row *first = NULL;
    size_t gated = 0;
    for (size_t i = 0; i < b->n_ratios; i++) {
        gated += b->ratios[i].gated;
        if (!first && (b->ratios[i].flagged || b->ratios[i].verdict == SEBT_VERDICT_INCONCLUSIVE))
            first = &b->ratios[i];
    }
    char drop[640] = "";
    for (size_t i = 0, used = 0; i < b->n_ratios && used < sizeof drop; i++) {
        const sebt_ratio_row *r = &b->ratios[i];
        if (r->dropped)
            used += (size_t)snprintf(drop + used, sizeof drop - used, "%s%s %.4g x -> %.4g x (%+.0f%%)",
                                     used ? "; " : "; flagged though not gated: ", r->what, r->old_ratio,
                                     r->new_ratio, r->change_pct);
    }
    char worst[448] = "";
    if (first && isfinite(first->change_pct))
        snprintf(worst, sizeof worst, "; %s: %.4g x -> %.4g x (%+.0f%%, p = %.3g)", first->what, first->old_ratio,
                 first->new_ratio, first->change_pct, first->p_value);
    else if (first)
        snprintf(worst, sizeof worst, "; %s: %s", first->what, first->note);
    if (b->n_flagged) {
        s->call = SEBT_CALL_REGRESSION;
        snprintf(s->verdict, sizeof s->verdict, "verdict: REGRESSION against the baseline %s: %zu of %zu gated "
                 "ratio(s) fell by more than %g%% and the repetitions confirm it (p < %g)%s%s", old_name,
                 b->n_flagged, gated, b->threshold_pct, b->alpha, worst, drop);
    } else if (b->n_compared == 0) {
        s->call = SEBT_CALL_INCONCLUSIVE;
        snprintf(s->verdict, sizeof s->verdict, "verdict: inconclusive: this run and the baseline %s share no "
                 "gated ratio (no backend pair ran the same work in both)%s", old_name, drop);
    } else if (b->n_inconclusive) {
        s->call = SEBT_CALL_INCONCLUSIVE;
        snprintf(s->verdict, sizeof s->verdict, "verdict: inconclusive against the baseline %s: %zu of %zu "
                 "ratio(s) fell by more than %g%% but the repetitions do not confirm it%s%s", old_name,
                 b->n_inconclusive, b->n_compared, b->threshold_pct, worst, drop);
    } else {
        s->call = SEBT_CALL_PASS;
        snprintf(s->verdict, sizeof s->verdict, "verdict: pass against the baseline %s: %zu gated ratio(s) "
                 "compared, none fell by more than %g%%%s", old_name, b->n_compared, b->threshold_pct, drop);
    }
}
