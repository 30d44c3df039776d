/* mine: a sebt backend plugin, the starting point for your own kernel.
 *
 * It computes the seller-exhaustion backtest (SPEC §3-7) the simplest way
 * there is, one combo at a time, in the order of operations the SPEC writes,
 * so it is bit-identical to sebt's reference and declares the exact
 * contract. Make it fast (keep every value's order of operations and it
 * stays exact), then run `sebt validate --backend ./libmine.so`.
 *
 * Compile-time variants, used by the template's own tests and as examples:
 *   -DMINE_FLOAT32        keeps the indicator columns in float32, as a kernel
 *                         that halves its memory traffic would; it then
 *                         declares a tolerant contract (MINE_FLOAT32_TOL) and
 *                         the oracle adjudicates the near-ties rounding makes
 *   -DMINE_PLANTED_BUG    forgets the slippage in the fee: validate must fail
 *                         and print a reproducer
 *
 * What sebt asks of a backend is in <sebt/backend.h>; the entry point is
 * described in <sebt/plugin.h>. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sebt/plugin.h>
#include <sebt/sebt.h>

#ifdef MINE_FLOAT32
/* float32 rounding moves a value by 2^-24 relative; the stop is low minus a
 * multiple of ATR, so pnl (a small difference of large prices) moves by up
 * to ATR * mult * 2^-24: 1e-4 of max(1, |pnl|) covers prices up to 1e6. */
#define MINE_FLOAT32_TOL 1e-4
typedef float column_t;
#else
typedef double column_t;
#endif

/* The value a column holds: in the float32 variant, the indicator rounded to
 * float, as it would be stored in a float32 buffer. */
static double stored(double x) { return (double)(column_t)x; }

/* Price-valued columns (EMAs, TR, ATR) are held relative to a power of two
 * near the series' largest close, as a float32 pipeline normalises its
 * inputs: scaling by 2^k is exact, and prices of 1e120 or 1e-310, which a
 * float cannot hold, keep float32's 24 bits instead of turning into inf or
 * 0. In the float64 variant it changes nothing. */
static double price_scale(const sebt_series *s)
{
    double m = 0.0;
    for (size_t t = 0; t < s->n; t++)
        if (fabs(s->close[t]) > m)  /* NaN compares false: missing bars skipped */
            m = fabs(s->close[t]);
    return m > 0.0 && isfinite(m) ? ldexp(1.0, ilogb(m)) : 1.0;
}

#ifdef MINE_FLOAT32
static double stored_price(double x, double scale) { return scale * stored(x / scale); }
#else
static double stored_price(double x, double scale) { (void)scale; return x; }
#endif

/* ---- indicators (SPEC §3) ---------------------------------------------- */

static void ema(const double *close, size_t n, int32_t span, double scale, double *out)
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
        out[t] = stored_price(y, scale);
    }
}

static void true_range(const sebt_series *s, double *out)
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

/* The window is summed afresh, oldest first: a running sum would round
 * differently and lose exactness. */
static void atr(const double *tr, size_t n, int32_t w, double *out)
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

static double window_z(const double *x, size_t from, size_t t, int32_t w)
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

static void zscore(const double *x, size_t n, int32_t w, double *out)
{
    for (size_t t = 0; t < n; t++)
        out[t] = t + 1 < (size_t)w ? NAN : stored(window_z(x, t + 1 - (size_t)w, t, w));
}

/* RSI (Cutler's: simple means of gains and losses), each window summed
 * afresh, oldest first, like ATR's. A gain is NaN at bar 0 and where the bar
 * or the one before is missing; a window holding one is undefined, and so
 * is one where nothing moved (G + L == 0). */
static void rsi(const double *close, size_t n, int32_t w, double *out)
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
            out[t] = stored((100.0 * G) / (G + L));
    }
}

static void compute(const sebt_series *s, const sebt_params *p, sebt_features *f)
{
    size_t n = s->n;
    double scale = price_scale(s);
    ema(s->close, n, p->ema_fast, scale, f->ema_f);
    ema(s->close, n, p->ema_slow, scale, f->ema_s);
    true_range(s, f->tr);
    atr(f->tr, n, p->atr_window, f->atr);
    zscore(s->volume, n, p->z_window, f->vol_z);
    zscore(f->atr, n, p->z_window, f->tr_z);
    rsi(s->close, n, p->rsi_window, f->rsi);
    for (size_t t = 0; t < n; t++) {
        double h = s->high[t], l = s->low[t];
        f->cloc[t] = isnan(h) || h == l ? NAN : stored((s->close[t] - l) / (h - l));
        f->tr[t] = stored_price(f->tr[t], scale);
        f->atr[t] = stored_price(f->atr[t], scale);
        f->signal[t] = f->ema_f[t] < f->ema_s[t] && f->vol_z[t] > p->vol_z && f->tr_z[t] > p->tr_z &&
                       f->cloc[t] > p->cloc_min && (!p->use_rsi || f->rsi[t] <= p->rsi_max);
        f->valid[t] = !isnan(f->atr[t]);
    }
}

/* ---- simulation and metrics (SPEC §5-7) ---------------------------------- */

static sebt_status simulate(const sebt_series *s, const sebt_features *f, const sebt_params *p,
                            sebt_result *r, sebt_error *err)
{
    size_t cap = 0, n_tr = 0, prev = 0;
    sebt_trade *trades = NULL;
    bool in_pos = false, have_prev = false;
    sebt_trade cur = { 0 };
    r->valid_bars = 0;
    for (size_t u = 0; u < s->n; u++) {
        if (!f->valid[u])
            continue;
        r->valid_bars++;
        if (!have_prev) {             /* u is v[0]: nothing before it to act on */
            have_prev = true;
            prev = u;
            continue;
        }
        size_t t = prev;              /* t = v[k], u = v[k+1] */
        prev = u;
        if (!in_pos) {
            if (f->signal[t]) {
                double entry = s->open[u];
                double stop = p->use_stop ? s->low[t] - p->atr_stop_mult * f->atr[t] : 0.0;
                double risk = p->use_stop ? (entry - stop > 1e-8 ? entry - stop : 1e-8) : entry * 0.01;
                cur = (sebt_trade){ .signal_index = (int64_t)t, .entry_index = (int64_t)u,
                                    .entry_price = entry, .stop = stop, .risk = risk,
                                    .tp = p->use_tp ? entry + p->reward_r * risk : 0.0 };
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
#ifdef MINE_PLANTED_BUG
        double fee = (cur.entry_price + cur.exit_price) * p->fee_bp / 10000.0;
#else
        double fee = (cur.entry_price + cur.exit_price) * (p->fee_bp + p->slippage_bp) / 10000.0;
#endif
        cur.exit_index = (int64_t)u;
        cur.pnl = cur.exit_price - cur.entry_price - fee;
        cur.r = cur.pnl / cur.risk;
        if (n_tr == cap) {
            cap = cap ? 2 * cap : 16;
            sebt_trade *grown = realloc(trades, cap * sizeof *grown);
            if (!grown) {
                free(trades);
                return sebt_fail(err, SEBT_ERR_NOMEM, "mine: out of memory after %zu trades", n_tr);
            }
            trades = grown;
        }
        trades[n_tr++] = cur;
        in_pos = false;
    }
    r->open_at_end = (sebt_open_position){ 0 };
    if (in_pos)
        r->open_at_end = (sebt_open_position){ .open = true, .signal_index = cur.signal_index,
                                               .entry_index = cur.entry_index, .entry_price = cur.entry_price,
                                               .stop = cur.stop, .tp = cur.tp, .risk = cur.risk,
                                               .bars_held = cur.bars_held };
    r->n_trades = n_tr;
    r->trades = trades;
    return SEBT_OK;
}

static void metrics(const sebt_trade *tr, size_t n, sebt_metrics *m)
{
    *m = (sebt_metrics){ 0 };
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
    *m = (sebt_metrics){ .n = (int64_t)n, .win_rate = (double)wins / (double)n, .avg_r = mean,
                         .total_pnl = total, .max_dd = dd, .sharpe = sharpe };
}

/* ---- the backend table ----------------------------------------------------- */

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
        return sebt_fail(err, SEBT_ERR_USAGE, "mine: features hold %zu bars, the series %zu", out->n, s->n);
    compute(s, p, out);
    return SEBT_OK;
}

static sebt_status mine_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                  size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                  sebt_error *err)
{
    (void)self;
    /* Every combo is checked before any runs (backend.h). */
    for (size_t i = 0; i < n_combos; i++) {
        sebt_status st = sebt_params_validate(&combos[i], err);
        if (st != SEBT_OK)
            return sebt_fail(err, st, "combo %zu: %s", i, err ? err->msg : "");
    }
    sebt_status st = sebt_series_check(s, err);
    if (st != SEBT_OK)
        return st;
    sebt_features f;
    st = sebt_features_alloc(&f, s->n, err);
    if (st != SEBT_OK)
        return st;
    for (size_t i = 0; i < n_combos && st == SEBT_OK; i++) {
        compute(s, &combos[i], &f);
        st = simulate(s, &f, &combos[i], &results[i], err);
        if (st != SEBT_OK)
            break;
        metrics(results[i].trades, results[i].n_trades, &results[i].metrics);
        if (!opts || !opts->want_trades) {
            free(results[i].trades);
            results[i].trades = NULL;
        }
        if (opts && opts->progress)
            opts->progress(opts->progress_user, i + 1, n_combos);
    }
    sebt_features_free(&f);
    if (st != SEBT_OK)
        sebt_results_free(results, n_combos);
    return st;
}

static const sebt_backend mine = {
#ifdef MINE_FLOAT32
    .name = "mine_f32",
    .description = "template plugin, indicator columns in float32",
    .contract = { SEBT_CONTRACT_TOLERANT, MINE_FLOAT32_TOL },
#else
    .name = "mine",
    .description = "template plugin: the SPEC one combo at a time",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
#endif
    .features = mine_features,
    .run_batch = mine_run_batch,
    .state = NULL,
};

SEBT_PLUGIN_ENTRY
{
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    return &mine;
}
