/* Internals of the fast_cpu backend (not public). */
#ifndef SEBT_FAST_CPU_INTERNAL_H
#define SEBT_FAST_CPU_INTERNAL_H

#include "combo_kernel.h"
#include "indicators.h"
#include "sebt/backends.h"
#include "sebt/sebt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The working-memory budget of a sweep, unless sebt_batch_opts or
 * SEBT_FAST_CPU_MEMORY_MB says otherwise (fast_cpu/README.md, "Memory bound"). */
#define FAST_DEFAULT_BUDGET_MB 1024

typedef struct {
    sebt_k_market m;
    double *neg_high;
} fast_market;

void fast_tr_column(const sebt_series *s, double *out);
void fast_cloc_column(const sebt_series *s, double *out);
void fast_atr_range(const double *tr, size_t n, int32_t w, size_t from, size_t to, double *out);

/* acc[j] = the sum of base[j .. j + ws) oldest first, the reference's order,
 * for the len bars j < len side by side: each lane its own window and its
 * own accumulator, so the compiler vectorises across bars without
 * reordering any sum (ATR's windows, the exact z's means). */
static inline void fast_window_sums(const double *__restrict__ base, size_t ws, size_t len,
                                    double *__restrict__ acc)
{
    for (size_t j = 0; j < len; j++)
        acc[j] = 0.0;
    for (size_t i = 0; i < ws; i++) {
        const double *row = base + i;
        for (size_t j = 0; j < len; j++)
            acc[j] += row[j];
    }
}
/* The rsi filter's column over all s->n bars with sebt_k_filter_rsi's
 * bits, its windows summed many bars side by side (zexact.c). */
void fast_filter_column_rsi(const sebt_series *s, int32_t w, double *out);
void fast_valid_from_atr(const double *atr, size_t n, uint8_t *valid, int32_t *rank, int32_t *vbar,
                         int64_t *n_valid);
void fast_zscore_exact(const double *x, size_t n, int32_t w, double *out);
void fast_zscore_exact_at(const double *x, int32_t w, const int32_t *bars, size_t count, double *out);
int fast_z_refine(const double *x, size_t n, int32_t w, double *z, double pre, const double *cloc, double cmin,
                  const double *gate, double gate_min);
sebt_status fast_market_build(const sebt_series *s, fast_market *fm, sebt_error *err);
void fast_market_free(fast_market *fm);
size_t fast_memory_budget(void);

/* The entry filters of sebt/strategy.def (its SEBT_FILTER rows), by
 * index; the arrays over them have at least one slot. */
enum {
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) FAST_F_##name,
#include "sebt/strategy.def"
    FAST_N_FILTERS
};
#define FAST_FILTER_SLOTS (FAST_N_FILTERS > 0 ? FAST_N_FILTERS : 1)

/* Filter f's signal term (its SEBT_TI_<name>). */
static inline int fast_filter_term(int f)
{
    static const int term[FAST_N_FILTERS + 1] = {
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) SEBT_TI_##name,
#include "sebt/strategy.def"
        -1
    };
    return term[f];
}

/* One combo as the sweep sees it: what it is grouped and sorted by. The
 * exit parameters a combo does not use are zeroed, so that combos differing
 * only there share an exit key (and its memo). */
typedef struct {
    int32_t batch, a, z, fast, slow;
    uint8_t use_stop, use_tp, use_time;
    int32_t max_hold;
    double stop_mult, reward, cost;
    double vz, tz, cm;
    /* Each filter: whether it is on, its window and threshold (0 when off). */
    uint8_t f_on[FAST_FILTER_SLOTS];
    int32_t f_w[FAST_FILTER_SLOTS];
    double f_thr[FAST_FILTER_SLOTS];
    size_t index;
    /* Filled per batch: the combo's bitsets (fslot -1: the filter is off,
     * no row). */
    int32_t pair, ema, vslot, tslot, cslot;
    int32_t fslot[FAST_FILTER_SLOTS];
} fast_combo_ref;

/* The filters' fields of a combo, from its parameters. */
static inline void fast_filter_fields(const sebt_params *p, fast_combo_ref *r)
{
    (void)p;
    (void)r;
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
    r->f_on[FAST_F_##name] = p->enable;                    \
    r->f_w[FAST_F_##name] = p->enable ? p->window : 0;     \
    r->f_thr[FAST_F_##name] = p->enable ? p->rhs : 0.0;
#include "sebt/strategy.def"
}

/* A row of a filter: its column over window w, compared with thr. */
typedef struct {
    int32_t w;
    double thr;
} fast_filter_row;

/* Per (z_window, atr_window) pair of a batch. */
typedef struct {
    int32_t z, a;                  /* slots */
    double vmin, tmin, cmin;       /* loosest thresholds of its combos */
    size_t n;                      /* candidates */
    int32_t *bar, *idx;            /* bar, index in U of its atr_window */
    double *vz, *tz;               /* exact z-scores there */
    double *vthr, *tthr;           /* distinct thresholds, ascending */
    size_t n_vthr, n_tthr;
    uint64_t *vbits, *tbits;       /* [n_vthr][words], [n_tthr][words] */
} fast_zpair;

/* Per atr_window of a batch. */
typedef struct {
    size_t q0, q1;                 /* its combos: refs[q0 .. q1) */
    size_t n;                      /* |U| */
    int32_t *bar;
    double *atr;
    size_t words;
    double *cthr; size_t n_cthr; uint64_t *cbits;
    int32_t *spans; size_t n_spans; double *ema_at;     /* [n_spans][n] */
    int32_t *pairs; size_t n_pairs; uint64_t *ebits;    /* (fast, slow) flattened; [n_pairs][words] */
    /* Each filter's rows, one per distinct (window, threshold) of its
     * combos that switch it on, ascending; none when no combo does. */
    fast_filter_row *frows[FAST_FILTER_SLOTS];
    size_t n_frows[FAST_FILTER_SLOTS];
    uint64_t *fbits[FAST_FILTER_SLOTS];      /* [n_frows][words] */
} fast_aset;

/* A sweep in progress (fast_sweep_begin .. fast_sweep_end). */
typedef struct {
    const sebt_series *s;
    const sebt_params *combos;
    sebt_result *results;
    sebt_trade_tally *tallies;      /* NULL, or each combo's analysis tally (sebt_fast_cpu_run_tallied) */
    /* NULL, or each combo's overfit block sums (sebt_fast_cpu_run_blocked):
     * rows of 3 * blocks, as sebt_overfit_add_trades adds them. */
    double *block_stats;
    int blocks;
    const sebt_batch_opts *opts;
    size_t n;                       /* bars */
    double *tr, *cloc;
    fast_market fm;
    int32_t *atrs; size_t n_atrs;
    double **atr_col;
    uint8_t **valid; int32_t **rank, **vbar; int64_t *n_valid;
    int32_t *zs; size_t n_zs;
    fast_combo_ref *refs;
    size_t total, done;
    double last_progress;
    int threads;
    sebt_batch_stats stats;
    size_t zper;                    /* z windows per batch */
} fast_sweep;

/* What fast_zbatch_build prepares for the combos refs[q0 .. q1) of one batch
 * of z windows; both fast_cpu and the cuda backend run combos from it. */
typedef struct {
    size_t q0, q1;
    fast_zpair *pairs;
    size_t n_pairs;
    fast_aset *sets;
    size_t n_sets;
    int32_t *set_of_atr;           /* set index of each atr slot of the sweep */
    size_t *task_start;            /* tasks: refs[task_start[k] .. task_start[k+1]), one exit key each */
    size_t n_tasks;
    size_t umax;                   /* largest |U| + 1 */
} fast_zbatch;

sebt_status fast_zbatch_build(fast_sweep *w, size_t q0, size_t q1, size_t z0, size_t z1, fast_zbatch *zb,
                              sebt_error *err);
void fast_zbatch_free(fast_zbatch *zb);
sebt_status fast_sweep_begin(const sebt_series *s, const sebt_params *combos, size_t n_combos,
                             const sebt_batch_opts *opts, int threads, sebt_result *results, fast_sweep *w,
                             sebt_error *err);
void fast_sweep_next_batch(const fast_sweep *w, size_t q0, size_t *q1, size_t *z0, size_t *z1);
void fast_sweep_end(fast_sweep *w);

sebt_status fast_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                           size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                           sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
