/* Out-of-sample checks, their shared parts: the cut of a series at a date,
 * conditions over a sweep's columns, and the split run (in-sample and
 * out-of-sample results side by side). SPEC §7 over a chain of trades is
 * core/metrics.c's. */
#include <stdlib.h>
#include <string.h>

#include "sebt/oos.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "test_faults.h"

size_t sebt_series_cut(const sebt_series *s, int64_t ts)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ts[mid] < ts || (SEBT_FAULT("series_cut_one_bar_late") && s->ts[mid] == ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- split -------------------------------------------------------------------- */

typedef struct {
    const sebt_backend *b;
    const sebt_split_opts *o;
    sebt_series part[2];          /* in sample, out of sample */
    sebt_params *combos;          /* a window's */
    sebt_result *res[2];
    size_t cap;                   /* combos per window */
    sebt_split_result *out;
} split_run;

/* Keeps the top best by in-sample metric, best first (insertion: top is a
 * list for people to read, a few dozen). */
static void split_offer(split_run *r, uint64_t combo, const sebt_params *p, const sebt_result *is,
                        const sebt_result *oos)
{
    sebt_split_result *out = r->out;
    size_t n = out->n_top, cap = r->o->top;
    int metric = r->o->metric;
    if (n == cap && sebt_rank_compare(&is->metrics, combo, &out->top[n - 1].in_sample.metrics,
                                      out->top[n - 1].combo, metric) > 0)
        return;
    size_t at = n < cap ? n : n - 1;
    while (at > 0 && sebt_rank_compare(&is->metrics, combo, &out->top[at - 1].in_sample.metrics,
                                       out->top[at - 1].combo, metric) < 0)
        at--;
    size_t move = (n < cap ? n : n - 1) - at;
    memmove(&out->top[at + 1], &out->top[at], move * sizeof *out->top);
    sebt_split_pick *k = &out->top[at];
    k->combo = combo;
    k->params = *p;
    k->in_sample = *is;
    k->out_sample = *oos;
    k->in_sample.trades = k->out_sample.trades = NULL;
    if (n < cap)
        out->n_top++;
}

/* Backtests one window of combos on both parts, checks every result. */
static sebt_status split_window(split_run *r, uint64_t first, size_t count, sebt_error *err)
{
    const sebt_split_opts *o = r->o;
    if (o->grid)
        sebt_grid_combos(o->grid, (size_t)first, count, r->combos);
    else
        memcpy(r->combos, o->combos + first, count * sizeof *r->combos);
    sebt_batch_opts bo = { .threads = o->threads };
    for (int side = 0; side < 2; side++) {
        memset(r->res[side], 0, count * sizeof *r->res[side]);
        sebt_status st = sebt_backend_run(r->b, &r->part[side], r->combos, count, &bo, r->res[side], err);
        if (st)
            return st;
        for (size_t i = 0; i < count; i++)
            if ((st = sebt_result_fits(&r->combos[i], first + i, &r->res[side][i], err)) != SEBT_OK)
                return st;
    }
    return SEBT_OK;
}

static sebt_status split_loop(split_run *r, sebt_error *err)
{
    const sebt_split_opts *o = r->o;
    for (uint64_t first = 0; first < o->n_combos; first += r->cap) {
        size_t count = o->n_combos - first < r->cap ? (size_t)(o->n_combos - first) : r->cap;
        sebt_status st = split_window(r, first, count, err);
        if (st)
            return st;
        for (size_t i = 0; i < count; i++) {
            if (o->where && !sebt_sweep_row_passes(o->where, first + i, &r->combos[i], &r->res[0][i]))
                continue;
            r->out->passing++;
            if (o->top)
                split_offer(r, first + i, &r->combos[i], &r->res[0][i], &r->res[1][i]);
        }
        r->out->combos_done += count;
        sebt_split_window w = { first, count, r->combos, r->res[0], r->res[1] };
        if (o->on_window && (r->out->stopped = o->on_window(o->user, &w)) != 0)
            break;
        if (o->progress)
            o->progress(o->progress_user, r->out->combos_done, o->n_combos);
    }
    return SEBT_OK;
}

static sebt_status split_setup(split_run *r, const sebt_series *s, sebt_error *err)
{
    const sebt_split_opts *o = r->o;
    size_t cut = sebt_series_cut(s, o->split_ts);
    r->out->cut = cut;
    if (cut == 0 || cut == s->n)
        return sebt_fail(err, SEBT_ERR_USAGE, "the split leaves %s: the series' open times run from %lld to %lld ms",
                         cut == 0 ? "no in-sample bars" : "no out-of-sample bars", (long long)s->ts[0],
                         (long long)s->ts[s->n - 1]);
    r->cap = o->window ? o->window : SEBT_SWEEP_WINDOW;
    if (r->cap > o->n_combos)
        r->cap = o->n_combos;
    sebt_status st = sebt_series_slice(s, 0, cut, &r->part[0], err);
    if (!st)
        st = sebt_series_slice(s, cut, s->n - cut, &r->part[1], err);
    if (st)
        return st;
    r->combos = malloc(r->cap * sizeof *r->combos);
    r->res[0] = malloc(r->cap * sizeof *r->res[0]);
    r->res[1] = malloc(r->cap * sizeof *r->res[1]);
    r->out->top = o->top ? calloc(o->top, sizeof *r->out->top) : NULL;
    if (!r->combos || !r->res[0] || !r->res[1] || (o->top && !r->out->top))
        return sebt_fail(err, SEBT_ERR_NOMEM, "split: no memory for a window of %zu combos", r->cap);
    return SEBT_OK;
}

sebt_status sebt_split_run(const sebt_backend *b, const sebt_series *s, const sebt_split_opts *o,
                           sebt_split_result *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    if (!b || !s || !o || s->n == 0 || (!o->grid == !o->combos) || o->n_combos == 0 ||
        (o->top && !sebt_metric_name(o->metric)))
        return sebt_fail(err, SEBT_ERR_USAGE, "split: a backend, a series, one of grid or combos, and a metric "
                         "for top are required");
    split_run r = { .b = b, .o = o, .out = out };
    sebt_status st = split_setup(&r, s, err);
    if (!st)
        st = split_loop(&r, err);
    sebt_series_free(&r.part[0]);
    sebt_series_free(&r.part[1]);
    free(r.combos);
    free(r.res[0]);
    free(r.res[1]);
    if (st)
        sebt_split_result_free(out);
    return st;
}

void sebt_split_result_free(sebt_split_result *r)
{
    if (!r)
        return;
    free(r->top);
    r->top = NULL;
    r->n_top = 0;
}
