/* mine_cuda: the template's backtest as a CUDA kernel, one thread per combo.
 *
 * The same arithmetic as mine.c in the same order, on the device: with nvcc's
 * -fmad=false --prec-div=true --prec-sqrt=true it stays bit-identical to the
 * reference and declares the exact contract. Each thread computes its
 * combo's indicator columns into device scratch, walks the valid bars and
 * writes its trades into its own slice of a device buffer (a combo makes at
 * most valid_bars/2 trades, so the slice never overflows).
 *
 * Two builds of this one file (CMakeLists.txt, MINE_CUDA and MINE_CUDA_HOST):
 *   - nvcc: libmine_cuda.so, for a machine with a GPU;
 *   - the host C++ compiler against sebt's CUDA runtime stand-in
 *     (share/sebt/cuda-host): libmine_cuda_host.so, *host execution*: the
 *     kernel's blocks run on CPU threads, and every allocation, copy and
 *     launch is checked. That is how the kernel is validated where there is
 *     no GPU; it is never a GPU, and says so in its description. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sebt/plugin.h>
#include <sebt/sebt.h>

#ifdef SEBT_CUDA_HOST_EXECUTION
#define MINE_LAUNCH(kernel, grid, block) SEBT_HOST_LAUNCH(kernel, grid, block)
#define MINE_NAME "mine_cuda"
#define MINE_WHERE "host execution, no device: the kernel on CPU threads under sebt's checking CUDA stand-in"
#else
#define MINE_LAUNCH(kernel, grid, block) kernel<<<(grid), (block)>>>
#define MINE_NAME "mine_cuda"
#define MINE_WHERE "template plugin on a CUDA device, one thread per combo"
#endif

#define MINE_BLOCK 64
/* The indicator columns a combo keeps in scratch: ema_f, ema_s, tr, atr,
 * vol_z, tr_z, cloc, rsi (SPEC §3), as sebt_features holds them. */
#define MINE_COLUMNS 8
/* Device memory for one launch; more combos run in several launches. */
#define MINE_LAUNCH_BYTES ((size_t)256 << 20)

/* ---- SPEC §3-7 on the device (mine.c, line for line) ------------------------
 * Host execution defines __device__ as nothing, so these are plain C++ there. */

__device__ static void ema(const double *close, size_t n, int32_t span, double *out)
{
    double a = 2.0 / ((double)span + 1.0), b = 1.0 - a, y = NAN;
    int seeded = 0;
    for (size_t t = 0; t < n; t++) {
        if (isnan(close[t])) {
            out[t] = NAN;
            continue;
        }
        y = seeded ? a * close[t] + b * y : close[t];
        seeded = 1;
        out[t] = y;
    }
}

__device__ static void true_range(const sebt_series *s, double *out)
{
    for (size_t t = 0; t < s->n; t++) {
        double h = s->high[t], l = s->low[t];
        if (isnan(h)) {
            out[t] = NAN;
        } else if (t == 0 || isnan(s->close[t - 1])) {
            out[t] = h - l;
        } else {
            double pc = s->close[t - 1], m = h - l;
            double a = fabs(h - pc), b = fabs(l - pc);
            m = a > m ? a : m;
            out[t] = b > m ? b : m;
        }
    }
}

__device__ static void atr(const double *tr, size_t n, int32_t w, double *out)
{
    size_t ws = (size_t)w;
    for (size_t t = 0; t < n; t++) {
        out[t] = NAN;
        if (t + 1 < ws)
            continue;
        double sum = 0.0;
        size_t i = t + 1 - ws;
        for (; i <= t && !isnan(tr[i]); i++)
            sum += tr[i];
        if (i > t)
            out[t] = sum / (double)w;
    }
}

__device__ static double window_z(const double *x, size_t from, size_t t, int32_t w)
{
    int flat = 1;
    for (size_t i = from; i <= t; i++) {
        if (isnan(x[i]))
            return NAN;
        if (x[i] != x[from])
            flat = 0;
    }
    if (flat)
        return NAN;
    double sum = 0.0, ss = 0.0;
    for (size_t i = from; i <= t; i++)
        sum += x[i];
    double m = sum / (double)w;
    for (size_t i = from; i <= t; i++)
        ss += (x[i] - m) * (x[i] - m);
    double var = ss / (double)w;
    return var == 0.0 ? NAN : (x[t] - m) / sqrt(var);
}

__device__ static void zscore(const double *x, size_t n, int32_t w, double *out)
{
    for (size_t t = 0; t < n; t++)
        out[t] = t + 1 < (size_t)w ? NAN : window_z(x, t + 1 - (size_t)w, t, w);
}

/* RSI (Cutler's: simple means of gains and losses), each window summed
 * afresh, oldest first. A gain is NaN at bar 0 and where the bar or the one
 * before is missing; a window holding one is undefined, and so is one where
 * nothing moved (G + L == 0). */
__device__ static void rsi(const double *close, size_t n, int32_t w, double *out)
{
    size_t ws = (size_t)w;
    for (size_t t = 0; t < n; t++) {
        out[t] = NAN;
        if (t < ws)     /* the window t-w+1..t must start after bar 0, which has no gain */
            continue;
        double g = 0.0, l = 0.0;
        size_t i = t + 1 - ws;
        for (; i <= t; i++) {
            double d = close[i] - close[i - 1];
            if (isnan(d))
                break;
            g += d > 0 ? d : 0.0;
            l += d < 0 ? -d : 0.0;
        }
        if (i <= t)
            continue;
        double G = g / (double)w, L = l / (double)w;
        if (G + L != 0.0)
            out[t] = (100.0 * G) / (G + L);
    }
}

__device__ static void compute(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    size_t n = s->n;
    ema(s->close, n, p->ema_fast, f->ema_f);
    ema(s->close, n, p->ema_slow, f->ema_s);
    true_range(s, f->tr);
    atr(f->tr, n, p->atr_window, f->atr);
    zscore(s->volume, n, p->z_window, f->vol_z);
    zscore(f->atr, n, p->z_window, f->tr_z);
    rsi(s->close, n, p->rsi_window, f->rsi);
    for (size_t t = 0; t < n; t++) {
        double h = s->high[t], l = s->low[t];
        f->cloc[t] = isnan(h) || h == l ? NAN : (s->close[t] - l) / (h - l);
        f->signal[t] = f->ema_f[t] < f->ema_s[t] && f->vol_z[t] > p->vol_z && f->tr_z[t] > p->tr_z &&
                       f->cloc[t] > p->cloc_min && (!p->use_rsi || f->rsi[t] <= p->rsi_max);
        f->valid[t] = !isnan(f->atr[t]);
    }
}

/* SPEC §5-6 into out[0 .. cap): cap >= valid bars / 2 + 1 always suffices. */
__device__ static void simulate(const sebt_series *s, const sebt_features *f, const sebt_params *p,
                                         sebt_trade *out, sebt_result *r)
{
    size_t n_tr = 0, prev = 0, valid = 0;
    bool in_pos = false, have_prev = false;
    sebt_trade cur;
    memset(&cur, 0, sizeof cur);
    for (size_t u = 0; u < s->n; u++) {
        if (!f->valid[u])
            continue;
        valid++;
        if (!have_prev) {
            have_prev = true;
            prev = u;
            continue;
        }
        size_t t = prev;
        prev = u;
        if (!in_pos) {
            if (f->signal[t]) {
                memset(&cur, 0, sizeof cur);
                cur.signal_index = (int64_t)t;
                cur.entry_index = (int64_t)u;
                cur.entry_price = s->open[u];
                cur.stop = p->use_stop ? s->low[t] - p->atr_stop_mult * f->atr[t] : 0.0;
                double d = cur.entry_price - cur.stop;
                cur.risk = p->use_stop ? (d > 1e-8 ? d : 1e-8) : cur.entry_price * 0.01;
                cur.tp = p->use_tp ? cur.entry_price + p->reward_r * cur.risk : 0.0;
                in_pos = true;
            }
            continue;
        }
        cur.bars_held++;
        if (p->use_stop && s->open[u] <= cur.stop) {
            cur.exit_price = s->open[u];
            cur.reason = SEBT_EXIT_STOP_GAP;
        } else if (p->use_stop && s->low[u] <= cur.stop) {
            cur.exit_price = cur.stop;
            cur.reason = SEBT_EXIT_STOP;
        } else if (p->use_tp && cur.tp > 0 && s->high[u] >= cur.tp) {
            cur.exit_price = cur.tp;
            cur.reason = SEBT_EXIT_TP;
        } else if (p->use_time && cur.bars_held >= p->max_hold) {
            cur.exit_price = s->close[u];
            cur.reason = SEBT_EXIT_TIME;
        } else {
            continue;
        }
        double fee = (cur.entry_price + cur.exit_price) * (p->fee_bp + p->slippage_bp) / 10000.0;
        cur.exit_index = (int64_t)u;
        cur.pnl = cur.exit_price - cur.entry_price - fee;
        cur.r = cur.pnl / cur.risk;
        out[n_tr++] = cur;
        in_pos = false;
    }
    memset(r, 0, sizeof *r);
    r->valid_bars = valid;
    if (in_pos) {
        r->open_at_end.open = true;
        r->open_at_end.signal_index = cur.signal_index;
        r->open_at_end.entry_index = cur.entry_index;
        r->open_at_end.entry_price = cur.entry_price;
        r->open_at_end.stop = cur.stop;
        r->open_at_end.tp = cur.tp;
        r->open_at_end.risk = cur.risk;
        r->open_at_end.bars_held = cur.bars_held;
    }
    r->n_trades = n_tr;
}

__device__ static void metrics(const sebt_trade *tr, size_t n, sebt_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (n == 0)
        return;
    size_t wins = 0;
    double sum_r = 0.0, total = 0.0, cum = 0.0, peak = 0.0, dd = 0.0;
    for (size_t i = 0; i < n; i++) {
        wins += tr[i].pnl > 0;
        sum_r += tr[i].r;
        total += tr[i].pnl;
        cum += tr[i].pnl;
        if (i == 0 || cum > peak)
            peak = cum;
        if (cum - peak < dd)
            dd = cum - peak;
    }
    double mean = sum_r / (double)n, sharpe = 0.0;
    if (n >= 2) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (tr[i].r - mean) * (tr[i].r - mean);
        double sd = sqrt(ss / (double)(n - 1));
        sharpe = sd != 0.0 ? mean / sd : 0.0;
    }
    m->n = (int64_t)n;
    m->win_rate = (double)wins / (double)n;
    m->avg_r = mean;
    m->total_pnl = total;
    m->max_dd = dd;
    m->sharpe = sharpe;
}

/* Combo i of the launch: columns in scratch (MINE_COLUMNS doubles and 2 flags a bar),
 * trades in its slice of cap. */
__global__ void mine_kernel(sebt_series s, const sebt_params *combos, size_t n_combos, double *cols,
                            uint8_t *flags, sebt_trade *trades, size_t cap, sebt_result *results)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_combos)
        return;
    size_t n = s.n;
    sebt_features f;
    f.n = n;
    double *c = cols + i * MINE_COLUMNS * n;
    f.ema_f = c;
    f.ema_s = c + n;
    f.tr = c + 2 * n;
    f.atr = c + 3 * n;
    f.vol_z = c + 4 * n;
    f.tr_z = c + 5 * n;
    f.cloc = c + 6 * n;
    f.rsi = c + 7 * n;
    f.signal = flags + i * 2 * n;
    f.valid = flags + i * 2 * n + n;
    compute(&s, &combos[i], &f);
    sebt_result r;
    simulate(&s, &f, &combos[i], trades + i * cap, &r);
    metrics(trades + i * cap, r.n_trades, &r.metrics);
    results[i] = r;
}

/* ---- the host side -------------------------------------------------------------- */

typedef struct {
    sebt_series s;           /* device columns (ts stays NULL: the kernel needs none) */
    double *cols;
    uint8_t *flags;
    sebt_trade *trades;
    sebt_params *combos;
    sebt_result *results;
} device_buffers;

static void release(device_buffers *d)
{
    cudaFree((void *)d->s.open);
    cudaFree((void *)d->s.high);
    cudaFree((void *)d->s.low);
    cudaFree((void *)d->s.close);
    cudaFree((void *)d->s.volume);
    cudaFree(d->cols);
    cudaFree(d->flags);
    cudaFree(d->trades);
    cudaFree(d->combos);
    cudaFree(d->results);
    memset(d, 0, sizeof *d);
}

static sebt_status cuda_fail(sebt_error *err, cudaError_t e, const char *what)
{
    return sebt_fail(err, e == cudaErrorMemoryAllocation ? SEBT_ERR_NOMEM : SEBT_ERR_NODEVICE,
                     "mine_cuda: %s: %s", what, cudaGetErrorString(e));
}

/* Uploads the series and room for `room` combos. */
static sebt_status prepare(const sebt_series *s, size_t room, size_t cap, device_buffers *d, sebt_error *err)
{
    memset(d, 0, sizeof *d);
    size_t n = s->n ? s->n : 1;
    double **cols[] = { &d->s.open, &d->s.high, &d->s.low, &d->s.close, &d->s.volume };
    const double *src[] = { s->open, s->high, s->low, s->close, s->volume };
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < 5 && e == cudaSuccess; k++) {
        e = cudaMalloc(cols[k], n * sizeof(double));
        if (e == cudaSuccess && s->n)
            e = cudaMemcpy(*cols[k], src[k], s->n * sizeof(double), cudaMemcpyHostToDevice);
    }
    d->s.n = s->n;
    if (e == cudaSuccess)
        e = cudaMalloc(&d->cols, room * MINE_COLUMNS * n * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc(&d->flags, room * 2 * n);
    if (e == cudaSuccess)
        e = cudaMalloc(&d->trades, room * cap * sizeof(sebt_trade));
    if (e == cudaSuccess)
        e = cudaMalloc(&d->combos, room * sizeof(sebt_params));
    if (e == cudaSuccess)
        e = cudaMalloc(&d->results, room * sizeof(sebt_result));
    if (e != cudaSuccess) {
        release(d);
        return cuda_fail(err, e, "allocating device memory");
    }
    return SEBT_OK;
}

static sebt_status launch(device_buffers *d, const sebt_params *combos, size_t n_combos, size_t cap,
                          sebt_error *err)
{
    cudaError_t e = cudaMemcpy(d->combos, combos, n_combos * sizeof *combos, cudaMemcpyHostToDevice);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "copying the combos");
    unsigned blocks = (unsigned)((n_combos + MINE_BLOCK - 1) / MINE_BLOCK);
    MINE_LAUNCH(mine_kernel, dim3(blocks), dim3(MINE_BLOCK))(d->s, d->combos, n_combos, d->cols, d->flags,
                                                            d->trades, cap, d->results);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    return e == cudaSuccess ? SEBT_OK : cuda_fail(err, e, "running the kernel");
}

static sebt_status mine_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                 sebt_features *out, sebt_error *err)
{
    (void)self;
    sebt_status st = sebt_params_validate(p, err);
    if (st == SEBT_OK)
        st = sebt_series_check(s, err);
    if (st != SEBT_OK)
        return st;
    if (out->n != s->n)
        return sebt_fail(err, SEBT_ERR_USAGE, "mine_cuda: features hold %zu bars, the series %zu", out->n, s->n);
    size_t cap = s->n / 2 + 1;
    device_buffers d;
    if ((st = prepare(s, 1, cap, &d, err)) != SEBT_OK)
        return st;
    st = launch(&d, p, 1, cap, err);
    size_t n = s->n;
    double *dst[MINE_COLUMNS] = { out->ema_f, out->ema_s, out->tr, out->atr, out->vol_z, out->tr_z, out->cloc,
                                  out->rsi };
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < MINE_COLUMNS && st == SEBT_OK && e == cudaSuccess && n; k++)
        e = cudaMemcpy(dst[k], d.cols + k * n, n * sizeof(double), cudaMemcpyDeviceToHost);
    if (st == SEBT_OK && e == cudaSuccess && n)
        e = cudaMemcpy(out->signal, d.flags, n, cudaMemcpyDeviceToHost);
    if (st == SEBT_OK && e == cudaSuccess && n)
        e = cudaMemcpy(out->valid, d.flags + n, n, cudaMemcpyDeviceToHost);
    if (st == SEBT_OK && e != cudaSuccess)
        st = cuda_fail(err, e, "copying the features back");
    release(&d);
    return st;
}

static sebt_status mine_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                  size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                  sebt_error *err)
{
    (void)self;
    for (size_t i = 0; i < n_combos; i++) {
        sebt_status st = sebt_params_validate(&combos[i], err);
        if (st != SEBT_OK)
            return sebt_fail(err, st, "combo %zu: %s", i, err ? err->msg : "");
    }
    sebt_status st = sebt_series_check(s, err);
    if (st != SEBT_OK || n_combos == 0)
        return st;
    size_t n = s->n ? s->n : 1, cap = s->n / 2 + 1;
    size_t per_combo = n * (7 * sizeof(double) + 2) + cap * sizeof(sebt_trade) + sizeof(sebt_result);
    size_t room = MINE_LAUNCH_BYTES / per_combo;
    if (room < 1)
        room = 1;
    if (room > n_combos)
        room = n_combos;
    device_buffers d;
    if ((st = prepare(s, room, cap, &d, err)) != SEBT_OK)
        return st;
    bool want = opts && opts->want_trades;
    for (size_t first = 0; first < n_combos && st == SEBT_OK; first += room) {
        size_t k = n_combos - first < room ? n_combos - first : room;
        st = launch(&d, combos + first, k, cap, err);
        cudaError_t e = cudaSuccess;
        if (st == SEBT_OK)
            e = cudaMemcpy(results + first, d.results, k * sizeof *results, cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < k && st == SEBT_OK && e == cudaSuccess; i++) {
            sebt_result *r = &results[first + i];
            r->trades = NULL;
            if (!want || r->n_trades == 0)
                continue;
            r->trades = (sebt_trade *)malloc(r->n_trades * sizeof *r->trades);
            if (!r->trades) {
                st = sebt_fail(err, SEBT_ERR_NOMEM, "mine_cuda: out of memory for %zu trades", r->n_trades);
                break;
            }
            e = cudaMemcpy(r->trades, d.trades + i * cap, r->n_trades * sizeof *r->trades,
                           cudaMemcpyDeviceToHost);
        }
        if (st == SEBT_OK && e != cudaSuccess)
            st = cuda_fail(err, e, "copying the results back");
        if (opts && opts->progress)
            opts->progress(opts->progress_user, first + k, n_combos);
    }
    release(&d);
    if (st != SEBT_OK)
        sebt_results_free(results, n_combos);
    return st;
}

static sebt_backend mine_cuda;

SEBT_PLUGIN_ENTRY
{
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    /* No CUDA call here: a CUDA runtime initialised before `sebt validate`
     * forks its checks would not work in them. A missing device shows in
     * the first run_batch as SEBT_ERR_NODEVICE (sebt exits 3). */
    mine_cuda.name = MINE_NAME;
    mine_cuda.description = MINE_WHERE;
    mine_cuda.contract.kind = SEBT_CONTRACT_EXACT;
    mine_cuda.contract.tol = 0.0;
    mine_cuda.features = mine_features;
    mine_cuda.run_batch = mine_run_batch;
    return &mine_cuda;
}
