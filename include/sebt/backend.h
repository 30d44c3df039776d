/* The backend interface: a table of function pointers that every backend
 * (reference, fast_cpu, cuda, and the oracle's test mutants) implements. */
#ifndef SEBT_BACKEND_H
#define SEBT_BACKEND_H

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SPEC §8. An exact backend matches the reference bit for bit; a tolerant
 * one matches within tol, with near-ties adjudicated by the oracle. */
typedef enum { SEBT_CONTRACT_EXACT = 0, SEBT_CONTRACT_TOLERANT = 1 } sebt_contract_kind;

typedef struct {
    sebt_contract_kind kind;
    double tol;            /* 0 for exact */
} sebt_contract;

/* Called from the thread that called run_batch (never from a worker), at
 * most a few times per second, so a CLI can draw a progress bar. */
typedef void (*sebt_progress_fn)(void *user, size_t done, size_t total);

/* What a run_batch call did, filled by backends that take several paths
 * (threads, batches, blocks, chunks), so the oracle can show that a fuzz
 * campaign reached each of them. A backend with one path leaves it zeroed. */
typedef struct {
    int threads_used;      /* worker threads that ran combos */
    size_t batches;        /* indicator batches (memory-budget splits) */
    size_t chunks;         /* device chunks or other work splits */
    size_t blocks;         /* series blocks (e.g. ATR blocks) */
} sebt_batch_stats;

typedef struct {
    int threads;           /* 0: the backend's default (OMP_NUM_THREADS or all cores) */
    bool want_trades;      /* fill sebt_result.trades, not only the metrics */
    sebt_progress_fn progress;   /* may be NULL */
    void *progress_user;
    /* Working-memory budget in bytes; 0: the backend's default (for
     * fast_cpu, SEBT_FAST_CPU_MEMORY_MB or its built-in budget). A tiny
     * budget forces many batches; results never depend on it. */
    size_t memory_budget;
    sebt_batch_stats *stats;     /* may be NULL; filled when not */
} sebt_batch_opts;

typedef struct sebt_backend sebt_backend;

struct sebt_backend {
    const char *name;          /* "reference", "fast_cpu", "cuda", ... */
    const char *description;   /* one line for `sebt backends` */
    sebt_contract contract;

    /* The indicator columns and signal of one combo over series s.
     * out must come from sebt_features_alloc(s->n). */
    sebt_status (*features)(const sebt_backend *self, const sebt_series *s,
                            const sebt_params *p, sebt_features *out,
                            sebt_error *err);

    /* Backtest n_combos combos over s. results[i] belongs to combos[i], in
     * input order whatever the thread count. results must point to n_combos
     * zeroed sebt_result. Every combo is validated before any is run: one
     * bad combo fails the whole call, naming its index and parameter. A
     * call that fails leaves every result zeroed: callers then free only
     * their array, so trades left attached would leak. */
    sebt_status (*run_batch)(const sebt_backend *self, const sebt_series *s,
                             const sebt_params *combos, size_t n_combos,
                             const sebt_batch_opts *opts, sebt_result *results,
                             sebt_error *err);

    /* Backend-private state (the cuda backend keeps its device here). */
    void *state;
};

#ifdef __cplusplus
}
#endif

#endif
