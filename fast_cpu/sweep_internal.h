/* What the pieces of the fast_cpu sweep share (sweep.c plans a sweep,
 * sweep_sort.c orders its combos, sweep_z.c builds a batch's candidates and
 * bitsets, sweep_run.c backtests the combos); not public. */
#ifndef SEBT_FAST_CPU_SWEEP_INTERNAL_H
#define SEBT_FAST_CPU_SWEEP_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "fast_cpu_internal.h"

/* OMP_NUM_THREADS=100000 made GOMP abort or crash creating the team; no
 * result depends on the thread count, so more than this is never asked
 * of it (the CLI refuses such a value, as it refuses --threads). */
#define FAST_MAX_THREADS 4096

/* The threads a sweep runs on: asked when above 0, else OpenMP's default;
 * one without OpenMP; never more than FAST_MAX_THREADS. */
static inline int sweep_threads(int asked)
{
    int threads = asked;
#ifdef _OPENMP
    if (threads <= 0)
        threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    return threads > FAST_MAX_THREADS ? FAST_MAX_THREADS : threads;
}

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Threads for the planning passes over the combos: one per 8,192 combos at
 * most, so a small window is not split into pieces that cost more to hand
 * out than to run. */
static inline int plan_threads(const fast_sweep *w, size_t n)
{
    size_t t = n / 8192 + 1;
    return t < (size_t)w->threads ? (int)t : w->threads;
}

static inline int team_size(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

static inline int cmp_d(double a, double b) { return a < b ? -1 : a > b; }
static inline int cmp_i(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static inline int exit_cmp(const fast_combo_ref *a, const fast_combo_ref *b)
{
    int c;
    if ((c = cmp_i(a->batch, b->batch)) || (c = cmp_i(a->a, b->a)) || (c = cmp_i(a->use_stop, b->use_stop)) ||
        (c = cmp_d(a->stop_mult, b->stop_mult)) || (c = cmp_i(a->use_tp, b->use_tp)) ||
        (c = cmp_d(a->reward, b->reward)) || (c = cmp_i(a->use_time, b->use_time)) ||
        (c = cmp_i(a->max_hold, b->max_hold)) || (c = cmp_d(a->cost, b->cost)))
        return c;
    return 0;
}

static inline int i32_cmp(const void *a, const void *b) { return cmp_i(*(const int32_t *)a, *(const int32_t *)b); }
static inline int dbl_cmp(const void *a, const void *b) { return cmp_d(*(const double *)a, *(const double *)b); }

/* Sorted distinct values of v[0 .. n) in place; returns their count.
 * A sweep's columns hold few distinct values, mostly in runs (a grid's
 * axes), and this runs serially between parallel steps: the values are
 * gathered into a short sorted list (binary insertion), and only when it
 * outgrows UNIQ_FEW are all n sorted. Equal values are one value either way
 * (-0 and 0 too: every later use compares with < and >, where they agree). */
#define UNIQ_FEW 64

/* One body for both column types; a NaN (doubles only) has no place in the
 * short list's order, so it sends the column to the full sort. */
#define UNIQ_DEFINE(name, T, cmp_fn, is_nan)                                  \
    static inline size_t name(T *v, size_t n)                                 \
    {                                                                         \
        T few[UNIQ_FEW];                                                      \
        size_t k = 0;                                                         \
        for (size_t i = 0; i < n; i++) {                                      \
            T x = v[i];                                                       \
            if (i > 0 && x == v[i - 1])                                       \
                continue;                                                     \
            if (is_nan(x))                                                    \
                goto sort_all;                                                \
            size_t a = 0, b = k;                                              \
            while (a < b) {                                                   \
                size_t m = a + (b - a) / 2;                                   \
                if (few[m] < x) a = m + 1; else b = m;                        \
            }                                                                 \
            if (a < k && few[a] == x)                                         \
                continue;                                                     \
            if (k == UNIQ_FEW)                                                \
                goto sort_all;                                                \
            memmove(few + a + 1, few + a, (k - a) * sizeof *few);             \
            few[a] = x;                                                       \
            k++;                                                              \
        }                                                                     \
        memcpy(v, few, k * sizeof *v);                                        \
        return k;                                                             \
    sort_all:                                                                 \
        qsort(v, n, sizeof *v, cmp_fn);                                       \
        k = 0;                                                                \
        for (size_t i = 0; i < n; i++)                                        \
            if (k == 0 || v[i] != v[k - 1])                                   \
                v[k++] = v[i];                                                \
        return k;                                                             \
    }

#define UNIQ_NEVER_NAN(x) ((void)(x), 0)
UNIQ_DEFINE(uniq_i32, int32_t, i32_cmp, UNIQ_NEVER_NAN)
UNIQ_DEFINE(uniq_d, double, dbl_cmp, isnan)

/* name(v, n, x): the first position in sorted v[0..n-1] whose value is not
 * below x (x's slot in a list that uniq_i32 or uniq_d made). */
#define FIND_DEFINE(name, T)                                                  \
    static inline int32_t name(const T *v, size_t n, T x)                     \
    {                                                                         \
        size_t a = 0, b = n;                                                  \
        while (a < b) {                                                       \
            size_t m = a + (b - a) / 2;                                       \
            if (v[m] < x) a = m + 1; else b = m;                              \
        }                                                                     \
        return (int32_t)a;                                                    \
    }
FIND_DEFINE(find_i32, int32_t)
FIND_DEFINE(find_d, double)

/* One digit of the sort key: a combo field's distinct values (its rank is
 * the position there), gathered as uniq_d gathers them (binary insertion,
 * -0 and 0 one value); over marks more than UNIQ_FEW values or a NaN, where
 * the key is not used. */
typedef struct {
    double vals[UNIQ_FEW];
    size_t n;
    bool over;
} rank_axis;

static inline void axis_add(rank_axis *ax, double x)
{
    if (ax->over)
        return;
    if (isnan(x)) {
        ax->over = true;
        return;
    }
    size_t a = 0, b = ax->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (ax->vals[m] < x) a = m + 1; else b = m;
    }
    if (a < ax->n && ax->vals[a] == x)
        return;
    if (ax->n == UNIQ_FEW) {
        ax->over = true;
        return;
    }
    memmove(ax->vals + a + 1, ax->vals + a, (ax->n - a) * sizeof *ax->vals);
    ax->vals[a] = x;
    ax->n++;
}

/* w->refs sorted by batch, exit key, z window, EMA pair and thresholds
 * (sweep_sort.c); -1 when out of memory. */
int fast_sort_refs(fast_sweep *w);

#endif
