/* The template plugin with one fault of the kind only the black-box gate
 * can see, one per build (-DWRAP_<FAULT>):
 *   RACY  results depend on the calls made before it: a call counter
 *         shared by every call and never reset (what a data race or a cache
 *         keyed on the wrong thing does); every second run_batch call that
 *         records trades adds one to the first trade's pnl. The gate must say "non-deterministic"
 *         (exit 1) with the case kept as generated, never "the case does not
 *         diverge to begin with".
 *   STALE right alone, wrong after a call on other data: the first trade
 *         pnl of a call's first combo is kept (a cache keyed on nothing) and
 *         the next call's first trade gets it. The same call twice agrees;
 *         the gate must find the call before it and keep both.
 *   RACE  a true data race: each combo's total_pnl is summed by two
 *         threads into one shared accumulator without a lock or atomics
 *         (an OpenMP loop that forgot its reduction). Updates are lost as
 *         the threads interleave, so the sum depends on scheduling; the
 *         read-modify-write is widened (a yield and a spin whose length
 *         follows the clock) so that it loses on every machine, loaded or
 *         not, and differently from run to run.
 *   LAX   run_batch computes whatever it is given: invalid combos and
 *         series are not refused.
 *   CRASH2 right, but dies of SIGSEGV in a run_batch call given exactly 2
 *         threads with 3 or more combos: in validate, the first fuzz round on
 *         2 threads (replay and parity run on the default thread count),
 *         so a crash the report must name by its case, threads and command.
 *   SLOW  right, but slow by construction: each run_batch call sleeps
 *         100 us per combo and bar (at most 1.5 s), about 10,000 times
 *         fast_cpu's cost on one thread: far below 1% of its speed even
 *         on a loaded machine. */
#include <sebt/plugin.h>

#undef SEBT_PLUGIN_ENTRY
#define SEBT_PLUGIN_ENTRY static const sebt_backend *template_entry(int abi_version, sebt_error *err)
#include "../../plugin-template/mine.c"

/* The template's run with its trades recorded whatever opts asks (a fault
 * below is planted in them), and the trades dropped after when not asked
 * for. */
static inline sebt_status run_with_trades(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                          size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                          sebt_error *err)
{
    sebt_batch_opts mine = opts ? *opts : (sebt_batch_opts){ 0 };
    mine.want_trades = true;
    return mine_run_batch(self, s, combos, n_combos, &mine, results, err);
}

static inline void drop_unwanted_trades(const sebt_batch_opts *opts, sebt_result *results, size_t n_combos)
{
    for (size_t i = 0; i < n_combos && (!opts || !opts->want_trades); i++) {
        free(results[i].trades);
        results[i].trades = NULL;
    }
}

#ifdef WRAP_RACY
static unsigned long calls;

static sebt_status wrapped_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                     sebt_error *err)
{
    sebt_status st = mine_run_batch(self, s, combos, n_combos, opts, results, err);
    if (st == SEBT_OK && opts && opts->want_trades && ++calls % 2 == 0)
        for (size_t i = 0; i < n_combos; i++)
            if (results[i].n_trades && results[i].trades) {
                results[i].trades[0].pnl += 1.0;
                break;
            }
    return st;
}
#define WRAPPED_NAME "racy"
#elif defined(WRAP_STALE)
static double kept_pnl;
static int kept;

static sebt_status wrapped_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                     sebt_error *err)
{
    sebt_status st = run_with_trades(self, s, combos, n_combos, opts, results, err);
    if (st == SEBT_OK && n_combos && results[0].n_trades) {
        double own = results[0].trades[0].pnl;
        if (kept) {
            results[0].metrics.total_pnl += kept_pnl - own;
            results[0].trades[0].pnl = kept_pnl;
        }
        kept_pnl = own;
        kept = 1;
    }
    if (st == SEBT_OK)
        drop_unwanted_trades(opts, results, n_combos);
    return st;
}
#define WRAPPED_NAME "stale"
#elif defined(WRAP_RACE)
#include <pthread.h>
#include <sched.h>
#include <time.h>

typedef struct {
    const sebt_trade *t;
    size_t from, to;
    volatile double *acc;          /* shared, unguarded: the race */
    pthread_barrier_t *start;
} half_sum;

static void *add_half(void *arg)
{
    half_sum *h = arg;
    pthread_barrier_wait(h->start);
    for (size_t j = h->from; j < h->to; j++) {
        double v = *h->acc;
        sched_yield();
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        for (volatile long k = 0; k < ts.tv_nsec % 4096; k++)
            ;
        *h->acc = v + h->t[j].pnl;
    }
    return NULL;
}

/* total_pnl over two threads, as a racy parallel loop computes it. */
static int racy_total(const sebt_result *r, double *out)
{
    volatile double acc = 0.0;
    pthread_barrier_t start;
    if (pthread_barrier_init(&start, NULL, 2) != 0)
        return -1;
    size_t mid = r->n_trades / 2;
    half_sum a = { r->trades, 0, mid, &acc, &start }, b = { r->trades, mid, r->n_trades, &acc, &start };
    pthread_t th;
    if (pthread_create(&th, NULL, add_half, &a) != 0) {
        pthread_barrier_destroy(&start);
        return -1;
    }
    add_half(&b);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&start);
    *out = acc;
    return 0;
}

static sebt_status wrapped_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                     sebt_error *err)
{
    /* The trades are needed for the sum. */
    sebt_status st = run_with_trades(self, s, combos, n_combos, opts, results, err);
    for (size_t i = 0; st == SEBT_OK && i < n_combos; i++)
        if (results[i].n_trades >= 2 && racy_total(&results[i], &results[i].metrics.total_pnl) != 0)
            st = sebt_fail(err, SEBT_ERR_NOMEM, "race: cannot start a thread");
    if (st == SEBT_OK)
        drop_unwanted_trades(opts, results, n_combos);
    if (st != SEBT_OK)
        sebt_results_free(results, n_combos);
    return st;
}
#define WRAPPED_NAME "race"
#elif defined(WRAP_SLOW)
#include <errno.h>
#include <time.h>

static sebt_status wrapped_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                     sebt_error *err)
{
    double wait_s = 100e-6 * (double)n_combos * (double)s->n;
    if (wait_s > 1.5)
        wait_s = 1.5;
    struct timespec ts = { (time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    return mine_run_batch(self, s, combos, n_combos, opts, results, err);
}
#define WRAPPED_NAME "slow"
#elif defined(WRAP_CRASH2)
#include <signal.h>

static sebt_status wrapped_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                     sebt_error *err)
{
    if (opts && opts->threads == 2 && n_combos >= 3)
        raise(SIGSEGV);
    return mine_run_batch(self, s, combos, n_combos, opts, results, err);
}
#define WRAPPED_NAME "crash2"
#else
static sebt_status wrapped_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                     sebt_error *err)
{
    (void)self;
    sebt_features f;
    sebt_status st = sebt_features_alloc(&f, s->n, err);
    for (size_t i = 0; st == SEBT_OK && i < n_combos; i++) {
        compute(s, &combos[i], &f);
        st = simulate(s, &f, &combos[i], &results[i], err);
        if (st == SEBT_OK)
            metrics(results[i].trades, results[i].n_trades, &results[i].metrics);
        if (st == SEBT_OK && (!opts || !opts->want_trades)) {
            free(results[i].trades);
            results[i].trades = NULL;
        }
    }
    if (st == SEBT_OK)
        sebt_features_free(&f);
    return st;
}
#define WRAPPED_NAME "lax"
#endif

static const sebt_backend wrapped = {
    .name = WRAPPED_NAME,
    .description = "test plugin: the template with a fault planted (oracle/tests/plugins/wrapped.c)",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = mine_features,
    .run_batch = wrapped_run_batch,
};

SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err)
{
    (void)template_entry;
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    return &wrapped;
}
