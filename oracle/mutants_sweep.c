/* Mutants of a sweep engine's batch handling: the bugs the
 * black-box gate missed in sebt's own engine before it generated sweeps.
 * Each wraps the mutants' correct base (sebt_mutant_base_backend): its
 * features() stay right, so only the results of a run_batch call carry the
 * bug, as in a real engine whose shared work, memo or batch split is wrong.
 * Listed with the other mutants (oracle/mutants.c's registry). */
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"

typedef enum { SW_SHARED_SLOW, SW_STAMP_WRAP, SW_SPLIT_SKIP, SW_TAIL_DROP } sweep_bug;

/* blind: why parity on the bundled data with the default parity set cannot
 * show it (NULL: it can), so the self-test does not ask it to. */
static const struct {
    const char *name, *what, *needs, *blind;
} infos[] = {
    { "shared_slow", "shared work keyed on ema_fast alone: a combo after one with the same fast span in its batch "
      "reuses that one's ema_slow", NULL, NULL },
    { "stamp_wrap", "memo stamp in 8 bits: combo i+256 of a call takes combo i's result when their windows match",
      "257 combos in one call", "the parity set has fewer than 257 combos" },
    { "split_skip", "a batch split by the memory budget skips the first combo of each later batch", NULL, NULL },
    { "tail_drop", "the last batch is dropped when the memory budget leaves a partial tail", NULL,
      "parity's budgets (the default, 1 byte) leave no partial tail" },
};
#define N_SWEEP (sizeof infos / sizeof infos[0])

/* As the base splits: eight columns of n doubles per combo. */
static size_t per_batch(const sebt_series *s, const sebt_batch_opts *o, size_t n)
{
    if (!o || o->memory_budget == 0)
        return n ? n : 1;
    size_t k = o->memory_budget / ((s->n ? s->n : 1) * 8 * sizeof(double));
    return k ? k : 1;
}

static void drop(sebt_result *r)
{
    sebt_result_free(r);
    memset(r, 0, sizeof *r);
}

static sebt_status sweep_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                   size_t n, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    const sebt_backend *base = &sebt_mutant_base_backend;
    sweep_bug bug = *(const sweep_bug *)self->state;
    size_t per = per_batch(s, opts, n);
    if (bug == SW_SHARED_SLOW) {
        /* Reusing the previous combo's ema_slow column is running with its span. */
        sebt_params *q = malloc((n ? n : 1) * sizeof *q);
        if (!q)
            return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
        memcpy(q, combos, n * sizeof *q);
        for (size_t i = 1; i < n; i++)
            if (i % per != 0 && combos[i].ema_fast == combos[i - 1].ema_fast)
                q[i].ema_slow = q[i - 1].ema_slow;
        sebt_status st = base->run_batch(base, s, q, n, opts, results, err);
        free(q);
        return st;
    }
    sebt_status st = base->run_batch(base, s, combos, n, opts, results, err);
    if (st)
        return st;
    if (bug == SW_STAMP_WRAP) {
        for (size_t i = 256; i < n; i++) {
            const sebt_params *a = &combos[i], *b = &combos[i - 256];
            if (a->ema_fast != b->ema_fast || a->ema_slow != b->ema_slow || a->z_window != b->z_window ||
                a->atr_window != b->atr_window)
                continue;
            sebt_result copy = results[i - 256];
            if (copy.trades && copy.n_trades) {
                copy.trades = malloc(copy.n_trades * sizeof *copy.trades);
                if (!copy.trades) {
                    sebt_results_free(results, n);
                    return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
                }
                memcpy(copy.trades, results[i - 256].trades, copy.n_trades * sizeof *copy.trades);
            }
            sebt_result_free(&results[i]);
            results[i] = copy;
        }
    } else if (bug == SW_SPLIT_SKIP) {
        for (size_t b0 = per; b0 < n; b0 += per)
            drop(&results[b0]);
    } else if (bug == SW_TAIL_DROP && per < n && n % per != 0) {
        for (size_t i = n - n % per; i < n; i++)
            drop(&results[i]);
    }
    return SEBT_OK;
}

static sebt_status sweep_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                  sebt_features *out, sebt_error *err)
{
    (void)self;
    return sebt_mutant_base_backend.features(&sebt_mutant_base_backend, s, p, out, err);
}

static const sweep_bug bugs[N_SWEEP] = { SW_SHARED_SLOW, SW_STAMP_WRAP, SW_SPLIT_SKIP, SW_TAIL_DROP };

#define SWEEP_MUTANT(i, label)                                                                   \
    { "mutant:" label, "a test subject with one planted bug (sebt fuzz --help)",                 \
      { SEBT_CONTRACT_TOLERANT, 1e-9 }, sweep_features, sweep_run_batch, (void *)&bugs[i] }
static const sebt_backend backends[N_SWEEP] = {
    SWEEP_MUTANT(0, "shared_slow"), SWEEP_MUTANT(1, "stamp_wrap"), SWEEP_MUTANT(2, "split_skip"),
    SWEEP_MUTANT(3, "tail_drop"),
};

size_t oracle_sweep_mutant_count(void) { return N_SWEEP; }
const sebt_backend *oracle_sweep_mutant_at(size_t i) { return i < N_SWEEP ? &backends[i] : NULL; }
const char *oracle_sweep_mutant_name(size_t i) { return i < N_SWEEP ? infos[i].name : NULL; }
const char *oracle_sweep_mutant_bug(size_t i) { return i < N_SWEEP ? infos[i].what : NULL; }
const char *oracle_sweep_mutant_needs(size_t i) { return i < N_SWEEP ? infos[i].needs : NULL; }
const char *oracle_sweep_mutant_parity_blind(size_t i) { return i < N_SWEEP ? infos[i].blind : NULL; }
