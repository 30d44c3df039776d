/* fast_cpu, wrapped, with one bug of a kind only big calls, many threads
 * or the metrics-only path show, one per build (-DPLANT_<KIND>); what
 * `sebt validate` must catch (planted_gate.sh):
 *   COST_TWIN  metrics-only, a combo that differs from an earlier one only
 *              in fee_bp and slippage_bp is given that combo's metrics (a
 *              walk shared by cost twins, summed with the first twin's
 *              costs). With trades recorded it is right.
 *   LANES8     a batch whose size is a multiple of 8 runs in lanes of 8
 *              that all read vol_z from the lane's first combo.
 *   FLOAT_SUM  a batch of more than 4,096 combos sums total_pnl in float.
 *   RACE3      total_pnl summed by opts->threads threads into two shared
 *              accumulators (thread t into t % 2): on 3 threads or more two
 *              threads share one and lose updates.
 *   INDEX32    results placed by a 32-bit offset combo x bars: past 2^32
 *              bar-combos a combo gets the result of the combo the wrapped
 *              offset names. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sebt/backends.h>
#include <sebt/plugin.h>
#include <sebt/sebt.h>

static const sebt_backend *fast = &sebt_fast_cpu_backend;

static sebt_status fast_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                 sebt_features *out, sebt_error *err)
{
    (void)self;
    return fast->features(fast, s, p, out, err);
}

/* fast_cpu's run with trades recorded whatever was asked; *drop tells
 * whether the caller wanted them. */
static sebt_status run_with_trades(const sebt_series *s, const sebt_params *combos, size_t n,
                                   const sebt_batch_opts *opts, sebt_result *res, bool *drop, sebt_error *err)
{
    sebt_batch_opts o = opts ? *opts : (sebt_batch_opts){ 0 };
    *drop = !o.want_trades;
    o.want_trades = true;
    return fast->run_batch(fast, s, combos, n, &o, res, err);
}

static void drop_trades(sebt_result *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(res[i].trades);
        res[i].trades = NULL;
    }
}

#if defined(PLANT_COST_TWIN)
static const sebt_params *sort_base;

#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
/* Everything but fee_bp and slippage_bp. */
static int cmp_but_costs(const sebt_params *x, const sebt_params *y)
{
    CMP(ema_fast); CMP(ema_slow); CMP(z_window); CMP(atr_window); CMP(vol_z); CMP(tr_z); CMP(cloc_min);
    CMP(use_stop); CMP(atr_stop_mult); CMP(use_tp); CMP(reward_r); CMP(use_time); CMP(max_hold);
    return 0;
}
#undef CMP

/* Cost twins adjacent, each run in input order. */
static int by_all_but_costs(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = cmp_but_costs(&sort_base[i], &sort_base[j]);
    return c ? c : (i > j) - (i < j);
}

static sebt_status planted_run(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                               const sebt_batch_opts *opts, sebt_result *res, sebt_error *err)
{
    (void)self;
    sebt_status st = fast->run_batch(fast, s, combos, n, opts, res, err);
    if (st || (opts && opts->want_trades) || n < 2)
        return st;
    size_t *ix = malloc(n * sizeof *ix);
    if (!ix) {
        sebt_results_free(res, n);
        return sebt_fail(err, SEBT_ERR_NOMEM, "cost_twin: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    sort_base = combos;
    qsort(ix, n, sizeof *ix, by_all_but_costs);
    for (size_t k = 1; k < n; k++)
        if (cmp_but_costs(&combos[ix[k - 1]], &combos[ix[k]]) == 0)
            res[ix[k]].metrics = res[ix[k - 1]].metrics;   /* the first twin's costs */
    free(ix);
    return SEBT_OK;
}
#define PLANTED_NAME "cost_twin"
#elif defined(PLANT_LANES8)
static sebt_status planted_run(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                               const sebt_batch_opts *opts, sebt_result *res, sebt_error *err)
{
    (void)self;
    if (n == 0 || n % 8)
        return fast->run_batch(fast, s, combos, n, opts, res, err);
    sebt_params *lane = malloc(n * sizeof *lane);
    if (!lane)
        return sebt_fail(err, SEBT_ERR_NOMEM, "lanes8: out of memory");
    for (size_t i = 0; i < n; i++) {
        lane[i] = combos[i];
        lane[i].vol_z = combos[i & ~(size_t)7].vol_z;
    }
    sebt_status st = fast->run_batch(fast, s, lane, n, opts, res, err);
    free(lane);
    return st;
}
#define PLANTED_NAME "lanes8"
#elif defined(PLANT_FLOAT_SUM)
static sebt_status planted_run(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                               const sebt_batch_opts *opts, sebt_result *res, sebt_error *err)
{
    (void)self;
    if (n <= 4096)
        return fast->run_batch(fast, s, combos, n, opts, res, err);
    bool drop;
    sebt_status st = run_with_trades(s, combos, n, opts, res, &drop, err);
    for (size_t i = 0; st == SEBT_OK && i < n; i++) {
        float sum = 0.0f;
        for (size_t j = 0; j < res[i].n_trades; j++)
            sum += (float)res[i].trades[j].pnl;
        res[i].metrics.total_pnl = sum;
    }
    if (st == SEBT_OK && drop)
        drop_trades(res, n);
    return st;
}
#define PLANTED_NAME "float_sum"
#elif defined(PLANT_RACE3)
typedef struct {
    sebt_result *res;
    size_t n;
    int t, nt;
    volatile double *slot;     /* shared by threads t and t + 2: the race */
    pthread_barrier_t *start;
} race_part;

/* The accumulator is held open across a sleep (after its reset and
 * inside each read-modify-write), so a thread is off the core for nearly
 * all of its life with the shared value in flight: two threads on one
 * accumulator then lose updates whenever their lives overlap and either
 * has trades to add. A yield and a short spin did not make sure of that
 * on a loaded machine, where the other thread had no core while the
 * window was open. */
static void hold_open(bool shared)
{
    if (shared) {
        struct timespec window = { 0, 20000 };
        nanosleep(&window, NULL);
    }
}

static void *race_sum(void *arg)
{
    race_part *p = arg;
    bool shared = p->t + 2 < p->nt || p->t >= 2;
    pthread_barrier_wait(p->start);
    for (size_t i = (size_t)p->t; i < p->n; i += (size_t)p->nt) {
        *p->slot = 0.0;
        hold_open(shared);
        for (size_t j = 0; j < p->res[i].n_trades; j++) {
            double v = *p->slot;
            hold_open(shared);
            *p->slot = v + p->res[i].trades[j].pnl;
        }
        p->res[i].metrics.total_pnl = *p->slot;
    }
    return NULL;
}

static sebt_status planted_run(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                               const sebt_batch_opts *opts, sebt_result *res, sebt_error *err)
{
    (void)self;
    bool drop;
    sebt_status st = run_with_trades(s, combos, n, opts, res, &drop, err);
    int nt = opts && opts->threads > 0 ? opts->threads : 1;
    if (nt > 64)
        nt = 64;
    volatile double slots[2] = { 0, 0 };
    pthread_t th[64];
    race_part part[64];
    pthread_barrier_t start;
    if (st == SEBT_OK && pthread_barrier_init(&start, NULL, (unsigned)nt) != 0)
        st = sebt_fail(err, SEBT_ERR_NOMEM, "race3: no barrier");
    int started = 0;
    for (int t = 0; st == SEBT_OK && t < nt; t++) {
        part[t] = (race_part){ res, n, t, nt, &slots[t % 2], &start };
        if (t > 0 && pthread_create(&th[t], NULL, race_sum, &part[t]) != 0) {
            /* Threads already waiting at the barrier would wait forever. */
            abort();
        }
        started = t;
    }
    if (st == SEBT_OK) {
        race_sum(&part[0]);
        for (int t = 1; t <= started; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&start);
    }
    if (st)
        sebt_results_free(res, n);
    else if (drop)
        drop_trades(res, n);
    return st;
}
#define PLANTED_NAME "race3"
#elif defined(PLANT_INDEX32)
static sebt_status planted_run(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                               const sebt_batch_opts *opts, sebt_result *res, sebt_error *err)
{
    (void)self;
    sebt_status st = fast->run_batch(fast, s, combos, n, opts, res, err);
    size_t bars = s->n ? s->n : 1;
    for (size_t i = 0; st == SEBT_OK && i < n; i++) {
        uint32_t at = (uint32_t)(i * bars);   /* the slip: 32 bits */
        size_t j = at / bars;
        if (j == i)
            continue;
        sebt_trade *own = res[i].trades;
        res[i].metrics = res[j].metrics;
        res[i].open_at_end = res[j].open_at_end;
        res[i].n_trades = res[j].n_trades;
        if (own) {
            free(own);
            res[i].trades = malloc((res[j].n_trades ? res[j].n_trades : 1) * sizeof *own);
            if (!res[i].trades) {
                sebt_results_free(res, n);
                return sebt_fail(err, SEBT_ERR_NOMEM, "index32: out of memory");
            }
            memcpy(res[i].trades, res[j].trades, res[j].n_trades * sizeof *own);
        }
    }
    return st;
}
#define PLANTED_NAME "index32"
#endif

static const sebt_backend planted = {
    .name = PLANTED_NAME,
    .description = "test plugin: fast_cpu wrapped, with a planted bug (oracle/tests/plugins/planted.c)",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = fast_features,
    .run_batch = planted_run,
};

SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err)
{
    (void)run_with_trades;
    (void)drop_trades;
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    return &planted;
}
