/* Mutant backends: one plain implementation of SPEC §3-7 with switches,
 * each mutant turning on exactly one planted bug. They exist to prove the
 * oracle bites (`sebt fuzz --self-test`, the oracle's tests, `sebt parity
 * --backend mutant:NAME`) and are never listed in the public registry.
 *
 * The base is written for reading, not speed: naive window sums, one bar at
 * a time. With no bug switched on it agrees with the reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

typedef enum {
    BUG_NONE = 0,
    BUG_SMA,            /* the original GPU's own indicators: SMA where SPEC says EMA */
    BUG_EMA_SEED,       /* EMA seeded with the SMA of its first window (NaN before) */
    BUG_WARMUP,         /* warm-up not dropped: walks every present bar, ATR or not */
    BUG_OVERLAP,        /* signals while in position open more positions */
    BUG_TP_FIRST,       /* target checked before the stop */
    BUG_ENTRY_EXIT,     /* the entry bar is checked for exits */
    BUG_HOLD,           /* max_hold off by one: exits after max_hold+1 bars */
    BUG_BATCH_RESTART,  /* every batch after the first restarts at combo 0 */
    BUG_BLOCK_EDGE,     /* ATR window one bar short at each block boundary */
    BUG_EMA_MISSING,    /* EMA emits its previous value at a missing bar */
    BUG_TR_HOLE,        /* TR after a hole uses the close before the hole */
    BUG_SIG_EMA,        /* ema_f <= ema_s */
    BUG_SIG_VOL,        /* vol_z >= threshold */
    BUG_SIG_TR,         /* tr_z >= threshold */
    BUG_SIG_CLOC,       /* cloc >= cloc_min */
    BUG_GAP_LT,         /* stop gap: open < stop */
    BUG_STOP_LT,        /* stop: low < stop */
    BUG_TP_GT,          /* target: high > tp */
    BUG_DD_ZERO,        /* drawdown's running peak starts at 0 */
    BUG_SAMPLE_VAR,     /* z-score with the sample variance (w-1) */
    BUG_FEE_ONE_SIDE,   /* fee charged on the entry side only */
} bug_kind;

typedef struct {
    const char *name;
    bug_kind bug;
    const char *what;
    /* Why its reproducer cannot be 50 bars or fewer; NULL when it can. */
    const char *needs;
} mutant_info;

static const mutant_info mutant_infos[] = {
    { "sma", BUG_SMA, "indicators computed another way: SMA of close instead of EMA", NULL },
    { "ema_seed", BUG_EMA_SEED, "EMA seeded with the SMA of its first window instead of the first close", NULL },
    { "warmup", BUG_WARMUP, "warm-up not dropped: simulates over bars whose ATR is NaN", NULL },
    { "overlap", BUG_OVERLAP, "overlapping positions: a signal while in position opens another trade", NULL },
    { "tp_first", BUG_TP_FIRST, "stop checked after target: TP wins when a bar hits both", NULL },
    { "entry_exit", BUG_ENTRY_EXIT, "entry-bar exits: the entry bar itself is checked for exits", NULL },
    { "max_hold", BUG_HOLD, "off-by-one in max_hold: time exit after max_hold+1 bars", NULL },
    { "batch_restart", BUG_BATCH_RESTART, "every batch after the first restarts at combo 0 (results of the wrong combo)",
      NULL },
    { "block_edge", BUG_BLOCK_EDGE, "ATR window one bar short at each 512-bar block boundary",
      "a block boundary: more than 512 bars" },
    { "ema_missing", BUG_EMA_MISSING, "EMA emits its previous value at a missing bar instead of NaN", NULL },
    { "tr_hole", BUG_TR_HOLE, "TR after a hole uses the close before the hole instead of high - low", NULL },
    { "sig_ema_le", BUG_SIG_EMA, "signal written ema_f <= ema_s", NULL },
    { "sig_vol_ge", BUG_SIG_VOL, "signal written vol_z >= threshold", NULL },
    { "sig_tr_ge", BUG_SIG_TR, "signal written tr_z >= threshold", NULL },
    { "sig_cloc_ge", BUG_SIG_CLOC, "signal written cloc >= cloc_min", NULL },
    { "gap_lt", BUG_GAP_LT, "stop-gap exit written open < stop", NULL },
    { "stop_lt", BUG_STOP_LT, "stop exit written low < stop", NULL },
    { "tp_gt", BUG_TP_GT, "target exit written high > tp", NULL },
    { "dd_peak0", BUG_DD_ZERO, "drawdown's running peak starts at 0, not at the first trade", NULL },
    { "sample_var", BUG_SAMPLE_VAR, "z-score with the sample variance (w-1), not the population's", NULL },
    { "fee_one_side", BUG_FEE_ONE_SIDE, "fee charged on the entry price only", NULL },
};
#define N_MUTANTS (sizeof mutant_infos / sizeof mutant_infos[0])

/* ---- indicators -------------------------------------------------------- */

static bool present(const sebt_series *s, size_t t) { return !isnan(s->close[t]); }

static void ema(const sebt_series *s, int span, bug_kind bug, double *out)
{
    double a = 2.0 / (span + 1), b = 1.0 - a, y = NAN;
    size_t seen = 0;
    double seed_sum = 0.0;
    for (size_t t = 0; t < s->n; t++) {
        out[t] = NAN;
        if (!present(s, t)) {
            if (bug == BUG_EMA_MISSING)
                out[t] = y;
            continue;
        }
        double c = s->close[t];
        if (bug == BUG_SMA) {
            if (t + 1 < (size_t)span)
                continue;
            double sum = 0.0;
            bool ok = true;
            for (size_t i = t + 1 - (size_t)span; i <= t; i++) {
                ok = ok && present(s, i);
                sum += s->close[i];
            }
            out[t] = ok ? sum / span : NAN;
            continue;
        }
        seen++;
        if (bug == BUG_EMA_SEED && seen <= (size_t)span) {
            seed_sum += c;
            if (seen == (size_t)span)
                out[t] = y = seed_sum / span;
            continue;
        }
        y = seen == 1 ? c : a * c + b * y;
        out[t] = y;
    }
}

static void true_range(const sebt_series *s, bug_kind bug, double *tr)
{
    double last_close = NAN;
    for (size_t t = 0; t < s->n; t++) {
        if (!present(s, t)) {
            tr[t] = NAN;
            continue;
        }
        double h = s->high[t], l = s->low[t];
        double before = last_close;
        last_close = s->close[t];
        if (t == 0 || !present(s, t - 1)) {
            tr[t] = bug == BUG_TR_HOLE && !isnan(before)
                        ? fmax(h - l, fmax(fabs(h - before), fabs(l - before)))
                        : h - l;
            continue;
        }
        double pc = s->close[t - 1];
        tr[t] = fmax(h - l, fmax(fabs(h - pc), fabs(l - pc)));
    }
}

/* ATR is computed block by block, as fast_cpu does, so a block-boundary
 * bug has a boundary to sit on. */
#define MUTANT_ATR_BLOCK 512

static void window_mean(const double *x, size_t n, int w, bug_kind bug, double *out)
{
    for (size_t t = 0; t < n; t++) {
        out[t] = NAN;
        if (t + 1 < (size_t)w)
            continue;
        double sum = 0.0;
        bool ok = true;
        size_t lo = t + 1 - (size_t)w;
        if (bug == BUG_BLOCK_EDGE && t > 0 && t % MUTANT_ATR_BLOCK == 0 && w > 1)
            lo++;
        for (size_t i = lo; i <= t; i++) {
            ok = ok && !isnan(x[i]);
            sum += x[i];
        }
        if (ok)
            out[t] = sum / w;
    }
}

static void zscore(const double *x, size_t n, int w, bug_kind bug, double *out)
{
    for (size_t t = 0; t < n; t++) {
        out[t] = NAN;
        if (t + 1 < (size_t)w)
            continue;
        size_t lo = t + 1 - (size_t)w;
        bool ok = true, flat = true;
        double sum = 0.0;
        for (size_t i = lo; i <= t; i++) {
            ok = ok && !isnan(x[i]);
            flat = flat && x[i] == x[lo];
            sum += x[i];
        }
        if (!ok || flat)
            continue;
        double m = sum / w, ss = 0.0;
        for (size_t i = lo; i <= t; i++)
            ss += (x[i] - m) * (x[i] - m);
        double var = ss / (bug == BUG_SAMPLE_VAR ? w - 1 : w);
        /* Squares that underflow leave a window flat in practice (SPEC §3). */
        if (var == 0.0)
            continue;
        out[t] = (x[t] - m) / sqrt(var);
    }
}

static sebt_status mutant_features(const sebt_backend *self, const sebt_series *s,
                                   const sebt_params *p, sebt_features *f, sebt_error *err)
{
    bug_kind bug = self->state ? *(const bug_kind *)self->state : BUG_NONE;
    sebt_status st = sebt_params_validate(p, err);
    if (st)
        return st;
    if (f->n != s->n)
        return sebt_fail(err, SEBT_ERR_USAGE, "mutant features: output holds %zu bars, series %zu",
                         f->n, s->n);
    ema(s, p->ema_fast, bug, f->ema_f);
    ema(s, p->ema_slow, bug, f->ema_s);
    true_range(s, bug, f->tr);
    window_mean(f->tr, s->n, p->atr_window, bug, f->atr);
    zscore(s->volume, s->n, p->z_window, bug, f->vol_z);
    zscore(f->atr, s->n, p->z_window, bug, f->tr_z);
    for (size_t t = 0; t < s->n; t++) {
        double h = s->high[t], l = s->low[t];
        f->cloc[t] = present(s, t) && h != l ? (s->close[t] - l) / (h - l) : NAN;
        bool e = bug == BUG_SIG_EMA ? f->ema_f[t] <= f->ema_s[t] : f->ema_f[t] < f->ema_s[t];
        bool v = bug == BUG_SIG_VOL ? f->vol_z[t] >= p->vol_z : f->vol_z[t] > p->vol_z;
        bool r = bug == BUG_SIG_TR ? f->tr_z[t] >= p->tr_z : f->tr_z[t] > p->tr_z;
        bool c = bug == BUG_SIG_CLOC ? f->cloc[t] >= p->cloc_min : f->cloc[t] > p->cloc_min;
        f->signal[t] = e && v && r && c;
        f->valid[t] = !isnan(f->atr[t]);
    }
    return SEBT_OK;
}

/* ---- simulation -------------------------------------------------------- */

typedef struct {
    int64_t signal, entry;
    double entry_price, stop, tp, risk;
    int32_t bars;
} position;

/* Checks position q against bar u; fills tr and returns true on an exit. */
static bool check_exit(const sebt_series *s, const sebt_params *p, bug_kind bug, position *q,
                       int64_t u, sebt_trade *tr)
{
    q->bars += 1;
    double o = s->open[u], lo = s->low[u], hi = s->high[u];
    double price = 0.0;
    sebt_exit_reason why;
    bool stop_gap = p->use_stop && (bug == BUG_GAP_LT ? o < q->stop : o <= q->stop);
    bool stop = p->use_stop && (bug == BUG_STOP_LT ? lo < q->stop : lo <= q->stop);
    bool tp = p->use_tp && q->tp > 0 && (bug == BUG_TP_GT ? hi > q->tp : hi >= q->tp);
    int32_t hold = bug == BUG_HOLD ? p->max_hold + 1 : p->max_hold;
    bool time = p->use_time && q->bars >= hold;
    if (bug == BUG_TP_FIRST && tp) {
        price = q->tp;
        why = SEBT_EXIT_TP;
    } else if (stop_gap) {
        price = o;
        why = SEBT_EXIT_STOP_GAP;
    } else if (stop) {
        price = q->stop;
        why = SEBT_EXIT_STOP;
    } else if (tp) {
        price = q->tp;
        why = SEBT_EXIT_TP;
    } else if (time) {
        price = s->close[u];
        why = SEBT_EXIT_TIME;
    } else {
        return false;
    }
    double fee = (bug == BUG_FEE_ONE_SIDE ? q->entry_price : q->entry_price + price) *
                 (p->fee_bp + p->slippage_bp) / 10000.0;
    double pnl = price - q->entry_price - fee;
    *tr = (sebt_trade){ q->signal, q->entry, u, q->entry_price, price, q->stop, q->tp, q->risk,
                        pnl, pnl / q->risk, why, q->bars };
    return true;
}

#define MAX_OPEN 64

static sebt_status simulate(const sebt_series *s, const sebt_params *p, const sebt_features *f,
                            bug_kind bug, sebt_result *r, sebt_error *err)
{
    size_t k = 0;
    int64_t *v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!v)
        return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
    for (size_t t = 0; t < s->n; t++)
        if (bug == BUG_WARMUP ? present(s, t) : f->valid[t] != 0)
            v[k++] = (int64_t)t;
    /* valid_bars is the number of bars the simulation walks (SPEC §5's K):
     * a backend that keeps its warm-up rows walks, and reports, more. */
    r->valid_bars = k;

    oracle_trade_vec trades = { 0 };
    position open[MAX_OPEN];
    size_t n_open = 0;
    for (size_t i = 0; i + 1 < k; i++) {
        int64_t t = v[i], u = v[i + 1];
        /* Exits first (on bar u), for every open position but one just opened. */
        size_t keep = 0;
        for (size_t j = 0; j < n_open; j++) {
            sebt_trade tr;
            if (check_exit(s, p, bug, &open[j], u, &tr)) {
                if (!oracle_trade_push(&trades, &tr)) {
                    free(v);
                    free(trades.v);
                    return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
                }
            } else {
                open[keep++] = open[j];
            }
        }
        bool was_in = n_open > 0;
        n_open = keep;
        /* In the SPEC the bar that closes a position is not also a signal
         * bar for a new one in the same step: the loop body is either the
         * entry branch or the exit branch. */
        bool may_enter = bug == BUG_OVERLAP ? n_open < MAX_OPEN : !was_in;
        if (!may_enter || !f->signal[t])
            continue;
        position q = { .signal = t, .entry = u, .entry_price = s->open[u], .bars = 0 };
        q.stop = p->use_stop ? s->low[t] - p->atr_stop_mult * f->atr[t] : 0.0;
        q.risk = p->use_stop ? fmax(1e-8, q.entry_price - q.stop) : q.entry_price * 0.01;
        q.tp = p->use_tp ? q.entry_price + p->reward_r * q.risk : 0.0;
        if (bug == BUG_ENTRY_EXIT) {
            sebt_trade tr;
            if (check_exit(s, p, bug, &q, u, &tr)) {
                if (!oracle_trade_push(&trades, &tr)) {
                    free(v);
                    free(trades.v);
                    return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
                }
                continue;
            }
        }
        open[n_open++] = q;
    }
    free(v);
    memset(&r->open_at_end, 0, sizeof r->open_at_end);
    if (n_open) {
        r->open_at_end = (sebt_open_position){ true, open[0].signal, open[0].entry,
                                               open[0].entry_price, open[0].stop, open[0].tp,
                                               open[0].risk, open[0].bars };
    }
    r->metrics = sebt_oracle_metrics(trades.v, trades.n);
    if (bug == BUG_DD_ZERO) {
        double cum = 0.0, peak = 0.0, dd = 0.0;
        for (size_t i = 0; i < trades.n; i++) {
            cum += trades.v[i].pnl;
            peak = cum > peak ? cum : peak;
            dd = fmin(dd, cum - peak);
        }
        r->metrics.max_dd = dd;
    }
    r->n_trades = trades.n;
    r->trades = trades.v;
    return SEBT_OK;
}

/* Combos run in batches sized by the memory budget (eight columns of n
 * doubles per combo, as a sweep engine keeps), so a batch bug has batches
 * to get wrong. The default budget holds every combo in one batch. */
static size_t batch_size(const sebt_series *s, const sebt_batch_opts *opts, size_t n_combos)
{
    if (!opts || opts->memory_budget == 0)
        return n_combos ? n_combos : 1;
    size_t per = (s->n ? s->n : 1) * 8 * sizeof(double);
    size_t k = opts->memory_budget / per;
    return k ? k : 1;
}

static sebt_status mutant_run_batch(const sebt_backend *self, const sebt_series *s,
                                    const sebt_params *combos, size_t n_combos,
                                    const sebt_batch_opts *opts, sebt_result *results,
                                    sebt_error *err)
{
    bug_kind bug = self->state ? *(const bug_kind *)self->state : BUG_NONE;
    for (size_t i = 0; i < n_combos; i++) {
        sebt_status st = sebt_params_validate(&combos[i], err);
        if (st) {
            char msg[SEBT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            return sebt_fail(err, st, "combo %zu: %s", i, msg);
        }
    }
    sebt_features f;
    sebt_status st = sebt_features_alloc(&f, s->n, err);
    if (st)
        return st;
    size_t per = batch_size(s, opts, n_combos), batches = 0;
    for (size_t b0 = 0; b0 < n_combos && st == SEBT_OK; b0 += per) {
        batches++;
        for (size_t i = b0; i < n_combos && i < b0 + per && st == SEBT_OK; i++) {
            size_t which = bug == BUG_BATCH_RESTART ? i - b0 : i;
            st = mutant_features(self, s, &combos[which], &f, err);
            if (st == SEBT_OK)
                st = simulate(s, &combos[which], &f, bug, &results[i], err);
            if (st == SEBT_OK && !(opts && opts->want_trades)) {
                free(results[i].trades);
                results[i].trades = NULL;
            }
        }
    }
    sebt_features_free(&f);
    if (opts && opts->stats)
        *opts->stats = (sebt_batch_stats){ .threads_used = 1, .batches = batches, .chunks = 0,
                                           .blocks = (s->n + MUTANT_ATR_BLOCK - 1) / MUTANT_ATR_BLOCK };
    return st;
}

static const bug_kind bug_values[] = {
    BUG_NONE, BUG_SMA, BUG_EMA_SEED, BUG_WARMUP, BUG_OVERLAP, BUG_TP_FIRST, BUG_ENTRY_EXIT, BUG_HOLD,
    BUG_BATCH_RESTART, BUG_BLOCK_EDGE, BUG_EMA_MISSING, BUG_TR_HOLE, BUG_SIG_EMA, BUG_SIG_VOL,
    BUG_SIG_TR, BUG_SIG_CLOC, BUG_GAP_LT, BUG_STOP_LT, BUG_TP_GT, BUG_DD_ZERO, BUG_SAMPLE_VAR,
    BUG_FEE_ONE_SIDE,
};

/* Tolerant like the fast backends, so the self-test also proves that
 * near-tie adjudication does not swallow a planted bug. */
#define MUTANT_TOL 1e-9

const sebt_backend sebt_mutant_base_backend = {
    "mutant:none", "the mutants' correct base (no bug planted)",
    { SEBT_CONTRACT_TOLERANT, MUTANT_TOL }, mutant_features, mutant_run_batch, (void *)&bug_values[0]
};

#define MUTANT(i, label)                                                                        \
    { "mutant:" label, "a test subject with one planted bug (sebt fuzz --help)",                \
      { SEBT_CONTRACT_TOLERANT, MUTANT_TOL }, mutant_features, mutant_run_batch,                  \
      (void *)&bug_values[i] }
/* In mutant_infos order. */
static const sebt_backend mutant_backends[N_MUTANTS] = {
    MUTANT(1, "sma"), MUTANT(2, "ema_seed"), MUTANT(3, "warmup"), MUTANT(4, "overlap"),
    MUTANT(5, "tp_first"), MUTANT(6, "entry_exit"), MUTANT(7, "max_hold"),
    MUTANT(8, "batch_restart"), MUTANT(9, "block_edge"), MUTANT(10, "ema_missing"),
    MUTANT(11, "tr_hole"), MUTANT(12, "sig_ema_le"), MUTANT(13, "sig_vol_ge"),
    MUTANT(14, "sig_tr_ge"), MUTANT(15, "sig_cloc_ge"), MUTANT(16, "gap_lt"), MUTANT(17, "stop_lt"),
    MUTANT(18, "tp_gt"), MUTANT(19, "dd_peak0"), MUTANT(20, "sample_var"), MUTANT(21, "fee_one_side"),
};
_Static_assert(sizeof mutant_backends / sizeof mutant_backends[0] + 1 ==
               sizeof bug_values / sizeof bug_values[0], "one bug value per mutant");
#undef MUTANT

size_t sebt_mutant_count(void) { return N_MUTANTS; }

const sebt_backend *sebt_mutant_at(size_t i) { return i < N_MUTANTS ? &mutant_backends[i] : NULL; }

const char *sebt_mutant_bug(size_t i) { return i < N_MUTANTS ? mutant_infos[i].what : NULL; }

const char *sebt_mutant_needs(size_t i) { return i < N_MUTANTS ? mutant_infos[i].needs : NULL; }

sebt_status sebt_mutant_get(const char *name, const sebt_backend **out, sebt_error *err)
{
    const char *bare = strncmp(name, "mutant:", 7) == 0 ? name + 7 : name;
    if (strcmp(bare, "none") == 0) {
        *out = &sebt_mutant_base_backend;
        return SEBT_OK;
    }
    for (size_t i = 0; i < N_MUTANTS; i++)
        if (strcmp(bare, mutant_infos[i].name) == 0) {
            *out = &mutant_backends[i];
            return SEBT_OK;
        }
    char names[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < N_MUTANTS && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%smutant:%s", i ? ", " : "",
                                 mutant_infos[i].name);
    *out = NULL;
    return sebt_fail(err, SEBT_ERR_USAGE, "unknown mutant '%s' (valid: %s)", name, names);
}
