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

#define SEBT_BENCH_MAX_REPS 64

typedef struct {
    char name[192];          /* "group/backend/bars:N/combos:C/threads:T": what
                              * Google Benchmark appended is dropped, so names
                              * match across --quick and full runs */
    char group[32];          /* sweep_bars, sweep_combos, threads, pair, peer, micro_... */
    char backend[32];        /* reference, fast_cpu, cuda, numba, loader */
    long long bars;          /* -1 when the name says nothing */
    long long combos;
    int threads;             /* 0: the backend's default */
    sebt_run_status status;
    double seconds;          /* real (or the peer's own) time per iteration, median
                              * over repetitions; NaN unless OK */
    double seconds_min, seconds_max;
    double cpu_seconds;      /* CPU time of the timing thread per iteration, median */
    double cv;               /* coefficient of variation of seconds over repetitions */
    size_t n_reps;           /* repetitions timed */
    double rep_seconds[SEBT_BENCH_MAX_REPS];
    double rep_cpu_seconds[SEBT_BENCH_MAX_REPS];
    double others_busy;      /* share of all CPUs other processes used while it ran
                              * (median over repetitions); NaN when not recorded */
    double load_avg;         /* highest 1-minute load average seen; NaN when not recorded */
    long long iterations;
    /* Rates per second of real time (medians); NaN when absent. A rate is
     * work over time, so its range is the median times seconds/seconds_min..max. */
    double bars_per_s, combos_per_s, bar_combos_per_s, trades_per_s, rows_per_s;
    double parity_checked, parity_ties;
    char message[512];       /* the label (parity) or the error */
    char same_as[192];       /* another case timed this very workload (backend, bars,
                              * combos, threads): its measurement is shown here too,
                              * so a workload has one number; "" when none */
} sebt_bench_run;

typedef struct {
    size_t n_runs;
    sebt_bench_run *runs;
    size_t n_context;
    char **context_keys;
    char **context_values;
} sebt_bench_set;

/* Reads the JSON of `sebt_bench --benchmark_out=F --benchmark_out_format=json`.
 * Runs that repeat (--benchmark_repetitions) become one run: medians, the
 * range and every repetition's times (Google Benchmark's own aggregates
 * are recomputed, not read). */
sebt_status sebt_bench_parse(const char *name, const char *text, size_t len, sebt_bench_set *out,
                             sebt_error *err);
sebt_status sebt_bench_read(const char *path, sebt_bench_set *out, sebt_error *err);
void sebt_bench_set_free(sebt_bench_set *set);

/* The threads a run used: its own count, or for 0 (the backend's default)
 * OMP_NUM_THREADS when the run recorded a number there, else the cores. */
int sebt_bench_threads_used(const sebt_bench_set *set, const sebt_bench_run *r);
/* Whether other processes held the CPUs while this one case measured
 * (sebt_machine_loaded on its own figures). */
bool sebt_bench_run_loaded(const sebt_bench_set *set, const sebt_bench_run *r);

/* The speed headline's workload, the same in every run (--quick and full):
 * fast_cpu's sweep of this many combos over the bundled 15m series, on
 * every core. */
#define SEBT_HEADLINE_COMBOS 10000
#define SEBT_HEADLINE_BARS 152832
/* A backend's speed as the report states it everywhere (backtests per
 * second): on the headline's workload for fast_cpu, else on the largest
 * sweep over the 15m series it ran on every core (numba: the peer). NULL
 * when none was timed. */
const sebt_bench_run *sebt_bench_speed_run(const sebt_bench_set *set, const char *backend);

/* A context value ("sebt_cpu_model", "host_name", "date", ...), or NULL. */
const char *sebt_bench_context(const sebt_bench_set *set, const char *key);
/* The run of this group, backend and size (threads < 0: any), or NULL. */
const sebt_bench_run *sebt_bench_find(const sebt_bench_set *set, const char *group,
                                      const char *backend, long long bars, long long combos,
                                      int threads);

/* ---- the big-sweep benchmark (reports/big_sweeps.c) ---------------------- */

/* One workload of bench/run_big_sweeps.sh's runs.jsonl: the medians over
 * its repetitions; NaN where the file has no such field. */
typedef struct {
    char engine[32];         /* "sebt" (this build; the field is absent), "numba", "sebt-old" */
    char grid[64];
    char format[16];         /* csv, json, npy; "-" for the numba peer */
    long long combos;
    int threads;
    size_t reps;
    double end_to_end_s, compute_s, cpu_s, peak_rss_kb, bytes;
    double efficiency;       /* compute: 1-thread / (threads x this), same workload; NaN if none */
    double load_min, load_max; /* 1-minute load average before and after its runs */
    char commit[16];         /* the "sebt" field: the commit measured, or "old" */
} sebt_big_row;

typedef struct {
    char path[4096];
    bool found;              /* false: no file there (not an error) */
    size_t n_runs, n_rows;
    sebt_big_row *rows;      /* sorted: engine, combos, format, threads */
    double load_min, load_max;
    size_t skipped;          /* lines that are not a run (unreadable, or no combos/threads/end_to_end_s) */
    size_t first_skipped;    /* the first one's line number */
} sebt_big_sweeps;

/* A missing file is found = false and SEBT_OK; an unreadable line is
 * counted in skipped, not an error. */
sebt_status sebt_big_sweeps_read(const char *path, sebt_big_sweeps *bs, sebt_error *err);
void sebt_big_sweeps_free(sebt_big_sweeps *bs);

/* Where bench/run_big_sweeps.sh writes, from the top of a checkout. */
#define SEBT_BIG_SWEEPS_DEFAULT "bench/results/big-sweeps/runs.jsonl"
/* The same file under sebt's shared files (sebt_data_dir()), installed and
 * linked into the build folder: what the report reads by default, from
 * any working folder. */
#define SEBT_BIG_SWEEPS_SHARE "big-sweeps/runs.jsonl"
/* An engine as people read it: "sebt 68ad0fb" (this project at the commit
 * measured), "sebt 68ad0fb, series cached", "numba peer", "older sebt (OLD)". */
void sebt_big_engine_label(const sebt_big_row *r, char *buf, size_t size);
/* Whether the machine was busier than the runs themselves: the 1-minute
 * load average above the most threads a run used, plus one. */
bool sebt_big_sweeps_loaded(const sebt_big_sweeps *bs);

/* ---- the report folder (reports/report_write.c) ------------------------- */

typedef struct {
    const char *gnuplot;     /* the gnuplot program: a path, not looked up on PATH */
    const char *source;      /* one line: where the numbers came from */
    const char *history;     /* the history file (CSV) to plot; NULL: none */
    bool append_history;     /* a new measurement: append its line first */
    const struct sebt_report_summary_s *summary; /* the first lines; NULL: worked out here */
    const sebt_big_sweeps *big_sweeps; /* its section and figure; NULL: no section */
    const struct sebt_baseline_s *baseline; /* --baseline: its section; NULL: none */
    const char *baseline_name;     /* the old run's file, as given */
} sebt_report_opts;

/* Writes dir/{index.html, report.md, bench.json, *.png, *.svg, gnuplot/}.
 * json is the benchmark JSON as read (copied to bench.json). dir is
 * created when missing. */
sebt_status sebt_report_write(const sebt_bench_set *set, const char *json, size_t json_len,
                              const char *dir, const sebt_report_opts *opts, sebt_error *err);

/* Whether dir may be replaced by a report: it does not exist, or it is a
 * folder that is empty or holds only what a report writes (index.html,
 * report.md, bench.json, bench.log, *.svg, *.png, gnuplot/, and temporary
 * files of an interrupted run). The report replaces the whole folder
 * (sebt_outdir), so a folder holding anything else is refused, named. */
sebt_status sebt_report_folder_check(const char *dir, sebt_error *err);

/* The last lines of a log file on one line (empty when unreadable), for an
 * error message: the unfinished report that held it is removed. */
void sebt_report_log_tail(const char *path, char *out, size_t size);

/* The figures' base names, in the order the report shows them. */
#define SEBT_REPORT_N_FIGURES 5
extern const char *const sebt_report_figures[SEBT_REPORT_N_FIGURES];
/* The big sweeps' figure, drawn only when there are big-sweep runs. */
#define SEBT_REPORT_BIG_FIGURE "big_sweeps"
/* Whether the report draws the big-sweep figure (runs found). */
bool sebt_report_has_big_figure(const sebt_big_sweeps *bs);

/* ---- comparing two runs (reports/baseline.c) ---------------------------- */

/* Within one run, how much faster `fast` is than `slow` on the same work:
 * fast_cpu over reference on one thread each (CPU time: a core taken by
 * another process stretches wall time, not the CPU time of one thread),
 * cuda over fast_cpu. Machines differ and are noisy, so only these ratios
 * are gated, never absolute times. The ratio of each repetition is a
 * sample; the two runs' samples are compared with a Mann-Whitney U test
 * (as Google Benchmark's compare.py does) and a minimum effect size. */
typedef enum {
    SEBT_VERDICT_OK,            /* no drop beyond the threshold */
    SEBT_VERDICT_REGRESSION,    /* a drop beyond the threshold, significant, in every repetition */
    SEBT_VERDICT_INCONCLUSIVE,  /* a drop beyond the threshold the repetitions do not confirm */
    SEBT_VERDICT_IMPROVED,      /* a significant gain beyond the threshold */
    SEBT_VERDICT_NOT_COMPARED   /* in one run only, or not timed */
} sebt_verdict;

typedef struct {
    char what[192];          /* "pair bars:10000 combos:8 threads:1: fast_cpu/reference" */
    const char *measure;     /* "cpu" or "real" time */
    double old_ratio;        /* median; NaN when the old run lacks it */
    double old_min, old_max;
    double new_ratio;
    double new_min, new_max;
    size_t old_n, new_n;     /* repetitions paired into ratios */
    double change_pct;       /* 100*(new median/old median - 1) */
    double p_value;          /* two-sided Mann-Whitney U; NaN when not tested */
    sebt_verdict verdict;
    bool flagged;            /* a regression, or parity broke */
    bool gated;              /* false: shown for information (the numba peer, wall time) */
    bool dropped;            /* not gated, and its median fell by more than the threshold */
    char note[192];
} sebt_ratio_row;

/* Absolute time per iteration across the two runs, for information. */
typedef struct {
    char name[192];
    double old_seconds, new_seconds;
    double ratio;            /* new/old: above 1 is slower */
} sebt_time_row;

typedef struct sebt_baseline_s {
    double threshold_pct;    /* the minimum effect size */
    double alpha;            /* the significance level */
    size_t n_ratios;
    sebt_ratio_row *ratios;
    size_t n_times;
    sebt_time_row *times;
    size_t n_flagged;
    size_t n_inconclusive;
    size_t n_compared;       /* ratios present in both runs */
    size_t n_dropped;        /* not-gated ratios that fell by more than the threshold */
} sebt_baseline;

#define SEBT_BASELINE_ALPHA 0.05

/* The verdict on one gated ratio from its per-repetition values in the
 * old and the new run (each value: the slower backend's time over the
 * faster's, in one repetition): fills row's change_pct, p_value, verdict
 * and note. A regression needs all three: the median fell by more than
 * threshold_pct, the rank test gives p < alpha, and every new repetition
 * lies below the old median less threshold_pct. A drop that misses either
 * of the last two is inconclusive, never a regression. */
sebt_verdict sebt_ratio_judge(const double *old_r, size_t old_n, const double *new_r, size_t new_n,
                              double threshold_pct, double alpha, const char *fast, sebt_ratio_row *row);
sebt_status sebt_baseline_compare(const sebt_bench_set *old_set, const sebt_bench_set *new_set,
                                  double threshold_pct, sebt_baseline *out, sebt_error *err);
void sebt_baseline_free(sebt_baseline *b);

/* Two-sided p-value of the Mann-Whitney U test of x[0..nx) against
 * y[0..ny): exact for small samples without ties, else the normal
 * approximation with tie and continuity corrections. NaN when a side is
 * empty. */
double sebt_mann_whitney_p(const double *x, size_t nx, const double *y, size_t ny);

/* ---- history (reports/history.c) ----------------------------------------- */

/* One line per report: when, what commit, on what, and the within-run
 * ratios and medians. Appended atomically (one write). */
sebt_status sebt_history_append(const char *path, const sebt_bench_set *set, sebt_error *err);

/* The within-run ratios the report leads with (NaN when the run lacks the
 * work): fast_cpu over reference (pair, CPU time, median and range), and
 * fast_cpu over numba on the largest combo sweep both ran (wall time), on
 * every core each and on one thread each. */
typedef struct {
    double vs_reference, vs_reference_min, vs_reference_max;
    double vs_numba, vs_numba_min, vs_numba_max;          /* every core each */
    long long numba_combos, numba_bars;
    double vs_numba_1t, vs_numba_1t_min, vs_numba_1t_max; /* one thread each */
    long long numba_1t_combos;
} sebt_headline;
void sebt_headline_of(const sebt_bench_set *set, sebt_headline *h);

/* The report's first two lines (reports/verdict.c): a verdict a CI
 * reviewer decides from, and one speed figure with its workload.
 * The verdict compares the gated ratio (fast_cpu over the reference, one
 * thread each, CPU time) with the last history line of the same mode on
 * the same machine (CPU model and core count): slower or faster when the
 * two runs' min-max ranges do not overlap, inconclusive when they do not
 * overlap but either run was loaded, pass when they overlap or there is
 * nothing to compare with (it says so); FAIL when a backend diverged from
 * the oracle or a benchmark failed. Call it before the run is appended. */
typedef enum { SEBT_CALL_PASS, SEBT_CALL_SLOWER, SEBT_CALL_FASTER, SEBT_CALL_INCONCLUSIVE, SEBT_CALL_FAIL,
               SEBT_CALL_REGRESSION } sebt_call;
typedef struct sebt_report_summary_s {
    sebt_call call;
    char verdict[2048];      /* "verdict: pass: ..." */
    char headline[512];      /* "speed: fast_cpu 286 k backtests/s: 10000 combos x 152832 bars, 2 threads" */
    char warning[512];       /* a warning of the benchmark library, said once; "" when none */
} sebt_report_summary;
/* bench_log: the benchmark's console output (its warnings), or NULL. */
void sebt_report_summary_of(const sebt_bench_set *set, const char *history, const char *bench_log,
                            sebt_report_summary *s);
const char *sebt_call_name(sebt_call c);   /* pass, slower, faster, inconclusive, FAIL, REGRESSION */
/* With --baseline: the verdict is the gate's (sebt_baseline_compare of
 * old_name's run and this one) instead of the history's; a parity failure
 * in this run still says FAIL. */
void sebt_report_summary_baseline(sebt_report_summary *s, const sebt_baseline *b, const char *old_name);

/* The numbers of one history line (NaN where absent). */
typedef struct {
    char date[64], commit[64], mode[16], machine[256], cpus[32];
    double load_avg, others_busy;
    double vs_reference, vs_reference_min, vs_reference_max;
} sebt_history_row;
/* The last line of the history file of this run's mode and machine;
 * false when there is none (no file, none alike). */
bool sebt_history_previous(const char *path, const sebt_bench_set *set, sebt_history_row *row);
/* Whether a machine was loaded while a benchmark measured: other processes'
 * share of the CPUs (NaN: not recorded), the 1-minute load average (NaN:
 * not recorded) and the core count. The one rule behind the two below. */
bool sebt_machine_loaded(double others_busy, double load_avg, double cores);
/* Whether a history line was measured on a loaded machine (as sebt_run_loaded). */
bool sebt_history_row_loaded(const sebt_history_row *row);

/* Whether other processes held the CPUs while the run measured (the median
 * share others used > 25%, or the load average above the core count);
 * *why says by how much. */
bool sebt_run_loaded(const sebt_bench_set *set, char *why, size_t size);

#endif
