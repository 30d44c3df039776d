/* SPEC §6: one position at a time, walking the valid bars only. */
#include <stdlib.h>

#include "ref.h"

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

sebt_status sebt_ref_simulate(const sebt_series *s, const sebt_features *f,
                              const sebt_params *p, sebt_result *r, sebt_error *err)
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

    int in_pos = 0;
    size_t sig_bar = 0, entry_bar = 0;
    double entry = 0.0, stop = 0.0, risk = 0.0, tp = 0.0;
    int32_t bars = 0;

    for (size_t k = 0; k + 1 < K; k++) {            /* k in 0 .. K-2 */
        size_t t = v[k], u = v[k + 1];
        if (!in_pos) {
            if (f->signal[t]) {
                entry = s->open[u];
                stop = p->use_stop ? s->low[t] - p->atr_stop_mult * f->atr[t] : 0.0;
                if (p->use_stop) {
                    double d = entry - stop;
                    risk = d > 1e-8 ? d : 1e-8;     /* max(1e-8, entry - stop) */
                } else {
                    risk = entry * 0.01;
                }
                tp = p->use_tp ? entry + p->reward_r * risk : 0.0;
                bars = 0;
                in_pos = 1;
                sig_bar = t;
                entry_bar = u;
            }
            continue;           /* the entry bar itself is never checked for exits */
        }

        bars += 1;
        int have_exit = 1;
        double exit_price = 0.0;
        sebt_exit_reason reason = SEBT_EXIT_TIME;
        if (p->use_stop && s->open[u] <= stop) {
            exit_price = s->open[u];
            reason = SEBT_EXIT_STOP_GAP;
        } else if (p->use_stop && s->low[u] <= stop) {
            exit_price = stop;
            reason = SEBT_EXIT_STOP;
        } else if (p->use_tp && tp > 0 && s->high[u] >= tp) {
            exit_price = tp;
            reason = SEBT_EXIT_TP;
        } else if (p->use_time && bars >= p->max_hold) {
            exit_price = s->close[u];
            reason = SEBT_EXIT_TIME;
        } else {
            have_exit = 0;
        }
        if (!have_exit)
            continue;

        double fee = (entry + exit_price) * (p->fee_bp + p->slippage_bp) / 10000.0;
        double pnl = exit_price - entry - fee;
        sebt_trade tr = {
            .signal_index = (int64_t)sig_bar,
            .entry_index = (int64_t)entry_bar,
            .exit_index = (int64_t)u,
            .entry_price = entry,
            .exit_price = exit_price,
            .stop = stop,
            .tp = tp,
            .risk = risk,
            .pnl = pnl,
            .r = pnl / risk,
            .reason = reason,
            .bars_held = bars,
        };
        if (push(&list, &tr) != 0) {
            free(list.v);
            free(v);
            return sebt_ref_fail(err, SEBT_ERR_NOMEM, "reference: out of memory after %zu trades", list.n);
        }
        in_pos = 0;             /* a signal on the exit bar may open the next trade */
    }

    r->valid_bars = K;
    r->open_at_end = (sebt_open_position){ 0 };
    if (in_pos) {
        r->open_at_end = (sebt_open_position){
            .open = true,
            .signal_index = (int64_t)sig_bar,
            .entry_index = (int64_t)entry_bar,
            .entry_price = entry,
            .stop = stop,
            .tp = tp,
            .risk = risk,
            .bars_held = bars,
        };
    }
    r->n_trades = list.n;
    r->trades = list.n ? list.v : NULL;
    if (!list.n)
        free(list.v);
    free(v);
    return SEBT_OK;
}
