/* fast_cpu: the sweep's combos in ref_cmp's order (batch, exit key,
 * z window, EMA pair, thresholds, filters, index), by a radix sort on ranks where
 * the key fits, by qsort elsewhere. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sweep_internal.h"

static int ref_cmp(const void *pa, const void *pb)
{
    const fast_combo_ref *a = pa, *b = pb;
    int c;
    if ((c = exit_cmp(a, b)) || (c = cmp_i(a->z, b->z)) || (c = cmp_i(a->fast, b->fast)) ||
        (c = cmp_i(a->slow, b->slow)) || (c = cmp_d(a->vz, b->vz)) || (c = cmp_d(a->tz, b->tz)) ||
        (c = cmp_d(a->cm, b->cm)))
        return c;
    for (int f = 0; f < FAST_N_FILTERS; f++)
        if ((c = cmp_i(a->f_on[f], b->f_on[f])) || (c = cmp_i(a->f_w[f], b->f_w[f])) ||
            (c = cmp_d(a->f_thr[f], b->f_thr[f])))
            return c;
    return cmp_i((int64_t)a->index, (int64_t)b->index);
}

/* Combo i as the sweep sorts it: its window slots, batch and exit key. */
static void combo_ref(const fast_sweep *w, const sebt_params *p, size_t i, fast_combo_ref *r)
{
    memset(r, 0, sizeof *r);
    r->a = find_i32(w->atrs, w->n_atrs, p->atr_window);
    r->z = find_i32(w->zs, w->n_zs, p->z_window);
    r->batch = (int32_t)((size_t)r->z / w->zper);
    r->fast = p->ema_fast;
    r->slow = p->ema_slow;
    r->use_stop = p->use_stop;
    r->stop_mult = p->use_stop ? p->atr_stop_mult : 0.0;
    r->use_tp = p->use_tp;
    r->reward = p->use_tp ? p->reward_r : 0.0;
    r->use_time = p->use_time;
    r->max_hold = p->use_time ? p->max_hold : 0;
    r->cost = p->fee_bp + p->slippage_bp;
    r->vz = p->vol_z;
    r->tz = p->tr_z;
    r->cm = p->cloc_min;
    fast_filter_fields(p, r);
    r->index = i;
}

/* The sort key's digits, most significant first: ref_cmp's fields in its
 * order. The digits of RANKED are a field's rank among its distinct values
 * (axis k of sort_refs is digit RANKED[k]); the others are small integers
 * already (slots and switches). Each filter's three (on, window,
 * threshold: digits D_FILTERS + 3f ..) are ranked, so a sweep that leaves
 * a filter off has one value in each and the key it had without it. */
enum {
    D_BATCH, D_ATR, D_USE_STOP, D_STOP_MULT, D_USE_TP, D_REWARD, D_USE_TIME, D_MAX_HOLD, D_COST, D_Z, D_FAST,
    D_SLOW, D_VZ, D_TZ, D_CM, D_FILTERS, N_DIG = D_FILTERS + 3 * FAST_N_FILTERS
};
static const int RANKED[] = {
    D_STOP_MULT, D_REWARD, D_MAX_HOLD, D_COST, D_FAST, D_SLOW, D_VZ, D_TZ, D_CM,
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
    D_FILTERS + 3 * FAST_F_##name, D_FILTERS + 3 * FAST_F_##name + 1, D_FILTERS + 3 * FAST_F_##name + 2,
#include "sebt/strategy.def"
};
enum { N_AX = sizeof RANKED / sizeof RANKED[0] };

/* Digit d's field, integers as doubles (exact). */
static double ref_field(const fast_combo_ref *r, int d)
{
    switch (d) {
    case D_BATCH: return r->batch;
    case D_ATR: return r->a;
    case D_USE_STOP: return r->use_stop;
    case D_STOP_MULT: return r->stop_mult;
    case D_USE_TP: return r->use_tp;
    case D_REWARD: return r->reward;
    case D_USE_TIME: return r->use_time;
    case D_MAX_HOLD: return r->max_hold;
    case D_COST: return r->cost;
    case D_Z: return r->z;
    case D_FAST: return r->fast;
    case D_SLOW: return r->slow;
    case D_VZ: return r->vz;
    case D_TZ: return r->tz;
    case D_CM: return r->cm;
    default: {
        int f = (d - D_FILTERS) / 3;
        switch ((d - D_FILTERS) % 3) {
        case 0: return r->f_on[f];
        case 1: return r->f_w[f];
        default: return r->f_thr[f];
        }
    }
    }
}

/* w->refs in ref_cmp's order. ref_cmp's fields, most significant first,
 * each replaced by its rank among the field's distinct values (equal values,
 * -0 and 0 included, have one rank, as cmp_d has them equal), make one
 * integer key; a stable LSD radix sort of (key, index) from index order then
 * gives ref_cmp's order with its final tie-break, the input index. The
 * records are then made in that order straight from the combos (a record is
 * a function of its combo and index), so none is moved. Every pass over the
 * combos runs on the whole team: this runs once per run_batch call, and on
 * a streamed sweep once per window, before any combo can start; serial, it
 * was the largest piece of the second thread's idle time. The stable sort
 * has one outcome, so neither the thread count nor the pieces change the
 * order. The comparison sort of ~100-byte records stays where the key would
 * not fit 64 bits or a field has many distinct values (a combos file of
 * random thresholds). Returns -1 when out of memory. */
int fast_sort_refs(fast_sweep *w)
{
    size_t n = w->total;
    fast_combo_ref *R = w->refs;
    const sebt_params *C = w->combos;
    enum { RB = 11, NB = 1 << RB };
    int nt = plan_threads(w, n);
    rank_axis ax[N_AX];
    memset(ax, 0, sizeof ax);
    bool fallback = n > UINT32_MAX;
    rank_axis *tax = fallback ? NULL : calloc((size_t)nt * N_AX, sizeof *tax);
    if (!fallback && !tax)
        return -1;
    if (!fallback) {
        #pragma omp parallel num_threads(nt)
        {
            rank_axis *mine = tax + (size_t)thread_id() * N_AX;
            double last[N_AX];
            bool first = true;
            #pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++) {
                fast_combo_ref r;
                combo_ref(w, &C[i], i, &r);
                for (int k = 0; k < N_AX; k++) {
                    double f = ref_field(&r, RANKED[k]);
                    if (first || !(f == last[k]))   /* runs of one value are usual */
                        axis_add(&mine[k], last[k] = f);
                }
                first = false;
            }
        }
        for (int t = 0; t < nt; t++)
            for (int k = 0; k < N_AX; k++) {
                const rank_axis *m = &tax[(size_t)t * N_AX + k];
                if (m->over)
                    ax[k].over = true;
                for (size_t j = 0; j < m->n; j++)
                    axis_add(&ax[k], m->vals[j]);
            }
        for (int k = 0; k < N_AX; k++)
            fallback = fallback || ax[k].over;
    }
    free(tax);
    size_t n_batch = w->zper ? (w->n_zs + w->zper - 1) / w->zper : 1;
    size_t radix[N_DIG] = { [D_BATCH] = n_batch, [D_ATR] = w->n_atrs, [D_USE_STOP] = 2, [D_USE_TP] = 2,
                            [D_USE_TIME] = 2, [D_Z] = w->n_zs };
    for (int k = 0; k < N_AX; k++)
        radix[RANKED[k]] = ax[k].n;
    uint64_t span = 1;
    for (size_t d = 0; d < N_DIG && !fallback; d++) {
        size_t r = radix[d] ? radix[d] : 1;
        if (span > UINT64_MAX / r)
            fallback = true;
        else
            span *= r;
    }
    if (fallback) {
        #pragma omp parallel for schedule(static) num_threads(nt)
        for (size_t i = 0; i < n; i++)
            combo_ref(w, &C[i], i, &R[i]);
        if (n > 1)
            qsort(R, n, sizeof *R, ref_cmp);
        return 0;
    }
    int bits = 0;
    while (bits < 64 && (span - 1) >> bits)
        bits++;
    int rc = -1;
    uint64_t *key = malloc((n ? n : 1) * sizeof *key), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx), *itmp = malloc((n ? n : 1) * sizeof *itmp);
    size_t *cnt = malloc((size_t)nt * NB * sizeof *cnt);   /* per thread, per bucket */
    if (!key || !tmp || !idx || !itmp || !cnt)
        goto out;
    #pragma omp parallel num_threads(nt)
    {
        int me = thread_id(), nth = team_size();
        size_t lo = n * (size_t)me / (size_t)nth, hi = n * (size_t)(me + 1) / (size_t)nth;
        double last[N_AX];
        uint64_t last_rank[N_AX];
        for (size_t i = lo; i < hi; i++) {
            fast_combo_ref r;
            combo_ref(w, &C[i], i, &r);
            uint64_t dig[N_DIG] = { [D_BATCH] = (uint64_t)r.batch, [D_ATR] = (uint64_t)r.a, [D_USE_STOP] = r.use_stop,
                                    [D_USE_TP] = r.use_tp, [D_USE_TIME] = r.use_time, [D_Z] = (uint64_t)r.z };
            for (int k = 0; k < N_AX; k++) {
                double f = ref_field(&r, RANKED[k]);
                if (i == lo || !(f == last[k]))
                    last_rank[k] = (uint64_t)find_d(ax[k].vals, ax[k].n, last[k] = f);
                dig[RANKED[k]] = last_rank[k];
            }
            uint64_t kk = 0;
            for (size_t d = 0; d < N_DIG; d++)
                kk = kk * (radix[d] ? radix[d] : 1) + dig[d];
            key[i] = kk;
            idx[i] = (uint32_t)i;
        }
        /* Stable LSD passes: each thread counts its own slice, the slices
         * take their places bucket by bucket in slice order, each thread
         * moves its own. */
        size_t *my = cnt + (size_t)me * NB;
        for (int shift = 0; shift < bits; shift += RB) {
            memset(my, 0, NB * sizeof *my);
            for (size_t i = lo; i < hi; i++)
                my[(key[i] >> shift) & (NB - 1)]++;
            #pragma omp barrier
            #pragma omp single
            {
                size_t sum = 0;
                for (size_t b = 0; b < NB; b++)
                    for (int t = 0; t < nth; t++) {
                        size_t c = cnt[(size_t)t * NB + b];
                        cnt[(size_t)t * NB + b] = sum;
                        sum += c;
                    }
            }
            for (size_t i = lo; i < hi; i++) {
                size_t d = my[(key[i] >> shift) & (NB - 1)]++;
                tmp[d] = key[i];
                itmp[d] = idx[i];
            }
            #pragma omp barrier
            #pragma omp single
            {
                uint64_t *t = key; key = tmp; tmp = t;
                uint32_t *u = idx; idx = itmp; itmp = u;
            }
        }
        #pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++)
            combo_ref(w, &C[idx[i]], idx[i], &R[i]);
    }
    rc = 0;
out:
    free(key);
    free(tmp);
    free(idx);
    free(itmp);
    free(cnt);
    return rc;
}
