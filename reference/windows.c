/* The bars of an out-of-sample split and of walk-forward windows, counted
 * literally from their definitions (docs/out-of-sample.md): a part holds
 * the bars whose open time falls in it, counted one bar at a time. The
 * commands find their edges with core/oos.c's binary search and
 * core/walkforward.c's arithmetic; their proof compares those edges with
 * these, so an edge one bar off shows instead of agreeing with itself. */
#include "ref.h"

/* The bars whose open time is before ts, counted on from `from` bars
 * already known to be before it (the spans only move forward). */
static size_t bars_before_from(const sebt_series *s, size_t from, int64_t ts)
{
    size_t k = from;
    while (k < s->n && s->ts[k] < ts)
        k++;
    return k;
}

size_t sebt_ref_split_cut(const sebt_series *s, int64_t split_ts)
{
    size_t k = 0;
    for (size_t t = 0; t < s->n; t++)
        if (s->ts[t] < split_ts)
            k++;
    return k;
}

/* Window k by bars: `train` bars from bar k * test, then the `test` bars
 * after them, all inside the series. */
static bool window_in_bars(const sebt_series *s, int64_t train, int64_t test, size_t k, size_t e[4])
{
    uint64_t train_from = (uint64_t)k * (uint64_t)test;
    uint64_t test_from = train_from + (uint64_t)train, test_to = test_from + (uint64_t)test;
    if (test_to > s->n)
        return false;
    e[0] = (size_t)train_from;
    e[1] = e[2] = (size_t)test_from;
    e[3] = (size_t)test_to;
    return true;
}

size_t sebt_ref_wf_windows(const sebt_series *s, int64_t train, int64_t test, bool by_time, size_t max,
                           size_t (*edges)[4])
{
    if (s->n == 0)
        return 0;
    size_t k = 0;
    if (!by_time) {
        while (k < max && window_in_bars(s, train, test, k, edges[k]))
            k++;
        return k;
    }
    /* In time, from the first bar's open time: window k's train span
     * starts k test spans later; the test span follows the train span and
     * must end by the end of the last bar (its open time and one step). */
    int64_t step = s->interval_ms > 0 ? s->interval_ms : 1;
    size_t at[3] = { 0, 0, 0 };
    for (; k < max; k++) {
        int64_t start = s->ts[0] + (int64_t)k * test, test_start = start + train, test_end = test_start + test;
        if (test_end > s->ts[s->n - 1] + step)
            break;
        at[0] = bars_before_from(s, at[0], start);
        at[1] = bars_before_from(s, at[1], test_start);
        at[2] = bars_before_from(s, at[2], test_end);
        edges[k][0] = at[0];
        edges[k][1] = edges[k][2] = at[1];
        edges[k][3] = at[2];
    }
    return k;
}
