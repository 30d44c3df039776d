/* Pieces shared between the oracle's files; not public API. */
#ifndef SEBT_ORACLE_INTERNAL_H
#define SEBT_ORACLE_INTERNAL_H

#include "sebt/oracle.h"
#include "sebt/sebt.h"

/* A growing list of trades (the mutants' reshaped walks). */
typedef struct {
    sebt_trade *v;
    size_t n, cap;
} oracle_trade_vec;

/* Appends t; false when out of memory (l is left as it was). */
bool oracle_trade_push(oracle_trade_vec *l, const sebt_trade *t);

/* Fills div (combo index left to the caller). bar may be -1. */
void oracle_diverge(sebt_divergence *div, const sebt_series *s, const sebt_params *p,
                    const char *what, int64_t bar, double ref_value, double cand_value,
                    double margin, const char *fmt, ...) SEBT_PRINTF(9, 10);

/* The oracle's replay of SPEC §6 over the reference's features, following
 * the candidate (cand, with trades) at near-tie decisions. On return
 * *diverged tells whether a difference beyond a tie was found (div filled);
 * tally gains the exit decisions judged and the ties adjudicated. cand_f
 * (the candidate's features; may be NULL) says whether its signal operands
 * moved; its trades' stop and tp say whether its exit operands did. replay receives the replayed
 * trades (malloc'd) and open position. tie_bars marks signal bars already
 * adjudicated by the feature comparison (not counted twice); may be NULL. */
typedef sebt_oracle_tally oracle_tally;

sebt_status oracle_replay(const sebt_series *s, const sebt_params *p, const sebt_features *ref,
                          const sebt_features *cand_f, double tol, const sebt_result *cand,
                          const uint8_t *tie_bars, sebt_result *replay, bool *diverged,
                          sebt_divergence *div, oracle_tally *tally, sebt_error *err);

/* Whether the candidate's signal at t (cand_sig) can differ from the
 * reference's only through rounding: near-ties (within tol) whose operands
 * in cand (the candidate's features) are not the reference's bits. tol 0
 * never adjudicates. *margin gets the deciding margin. */
bool oracle_signal_tie(const sebt_features *ref, const sebt_features *cand, const sebt_params *p,
                       size_t t, bool cand_sig, double tol, double *margin);

/* How a case's batch runs on the candidate: the paths it takes. */
typedef struct {
    int threads;             /* 0: 1 */
    size_t memory_budget;    /* 0: the backend's default */
    sebt_batch_stats *stats; /* may be NULL */
} oracle_case_opts;

/* Whether candidate diverges from the reference on (s, p): runs both and
 * compares. A candidate error counts as a divergence. Used by the fuzzer
 * and the shrinker. */
sebt_status oracle_check_case(const sebt_backend *candidate, const sebt_series *s,
                              const sebt_params *p, size_t n_combos, const oracle_case_opts *o,
                              bool *diverged, sebt_divergence *div, oracle_tally *tally,
                              size_t *diverged_combo, sebt_error *err);

/* sebt_oracle_shrink over a batch: combos[*focus] diverges when the n
 * combos run together with co's options. Drops the other combos it can,
 * then shrinks bars, the focus combo's parameters and values; co->threads
 * drops to 1 when the divergence does not need the threads. A step is kept
 * only while the divergence stays of the kind it had (oracle_same_kind).
 * When the case does not diverge to begin with, *not_repeated (if given)
 * is set and nothing changes; without it that is a usage error. */
sebt_status oracle_shrink_batch(const sebt_backend *cand, sebt_series *s, sebt_params *combos,
                                size_t *n, size_t *focus, oracle_case_opts *co,
                                sebt_divergence *div, bool *not_repeated, sebt_error *err);

/* Whether got, a result run metrics-only, agrees with want (the same
 * combo with trades recorded, already judged against the reference) under
 * contract: counts, bars and the open position's entry exactly, metrics
 * and prices as the contract says (tolerant: within tol of SPEC §7 over
 * want's trades). Else fills div ("metrics-only <field>"; its detail is
 * "<how>, the candidate gives <field> X; <against>: Y") and returns false. */
bool oracle_metrics_only_agree(const sebt_contract *contract, const sebt_series *s, const sebt_params *p,
                               const sebt_result *want, const sebt_result *got, const char *how,
                               const char *against, sebt_divergence *div);

/* Whether two divergences are the same bug for the shrinker: the same
 * field or decision (trade and bar numbers aside) with the same side
 * (which side is NaN, the sign of candidate - reference, or for a decision
 * the same pair of outcomes). */
bool oracle_same_kind(const sebt_divergence *a, const sebt_divergence *b);

/* Whether two runs diverged identically (field, bar, both values' bits). */
bool oracle_same_divergence(const sebt_divergence *a, const sebt_divergence *b);

double oracle_now(void);

/* The sweep-engine mutants (oracle/mutants_sweep.c), listed after the
 * others by sebt_mutant_count and friends. */
size_t oracle_sweep_mutant_count(void);
const sebt_backend *oracle_sweep_mutant_at(size_t i);
const char *oracle_sweep_mutant_name(size_t i);
const char *oracle_sweep_mutant_bug(size_t i);
const char *oracle_sweep_mutant_needs(size_t i);
const char *oracle_sweep_mutant_parity_blind(size_t i);

#endif
