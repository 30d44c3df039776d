/* The per-combo backtest (SPEC §4-7) shared by fast_cpu and the cuda backend.
 *
 * HOW TO USE IT (gpu/): #include "combo_kernel.h" from a .cu file (add
 * ${PROJECT_SOURCE_DIR}/fast_cpu to the include path) and compile with
 * -fmad=false. Everything here is a `static inline SEBT_HD` function over
 * plain arrays: no malloc, no OpenMP, no libc beyond <math.h>, so nvcc
 * compiles it as host and device code and both give the bits fast_cpu gives.
 *
 * What a sweep prepares once, then hands to every combo (fast_cpu/sweep.c
 * shows the whole recipe; the indicator columns come from indicators.h):
 *   sebt_k_market  the series plus two search trees (min of low, min of
 *                  -high) built by sebt_k_tree_build_level, shared by all;
 *   sebt_k_valid   per atr_window: valid mask, rank of each bar among the
 *                  valid bars, and the valid bars themselves (SPEC §5);
 *   sebt_k_cands   per indicator key (ema_fast, ema_slow, z_window,
 *                  atr_window): the bars where ema_f < ema_s and vol_z,
 *                  tr_z, cloc beat the loosest thresholds of the combos
 *                  sharing the key, with those values and ATR beside them.
 * Then sebt_k_run_combo(&market, &valid, &cands, &params, trades, cap, &res)
 * runs one combo: it jumps from candidate to candidate and finds each exit
 * with the trees instead of walking bar by bar.
 *
 * Why it is exact for the simulation: "next bar" means the next valid bar,
 * and for a present bar low <= open, so the first valid bar with
 * low <= stop is the first bar where either stop rule fires; SPEC's priority
 * (stop_gap, stop, tp, time) is then settled on the earliest bar found. */
#ifndef SEBT_COMBO_KERNEL_H
#define SEBT_COMBO_KERNEL_H

#include <math.h>
#include <stdint.h>

#include "sebt/types.h"

#ifdef __CUDACC__
#define SEBT_HD __host__ __device__
#else
#define SEBT_HD
#endif

/* Search tree: level 0 is the raw column (NaN never matches); level L+1
 * holds the minimum of each group of 16 entries of level L, ignoring NaN
 * (a group of NaN only is +inf). */
#define SEBT_K_FAN_BITS 4
#define SEBT_K_FAN (1 << SEBT_K_FAN_BITS)
#define SEBT_K_MAX_LEVELS 9

typedef struct {
    int nlev;
    int64_t len[SEBT_K_MAX_LEVELS];
    const double *lev[SEBT_K_MAX_LEVELS];
} sebt_k_tree;

typedef struct {
    int64_t n;
    const double *open, *high, *low, *close;
    sebt_k_tree low_min;       /* over low */
    sebt_k_tree neg_high_min;  /* over -high: high >= tp  <=>  -high <= -tp */
} sebt_k_market;

typedef struct {
    const uint8_t *valid;      /* n: ATR(atr_window) defined */
    const int32_t *rank;       /* n: number of valid bars before t */
    const int32_t *vbar;       /* n_valid: the valid bars, ascending */
    int64_t n_valid;
} sebt_k_valid;

typedef struct {
    int64_t n;
    const int32_t *bar;        /* ascending */
    const double *vol_z, *tr_z, *cloc, *atr;
} sebt_k_cands;

/* Fills level `lev` (len entries) from the level below (below_len entries). */
SEBT_HD static inline void sebt_k_tree_build_level(const double *below, int64_t below_len,
                                                   double *out, int64_t len)
{
    for (int64_t g = 0; g < len; g++) {
        double m = INFINITY;
        int64_t end = (g + 1) * SEBT_K_FAN < below_len ? (g + 1) * SEBT_K_FAN : below_len;
        for (int64_t i = g * SEBT_K_FAN; i < end; i++)
            if (below[i] < m)
                m = below[i];
        out[g] = m;
    }
}

/* First index j in [a, b] with tree level 0 value <= x, or -1. Climbs while
 * the current group has no match, then descends into the matching group:
 * O(log distance) tree reads. */
SEBT_HD static inline int64_t sebt_k_first_le(const sebt_k_tree *tr, int64_t a, int64_t b, double x)
{
    if (a > b)
        return -1;
    int64_t p = a;
    int L = 0;
    for (;;) {
        int64_t group_end = p | (SEBT_K_FAN - 1);
        int64_t bound = b >> (SEBT_K_FAN_BITS * L);   /* last entry starting at or before b */
        int64_t end = group_end < bound ? group_end : bound;
        if (end > tr->len[L] - 1)
            end = tr->len[L] - 1;
        const double *lev = tr->lev[L];
        for (; p <= end; p++)
            if (lev[p] <= x)
                goto descend;
        /* Past b, past the end of this level, or at the top: nothing further. */
        if (p > bound || p >= tr->len[L] || L + 1 >= tr->nlev)
            return -1;
        p >>= SEBT_K_FAN_BITS;  /* p was the first entry of the next group */
        L++;
    }
descend:
    while (L > 0) {
        L--;
        p <<= SEBT_K_FAN_BITS;
        int64_t end = p + SEBT_K_FAN < tr->len[L] ? p + SEBT_K_FAN : tr->len[L];
        while (p < end - 1 && !(tr->lev[L][p] <= x))
            p++;
    }
    return p <= b ? p : -1;
}

/* As sebt_k_first_le, skipping bars that are not valid (the present bars
 * of a warm-up after a hole). */
SEBT_HD static inline int64_t sebt_k_first_valid_le(const sebt_k_tree *tr, const uint8_t *valid,
                                                    int64_t a, int64_t b, double x)
{
    while (a <= b) {
        int64_t j = sebt_k_first_le(tr, a, b, x);
        if (j < 0 || valid[j])
            return j;
        a = j + 1;
    }
    return -1;
}

/* What the simulation hands each trade to. On the first pass it keeps the
 * running metrics and stores trades and R values while they fit; on the
 * second (ss_pass) it only sums squared deviations of R around mean_r. */
typedef struct {
    int ss_pass;
    double mean_r, ss;
    int64_t n, wins;
    double sum_r, total, cum, peak, max_dd;
    sebt_trade *trades;
    int64_t cap;
    double *rbuf;
    int64_t rcap;
} sebt_k_acc;

SEBT_HD static inline void sebt_k_acc_trade(sebt_k_acc *a, const sebt_trade *tr)
{
    if (a->ss_pass) {
        a->ss += (tr->r - a->mean_r) * (tr->r - a->mean_r);
        return;
    }
    if (a->n < a->cap)
        a->trades[a->n] = *tr;
    if (a->n < a->rcap)
        a->rbuf[a->n] = tr->r;
    a->n++;
    if (tr->pnl > 0)
        a->wins++;
    a->sum_r += tr->r;
    a->total += tr->pnl;
    /* Same drawdown rule as SPEC §7: the running maximum starts at the
     * first trade's cumulative pnl, not at 0. */
    a->cum += tr->pnl;
    if (a->n == 1 || a->cum > a->peak)
        a->peak = a->cum;
    if (a->cum - a->peak < a->max_dd)
        a->max_dd = a->cum - a->peak;
}

/* SPEC §6 for one combo, jumping from candidate to candidate. */
SEBT_HD static inline void sebt_k_simulate(const sebt_k_market *m, const sebt_k_valid *v,
                                           const sebt_k_cands *c, const sebt_params *p,
                                           sebt_k_acc *acc, sebt_open_position *open_at_end)
{
    int64_t K = v->n_valid;
    int64_t last = K > 0 ? v->vbar[K - 1] : -1;
    double cost_bp = p->fee_bp + p->slippage_bp;
    sebt_open_position none = { false, 0, 0, 0.0, 0.0, 0.0, 0.0, 0 };
    *open_at_end = none;

    int64_t i = 0;
    while (i < c->n) {
        if (!(c->vol_z[i] > p->vol_z && c->tr_z[i] > p->tr_z && c->cloc[i] > p->cloc_min)) {
            i++;
            continue;
        }
        int64_t t = c->bar[i];
        int64_t ru = (int64_t)v->rank[t] + 1;       /* rank of the entry bar */
        if (ru > K - 1)
            break;                                   /* t is the last valid bar */
        int64_t u = v->vbar[ru];
        double entry = m->open[u];
        double stop = p->use_stop ? m->low[t] - p->atr_stop_mult * c->atr[i] : 0.0;
        double risk;
        if (p->use_stop) {
            double d = entry - stop;
            risk = d > 1e-8 ? d : 1e-8;
        } else {
            risk = entry * 0.01;
        }
        double tp = p->use_tp ? entry + p->reward_r * risk : 0.0;

        int64_t time_rank = ru + (int64_t)p->max_hold;
        int has_time = p->use_time && time_rank <= K - 1;
        int64_t limit = has_time ? v->vbar[time_rank] : last;
        int64_t exit_bar = -1;
        sebt_exit_reason reason = SEBT_EXIT_TIME;
        double exit_price = 0.0;
        if (p->use_stop) {
            int64_t j = sebt_k_first_valid_le(&m->low_min, v->valid, u + 1, limit, stop);
            if (j >= 0) {
                exit_bar = j;
                limit = j - 1;   /* a target on the same bar loses to the stop */
                if (m->open[j] <= stop) {
                    reason = SEBT_EXIT_STOP_GAP;
                    exit_price = m->open[j];
                } else {
                    reason = SEBT_EXIT_STOP;
                    exit_price = stop;
                }
            }
        }
        if (p->use_tp && tp > 0) {
            int64_t j = sebt_k_first_valid_le(&m->neg_high_min, v->valid, u + 1, limit, -tp);
            if (j >= 0) {
                exit_bar = j;
                reason = SEBT_EXIT_TP;
                exit_price = tp;
            }
        }
        if (exit_bar < 0 && has_time) {
            exit_bar = v->vbar[time_rank];
            reason = SEBT_EXIT_TIME;
            exit_price = m->close[exit_bar];
        }
        if (exit_bar < 0) {
            open_at_end->open = true;
            open_at_end->signal_index = t;
            open_at_end->entry_index = u;
            open_at_end->entry_price = entry;
            open_at_end->stop = stop;
            open_at_end->tp = tp;
            open_at_end->risk = risk;
            open_at_end->bars_held = (int32_t)(K - 1 - ru);
            break;
        }

        double fee = (entry + exit_price) * cost_bp / 10000.0;
        double pnl = exit_price - entry - fee;
        sebt_trade tr;
        tr.signal_index = t;
        tr.entry_index = u;
        tr.exit_index = exit_bar;
        tr.entry_price = entry;
        tr.exit_price = exit_price;
        tr.stop = stop;
        tr.tp = tp;
        tr.risk = risk;
        tr.pnl = pnl;
        tr.r = pnl / risk;
        tr.reason = reason;
        tr.bars_held = (int32_t)((int64_t)v->rank[exit_bar] - ru);
        sebt_k_acc_trade(acc, &tr);

        /* A signal on the exit bar may open the next trade: skip to the
         * first candidate at or after it, galloping then bisecting. */
        int64_t lo = i + 1, step = 1;
        while (lo < c->n && c->bar[lo] < exit_bar) {
            int64_t hi = lo + step;
            if (hi >= c->n || c->bar[hi] >= exit_bar) {
                int64_t a = lo + 1, b = hi < c->n ? hi : c->n;
                while (a < b) {
                    int64_t mid = a + (b - a) / 2;
                    if (c->bar[mid] < exit_bar)
                        a = mid + 1;
                    else
                        b = mid;
                }
                lo = a;
                break;
            }
            lo = hi;
            step *= 2;
        }
        i = lo;
    }
}

/* One combo over the prepared sweep: SPEC §6-7, every field the same bits
 * as the reference given the same indicator values. Trades go to
 * trades[0 .. cap) (NULL/0 for metrics only); out->n_trades counts all of
 * them, so a caller whose buffer was short sees it and runs again;
 * out->trades is left alone. The sharpe ratio is summed in two passes, as
 * SPEC §7 (and the reference) does: over rbuf[0 .. rcap) or the trades when
 * they fit, else by simulating the combo a second time (what a GPU thread
 * without a buffer does; the bits are the same either way). */
SEBT_HD static inline void sebt_k_run_combo(const sebt_k_market *m, const sebt_k_valid *v,
                                            const sebt_k_cands *c, const sebt_params *p,
                                            sebt_trade *trades, int64_t cap, double *rbuf,
                                            int64_t rcap, sebt_result *out)
{
    sebt_k_acc acc = { 0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, trades, trades ? cap : 0,
                       rbuf, rbuf ? rcap : 0 };
    sebt_k_simulate(m, v, c, p, &acc, &out->open_at_end);

    int64_t n = acc.n;
    out->valid_bars = (size_t)v->n_valid;
    out->n_trades = (size_t)n;
    out->metrics.n = n;
    out->metrics.win_rate = 0.0;
    out->metrics.avg_r = 0.0;
    out->metrics.total_pnl = 0.0;
    out->metrics.max_dd = 0.0;
    out->metrics.sharpe = 0.0;
    if (n == 0)
        return;
    double mean_r = acc.sum_r / (double)n;
    double sharpe = 0.0;
    if (n >= 2) {
        double ss = 0.0;
        if (n <= acc.rcap) {
            for (int64_t k = 0; k < n; k++)
                ss += (rbuf[k] - mean_r) * (rbuf[k] - mean_r);
        } else if (n <= acc.cap) {
            for (int64_t k = 0; k < n; k++)
                ss += (trades[k].r - mean_r) * (trades[k].r - mean_r);
        } else {
            sebt_k_acc second = acc;
            sebt_open_position ignored;
            second.ss_pass = 1;
            second.mean_r = mean_r;
            second.ss = 0.0;
            sebt_k_simulate(m, v, c, p, &second, &ignored);
            ss = second.ss;
        }
        double sd = sqrt(ss / (double)(n - 1));
        if (sd != 0.0)
            sharpe = mean_r / sd;
    }
    out->metrics.win_rate = (double)acc.wins / (double)n;
    out->metrics.avg_r = mean_r;
    out->metrics.total_pnl = acc.total;
    out->metrics.max_dd = acc.max_dd;
    out->metrics.sharpe = sharpe;
}

#endif
