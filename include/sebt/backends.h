/* The backends compiled into libsebt. Each lives in its own folder and
 * depends only on the public types; the registry (core/registry.c) lists
 * them. The cuda backend is not here: it is a separate shared library that
 * the registry opens with dlopen, so a CPU-only process never maps CUDA. */
#ifndef SEBT_BACKENDS_H
#define SEBT_BACKENDS_H

#include "sebt/analysis.h"
#include "sebt/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const sebt_backend sebt_reference_backend;   /* reference/ */
extern const sebt_backend sebt_fast_cpu_backend;    /* fast_cpu/  */

/* A builtin backend's run_batch that also keeps each combo's analysis
 * tally (sebt/analysis.h) in its metrics-only walk, so a sweep's analysis
 * columns need no trades: metrics only (want_trades off), tallies[i] for
 * combos[i]. Results and tallies never depend on threads or batches. */
typedef sebt_status (*sebt_tally_batch_fn)(const sebt_backend *self, const sebt_series *s,
                                           const sebt_params *combos, size_t n_combos, const sebt_batch_opts *opts,
                                           sebt_result *results, sebt_trade_tally *tallies, sebt_error *err);
sebt_status sebt_fast_cpu_run_tallied(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                      size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                      sebt_trade_tally *tallies, sebt_error *err);

/* A builtin backend's run_batch that also sums each combo's overfit block
 * statistics (sebt/overfit.h: its closed trades' count, sum of R and sum
 * of R², per block of its exit bar, in trade order, as
 * sebt_overfit_add_trades adds them: the same bits) in its metrics-only
 * walk, so a sweep's --overfit needs neither trades nor a second run:
 * block_stats holds n_combos rows of 3 * blocks doubles, zeroed by the
 * caller, row i for combos[i]; tallies (may be NULL) as a tallied batch's.
 * Nothing depends on threads or batches. */
typedef sebt_status (*sebt_blocks_batch_fn)(const sebt_backend *self, const sebt_series *s,
                                            const sebt_params *combos, size_t n_combos, const sebt_batch_opts *opts,
                                            sebt_result *results, sebt_trade_tally *tallies, double *block_stats,
                                            int blocks, sebt_error *err);
sebt_status sebt_fast_cpu_run_blocked(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                      size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                      sebt_trade_tally *tallies, double *block_stats, int blocks, sebt_error *err);

/* b's blocked batch (core/registry.c): fast_cpu's; NULL for every other
 * backend (cuda among them), whose block sums come from its trades. */
sebt_blocks_batch_fn sebt_backend_blocks_batch(const sebt_backend *b);

/* b's tallied batch (core/registry.c), or NULL for a backend whose walk
 * keeps no tally (the reference, plugins, kernels): its analysis columns
 * come from its trades (sebt_trade_stats_of). */
sebt_tally_batch_fn sebt_backend_tally_batch(const sebt_backend *b);

/* Gives b, a backend that wraps one whose walk keeps a tally (`sebt
 * validate` watches each call of its candidate through such a copy), the
 * tallied batch fn, so that sebt_backend_tally_batch(b) finds it and the
 * oracle judges b's analysis columns as the wrapped one's; fn NULL takes
 * it back. A few wrappers at a time; not for a builtin backend (its own
 * is fixed). Not thread-safe: set before the calls. */
sebt_status sebt_backend_set_tally_batch(const sebt_backend *b, sebt_tally_batch_fn fn, sebt_error *err);

/* Entry point that gpu/libsebt_cuda.so exports; the registry looks it up
 * with dlsym. Returns NULL and fills err when no device is usable. */
typedef const sebt_backend *(*sebt_cuda_open_fn)(sebt_error *err);
#define SEBT_CUDA_OPEN_SYMBOL "sebt_cuda_open"
/* Its tallied batch (a sebt_tally_batch_fn), which the registry looks up
 * beside it; a module without it keeps the trade path. */
#define SEBT_CUDA_TALLIED_SYMBOL "sebt_cuda_run_tallied"

#ifdef __cplusplus
}
#endif

#endif
