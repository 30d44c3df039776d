/* The oracle's replay of SPEC §6-7 over the reference's features.
 *
 * A tolerant backend may take the other branch of a decision whose
 * reference margin is a near-tie. To keep comparing after such a tie the
 * oracle needs a simulation it can steer: it runs the reference's own walk
 * (reference/simulate.c) with a decision hook that, at every decision,
 * compares the reference's answer with what the candidate's trades show.
 * Where they differ and the reference margin is a near-tie it follows the
 * candidate and counts a tie; anywhere else it stops with a divergence.
 * SPEC §4 and §6 are not restated here: the terms and the chain are the
 * reference's. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../reference/ref.h"
#include "oracle_internal.h"

sebt_metrics sebt_oracle_metrics(const sebt_trade *trades, size_t n)
{
    sebt_metrics m;
    sebt_ref_metrics(trades, n, &m);
    return m;
}

bool sebt_oracle_near_tie(double lhs, double rhs, double tol)
{
    double margin = lhs - rhs;
    if (isnan(margin))
        return false;
    return fabs(margin) <= tol * fmax(1.0, fmax(fabs(lhs), fabs(rhs)));
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
_Static_assert(SEBT_REF_SIGNAL_TERMS == SEBT_N_TERMS, "the reference's terms are sebt/strategy.def's");

static bool same_operands(const sebt_features *ref, const sebt_features *cand, int i, size_t t)
{
    if (!cand)
        return true;
    const sebt_term_info *term = &sebt_term_table[i];
    return bits_equal(ref->col[term->column][t], cand->col[term->column][t]) &&
           (term->rhs_column < 0 || bits_equal(ref->col[term->rhs_column][t], cand->col[term->rhs_column][t]));
}

bool oracle_signal_tie(const sebt_features *ref, const sebt_features *cand, const sebt_params *p,
                       size_t t, bool cand_sig, double tol, double *margin)
{
    bool holds[SEBT_REF_SIGNAL_TERMS];
    double lhs[SEBT_REF_SIGNAL_TERMS], rhs[SEBT_REF_SIGNAL_TERMS];
    sebt_ref_signal_terms(ref, p, t, holds, lhs, rhs);
    bool ref_sig = ref->signal[t] != 0;
    *margin = NAN;
    if (ref_sig == cand_sig)
        return true;
    if (ref_sig) {
        /* The candidate said no: one comparison that rounding could have
         * flipped (a near-tie whose operands moved) is enough to explain it. */
        double best = INFINITY;
        for (int i = 0; i < SEBT_REF_SIGNAL_TERMS; i++) {
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
    for (int i = 0; i < SEBT_REF_SIGNAL_TERMS; i++) {
        if (holds[i])
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
    const char *name = sebt_exit_outcome_name(o);
    return name ? name : "?";
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

/* What the hook carries through one replay. */
typedef struct {
    const sebt_series *s;
    const sebt_params *p;
    const sebt_features *ref, *cand_f;
    const sebt_result *cand;
    const uint8_t *tie_bars;
    double tol;
    size_t ci;                  /* the candidate's next trade */
    double lhs[SEBT_EXIT_KINDS], rhs[SEBT_EXIT_KINDS]; /* this bar's exit chain: operands */
    bool enabled[SEBT_EXIT_KINDS];                      /* and which rules are on */
    bool diverged;
    sebt_divergence *div;
    oracle_tally *tally;
} replay_state;

/* Records the divergence; from then on the walk is only run out: no entry,
 * no exit (its result is not used; replay_decide answers for it). */
#define DIVERGE(...)                                                                               \
    do {                                                                                           \
        oracle_diverge(r->div, r->s, r->p, __VA_ARGS__);                                           \
        r->diverged = true;                                                                        \
        return -1;                                                                                 \
    } while (0)

/* Flat at valid bar t: does the candidate open a trade here, at u? */
static int replay_take(replay_state *r, const sebt_ref_decision *d)
{
    const sebt_trade *ct = r->cand->trades;
    size_t cn = r->cand->n_trades, ci = r->ci, t = d->t, u = d->u;
    const sebt_open_position *co = &r->cand->open_at_end;
    if (ci < cn && ct[ci].signal_index < (int64_t)t)
        DIVERGE("signal", ct[ci].signal_index, 0, 1, NAN,
                "candidate trade %zu has signal bar %lld, where the reference was in a "
                "position or the bar is not valid (no signal can be taken there)",
                ci, (long long)ct[ci].signal_index);
    bool cand_sig = ci < cn ? ct[ci].signal_index == (int64_t)t
                            : co->open && co->signal_index == (int64_t)t;
    bool take = d->answer != 0;
    if (cand_sig != take) {
        double margin = NAN; /* tol <= 0 judges no tie: then no margin is named */
        if (r->tol <= 0 || !oracle_signal_tie(r->ref, r->cand_f, r->p, t, cand_sig, r->tol, &margin))
            DIVERGE("signal", (int64_t)t, take, cand_sig, margin,
                    "reference %s a trade at signal bar %zu, candidate %s (its next trade "
                    "has signal bar %lld)", take ? "opens" : "does not open", t,
                    cand_sig ? "does" : "does not", ci < cn ? (long long)ct[ci].signal_index : -1LL);
        if (!r->tie_bars || !r->tie_bars[t])
            r->tally->ties++;
        take = cand_sig;
    }
    if (!take)
        return 0;
    int64_t cand_entry = ci < cn ? ct[ci].entry_index : co->entry_index;
    if (cand_entry != (int64_t)u)
        DIVERGE("entry bar", (int64_t)u, (double)u, (double)cand_entry, NAN,
                "signal bar %zu: the next valid bar is %zu, candidate entered at bar %lld",
                t, u, (long long)cand_entry);
    return 1;
}

/* In a position at bar u: the candidate's outcome against the reference's
 * first decision of the chain that holds. */
static int replay_exit(replay_state *r, const sebt_ref_decision *d)
{
    const sebt_trade *ct = r->cand->trades;
    size_t cn = r->cand->n_trades, ci = r->ci, u = d->u;
    int ref_out = d->answer, cand_out = SEBT_EXIT_KINDS;
    r->tally->decisions++;
    if (ci < cn && ct[ci].exit_index < (int64_t)u)
        DIVERGE("exit bar", ct[ci].exit_index, (double)u, (double)ct[ci].exit_index, NAN,
                "candidate trade %zu exits at bar %lld, a bar the reference never reaches in "
                "this position (next valid bar is %zu)", ci, (long long)ct[ci].exit_index, u);
    if (ci < cn && ct[ci].exit_index == (int64_t)u) {
        cand_out = (int)ct[ci].reason;
        if (!sebt_exit_outcome_name(cand_out) || cand_out == SEBT_EXIT_KINDS)
            DIVERGE("exit reason", (int64_t)u, (double)ref_out, (double)cand_out, NAN,
                    "candidate trade %zu has exit reason %d, which is none of SPEC §6's %d",
                    ci, cand_out, SEBT_EXIT_KINDS);
    }
    if (cand_out == ref_out)
        return ref_out;
    /* Both chains agree up to the first decision where they differ: that
     * one decision must be a near-tie. */
    int j = cand_out < ref_out ? cand_out : ref_out;
    double lhs = NAN, rhs = NAN, cand_rhs = NAN;
    /* The candidate's own stop and target, from its trade (or its open
     * position): the operands it compared with. */
    const sebt_trade *cur = ci < cn ? &ct[ci] : NULL;
    const sebt_open_position *co = &r->cand->open_at_end;
    double cstop = cur ? cur->stop : co->open ? co->stop : NAN;
    double ctp = cur ? cur->tp : co->open ? co->tp : NAN;
    /* Only a rule whose operand the candidate's trade carries (its stop or
     * target) can be a near-tie; time, or a rule added later, never is. */
    bool carried = j == SEBT_EXIT_STOP_GAP || j == SEBT_EXIT_STOP || j == SEBT_EXIT_TP;
    if (carried && r->enabled[j]) {
        lhs = r->lhs[j];
        rhs = r->rhs[j];
        cand_rhs = j == SEBT_EXIT_TP ? ctp : cstop;
    }
    bool near = r->tol > 0 && sebt_oracle_near_tie(lhs, rhs, r->tol);
    /* open, low and high are the series' own bits on both sides: only a
     * stop or target that moved can make rounding the cause. */
    bool moved = !isnan(cand_rhs) && !bits_equal(rhs, cand_rhs);
    if (!near || !moved)
        DIVERGE("exit", (int64_t)u, (double)ref_out, (double)cand_out, lhs - rhs,
                "position from signal bar %zu, bar %zu (held %d): reference %s, candidate %s%s",
                d->pos->signal_bar, u, (int)d->pos->bars, outcome_name(ref_out),
                outcome_name(cand_out),
                near && !moved ? " (a near-tie, but the candidate's operands are the "
                                 "reference's bits: a logic error, not rounding)" : "");
    r->tally->ties++;
    return cand_out;
}
#undef DIVERGE

static int replay_decide(void *user, const sebt_ref_decision *d)
{
    replay_state *r = user;
    int answer = d->answer;
    switch (d->kind) {
    case SEBT_REF_TAKE:
        answer = r->diverged ? 0 : replay_take(r, d);
        return r->diverged ? 0 : answer;
    case SEBT_REF_EXIT:
        answer = r->diverged ? SEBT_EXIT_KINDS : replay_exit(r, d);
        return r->diverged ? SEBT_EXIT_KINDS : answer;
    default:                    /* one of the chain's comparisons: noted */
        r->lhs[d->reason] = d->lhs;
        r->rhs[d->reason] = d->rhs;
        r->enabled[d->reason] = d->enabled;
        return d->answer;
    }
}

static bool replay_closed(void *user, sebt_trade *tr)
{
    replay_state *r = user;
    if (!same_trade(r->s, r->p, tr, &r->cand->trades[r->ci], r->ci, r->tol, r->div)) {
        r->diverged = true;
        return false;
    }
    r->ci++;
    return true;
}

sebt_status oracle_replay(const sebt_series *s, const sebt_params *p, const sebt_features *ref,
                          const sebt_features *cand_f, double tol, const sebt_result *cand,
                          const uint8_t *tie_bars, sebt_result *out, bool *diverged,
                          sebt_divergence *div, oracle_tally *tally, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    replay_state r = { .s = s, .p = p, .ref = ref, .cand_f = cand_f, .cand = cand,
                       .tie_bars = tie_bars, .tol = tol, .div = div, .tally = tally };
    sebt_ref_hook hook = { .user = &r, .decide = replay_decide, .closed = replay_closed };
    sebt_status st = sebt_ref_walk(s, ref, p, &hook, out, err);
    *diverged = r.diverged;
    if (st != SEBT_OK || r.diverged)
        return st;

    const sebt_trade *ct = cand->trades;
    size_t cn = cand->n_trades, ci = r.ci;
    const sebt_open_position *ro = &out->open_at_end, *co = &cand->open_at_end;
    if (ci < cn) {
        oracle_diverge(div, s, p, "trade count", ct[ci].signal_index, (double)out->n_trades,
                       (double)cn, NAN, "candidate has %zu trades, the reference %zu; the first "
                       "extra one has signal bar %lld, exit bar %lld", cn, out->n_trades,
                       (long long)ct[ci].signal_index, (long long)ct[ci].exit_index);
        *diverged = true;
    } else if (ro->open != co->open ||
               (ro->open && (co->signal_index != ro->signal_index ||
                             co->entry_index != ro->entry_index || co->bars_held != ro->bars_held))) {
        char a[96] = "not open", b[96] = "not open";
        if (ro->open)
            snprintf(a, sizeof a, "open (signal bar %lld, entry bar %lld, held %d)",
                     (long long)ro->signal_index, (long long)ro->entry_index, (int)ro->bars_held);
        if (co->open)
            snprintf(b, sizeof b, "open (signal bar %lld, entry bar %lld, held %d)",
                     (long long)co->signal_index, (long long)co->entry_index, (int)co->bars_held);
        oracle_diverge(div, s, p, "open_at_end", ro->open ? ro->signal_index : co->signal_index,
                       ro->open, co->open, NAN,
                       "at the end of the series the reference is %s, the candidate %s", a, b);
        *diverged = true;
    } else if (ro->open && (!close_enough(co->entry_price, ro->entry_price, tol) ||
                            !close_enough(co->stop, ro->stop, tol) || !close_enough(co->tp, ro->tp, tol) ||
                            !close_enough(co->risk, ro->risk, tol))) {
        oracle_diverge(div, s, p, "open_at_end prices", ro->signal_index, ro->entry_price,
                       co->entry_price, NAN,
                       "the open position's entry/stop/tp/risk differ beyond tolerance %g", tol);
        *diverged = true;
    }
    out->metrics = sebt_oracle_metrics(out->trades, out->n_trades);
    return SEBT_OK;
}
