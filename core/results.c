#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"

sebt_status sebt_features_alloc(sebt_features *f, size_t n, sebt_error *err)
{
    memset(f, 0, sizeof *f);
    size_t m = n ? n : 1;
    bool ok = true;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        ok = (f->col[c] = calloc(m, sizeof(double))) != NULL && ok;
    f->signal = calloc(m, 1);
    f->valid = calloc(m, 1);
    if (!ok || !f->signal || !f->valid) {
        sebt_features_free(f);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory allocating features for %zu bars", n);
    }
    f->n = n;
    return SEBT_OK;
}

void sebt_features_free(sebt_features *f)
{
    if (!f)
        return;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        free(f->col[c]);
    free(f->signal);
    free(f->valid);
    memset(f, 0, sizeof *f);
}

void sebt_result_free(sebt_result *r)
{
    if (!r)
        return;
    free(r->trades);
    memset(r, 0, sizeof *r);
}

void sebt_results_free(sebt_result *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++)
        sebt_result_free(&r[i]);
}

sebt_status sebt_features_check(const char *who, const sebt_series *s, const sebt_params *p,
                                const sebt_features *out, sebt_error *err)
{
    if (!s || !p || !out)
        return sebt_fail(err, SEBT_ERR_USAGE, "%s features: series, params and out are required", who);
    bool cols = out->signal && out->valid;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        cols = cols && out->col[c];
    if (out->n != s->n || (s->n && !cols))
        return sebt_fail(err, SEBT_ERR_USAGE,
                         "%s features: out holds %zu bars, the series %zu "
                         "(allocate it with sebt_features_alloc(s->n))", who, out->n, s->n);
    sebt_status st = sebt_params_validate(p, err);
    return st != SEBT_OK ? st : sebt_series_check(s, err);
}

sebt_status sebt_batch_check(const char *who, const sebt_series *s, const sebt_params *combos,
                             size_t n_combos, const sebt_result *results, sebt_error *err)
{
    if (!s || (n_combos && (!combos || !results)))
        return sebt_fail(err, SEBT_ERR_USAGE, "%s run_batch: series, combos and results are required", who);
    for (size_t i = 0; i < n_combos; i++) {
        sebt_error e = { SEBT_OK, "" };
        if (sebt_params_validate(&combos[i], &e) != SEBT_OK)
            return sebt_fail(err, SEBT_ERR_PARAM, "combo %zu: %s", i, e.msg);
    }
    return sebt_series_check(s, err);
}

/* The one table of exit outcomes: SPEC §6's reasons in chain order, then
 * the outcome of a bar that closes nothing. Everything that names or reads
 * an exit (results, fixtures, the oracle's divergences) goes through it. */
static const char *const exit_outcomes[SEBT_EXIT_KINDS + 1] = {
    [SEBT_EXIT_STOP_GAP] = "stop_gap",
    [SEBT_EXIT_STOP] = "stop",
    [SEBT_EXIT_TP] = "tp",
    [SEBT_EXIT_TIME] = "time",
    [SEBT_EXIT_KINDS] = "no exit",
};

const char *sebt_exit_reason_name(sebt_exit_reason reason)
{
    return (int)reason >= 0 && (int)reason < SEBT_EXIT_KINDS ? exit_outcomes[reason] : "unknown";
}

const char *sebt_exit_outcome_name(double v)
{
    return v >= 0 && v <= SEBT_EXIT_KINDS && v == (int)v ? exit_outcomes[(int)v] : NULL;
}

bool sebt_exit_reason_parse(const char *name, size_t len, sebt_exit_reason *out)
{
    for (int i = 0; i < SEBT_EXIT_KINDS; i++)
        if (strlen(exit_outcomes[i]) == len && strncmp(name, exit_outcomes[i], len) == 0) {
            *out = (sebt_exit_reason)i;
            return true;
        }
    return false;
}
