/* Walk-forward: on each train window the grid is swept through the
 * library's streamed driver and the best combo under the condition is
 * picked; it is then run on the test window after it with its trades, and
 * the test windows' trades are chained into one result (docs/out-of-sample.md). */
#include <stdlib.h>
#include <string.h>

#include "sebt/oos.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "test_faults.h"

/* ---- the windows ---------------------------------------------------------- */

/* Window k's bars into w; false when its test span is not whole. */
static bool wf_bounds(const sebt_series *s, const sebt_wf_opts *o, size_t k, sebt_wf_window *w)
{
    if (!o->by_time) {
        uint64_t from = (uint64_t)k * (uint64_t)o->test;
        if (from + (uint64_t)o->train + (uint64_t)o->test > s->n)
            return false;
        w->train_from = (size_t)from;
        w->train_to = w->test_from = (size_t)(from + (uint64_t)o->train);
        w->test_to = w->test_from + (size_t)o->test - (SEBT_FAULT("wf_test_window_one_bar_short") ? 1 : 0);
        return true;
    }
    int64_t t0 = s->ts[0] + (int64_t)k * o->test, step = s->interval_ms > 0 ? s->interval_ms : 1;
    if (t0 + o->train + o->test > s->ts[s->n - 1] + step)   /* the last bar ends before the span does */
        return false;
    w->train_from = sebt_series_cut(s, t0);
    w->train_to = w->test_from = sebt_series_cut(s, t0 + o->train);
    w->test_to = sebt_series_cut(s, t0 + o->train + o->test);
    return true;
}

bool sebt_wf_window_skipped(const sebt_wf_window *w)
{
    return w->train_to == w->train_from || w->test_to == w->test_from;
}

static size_t wf_count(const sebt_series *s, const sebt_wf_opts *o)
{
    size_t k = 0;
    sebt_wf_window w;
    while (wf_bounds(s, o, k, &w))
        k++;
    return k;
}

/* ---- one train window: the sweep, the pick, the samples ----------------------- */

typedef struct {
    const sebt_wf_result *r;
    sebt_wf_window *w;
    size_t next_sample;
} wf_train;

/* Keeps the sampled combos' train metrics (the driver keeps the pick). */
static int wf_on_window(void *user, const sebt_sweep_window *sw)
{
    wf_train *t = user;
    for (size_t i = 0; i < sw->count && t->next_sample < t->r->n_sample; i++)
        if (t->r->sample_ids[t->next_sample] == sw->first + i)
            t->w->sample_metrics[t->next_sample++] = sw->results[i].metrics;
    return 0;
}

/* Shifts a sub-series' bar indices to the whole series' (the part began at from). */
static void wf_shift(sebt_result *r, size_t from)
{
    for (size_t i = 0; i < r->n_trades; i++) {
        r->trades[i].signal_index += (int64_t)from;
        r->trades[i].entry_index += (int64_t)from;
        r->trades[i].exit_index += (int64_t)from;
    }
    if (r->open_at_end.open) {
        r->open_at_end.signal_index += (int64_t)from;
        r->open_at_end.entry_index += (int64_t)from;
    }
}

static sebt_status wf_test(const sebt_backend *b, const sebt_series *s, const sebt_wf_opts *o, sebt_wf_window *w,
                           sebt_error *err)
{
    sebt_series part = { 0 };
    sebt_status st = sebt_series_slice(s, w->test_from, w->test_to - w->test_from, &part, err);
    if (st)
        return st;
    sebt_batch_opts bo = { .threads = o->threads, .want_trades = true };
    st = sebt_backend_run(b, &part, &w->params, 1, &bo, &w->test, err);
    if (!st)
        st = sebt_result_fits(&w->params, w->combo, &w->test, err);
    if (!st)
        wf_shift(&w->test, w->test_from);
    sebt_series_free(&part);
    return st;
}

static sebt_status wf_samples(const sebt_wf_opts *o, sebt_wf_result *r, sebt_error *err)
{
    size_t n = o->sample < o->n_combos ? o->sample : o->n_combos;
    r->sample_ids = malloc((n ? n : 1) * sizeof *r->sample_ids);
    r->sample_params = calloc(n ? n : 1, sizeof *r->sample_params);
    for (size_t k = 0; k < r->n_windows; k++)
        if (!(r->windows[k].sample_metrics = calloc(n ? n : 1, sizeof(sebt_metrics))))
            return sebt_fail(err, SEBT_ERR_NOMEM, "walk-forward: no memory for %zu sampled combos", n);
    if (!r->sample_ids || !r->sample_params)
        return sebt_fail(err, SEBT_ERR_NOMEM, "walk-forward: no memory for %zu sampled combos", n);
    for (size_t i = 0; i < n; i++) {   /* evenly spaced, ascending, distinct as n <= n_combos */
        uint64_t id = (uint64_t)(i * (o->n_combos / n) + i * (o->n_combos % n) / n);
        r->sample_ids[i] = id;
        if (o->grid)
            sebt_grid_combos(o->grid, (size_t)id, 1, &r->sample_params[i]);
        else
            r->sample_params[i] = o->combos[id];
    }
    r->n_sample = n;
    return SEBT_OK;
}

static sebt_status wf_window(const sebt_backend *b, const sebt_series *s, const sebt_wf_opts *o, sebt_wf_result *r,
                             sebt_wf_window *w, sebt_error *err)
{
    if (sebt_wf_window_skipped(w))
        return SEBT_OK;
    sebt_series part = { 0 };
    sebt_status st;
    if ((st = sebt_series_slice(s, w->train_from, w->train_to - w->train_from, &part, err)) != SEBT_OK)
        return st;
    wf_train t = { .r = r, .w = w };
    sebt_sweep_opts so = { .grid = o->grid, .combos = o->combos, .n_combos = o->n_combos, .threads = o->threads,
                           .window = o->window, .top = 1, .metric = o->metric, .where = o->where,
                           .on_window = wf_on_window, .user = &t };
    sebt_sweep_result sr;
    memset(&sr, 0, sizeof sr);
    st = sebt_sweep_run(b, &part, &so, &sr, err);
    sebt_series_free(&part);
    w->passing = sr.combos_passed;
    w->picked = !st && sr.n_top == 1;
    if (w->picked) {
        const sebt_sweep_record *k = &sr.top[0];
        w->combo = k->combo;
        if (o->grid)
            sebt_grid_combos(o->grid, (size_t)k->combo, 1, &w->params);
        else
            w->params = o->combos[k->combo];
        w->train.metrics = k->metrics;
        w->train.n_trades = (size_t)k->metrics.n;
        w->train.valid_bars = (size_t)k->valid_bars;
        w->train.open_at_end.open = k->open_at_end != 0;
    }
    sebt_sweep_result_free(&sr);
    if (w->picked)
        st = wf_test(b, s, o, w, err);
    return st;
}

/* ---- the whole run --------------------------------------------------------------- */

static sebt_status wf_chain(sebt_wf_result *out, sebt_error *err)
{
    size_t n = 0;
    for (size_t k = 0; k < out->n_windows; k++)
        n += out->windows[k].test.n_trades;
    out->trades = malloc((n ? n : 1) * sizeof *out->trades);
    if (!out->trades)
        return sebt_fail(err, SEBT_ERR_NOMEM, "walk-forward: no memory for %zu trades", n);
    for (size_t k = 0; k < out->n_windows; k++) {
        const sebt_result *t = &out->windows[k].test;
        if (t->n_trades)
            memcpy(out->trades + out->n_trades, t->trades, t->n_trades * sizeof *t->trades);
        out->n_trades += t->n_trades;
    }
    sebt_trades_metrics(out->trades, out->n_trades, &out->metrics);
    return SEBT_OK;
}

sebt_status sebt_walkforward_run(const sebt_backend *b, const sebt_series *s, const sebt_wf_opts *o,
                                 sebt_wf_result *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    if (!b || !s || !o || s->n == 0 || (!o->grid == !o->combos) || o->n_combos == 0 || o->train < 1 ||
        o->test < 1 || !sebt_metric_name(o->metric))
        return sebt_fail(err, SEBT_ERR_USAGE, "walk-forward: a backend, a series, one of grid or combos, train and "
                         "test lengths >= 1 and a metric are required");
    size_t n = wf_count(s, o);
    if (n == 0)
        return sebt_fail(err, SEBT_ERR_USAGE, "walk-forward: the series (%zu bars) holds no whole train window "
                         "and test window after it", s->n);
    size_t sample = o->sample < o->n_combos ? o->sample : o->n_combos;
    if (n > SEBT_WF_MAX_WINDOWS || (sample && n > SEBT_WF_MAX_SAMPLED / sample))
        return sebt_fail(err, SEBT_ERR_USAGE, "walk-forward: %zu windows with %zu sampled combos each; at most %d "
                         "windows and %d sampled runs in all: a longer test window, or fewer sampled combos", n,
                         sample, SEBT_WF_MAX_WINDOWS, SEBT_WF_MAX_SAMPLED);
    out->windows = calloc(n, sizeof *out->windows);
    if (!out->windows)
        return sebt_fail(err, SEBT_ERR_NOMEM, "walk-forward: no memory for %zu windows", n);
    out->n_windows = n;
    sebt_status st = wf_samples(o, out, err);
    for (size_t k = 0; k < n && !st; k++) {
        wf_bounds(s, o, k, &out->windows[k]);
        st = wf_window(b, s, o, out, &out->windows[k], err);
        if (o->progress)
            o->progress(o->progress_user, k + 1, n);
    }
    if (!st)
        st = wf_chain(out, err);
    if (st)
        sebt_walkforward_free(out);
    return st;
}

void sebt_walkforward_free(sebt_wf_result *r)
{
    if (!r)
        return;
    for (size_t k = 0; k < r->n_windows; k++) {
        sebt_result_free(&r->windows[k].test);
        free(r->windows[k].sample_metrics);
    }
    free(r->windows);
    free(r->sample_ids);
    free(r->sample_params);
    free(r->trades);
    memset(r, 0, sizeof *r);
}
