/* The performance report: reading Google Benchmark JSON written by
 * sebt_bench, writing the report folder (figures through gnuplot, HTML,
 * Markdown) and comparing two runs. Used by `sebt report`; never prints. */
#ifndef SEBT_REPORTS_REPORT_H
#define SEBT_REPORTS_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "sebt/types.h"

/* ---- one benchmark run (reports/bench_results.c) ------------------------ */

typedef enum {
    SEBT_RUN_OK,              /* timed, and its sample agreed with the oracle */
    SEBT_RUN_PARITY_FAILED,   /* diverged from the oracle: not timed, no speed shown */
    SEBT_RUN_UNAVAILABLE,     /* the backend cannot run here (no device, not built) */
    SEBT_RUN_ERROR            /* it failed while running */
} sebt_run_status;

typedef struct {
    char name[192];
    char group[32];          /* sweep_bars, sweep_combos, threads, micro_... */
    char backend[32];        /* reference, fast_cpu, cuda, loader */
    long long bars;          /* -1 when the name says nothing */
    long long combos;
    int threads;             /* 0: the backend's default */
    sebt_run_status status;
    double seconds;          /* real time per iteration; NaN unless OK */
    long long iterations;
    /* Rates per second of real time; NaN when absent. */
    double bars_per_s, combos_per_s, bar_combos_per_s, trades_per_s, rows_per_s;
    double parity_checked, parity_ties;
    char message[512];       /* the label (parity) or the error */
} sebt_bench_run;

typedef struct {
    size_t n_runs;
    sebt_bench_run *runs;
    size_t n_context;
    char **context_keys;
    char **context_values;
} sebt_bench_set;

/* Reads the JSON of `sebt_bench --benchmark_out=F --benchmark_out_format=json`.
 * Runs that repeat (--benchmark_repetitions) are reduced to their median. */
sebt_status sebt_bench_parse(const char *name, const char *text, size_t len, sebt_bench_set *out,
                             sebt_error *err);
sebt_status sebt_bench_read(const char *path, sebt_bench_set *out, sebt_error *err);
void sebt_bench_set_free(sebt_bench_set *set);

/* A context value ("sebt_cpu_model", "host_name", "date", ...), or NULL. */
const char *sebt_bench_context(const sebt_bench_set *set, const char *key);
/* The run of this group, backend and size (threads < 0: any), or NULL. */
const sebt_bench_run *sebt_bench_find(const sebt_bench_set *set, const char *group,
                                      const char *backend, long long bars, long long combos,
                                      int threads);

/* ---- the report folder (reports/report_write.c) ------------------------- */

typedef struct {
    const char *gnuplot;     /* the gnuplot program */
    const char *source;      /* one line: where the numbers came from */
} sebt_report_opts;

/* Writes dir/{index.html, report.md, bench.json, *.png, *.svg, gnuplot/}.
 * json is the benchmark JSON as read (copied to bench.json). dir is
 * created when missing. */
sebt_status sebt_report_write(const sebt_bench_set *set, const char *json, size_t json_len,
                              const char *dir, const sebt_report_opts *opts, sebt_error *err);

/* The figures' base names, in the order the report shows them. */
#define SEBT_REPORT_N_FIGURES 4
extern const char *const sebt_report_figures[SEBT_REPORT_N_FIGURES];

/* ---- comparing two runs (reports/baseline.c) ---------------------------- */

/* Within one run, how much faster `fast` is than `slow` on the same work:
 * fast_cpu over reference, cuda over fast_cpu. Machines differ and are
 * noisy, so only these ratios are gated, never absolute times. */
typedef struct {
    char what[192];          /* "sweep_combos bars:152832 combos:10: fast_cpu/reference" */
    double old_ratio;        /* NaN when the old run lacks it */
    double new_ratio;
    double change_pct;       /* 100*(new/old - 1) */
    bool flagged;            /* fell by more than the threshold, or parity broke */
    char note[128];
} sebt_ratio_row;

/* Absolute time per iteration across the two runs, for information. */
typedef struct {
    char name[192];
    double old_seconds, new_seconds;
    double ratio;            /* new/old: above 1 is slower */
} sebt_time_row;

typedef struct {
    double threshold_pct;
    size_t n_ratios;
    sebt_ratio_row *ratios;
    size_t n_times;
    sebt_time_row *times;
    size_t n_flagged;
    size_t n_compared;       /* ratios present in both runs */
} sebt_baseline;

sebt_status sebt_baseline_compare(const sebt_bench_set *old_set, const sebt_bench_set *new_set,
                                  double threshold_pct, sebt_baseline *out, sebt_error *err);
void sebt_baseline_free(sebt_baseline *b);

#endif
