/* The streamed sweep (include/sebt/sweep.h): windows of combos in input
 * order, made (from the grid or the array), backtested, checked, handed to
 * the caller, freed. Memory is two windows' combos and results plus the
 * series, whatever the combo count; top K keeps a heap of K. */
#include <math.h>
#include <pthread.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sebt/backends.h"
#include "sebt/overfit.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "sebt/sweep_proof.h"
#include "test_faults.h"

/* A window's rows: one piece per formatting thread, kept from window to
 * window and grown as needed. */
typedef struct {
    char *buf[SEBT_SWEEP_MAX_PARTS];
    size_t cap[SEBT_SWEEP_MAX_PARTS];
    const char *ptr[SEBT_SWEEP_MAX_PARTS];
    size_t bytes[SEBT_SWEEP_MAX_PARTS];
    size_t first[SEBT_SWEEP_MAX_PARTS];   /* each piece's first combo, from the window's start */
    size_t *row_at;                       /* each combo's row, in bytes into its piece */
    int n_parts;
    bool ready;   /* checked and formatted by the backtests' threads */
} window_rows;

typedef struct {
    const sebt_backend *b;
    const sebt_series *s;
    const sebt_sweep_opts *o;
    size_t n, window;
    sebt_params *cc[2];
    sebt_result *cr[2];
    window_rows rows[2];
    bool *passes[2];   /* with a condition: which combos of the window pass */
    sebt_trade_stats *ca[2];   /* with opts.analysis: each combo's analysis */
    /* With opts.analysis and a backend whose walk keeps the tallies, and no
     * trades wanted: the analysis from the tallies, no trades recorded. */
    sebt_tally_batch_fn tally;
    sebt_trade_tally *ct[2];
    /* With opts.overfit and no relative columns: the backend's walk sums
     * the block statistics, no trades recorded. */
    sebt_blocks_batch_fn blocks;
    bool sized_by_trades;      /* opts.analysis from trades without opts.window: windows sized by their trades */
    double trades_per_combo;   /* in the window backtested last (sized_by_trades) */
    bool team_rows;
    sebt_sweep_record *kept;
    size_t n_kept, top_cap;
    /* The writer thread: the window handed over (busy) and the combos it
     * made for the window two ahead in the buffer it freed (prepared[b]:
     * that window's first combo), so the main thread, whose idle moments
     * leave the backtests' threads spinning, only backtests. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool busy, done;
    int slot;
    uint64_t first;
    size_t m;
    size_t prepared[2];
    /* The first failure of either thread, or the callback's stop. */
    sebt_status st;
    sebt_error err;
    int stopped;
    size_t combos_done, combos_passed;
    double compute_s, compute_cpu_s;
    /* The driver's own proof (opts.verify), fed each window handed over. */
    bool proving;
    sebt_sweep_proof proof;
    double t_start;
} driver;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0;
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) * 1e-6;
}

static void get_combos(const driver *d, size_t first, size_t n, sebt_params *out)
{
    if (d->o->grid)
        sebt_grid_combos(d->o->grid, first, n, out);
    else
        memcpy(out, d->o->combos + first, n * sizeof *out);
}

/* Records the first failure; the caller holds mu or runs alone. */
static void fail_with(driver *d, sebt_status st, const sebt_error *e)
{
    if (d->st != SEBT_OK)
        return;
    d->st = st;
    d->err = *e;
    d->err.code = st;
}

/* ---- the top K: a heap of the best so far, the worst of them at its root -- */

static bool worse(const sebt_sweep_record *a, const sebt_sweep_record *b, int metric)
{
    return sebt_sweep_record_compare(a, b, metric) > 0;
}

/* Puts c at i, moving it down past better children. */
static void sift_down(sebt_sweep_record *h, size_t n, size_t i, const sebt_sweep_record *c, int metric)
{
    for (;;) {
        size_t l = 2 * i + 1, w = l;
        if (l >= n)
            break;
        if (l + 1 < n && worse(&h[l + 1], &h[l], metric))
            w = l + 1;
        if (!worse(&h[w], c, metric))
            break;
        h[i] = h[w];
        i = w;
    }
    h[i] = *c;
}

static void top_offer(driver *d, const sebt_sweep_record *c)
{
    sebt_sweep_record *h = d->kept;
    int metric = d->o->metric;
    if (d->n_kept < d->top_cap) {
        size_t i = d->n_kept++;
        while (i > 0 && worse(c, &h[(i - 1) / 2], metric)) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i] = *c;
    } else if (worse(&h[0], c, metric)) {
        sift_down(h, d->n_kept, 0, c, metric);
    }
}

/* Heapsort in place: the worst goes last, then the next worst... best first. */
static void top_sort(driver *d)
{
    for (size_t n = d->n_kept; n > 1; n--) {
        sebt_sweep_record worst = d->kept[0], last = d->kept[n - 1];
        sift_down(d->kept, n - 1, 0, &last, d->o->metric);
        d->kept[n - 1] = worst;
    }
}

/* ---- checks and rows --------------------------------------------------------- */

static sebt_status check_one(const driver *d, const sebt_params *p, uint64_t combo, const sebt_result *r,
                             sebt_error *e)
{
    sebt_status st = sebt_result_check(d->b, d->s, p, (size_t)combo, r, e);
    return st != SEBT_OK ? st : sebt_result_fits(p, combo, r, e);
}

/* Which combos [lo, hi) of the window pass the condition, if there is one. */
static void mark_passes(driver *d, int slot, uint64_t first, size_t lo, size_t hi)
{
    for (size_t k = lo; d->o->where && k < hi; k++)
        d->passes[slot][k] = sebt_sweep_row_passes_ex(d->o->where, first + k, &d->cc[slot][k], &d->cr[slot][k],
                                                      d->ca[slot] ? &d->ca[slot][k] : NULL);
}

/* Rows of combos [lo, hi) of the window into piece `part`; false when out of memory. */
static bool format_part(driver *d, int slot, int part, uint64_t first, size_t lo, size_t hi)
{
    window_rows *w = &d->rows[slot];
    bool npy = d->o->rows == SEBT_ROWS_NPY;
    size_t row_max = npy ? SEBT_NPY_ROW_MAX : SEBT_CSV_ROW_MAX, len = 0;
    const bool *passes = d->passes[slot];
    uint64_t base = SEBT_FAULT("slice_numbered_from_window_start") ? first - lo : first;
    for (size_t k = lo; k < hi; k++) {
        w->row_at[k] = SIZE_MAX;
        if (passes && !passes[k])
            continue;
        if (w->cap[part] - len < row_max) {
            size_t cap = w->cap[part] ? 2 * w->cap[part] : (hi - k + 1) * (npy ? 160 : 256) + row_max;
            char *bigger = realloc(w->buf[part], cap);
            if (!bigger)
                return false;
            w->buf[part] = bigger;
            w->cap[part] = cap;
        }
        char *at = w->buf[part] + len;
        const sebt_trade_stats *a = d->ca[slot] ? &d->ca[slot][k] : NULL;
        w->row_at[k] = len;
        len += npy ? sebt_sweep_npy_row_ex((unsigned char *)at, base + k, &d->cc[slot][k], &d->cr[slot][k], a)
                   : sebt_sweep_csv_row_ex(at, base + k, &d->cc[slot][k], &d->cr[slot][k], a);
    }
    w->ptr[part] = w->buf[part];
    w->bytes[part] = len;
    w->first[part] = lo;
    return true;
}

/* Between windows, the backtests' threads check the window's results and
 * format its rows, a slice each: formatting then takes as many cores as
 * the backtests do, where one writer thread formatting beside them would
 * cap a machine with many (docs/big-sweeps.md, "The writer thread, and who
 * formats the rows"). A bad result leaves the window to the writer, which
 * finds it and says which; false: out of memory. */
static bool team_format(driver *d, int slot, uint64_t first, size_t m)
{
    int threads = d->o->threads;
#ifdef _OPENMP
    if (threads < 1)
        threads = omp_get_max_threads();
#endif
    int want = threads < 1 ? 1 : threads > SEBT_SWEEP_MAX_PARTS ? SEBT_SWEEP_MAX_PARTS : threads;
    int bad = 0, nomem = 0, parts = 1;
#ifdef _OPENMP
#pragma omp parallel num_threads(want)
#endif
    {
#ifdef _OPENMP
        int id = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int id = 0, nt = 1;
        (void)want;
#endif
        size_t lo = m * (size_t)id / (size_t)nt, hi = m * (size_t)(id + 1) / (size_t)nt;
        sebt_error e = { 0 };
        for (size_t k = lo; k < hi; k++)
            if (check_one(d, &d->cc[slot][k], first + k, &d->cr[slot][k], &e) != SEBT_OK) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                bad = 1;
                break;
            }
        int any_bad;
#ifdef _OPENMP
#pragma omp barrier
#pragma omp atomic read
#endif
        any_bad = bad;
        if (!any_bad)
            mark_passes(d, slot, first, lo, hi);
        if (!any_bad && !format_part(d, slot, id, first, lo, hi)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            nomem = 1;
        }
        if (id == 0)
            parts = nt;
    }
    d->rows[slot].n_parts = parts;
    d->rows[slot].ready = !bad && !nomem;
    return !nomem;
}

/* Whether `threads` (0: OpenMP's default) leaves no core idle. */
static bool uses_every_core(int threads)
{
#ifdef _OPENMP
    return threads < 1 || threads >= omp_get_num_procs();
#else
    (void)threads;
    return false;
#endif
}

/* ---- handing a window over --------------------------------------------------- */

/* Checks (unless the backtests' threads did), formats, keeps the top,
 * calls back; frees the window's results whatever happens. Returns the
 * callback's stop (0: go on); a failure goes to *st and *e. */
static int deliver(driver *d, int slot, uint64_t first, size_t m, sebt_status *st, sebt_error *e)
{
    const sebt_params *cc = d->cc[slot];
    sebt_result *cr = d->cr[slot];
    window_rows *w = &d->rows[slot];
    int stop = 0;
    *st = SEBT_OK;
    if (!w->ready) {
        for (size_t k = 0; k < m && *st == SEBT_OK; k++)
            *st = check_one(d, &cc[k], first + k, &cr[k], e);
        if (*st == SEBT_OK)
            mark_passes(d, slot, first, 0, m);
        w->n_parts = d->o->rows == SEBT_ROWS_NONE ? 0 : 1;
        if (*st == SEBT_OK && w->n_parts && !format_part(d, slot, 0, first, 0, m)) {
            *st = SEBT_ERR_NOMEM;
            snprintf(e->msg, sizeof e->msg, "out of memory for the rows of a window of %zu combos", m);
        }
    }
    const bool *passes = d->passes[slot];
    for (size_t k = 0; k < m && *st == SEBT_OK; k++)
        d->combos_passed += !passes || passes[k];
    /* One record, its fields set per combo: zeroing the whole of it (its
     * analysis columns) for each of a million combos cost the writer's
     * thread more than the heap. */
    sebt_sweep_record c = { .has_analysis = d->ca[slot] != NULL };
    for (size_t k = 0; k < m && *st == SEBT_OK && d->top_cap; k++) {
        if (passes && !passes[k])
            continue;
        c.combo = first + k;
        c.metrics = cr[k].metrics;
        c.valid_bars = cr[k].valid_bars;
        c.open_at_end = cr[k].open_at_end.open ? 1 : 0;
        if (d->ca[slot])
            c.analysis = d->ca[slot][k];
        top_offer(d, &c);
    }
    sebt_sweep_window win = { .first = first, .count = m, .combos = cc, .results = cr,
                              .n_parts = w->n_parts, .part = w->ptr, .part_bytes = w->bytes,
                              .passes = passes, .part_first = w->first,
                              .row_at = w->n_parts ? w->row_at : NULL, .analysis = d->ca[slot] };
    if (*st == SEBT_OK && d->proving)
        sebt_sweep_proof_window(&d->proof, &win, d->o->verify_file != NULL);
    if (*st == SEBT_OK && d->o->on_window)
        stop = d->o->on_window(d->o->user, &win);
    sebt_results_free(cr, m);
    w->ready = false;
    return stop;
}

/* After a window is handed over: the combos of the window two ahead. */
static void prepare_ahead(driver *d, int slot, uint64_t first)
{
    if (d->sized_by_trades)   /* where the window two ahead starts is not known yet */
        return;
    size_t next = (size_t)first + 2 * d->window;
    if (next >= d->n)
        return;
    size_t m = d->n - next < d->window ? d->n - next : d->window;
    get_combos(d, next, m, d->cc[slot]);
    memset(d->cr[slot], 0, m * sizeof *d->cr[slot]);
    d->prepared[slot] = next;
}

static void *writer_main(void *arg)
{
    driver *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->busy && !d->done)
            pthread_cond_wait(&d->cv, &d->mu);
        if (!d->busy)
            break;
        int slot = d->slot;
        uint64_t first = d->first;
        size_t m = d->m;
        pthread_mutex_unlock(&d->mu);
        sebt_status st;
        sebt_error e = { 0 };
        int stop = deliver(d, slot, first, m, &st, &e);
        if (st == SEBT_OK && !stop)
            prepare_ahead(d, slot, first);
        pthread_mutex_lock(&d->mu);
        if (st != SEBT_OK)
            fail_with(d, st, &e);
        else if (stop)
            d->stopped = stop;
        else
            d->combos_done += m;
        d->busy = false;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* Waits until the writer is idle; true when the sweep goes on. */
static bool writer_wait(driver *d)
{
    pthread_mutex_lock(&d->mu);
    while (d->busy)
        pthread_cond_wait(&d->cv, &d->mu);
    bool go_on = d->st == SEBT_OK && !d->stopped;
    pthread_mutex_unlock(&d->mu);
    return go_on;
}

static void hand_over(driver *d, int slot, uint64_t first, size_t m)
{
    pthread_mutex_lock(&d->mu);
    d->slot = slot;
    d->first = first;
    d->m = m;
    d->busy = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

/* ---- the backtests ----------------------------------------------------------- */

typedef struct {
    const sebt_sweep_opts *o;
    size_t base;
} window_progress;

static void progress_update(void *user, size_t done, size_t total)
{
    (void)total;
    window_progress *p = user;
    p->o->progress(p->o->progress_user, p->base + done, p->o->n_combos);
}

/* The relative columns of a combo, at the default capital and fraction
 * (which sebt_relative_stats_of cannot refuse); the allocation it makes
 * failing leaves them NaN rather than a row with made-up figures. */
static void take_relative(const sebt_series *s, const sebt_result *r, sebt_trade_stats *a)
{
    sebt_error e = { 0 };
    a->has_relative = true;
    if (sebt_relative_stats_of(s, r, NULL, &a->relative, &e) == SEBT_OK)
        return;
    for (int i = SEBT_SWEEP_N_ANALYSIS; i < SEBT_SWEEP_N_EXTRA; i++)
        sebt_sweep_analysis_set(a, i, sebt_sweep_analysis_is_count(i) ? -1.0 : NAN);
}

/* Each combo's analysis from its trades, which then go unless the caller
 * wants them. A result whose trades fail sebt_result_check keeps them,
 * and the window's check then says what is wrong with it. */
static void take_analysis(driver *d, int slot, uint64_t first, size_t m)
{
    sebt_result *res = d->cr[slot];
    bool keep = d->o->want_trades;
    size_t trades = 0;
    for (size_t k = 0; k < m; k++)
        trades += res[k].n_trades;
    d->trades_per_combo = m ? (double)trades / (double)m : 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(d->o->threads > 0 ? d->o->threads : omp_get_max_threads())
#endif
    for (size_t k = 0; k < m; k++) {
        sebt_error e = { 0 };
        memset(&d->ca[slot][k], 0, sizeof d->ca[slot][k]);
        if (sebt_result_check(d->b, d->s, &d->cc[slot][k], (size_t)(first + k), &res[k], &e) != SEBT_OK)
            continue;
        sebt_trade_stats_of(d->s, &res[k], &d->ca[slot][k]);
        if (d->o->relative)
            take_relative(d->s, &res[k], &d->ca[slot][k]);
        const sebt_overfit_gather *g = d->o->overfit;
        if (g) {
            size_t i = (size_t)(first + k);
            sebt_overfit_add_trades(g->stats + i * (size_t)(SEBT_OVERFIT_STATS * g->blocks), g->blocks, d->s->n,
                                    &res[k]);
            g->n[i] = res[k].metrics.n;
            g->sharpe[i] = res[k].metrics.sharpe;
        }
        if (!keep) {
            free(res[k].trades);
            res[k].trades = NULL;
        }
    }
}

/* Each combo's analysis from its tally and result (no trades). */
static void take_tallies(driver *d, int slot, size_t m)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(d->o->threads > 0 ? d->o->threads : omp_get_max_threads())
#endif
    for (size_t k = 0; k < m; k++)
        sebt_trade_stats_of_tally(d->s, &d->cr[slot][k], &d->ct[slot][k], &d->ca[slot][k]);
}

/* Backtests one window (and, on every core, checks and formats it); false
 * when it failed, its results freed and the failure recorded. */
static bool backtest_window(driver *d, int slot, uint64_t first, size_t m)
{
    sebt_params *c = d->cc[slot];
    sebt_result *res = d->cr[slot];
    if (d->prepared[slot] != first) {   /* else the writer made them */
        get_combos(d, first, m, c);
        memset(res, 0, m * sizeof *res);
    }
    window_progress wp = { .o = d->o, .base = first };
    sebt_batch_opts opts = { .threads = d->o->threads,
                             .want_trades = d->o->want_trades || (d->o->analysis && !d->tally),
                             .progress = d->o->progress ? progress_update : NULL, .progress_user = &wp };
    sebt_error e = { 0 };
    double t0 = now_s(), c0 = cpu_s();
    sebt_status st;
    const sebt_overfit_gather *g = d->o->overfit;
    if (d->blocks) {
        if (d->tally)
            memset(d->ct[slot], 0, m * sizeof *d->ct[slot]);
        st = sebt_backend_status(d->b, d->blocks(d->b, d->s, c, m, &opts, res, d->tally ? d->ct[slot] : NULL,
                                                 g->stats + first * (size_t)(SEBT_OVERFIT_STATS * g->blocks),
                                                 g->blocks, &e), &e);
        for (size_t k = 0; st == SEBT_OK && k < m; k++) {
            g->n[first + k] = res[k].metrics.n;
            g->sharpe[first + k] = res[k].metrics.sharpe;
        }
    } else if (d->tally) {
        memset(d->ct[slot], 0, m * sizeof *d->ct[slot]);
        st = sebt_backend_status(d->b, d->tally(d->b, d->s, c, m, &opts, res, d->ct[slot], &e), &e);
    } else {
        st = sebt_backend_status(d->b, d->b->run_batch(d->b, d->s, c, m, &opts, res, &e), &e);
    }
    d->compute_s += now_s() - t0;
    d->compute_cpu_s += cpu_s() - c0;
    if (st == SEBT_OK && d->ca[slot] && d->tally)
        take_tallies(d, slot, m);
    else if (st == SEBT_OK && d->ca[slot])
        take_analysis(d, slot, first, m);
    if (st == SEBT_OK && d->team_rows && !team_format(d, slot, first, m)) {
        st = SEBT_ERR_NOMEM;
        snprintf(e.msg, sizeof e.msg, "out of memory for the rows of a window of %zu combos", m);
    }
    if (st == SEBT_OK)
        return true;
    sebt_results_free(res, m);
    pthread_mutex_lock(&d->mu);
    fail_with(d, st, &e);
    pthread_mutex_unlock(&d->mu);
    return false;
}

/* The next window's size: d->window, or, sized by trades, what holds
 * about SEBT_SWEEP_ANALYSIS_BYTES of trades at the last window's rate. */
static size_t next_window(const driver *d, size_t win)
{
    if (!d->sized_by_trades)
        return d->window;
    double bytes = d->trades_per_combo * (double)sizeof(sebt_trade);   /* a combo's, in the window before */
    size_t w = win == 0 ? SEBT_SWEEP_ANALYSIS_WINDOW
               : bytes > 0 && (double)SEBT_SWEEP_ANALYSIS_BYTES / bytes < (double)d->window
                   ? (size_t)((double)SEBT_SWEEP_ANALYSIS_BYTES / bytes)
                   : d->window;
    w = w < SEBT_SWEEP_ANALYSIS_WINDOW ? SEBT_SWEEP_ANALYSIS_WINDOW : w;
    return w < d->window ? w : d->window;
}

static void run_windows(driver *d, bool threaded)
{
    size_t win = 0, step = 0;
    for (size_t first = 0; first < d->n; first += step, win++) {
        step = next_window(d, win);
        size_t m = d->n - first < step ? d->n - first : step;
        int slot = (int)(win & 1);
        if (!backtest_window(d, slot, first, m))
            break;
        if (!threaded) {
            sebt_status st;
            sebt_error e = { 0 };
            int stop = deliver(d, slot, first, m, &st, &e);
            if (st != SEBT_OK)
                fail_with(d, st, &e);
            d->stopped = stop;
            if (st != SEBT_OK || stop)
                break;
            d->combos_done += m;
            continue;
        }
        if (!writer_wait(d)) {   /* the writer stopped on the window before */
            sebt_results_free(d->cr[slot], m);
            break;
        }
        hand_over(d, slot, first, m);
    }
}

/* ---- the call ------------------------------------------------------------------ */

static sebt_status check_opts(const sebt_backend *b, const sebt_series *s, const sebt_sweep_opts *o,
                              sebt_sweep_result *out, sebt_error *err)
{
    /* The proof ranks too: its best combo is the first by metric. */
    bool ranks = o && (o->top || o->verify == SEBT_VERIFY_DEFAULT);
    const char *why = !b || !s || !o || !out ? "a backend, a series, options and a result are required"
                      : o->verify != SEBT_VERIFY_DEFAULT && o->verify != SEBT_VERIFY_OFF
                          ? "verify: expected SEBT_VERIFY_DEFAULT or SEBT_VERIFY_OFF"
                      : o->verify_n > SEBT_VERIFY_MAX ? "verify_n: at most SEBT_VERIFY_MAX (4096)"
                      : !o->grid == !o->combos && o->n_combos ? "give exactly one of grid and combos"
                      : o->rows != SEBT_ROWS_NONE && o->rows != SEBT_ROWS_CSV && o->rows != SEBT_ROWS_NPY
                          ? "rows: expected SEBT_ROWS_NONE, SEBT_ROWS_CSV or SEBT_ROWS_NPY"
                      : o->verify_file && o->rows == SEBT_ROWS_NONE ? "verify_file: the rows are not formatted (rows)"
                      : ranks && (o->metric < 0 || o->metric >= SEBT_SWEEP_N_RANK_KEYS) ? "metric: not a rank key"
                      : o->relative && !o->analysis ? "relative: the relative columns follow the analysis columns: "
                                                      "set analysis too"
                      : o->overfit && !o->relative && (!sebt_backend_blocks_batch(b) || o->want_trades)
                          ? "overfit: gathered from each combo's trades (set relative) or, without trades, from "
                            "a walk that sums the block statistics (sebt_backend_blocks_batch)"
                      : ranks && o->metric >= SEBT_N_METRICS && !o->analysis
                          ? "metric: an analysis column ranks only a sweep with analysis"
                      : ranks && o->metric >= SEBT_N_METRICS + SEBT_SWEEP_N_ANALYSIS && !o->relative
                          ? "metric: a relative column ranks only a sweep with relative"
                          : NULL;
    if (!why)
        return SEBT_OK;
    if (err) {
        err->code = SEBT_ERR_USAGE;
        snprintf(err->msg, sizeof err->msg, "sebt_sweep_run: %s", why);
    }
    return SEBT_ERR_USAGE;
}

static bool alloc_driver(driver *d)
{
    size_t w = d->window ? d->window : 1;
    for (int i = 0; i < 2; i++) {
        d->cc[i] = malloc(w * sizeof(sebt_params));
        d->cr[i] = calloc(w, sizeof(sebt_result));
    }
    d->kept = d->top_cap ? malloc(d->top_cap * sizeof *d->kept) : NULL;
    for (int i = 0; i < 2 && d->o->where; i++)
        d->passes[i] = malloc(w * sizeof(bool));
    for (int i = 0; i < 2 && d->o->analysis; i++)
        d->ca[i] = malloc(w * sizeof(sebt_trade_stats));
    for (int i = 0; i < 2 && d->tally; i++)
        d->ct[i] = malloc(w * sizeof(sebt_trade_tally));
    bool rows = d->o->rows != SEBT_ROWS_NONE;
    for (int i = 0; i < 2 && rows; i++)
        d->rows[i].row_at = malloc(w * sizeof(size_t));
    return d->cc[0] && d->cc[1] && d->cr[0] && d->cr[1] && (!d->top_cap || d->kept) &&
           (!d->o->where || (d->passes[0] && d->passes[1])) && (!d->o->analysis || (d->ca[0] && d->ca[1])) &&
           (!d->tally || (d->ct[0] && d->ct[1])) &&
           (!rows || (d->rows[0].row_at && d->rows[1].row_at));
}

static void free_driver(driver *d)
{
    for (int i = 0; i < 2; i++) {
        free(d->cc[i]);
        free(d->cr[i]);
        free(d->passes[i]);
        free(d->ca[i]);
        free(d->ct[i]);
        free(d->rows[i].row_at);
        for (int p = 0; p < SEBT_SWEEP_MAX_PARTS; p++)
            free(d->rows[i].buf[p]);
    }
    free(d->kept);
}

static void run_threads(driver *d)
{
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    pthread_t writer;
    bool threaded = pthread_create(&writer, NULL, writer_main, d) == 0;
    run_windows(d, threaded);
    if (threaded) {
        writer_wait(d);
        pthread_mutex_lock(&d->mu);
        d->done = true;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(writer, NULL);
    }
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
}

/* ---- the driver's own proof (sebt/sweep_proof.h) ------------------------------- */

static sebt_status start_proof(driver *d, sebt_error *err)
{
    const sebt_sweep_opts *o = d->o;
    d->proving = o->verify == SEBT_VERIFY_DEFAULT && d->n > 0;
    if (!d->proving)
        return SEBT_OK;
    uint64_t clock_seed = (uint64_t)(now_s() * 1e9);
    d->proof = (sebt_sweep_proof){ .fixed = o->verify_n, .seed = o->verify_seeded ? o->verify_seed : clock_seed,
                                   .written = o->verify_file_start };
    if (d->top_cap < SEBT_VERIFY_BEST)
        d->top_cap = SEBT_VERIFY_BEST < d->n ? SEBT_VERIFY_BEST : d->n;   /* the best is re-checked */
    return sebt_sweep_proof_plan(&d->proof, d->n, d->window, err);
}

static int sweep_cols(const sebt_sweep_opts *o)
{
    return o->relative ? SEBT_COLS_RELATIVE : o->analysis ? SEBT_COLS_ANALYSIS : SEBT_COLS_PLAIN;
}

/* Once every window is handed over: the series, the best combo and the
 * sample against their recomputations; the outcome into out. */
static sebt_status finish_proof(driver *d, sebt_sweep_verification *out, sebt_error *err)
{
    const sebt_sweep_opts *o = d->o;
    sebt_sweep_proof *p = &d->proof;
    sebt_sweep_proof_ctx c = { .b = d->b, .s = d->s, .grid = o->grid, .combos = o->combos, .n_combos = d->n,
                               .threads = o->threads, .cols = sweep_cols(o), .where = o->where,
                               .sweep_seconds = now_s() - d->t_start, .series_file = o->series_file,
                               .series_load = o->series_load, .file = o->verify_file,
                               .npy = o->rows == SEBT_ROWS_NPY };
    size_t n_best = d->n_kept < SEBT_VERIFY_BEST ? d->n_kept : SEBT_VERIFY_BEST;
    sebt_status st = sebt_sweep_proof_check(p, &c, d->kept, n_best, err);
    *out = (sebt_sweep_verification){ .done = st == SEBT_OK, .version = SEBT_VERIFICATION_VERSION,
                                      .best = p->best, .sampled = p->sampled,
                                      .series_fresh_checked = p->series_fresh_checked,
                                      .rows_read_back = p->read_back, .seed = p->seed,
                                      .seconds = p->seconds, .sweep_seconds = p->sweep_seconds,
                                      .best_whole_reference = p->best_whole_reference };
    return st;
}

sebt_status sebt_sweep_run(const sebt_backend *b, const sebt_series *s, const sebt_sweep_opts *opts,
                           sebt_sweep_result *out, sebt_error *err)
{
    sebt_status st = check_opts(b, s, opts, out, err);
    if (st != SEBT_OK)
        return st;
    memset(out, 0, sizeof *out);
    driver d = { .b = b, .s = s, .o = opts, .n = opts->n_combos, .prepared = { SIZE_MAX, SIZE_MAX } };
    d.window = opts->window ? opts->window : SEBT_SWEEP_WINDOW;
    /* The relative columns need each combo's trades: no tally gives them. */
    d.tally = opts->analysis && !opts->want_trades && !opts->relative ? sebt_backend_tally_batch(b) : NULL;
    d.sized_by_trades = opts->analysis && !d.tally && !opts->window;
    d.blocks = opts->overfit && !opts->relative ? sebt_backend_blocks_batch(b) : NULL;
    if (d.window > d.n)
        d.window = d.n;
    d.top_cap = opts->top < d.n ? opts->top : d.n;
    d.t_start = now_s();
    st = start_proof(&d, err);
    if (st != SEBT_OK) {
        sebt_sweep_proof_free(&d.proof);
        return st;
    }
    /* npy rows cost little (no digits to find): the writer formats them,
     * as it does with trades to hand over. */
    d.team_rows = opts->rows == SEBT_ROWS_CSV && !opts->want_trades && uses_every_core(opts->threads);
    if (!alloc_driver(&d)) {
        free_driver(&d);
        if (err) {
            err->code = SEBT_ERR_NOMEM;
            snprintf(err->msg, sizeof err->msg, "out of memory for a window of %zu combos", d.window);
        }
        return SEBT_ERR_NOMEM;
    }
    run_threads(&d);
    if (d.st == SEBT_OK && !d.stopped)
        top_sort(&d);
    if (d.st == SEBT_OK && !d.stopped && d.proving)
        d.st = finish_proof(&d, &out->verification, &d.err);
    sebt_sweep_proof_free(&d.proof);
    out->top = d.kept;
    size_t asked = opts->top < d.n_kept ? opts->top : d.n_kept;   /* the proof may keep more */
    out->n_top = d.st == SEBT_OK && !d.stopped ? asked : 0;
    d.kept = NULL;
    out->combos_done = d.combos_done;
    out->combos_passed = d.combos_passed;
    out->stopped = d.stopped;
    out->compute_s = d.compute_s;
    out->compute_cpu_s = d.compute_cpu_s;
    out->rows_by_backtest_threads = d.team_rows;
    free_driver(&d);
    if (d.st != SEBT_OK && err)
        *err = d.err;
    return d.st;
}

void sebt_sweep_result_free(sebt_sweep_result *r)
{
    if (!r)
        return;
    free(r->top);
    r->top = NULL;
    r->n_top = 0;
}
