/* The cuda backend: a sweep on one GPU, on fast_cpu's engine.
 *
 *   once per sweep   fast_cpu plans the sweep on the host (fast_sweep_begin:
 *                    TR, cloc, trees, ATR and valid bars, combos sorted by
 *                    batch and exit key); the series, the trees and the
 *                    valid bars are copied to the device;
 *   per batch of     fast_zbatch_build (the same candidates, decided on the
 *   z windows        reference's z bits, the candidate union U per
 *                    atr_window, the bitsets); U and one arena of bitsets
 *                    are copied;
 *   per wave of      one launch fills the exit memo of every key of the
 *   exit keys        wave, a thread per candidate of each (sebt_k_memo_fill),
 *                    then one launch runs every combo of the wave, a thread
 *                    per combo hopping through its key's memo
 *                    (sebt_k_run_combo_hop): fast_cpu/combo_kernel.h, the
 *                    code fast_cpu runs, built with -fmad=false. Only the
 *                    results come back, and the trades in a second pass
 *                    when asked for. A wave is as many of a batch's keys as
 *                    half the free device memory holds memos for: a launch
 *                    per key left the device nearly idle (a real grid's key
 *                    has about a hundred combos; the device holds 270,000
 *                    threads), one key's chain of memo loads after another.
 *
 * Out of device memory, the work splits instead of failing: a chunk of
 * combos that cannot get its buffers halves and tries again, as does a wave
 * whose memos do not fit; a batch whose
 * candidates, bitsets or exit memo (or a one-combo chunk) do not fit frees
 * everything it took and runs what it had not finished as two half ranges
 * of combos, each with its own (smaller) unions; the series is uploaded a
 * second time after a failed first try. Only when one combo cannot run
 * twice in a row, or the series cannot be uploaded twice, does the sweep
 * end with SEBT_ERR_NOMEM. Results do not depend on the split: a combo's
 * trades are the same whatever unions it is batched with (fast_cpu's own
 * batches rely on this). */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "fast_cpu_internal.h"

cuda_state cuda_backend_state;

#define THREADS_PER_BLOCK 128

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
        return sebt_fail(err, SEBT_ERR_NODEVICE,
                         "CUDA device %d (%s, sm_%d%d) cannot run this build's kernels (%s); "
                         "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d",
                         cuda_backend_state.device, p->name, p->major, p->minor, cudaGetErrorString(e),
                         p->major, p->minor);
    }
    return SEBT_OK;
}

/* ---- device memory, freed all at once -------------------------------------- */

/* The allocations of one purpose (the market, a batch, a chunk), freed
 * together. The table grows on the heap: no count of atr windows or keys
 * can fill it into a spurious out-of-memory, and the recursive split of a
 * chunk puts nothing big on the stack. */
typedef struct {
    void **ptr;
    int n, cap;
} dev_pool;

#define DEV_POOL_EMPTY { NULL, 0, 0 }

static void pool_free(dev_pool *p)
{
    for (int i = 0; i < p->n; i++)
        cudaFree(p->ptr[i]);
    free(p->ptr);
    p->ptr = NULL;
    p->n = p->cap = 0;
}

/* Copies bytes of host data (or zeroes when src is NULL) into new device
 * memory. cudaErrorMemoryAllocation tells the caller to split its work. */
static cudaError_t pool_put(dev_pool *p, const void *src, size_t bytes, void **out)
{
    *out = NULL;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        void **grown = (void **)realloc(p->ptr, (size_t)cap * sizeof *grown);
        if (!grown)
            return cudaErrorMemoryAllocation;
        p->ptr = grown;
        p->cap = cap;
    }
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

/* Share of the free device memory one chunk of combos may take. */
#define DEVICE_SHARE 0.5

/* Free device memory for sizing chunks. When the device cannot say, its
 * total memory stands in (the out-of-memory split trims what does not
 * fit), never a one-combo chunk. */
static size_t free_device_bytes(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        return free_b;
    cudaGetLastError();
    total_b = cuda_backend_state.prop.totalGlobalMem;
    return total_b ? total_b : (size_t)1 << 30;
}

static sebt_status cuda_error(sebt_error *err, cudaError_t e, const char *what)
{
    if (e == cudaErrorMemoryAllocation)
        return sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of device memory %s", what);
    return sebt_fail(err, SEBT_ERR_INTERNAL, "cuda: %s: %s", what, cudaGetErrorString(e));
}

/* ---- kernels --------------------------------------------------------------- */

/* One exit key of a wave, as its threads read it from device memory: the
 * valid bars of its atr_window, its candidate union, its exit parameters
 * (those of any combo of the key) and its memo. */
typedef struct {
    sebt_k_valid v;
    sebt_k_union u;
    sebt_params p;
    sebt_k_memo memo;
} cuda_task;

/* The key of a wave that item x (a block, a combo) belongs to: the last k
 * of start[0 .. n) with start[k] <= x (start[0] = 0, x < start[n]; a key
 * with no items has start[k] = start[k + 1] and is passed over). */
static __device__ inline int32_t task_at(const int64_t *start, int32_t n, int64_t x)
{
    int32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        int32_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The memos of a wave's exit keys, each over its atr_window's candidate
 * union U: one thread per candidate of each key (key k's blocks are
 * block_start[k] .. block_start[k + 1]), each computing the trade a signal
 * there opens (sebt_k_trade_at, the code fast_cpu runs), and how it closes
 * when the combos keep analysis tallies (memo.ex). Filled completely before
 * any combo reads them, so the combos never write them. */
__global__ void cuda_memo_kernel(sebt_k_market m, const cuda_task *tasks, const int64_t *block_start, int32_t n_tasks)
{
    int32_t k = task_at(block_start, n_tasks, (int64_t)blockIdx.x);
    int64_t j = ((int64_t)blockIdx.x - block_start[k]) * blockDim.x + threadIdx.x;
    sebt_k_union u = tasks[k].u;
    if (j < u.n) {
        sebt_k_valid v = tasks[k].v;
        sebt_params p = tasks[k].p;
        sebt_k_memo memo = tasks[k].memo;
        sebt_k_memo_fill(&m, &v, &u, &p, j, NULL, &memo.link[j], &memo.val[j], memo.ex ? &memo.ex[j] : NULL);
    }
}

/* One thread per combo of a wave (combo first + i of the wave belongs to
 * key task_at(combo_start, ...)): its bitsets, a row per signal term
 * (offsets into the batch's bitset arena) ANDed on the fly, hops through
 * its key's memo. No R buffer: sharpe's second pass hops again (the same
 * bits). trade_off and trades are NULL on the metrics pass; on the trades
 * pass combo i writes its trades at trades + trade_off[i]. tallies (NULL
 * unless the memos have their ex, metrics pass only): combo i's analysis
 * tally there. */
__global__ void cuda_hop_kernel(sebt_k_market m, const cuda_task *tasks, const int64_t *combo_start, int32_t n_tasks,
                                int64_t first, const uint64_t *bits, const int64_t *bit_off,
                                const sebt_params *params, const int64_t *trade_off, sebt_trade *trades,
                                sebt_result *out, sebt_trade_tally *tallies, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int32_t k = task_at(combo_start, n_tasks, first + i);
    sebt_k_valid v = tasks[k].v;
    sebt_k_union u = tasks[k].u;
    sebt_k_memo memo = tasks[k].memo;
    sebt_k_sigbits sb;
    for (int t = 0; t < SEBT_N_TERMS; t++)
        sb.w[t] = bits + bit_off[SEBT_N_TERMS * i + t];
    sb.filters_on = true;   /* a filter off has the cloc row again: ANDed, it changes nothing */
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_trade *tr = NULL;
    int64_t cap = 0;
    if (trades) {
        tr = trades + trade_off[i];
        cap = trade_off[i + 1] - trade_off[i];
    }
    /* Straight to its slot: a local tally passed by address would sit in the
     * thread's local memory (the lint's stack frame). */
    sebt_k_run_combo_hop(&m, &v, &u, &sb, &memo, 0, &params[i], tr, cap, NULL, 0, &r, tallies ? &tallies[i] : NULL, NULL);
    r.trades = NULL;
    /* Every byte, padding too, as 8-byte words: an assignment stores the
     * fields alone (the copy back to the host then reads device bytes
     * nothing wrote: compute-sanitizer's initcheck), and a memcpy to global
     * memory a byte at a time. */
    static_assert(sizeof r % sizeof(uint64_t) == 0 && alignof(sebt_result) >= alignof(uint64_t),
                  "sebt_result is copied out as whole words");
    uint64_t words[sizeof r / sizeof(uint64_t)];
    memcpy(words, &r, sizeof r);
    uint64_t *dst = (uint64_t *)&out[i];
    for (size_t w = 0; w < sizeof r / sizeof(uint64_t); w++)
        dst[w] = words[w];
}

/* ---- the sweep ------------------------------------------------------------- */

typedef struct {
    const sebt_params *combos;
    const sebt_batch_opts *opts;
    sebt_result *results;
    sebt_trade_tally *tallies;   /* NULL, or each combo's analysis tally (sebt_cuda_run_tallied) */
    fast_sweep fs;          /* fast_cpu's plan of the sweep (host) */
    sebt_k_market dm;       /* device pointers */
    sebt_k_valid *dv;       /* per atr slot, device pointers */
    dev_pool market_pool;
    size_t done;
    size_t chunks;          /* chunks that ran, after any split */
    size_t batches;         /* batches built, after any split */
} sweep;

/* What one chunk may take of the device: a share of the free memory,
 * capped by the caller's memory_budget when it set one. */
static size_t device_budget(const sweep *w)
{
    size_t b = (size_t)((double)free_device_bytes() * DEVICE_SHARE);
    size_t cap = w->opts ? w->opts->memory_budget : 0;
    return cap && cap < b ? cap : b;
}

static bool same_result(const sebt_result *a, const sebt_result *b)
{
    return memcmp(&a->metrics, &b->metrics, sizeof a->metrics) == 0 && a->n_trades == b->n_trades
           && a->valid_bars == b->valid_bars && a->open_at_end.open == b->open_at_end.open
           && a->open_at_end.entry_index == b->open_at_end.entry_index;
}

static sebt_status upload_market(sweep *w, sebt_error *err)
{
    const sebt_series *s = w->fs.s;
    const sebt_k_market *hm = &w->fs.fm.m;
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
    /* The valid bars of every atr_window of the sweep. */
    size_t na = w->fs.n_atrs;
    w->dv = (sebt_k_valid *)calloc(na ? na : 1, sizeof *w->dv);
    if (!w->dv)
        return sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory");
    for (size_t a = 0; a < na; a++) {
        sebt_k_valid *v = &w->dv[a];
        v->n_valid = w->fs.n_valid[a];
        if ((e = pool_put(&w->market_pool, w->fs.valid[a], s->n, &d)) != cudaSuccess)
            return cuda_error(err, e, "copying the valid bars");
        v->valid = (const uint8_t *)d;
        if ((e = pool_put(&w->market_pool, w->fs.rank[a], s->n * sizeof(int32_t), &d)) != cudaSuccess)
            return cuda_error(err, e, "copying the valid bars");
        v->rank = (const int32_t *)d;
        if ((e = pool_put(&w->market_pool, w->fs.vbar[a], (size_t)v->n_valid * sizeof(int32_t), &d))
            != cudaSuccess)
            return cuda_error(err, e, "copying the valid bars");
        v->vbar = (const int32_t *)d;
    }
    return SEBT_OK;
}

/* One batch's unions and bitsets on the device: U and ATR at U per set,
 * every bitset in one arena, each combo's offsets into it, one per signal term. */
typedef struct {
    dev_pool pool;
    sebt_k_union *du;       /* per set, device pointers */
    uint64_t *bits;         /* device arena */
    int64_t *off;           /* host: SEBT_N_TERMS per combo of the batch, refs order */
} dev_batch;

/* A bitset block of n words into the arena; a block of none may have no
 * buffer at all (a filter's rows when no combo turns it on), and
 * memcpy from NULL is undefined even for 0 bytes. */
static void copy_words(uint64_t *dst, const uint64_t *src, size_t n)
{
    if (n)
        memcpy(dst, src, n * sizeof(uint64_t));
}

static cudaError_t upload_batch(const sweep *w, const fast_zbatch *zb, dev_batch *db)
{
    memset(db, 0, sizeof *db);
    size_t ns = zb->n_sets, np = zb->n_pairs, nq = zb->q1 - zb->q0;
    int64_t *set_e = (int64_t *)malloc(((2 + FAST_N_FILTERS) * ns + 2 * np + 1) * sizeof(int64_t));
    db->du = (sebt_k_union *)calloc(ns ? ns : 1, sizeof *db->du);
    db->off = (int64_t *)malloc((SEBT_N_TERMS * nq + 1) * sizeof(int64_t));
    if (!set_e || !db->du || !db->off) {
        free(set_e);
        return cudaErrorMemoryAllocation;
    }
    /* set_f[si * FAST_N_FILTERS + f]: set si's rows of filter f. */
    int64_t *set_c = set_e + ns, *set_f = set_c + ns, *pair_v = set_f + FAST_N_FILTERS * ns, *pair_t = pair_v + np;
    /* Arena layout: per set its EMA-pair, cloc and filter rows; per pair its vol_z
     * and tr_z rows (rows as long as the set's words). One zero word at the
     * end stands for the rows of an empty U. */
    int64_t total = 0;
    for (size_t si = 0; si < ns; si++) {
        const fast_aset *s = &zb->sets[si];
        set_e[si] = total;
        total += (int64_t)(s->n_pairs * s->words);
        set_c[si] = total;
        total += (int64_t)(s->n_cthr * s->words);
        for (int f = 0; f < FAST_N_FILTERS; f++) {
            set_f[si * FAST_N_FILTERS + f] = total;
            total += (int64_t)(s->n_frows[f] * s->words);
        }
    }
    for (size_t pi = 0; pi < np; pi++) {
        const fast_zpair *p = &zb->pairs[pi];
        size_t words = zb->sets[zb->set_of_atr[p->a]].words;
        pair_v[pi] = total;
        total += (int64_t)(p->n_vthr * words);
        pair_t[pi] = total;
        total += (int64_t)(p->n_tthr * words);
    }
    uint64_t *arena = (uint64_t *)calloc((size_t)total + 1, sizeof(uint64_t));
    cudaError_t e = arena ? cudaSuccess : cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        for (size_t si = 0; si < ns; si++) {
            const fast_aset *s = &zb->sets[si];
            copy_words(arena + set_e[si], s->ebits, s->n_pairs * s->words);
            copy_words(arena + set_c[si], s->cbits, s->n_cthr * s->words);
            for (int f = 0; f < FAST_N_FILTERS; f++)
                copy_words(arena + set_f[si * FAST_N_FILTERS + f], s->fbits[f], s->n_frows[f] * s->words);
        }
        for (size_t pi = 0; pi < np; pi++) {
            const fast_zpair *p = &zb->pairs[pi];
            size_t words = zb->sets[zb->set_of_atr[p->a]].words;
            copy_words(arena + pair_v[pi], p->vbits, p->n_vthr * words);
            copy_words(arena + pair_t[pi], p->tbits, p->n_tthr * words);
        }
        for (size_t q = zb->q0; q < zb->q1; q++) {
            const fast_combo_ref *r = &w->fs.refs[q];
            const fast_aset *s = &zb->sets[zb->set_of_atr[r->a]];
            int64_t wd = (int64_t)s->words, *o = db->off + SEBT_N_TERMS * (q - zb->q0);
            if (s->words == 0) {
                for (int k = 0; k < SEBT_N_TERMS; k++)
                    o[k] = total;   /* never read: U is empty */
                continue;
            }
            static_assert(SEBT_N_TERMS == 4 + FAST_N_FILTERS,
                          "a new signal term's rows are copied to the arena and placed here");
            o[SEBT_TI_ema] = set_e[zb->set_of_atr[r->a]] + r->ema * wd;
            o[SEBT_TI_vol_z] = pair_v[r->pair] + r->vslot * wd;
            o[SEBT_TI_tr_z] = pair_t[r->pair] + r->tslot * wd;
            o[SEBT_TI_cloc] = set_c[zb->set_of_atr[r->a]] + r->cslot * wd;
            /* a filter off: the cloc row again (fast_cpu's combo_sigbits) */
            size_t si = (size_t)zb->set_of_atr[r->a];
            for (int f = 0; f < FAST_N_FILTERS; f++)
                o[fast_filter_term(f)] = r->fslot[f] < 0 ? o[SEBT_TI_cloc] : set_f[si * FAST_N_FILTERS + f] + r->fslot[f] * wd;
        }
        void *d;
        if ((e = pool_put(&db->pool, arena, ((size_t)total + 1) * sizeof(uint64_t), &d)) == cudaSuccess)
            db->bits = (uint64_t *)d;
        for (size_t si = 0; si < ns && e == cudaSuccess; si++) {
            const fast_aset *s = &zb->sets[si];
            db->du[si].n = (int64_t)s->n;
            if ((e = pool_put(&db->pool, s->bar, s->n * sizeof(int32_t), &d)) != cudaSuccess)
                break;
            db->du[si].bar = (const int32_t *)d;
            if ((e = pool_put(&db->pool, s->atr, s->n * sizeof(double), &d)) != cudaSuccess)
                break;
            db->du[si].atr = (const double *)d;
        }
    }
    free(arena);
    free(set_e);
    return e;
}

static void free_batch(dev_batch *db)
{
    pool_free(&db->pool);
    free(db->du);
    free(db->off);
    memset(db, 0, sizeof *db);
}

static void report_progress(sweep *w, size_t add)
{
    w->done += add;
    if (w->opts && w->opts->progress)
        w->opts->progress(w->opts->progress_user, w->done, w->fs.total);
}

/* A wave of exit keys on the device, their memos filled: the keys' table
 * and where each key's combos start, counted from the wave's first combo
 * q0 (combo_start[n_tasks] is the wave's count). */
typedef struct {
    const cuda_task *tasks;
    const int64_t *combo_start;
    int32_t n_tasks;
    size_t q0;
} dev_wave;

/* Combos refs[q0 .. q1) of a wave. Splits itself in halves when the device
 * runs out of memory. */
static sebt_status run_chunk(sweep *w, const fast_zbatch *zb, const dev_batch *db, const dev_wave *dw, size_t q0,
                             size_t q1, size_t *next, sebt_error *err)
{
    size_t n = q1 - q0;
    const fast_combo_ref *R = w->fs.refs;
    bool want_trades = w->opts && w->opts->want_trades;
    sebt_params *hp = (sebt_params *)malloc(n * sizeof *hp);
    sebt_result *hr = (sebt_result *)calloc(n, sizeof *hr);
    int64_t *off = want_trades ? (int64_t *)malloc((n + 1) * sizeof *off) : NULL;
    sebt_trade_tally *ht = w->tallies ? (sebt_trade_tally *)malloc(n * sizeof *ht) : NULL;
    if (!hp || !hr || (want_trades && !off) || (w->tallies && !ht)) {
        free(hp), free(hr), free(off), free(ht);
        return sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for a chunk of %zu combos", n);
    }
    for (size_t q = q0; q < q1; q++)
        hp[q - q0] = w->combos[R[q].index];

    dev_pool pool = DEV_POOL_EMPTY;
    void *dp, *doffs, *dr, *doff = NULL, *dt = NULL, *dtally = NULL;
    sebt_status st = SEBT_OK;
    cudaError_t e;
    unsigned blocks = (unsigned)((n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    const int64_t *bit_off = db->off + SEBT_N_TERMS * (q0 - zb->q0);
    if ((e = pool_put(&pool, hp, n * sizeof *hp, &dp)) != cudaSuccess
        || (e = pool_put(&pool, bit_off, SEBT_N_TERMS * n * sizeof(int64_t), &doffs)) != cudaSuccess
        || (e = pool_put(&pool, NULL, n * sizeof *hr, &dr)) != cudaSuccess
        || (ht && (e = pool_put(&pool, NULL, n * sizeof *ht, &dtally)) != cudaSuccess))
        goto fail;
    SEBT_LAUNCH(cuda_hop_kernel, blocks, THREADS_PER_BLOCK)(w->dm, dw->tasks, dw->combo_start, dw->n_tasks,
                                                            (int64_t)(q0 - dw->q0), db->bits,
                                                            (const int64_t *)doffs, (const sebt_params *)dp,
                                                            NULL, NULL, (sebt_result *)dr,
                                                            (sebt_trade_tally *)dtally, (int64_t)n);
    if ((e = cudaGetLastError()) != cudaSuccess
        || (e = cudaMemcpy(hr, dr, n * sizeof *hr, cudaMemcpyDeviceToHost)) != cudaSuccess
        || (ht && (e = cudaMemcpy(ht, dtally, n * sizeof *ht, cudaMemcpyDeviceToHost)) != cudaSuccess))
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
            SEBT_LAUNCH(cuda_hop_kernel, blocks, THREADS_PER_BLOCK)(w->dm, dw->tasks, dw->combo_start, dw->n_tasks,
                                                                    (int64_t)(q0 - dw->q0), db->bits,
                                                                    (const int64_t *)doffs, (const sebt_params *)dp,
                                                                    (const int64_t *)doff, (sebt_trade *)dt,
                                                                    (sebt_result *)dr, NULL, (int64_t)n);
            /* Host room for the trades and for the second pass's results,
             * which must be the first pass's bits; short of it, split. */
            sebt_trade *htr = (sebt_trade *)malloc(bytes);
            sebt_result *hr2 = (sebt_result *)malloc(n * sizeof *hr2);
            if (!htr || !hr2) {
                free(htr), free(hr2);
                e = cudaErrorMemoryAllocation;
                goto fail;
            }
            if ((e = cudaGetLastError()) != cudaSuccess
                || (e = cudaMemcpy(htr, dt, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess
                || (e = cudaMemcpy(hr2, dr, n * sizeof *hr2, cudaMemcpyDeviceToHost)) != cudaSuccess) {
                free(htr), free(hr2);
                goto fail;
            }
            for (size_t i = 0; i < n && st == SEBT_OK; i++)
                if (!same_result(&hr[i], &hr2[i]))
                    st = sebt_fail(err, SEBT_ERR_INTERNAL,
                                   "cuda: combo %zu's trades pass gave other results than its metrics pass "
                                   "(%zu trades, then %zu)", R[q0 + i].index, hr[i].n_trades, hr2[i].n_trades);
            free(hr2);
            for (size_t i = 0; i < n && st == SEBT_OK; i++) {
                size_t k = hr[i].n_trades;
                if (!k)
                    continue;
                sebt_trade *t = (sebt_trade *)malloc(k * sizeof *t);
                if (!t) {
                    st = sebt_fail(err, SEBT_ERR_NOMEM, "cuda: out of host memory for %zu trades", k);
                    break;
                }
                memcpy(t, htr + off[i], k * sizeof *t);
                hr[i].trades = t;
            }
            free(htr);
        }
    }
    if (st != SEBT_OK) {
        sebt_results_free(hr, n);
        goto done;
    }
    for (size_t q = q0; q < q1; q++)
        w->results[R[q].index] = hr[q - q0];
    for (size_t q = q0; q < q1 && ht; q++)
        w->tallies[R[q].index] = ht[q - q0];
    w->chunks++;
    *next = q1;
    report_progress(w, n);
    goto done;

fail:
    pool_free(&pool);
    if (e == cudaErrorMemoryAllocation && n > 1) {
        free(hp), free(hr), free(off), free(ht);
        size_t mid = q0 + n / 2;
        st = run_chunk(w, zb, db, dw, q0, mid, next, err);
        return st == SEBT_OK ? run_chunk(w, zb, db, dw, mid, q1, next, err) : st;
    }
    st = cuda_error(err, e, "running combos");
done:
    pool_free(&pool);
    free(hp), free(hr), free(off), free(ht);
    return st;
}

/* Key k of the batch's candidate union: the union of its atr_window's set. */
static const sebt_k_union *key_union(const sweep *w, const fast_zbatch *zb, const dev_batch *db, size_t k)
{
    return &db->du[zb->set_of_atr[w->fs.refs[zb->task_start[k]].a]];
}

/* Device bytes a candidate of a key's memo takes. */
static size_t memo_bytes_per_candidate(const sweep *w)
{
    return sizeof(sebt_k_memo_link) + sizeof(sebt_k_memo_val) + (w->tallies ? sizeof(sebt_k_memo_exit) : 0);
}

/* The keys k0 .. (returned) of the batch that make one wave: as many as
 * half of what the device has left holds memos for, one at the least. */
static size_t wave_end(const sweep *w, const fast_zbatch *zb, const dev_batch *db, size_t k0)
{
    size_t budget = device_budget(w) / 2, per = memo_bytes_per_candidate(w), used = 0, k = k0;
    while (k < zb->n_tasks && k - k0 < (size_t)INT32_MAX - 1) {
        size_t un = (size_t)key_union(w, zb, db, k)->n;
        size_t add = un * per + sizeof(cuda_task) + 2 * sizeof(int64_t);
        if (k > k0 && used + add > budget)
            break;
        used += add;
        k++;
    }
    return k;
}

/* The host half of a wave: each key's row of the table (memos at offsets
 * into the three arrays at dl, dv, dx; dx NULL without tallies) and where
 * its blocks of the memo launch and its combos start. */
static void wave_table(const sweep *w, const fast_zbatch *zb, const dev_batch *db, size_t k0, size_t nt, void *dl,
                       void *dv, void *dx, cuda_task *tasks, int64_t *block_start, int64_t *combo_start)
{
    const fast_combo_ref *R = w->fs.refs;
    size_t off = 0;
    block_start[0] = combo_start[0] = 0;
    for (size_t k = 0; k < nt; k++) {
        size_t qa = zb->task_start[k0 + k];
        int32_t a = R[qa].a;
        const sebt_k_union *u = key_union(w, zb, db, k0 + k);
        size_t un = (size_t)u->n, at = un ? off : 0;   /* a key without candidates reads nothing */
        tasks[k].v = w->dv[a];
        tasks[k].u = *u;
        tasks[k].p = w->combos[R[qa].index];
        sebt_k_memo memo = { (sebt_k_memo_link *)dl + at, (sebt_k_memo_val *)dv + at, { NULL, NULL, 0 },
                             dx ? (sebt_k_memo_exit *)dx + at : NULL };
        tasks[k].memo = memo;
        off += un;
        block_start[k + 1] = block_start[k] + (int64_t)((un + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
        combo_start[k + 1] = combo_start[k] + (int64_t)(zb->task_start[k0 + k + 1] - qa);
    }
}

/* Keys k0 .. k1 of the batch, one wave: their memos in one launch, then
 * their combos in chunks. *next follows the combos done, in order, so a
 * failure leaves it at the first combo still to run. Memos that do not
 * fit split the wave in halves; one key's that do not fit is the batch's
 * out-of-memory. */
static sebt_status run_wave(sweep *w, const fast_zbatch *zb, const dev_batch *db, size_t k0, size_t k1,
                            size_t *next, sebt_error *err)
{
    size_t nt = k1 - k0, q0 = zb->task_start[k0], q1 = zb->task_start[k1], total = 0;
    for (size_t k = k0; k < k1; k++)
        total += (size_t)key_union(w, zb, db, k)->n;
    cuda_task *ht = (cuda_task *)calloc(nt, sizeof *ht);
    int64_t *bstart = (int64_t *)malloc((nt + 1) * sizeof *bstart);
    int64_t *cstart = (int64_t *)malloc((nt + 1) * sizeof *cstart);
    dev_pool pool = DEV_POOL_EMPTY;
    void *dl = NULL, *dv = NULL, *dx = NULL, *dt = NULL, *dbs = NULL, *dcs = NULL;
    cudaError_t e = ht && bstart && cstart ? cudaSuccess : cudaErrorMemoryAllocation;
    size_t cells = total ? total : 1;
    if (e == cudaSuccess && (e = pool_put(&pool, NULL, cells * sizeof(sebt_k_memo_link), &dl)) == cudaSuccess
        && (e = pool_put(&pool, NULL, cells * sizeof(sebt_k_memo_val), &dv)) == cudaSuccess
        && (!w->tallies || (e = pool_put(&pool, NULL, cells * sizeof(sebt_k_memo_exit), &dx)) == cudaSuccess)) {
        wave_table(w, zb, db, k0, nt, dl, dv, dx, ht, bstart, cstart);
        if ((e = pool_put(&pool, ht, nt * sizeof *ht, &dt)) == cudaSuccess
            && (e = pool_put(&pool, bstart, (nt + 1) * sizeof *bstart, &dbs)) == cudaSuccess)
            e = pool_put(&pool, cstart, (nt + 1) * sizeof *cstart, &dcs);
    }
    int64_t blocks = e == cudaSuccess ? bstart[nt] : 0;
    free(ht), free(bstart), free(cstart);
    if (e != cudaSuccess) {
        pool_free(&pool);
        if (e == cudaErrorMemoryAllocation && nt > 1) {
            size_t mid = k0 + nt / 2;
            sebt_status st = run_wave(w, zb, db, k0, mid, next, err);
            return st == SEBT_OK ? run_wave(w, zb, db, mid, k1, next, err) : st;
        }
        return cuda_error(err, e, "for an exit memo");
    }
    if (blocks > 0) {
        SEBT_LAUNCH(cuda_memo_kernel, (unsigned)blocks, THREADS_PER_BLOCK)(w->dm, (const cuda_task *)dt,
                                                                           (const int64_t *)dbs, (int32_t)nt);
        if ((e = cudaGetLastError()) != cudaSuccess) {
            pool_free(&pool);
            return cuda_error(err, e, "filling the exit memos");
        }
    }
    dev_wave dw = { (const cuda_task *)dt, (const int64_t *)dcs, (int32_t)nt, q0 };
    /* Chunks sized from what the device has left: params, bitset offsets
     * and result per combo (the trades pass splits itself if its buffer
     * does not fit). */
    size_t per_combo = sizeof(sebt_params) + SEBT_N_TERMS * sizeof(int64_t) + sizeof(sebt_result) + sizeof(int64_t)
                       + (w->tallies ? sizeof(sebt_trade_tally) : 0);
    size_t chunk = device_budget(w) / per_combo;
    if (chunk < 1)
        chunk = 1;
    sebt_status st = SEBT_OK;
    for (size_t q = q0; q < q1 && st == SEBT_OK; q += chunk)
        st = run_chunk(w, zb, db, &dw, q, q + chunk < q1 ? q + chunk : q1, next, err);
    pool_free(&pool);
    return st;
}

/* Combos refs[q0 .. q1) of the z windows [z0, z1): their unions and
 * bitsets built and uploaded, then their exit keys in waves. Out of memory
 * (device or host), everything the batch took is freed and the combos it
 * had not finished run as two halves, each building its own smaller
 * unions; one combo alone gets one more try (the failure may have been
 * transient) before the sweep ends with SEBT_ERR_NOMEM. */
static sebt_status run_range(sweep *w, size_t q0, size_t q1, size_t z0, size_t z1, bool retried, sebt_error *err)
{
    fast_zbatch zb;
    dev_batch db;
    memset(&db, 0, sizeof db);
    size_t next = q0;
    cudaError_t e;
    sebt_status st = fast_zbatch_build(&w->fs, q0, q1, z0, z1, &zb, err);
    if (st == SEBT_OK) {
        w->batches++;
        if ((e = upload_batch(w, &zb, &db)) != cudaSuccess)
            st = cuda_error(err, e, "copying a batch's candidates and bitsets");
        for (size_t k = 0; st == SEBT_OK && k < zb.n_tasks;) {
            size_t k1 = wave_end(w, &zb, &db, k);
            st = run_wave(w, &zb, &db, k, k1, &next, err);
            k = k1;
        }
        free_batch(&db);
        fast_zbatch_free(&zb);
    }
    if (st != SEBT_ERR_NOMEM || next >= q1)
        return st;
    size_t left = q1 - next;
    if (left > 1) {
        size_t mid = next + left / 2;
        st = run_range(w, next, mid, z0, z1, false, err);
        return st == SEBT_OK ? run_range(w, mid, q1, z0, z1, false, err) : st;
    }
    return retried ? st : run_range(w, next, q1, z0, z1, true, err);
}

static sebt_status run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                             size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                             sebt_trade_tally *tallies, sebt_error *err)
{
    const cuda_state *cs = (const cuda_state *)self->state;
    if (opts && opts->stats)
        memset(opts->stats, 0, sizeof *opts->stats);
    sebt_status st = sebt_batch_check("cuda", s, combos, n_combos, results, err);
    if (st != SEBT_OK)
        return st;
    if (s->n >= (size_t)INT32_MAX)
        return sebt_fail(err, SEBT_ERR_INPUT, "cuda: %zu bars is more than it handles (%d)", s->n, INT32_MAX - 1);
    if (n_combos == 0)
        return SEBT_OK;
    cudaError_t e = cudaSetDevice(cs->device);
    if (e != cudaSuccess)
        return cuda_error(err, e, "selecting the device");

    /* The host half is fast_cpu's own plan of the sweep (fast_cpu/sweep.c):
     * the same candidates, unions, bitsets and exit keys, on its threads. */
    int threads = opts && opts->threads > 0 ? opts->threads : 0;   /* 0: fast_cpu's default */
    sweep w;
    memset(&w, 0, sizeof w);
    w.combos = combos;
    w.opts = opts;
    w.results = results;
    w.tallies = tallies;
    /* On failure every result is freed: none may hold what the caller left. */
    memset(results, 0, n_combos * sizeof *results);
    st = fast_sweep_begin(s, combos, n_combos, opts, threads, results, &w.fs, err);
    if (st != SEBT_OK)
        return st;
    st = upload_market(&w, err);
    if (st == SEBT_ERR_NOMEM) {
        /* The series cannot be split: it gets one more try, from nothing. */
        pool_free(&w.market_pool);
        free(w.dv);
        w.dv = NULL;
        st = upload_market(&w, err);
    }
    for (size_t q0 = 0; st == SEBT_OK && q0 < n_combos;) {
        size_t q1, z0, z1;
        fast_sweep_next_batch(&w.fs, q0, &q1, &z0, &z1);
        st = run_range(&w, q0, q1, z0, z1, false, err);
        q0 = q1;
    }
    pool_free(&w.market_pool);
    free(w.dv);
    fast_sweep_end(&w.fs);
    if (st != SEBT_OK) {
        sebt_results_free(results, n_combos);
        return st;
    }
    if (err) {
        /* A split or a second upload recovered: no failure's message stays
         * behind. */
        err->code = SEBT_OK;
        err->msg[0] = '\0';
    }
    if (opts && opts->stats) {
        opts->stats->threads_used = 1;
        opts->stats->batches = w.batches;
        opts->stats->chunks = w.chunks;
    }
    return SEBT_OK;
}

static sebt_status cuda_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                  size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                  sebt_error *err)
{
    return run_batch(self, s, combos, n_combos, opts, results, NULL, err);
}

/* The registry's tallied batch for this backend (sebt_backend_tally_batch):
 * metrics only, each combo's analysis tally kept in its hops. */
SEBT_CUDA_EXPORT sebt_status sebt_cuda_run_tallied(const sebt_backend *self, const sebt_series *s,
                                                   const sebt_params *combos, size_t n_combos,
                                                   const sebt_batch_opts *opts, sebt_result *results,
                                                   sebt_trade_tally *tallies, sebt_error *err)
{
    if (opts && opts->want_trades)
        return sebt_fail(err, SEBT_ERR_USAGE, "cuda: a tallied batch is metrics only (want_trades off)");
    if (n_combos && !tallies)
        return sebt_fail(err, SEBT_ERR_USAGE, "cuda: a tallied batch needs its tallies");
    return run_batch(self, s, combos, n_combos, opts, results, tallies, err);
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

/* The entry filters' columns (sebt/strategy.def's SEBT_FILTER rows), by
 * FAST_F_<name>. */
struct cuda_filter_cols {
    double *col[FAST_N_FILTERS + 1];
};

/* Each filter's column with the reference's bits (sebt_k_filter_<column>):
 * one thread per bar, its window summed in the reference's order. */
__global__ void cuda_filter_columns(sebt_k_bars b, int64_t n, sebt_params p, cuda_filter_cols out)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
        out.col[FAST_F_##name][t] = sebt_k_filter_##column(&b, t, p.window);
#include "sebt/strategy.def"
    }
}

/* A combo's feature columns on the device, by SEBT_FI_<name>. */
struct cuda_feature_cols {
    const double *col[SEBT_N_FEATURES];
};

__global__ void cuda_signal_column(cuda_feature_cols c, int64_t n, sebt_params p, uint8_t *signal, uint8_t *valid)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        signal[t] = sebt_k_signal_at(c.col, t, &p);
        valid[t] = !isnan(c.col[SEBT_FI_atr][t]);
    }
}

static sebt_status cuda_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                 sebt_features *out, sebt_error *err)
{
    const cuda_state *cs = (const cuda_state *)self->state;
    sebt_status st = sebt_features_check("cuda", s, p, out, err);
    if (st != SEBT_OK || s->n == 0)
        return st;
    cudaError_t e = cudaSetDevice(cs->device);
    if (e != cudaSuccess)
        return cuda_error(err, e, "selecting the device");
    size_t n = s->n, bytes = n * sizeof(double);
    dev_pool pool = DEV_POOL_EMPTY;
    /* The four bar columns in, seven feature columns and each filter's,
     * then the signal and valid bytes. */
    enum { N_IN = 4, N_DOUBLE = N_IN + 7 + FAST_N_FILTERS, N_BUF = N_DOUBLE + 2 };
    void *d[N_BUF];
    const double *in[N_IN] = { s->high, s->low, s->close, s->volume };
    for (int k = 0; k < N_BUF && e == cudaSuccess; k++)
        e = pool_put(&pool, k < N_IN ? in[k] : NULL, k < N_DOUBLE ? bytes : n, &d[k]);
    if (e != cudaSuccess) {
        pool_free(&pool);
        return cuda_error(err, e, "for the feature columns");
    }
    double *hi = (double *)d[0], *lo = (double *)d[1], *cl = (double *)d[2], *vol = (double *)d[3];
    double *tr = (double *)d[4], *cloc = (double *)d[5], *atr = (double *)d[6], *ef = (double *)d[7];
    double *es = (double *)d[8], *vz = (double *)d[9], *tz = (double *)d[10];
    uint8_t *sig = (uint8_t *)d[N_DOUBLE], *val = (uint8_t *)d[N_DOUBLE + 1];
    cuda_filter_cols fc;
    memset(&fc, 0, sizeof fc);
    for (int f = 0; f < FAST_N_FILTERS; f++)
        fc.col[f] = (double *)d[N_IN + 7 + f];
    sebt_k_bars bars;
    bars.high = hi;
    bars.low = lo;
    bars.close = cl;
    bars.volume = vol;
    unsigned blocks = (unsigned)((n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    SEBT_LAUNCH(cuda_bar_columns, blocks, THREADS_PER_BLOCK)(hi, lo, cl, (int64_t)n, tr, cloc);
    SEBT_LAUNCH(cuda_atr_column, blocks, THREADS_PER_BLOCK)(tr, (int64_t)n, p->atr_window, atr);
    SEBT_LAUNCH(cuda_recurrences, 1, 2)(cl, (int64_t)n, *p, ef, es);
    SEBT_LAUNCH(cuda_z_columns, blocks, THREADS_PER_BLOCK)(vol, atr, (int64_t)n, p->z_window, vz, tz);
    SEBT_LAUNCH(cuda_filter_columns, blocks, THREADS_PER_BLOCK)(bars, (int64_t)n, *p, fc);
    cuda_feature_cols dc;
    dc.col[SEBT_FI_ema_f] = ef;
    dc.col[SEBT_FI_ema_s] = es;
    dc.col[SEBT_FI_tr] = tr;
    dc.col[SEBT_FI_atr] = atr;
    dc.col[SEBT_FI_vol_z] = vz;
    dc.col[SEBT_FI_tr_z] = tz;
    dc.col[SEBT_FI_cloc] = cloc;
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) dc.col[SEBT_FI_##column] = fc.col[FAST_F_##name];
#include "sebt/strategy.def"
    static_assert(SEBT_N_FEATURES == 7 + FAST_N_FILTERS,
                  "a new feature column that is not a filter's is computed and copied here");
    SEBT_LAUNCH(cuda_signal_column, blocks, THREADS_PER_BLOCK)(dc, (int64_t)n, *p, sig, val);
    e = cudaGetLastError();
    for (int k = 0; k < SEBT_N_FEATURES && e == cudaSuccess; k++)
        e = cudaMemcpy(out->col[k], dc.col[k], bytes, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->signal, sig, n, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->valid, val, n, cudaMemcpyDeviceToHost);
    pool_free(&pool);
    return e == cudaSuccess ? SEBT_OK : cuda_error(err, e, "computing features");
}

sebt_backend cuda_backend_table = {
    "cuda",
    "CUDA sweeps on one GPU: fast_cpu's plan, exit memos and bitsets, one device thread per combo",
    /* Exact (SPEC §8): fast_cpu's plan (candidates decided on the
     * reference's z bits) and fast_cpu's per-combo code; checked by host
     * execution against the reference (gpu_test_host_exact, and sebt parity
     * with SEBT_CUDA_LIBRARY=libsebt_cuda_host.so). */
    { SEBT_CONTRACT_EXACT, 0.0 },
    cuda_features,
    cuda_run_batch,
    NULL,
};
