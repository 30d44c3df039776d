/* The sweep's proof's checks (core/sweep_verify.c, core/sweep_exact.c):
 * internal to the library, hidden from libsebt.so's exports. */
#ifndef SEBT_SWEEP_VERIFY_H
#define SEBT_SWEEP_VERIFY_H

#include "sebt/sweep.h"

/* The condition a sweep ran with and what it decided for each checked
 * combo: kept[i] is true when combo i's row passed (NULL: every checked
 * combo's did, as the best combos of a ranking). */
typedef struct {
    const char *text;
    const bool *kept;
} sebt_sweep_where_decisions;

/* Where a check recomputes its combos: on the reference as a backend
 * (SPEC §8's oracle; its two z-score columns, each bar's window summed
 * afresh, are about 0.4 s of CPU for one combo with z_window 672 on the
 * bundled 15m series); on the reference's own columns, signal and walk
 * over every bar with those z-scores made only at the bars where the
 * signal reads them (the same results: nothing else reads a z-score); or
 * on the exact path (core/sweep_exact.c: the reference's functions, each
 * column made once for the combos sharing its window, z-scores only at
 * the bars read, the bars whose signal is off passed over). */
typedef enum { SEBT_RECOMPUTE_REFERENCE, SEBT_RECOMPUTE_REFERENCE_Z_READ, SEBT_RECOMPUTE_EXACT } sebt_recompute;

/* sebt_sweep_verify (on the reference), its walk with the z-scores where
 * read, or sebt_sweep_verify_exact (on the exact path), and with where
 * (may be NULL) each combo's decision re-made on the recomputed row by
 * the reference's literal reading of the condition (sebt_ref_where): a
 * combo the sweep kept that the condition rejects, or dropped that it
 * keeps, differs. */
__attribute__((visibility("hidden"))) sebt_status
sebt_sweep_verify_on(sebt_recompute on, const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                     const sebt_sweep_record *got, size_t n, int threads, const sebt_sweep_where_decisions *where,
                     sebt_verify_report *rep, sebt_error *err);

/* What the checks of one call found: the first failure, or the
 * differences (the first by combo named). Shared by the reference's
 * check (core/sweep_verify.c) and the exact path (core/sweep_exact.c). */
typedef struct {
    sebt_status failed;
    sebt_error first_err;
    size_t differ, first_at;
    char what[sizeof ((sebt_verify_report *)0)->what];
    const sebt_sweep_where_decisions *where;   /* NULL: no condition */
    const sebt_params *combos;
} sebt_verify_verdict;

/* Combo i's recomputed result r (its trades too when the record has the
 * analysis columns) against what the sweep wrote, into v; `one`, the
 * recomputation's status, when it failed (its error in e). Thread-safe. */
__attribute__((visibility("hidden"))) void
sebt_verify_judge(const sebt_backend *cand, const sebt_series *s, const sebt_sweep_record *got, size_t i,
                  sebt_status one, const sebt_error *e, const sebt_result *r, sebt_verify_verdict *v);
/* The exact path's recomputation of combos[0..n) on t threads, each
 * judged into v (core/sweep_exact.c); SEBT_ERR_NOMEM when its columns do
 * not fit. */
__attribute__((visibility("hidden"))) sebt_status
sebt_verify_exact_all(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                      const sebt_sweep_record *got, size_t n, int t, sebt_verify_verdict *v, sebt_error *err);

#endif
