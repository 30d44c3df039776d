/* The reference backend: the oracle every other backend is judged against.
 * Speed does not matter here; being checkable against SPEC line by line does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sebt/backends.h"
#include "ref.h"

static sebt_status ref_features(const sebt_backend *self, const sebt_series *s,
                                const sebt_params *p, sebt_features *out, sebt_error *err)
{
    (void)self;
    if (!s || !p || !out)
        return sebt_ref_fail(err, SEBT_ERR_USAGE, "reference features: series, params and out are required");
    bool cols = out->signal && out->valid;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        cols = cols && out->col[c];
    if (out->n != s->n || (s->n && !cols))
        return sebt_ref_fail(err, SEBT_ERR_USAGE,
                             "reference features: out holds %zu bars, the series %zu "
                             "(allocate it with sebt_features_alloc(s->n))", out->n, s->n);
    sebt_status st = sebt_ref_check_params(p, 0, err);
    if (st != SEBT_OK)
        return st;
    st = sebt_ref_check_series(s, err);
    if (st != SEBT_OK)
        return st;
    sebt_ref_compute(s, p, out);
    return SEBT_OK;
}

/* Private columns for one combo: the reference calls no core allocator. */
static int columns_alloc(sebt_features *f, size_t n)
{
    size_t m = n ? n : 1;
    memset(f, 0, sizeof *f);
    f->n = n;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        if (!(f->col[c] = malloc(m * sizeof(double))))
            return -1;
    f->signal = malloc(m);
    f->valid = malloc(m);
    return f->signal && f->valid ? 0 : -1;
}

static void columns_free(sebt_features *f)
{
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        free(f->col[c]);
    free(f->signal);
    free(f->valid);
    memset(f, 0, sizeof *f);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void release(sebt_result *results, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(results[i].trades);
        memset(&results[i], 0, sizeof results[i]);
    }
}

static sebt_status ref_run_batch(const sebt_backend *self, const sebt_series *s,
                                 const sebt_params *combos, size_t n_combos,
                                 const sebt_batch_opts *opts, sebt_result *results,
                                 sebt_error *err)
{
    (void)self;
    if (!s || (n_combos && (!combos || !results)))
        return sebt_ref_fail(err, SEBT_ERR_USAGE, "reference run_batch: series, combos and results are required");

    /* Every combo is checked before any is run (backend.h). */
    for (size_t i = 0; i < n_combos; i++) {
        sebt_status st = sebt_ref_check_params(&combos[i], i, err);
        if (st != SEBT_OK)
            return st;
    }
    sebt_status st = sebt_ref_check_series(s, err);
    if (st != SEBT_OK)
        return st;

    bool want_trades = opts && opts->want_trades;
    /* Its default is one thread; more share out the bars of each combo's
     * Z columns (sebt_ref_compute_threads), never the arithmetic. */
    int threads = opts && opts->threads > 1 ? opts->threads : 1;
    sebt_progress_fn progress = opts ? opts->progress : NULL;
    void *user = opts ? opts->progress_user : NULL;

    sebt_features f;
    if (columns_alloc(&f, s->n) != 0) {
        columns_free(&f);
        return sebt_ref_fail(err, SEBT_ERR_NOMEM, "reference: out of memory for features of %zu bars", s->n);
    }

    double last = now_s();
    for (size_t i = 0; i < n_combos; i++) {
        sebt_result *r = &results[i];
        memset(r, 0, sizeof *r);
        sebt_ref_compute_threads(s, &combos[i], &f, threads);
        st = sebt_ref_walk(s, &f, &combos[i], NULL, r, err);
        if (st != SEBT_OK) {
            columns_free(&f);
            release(results, i + 1);
            return st;
        }
        sebt_ref_metrics(r->trades, r->n_trades, &r->metrics);
        if (!want_trades) {
            free(r->trades);
            r->trades = NULL;
        }
        /* A few times a second at most, and once at the end. */
        if (progress) {
            double t = now_s();
            if (t - last >= 0.25 || i + 1 == n_combos) {
                progress(user, i + 1, n_combos);
                last = t;
            }
        }
    }
    columns_free(&f);
    return SEBT_OK;
}

const sebt_backend sebt_reference_backend = {
    .name = "reference",
    .description = "SPEC written literally: naive windows, one bar at a time (the oracle)",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = ref_features,
    .run_batch = ref_run_batch,
    .state = NULL,
};
