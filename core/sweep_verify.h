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

#endif
