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
 *   sebt_k_union   per atr_window: U, the bars where some combo could
 *                  signal (decided on the reference's bits), ATR there;
 *   sebt_k_sigbits per combo: a bitset over U per signal term (EMA pair, vol_z, tr_z,
 *                  cloc thresholds), ANDed on the fly;
 *   sebt_k_memo    per exit key: for each candidate of U, the next candidate
 *                  after its trade's exit, its pnl and R.
 * sebt_k_trade_exits (sebt_k_trade_at) is SPEC §6 for the trade one signal
 * opens (the one place the exit rules live; its pnl after costs is
 * sebt_k_trade_pnl); sebt_k_run_combo_hop runs a combo by hops through the
 * memo (filled lazily on the CPU, up front on a device) and finishes its
 * SPEC §7 metrics (sebt_k_finish). Combos differing only in costs share
 * their hops (sebt_k_walk, sebt_k_run_combo_path).
 *
 * Why it is exact for the simulation: "next bar" means the next valid bar,
 * and for a present bar low <= open, so the first valid bar with
 * low <= stop is the first bar where either stop rule fires; SPEC's priority
 * (stop_gap, stop, tp, time) is then settled on the earliest bar found. */
#ifndef SEBT_COMBO_KERNEL_H
#define SEBT_COMBO_KERNEL_H

#include <math.h>
#include <stdint.h>

#include "sebt/analysis.h"
#include "sebt/types.h"

#ifdef __CUDACC__
#define SEBT_HD __host__ __device__
#define SEBT_K_HOT   /* device code inlines these anyway */
#else
#define SEBT_HD
#define SEBT_K_HOT __attribute__((always_inline))
#endif
/* SEBT_K_HOT: what every hop runs stays inlined into its loop however large
 * the caller grows (a call per hop cost fast_cpu a third of its speed). */

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
    sebt_trade_tally *tally;   /* NULL: no analysis tally (sebt_k_acc_tally); else where t goes */
    sebt_trade_tally t;        /* summed here, beside the rest, and stored once (sebt_k_acc_tally_out):
                                * summed through the pointer, every hop reloaded it and its sums */
    int32_t *jbuf;             /* NULL, or each closed trade's candidate of U, in trade order (rcap of
                                * them): where its exit lies, for a sweep's overfit block sums */
} sebt_k_acc;

/* One closed trade's pnl and R, in the order SPEC §7 sums them; tr (may be
 * NULL) is stored while the trade buffer has room. */
SEBT_HD SEBT_K_HOT static inline void sebt_k_acc_add(sebt_k_acc *a, double pnl, double r, const sebt_trade *tr)
{
    if (a->ss_pass) {
        a->ss += (r - a->mean_r) * (r - a->mean_r);
        return;
    }
    if (tr && a->n < a->cap)
        a->trades[a->n] = *tr;
    if (a->n < a->rcap)
        a->rbuf[a->n] = r;
    a->n++;
    if (pnl > 0)
        a->wins++;
    a->sum_r += r;
    a->total += pnl;
    /* Same drawdown rule as SPEC §7: the running maximum starts at the
     * first trade's cumulative pnl, not at 0. */
    a->cum += pnl;
    if (a->n == 1 || a->cum > a->peak)
        a->peak = a->cum;
    if (a->cum - a->peak < a->max_dd)
        a->max_dd = a->cum - a->peak;
}

/* How candidate j's trade closed, beside its memo entry, for the tally of
 * a sweep's analysis columns (sebt_k_acc_tally). */
typedef struct {
    int32_t bars_held;
    int32_t reason;            /* sebt_exit_reason */
    int32_t exit_bar;          /* its bar index (a union's bars are int32): a sweep's overfit block */
} sebt_k_memo_exit;

/* One closed trade into the analysis tally (sebt/analysis.h), summed in
 * trade order as sebt_trade_stats_of sums a combo's trades: the same bits.
 * Not on a Sharpe's second pass, which walks the trades again. */
SEBT_HD SEBT_K_HOT static inline void sebt_k_acc_tally(sebt_k_acc *a, double pnl, const sebt_k_memo_exit *x)
{
    if (a->ss_pass || !a->tally)
        return;
    sebt_trade_tally *t = &a->t;
    /* Compares, not an index: a kept index into the accumulator's array
     * would put the whole accumulator in a GPU thread's local memory. */
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        t->exits[k] += x->reason == k;
    /* Selects, not branches: whether a trade wins is a coin toss the branch
     * predictor misses. Adding +0.0 leaves either sum's bits as
     * sebt_trade_stats_of's branches leave them: neither sum is ever -0.0
     * (both start at +0.0, one takes only gains, the other only losses). */
    t->gross_profit += pnl > 0 ? pnl : 0.0;
    t->gross_loss += pnl < 0 ? pnl : 0.0;
    t->bars_in_market += (int64_t)x->bars_held + 1;
}

/* The tally a combo's walk summed, to where sebt_k_acc_start was told. */
SEBT_HD static inline void sebt_k_acc_tally_out(const sebt_k_acc *a)
{
    if (a->tally)
        *a->tally = a->t;
}

SEBT_HD static inline void sebt_k_acc_trade(sebt_k_acc *a, const sebt_trade *tr)
{
    sebt_k_acc_add(a, tr->pnl, tr->r, tr);
}

/* Whether a caller of sebt_k_acc_add wants the whole trade. */
SEBT_HD static inline int sebt_k_acc_wants_trade(const sebt_k_acc *a)
{
    return !a->ss_pass && a->n < a->cap;
}

/* A closed trade's pnl after fees and slippage (SPEC §6): the one place the
 * kernel computes it. Nothing else in a trade depends on fee_bp or
 * slippage_bp, which is what lets combos differing only there share a walk
 * (sebt_k_walk). */
SEBT_HD static inline double sebt_k_trade_pnl(const sebt_params *p, double entry, double exit_price)
{
    double fee = (entry + exit_price) * (p->fee_bp + p->slippage_bp) / 10000.0;
    return exit_price - entry - fee;
}

/* Where a trade's exits lie: the first valid bar after its entry bar u where
 * the stop fires (stop_bar: low <= stop) and the first before that where the
 * target does (tp_bar: high >= tp), searched up to bar limit; -1: none. The
 * stop bar ending the target's search is the only way one exit depends on
 * the other, so exits searched up to the last valid bar serve every time
 * limit: a first bar overall is the first under a limit when it lies at or
 * before it (sebt_k_trade_exits settles that). */
typedef struct {
    int64_t stop_bar, tp_bar;
} sebt_k_exits;

SEBT_HD static inline sebt_k_exits sebt_k_find_exits(const sebt_k_market *m, const sebt_k_valid *v,
                                                     const sebt_params *p, int64_t u, int64_t limit, double stop,
                                                     double tp)
{
    sebt_k_exits e = { -1, -1 };
    if (p->use_stop)
        e.stop_bar = sebt_k_first_valid_le(&m->low_min, v->valid, u + 1, limit, stop);
    if (p->use_tp && tp > 0)   /* a target on the stop's bar loses to the stop */
        e.tp_bar = sebt_k_first_valid_le(&m->neg_high_min, v->valid, u + 1,
                                         e.stop_bar >= 0 ? e.stop_bar - 1 : limit, -tp);
    return e;
}

/* The trade opened by a signal on valid bar t (SPEC §6), whose ATR is
 * atr_t. Everything in it depends on t, the atr_window (the valid bars) and
 * the exit parameters only, never on the signal thresholds or the other
 * windows: that is what lets a sweep share it between combos (the memo
 * below). Returns 1 with *tr filled when the trade closes, 0 with *open
 * filled when it is still open after the last valid bar, -1 when t is the
 * last valid bar (no bar to enter on: the loop of SPEC §6 ends).
 *
 * The exits are found with the search trees: "next bar" means the next
 * valid bar, and for a present bar low <= open, so the first valid bar with
 * low <= stop is the first bar where either stop rule fires; SPEC's
 * priority (stop_gap, stop, tp, time) is then settled on the earliest bar.
 *
 * exits: NULL, the searches stop at the trade's time limit. Otherwise they
 * run to the last valid bar, which every max_hold and use_time of this
 * stop and target shares (sebt_k_find_exits): *exits is what they found
 * when `known`, else they are run and stored there. */
SEBT_HD static inline int sebt_k_trade_exits(const sebt_k_market *m, const sebt_k_valid *v, int64_t t, double atr_t,
                                             const sebt_params *p, sebt_k_exits *exits, int known, sebt_trade *tr,
                                             sebt_open_position *open)
{
    int64_t K = v->n_valid;
    int64_t ru = (int64_t)v->rank[t] + 1;       /* rank of the entry bar */
    if (ru > K - 1)
        return -1;
    int64_t last = v->vbar[K - 1];
    int64_t u = v->vbar[ru];
    double entry = m->open[u];
    double stop = p->use_stop ? m->low[t] - p->atr_stop_mult * atr_t : 0.0;
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
    sebt_k_exits e;
    if (!exits)
        e = sebt_k_find_exits(m, v, p, u, limit, stop, tp);
    else if (known)
        e = *exits;
    else
        e = *exits = sebt_k_find_exits(m, v, p, u, last, stop, tp);
    int64_t exit_bar = -1;
    sebt_exit_reason reason = SEBT_EXIT_TIME;
    double exit_price = 0.0;
    if (e.stop_bar >= 0 && e.stop_bar <= limit) {
        int64_t j = e.stop_bar;
        exit_bar = j;
        limit = j - 1;
        if (m->open[j] <= stop) {
            reason = SEBT_EXIT_STOP_GAP;
            exit_price = m->open[j];
        } else {
            reason = SEBT_EXIT_STOP;
            exit_price = stop;
        }
    }
    if (e.tp_bar >= 0 && e.tp_bar <= limit) {
        exit_bar = e.tp_bar;
        reason = SEBT_EXIT_TP;
        exit_price = tp;
    }
    if (exit_bar < 0 && has_time) {
        exit_bar = v->vbar[time_rank];
        reason = SEBT_EXIT_TIME;
        exit_price = m->close[exit_bar];
    }
    if (exit_bar < 0) {
        if (open) {
            open->open = true;
            open->signal_index = t;
            open->entry_index = u;
            open->entry_price = entry;
            open->stop = stop;
            open->tp = tp;
            open->risk = risk;
            open->bars_held = (int32_t)(K - 1 - ru);
        }
        return 0;
    }
    double pnl = sebt_k_trade_pnl(p, entry, exit_price);
    tr->signal_index = t;
    tr->entry_index = u;
    tr->exit_index = exit_bar;
    tr->entry_price = entry;
    tr->exit_price = exit_price;
    tr->stop = stop;
    tr->tp = tp;
    tr->risk = risk;
    tr->pnl = pnl;
    tr->r = pnl / risk;
    tr->reason = reason;
    tr->bars_held = (int32_t)((int64_t)v->rank[exit_bar] - ru);
    return 1;
}

/* The trade opened by a signal on valid bar t: sebt_k_trade_exits with its
 * searches stopping at its time limit. */
SEBT_HD static inline int sebt_k_trade_at(const sebt_k_market *m, const sebt_k_valid *v, int64_t t, double atr_t,
                                          const sebt_params *p, sebt_trade *tr, sebt_open_position *open)
{
    return sebt_k_trade_exits(m, v, t, atr_t, p, NULL, 0, tr, open);
}

/* ---- the shared-sweep form: candidate union, bitsets, exit memo ---------

 * For one atr_window, a sweep gathers U: every valid bar where some combo
 * of the batch could signal (ascending), with ATR there. A combo's signal
 * bars are a subset of U, given as the AND of four bitsets over U's
 * indices (ema_f < ema_s for its EMA pair; vol_z > its threshold; tr_z >
 * its threshold; cloc > its cloc_min), each computed on the reference's
 * bits. An exit key (atr_window and the exit parameters) shares one memo
 * over U: for candidate j, where the trade opened there exits, its pnl and
 * R, and `next`, the first index of U at or after the exit bar. A combo
 * then hops from signal to memo entry to the next signal: O(1) per trade. */
typedef struct {
    int64_t n;
    const int32_t *bar;        /* ascending */
    const double *atr;         /* ATR(atr_window) at each bar of U */
} sebt_k_union;

/* A row per signal term of sebt/strategy.def (w[SEBT_TI_<name>]), ANDed;
 * for a term a combo switches off, a row of ones or a row already ANDed.
 * filters_on false says every entry filter (SEBT_FILTER) is off: the hop
 * then ANDs only the terms that always hold a place, as it did before a
 * filter existed (true is always correct, and only slower). */
typedef struct {
    const uint64_t *w[SEBT_N_TERMS];
    bool filters_on;
} sebt_k_sigbits;

#define SEBT_K_MEMO_OPEN (-1)      /* still open after the last valid bar */
#define SEBT_K_MEMO_NO_ENTRY (-2)  /* signal on the last valid bar */

/* The memo in two arrays: the links a hop waits on (8 bytes a candidate, so
 * a whole U stays in a core's cache) and the values it only adds up. */
typedef struct {
    int32_t next;              /* first index of U at or after the exit bar,
                                * or SEBT_K_MEMO_OPEN / SEBT_K_MEMO_NO_ENTRY */
    uint32_t stamp;            /* the epoch it was filled in (lazy memos) */
} sebt_k_memo_link;

typedef struct {
    double pnl, r;
} sebt_k_memo_val;

/* Exits searched to the last valid bar (sebt_k_trade_exits), which the
 * exit keys of one stop and target (differing in max_hold, use_time or
 * costs) share: candidate j's are known when stamp[j] is epoch. Optional:
 * without it (e NULL, as on a device) each trade searches up to its own
 * time limit. */
typedef struct {
    sebt_k_exits *e;
    uint32_t *stamp;
    uint32_t epoch;
} sebt_k_raw_exits;

/* ex (may be NULL): how each candidate's trade closed, filled with its
 * link, for combos that keep an analysis tally. */
typedef struct {
    sebt_k_memo_link *link;
    sebt_k_memo_val *val;
    sebt_k_raw_exits raw;
    sebt_k_memo_exit *ex;
} sebt_k_memo;

#ifdef __CUDA_ARCH__
#define SEBT_K_CTZ64(x) (__ffsll((long long)(x)) - 1)
#else
#define SEBT_K_CTZ64(x) __builtin_ctzll(x)
#endif

/* Word w of the AND of every term's row: one `&` per row of the
 * declaration, spelled out at compile time (no loop in the hop); the
 * filters' rows only with_filters, a constant where it is inlined. */
SEBT_HD SEBT_K_HOT static inline uint64_t sebt_k_signal_word(const sebt_k_sigbits *s, int64_t w, bool with_filters)
{
    (void)with_filters;
    return ~(uint64_t)0
#define SEBT_TERM(name, column, cmp, rhs_kind, rhs, enable) & s->w[SEBT_TI_##name][w]
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) & (with_filters ? s->w[SEBT_TI_##name][w] : ~(uint64_t)0)
#include "sebt/strategy.def"
        ;
}

SEBT_HD SEBT_K_HOT static inline int64_t sebt_k_next_signal_in(const sebt_k_sigbits *s, int64_t j, int64_t u_n,
                                                               bool with_filters)
{
    if (j >= u_n)
        return u_n;
    int64_t w = j >> 6, nw = (u_n + 63) >> 6;
    uint64_t word = sebt_k_signal_word(s, w, with_filters);
    word &= ~(uint64_t)0 << (j & 63);
    while (!word) {
        if (++w >= nw)
            return u_n;
        word = sebt_k_signal_word(s, w, with_filters);
    }
    int64_t r = (w << 6) + SEBT_K_CTZ64(word);
    return r < u_n ? r : u_n;
}

/* First index >= j of U where every term's bitset is set, or u_n. */
SEBT_HD SEBT_K_HOT static inline int64_t sebt_k_next_signal(const sebt_k_sigbits *s, int64_t j, int64_t u_n)
{
    return s->filters_on ? sebt_k_next_signal_in(s, j, u_n, true) : sebt_k_next_signal_in(s, j, u_n, false);
}

/* The first candidate at or after a trade's exit bar (a signal there may
 * open the next trade): past j, the candidate that opened it, since the
 * exit is after the signal. */
SEBT_HD static inline int32_t sebt_k_memo_next(const sebt_k_union *u, int64_t j, int64_t exit_index)
{
    int64_t a = j + 1, b = u->n;
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (u->bar[mid] < exit_index)
            a = mid + 1;
        else
            b = mid;
    }
    return (int32_t)a;
}

typedef struct {
    double entry, exit_price, risk;
} sebt_k_memo_geom;

/* What candidate j's memo entry holds before costs: where its trade's
 * exit leads (link) and the prices its pnl comes from; raw (may be NULL)
 * as in sebt_k_memo; x (may be NULL): how the trade closes. */
SEBT_HD static inline void sebt_k_memo_fill_geom(const sebt_k_market *m, const sebt_k_valid *v,
                                                 const sebt_k_union *u, const sebt_params *p, int64_t j,
                                                 const sebt_k_raw_exits *raw, sebt_k_memo_link *link,
                                                 sebt_k_memo_geom *g, sebt_k_memo_exit *x)
{
    sebt_trade tr;
    int st;
    if (raw && raw->e) {
        st = sebt_k_trade_exits(m, v, u->bar[j], u->atr[j], p, &raw->e[j], raw->stamp[j] == raw->epoch, &tr, NULL);
        raw->stamp[j] = raw->epoch;
    } else {
        st = sebt_k_trade_at(m, v, u->bar[j], u->atr[j], p, &tr, NULL);
    }
    if (st <= 0) {
        link->next = st < 0 ? SEBT_K_MEMO_NO_ENTRY : SEBT_K_MEMO_OPEN;
        g->entry = g->exit_price = g->risk = 0.0;
        return;
    }
    g->entry = tr.entry_price;
    g->exit_price = tr.exit_price;
    g->risk = tr.risk;
    if (x) {
        x->bars_held = tr.bars_held;
        x->reason = (int32_t)tr.reason;
        x->exit_bar = (int32_t)tr.exit_index;
    }
    link->next = sebt_k_memo_next(u, j, tr.exit_index);
}

/* The memo entry of candidate j for exit parameters p; raw and x (may be
 * NULL) as in sebt_k_memo_fill_geom. */
SEBT_HD static inline void sebt_k_memo_fill(const sebt_k_market *m, const sebt_k_valid *v, const sebt_k_union *u,
                                            const sebt_params *p, int64_t j, const sebt_k_raw_exits *raw,
                                            sebt_k_memo_link *link, sebt_k_memo_val *val, sebt_k_memo_exit *x)
{
    sebt_k_memo_geom g;
    sebt_k_memo_fill_geom(m, v, u, p, j, raw, link, &g, x);
    val->pnl = 0.0;
    val->r = 0.0;
    if (link->next >= 0) {   /* the pnl and R sebt_k_trade_at gives */
        val->pnl = sebt_k_trade_pnl(p, g.entry, g.exit_price);
        val->r = val->pnl / g.risk;
    }
}

/* One hop of SPEC §6 through the memo: the trade opened by the signal at
 * candidate *j is added to acc, and *j moves to the first signal at or
 * after its exit. Returns 0 when the combo has no trade left: *j is past U,
 * the signal is on the last valid bar, or its trade is still open at the
 * end (then *open_at_end, when given, says so). With epoch 0 the memo is
 * complete; otherwise an entry whose stamp is not epoch is filled on first
 * use, so an exit key's combos compute each trade they share once, and no
 * trade nobody takes. */
SEBT_HD SEBT_K_HOT static inline int sebt_k_hop_step(const sebt_k_market *m, const sebt_k_valid *v,
                                                     const sebt_k_union *u, const sebt_k_sigbits *sb,
                                                     const sebt_k_memo *memo, uint32_t epoch, const sebt_params *p,
                                                     sebt_k_acc *acc, int64_t *jp, sebt_open_position *open_at_end)
{
    int64_t j = *jp;
    if (j >= u->n)
        return 0;
    sebt_k_memo_link *l = &memo->link[j];
    if (epoch && l->stamp != epoch) {
        sebt_k_memo_fill(m, v, u, p, j, &memo->raw, l, &memo->val[j], memo->ex ? &memo->ex[j] : NULL);
        l->stamp = epoch;
    }
    int32_t next = l->next;
    if (next == SEBT_K_MEMO_NO_ENTRY)
        return 0;
    if (next == SEBT_K_MEMO_OPEN) {
        if (open_at_end) {
            sebt_trade unused;
            sebt_k_trade_at(m, v, u->bar[j], u->atr[j], p, &unused, open_at_end);
        }
        return 0;
    }
    const sebt_k_memo_val *e = &memo->val[j];
    if (sebt_k_acc_wants_trade(acc)) {
        sebt_trade tr;
        sebt_k_trade_at(m, v, u->bar[j], u->atr[j], p, &tr, NULL);
        sebt_k_acc_add(acc, e->pnl, e->r, &tr);
    } else {
        sebt_k_acc_add(acc, e->pnl, e->r, NULL);
    }
    if (acc->jbuf && !acc->ss_pass && acc->n <= acc->rcap)
        acc->jbuf[acc->n - 1] = (int32_t)j;
    if (acc->tally)
        sebt_k_acc_tally(acc, e->pnl, &memo->ex[j]);
    *jp = sebt_k_next_signal(sb, next, u->n);
    return *jp < u->n;
}

SEBT_HD static inline void sebt_k_no_open(sebt_open_position *open_at_end)
{
    if (open_at_end) {
        sebt_open_position none = { false, 0, 0, 0.0, 0.0, 0.0, 0.0, 0 };
        *open_at_end = none;
    }
}

/* SPEC §6 for one combo: hop after hop (sebt_k_hop_step) from its first
 * signal. */
SEBT_HD static inline void sebt_k_hop(const sebt_k_market *m, const sebt_k_valid *v, const sebt_k_union *u,
                                      const sebt_k_sigbits *sb, const sebt_k_memo *memo, uint32_t epoch,
                                      const sebt_params *p, sebt_k_acc *acc_out,
                                      sebt_open_position *open_at_end)
{
    /* The accumulator in a local: the compiler keeps it in registers. */
    sebt_k_acc acc = *acc_out;
    sebt_k_no_open(open_at_end);
    int64_t j = sebt_k_next_signal(sb, 0, u->n);
    while (sebt_k_hop_step(m, v, u, sb, memo, epoch, p, &acc, &j, open_at_end)) {
    }
    *acc_out = acc;
}

/* Whether the sum of squares behind the Sharpe needs a second pass: the R
 * values fit neither in rbuf nor in the trade buffer (what a GPU thread
 * without a buffer meets). The caller then runs the combo again with
 * ss_pass set and mean_r = sum_r / n, and hands its ss to sebt_k_finish. */
SEBT_HD static inline int sebt_k_needs_second_pass(const sebt_k_acc *a)
{
    return a->n >= 2 && a->n > a->rcap && a->n > a->cap;
}

/* The metrics of SPEC §7 from a first pass's accumulator; the sum of
 * squares from rbuf or the trades when they fit, else second_ss (the bits
 * are the same either way). */
SEBT_HD static inline void sebt_k_finish(const sebt_k_acc *acc, double second_ss, sebt_result *out)
{
    int64_t n = acc->n;
    out->n_trades = (size_t)n;
    sebt_metrics none = { n, 0.0, 0.0, 0.0, 0.0, 0.0 };
    out->metrics = none;
    if (n == 0)
        return;
    double mean_r = acc->sum_r / (double)n;
    double sharpe = 0.0;
    if (n >= 2) {
        double ss = 0.0;
        if (n <= acc->rcap) {
            for (int64_t k = 0; k < n; k++)
                ss += (acc->rbuf[k] - mean_r) * (acc->rbuf[k] - mean_r);
        } else if (n <= acc->cap) {
            for (int64_t k = 0; k < n; k++)
                ss += (acc->trades[k].r - mean_r) * (acc->trades[k].r - mean_r);
        } else {
            ss = second_ss;
        }
        double sd = sqrt(ss / (double)(n - 1));
        if (sd != 0.0)
            sharpe = mean_r / sd;
    }
    out->metrics.win_rate = (double)acc->wins / (double)n;
    out->metrics.avg_r = mean_r;
    out->metrics.total_pnl = acc->total;
    out->metrics.max_dd = acc->max_dd;
    out->metrics.sharpe = sharpe;
}

/* tally (may be NULL): where the analysis tally goes (sebt_k_acc_tally_out),
 * which needs the memo's ex. jbuf (may be NULL; with rbuf): where each
 * closed trade's candidate goes, beside its R in rbuf. */
SEBT_HD static inline sebt_k_acc sebt_k_acc_start(sebt_trade *trades, int64_t cap, double *rbuf, int64_t rcap,
                                                  sebt_trade_tally *tally, int32_t *jbuf)
{
    sebt_k_acc acc = { 0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, trades, trades ? cap : 0,
                       rbuf, rbuf ? rcap : 0, tally, { { 0, 0, 0, 0 }, 0.0, 0.0, 0 }, rbuf ? jbuf : NULL };
    return acc;
}

/* A combo's result once its hops are done (acc): the second pass where the
 * Sharpe needs one, then the metrics of SPEC §7. */
SEBT_HD static inline void sebt_k_combo_end(const sebt_k_market *m, const sebt_k_valid *v, const sebt_k_union *u,
                                            const sebt_k_sigbits *sb, const sebt_k_memo *memo, uint32_t epoch,
                                            const sebt_params *p, const sebt_k_acc *acc, sebt_result *out)
{
    out->valid_bars = (size_t)v->n_valid;
    double second_ss = 0.0;
    if (sebt_k_needs_second_pass(acc)) {
        sebt_k_acc second = *acc;
        second.ss_pass = 1;
        second.mean_r = acc->sum_r / (double)acc->n;
        second.ss = 0.0;
        sebt_k_hop(m, v, u, sb, memo, epoch, p, &second, NULL);
        second_ss = second.ss;
    }
    sebt_k_finish(acc, second_ss, out);
}

/* One combo by hops (see sebt_k_hop), SPEC §6-7: trades to trades[0 .. cap)
 * (NULL/0 for metrics only); out->n_trades counts all of them, so a caller
 * whose buffer was short sees it and runs again; out->trades is left alone.
 * tally (may be NULL; with the memo's ex): its analysis tally; jbuf (may be
 * NULL; with rbuf) as sebt_k_acc_start's. */
SEBT_HD static inline void sebt_k_run_combo_hop(const sebt_k_market *m, const sebt_k_valid *v,
                                                const sebt_k_union *u, const sebt_k_sigbits *sb,
                                                const sebt_k_memo *memo, uint32_t epoch,
                                                const sebt_params *p, sebt_trade *trades, int64_t cap,
                                                double *rbuf, int64_t rcap, sebt_result *out,
                                                sebt_trade_tally *tally, int32_t *jbuf)
{
    sebt_k_acc acc = sebt_k_acc_start(trades, cap, rbuf, rcap, memo->ex ? tally : NULL, jbuf);
    sebt_k_hop(m, v, u, sb, memo, epoch, p, &acc, &out->open_at_end);
    sebt_k_acc_tally_out(&acc);
    sebt_k_combo_end(m, v, u, sb, memo, epoch, p, &acc, out);
}

/* Two combos of one exit key (one memo) by hops taken in turn, metrics
 * only: each combo's hops are a chain of dependent loads (memo link, then
 * the signal words after its exit) and additions, so one combo leaves the
 * core waiting; two in turn overlap their waits. Each combo's arithmetic and
 * its order are sebt_k_run_combo_hop's: the same bits. A memo entry either
 * fills is the same entry. tally_a, tally_b, jbuf_a, jbuf_b as
 * sebt_k_run_combo_hop's. */
SEBT_HD static inline void sebt_k_run_combo_pair_hop(const sebt_k_market *m, const sebt_k_valid *v,
                                                     const sebt_k_union *u, const sebt_k_memo *memo, uint32_t epoch,
                                                     const sebt_k_sigbits *sb_a, const sebt_params *p_a,
                                                     double *rbuf_a, sebt_result *out_a,
                                                     const sebt_k_sigbits *sb_b, const sebt_params *p_b,
                                                     double *rbuf_b, sebt_result *out_b, int64_t rcap,
                                                     sebt_trade_tally *tally_a, sebt_trade_tally *tally_b,
                                                     int32_t *jbuf_a, int32_t *jbuf_b)
{
    sebt_k_acc a = sebt_k_acc_start(NULL, 0, rbuf_a, rcap, memo->ex ? tally_a : NULL, jbuf_a),
               b = sebt_k_acc_start(NULL, 0, rbuf_b, rcap, memo->ex ? tally_b : NULL, jbuf_b);
    sebt_k_no_open(&out_a->open_at_end);
    sebt_k_no_open(&out_b->open_at_end);
    int64_t ja = sebt_k_next_signal(sb_a, 0, u->n), jb = sebt_k_next_signal(sb_b, 0, u->n);
    int live_a = ja < u->n, live_b = jb < u->n;
    while (live_a && live_b) {
        live_a = sebt_k_hop_step(m, v, u, sb_a, memo, epoch, p_a, &a, &ja, &out_a->open_at_end);
        live_b = sebt_k_hop_step(m, v, u, sb_b, memo, epoch, p_b, &b, &jb, &out_b->open_at_end);
    }
    while (live_a)
        live_a = sebt_k_hop_step(m, v, u, sb_a, memo, epoch, p_a, &a, &ja, &out_a->open_at_end);
    while (live_b)
        live_b = sebt_k_hop_step(m, v, u, sb_b, memo, epoch, p_b, &b, &jb, &out_b->open_at_end);
    sebt_k_acc_tally_out(&a);
    sebt_k_acc_tally_out(&b);
    sebt_k_combo_end(m, v, u, sb_a, memo, epoch, p_a, &a, out_a);
    sebt_k_combo_end(m, v, u, sb_b, memo, epoch, p_b, &b, out_b);
}

/* ---- combos that differ only in costs: one walk, then sums -------------

 * Where a trade exits depends on its entry, stop, target and time limit,
 * never on fee_bp or slippage_bp (sebt_k_trade_pnl is the only place they
 * enter). Combos with one exit geometry and one signal set, differing only
 * in costs, therefore take the same trades: the chain of dependent hops is
 * walked once (sebt_k_walk, through a memo of what every cost shares), and
 * each combo then sums its own pnl and R over that path
 * (sebt_k_run_combo_path), with the arithmetic, in the order,
 * sebt_k_run_combo_hop uses: the same bits. */
/* The trades of one signal set under one exit geometry (p's costs play no
 * part): the candidates whose trades close, in order, into path (n_out of
 * them, at most u->n), and *open_j: the candidate whose trade is still open
 * at the end, or -1. Entries are filled lazily as in sebt_k_hop_step; raw
 * and ex (may be NULL) as in sebt_k_memo. */
SEBT_HD static inline int64_t sebt_k_walk(const sebt_k_market *m, const sebt_k_valid *v, const sebt_k_union *u,
                                          const sebt_k_sigbits *sb, sebt_k_memo_link *link, sebt_k_memo_geom *geom,
                                          const sebt_k_raw_exits *raw, sebt_k_memo_exit *ex, uint32_t epoch,
                                          const sebt_params *p, int32_t *path, int64_t *open_j)
{
    int64_t n = 0;
    *open_j = -1;
    int64_t j = sebt_k_next_signal(sb, 0, u->n);
    while (j < u->n) {
        sebt_k_memo_link *l = &link[j];
        if (epoch && l->stamp != epoch) {
            sebt_k_memo_fill_geom(m, v, u, p, j, raw, l, &geom[j], ex ? &ex[j] : NULL);
            l->stamp = epoch;
        }
        int32_t next = l->next;
        if (next == SEBT_K_MEMO_NO_ENTRY)
            break;
        if (next == SEBT_K_MEMO_OPEN) {
            *open_j = j;
            break;
        }
        path[n++] = (int32_t)j;
        j = sebt_k_next_signal(sb, next, u->n);
    }
    return n;
}

/* One combo's result from its walk (sebt_k_walk with its exit geometry and
 * signal set): metrics only, its R values in rbuf, which holds u->n (a walk
 * never has more trades than candidates); tally (may be NULL; with the
 * walk's ex) as sebt_k_run_combo_hop's. */
SEBT_HD static inline void sebt_k_run_combo_path(const sebt_k_market *m, const sebt_k_valid *v,
                                                 const sebt_k_union *u, const sebt_k_memo_geom *geom,
                                                 const sebt_k_memo_exit *ex, const int32_t *path, int64_t n,
                                                 int64_t open_j, const sebt_params *p, double *rbuf,
                                                 sebt_result *out, sebt_trade_tally *tally)
{
    sebt_k_acc acc = sebt_k_acc_start(NULL, 0, rbuf, u->n, ex ? tally : NULL, NULL);
    sebt_k_no_open(&out->open_at_end);
    for (int64_t i = 0; i < n; i++) {
        const sebt_k_memo_geom *g = &geom[path[i]];
        double pnl = sebt_k_trade_pnl(p, g->entry, g->exit_price);
        sebt_k_acc_add(&acc, pnl, pnl / g->risk, NULL);
        if (acc.tally)
            sebt_k_acc_tally(&acc, pnl, &ex[path[i]]);
    }
    if (open_j >= 0) {
        sebt_trade unused;
        sebt_k_trade_at(m, v, u->bar[open_j], u->atr[open_j], p, &unused, &out->open_at_end);
    }
    out->valid_bars = (size_t)v->n_valid;
    sebt_k_acc_tally_out(&acc);
    sebt_k_finish(&acc, 0.0, out);
}

#endif
