/* SPEC §6: one position at a time, walking the valid bars only.
 *
 * Written as one step (sebt_ref_step) and the walk that takes it from each
 * valid bar to the next, so that the oracle's replay and mutants run this
 * very code through a decision hook (ref.h) instead of a copy of §6. With
 * no hook every decision is SPEC's own. */
#include <stdlib.h>

#include "ref.h"

static int decide(const sebt_ref_hook *hook, sebt_ref_decision *d)
{
    return hook && hook->decide ? hook->decide(hook->user, d) : d->answer;
}

/* One comparison of the exit chain, as the walk will act on it. */
static bool check(const sebt_ref_hook *hook, sebt_ref_decision *d, sebt_exit_reason reason,
                  bool enabled, double lhs, double rhs, bool holds)
{
    d->kind = SEBT_REF_CHAIN;
    d->reason = (int)reason;
    d->enabled = enabled;
    d->lhs = lhs;
    d->rhs = rhs;
    d->answer = enabled && holds;
    return decide(hook, d) != 0;
}

bool sebt_ref_step(const sebt_series *s, const sebt_features *f, const sebt_params *p,
                   const sebt_ref_hook *hook, sebt_ref_position *pos, size_t t, size_t u,
                   sebt_trade *tr)
{
    sebt_ref_decision d = { .t = t, .u = u, .pos = pos };
    if (!pos->open) {
        d.kind = SEBT_REF_TAKE;
        d.answer = f->signal[t] != 0;
        if (decide(hook, &d)) {
            double entry = s->open[u];
            double stop = p->use_stop ? s->low[t] - p->atr_stop_mult * f->atr[t] : 0.0;
            double risk;
            if (p->use_stop) {
                double gap = entry - stop;
                risk = gap > 1e-8 ? gap : 1e-8;     /* max(1e-8, entry - stop) */
            } else {
                risk = entry * 0.01;
            }
            double tp = p->use_tp ? entry + p->reward_r * risk : 0.0;
            *pos = (sebt_ref_position){ .open = true, .signal_bar = t, .entry_bar = u,
                                        .entry = entry, .stop = stop, .risk = risk, .tp = tp };
        }
        return false;           /* the entry bar itself is never checked for exits */
    }

    pos->bars += 1;
    /* The exit chain in SPEC §6's order: the first that holds decides. */
    bool hit[SEBT_EXIT_KINDS];
    hit[SEBT_EXIT_STOP_GAP] = check(hook, &d, SEBT_EXIT_STOP_GAP, p->use_stop, s->open[u], pos->stop,
                                    s->open[u] <= pos->stop);
    hit[SEBT_EXIT_STOP] = check(hook, &d, SEBT_EXIT_STOP, p->use_stop, s->low[u], pos->stop,
                                s->low[u] <= pos->stop);
    hit[SEBT_EXIT_TP] = check(hook, &d, SEBT_EXIT_TP, p->use_tp && pos->tp > 0, s->high[u], pos->tp,
                              s->high[u] >= pos->tp);
    hit[SEBT_EXIT_TIME] = check(hook, &d, SEBT_EXIT_TIME, p->use_time, pos->bars, p->max_hold,
                                pos->bars >= p->max_hold);
    int reason = SEBT_EXIT_KINDS;                  /* no exit */
    for (int i = SEBT_EXIT_KINDS - 1; i >= 0; i--)
        if (hit[i])
            reason = i;
    d.kind = SEBT_REF_EXIT;
    d.lhs = d.rhs = 0.0;
    d.hit = hit;
    d.answer = reason;
    reason = decide(hook, &d);
    if (reason < 0 || reason >= SEBT_EXIT_KINDS)
        return false;

    double exit_price = reason == SEBT_EXIT_STOP_GAP ? s->open[u]   /* gapped through: the open */
                      : reason == SEBT_EXIT_STOP ? pos->stop
                      : reason == SEBT_EXIT_TP ? pos->tp
                      : s->close[u];                                /* time: the close */
    double fee = (pos->entry + exit_price) * (p->fee_bp + p->slippage_bp) / 10000.0;
    double pnl = exit_price - pos->entry - fee;
    *tr = (sebt_trade){
        .signal_index = (int64_t)pos->signal_bar,
        .entry_index = (int64_t)pos->entry_bar,
        .exit_index = (int64_t)u,
        .entry_price = pos->entry,
        .exit_price = exit_price,
        .stop = pos->stop,
        .tp = pos->tp,
        .risk = pos->risk,
        .pnl = pnl,
        .r = pnl / pos->risk,
        .reason = (sebt_exit_reason)reason,
        .bars_held = pos->bars,
    };
    pos->open = false;          /* a signal on the exit bar may open the next trade */
    return true;
}

typedef struct {
    sebt_trade *v;
    size_t n, cap;
} trade_list;

static int push(trade_list *l, const sebt_trade *tr)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        sebt_trade *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *tr;
    return 0;
}

sebt_status sebt_ref_walk(const sebt_series *s, const sebt_features *f, const sebt_params *p,
                          const sebt_ref_hook *hook, sebt_result *r, sebt_error *err)
{
    size_t n = s->n;
    trade_list list = { 0 };

    /* v[0] < v[1] < ... < v[K-1]: the valid bars (SPEC §5). */
    size_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return sebt_ref_fail(err, SEBT_ERR_NOMEM, "reference: out of memory for %zu bars", n);
    size_t K = 0;
    for (size_t t = 0; t < n; t++)
        if (f->valid[t])
            v[K++] = t;

    sebt_ref_position pos = { 0 };
    for (size_t k = 0; k + 1 < K; k++) {            /* k in 0 .. K-2 */
        sebt_trade tr;
        if (!sebt_ref_step(s, f, p, hook, &pos, v[k], v[k + 1], &tr))
            continue;
        bool go_on = !hook || !hook->closed || hook->closed(hook->user, &tr);
        if (push(&list, &tr) != 0) {
            free(list.v);
            free(v);
            return sebt_ref_fail(err, SEBT_ERR_NOMEM, "reference: out of memory after %zu trades", list.n);
        }
        if (!go_on)
            break;
    }

    r->valid_bars = K;
    r->open_at_end = (sebt_open_position){ 0 };
    if (pos.open) {
        r->open_at_end = (sebt_open_position){
            .open = true,
            .signal_index = (int64_t)pos.signal_bar,
            .entry_index = (int64_t)pos.entry_bar,
            .entry_price = pos.entry,
            .stop = pos.stop,
            .tp = pos.tp,
            .risk = pos.risk,
            .bars_held = pos.bars,
        };
    }
    r->n_trades = list.n;
    r->trades = list.n ? list.v : NULL;
    if (!list.n)
        free(list.v);
    free(v);
    return SEBT_OK;
}
