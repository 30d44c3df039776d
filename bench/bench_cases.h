/* The benchmark plan and the work each benchmark times, in C. The Google
 * Benchmark program (bench_main.cc) is a thin shim over this file: it
 * registers the cases of bench_plan() and times bench_run() in its loop.
 *
 * Series are real data only: the bundled BTCUSDT files, joined end to end
 * (each later file re-timestamped to continue after the previous one, with
 * one missing bar at every seam) when a benchmark needs more bars than one
 * file holds. */
#ifndef SEBT_BENCH_CASES_H
#define SEBT_BENCH_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include "sebt/sebt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_prepared bench_prepared;

typedef enum {
    BENCH_SWEEP_BARS,      /* fixed combos, growing bars */
    BENCH_SWEEP_COMBOS,    /* fixed bars, growing combos */
    BENCH_THREADS,         /* fixed sweep, growing thread count */
    BENCH_PAIR,            /* the gated ratios: the same sweep on 1 thread per backend */
    BENCH_PEER,            /* the numba peer (bench/peers/numba_peer.py) on a sweep's work */
    BENCH_FEATURES,        /* micro: every indicator and the signal of one combo */
    BENCH_BACKTEST,        /* micro: one backtest with its trades */
    BENCH_LOAD_GZ,         /* micro: the loader on a .csv.gz file */
    BENCH_LOAD_CSV,        /* micro: the loader on CSV text in memory */
    BENCH_UNAVAILABLE      /* a backend that cannot run here: reported, not timed */
} bench_kind;

typedef struct {
    bench_kind kind;
    char backend[32];
    size_t bars;
    size_t combos;
    int threads;           /* 0: the backend's default */
    double min_time;       /* seconds Google Benchmark keeps repeating it (a flag,
                            * so that it stays out of the name) */
    char name[160];        /* "group/backend/bars:N/combos:C/threads:T": the same
                            * in --quick and full runs */
    char note[SEBT_ERROR_MSG_MAX]; /* why a BENCH_UNAVAILABLE case cannot run */
} bench_case;

/* What one iteration of a case processes, for the rate counters. */
typedef struct {
    double bars;           /* bars per combo */
    double combos;
    double bar_combos;
    double trades;         /* BENCH_BACKTEST */
    double rows;           /* BENCH_LOAD_* */
} bench_work;

/* How the case's results compare with the reference before it is timed. */
typedef enum {
    BENCH_PARITY_NONE,     /* nothing to compare (the loader) */
    BENCH_PARITY_ORACLE,   /* the reference itself: it is the oracle */
    BENCH_PARITY_OK,       /* a sample of combos agreed under the contract */
    BENCH_PARITY_FAILED    /* a sample combo diverged: the case is not timed */
} bench_parity_status;

typedef struct {
    bench_parity_status status;
    size_t checked;        /* combos compared */
    size_t ties;           /* near-ties adjudicated by the oracle */
    char msg[SEBT_ERROR_MSG_MAX];
} bench_parity;

/* Fills at most max cases; returns how many there are (may exceed max).
 * quick keeps the whole run under two minutes on two cores. */
size_t bench_plan(bool quick, int n_cpus, bench_case *cases, size_t max);

/* Repetitions of every case (Google Benchmark's --benchmark_repetitions):
 * quick 5, full 7. The rank test of the baseline gate needs 5 a side to
 * ever reach p < 0.05. */
int bench_default_repetitions(bool quick);
double bench_min_time(bool quick);
/* How many repetitions this run makes (the peer times as many runs). */
void bench_set_repetitions(int repetitions);

/* A peer case reports the times its own program measured: the i-th
 * repetition's seconds (cycling when asked for more). */
double bench_peer_seconds(const bench_prepared *p, size_t i);
/* The machine while the peer measured (its repetitions take no time here). */
void bench_peer_machine(const bench_prepared *p, double *others_busy, double *load_avg);

/* What the machine did around one repetition: the 1-minute load average
 * and the share of all CPUs that other processes used meanwhile (0..1). */
typedef struct {
    unsigned long long busy, total, self;
    double wall;
} bench_machine_mark;
void bench_machine_begin(bench_machine_mark *m);
void bench_machine_end(const bench_machine_mark *m, double *others_busy, double *load_avg);

/* Loads the data, builds the combos and checks parity, once per case (the
 * result is cached: Google Benchmark calls a case several times). A
 * BENCH_PARITY_FAILED case returns SEBT_OK with *out set: the caller must
 * not time it. */
sebt_status bench_prepare(const bench_case *c, bench_prepared **out, sebt_error *err);
const bench_parity *bench_parity_of(const bench_prepared *p);
bench_work bench_work_of(const bench_prepared *p);

/* One iteration of the timed work. */
sebt_status bench_run(bench_prepared *p, sebt_error *err);

/* Releases every prepared case and cached series. */
void bench_release_all(void);

/* SEBT_FAST_CPU_PLANTED_SLOWDOWN=1: every fast_cpu call is made twice, a
 * test switch that the baseline comparison must flag. */
bool bench_planted_slowdown(void);

/* The run's context for the JSON: machine, compilers, commit. Calls
 * emit(key, value, user) for each. */
typedef void (*bench_context_fn)(const char *key, const char *value, void *user);
void bench_context(bool quick, bench_context_fn emit, void *user);

/* The i-th combo of the benchmark grid: a mixed-radix walk over values of
 * every parameter, thresholds varying fastest, so that combo 0 is the SPEC
 * defaults and the first C combos are what a C-combo grid sweep would be. */
sebt_params bench_combo(size_t i);

#ifdef __cplusplus
}
#endif

#endif
