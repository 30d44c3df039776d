/* Mutant backends: the reference's own code with one planted bug each.
 * They exist to prove the oracle bites (`sebt fuzz --self-test`, the
 * oracle's tests, `sebt parity --backend mutant:NAME`) and are never listed
 * in the public registry.
 *
 * No SPEC rule is restated here (SQLite's practice: the harness mutates the
 * real code, not a copy). The features are the reference's columns, one of
 * them then bent; the simulation is the reference's walk (reference/
 * simulate.c) with a decision hook that perturbs one decision, or, for the
 * two bugs that change the walk's shape (overlapping positions, entry-bar
 * exits), the reference's step taken in another order. With no bug
 * switched on the result is the reference's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../reference/ref.h"
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
    BUG_Z_STALE,        /* rolling z not recomputed when a spike leaves its window */
    BUG_FAR_HOLE,       /* past bar 100,000, TR after a hole uses the close before it */
    BUG_RSI_OFF,        /* the RSI filter's switch ignored: the four terms alone */
} bug_kind;

typedef struct {
    const char *name;
    bug_kind bug;
    const char *what;
    /* Why its reproducer cannot be 50 bars or fewer; NULL when it can. */
    const char *needs;
    /* Small fuzz cases seldom (z_stale: a spike whose sums collapse past
     * ~2^32) or never (far_hole: past bar 100,000) show it: a hunt starts
     * with a big case rather than after FUZZ_BIG_EVERY small ones. */
    bool big_first;
} mutant_info;

static const mutant_info mutant_infos[] = {
    { "sma", BUG_SMA, "indicators computed another way: SMA of close instead of EMA", NULL, false },
    { "ema_seed", BUG_EMA_SEED, "EMA seeded with the SMA of its first window instead of the first close", NULL, false },
    { "warmup", BUG_WARMUP, "warm-up not dropped: simulates over bars whose ATR is NaN", NULL, false },
    { "overlap", BUG_OVERLAP, "overlapping positions: a signal while in position opens another trade", NULL, false },
    { "tp_first", BUG_TP_FIRST, "stop checked after target: TP wins when a bar hits both", NULL, false },
    { "entry_exit", BUG_ENTRY_EXIT, "entry-bar exits: the entry bar itself is checked for exits", NULL, false },
    { "max_hold", BUG_HOLD, "off-by-one in max_hold: time exit after max_hold+1 bars", NULL, false },
    { "batch_restart", BUG_BATCH_RESTART, "every batch after the first restarts at combo 0 (results of the wrong combo)",
      NULL, false },
    { "block_edge", BUG_BLOCK_EDGE, "ATR window one bar short at each 512-bar block boundary",
      "a block boundary: more than 512 bars", false },
    { "ema_missing", BUG_EMA_MISSING, "EMA emits its previous value at a missing bar instead of NaN", NULL, false },
    { "tr_hole", BUG_TR_HOLE, "TR after a hole uses the close before the hole instead of high - low", NULL, false },
    { "sig_ema_le", BUG_SIG_EMA, "signal written ema_f <= ema_s", NULL, false },
    { "sig_vol_ge", BUG_SIG_VOL, "signal written vol_z >= threshold", NULL, false },
    { "sig_tr_ge", BUG_SIG_TR, "signal written tr_z >= threshold", NULL, false },
    { "sig_cloc_ge", BUG_SIG_CLOC, "signal written cloc >= cloc_min", NULL, false },
    { "gap_lt", BUG_GAP_LT, "stop-gap exit written open < stop", NULL, false },
    { "stop_lt", BUG_STOP_LT, "stop exit written low < stop", NULL, false },
    { "tp_gt", BUG_TP_GT, "target exit written high > tp", NULL, false },
    { "dd_peak0", BUG_DD_ZERO, "drawdown's running peak starts at 0, not at the first trade", NULL, false },
    { "sample_var", BUG_SAMPLE_VAR, "z-score with the sample variance (w-1), not the population's", NULL, false },
    { "fee_one_side", BUG_FEE_ONE_SIDE, "fee charged on the entry price only", NULL, false },
    { "z_stale", BUG_Z_STALE, "rolling z (sliding sums, exact every z_window bars) not recomputed when a "
      "spike leaves the window: its digits stay cancelled until the next exact pass",
      "a window the spike has left: more bars than the z window", true },
    { "far_hole", BUG_FAR_HOLE, "a hole mask of 100,000 bars: past bar 100,000, TR after a hole uses the close "
      "before the hole instead of high - low", "a hole past bar 100,000: more than 100,000 bars", true },
    { "rsi_off", BUG_RSI_OFF, "the RSI filter not honoured: a combo with use_rsi signals on the four other "
      "terms alone", NULL, false },
};
#define N_MUTANTS (sizeof mutant_infos / sizeof mutant_infos[0])

/* ---- features: the reference's columns, one bent ---------------------- */

static bool present(const sebt_series *s, size_t t) { return !isnan(s->close[t]); }

/* EMA seeded with the SMA of its first span present closes (NaN before). */
static void ema_seeded(const sebt_series *s, int32_t span, double *out)
{
    double a = 2.0 / ((double)span + 1.0), y = NAN, seed_sum = 0.0;
    size_t seen = 0;
    for (size_t t = 0; t < s->n; t++) {
        out[t] = NAN;
        if (!present(s, t))
            continue;
        if (++seen <= (size_t)span) {
            seed_sum += s->close[t];
            if (seen == (size_t)span)
                out[t] = y = seed_sum / span;
            continue;
        }
        y = a * s->close[t] + (1.0 - a) * y;
        out[t] = y;
    }
}

/* A missing bar repeats the EMA's last value instead of NaN. */
static void hold_over_missing(const sebt_series *s, double *ema)
{
    double y = NAN;
    for (size_t t = 0; t < s->n; t++) {
        if (present(s, t))
            y = ema[t];
        else
            ema[t] = y;
    }
}

/* TR right after a hole takes the close before the hole as its previous
 * close, at bars from `from` on (a mask that stops there sees no hole). */
static void tr_across_holes(const sebt_series *s, size_t from, double *tr)
{
    double before = NAN;
    for (size_t t = 0; t < s->n; t++) {
        if (!present(s, t))
            continue;
        double h = s->high[t], l = s->low[t];
        if (t >= from && (t == 0 || !present(s, t - 1)) && !isnan(before))
            tr[t] = fmax(h - l, fmax(fabs(h - before), fabs(l - before)));
        before = s->close[t];
    }
}

/* ATR is computed block by block, as fast_cpu does, so a block-boundary
 * bug has a boundary to sit on: there the window loses its oldest bar. */
#define MUTANT_ATR_BLOCK 512

static void atr_short_at_block_edges(const double *tr, size_t n, int32_t w, double *atr)
{
    for (size_t t = MUTANT_ATR_BLOCK; w > 1 && t < n; t += MUTANT_ATR_BLOCK) {
        if (t + 1 < (size_t)w)
            continue;
        double sum = 0.0;
        bool ok = true;
        for (size_t i = t + 2 - (size_t)w; i <= t; i++) {
            ok = ok && !isnan(tr[i]);
            sum += tr[i];
        }
        atr[t] = ok ? sum / w : NAN;
    }
}

/* The z-score over the sample variance (w - 1) instead of the population's. */
static void sample_variance(double *z, size_t n, int32_t w)
{
    double k = sqrt((double)(w - 1) / (double)w);
    for (size_t t = 0; t < n; t++)
        z[t] *= k;
}

/* Where the far bug starts: 10^5 bars, past every small case; only big
 * cases (100,000 to 140,000 bars) reach it. */
#define MUTANT_FAR_BAR 100000

/* Z(x, w) as a sweep engine slides it (fast_cpu/indicators.h's
 * sebt_k_zscore, its bug planted): window sum and M2 updated per bar,
 * redone exactly every w bars, after a NaN or a flat run, and on a
 * near-flat window; but not when M2 collapses because a spike left the
 * window, so for up to w bars M2 is what is left of 1e24 minus 1e24. The
 * reference's NaN rules (a NaN in the window, a flat window, var 0) hold. */
static double window_z_exact(const double *x, size_t from, int32_t w, double *sum, double *m2)
{
    double s = 0.0;
    for (size_t i = from; i < from + (size_t)w; i++)
        s += x[i];
    double m = s / (double)w, ss = 0.0;
    for (size_t i = from; i < from + (size_t)w; i++)
        ss += (x[i] - m) * (x[i] - m);
    *sum = s;
    *m2 = ss;
    return m;
}

static void rolling_z_stale(const double *x, size_t n, int32_t w, double *out)
{
    size_t nan_count = 0, run = 0, since = 0, ws = (size_t)w;
    bool fresh = false;
    double sum = 0.0, mean = 0.0, m2 = 0.0;
    for (size_t t = 0; t < n; t++) {
        double xt = x[t];
        if (isnan(xt)) {
            nan_count++;
            run = 0;
        } else {
            run = t > 0 && xt == x[t - 1] ? run + 1 : 1;
        }
        if (t >= ws && isnan(x[t - ws]))
            nan_count--;
        if (t + 1 < ws || nan_count > 0 || run >= ws) {
            out[t] = NAN;
            fresh = false;
            continue;
        }
        bool exact = !fresh || since >= ws;
        if (!exact) {
            double xo = x[t - ws], old_mean = mean;
            sum += xt - xo;
            mean = sum / (double)w;
            m2 += (xt - xo) * ((xt - mean) + (xo - old_mean));
            since++;
            /* Near-flat: z hangs on the mean's last bits; exact there. The
             * missing rule: M2 fallen far below its peak (a spike left). */
            double scale = fabs(mean) * (double)w * 0x1p-22;
            exact = m2 / (double)w < scale * scale;
        }
        if (exact) {
            mean = window_z_exact(x, t + 1 - ws, w, &sum, &m2);
            since = 0;
            fresh = true;
        }
        double var = m2 / (double)w;
        out[t] = var == 0.0 ? NAN : (xt - mean) / sqrt(var);
    }
}

/* As fast_cpu's sweep uses its rolling z: a pre-filter with a margin of
 * 2^-20 (fast_cpu/indicators.h, sebt_k_z_prefilter), the exact z computed
 * only at the bars it lets through. Drift from ordinary rounding stays far
 * inside the margin; a spike that left the window unrecomputed does not,
 * and the bars it wrongly filters out lose their signal. Only a batch's
 * results carry it: features() stays the reference's, as in fast_cpu. */
static sebt_status stale_prefilter(const sebt_series *s, const sebt_params *p, sebt_features *f,
                                   sebt_error *err)
{
    size_t n = s->n;
    double *vz = malloc((n ? n : 1) * sizeof *vz), *tz = malloc((n ? n : 1) * sizeof *tz);
    if (!vz || !tz) {
        free(vz);
        free(tz);
        return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
    }
    rolling_z_stale(s->volume, n, p->z_window, vz);
    rolling_z_stale(f->atr, n, p->z_window, tz);
    double pv = p->vol_z - 0x1p-20 * fmax(1.0, fabs(p->vol_z));
    double pt = p->tr_z - 0x1p-20 * fmax(1.0, fabs(p->tr_z));
    for (size_t t = 0; t < n; t++)
        f->signal[t] = f->signal[t] && vz[t] > pv && tz[t] > pt;
    free(vz);
    free(tz);
    return SEBT_OK;
}

/* Which of SPEC §4's terms (sebt/strategy.def's order, which is
 * sebt_ref_signal_terms') a bug loosens to >=. */
static int loosened_term(bug_kind bug)
{
    switch (bug) {
    case BUG_SIG_EMA: return SEBT_TI_ema;
    case BUG_SIG_VOL: return SEBT_TI_vol_z;
    case BUG_SIG_TR: return SEBT_TI_tr_z;
    case BUG_SIG_CLOC: return SEBT_TI_cloc;
    default: return -1;
    }
}

static sebt_status mutant_features(const sebt_backend *self, const sebt_series *s,
                                   const sebt_params *p, sebt_features *f, sebt_error *err)
{
    bug_kind bug = self->state ? *(const bug_kind *)self->state : BUG_NONE;
    sebt_status st = sebt_features_check("mutant", s, p, f, err);
    if (st)
        return st;
    size_t n = s->n;
    sebt_ref_indicators(s, p, f);
    switch (bug) {
    case BUG_SMA:       /* the window mean of close: ATR's own rule */
        sebt_ref_atr(s->close, n, p->ema_fast, f->ema_f);
        sebt_ref_atr(s->close, n, p->ema_slow, f->ema_s);
        break;
    case BUG_EMA_SEED:
        ema_seeded(s, p->ema_fast, f->ema_f);
        ema_seeded(s, p->ema_slow, f->ema_s);
        break;
    case BUG_EMA_MISSING:
        hold_over_missing(s, f->ema_f);
        hold_over_missing(s, f->ema_s);
        break;
    case BUG_TR_HOLE:
    case BUG_FAR_HOLE:
        tr_across_holes(s, bug == BUG_FAR_HOLE ? MUTANT_FAR_BAR : 0, f->tr);
        sebt_ref_atr(f->tr, n, p->atr_window, f->atr);
        sebt_ref_zscore(f->atr, n, p->z_window, f->tr_z);
        break;
    case BUG_BLOCK_EDGE:
        atr_short_at_block_edges(f->tr, n, p->atr_window, f->atr);
        sebt_ref_zscore(f->atr, n, p->z_window, f->tr_z);
        break;
    case BUG_SAMPLE_VAR:
        sample_variance(f->vol_z, n, p->z_window);
        sample_variance(f->tr_z, n, p->z_window);
        break;
    default:
        break;
    }
    if (bug == BUG_RSI_OFF) {
        sebt_params q = *p;
        q.use_rsi = false;
        sebt_ref_decide_bars(f, &q);
    } else {
        sebt_ref_decide_bars(f, p);
    }
    int loose = loosened_term(bug);
    for (size_t t = 0; loose >= 0 && t < n; t++) {
        bool holds[SEBT_REF_SIGNAL_TERMS];
        double lhs[SEBT_REF_SIGNAL_TERMS], rhs[SEBT_REF_SIGNAL_TERMS];
        sebt_ref_signal_terms(f, p, t, holds, lhs, rhs);
        bool all = true;
        for (int i = 0; i < SEBT_REF_SIGNAL_TERMS; i++)
            all = all && (i == loose ? lhs[i] >= rhs[i] : holds[i]);
        f->signal[t] = all;
    }
    return SEBT_OK;
}

/* ---- simulation: the reference's walk, one decision bent --------------- */

typedef struct {
    bug_kind bug;
    const sebt_params *p;
} bend;

static int bent_decision(void *user, const sebt_ref_decision *d)
{
    const bend *b = user;
    if (d->kind == SEBT_REF_EXIT)
        return b->bug == BUG_TP_FIRST && d->hit[SEBT_EXIT_TP] ? SEBT_EXIT_TP : d->answer;
    if (d->kind != SEBT_REF_CHAIN)
        return d->answer;
    switch (d->reason) {
    case SEBT_EXIT_STOP_GAP: return b->bug == BUG_GAP_LT ? d->answer && d->lhs < d->rhs : d->answer;
    case SEBT_EXIT_STOP: return b->bug == BUG_STOP_LT ? d->answer && d->lhs < d->rhs : d->answer;
    case SEBT_EXIT_TP: return b->bug == BUG_TP_GT ? d->answer && d->lhs > d->rhs : d->answer;
    case SEBT_EXIT_TIME: return b->bug == BUG_HOLD ? d->answer && d->lhs >= d->rhs + 1 : d->answer;
    default: return d->answer;
    }
}

static bool bent_trade(void *user, sebt_trade *tr)
{
    const bend *b = user;
    if (b->bug == BUG_FEE_ONE_SIDE) {
        tr->pnl = tr->exit_price - tr->entry_price -
                  tr->entry_price * (b->p->fee_bp + b->p->slippage_bp) / 10000.0;
        tr->r = tr->pnl / tr->risk;
    }
    return true;
}

#define MAX_OPEN 64

/* The walks of another shape, from the reference's step: with overlap, a
 * signal while in a position opens another (up to MAX_OPEN); with
 * entry-bar exits, the entry bar is checked for an exit at once. */
static sebt_status reshaped_walk(const sebt_series *s, const sebt_params *p, const sebt_features *f,
                                 bug_kind bug, const sebt_ref_hook *hook, sebt_result *r,
                                 sebt_error *err)
{
    size_t k = 0;
    size_t *v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!v)
        return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
    for (size_t t = 0; t < s->n; t++)
        if (f->valid[t])
            v[k++] = t;
    r->valid_bars = k;

    oracle_trade_vec trades = { 0 };
    sebt_ref_position open[MAX_OPEN];
    size_t n_open = 0;
    bool ok = true;
    for (size_t i = 0; i + 1 < k && ok; i++) {
        size_t t = v[i], u = v[i + 1];
        /* Exits first (on bar u), for every open position. */
        size_t keep = 0;
        bool was_in = n_open > 0;
        for (size_t j = 0; j < n_open; j++) {
            sebt_trade tr;
            if (sebt_ref_step(s, f, p, hook, &open[j], t, u, &tr))
                ok = ok && oracle_trade_push(&trades, &tr);
            else
                open[keep++] = open[j];
        }
        n_open = keep;
        bool may_enter = bug == BUG_OVERLAP ? n_open < MAX_OPEN : !was_in;
        if (!may_enter)
            continue;
        sebt_ref_position q = { 0 };
        sebt_trade tr;
        sebt_ref_step(s, f, p, hook, &q, t, u, &tr);        /* flat: enters on a signal */
        if (!q.open)
            continue;
        if (bug == BUG_ENTRY_EXIT && sebt_ref_step(s, f, p, hook, &q, t, u, &tr))
            ok = ok && oracle_trade_push(&trades, &tr);
        else
            open[n_open++] = q;
    }
    free(v);
    if (!ok) {
        free(trades.v);
        return sebt_fail(err, SEBT_ERR_NOMEM, "mutant: out of memory");
    }
    memset(&r->open_at_end, 0, sizeof r->open_at_end);
    if (n_open)
        r->open_at_end = (sebt_open_position){ true, (int64_t)open[0].signal_bar,
                                               (int64_t)open[0].entry_bar, open[0].entry,
                                               open[0].stop, open[0].tp, open[0].risk, open[0].bars };
    r->n_trades = trades.n;
    r->trades = trades.v;
    return SEBT_OK;
}

/* f is the batch's own copy: the warm-up bug may rewrite its valid column. */
static sebt_status simulate(const sebt_series *s, const sebt_params *p, sebt_features *f,
                            bug_kind bug, sebt_result *r, sebt_error *err)
{
    /* Warm-up not dropped: every present bar is walked (SPEC §5's K counts
     * them too, as a backend that keeps its warm-up rows reports). */
    if (bug == BUG_WARMUP)
        for (size_t t = 0; t < s->n; t++)
            f->valid[t] = present(s, t);
    bend b = { bug, p };
    sebt_ref_hook hook = { .user = &b, .decide = bent_decision, .closed = bent_trade };
    sebt_status st = bug == BUG_OVERLAP || bug == BUG_ENTRY_EXIT
                         ? reshaped_walk(s, p, f, bug, &hook, r, err)
                         : sebt_ref_walk(s, f, p, &hook, r, err);
    if (st)
        return st;
    sebt_ref_metrics(r->trades, r->n_trades, &r->metrics);
    if (bug == BUG_DD_ZERO) {
        double cum = 0.0, peak = 0.0, dd = 0.0;
        for (size_t i = 0; i < r->n_trades; i++) {
            cum += r->trades[i].pnl;
            peak = cum > peak ? cum : peak;
            dd = fmin(dd, cum - peak);
        }
        r->metrics.max_dd = dd;
    }
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
    sebt_status st = sebt_batch_check("mutant", s, combos, n_combos, results, err);
    if (st)
        return st;
    sebt_features f;
    st = sebt_features_alloc(&f, s->n, err);
    if (st)
        return st;
    size_t per = batch_size(s, opts, n_combos), batches = 0;
    for (size_t b0 = 0; b0 < n_combos && st == SEBT_OK; b0 += per) {
        batches++;
        for (size_t i = b0; i < n_combos && i < b0 + per && st == SEBT_OK; i++) {
            size_t which = bug == BUG_BATCH_RESTART ? i - b0 : i;
            st = mutant_features(self, s, &combos[which], &f, err);
            if (st == SEBT_OK && bug == BUG_Z_STALE)
                st = stale_prefilter(s, &combos[which], &f, err);
            if (st == SEBT_OK)
                st = simulate(s, &combos[which], &f, bug, &results[i], err);
            if (st == SEBT_OK && !(opts && opts->want_trades)) {
                free(results[i].trades);
                results[i].trades = NULL;
            }
        }
    }
    sebt_features_free(&f);
    /* The caller frees only its array when the call fails (oracle's
     * run_check): the earlier combos' trades are ours to free. */
    if (st)
        sebt_results_free(results, n_combos);
    if (opts && opts->stats)
        *opts->stats = (sebt_batch_stats){ .threads_used = 1, .batches = batches, .chunks = 0,
                                           .blocks = (s->n + MUTANT_ATR_BLOCK - 1) / MUTANT_ATR_BLOCK };
    return st;
}

static const bug_kind bug_values[] = {
    BUG_NONE, BUG_SMA, BUG_EMA_SEED, BUG_WARMUP, BUG_OVERLAP, BUG_TP_FIRST, BUG_ENTRY_EXIT, BUG_HOLD,
    BUG_BATCH_RESTART, BUG_BLOCK_EDGE, BUG_EMA_MISSING, BUG_TR_HOLE, BUG_SIG_EMA, BUG_SIG_VOL,
    BUG_SIG_TR, BUG_SIG_CLOC, BUG_GAP_LT, BUG_STOP_LT, BUG_TP_GT, BUG_DD_ZERO, BUG_SAMPLE_VAR,
    BUG_FEE_ONE_SIDE, BUG_Z_STALE, BUG_FAR_HOLE, BUG_RSI_OFF,
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
    MUTANT(22, "z_stale"), MUTANT(23, "far_hole"), MUTANT(24, "rsi_off"),
};
_Static_assert(sizeof mutant_backends / sizeof mutant_backends[0] + 1 ==
               sizeof bug_values / sizeof bug_values[0], "one bug value per mutant");
#undef MUTANT

size_t sebt_mutant_count(void) { return N_MUTANTS + oracle_sweep_mutant_count(); }

const sebt_backend *sebt_mutant_at(size_t i)
{
    return i < N_MUTANTS ? &mutant_backends[i] : oracle_sweep_mutant_at(i - N_MUTANTS);
}

const char *sebt_mutant_bug(size_t i) { return i < N_MUTANTS ? mutant_infos[i].what : oracle_sweep_mutant_bug(i - N_MUTANTS); }

const char *sebt_mutant_needs(size_t i)
{
    return i < N_MUTANTS ? mutant_infos[i].needs : oracle_sweep_mutant_needs(i - N_MUTANTS);
}

bool sebt_mutant_big_first(size_t i) { return i < N_MUTANTS && mutant_infos[i].big_first; }

const char *sebt_mutant_parity_blind(size_t i)
{
    return i < N_MUTANTS ? NULL : oracle_sweep_mutant_parity_blind(i - N_MUTANTS);
}

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
    for (size_t i = 0; i < oracle_sweep_mutant_count(); i++)
        if (strcmp(bare, oracle_sweep_mutant_name(i)) == 0) {
            *out = oracle_sweep_mutant_at(i);
            return SEBT_OK;
        }
    char names[1400] = "";
    size_t used = 0;
    for (size_t i = 0; i < sebt_mutant_count() && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", sebt_mutant_at(i)->name);
    *out = NULL;
    return sebt_fail(err, SEBT_ERR_USAGE, "unknown mutant '%s' (valid: %s)", name, names);
}
