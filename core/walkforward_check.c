/* A walk-forward checked on another backend (the reference): each window's
 * pick on its train and test windows, and the sampled combos on the train
 * windows, compared bit for bit with what the run kept; and the edges of a
 * split and of the windows against the reference's literal count. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/oos.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "oos_check.h"
/* The reference's literal count of a split's and a window's bars. */
#include "../reference/ref.h"

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The first metric that differs, or NULL. */
static const char *metrics_differ(const sebt_metrics *a, const sebt_metrics *b)
{
    if (a->n != b->n)
        return "n";
    for (int m = SEBT_METRIC_WIN_RATE; m < SEBT_N_METRICS; m++)
        if (!same_bits(sebt_metric_value(a, m), sebt_metric_value(b, m)))
            return sebt_metric_name(m);
    return NULL;
}

static const char *trade_differs(const sebt_trade *a, const sebt_trade *b)
{
    if (a->signal_index != b->signal_index || a->entry_index != b->entry_index)
        return "signal or entry bar";
    if (a->exit_index != b->exit_index || a->reason != b->reason || a->bars_held != b->bars_held)
        return "exit bar, reason or bars held";
    const double x[] = { a->entry_price, a->exit_price, a->stop, a->tp, a->risk, a->pnl, a->r };
    const double y[] = { b->entry_price, b->exit_price, b->stop, b->tp, b->risk, b->pnl, b->r };
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        if (!same_bits(x[i], y[i]))
            return "a price, pnl or R";
    return NULL;
}

/* The first difference between results a (the run's) and b (the check's). */
static const char *result_differs(const sebt_result *a, const sebt_result *b, bool trades)
{
    const char *d = metrics_differ(&a->metrics, &b->metrics);
    if (d)
        return d;
    if (a->valid_bars != b->valid_bars)
        return "valid_bars";
    if (a->open_at_end.open != b->open_at_end.open ||
        (trades && a->open_at_end.open && a->open_at_end.entry_index != b->open_at_end.entry_index))
        return "open_at_end";
    if (!trades)
        return NULL;
    if (a->n_trades != b->n_trades)
        return "the number of trades";
    for (size_t i = 0; i < a->n_trades; i++)
        if ((d = trade_differs(&a->trades[i], &b->trades[i])) != NULL)
            return d;
    return NULL;
}

/* Runs combos on bars [from, to) of s with ref. */
static sebt_status ref_run(const sebt_backend *ref, const sebt_series *s, size_t from, size_t to,
                           const sebt_params *combos, size_t n, bool trades, sebt_result *res, sebt_error *err)
{
    sebt_series part = { 0 };
    sebt_status st = sebt_series_slice(s, from, to - from, &part, err);
    if (st)
        return st;
    sebt_batch_opts bo = { .want_trades = trades };
    memset(res, 0, n * sizeof *res);
    st = sebt_backend_run(ref, &part, combos, n, &bo, res, err);
    sebt_series_free(&part);
    if (!st && trades) {
        for (size_t i = 0; i < res->n_trades; i++) {
            res->trades[i].signal_index += (int64_t)from;
            res->trades[i].entry_index += (int64_t)from;
            res->trades[i].exit_index += (int64_t)from;
        }
        if (res->open_at_end.open)
            res->open_at_end.entry_index += (int64_t)from;
    }
    return st;
}

/* The picked combo of window k run again by the reference over [from, to)
 * (the train window, or the test window with its trades) against what the
 * walk kept for it. */
static sebt_status check_part(const sebt_backend *ref, const sebt_series *s, const sebt_wf_window *w, size_t k,
                              bool test, sebt_error *err)
{
    sebt_result got;
    sebt_status st = ref_run(ref, s, test ? w->test_from : w->train_from, test ? w->test_to : w->train_to,
                             &w->params, 1, test, &got, err);
    if (st)
        return st;
    const char *d = result_differs(test ? &w->test : &w->train, &got, test);
    sebt_result_free(&got);
    if (d)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "window %zu: combo %" PRIu64 " on its %s window: %s differs "
                         "from %s's", k + 1, w->combo, test ? "test" : "train", d, ref->name);
    return SEBT_OK;
}

static sebt_status check_pick(const sebt_backend *ref, const sebt_series *s, const sebt_wf_window *w, size_t k,
                              size_t *compared, sebt_error *err)
{
    sebt_status st = check_part(ref, s, w, k, false, err);
    if (st == SEBT_OK)
        st = check_part(ref, s, w, k, true, err);
    if (st == SEBT_OK)
        *compared += 2;
    return st;
}

static sebt_status check_samples(const sebt_backend *ref, const sebt_series *s, const sebt_wf_result *r, size_t k,
                                 size_t *compared, sebt_error *err)
{
    const sebt_wf_window *w = &r->windows[k];
    if (r->n_sample == 0)
        return SEBT_OK;
    sebt_result *got = calloc(r->n_sample, sizeof *got);
    if (!got)
        return sebt_fail(err, SEBT_ERR_NOMEM, "walk-forward check: no memory for %zu results", r->n_sample);
    sebt_status st = ref_run(ref, s, w->train_from, w->train_to, r->sample_params, r->n_sample, false, got, err);
    for (size_t i = 0; !st && i < r->n_sample; i++) {
        const char *d = metrics_differ(&w->sample_metrics[i], &got[i].metrics);
        if (d)
            st = sebt_fail(err, SEBT_ERR_INTERNAL, "window %zu: combo %" PRIu64 " on its train window: %s differs "
                           "from %s's", k + 1, r->sample_ids[i], d, ref->name);
    }
    if (!st)
        *compared += r->n_sample;
    sebt_results_free(got, r->n_sample);
    free(got);
    return st;
}

sebt_status sebt_walkforward_check(const sebt_backend *ref, const sebt_series *s, const sebt_wf_result *r,
                                   size_t *compared, sebt_error *err)
{
    *compared = 0;
    for (size_t k = 0; k < r->n_windows; k++) {
        const sebt_wf_window *w = &r->windows[k];
        if (sebt_wf_window_skipped(w))
            continue;
        sebt_status st = w->picked ? check_pick(ref, s, w, k, compared, err) : SEBT_OK;
        if (!st)
            st = check_samples(ref, s, r, k, compared, err);
        if (st)
            return st;
    }
    return SEBT_OK;
}

/* ---- the edges -------------------------------------------------------------- */

bool sebt_split_cut_agrees(const sebt_series *s, int64_t split_ts, size_t cut, char *what, size_t size)
{
    size_t want = sebt_ref_split_cut(s, split_ts);
    if (want == cut)
        return true;
    snprintf(what, size, "the split at %" PRId64 " ms cut the series after %zu bars; the bars whose open time is "
             "before it, counted one by one, are %zu", split_ts, cut, want);
    return false;
}

int sebt_wf_edges_agree(const sebt_series *s, const sebt_wf_opts *o, const sebt_wf_result *r, char *what,
                        size_t size)
{
    static const char *const names[4] = { "train_from", "train_to", "test_from", "test_to" };
    /* One more than were run: enough to tell that the lengths hold more. */
    size_t (*e)[4] = malloc((r->n_windows + 1) * sizeof *e);
    if (!e) {
        snprintf(what, size, "out of memory for the edges of %zu windows", r->n_windows + 1);
        return -1;
    }
    size_t n = sebt_ref_wf_windows(s, o->train, o->test, o->by_time, r->n_windows + 1, e);
    bool agree = n == r->n_windows;
    if (!agree)
        snprintf(what, size, "%zu windows were run; the lengths hold %s%zu whole ones", r->n_windows,
                 n > r->n_windows ? "at least " : "", n);
    for (size_t k = 0; agree && k < n; k++) {
        const sebt_wf_window *w = &r->windows[k];
        const size_t got[4] = { w->train_from, w->train_to, w->test_from, w->test_to };
        for (int i = 0; agree && i < 4; i++)
            if (got[i] != e[k][i]) {
                snprintf(what, size, "window %zu: %s is bar %zu, the literal count of its span gives %zu", k + 1,
                         names[i], got[i], e[k][i]);
                agree = false;
            }
    }
    free(e);
    return agree;
}
