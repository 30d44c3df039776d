/* Metamorphic checks: what a backend's result must not depend on, judged
 * without the reference. A combo's result is a function of the
 * series and the combo alone (SPEC §6-7; backend.h: "results never depend
 * on" the memory budget), so the same call twice, the combos reversed on
 * one thread with a one-byte budget (every split there is), and each combo
 * alone must all give the same result. A backend that differs between two
 * identical calls is non-deterministic (a data race, state kept between
 * calls); one that differs between the others depends on its companions,
 * their order, the thread count or the batch split. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"

static bool same_num(double a, double b, double tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (tol <= 0)
        return memcmp(&a, &b, sizeof a) == 0;
    return a == b || fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* The first field where a and b differ, "" when none. */
static void first_difference(const sebt_result *a, const sebt_result *b, double tol, char *what, size_t size,
                             double *va, double *vb)
{
    what[0] = '\0';
#define DIFF(cond, name, x, y) \
    do { if (!(cond)) { snprintf(what, size, "%s", name); *va = (double)(x); *vb = (double)(y); return; } } while (0)
    DIFF(a->valid_bars == b->valid_bars, "valid_bars", a->valid_bars, b->valid_bars);
    DIFF(a->n_trades == b->n_trades, "trade count", a->n_trades, b->n_trades);
    DIFF(a->open_at_end.open == b->open_at_end.open, "open_at_end", a->open_at_end.open, b->open_at_end.open);
    if (a->open_at_end.open) {
        DIFF(a->open_at_end.signal_index == b->open_at_end.signal_index, "open_at_end signal bar",
             a->open_at_end.signal_index, b->open_at_end.signal_index);
        DIFF(same_num(a->open_at_end.entry_price, b->open_at_end.entry_price, tol), "open_at_end entry price",
             a->open_at_end.entry_price, b->open_at_end.entry_price);
    }
    for (size_t i = 0; a->trades && b->trades && i < a->n_trades; i++) {
        const sebt_trade *x = &a->trades[i], *y = &b->trades[i];
        char name[64];
#define TDIFF(cond, field, xv, yv) \
        do { if (!(cond)) { snprintf(name, sizeof name, "trade %zu %s", i, field); DIFF(false, name, xv, yv); } } while (0)
        TDIFF(x->signal_index == y->signal_index, "signal bar", x->signal_index, y->signal_index);
        TDIFF(x->entry_index == y->entry_index, "entry bar", x->entry_index, y->entry_index);
        TDIFF(x->exit_index == y->exit_index, "exit bar", x->exit_index, y->exit_index);
        TDIFF(x->reason == y->reason, "exit reason", x->reason, y->reason);
        TDIFF(same_num(x->entry_price, y->entry_price, tol), "entry price", x->entry_price, y->entry_price);
        TDIFF(same_num(x->exit_price, y->exit_price, tol), "exit price", x->exit_price, y->exit_price);
        TDIFF(same_num(x->pnl, y->pnl, tol), "pnl", x->pnl, y->pnl);
        TDIFF(same_num(x->r, y->r, tol), "r", x->r, y->r);
#undef TDIFF
    }
    const sebt_metrics *m = &a->metrics, *n = &b->metrics;
    DIFF(m->n == n->n, "metrics.n", m->n, n->n);
    DIFF(same_num(m->win_rate, n->win_rate, tol), "metrics.win_rate", m->win_rate, n->win_rate);
    DIFF(same_num(m->avg_r, n->avg_r, tol), "metrics.avg_r", m->avg_r, n->avg_r);
    DIFF(same_num(m->total_pnl, n->total_pnl, tol), "metrics.total_pnl", m->total_pnl, n->total_pnl);
    DIFF(same_num(m->max_dd, n->max_dd, tol), "metrics.max_dd", m->max_dd, n->max_dd);
    DIFF(same_num(m->sharpe, n->sharpe, tol), "metrics.sharpe", m->sharpe, n->sharpe);
#undef DIFF
}

static sebt_status run(const sebt_backend *b, const sebt_series *s, const sebt_params *combos, size_t n,
                       int threads, size_t budget, sebt_result **out, sebt_error *err)
{
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return sebt_fail(err, SEBT_ERR_NOMEM, "metamorphic: out of memory for %zu results", n);
    sebt_batch_opts o = { .threads = threads, .want_trades = true, .memory_budget = budget };
    sebt_status st = b->run_batch(b, s, combos, n, &o, *out, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

static void release(sebt_result **r, size_t n)
{
    if (*r) {
        sebt_results_free(*r, n);
        free(*r);
        *r = NULL;
    }
}

sebt_status sebt_oracle_metamorphic(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                    size_t n, int threads, size_t memory_budget, sebt_metamorphic_report *rep,
                                    sebt_error *err)
{
    memset(rep, 0, sizeof *rep);
    double tol = cand->contract.kind == SEBT_CONTRACT_EXACT ? 0.0 : cand->contract.tol;
    sebt_result *a = NULL, *b = NULL;
    sebt_params *rev = malloc((n ? n : 1) * sizeof *rev);
    if (!rev)
        return sebt_fail(err, SEBT_ERR_NOMEM, "metamorphic: out of memory");
    sebt_status st = run(cand, s, combos, n, threads, memory_budget, &a, err);
    /* 1: the same call again; 2: reversed, one thread, a one-byte budget;
     * 3: each combo alone (at most 16 of them, spread over the batch). */
    for (int step = 1; st == SEBT_OK && step <= 3 && !rep->failed; step++) {
        if (step == 1) {
            st = run(cand, s, combos, n, threads, memory_budget, &b, err);
            for (size_t i = 0; st == SEBT_OK && i < n && !rep->failed; i++) {
                first_difference(&a[i], &b[i], tol, rep->what, sizeof rep->what, &rep->first, &rep->second);
                if (rep->what[0]) {
                    rep->failed = rep->nondeterministic = true;
                    rep->combo = i;
                    snprintf(rep->detail, sizeof rep->detail,
                             "non-deterministic: two identical calls (%zu combos, %d threads, memory budget %zu) "
                             "disagree on combo %zu: %s %.17g, then %.17g", n, threads, memory_budget, i,
                             rep->what, rep->first, rep->second);
                }
            }
        } else if (step == 2) {
            for (size_t i = 0; i < n; i++)
                rev[i] = combos[n - 1 - i];
            st = run(cand, s, rev, n, 1, 1, &b, err);
            for (size_t i = 0; st == SEBT_OK && i < n && !rep->failed; i++) {
                first_difference(&a[i], &b[n - 1 - i], tol, rep->what, sizeof rep->what, &rep->first,
                                 &rep->second);
                if (rep->what[0]) {
                    rep->failed = true;
                    rep->combo = i;
                    snprintf(rep->detail, sizeof rep->detail,
                             "combo %zu's result depends on the order, the threads or the batch split: %s %.17g "
                             "with %zu combos on %d threads (budget %zu), %.17g reversed on 1 thread with a "
                             "1-byte budget", i, rep->what, rep->first, n, threads, memory_budget, rep->second);
                }
            }
        } else {
            size_t stride = n > 16 ? n / 16 : 1;
            for (size_t i = 0; st == SEBT_OK && i < n && !rep->failed; i += stride) {
                st = run(cand, s, &combos[i], 1, 1, 0, &b, err);
                if (st)
                    break;
                first_difference(&a[i], &b[0], tol, rep->what, sizeof rep->what, &rep->first, &rep->second);
                release(&b, 1);
                if (rep->what[0]) {
                    rep->failed = true;
                    rep->combo = i;
                    snprintf(rep->detail, sizeof rep->detail,
                             "combo %zu's result depends on the combos sharing its call: %s %.17g among %zu "
                             "combos, %.17g alone", i, rep->what, rep->first, n, rep->second);
                }
            }
        }
        release(&b, n);
        rep->calls++;
    }
    release(&a, n);
    free(rev);
    return st;
}
