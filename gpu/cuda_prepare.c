/* The host half of a cuda sweep: what fast_cpu/sweep.c prepares per batch of
 * indicator keys, through the same functions, so the device kernel starts
 * from fast_cpu's bits. (fast_cpu keeps its preparation private to its
 * sweep loop; this file follows the same steps.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cuda_plan.h"

static int key_cmp(const cuda_key *a, const cuda_key *b)
{
    if (a->atr != b->atr) return a->atr < b->atr ? -1 : 1;
    if (a->z != b->z) return a->z < b->z ? -1 : 1;
    if (a->fast != b->fast) return a->fast < b->fast ? -1 : 1;
    if (a->slow != b->slow) return a->slow < b->slow ? -1 : 1;
    return 0;
}

typedef struct {
    cuda_key key;
    size_t index;
} keyed;

static int keyed_cmp(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    int c = key_cmp(&a->key, &b->key);
    if (c)
        return c;
    return a->index < b->index ? -1 : a->index > b->index;
}

static cuda_key key_of(const sebt_params *p)
{
    cuda_key k = { p->atr_window, p->z_window, p->ema_fast, p->ema_slow };
    return k;
}

sebt_status cuda_plan_build(const sebt_series *s, const sebt_params *combos, size_t n_combos, cuda_plan *p,
                            sebt_error *err)
{
    memset(p, 0, sizeof *p);
    size_t cols = s->n ? s->n : 1;
    keyed *k = malloc((n_combos ? n_combos : 1) * sizeof *k);
    p->order = malloc((n_combos ? n_combos : 1) * sizeof *p->order);
    p->tr = malloc(cols * sizeof(double));
    p->cloc = malloc(cols * sizeof(double));
    if (!k || !p->order || !p->tr || !p->cloc) {
        free(k);
        cuda_plan_free(p);
        return sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for %zu bars and %zu combos", s->n,
                         n_combos);
    }
    p->n_combos = n_combos;
    fast_tr_column(s, p->tr);
    fast_cloc_column(s, p->cloc);
    sebt_status st = fast_market_build(s, &p->fm, err);
    if (st != SEBT_OK) {
        free(k);
        cuda_plan_free(p);
        return st;
    }
    for (size_t i = 0; i < n_combos; i++) {
        k[i].key = key_of(&combos[i]);
        k[i].index = i;
    }
    qsort(k, n_combos, sizeof *k, keyed_cmp);
    for (size_t i = 0; i < n_combos; i++) {
        p->order[i] = k[i].index;
        if (i == 0 || key_cmp(&k[i].key, &k[i - 1].key) != 0)
            p->n_groups++;
    }
    p->groups = calloc(p->n_groups ? p->n_groups : 1, sizeof *p->groups);
    if (!p->groups) {
        free(k);
        cuda_plan_free(p);
        return sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for %zu indicator keys", p->n_groups);
    }
    size_t g = (size_t)-1;
    for (size_t i = 0; i < n_combos; i++) {
        const sebt_params *c = &combos[k[i].index];
        if (i == 0 || key_cmp(&k[i].key, &k[i - 1].key) != 0) {
            cuda_group *gr = &p->groups[++g];
            gr->key = k[i].key;
            gr->first = i;
            gr->vmin = c->vol_z;
            gr->tmin = c->tr_z;
            gr->cmin = c->cloc_min;
        }
        cuda_group *gr = &p->groups[g];
        gr->count++;
        if (c->vol_z < gr->vmin) gr->vmin = c->vol_z;
        if (c->tr_z < gr->tmin) gr->tmin = c->tr_z;
        if (c->cloc_min < gr->cmin) gr->cmin = c->cloc_min;
    }
    free(k);
    return SEBT_OK;
}

void cuda_plan_free(cuda_plan *p)
{
    free(p->order);
    free(p->groups);
    free(p->tr);
    free(p->cloc);
    fast_market_free(&p->fm);
    memset(p, 0, sizeof *p);
}

size_t cuda_host_budget(void) { return fast_memory_budget(); }

/* Worst cases per key, as if no series were shared: two EMAs, ATR, vol_z
 * and tr_z columns (8 bytes a bar each), a valid-bar set (1 + 4 + 4) and a
 * candidate on every bar (4 + 4 x 8). */
size_t cuda_batch_host_bytes(size_t n_bars, size_t n_keys) { return n_keys * n_bars * (5 * 8 + 9 + 36); }
size_t cuda_batch_device_bytes(size_t n_bars, size_t n_keys) { return n_keys * n_bars * (9 + 36); }

void cuda_batch_free(cuda_batch *b)
{
    for (size_t a = 0; a < b->n_atrs; a++) {
        if (b->valid) free(b->valid[a]);
        if (b->rank) free(b->rank[a]);
        if (b->vbar) free(b->vbar[a]);
    }
    if (b->cands)
        for (size_t g = 0; g < b->g1 - b->g0; g++)
            free((void *)b->cands[g].bar);
    free(b->valid);
    free(b->rank);
    free(b->vbar);
    free(b->n_valid);
    free(b->atrs);
    free(b->atr_slot);
    free(b->cands);
    memset(b, 0, sizeof *b);
}

static int find_or_add(int32_t *list, size_t *n, int32_t v)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == v)
            return (int)i;
    list[*n] = v;
    return (int)(*n)++;
}

sebt_status cuda_batch_build(const cuda_plan *p, const sebt_series *s, size_t g0, size_t g1, int threads,
                             cuda_batch *b, sebt_error *err)
{
    memset(b, 0, sizeof *b);
    size_t n = s->n, cols = n ? n : 1, ng = g1 - g0;
    b->g0 = g0;
    b->g1 = g1;
    /* Per key its own columns: simple, and the keys of a batch run in
     * parallel. Keys sharing an atr_window share its valid-bar set. */
    double *ef = NULL, *es = NULL, *atr = NULL, *vz = NULL, *tz = NULL;
    b->atrs = malloc(ng * sizeof *b->atrs);
    b->atr_slot = malloc(ng * sizeof *b->atr_slot);
    b->cands = calloc(ng, sizeof *b->cands);
    b->valid = calloc(ng, sizeof *b->valid);
    b->rank = calloc(ng, sizeof *b->rank);
    b->vbar = calloc(ng, sizeof *b->vbar);
    b->n_valid = calloc(ng, sizeof *b->n_valid);
    if (!b->atrs || !b->atr_slot || !b->cands || !b->valid || !b->rank || !b->vbar || !b->n_valid)
        goto nomem;
    for (size_t g = 0; g < ng; g++)
        b->atr_slot[g] = find_or_add(b->atrs, &b->n_atrs, p->groups[g0 + g].key.atr);
    for (size_t a = 0; a < b->n_atrs; a++) {
        b->valid[a] = malloc(cols);
        b->rank[a] = malloc(cols * sizeof(int32_t));
        b->vbar[a] = malloc(cols * sizeof(int32_t));
        if (!b->valid[a] || !b->rank[a] || !b->vbar[a])
            goto nomem;
    }

#ifdef _OPENMP
    if (threads <= 0)
        threads = omp_get_max_threads();
#else
    threads = 1;
    (void)threads;
#endif
    int failed = 0;
    #pragma omp parallel num_threads(threads) reduction(|:failed) private(ef, es, atr, vz, tz)
    {
        ef = malloc(cols * sizeof(double));
        es = malloc(cols * sizeof(double));
        atr = malloc(cols * sizeof(double));
        vz = malloc(cols * sizeof(double));
        tz = malloc(cols * sizeof(double));
        if (!ef || !es || !atr || !vz || !tz)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t a = 0; a < b->n_atrs; a++) {
            if (failed)
                continue;
            fast_atr_range(p->tr, n, b->atrs[a], 0, n, atr);
            fast_valid_from_atr(atr, n, b->valid[a], b->rank[a], b->vbar[a], &b->n_valid[a]);
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t g = 0; g < ng; g++) {
            if (failed)
                continue;
            const cuda_group *gr = &p->groups[g0 + g];
            sebt_k_ema(s->close, (int64_t)n, gr->key.fast, ef);
            sebt_k_ema(s->close, (int64_t)n, gr->key.slow, es);
            fast_atr_range(p->tr, n, gr->key.atr, 0, n, atr);
            sebt_k_zscore(s->volume, (int64_t)n, gr->key.z, vz);
            sebt_k_zscore(atr, (int64_t)n, gr->key.z, tz);
            /* Rolling z is a pre-filter: the reference's bits wherever a
             * decision is taken on it (fast_cpu/sweep.c does the same). */
            if (fast_z_refine(s->volume, n, gr->key.z, vz, sebt_k_z_prefilter(gr->vmin), p->cloc, gr->cmin, NULL,
                              0.0) != 0
                || fast_z_refine(atr, n, gr->key.z, tz, sebt_k_z_prefilter(gr->tmin), p->cloc, gr->cmin, vz,
                                 gr->vmin) != 0) {
                failed = 1;
                continue;
            }
            const double *cl = p->cloc;
            size_t count = 0;
            for (size_t t = 0; t < n; t++)
                count += ef[t] < es[t] && vz[t] > gr->vmin && tz[t] > gr->tmin && cl[t] > gr->cmin;
            size_t m = count ? count : 1;
            /* The bar indices first: cuda_batch_free frees through them. */
            int32_t *cbar = malloc(m * (sizeof(int32_t) + 4 * sizeof(double)) + sizeof(double));
            if (!cbar) {
                failed = 1;
                continue;
            }
            /* Doubles start on an 8-byte boundary after the indices. */
            size_t off = (m * sizeof(int32_t) + 7) / 8;
            double *cvz = (double *)cbar + off, *ctz = cvz + m, *ccl = ctz + m, *catr = ccl + m;
            size_t q = 0;
            for (size_t t = 0; t < n; t++)
                if (ef[t] < es[t] && vz[t] > gr->vmin && tz[t] > gr->tmin && cl[t] > gr->cmin) {
                    cbar[q] = (int32_t)t;
                    cvz[q] = vz[t];
                    ctz[q] = tz[t];
                    ccl[q] = cl[t];
                    catr[q] = atr[t];
                    q++;
                }
            sebt_k_cands c = { (int64_t)count, cbar, cvz, ctz, ccl, catr };
            b->cands[g] = c;
        }
        free(ef);
        free(es);
        free(atr);
        free(vz);
        free(tz);
    }
    if (failed)
        goto nomem;
    return SEBT_OK;

nomem:
    cuda_batch_free(b);
    return sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory preparing %zu indicator keys over %zu bars",
                     ng, n);
}
