/* The cuda backend: a sweep on one GPU.
 *
 *   once per sweep   the series (open, high, low, close) and the exit-search
 *                    trees are copied to the device;
 *   per batch of     the host prepares the distinct indicator series with
 *   indicator keys   fast_cpu's functions (cuda_prepare.c) and copies only
 *                    what the combos read: the valid bars per atr_window and
 *                    the candidate signal bars per key;
 *   per chunk of     one device thread per combo runs sebt_k_run_combo
 *   combos           (fast_cpu/combo_kernel.h, the code fast_cpu runs, built
 *                    with -fmad=false); only the results come back, and the
 *                    trades in a second pass when asked for.
 *
 * Batches are sized from the free device memory; an allocation that fails
 * anyway halves the chunk (or the batch) and tries again. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_plan.h"

cuda_state cuda_backend_state;

#define THREADS_PER_BLOCK 128
/* Share of the free device memory one batch may take: the rest is for the
 * chunk of combos and for whatever else runs on the device. */
#define DEVICE_SHARE 0.5
/* Keys per batch at most: each takes 5 device allocations, and a pool holds
 * MAX_ALLOCS of them. */
#define MAX_KEYS_PER_BATCH 512

__global__ void cuda_probe_kernel(int *out)
{
    if (out)
        *out = 1;
}

sebt_status cuda_check_kernels(sebt_error *err)
{
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, cuda_probe_kernel);
    if (e != cudaSuccess) {
        cudaGetLastError();
        const cudaDeviceProp *p = &cuda_backend_state.prop;
        return cuda_fail(err, SEBT_ERR_NODEVICE,
                         "CUDA device %d (%s, sm_%d%d) cannot run this build's kernels (%s); "
                         "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d",
                         cuda_backend_state.device, p->name, p->major, p->minor, cudaGetErrorString(e),
                         p->major, p->minor);
    }
    return SEBT_OK;
}

/* ---- device memory, freed all at once -------------------------------------- */

#define MAX_ALLOCS 4096

typedef struct {
    void *ptr[MAX_ALLOCS];
    int n;
} dev_pool;

static void pool_free(dev_pool *p)
{
    for (int i = 0; i < p->n; i++)
        cudaFree(p->ptr[i]);
    p->n = 0;
}

/* Copies bytes of host data (or zeroes when src is NULL) into new device
 * memory. cudaErrorMemoryAllocation tells the caller to split its work. */
static cudaError_t pool_put(dev_pool *p, const void *src, size_t bytes, void **out)
{
    *out = NULL;
    if (p->n >= MAX_ALLOCS)
        return cudaErrorMemoryAllocation;
    void *d;
    cudaError_t e = cudaMalloc(&d, bytes ? bytes : 8);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return e;
    }
    p->ptr[p->n++] = d;
    if (src && bytes)
        e = cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice);
    *out = d;
    return e;
}

static sebt_status cuda_error(sebt_error *err, cudaError_t e, const char *what)
{
    if (e == cudaErrorMemoryAllocation)
        return cuda_fail(err, SEBT_ERR_NOMEM, "cuda: out of device memory %s", what);
    return cuda_fail(err, SEBT_ERR_INTERNAL, "cuda: %s: %s", what, cudaGetErrorString(e));
}

/* ---- kernels --------------------------------------------------------------- */

/* One thread per combo. trade_off/trades are NULL on the metrics pass; on
 * the trades pass combo i writes its trades at trades + trade_off[i]. */
__global__ void cuda_combo_kernel(sebt_k_market m, const sebt_k_valid *valids, const sebt_k_cands *cands,
                                  const int32_t *group_of, const int32_t *valid_of_group,
                                  const sebt_params *params, const int64_t *trade_off, sebt_trade *trades,
                                  sebt_result *out, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int32_t g = group_of[i];
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_trade *tr = NULL;
    int64_t cap = 0;
    if (trades) {
        tr = trades + trade_off[i];
        cap = trade_off[i + 1] - trade_off[i];
    }
    sebt_k_run_combo(&m, &valids[valid_of_group[g]], &cands[g], &params[i], tr, cap, NULL, 0, &r);
    r.trades = NULL;
    out[i] = r;
}

/* ---- the sweep ------------------------------------------------------------- */

typedef struct {
    const sebt_series *s;
    const sebt_params *combos;
    const sebt_batch_opts *opts;
    sebt_result *results;
    cuda_plan plan;
    sebt_k_market dm;       /* device pointers */
    dev_pool market_pool;
    size_t done;
} sweep;

static sebt_status upload_market(sweep *w, sebt_error *err)
{
    const sebt_series *s = w->s;
    const sebt_k_market *hm = &w->plan.fm.m;
    size_t bytes = s->n * sizeof(double);
    sebt_k_market dm = *hm;
    void *d;
    cudaError_t e;
    const double *cols[4] = { s->open, s->high, s->low, s->close };
    const double **dcols[4] = { &dm.open, &dm.high, &dm.low, &dm.close };
    for (int k = 0; k < 4; k++) {
        if ((e = pool_put(&w->market_pool, cols[k], bytes, &d)) != cudaSuccess)
            return cuda_error(err, e, "copying the series");
        *dcols[k] = (const double *)d;
    }
    sebt_k_tree *trees[2] = { &dm.low_min, &dm.neg_high_min };
    for (int k = 0; k < 2; k++) {
        for (int L = 0; L < trees[k]->nlev; L++) {
            if (k == 0 && L == 0) {
                trees[k]->lev[0] = dm.low;   /* level 0 of the low tree is low itself */
                continue;
            }
            if ((e = pool_put(&w->market_pool, trees[k]->lev[L], (size_t)trees[k]->len[L] * sizeof(double), &d))
                != cudaSuccess)
                return cuda_error(err, e, "copying the exit-search trees");
            trees[k]->lev[L] = (const double *)d;
        }
    }
    w->dm = dm;
    return SEBT_OK;
}

/* The batch's valid-bar sets and candidate lists on the device. */
typedef struct {
    dev_pool pool;
    sebt_k_valid *valids;   /* device array, one per atr slot */
    sebt_k_cands *cands;    /* device array, one per key */
    int32_t *valid_of_group;
} dev_batch;

static cudaError_t upload_batch(const cuda_batch *b, size_t n, dev_batch *db)
{
    size_t ng = b->g1 - b->g0;
    sebt_k_valid *hv = (sebt_k_valid *)malloc(b->n_atrs * sizeof *hv);
    sebt_k_cands *hc = (sebt_k_cands *)malloc(ng * sizeof *hc);
    cudaError_t e = hv && hc ? cudaSuccess : cudaErrorMemoryAllocation;
    void *d;
    for (size_t a = 0; a < b->n_atrs && e == cudaSuccess; a++) {
        hv[a].n_valid = b->n_valid[a];
        if ((e = pool_put(&db->pool, b->valid[a], n, &d)) != cudaSuccess)
            break;
        hv[a].valid = (const uint8_t *)d;
        if ((e = pool_put(&db->pool, b->rank[a], n * sizeof(int32_t), &d)) != cudaSuccess)
            break;
        hv[a].rank = (const int32_t *)d;
        if ((e = pool_put(&db->pool, b->vbar[a], (size_t)b->n_valid[a] * sizeof(int32_t), &d)) != cudaSuccess)
            break;
        hv[a].vbar = (const int32_t *)d;
    }
    for (size_t g = 0; g < ng && e == cudaSuccess; g++) {
        const sebt_k_cands *c = &b->cands[g];
        size_t m = (size_t)c->n;
        hc[g].n = c->n;
        if ((e = pool_put(&db->pool, c->bar, m * sizeof(int32_t), &d)) != cudaSuccess)
            break;
        hc[g].bar = (const int32_t *)d;
        const double *hcols[4] = { c->vol_z, c->tr_z, c->cloc, c->atr };
        const double **dcols[4] = { &hc[g].vol_z, &hc[g].tr_z, &hc[g].cloc, &hc[g].atr };
        for (int k = 0; k < 4 && e == cudaSuccess; k++)
            if ((e = pool_put(&db->pool, hcols[k], m * sizeof(double), &d)) == cudaSuccess)
                *dcols[k] = (const double *)d;
    }
    if (e == cudaSuccess && (e = pool_put(&db->pool, hv, b->n_atrs * sizeof *hv, &d)) == cudaSuccess)
        db->valids = (sebt_k_valid *)d;
    if (e == cudaSuccess && (e = pool_put(&db->pool, hc, ng * sizeof *hc, &d)) == cudaSuccess)
        db->cands = (sebt_k_cands *)d;
    if (e == cudaSuccess && (e = pool_put(&db->pool, b->atr_slot, ng * sizeof(int32_t), &d)) == cudaSuccess)
        db->valid_of_group = (int32_t *)d;
    free(hv);
    free(hc);
    if (e != cudaSuccess)
        pool_free(&db->pool);
    return e;
}

static size_t free_device_bytes(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return free_b;
}

static void report_progress(sweep *w, size_t add)
{
    w->done += add;
    if (w->opts && w->opts->progress)
        w->opts->progress(w->opts->progress_user, w->done, w->plan.n_combos);
}

/* Combos order[q0 .. q1) of batch b, already on the device as db. Splits
 * itself in halves when the device runs out of memory. */
static sebt_status run_chunk(sweep *w, const cuda_batch *b, const dev_batch *db, size_t q0, size_t q1,
                             sebt_error *err)
{
    size_t n = q1 - q0;
    const cuda_plan *p = &w->plan;
    bool want_trades = w->opts && w->opts->want_trades;
    sebt_params *hp = (sebt_params *)malloc(n * sizeof *hp);
    int32_t *hg = (int32_t *)malloc(n * sizeof *hg);
    sebt_result *hr = (sebt_result *)malloc(n * sizeof *hr);
    int64_t *off = want_trades ? (int64_t *)malloc((n + 1) * sizeof *off) : NULL;
    if (!hp || !hg || !hr || (want_trades && !off)) {
        free(hp), free(hg), free(hr), free(off);
        return cuda_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for a chunk of %zu combos", n);
    }
    size_t g = b->g0;
    for (size_t q = q0; q < q1; q++) {
        while (p->groups[g].first + p->groups[g].count <= q)
            g++;
        hp[q - q0] = w->combos[p->order[q]];
        hg[q - q0] = (int32_t)(g - b->g0);
    }

    dev_pool pool = { { 0 }, 0 };
    void *dp, *dg, *dr, *doff = NULL, *dt = NULL;
    sebt_status st = SEBT_OK;
    cudaError_t e;
    unsigned blocks = (unsigned)((n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    if ((e = pool_put(&pool, hp, n * sizeof *hp, &dp)) != cudaSuccess
        || (e = pool_put(&pool, hg, n * sizeof *hg, &dg)) != cudaSuccess
        || (e = pool_put(&pool, NULL, n * sizeof *hr, &dr)) != cudaSuccess)
        goto fail;
    SEBT_LAUNCH(cuda_combo_kernel, blocks, THREADS_PER_BLOCK)(w->dm, db->valids, db->cands, (const int32_t *)dg,
                                                      db->valid_of_group, (const sebt_params *)dp, NULL, NULL,
                                                      (sebt_result *)dr, (int64_t)n);
    if ((e = cudaGetLastError()) != cudaSuccess
        || (e = cudaMemcpy(hr, dr, n * sizeof *hr, cudaMemcpyDeviceToHost)) != cudaSuccess)
        goto fail;

    if (want_trades) {
        off[0] = 0;
        for (size_t i = 0; i < n; i++)
            off[i + 1] = off[i] + (int64_t)hr[i].n_trades;
        if (off[n] > 0) {
            size_t bytes = (size_t)off[n] * sizeof(sebt_trade);
            if ((e = pool_put(&pool, off, (n + 1) * sizeof *off, &doff)) != cudaSuccess
                || (e = pool_put(&pool, NULL, bytes, &dt)) != cudaSuccess)
                goto fail;
            /* The same combos again, now writing their trades: the metrics
             * come out the same bits (combo_kernel.h sums them the same way). */
            SEBT_LAUNCH(cuda_combo_kernel, blocks, THREADS_PER_BLOCK)(w->dm, db->valids, db->cands, (const int32_t *)dg,
                                                              db->valid_of_group, (const sebt_params *)dp,
                                                              (const int64_t *)doff, (sebt_trade *)dt,
                                                              (sebt_result *)dr, (int64_t)n);
            sebt_trade *ht = (sebt_trade *)malloc(bytes);
            if (!ht) {
                st = cuda_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for %lld trades", (long long)off[n]);
                goto done;
            }
            if ((e = cudaGetLastError()) != cudaSuccess
                || (e = cudaMemcpy(ht, dt, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
                free(ht);
                goto fail;
            }
            for (size_t i = 0; i < n && st == SEBT_OK; i++) {
                size_t k = hr[i].n_trades;
                if (!k)
                    continue;
                sebt_trade *t = (sebt_trade *)malloc(k * sizeof *t);
                if (!t) {
                    st = cuda_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for %zu trades", k);
                    break;
                }
                memcpy(t, ht + off[i], k * sizeof *t);
                hr[i].trades = t;
            }
            free(ht);
        }
    }
    for (size_t q = q0; q < q1; q++)
        w->results[p->order[q]] = hr[q - q0];
    if (st == SEBT_OK)
        report_progress(w, n);
    goto done;

fail:
    pool_free(&pool);
    if (e == cudaErrorMemoryAllocation && n > 1) {
        free(hp), free(hg), free(hr), free(off);
        size_t mid = q0 + n / 2;
        st = run_chunk(w, b, db, q0, mid, err);
        return st == SEBT_OK ? run_chunk(w, b, db, mid, q1, err) : st;
    }
    st = cuda_error(err, e, "running combos");
done:
    pool_free(&pool);
    free(hp), free(hg), free(hr), free(off);
    return st;
}

/* Keys [g0, g1): prepared on the host, copied, their combos run in chunks. */
static sebt_status run_keys(sweep *w, size_t g0, size_t g1, sebt_error *err)
{
    cuda_batch b;
    sebt_status st = cuda_batch_build(&w->plan, w->s, g0, g1, w->opts ? w->opts->threads : 0, &b, err);
    if (st != SEBT_OK)
        return st;
    dev_batch db;
    memset(&db, 0, sizeof db);
    cudaError_t e = upload_batch(&b, w->s->n, &db);
    if (e != cudaSuccess) {
        cuda_batch_free(&b);
        if (e == cudaErrorMemoryAllocation && g1 - g0 > 1) {
            size_t mid = g0 + (g1 - g0) / 2;
            st = run_keys(w, g0, mid, err);
            return st == SEBT_OK ? run_keys(w, mid, g1, err) : st;
        }
        return cuda_error(err, e, "copying indicator data");
    }
    size_t q0 = w->plan.groups[g0].first;
    size_t q1 = w->plan.groups[g1 - 1].first + w->plan.groups[g1 - 1].count;
    size_t per_combo = sizeof(sebt_params) + sizeof(int32_t) + sizeof(sebt_result);
    size_t chunk = (size_t)((double)free_device_bytes() * DEVICE_SHARE) / per_combo;
    if (chunk < 1)
        chunk = 1;
    for (size_t q = q0; q < q1 && st == SEBT_OK; q += chunk)
        st = run_chunk(w, &b, &db, q, q + chunk < q1 ? q + chunk : q1, err);
    pool_free(&db.pool);
    cuda_batch_free(&b);
    return st;
}

static sebt_status cuda_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                  size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                  sebt_error *err)
{
    const cuda_state *cs = (const cuda_state *)self->state;
    if (!s || (n_combos && (!combos || !results)))
        return cuda_fail(err, SEBT_ERR_USAGE, "cuda run_batch: series, combos and results are required");
    for (size_t i = 0; i < n_combos; i++) {
        sebt_error e = { SEBT_OK, "" };
        if (sebt_params_validate(&combos[i], &e) != SEBT_OK)
            return cuda_fail(err, SEBT_ERR_PARAM, "combo %zu: %s", i, e.msg);
    }
    sebt_status st = sebt_series_check(s, err);
    if (st != SEBT_OK)
        return st;
    if (s->n >= (size_t)INT32_MAX)
        return cuda_fail(err, SEBT_ERR_INPUT, "cuda: %zu bars is more than it handles (%d)", s->n, INT32_MAX - 1);
    if (n_combos == 0)
        return SEBT_OK;
    cudaError_t e = cudaSetDevice(cs->device);
    if (e != cudaSuccess)
        return cuda_error(err, e, "selecting the device");

    sweep w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.combos = combos;
    w.opts = opts;
    w.results = results;
    st = cuda_plan_build(s, combos, n_combos, &w.plan, err);
    if (st == SEBT_OK)
        st = upload_market(&w, err);
    size_t host_budget = cuda_host_budget();
    for (size_t g0 = 0; st == SEBT_OK && g0 < w.plan.n_groups;) {
        size_t dev_budget = (size_t)((double)free_device_bytes() * DEVICE_SHARE);
        size_t g1 = g0 + 1;
        while (g1 < w.plan.n_groups && g1 - g0 < MAX_KEYS_PER_BATCH && cuda_batch_host_bytes(s->n, g1 + 1 - g0) <= host_budget
               && cuda_batch_device_bytes(s->n, g1 + 1 - g0) <= dev_budget)
            g1++;
        st = run_keys(&w, g0, g1, err);
        g0 = g1;
    }
    pool_free(&w.market_pool);
    cuda_plan_free(&w.plan);
    if (st != SEBT_OK)
        sebt_results_free(results, n_combos);
    return st;
}

/* ---- features of one combo: the shared indicator code on the device --------- */

__global__ void cuda_bar_columns(const double *high, const double *low, const double *close, int64_t n,
                                 double *tr, double *cloc)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        tr[t] = sebt_k_tr_at(high, low, close, t);
        cloc[t] = sebt_k_cloc_at(high, low, close, t);
    }
}

__global__ void cuda_atr_column(const double *tr, int64_t n, int32_t w, double *atr)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        atr[t] = sebt_k_atr_at(tr, t, w);
}

/* The EMA recurrences run down the bars: one thread for each column. */
__global__ void cuda_recurrences(const double *close, int64_t n, sebt_params p, double *ema_f, double *ema_s)
{
    switch (threadIdx.x) {
    case 0: sebt_k_ema(close, n, p.ema_fast, ema_f); break;
    case 1: sebt_k_ema(close, n, p.ema_slow, ema_s); break;
    }
}

/* Z with the reference's bits: one thread per bar, its window summed in
 * the reference's order. */
__global__ void cuda_z_columns(const double *volume, const double *atr, int64_t n, int32_t w, double *vol_z,
                               double *tr_z)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        vol_z[t] = sebt_k_zscore_at(volume, t, w);
        tr_z[t] = sebt_k_zscore_at(atr, t, w);
    }
}

__global__ void cuda_signal_column(const double *ema_f, const double *ema_s, const double *vol_z,
                                   const double *tr_z, const double *cloc, const double *atr, int64_t n,
                                   sebt_params p, uint8_t *signal, uint8_t *valid)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        signal[t] = ema_f[t] < ema_s[t] && vol_z[t] > p.vol_z && tr_z[t] > p.tr_z && cloc[t] > p.cloc_min;
        valid[t] = !isnan(atr[t]);
    }
}

static sebt_status cuda_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                 sebt_features *out, sebt_error *err)
{
    const cuda_state *cs = (const cuda_state *)self->state;
    if (!s || !p || !out)
        return cuda_fail(err, SEBT_ERR_USAGE, "cuda features: series, params and out are required");
    if (out->n != s->n || (s->n && (!out->ema_f || !out->ema_s || !out->tr || !out->atr || !out->vol_z ||
                                    !out->tr_z || !out->cloc || !out->signal || !out->valid)))
        return cuda_fail(err, SEBT_ERR_USAGE,
                         "cuda features: out holds %zu bars, the series %zu "
                         "(allocate it with sebt_features_alloc(s->n))", out->n, s->n);
    sebt_status st = sebt_params_validate(p, err);
    if (st != SEBT_OK)
        return st;
    if ((st = sebt_series_check(s, err)) != SEBT_OK || s->n == 0)
        return st;
    cudaError_t e = cudaSetDevice(cs->device);
    if (e != cudaSuccess)
        return cuda_error(err, e, "selecting the device");
    size_t n = s->n, bytes = n * sizeof(double);
    dev_pool pool = { { 0 }, 0 };
    void *d[13];
    const double *in[4] = { s->high, s->low, s->close, s->volume };
    for (int k = 0; k < 13 && e == cudaSuccess; k++)
        e = pool_put(&pool, k < 4 ? in[k] : NULL, k < 11 ? bytes : n, &d[k]);
    if (e != cudaSuccess) {
        pool_free(&pool);
        return cuda_error(err, e, "for the feature columns");
    }
    double *hi = (double *)d[0], *lo = (double *)d[1], *cl = (double *)d[2], *vol = (double *)d[3];
    double *tr = (double *)d[4], *cloc = (double *)d[5], *atr = (double *)d[6], *ef = (double *)d[7];
    double *es = (double *)d[8], *vz = (double *)d[9], *tz = (double *)d[10];
    uint8_t *sig = (uint8_t *)d[11], *val = (uint8_t *)d[12];
    unsigned blocks = (unsigned)((n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    SEBT_LAUNCH(cuda_bar_columns, blocks, THREADS_PER_BLOCK)(hi, lo, cl, (int64_t)n, tr, cloc);
    SEBT_LAUNCH(cuda_atr_column, blocks, THREADS_PER_BLOCK)(tr, (int64_t)n, p->atr_window, atr);
    SEBT_LAUNCH(cuda_recurrences, 1, 2)(cl, (int64_t)n, *p, ef, es);
    SEBT_LAUNCH(cuda_z_columns, blocks, THREADS_PER_BLOCK)(vol, atr, (int64_t)n, p->z_window, vz, tz);
    SEBT_LAUNCH(cuda_signal_column, blocks, THREADS_PER_BLOCK)(ef, es, vz, tz, cloc, atr, (int64_t)n, *p, sig, val);
    double *host_cols[7] = { out->tr, out->cloc, out->atr, out->ema_f, out->ema_s, out->vol_z, out->tr_z };
    e = cudaGetLastError();
    for (int k = 0; k < 7 && e == cudaSuccess; k++)
        e = cudaMemcpy(host_cols[k], d[4 + k], bytes, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->signal, sig, n, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->valid, val, n, cudaMemcpyDeviceToHost);
    pool_free(&pool);
    return e == cudaSuccess ? SEBT_OK : cuda_error(err, e, "computing features");
}

sebt_backend cuda_backend_table = {
    "cuda",
    "CUDA sweeps on one GPU: fast_cpu's per-combo code, one device thread per combo",
    /* Exact (SPEC §8): its candidates are decided on the reference's z bits
     * (cuda_prepare.c, as fast_cpu) and every trade comes from the shared
     * sebt_k_trade_at; checked by host execution against the reference
     * (gpu_test_host_exact, sebt parity with libsebt_cuda_host.so). */
    { SEBT_CONTRACT_EXACT, 0.0 },
    cuda_features,
    cuda_run_batch,
    NULL,
};
