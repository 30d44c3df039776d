/* The oracle's own replay of SPEC §6-7 over the reference's features.
 *
 * A tolerant backend may take the other branch of a decision whose
 * reference margin is a near-tie. To keep comparing after such a tie the
 * oracle needs a simulation it can steer: this one walks the valid bars as
 * SPEC §6 says and, at every decision, compares its outcome with what the
 * candidate's trades show. Where they differ and the reference margin is a
 * near-tie it follows the candidate and counts a tie; anywhere else it
 * stops with a divergence. It shares no code with any backend. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"

sebt_metrics sebt_oracle_metrics(const sebt_trade *trades, size_t n)
{
    sebt_metrics m = { 0 };
    if (n == 0)
        return m;
    size_t wins = 0;
    double sum_r = 0.0, total = 0.0, cum = 0.0, peak = 0.0, dd = 0.0;
    for (size_t i = 0; i < n; i++) {
        wins += trades[i].pnl > 0;
        sum_r += trades[i].r;
        total += trades[i].pnl;
        cum += trades[i].pnl;
        /* The running maximum starts at the first trade's cumulative pnl
         * (pandas' cummax over the trades), as the reference reads §7. */
        peak = i == 0 || cum > peak ? cum : peak;
        dd = fmin(dd, cum - peak);
    }
    double mean = sum_r / (double)n, sharpe = 0.0;
    if (n >= 2) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (trades[i].r - mean) * (trades[i].r - mean);
        double sd = sqrt(ss / (double)(n - 1));
        sharpe = sd != 0.0 ? mean / sd : 0.0;
    }
    m.n = (int64_t)n;
    m.win_rate = (double)wins / (double)n;
    m.avg_r = mean;
    m.total_pnl = total;
    m.max_dd = dd;
    m.sharpe = sharpe;
    return m;
}

bool sebt_oracle_near_tie(double lhs, double rhs, double tol)
{
    double margin = lhs - rhs;
    if (isnan(margin))
        return false;
    return fabs(margin) <= tol * fmax(1.0, fmax(fabs(lhs), fabs(rhs)));
}

/* The four comparisons of SPEC §4, as (lhs, rhs) of "lhs > rhs". */
static void signal_terms(const sebt_features *f, const sebt_params *p, size_t t, double lhs[4],
                         double rhs[4])
{
    lhs[0] = f->ema_s[t]; rhs[0] = f->ema_f[t];   /* ema_f < ema_s */
    lhs[1] = f->vol_z[t]; rhs[1] = p->vol_z;
    lhs[2] = f->tr_z[t];  rhs[2] = p->tr_z;
    lhs[3] = f->cloc[t];  rhs[3] = p->cloc_min;
}

static bool bits_equal(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Whether the candidate's operands of signal comparison i at t are the
 * reference's bits. Rounding can only move a decision whose operands
 * moved; without the candidate's features nothing is known, so they count
 * as the same. */
static bool same_operands(const sebt_features *ref, const sebt_features *cand, int i, size_t t)
{
    if (!cand)
        return true;
    switch (i) {
    case 0: return bits_equal(ref->ema_s[t], cand->ema_s[t]) && bits_equal(ref->ema_f[t], cand->ema_f[t]);
    case 1: return bits_equal(ref->vol_z[t], cand->vol_z[t]);
    case 2: return bits_equal(ref->tr_z[t], cand->tr_z[t]);
    default: return bits_equal(ref->cloc[t], cand->cloc[t]);
    }
}

bool oracle_signal_tie(const sebt_features *ref, const sebt_features *cand, const sebt_params *p,
                       size_t t, bool cand_sig, double tol, double *margin)
{
    double lhs[4], rhs[4];
    signal_terms(ref, p, t, lhs, rhs);
    bool ref_sig = ref->signal[t] != 0;
    *margin = NAN;
    if (ref_sig == cand_sig)
        return true;
    if (ref_sig) {
        /* The candidate said no: one comparison that rounding could have
         * flipped (a near-tie whose operands moved) is enough to explain it. */
        double best = INFINITY;
        for (int i = 0; i < 4; i++) {
            if (tol > 0 && sebt_oracle_near_tie(lhs[i], rhs[i], tol) && !same_operands(ref, cand, i, t)) {
                *margin = lhs[i] - rhs[i];
                return true;
            }
            if (fabs(lhs[i] - rhs[i]) < best) {
                best = fabs(lhs[i] - rhs[i]);
                *margin = lhs[i] - rhs[i];
            }
        }
        return false;
    }
    /* The candidate said yes: every comparison the reference found false
     * must be a near-tie over operands that moved. */
    bool ok = true;
    for (int i = 0; i < 4; i++) {
        if (lhs[i] > rhs[i])
            continue;
        if (ok)
            *margin = lhs[i] - rhs[i];
        if (!(tol > 0 && sebt_oracle_near_tie(lhs[i], rhs[i], tol) && !same_operands(ref, cand, i, t))) {
            *margin = lhs[i] - rhs[i];
            ok = false;
        }
    }
    return ok;
}

/* Exact contracts (tol 0) compare bits; NaN only agrees with NaN. */
static bool close_enough(double a, double b, double tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (tol <= 0)
        return memcmp(&a, &b, sizeof a) == 0;
    if (a == b)
        return true; /* infinities too: R is inf when a zero price makes risk 0 */
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

bool oracle_trade_push(oracle_trade_vec *l, const sebt_trade *t)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        sebt_trade *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *t;
    return true;
}

static const char *outcome_name(int o)
{
    static const char *names[] = { "stop_gap", "stop", "tp", "time", "no exit" };
    return o >= 0 && o <= 4 ? names[o] : "?";
}

/* Compares a replayed trade with the candidate's; returns false and fills
 * div on the first field beyond tolerance. */
static bool same_trade(const sebt_series *s, const sebt_params *p, const sebt_trade *r,
                       const sebt_trade *c, size_t idx, double tol, sebt_divergence *div)
{
    struct { const char *name; double a, b; } f[] = {
        { "entry_price", r->entry_price, c->entry_price }, { "exit_price", r->exit_price, c->exit_price },
        { "stop", r->stop, c->stop }, { "tp", r->tp, c->tp }, { "risk", r->risk, c->risk },
        { "pnl", r->pnl, c->pnl }, { "r", r->r, c->r },
    };
    if (r->bars_held != c->bars_held) {
        oracle_diverge(div, s, p, "bars_held", r->exit_index, r->bars_held, c->bars_held, NAN,
                       "trade %zu: reference held %d bars, candidate %d", idx, (int)r->bars_held,
                       (int)c->bars_held);
        return false;
    }
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!close_enough(f[i].a, f[i].b, tol)) {
            char what[64];
            snprintf(what, sizeof what, "trade %zu %s", idx, f[i].name);
            oracle_diverge(div, s, p, what, r->exit_index, f[i].a, f[i].b, NAN,
                           "trade %zu (signal bar %lld, exit bar %lld): %s differs beyond tolerance %g",
                           idx, (long long)r->signal_index, (long long)r->exit_index, f[i].name, tol);
            return false;
        }
    return true;
}

sebt_status oracle_replay(const sebt_series *s, const sebt_params *p, const sebt_features *ref,
                          const sebt_features *cand_f, double tol, const sebt_result *cand,
                          const uint8_t *tie_bars, sebt_result *out, bool *diverged,
                          sebt_divergence *div, oracle_tally *tally, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    *diverged = false;
    size_t n = s->n, K = 0;
    size_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return sebt_fail(err, SEBT_ERR_NOMEM, "oracle: out of memory for %zu bars", n);
    for (size_t t = 0; t < n; t++)
        if (ref->valid[t])
            v[K++] = t;

    const sebt_trade *ct = cand->trades;
    size_t cn = cand->n_trades, ci = 0;
    oracle_trade_vec list = { 0 };
    bool in_pos = false;
    size_t sig = 0, ent = 0;
    double entry = 0, stop = 0, risk = 0, tp = 0;
    int32_t bars = 0;

#define DIVERGE(...) do { oracle_diverge(div, s, p, __VA_ARGS__); *diverged = true; goto done; } while (0)

    for (size_t k = 0; k + 1 < K; k++) {
        size_t t = v[k], u = v[k + 1];
        if (!in_pos) {
            if (ci < cn && ct[ci].signal_index < (int64_t)t)
                DIVERGE("signal", ct[ci].signal_index, 0, 1, NAN,
                        "candidate trade %zu has signal bar %lld, where the reference was in a "
                        "position or the bar is not valid (no signal can be taken there)",
                        ci, (long long)ct[ci].signal_index);
            bool cand_sig = ci < cn ? ct[ci].signal_index == (int64_t)t
                                    : cand->open_at_end.open && cand->open_at_end.signal_index == (int64_t)t;
            bool take = ref->signal[t] != 0;
            if (cand_sig != take) {
                double margin = NAN; /* tol <= 0 judges no tie: then no margin is named */
                if (tol <= 0 || !oracle_signal_tie(ref, cand_f, p, t, cand_sig, tol, &margin))
                    DIVERGE("signal", (int64_t)t, take, cand_sig, margin,
                            "reference %s a trade at signal bar %zu, candidate %s (its next trade "
                            "has signal bar %lld)", take ? "opens" : "does not open", t,
                            cand_sig ? "does" : "does not",
                            ci < cn ? (long long)ct[ci].signal_index : -1LL);
                if (!tie_bars || !tie_bars[t])
                    tally->ties++;
                take = cand_sig;
            }
            if (!take)
                continue;
            int64_t cand_entry = ci < cn ? ct[ci].entry_index : cand->open_at_end.entry_index;
            if (cand_entry != (int64_t)u)
                DIVERGE("entry bar", (int64_t)u, (double)u, (double)cand_entry, NAN,
                        "signal bar %zu: the next valid bar is %zu, candidate entered at bar %lld",
                        t, u, (long long)cand_entry);
            entry = s->open[u];
            stop = p->use_stop ? s->low[t] - p->atr_stop_mult * ref->atr[t] : 0.0;
            risk = p->use_stop ? fmax(1e-8, entry - stop) : entry * 0.01;
            tp = p->use_tp ? entry + p->reward_r * risk : 0.0;
            bars = 0;
            in_pos = true;
            sig = t;
            ent = u;
            continue;
        }
        bars += 1;
        tally->decisions++;
        /* The decision chain of SPEC §6 in order; outcome = first true. */
        bool d[4] = {
            p->use_stop && s->open[u] <= stop,
            p->use_stop && s->low[u] <= stop,
            p->use_tp && tp > 0 && s->high[u] >= tp,
            p->use_time && bars >= p->max_hold,
        };
        int ref_out = 4;
        for (int i = 3; i >= 0; i--)
            if (d[i])
                ref_out = i;
        int cand_out = 4;
        if (ci < cn && ct[ci].exit_index < (int64_t)u)
            DIVERGE("exit bar", ct[ci].exit_index, (double)u, (double)ct[ci].exit_index, NAN,
                    "candidate trade %zu exits at bar %lld, a bar the reference never reaches in "
                    "this position (next valid bar is %zu)", ci, (long long)ct[ci].exit_index, u);
        if (ci < cn && ct[ci].exit_index == (int64_t)u) {
            cand_out = (int)ct[ci].reason;
            if (cand_out < 0 || cand_out > 3)
                DIVERGE("exit reason", (int64_t)u, (double)ref_out, (double)cand_out, NAN,
                        "candidate trade %zu has exit reason %d, which is none of SPEC §6's four",
                        ci, cand_out);
        }
        if (cand_out != ref_out) {
            /* Both chains agree up to the first decision where they differ:
             * that one decision must be a near-tie. */
            int j = cand_out < ref_out ? cand_out : ref_out;
            double lhs = NAN, rhs = NAN, cand_rhs = NAN;
            /* The candidate's own stop and target, from its trade (or its
             * open position): the operands it compared with. */
            const sebt_trade *cur = ci < cn ? &ct[ci] : NULL;
            double cstop = cur ? cur->stop : cand->open_at_end.open ? cand->open_at_end.stop : NAN;
            double ctp = cur ? cur->tp : cand->open_at_end.open ? cand->open_at_end.tp : NAN;
            if (j == 0 && p->use_stop) { lhs = s->open[u]; rhs = stop; cand_rhs = cstop; }
            if (j == 1 && p->use_stop) { lhs = s->low[u]; rhs = stop; cand_rhs = cstop; }
            if (j == 2 && p->use_tp && tp > 0) { lhs = s->high[u]; rhs = tp; cand_rhs = ctp; }
            bool near = tol > 0 && sebt_oracle_near_tie(lhs, rhs, tol);
            /* open, low and high are the series' own bits on both sides:
             * only a stop or target that moved can make rounding the cause. */
            bool moved = !isnan(cand_rhs) && !bits_equal(rhs, cand_rhs);
            if (!near || !moved)
                DIVERGE("exit", (int64_t)u, (double)ref_out, (double)cand_out, lhs - rhs,
                        "position from signal bar %zu, bar %zu (held %d): reference %s, candidate %s%s",
                        sig, u, (int)bars, outcome_name(ref_out), outcome_name(cand_out),
                        near && !moved ? " (a near-tie, but the candidate's operands are the "
                                         "reference's bits: a logic error, not rounding)" : "");
            tally->ties++;
        }
        if (cand_out == 4)
            continue;
        double price = cand_out == 0 ? s->open[u] : cand_out == 1 ? stop : cand_out == 2 ? tp : s->close[u];
        double fee = (entry + price) * (p->fee_bp + p->slippage_bp) / 10000.0;
        double pnl = price - entry - fee;
        sebt_trade tr = { (int64_t)sig, (int64_t)ent, (int64_t)u, entry, price, stop, tp, risk,
                          pnl, pnl / risk, (sebt_exit_reason)cand_out, bars };
        if (!oracle_trade_push(&list, &tr)) {
            free(v);
            free(list.v);
            return sebt_fail(err, SEBT_ERR_NOMEM, "oracle: out of memory for trades");
        }
        if (!same_trade(s, p, &tr, &ct[ci], ci, tol, div)) {
            *diverged = true;
            goto done;
        }
        ci++;
        in_pos = false;
    }
    if (ci < cn)
        DIVERGE("trade count", ct[ci].signal_index, (double)list.n, (double)cn, NAN,
                "candidate has %zu trades, the reference %zu; the first extra one has signal bar "
                "%lld, exit bar %lld", cn, list.n, (long long)ct[ci].signal_index,
                (long long)ct[ci].exit_index);
    const sebt_open_position *co = &cand->open_at_end;
    if (in_pos != co->open || (in_pos && (co->signal_index != (int64_t)sig ||
                                          co->entry_index != (int64_t)ent || co->bars_held != bars))) {
        char a[96] = "not open", b[96] = "not open";
        if (in_pos)
            snprintf(a, sizeof a, "open (signal bar %zu, entry bar %zu, held %d)", sig, ent, (int)bars);
        if (co->open)
            snprintf(b, sizeof b, "open (signal bar %lld, entry bar %lld, held %d)",
                     (long long)co->signal_index, (long long)co->entry_index, (int)co->bars_held);
        DIVERGE("open_at_end", in_pos ? (int64_t)sig : co->signal_index, in_pos, co->open, NAN,
                "at the end of the series the reference is %s, the candidate %s", a, b);
    }
    if (in_pos && (!close_enough(co->entry_price, entry, tol) || !close_enough(co->stop, stop, tol) ||
                   !close_enough(co->tp, tp, tol) || !close_enough(co->risk, risk, tol)))
        DIVERGE("open_at_end prices", (int64_t)sig, entry, co->entry_price, NAN,
                "the open position's entry/stop/tp/risk differ beyond tolerance %g", tol);
#undef DIVERGE
done:
    free(v);
    out->valid_bars = K;
    out->n_trades = list.n;
    out->trades = list.v;
    if (in_pos)
        out->open_at_end = (sebt_open_position){ true, (int64_t)sig, (int64_t)ent, entry, stop,
                                                 tp, risk, bars };
    out->metrics = sebt_oracle_metrics(list.v, list.n);
    return SEBT_OK;
}
