#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sebt/sebt.h"
#include "series_map.h"

/* The series living in a mapping (series_map.h), found by their ts array.
 * A process holds a few series at once; past the table's room the cache
 * copies, so nothing depends on its size. */
#define MAX_MAPPED 64
static struct {
    const void *ts;
    void *base;
    size_t len;
} mapped[MAX_MAPPED];
static pthread_mutex_t mapped_mu = PTHREAD_MUTEX_INITIALIZER;

bool series_map_register(const void *ts, void *base, size_t len)
{
    bool ok = false;
    pthread_mutex_lock(&mapped_mu);
    for (size_t i = 0; i < MAX_MAPPED && !ok; i++)
        if (!mapped[i].ts) {
            mapped[i].ts = ts;
            mapped[i].base = base;
            mapped[i].len = len;
            ok = true;
        }
    pthread_mutex_unlock(&mapped_mu);
    return ok;
}

/* Unmaps the series whose ts array is ts, if it is mapped. */
static bool unmap_series(const void *ts)
{
    void *base = NULL;
    size_t len = 0;
    pthread_mutex_lock(&mapped_mu);
    for (size_t i = 0; i < MAX_MAPPED; i++)
        if (mapped[i].ts == ts) {
            base = mapped[i].base;
            len = mapped[i].len;
            mapped[i].ts = NULL;
            break;
        }
    pthread_mutex_unlock(&mapped_mu);
    if (!base)
        return false;
    munmap(base, len);
    return true;
}

sebt_status sebt_series_alloc(sebt_series *s, size_t n, sebt_error *err)
{
    memset(s, 0, sizeof *s);
    size_t m = n ? n : 1; /* calloc(0) may return NULL: keep pointers valid */
    s->ts = calloc(m, sizeof *s->ts);
    s->open = calloc(m, sizeof(double));
    s->high = calloc(m, sizeof(double));
    s->low = calloc(m, sizeof(double));
    s->close = calloc(m, sizeof(double));
    s->volume = calloc(m, sizeof(double));
    if (!s->ts || !s->open || !s->high || !s->low || !s->close || !s->volume) {
        sebt_series_free(s);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory allocating a series of %zu bars", n);
    }
    s->n = n;
    return SEBT_OK;
}

void sebt_series_free(sebt_series *s)
{
    if (!s)
        return;
    if (s->ts && unmap_series(s->ts)) {
        memset(s, 0, sizeof *s);
        return;
    }
    free(s->ts);
    free(s->open);
    free(s->high);
    free(s->low);
    free(s->close);
    free(s->volume);
    memset(s, 0, sizeof *s);
}

sebt_status sebt_series_slice(const sebt_series *src, size_t from, size_t count,
                              sebt_series *dst, sebt_error *err)
{
    if (from > src->n || count > src->n - from)
        return sebt_fail(err, SEBT_ERR_USAGE, "slice [%zu, %zu) is outside a series of %zu bars",
                         from, from + count, src->n);
    sebt_status st = sebt_series_alloc(dst, count, err);
    if (st)
        return st;
    memcpy(dst->ts, src->ts + from, count * sizeof *dst->ts);
    memcpy(dst->open, src->open + from, count * sizeof(double));
    memcpy(dst->high, src->high + from, count * sizeof(double));
    memcpy(dst->low, src->low + from, count * sizeof(double));
    memcpy(dst->close, src->close + from, count * sizeof(double));
    memcpy(dst->volume, src->volume + from, count * sizeof(double));
    sebt_series_recount(dst);
    return SEBT_OK;
}

void sebt_series_set_missing(sebt_series *s, size_t t)
{
    s->open[t] = s->high[t] = s->low[t] = s->close[t] = s->volume[t] = NAN;
}

bool sebt_series_is_missing(const sebt_series *s, size_t t)
{
    return isnan(s->open[t]) && isnan(s->high[t]) && isnan(s->low[t]) &&
           isnan(s->close[t]) && isnan(s->volume[t]);
}

sebt_status sebt_series_check(const sebt_series *s, sebt_error *err)
{
    for (size_t t = 0; t < s->n; t++) {
        if (t > 0 && s->ts[t] <= s->ts[t - 1])
            return sebt_fail(err, SEBT_ERR_INPUT,
                             "bar %zu: timestamp %lld is not after the previous bar's %lld",
                             t, (long long)s->ts[t], (long long)s->ts[t - 1]);
        if (sebt_series_is_missing(s, t))
            continue;
        double o = s->open[t], h = s->high[t], l = s->low[t], c = s->close[t], v = s->volume[t];
        if (!isfinite(o) || !isfinite(h) || !isfinite(l) || !isfinite(c) || !isfinite(v))
            return sebt_fail(err, SEBT_ERR_INPUT,
                             "bar %zu: a bar is either all finite or all NaN (missing)", t);
        if (!(l <= fmin(o, c)) || !(h >= fmax(o, c)) || !(l >= 0) || !(v >= 0))
            return sebt_fail(err, SEBT_ERR_INPUT,
                             "bar %zu: breaks low <= min(open, close) <= max(open, close) <= high, "
                             "low >= 0, volume >= 0", t);
    }
    return SEBT_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void sebt_series_recount(sebt_series *s)
{
    s->n_missing = 0;
    for (size_t t = 0; t < s->n; t++)
        s->n_missing += sebt_series_is_missing(s, t);
    s->interval_ms = 0;
    if (s->n < 2)
        return;
    /* The most common step; on a tie the smallest, so the answer does not
     * depend on the order the steps were seen in. */
    int64_t *d = malloc((s->n - 1) * sizeof *d);
    if (!d)
        return;
    for (size_t t = 1; t < s->n; t++)
        d[t - 1] = s->ts[t] - s->ts[t - 1];
    qsort(d, s->n - 1, sizeof *d, cmp_i64);
    size_t best_run = 0;
    for (size_t i = 0; i < s->n - 1;) {
        size_t j = i;
        while (j < s->n - 1 && d[j] == d[i])
            j++;
        if (j - i > best_run) {
            best_run = j - i;
            s->interval_ms = d[i];
        }
        i = j;
    }
    free(d);
}
