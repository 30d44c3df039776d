/* The sweep's proof with a `--where` condition (core/sweep_verify.c):
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

/* sebt_sweep_verify and sebt_sweep_verify_exact, and with where (may be
 * NULL) each combo's decision re-made on the reference's row by the
 * reference's literal reading of the condition (sebt_ref_where): a combo
 * the sweep kept that the condition rejects, or dropped that it keeps,
 * differs. */
__attribute__((visibility("hidden"))) sebt_status
sebt_sweep_verify_where(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                        const sebt_sweep_record *got, size_t n, int threads, const sebt_sweep_where_decisions *where,
                        sebt_verify_report *rep, sebt_error *err);
__attribute__((visibility("hidden"))) sebt_status
sebt_sweep_verify_exact_where(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                              const sebt_sweep_record *got, size_t n, int threads,
                              const sebt_sweep_where_decisions *where, sebt_verify_report *rep, sebt_error *err);

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
/* v's outcome over n records into rep, or its failure into err. */
__attribute__((visibility("hidden"))) sebt_status
sebt_verify_conclude(const sebt_verify_verdict *v, const sebt_sweep_record *got, size_t n, double seconds,
                     sebt_verify_report *rep, sebt_error *err);
/* threads, or every core when it is below 1. */
__attribute__((visibility("hidden"))) int sebt_verify_threads(int threads);

#endif
