/* What a backend returns is checked against SPEC's invariants before sebt
 * prints or writes it (include/sebt/sebt.h, "result checks"): a plugin, a
 * kernel in a child process or a bug of our own must never turn into a
 * committed file of impossible numbers. Each check is O(1) per combo (plus
 * O(trades) when trades were asked for), so it stays on. */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sebt/backend.h"
#include "sebt/sebt.h"

#define BAD(...) sebt_fail(err, SEBT_ERR_INTERNAL, __VA_ARGS__)

static const char *name_of(const sebt_backend *b)
{
    return b && b->name ? b->name : "?";
}

/* Finite and far from overflow in a product or two (SPEC 6's pnl). */
static bool ordinary(double v)
{
    return fabs(v) <= 1e100;
}

/* A bool read as its byte: a plugin may have stored any value there. */
static unsigned bool_byte(const bool *v)
{
    unsigned char c;
    memcpy(&c, v, 1);
    return c;
}

sebt_status sebt_result_check(const sebt_backend *b, const sebt_series *s, const sebt_params *p,
                              size_t combo, const sebt_result *r, sebt_error *err)
{
    const char *bn = name_of(b);
    const sebt_metrics *m = &r->metrics;
#define WHY(field, fmt, ...)                                                                              \
    BAD("backend %s returned an impossible result for combo %zu: " field " " fmt                         \
        " (a bug in the backend; nothing was written)", bn, combo, __VA_ARGS__)
    if (m->n < 0)
        return WHY("n", "= %lld is negative", (long long)m->n);
    if ((uint64_t)m->n != (uint64_t)r->n_trades)
        return WHY("n", "= %lld but the result holds n_trades = %zu", (long long)m->n, r->n_trades);
    if (r->valid_bars > s->n)
        return WHY("valid_bars", "= %zu but the series has %zu bars", r->valid_bars, s->n);
    /* Every trade takes a signal bar, an entry bar and an exit bar that may
     * be the next trade's signal bar: 2n+1 valid bars at least. */
    if (m->n > 0 && (uint64_t)m->n > (r->valid_bars - (r->valid_bars > 0)) / 2)
        return WHY("n", "= %lld trades need %llu valid bars, the result says valid_bars = %zu", (long long)m->n,
                   2ull * (unsigned long long)m->n + 1, r->valid_bars);
    if (!(m->win_rate >= 0 && m->win_rate <= 1) && !isnan(m->win_rate))
        return WHY("win_rate", "= %.17g is outside [0, 1]", m->win_rate);
    if (m->max_dd > 0)
        return WHY("max_dd", "= %.17g is positive (a drawdown is <= 0, SPEC 7)", m->max_dd);
    if (m->n == 0) {
        const double v[] = { m->win_rate, m->avg_r, m->total_pnl, m->max_dd, m->sharpe };
        static const char *const nm[] = { "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe" };
        for (int i = 0; i < 5; i++)
            if (v[i] != 0)
                return BAD("backend %s returned an impossible result for combo %zu: %s = %.17g with no trades "
                           "(every metric is 0 then, SPEC 7; a bug in the backend; nothing was written)",
                           bn, combo, nm[i], v[i]);
    } else if (m->n < 2 && m->sharpe != 0) {
        return WHY("sharpe", "= %.17g with n = 1 (it is 0 when n < 2, SPEC 7)", m->sharpe);
    }
    unsigned open = bool_byte(&r->open_at_end.open);
    if (open > 1)
        return WHY("open_at_end", "holds the byte %u (a bool is 0 or 1)", open);

    int64_t last_exit = -1;
    if (r->trades) {
        /* Trades are malloc'd (backend.h): an array shorter than n_trades
         * would be read past its end. */
        size_t have = malloc_usable_size(r->trades);
        if (r->n_trades > have / sizeof(sebt_trade))
            return WHY("n_trades", "= %zu but its trades array holds %zu", r->n_trades, have / sizeof(sebt_trade));
        for (size_t k = 0; k < r->n_trades; k++) {
            const sebt_trade *t = &r->trades[k];
            int64_t n = (int64_t)s->n;
#define TWHY(fmt, ...)                                                                                    \
    BAD("backend %s returned an impossible result for combo %zu: trade %zu " fmt                         \
        " (a bug in the backend; nothing was written)", bn, combo, k + 1, __VA_ARGS__)
            if (!(t->signal_index >= 0 && t->signal_index < t->entry_index && t->entry_index < t->exit_index &&
                  t->exit_index < n))
                return TWHY("has bars signal %lld, entry %lld, exit %lld (expected 0 <= signal < entry < exit < %lld)",
                            (long long)t->signal_index, (long long)t->entry_index, (long long)t->exit_index,
                            (long long)n);
            if (t->signal_index < last_exit)
                return TWHY("signals at bar %lld, before the previous trade's exit at bar %lld",
                            (long long)t->signal_index, (long long)last_exit);
            last_exit = t->exit_index;
            unsigned reason = (unsigned)t->reason;
            if (reason > SEBT_EXIT_TIME)
                return TWHY("has exit reason %u (expected 0-3: stop_gap, stop, tp, time)", reason);
            bool allowed = reason <= SEBT_EXIT_STOP ? p->use_stop : reason == SEBT_EXIT_TP ? p->use_tp : p->use_time;
            if (!allowed)
                return TWHY("exits by %s, which this combo does not use", sebt_exit_reason_name(t->reason));
            if (t->bars_held < 1 || (int64_t)t->bars_held > t->exit_index - t->entry_index)
                return TWHY("has bars_held = %d between entry bar %lld and exit bar %lld", (int)t->bars_held,
                            (long long)t->entry_index, (long long)t->exit_index);
            if (p->use_time && t->bars_held > p->max_hold)
                return TWHY("has bars_held = %d beyond max_hold = %d", (int)t->bars_held, (int)p->max_hold);
            /* NaN comes only of an overflow (inf - inf) or 0/0: never of
             * prices and costs this far from a double's range. Beyond it
             * the input is to blame (cli_check_result says so). */
            if (isnan(t->pnl) && ordinary(t->entry_price) && ordinary(t->exit_price) && ordinary(p->fee_bp) &&
                ordinary(p->slippage_bp))
                return TWHY("has pnl = nan with entry price %.17g and exit price %.17g (ordinary prices give a "
                            "number)", t->entry_price, t->exit_price);
#undef TWHY
        }
    }
    if (open) {
        const sebt_open_position *o = &r->open_at_end;
        if (!(o->signal_index >= 0 && o->signal_index < o->entry_index && o->entry_index < (int64_t)s->n))
            return WHY("open_at_end", "has bars signal %lld, entry %lld (expected 0 <= signal < entry < %zu)",
                       (long long)o->signal_index, (long long)o->entry_index, s->n);
        if (o->signal_index < last_exit)
            return WHY("open_at_end", "signals at bar %lld, before the last trade's exit at bar %lld",
                       (long long)o->signal_index, (long long)last_exit);
        if (o->bars_held < 0)
            return WHY("open_at_end", "has bars_held = %d", (int)o->bars_held);
    }
#undef WHY
    return SEBT_OK;
}

sebt_status sebt_results_check(const sebt_backend *b, const sebt_series *s, const sebt_params *combos,
                               const size_t *combo_ids, size_t n, const sebt_result *results, sebt_error *err)
{
    for (size_t i = 0; i < n; i++) {
        sebt_status st = sebt_result_check(b, s, &combos[i], combo_ids ? combo_ids[i] : i, &results[i], err);
        if (st != SEBT_OK)
            return st;
    }
    return SEBT_OK;
}

sebt_status sebt_features_result_check(const sebt_backend *b, const sebt_series *s, const sebt_features *f,
                                sebt_error *err)
{
    if (f->n != s->n)
        return BAD("backend %s returned features of %zu bars for a series of %zu (a bug in the backend)",
                   name_of(b), f->n, s->n);
    for (size_t t = 0; t < f->n; t++)
        if (f->signal[t] > 1 || f->valid[t] > 1)
            return BAD("backend %s returned an impossible feature at bar %zu: %s = %u (a flag is 0 or 1; a bug "
                       "in the backend; nothing was written)", name_of(b), t, f->signal[t] > 1 ? "signal" : "valid",
                       (unsigned)(f->signal[t] > 1 ? f->signal[t] : f->valid[t]));
    return SEBT_OK;
}

sebt_status sebt_backend_status(const sebt_backend *b, sebt_status st, sebt_error *err)
{
    if (st == SEBT_OK)
        return SEBT_OK;
    if ((unsigned)st > (unsigned)SEBT_ERR_TIMEOUT) {
        char said[SEBT_ERROR_MSG_MAX / 2];
        snprintf(said, sizeof said, "%.200s", err->msg);
        return BAD("backend %s failed with an unknown status %d%s%s", name_of(b), (int)st,
                   said[0] ? ": " : " and no message", said);
    }
    if (err->code != st)
        err->code = st;
    if (!err->msg[0])
        return sebt_fail(err, st, "backend %s failed (%s) and gave no message", name_of(b), sebt_status_name(st));
    return st;
}

sebt_status sebt_backend_run(const sebt_backend *b, const sebt_series *s, const sebt_params *combos,
                             size_t n_combos, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    err->code = SEBT_OK;
    err->msg[0] = '\0';
    sebt_status st = sebt_backend_status(b, b->run_batch(b, s, combos, n_combos, opts, results, err), err);
    if (st != SEBT_OK)
        return st;
    return sebt_results_check(b, s, combos, NULL, n_combos, results, err);
}

sebt_status sebt_backend_features(const sebt_backend *b, const sebt_series *s, const sebt_params *p,
                                  sebt_features *out, sebt_error *err)
{
    err->code = SEBT_OK;
    err->msg[0] = '\0';
    sebt_status st = sebt_backend_status(b, b->features(b, s, p, out, err), err);
    if (st != SEBT_OK)
        return st;
    return sebt_features_result_check(b, s, out, err);
}
