/* The exact path of a sweep's proof (sebt_sweep_verify_exact), for its
 * sample and its best combo: each combo's trades made again by the
 * reference's own functions, none of the sweep's (no fast_cpu column,
 * signal bitset, paired combo, metrics-only or cost-twin walk).
 *
 * What makes it cheap enough for 256 combos and more: the columns are made
 * once for every combo that shares their window (the true range and the
 * close's location once, the ATR per atr_window, the EMAs and the RSI per
 * window as combos in window order come to them), and the rolling
 * z-scores, the reference's whole cost (each bar's window summed afresh),
 * only at the bars where a combo out of a position needs them: those whose
 * EMA, location and RSI terms already hold (and tr_z where vol_z does too),
 * each bar's value computed once by sebt_ref_zscore_bars and shared by the
 * combos of its window. A combo in a position never reads its signal (SPEC
 * §6), so the walk steps over the bars it cannot enter on and takes every
 * other step with the reference's sebt_ref_step; the signal where it is
 * read is the reference's sebt_ref_signal_terms. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "sweep_verify.h"
#include "../reference/ref.h"

/* ---- the order of the combos ------------------------------------------------ */

/* The window parameters whose columns each thread makes for its combos;
 * every other one (z_window, atr_window, a new one) is a group's. */
static bool per_combo_window(int k)
{
    return k == SEBT_PI_ema_fast || k == SEBT_PI_ema_slow || k == SEBT_PI_rsi_window;
}

/* Combos in the order that puts a group's shared windows together, then
 * the same per-combo windows; with `shared_only`, only the first part. */
static int window_order(const sebt_params *a, const sebt_params *b, bool shared_only)
{
    for (int pass = 0; pass < (shared_only ? 1 : 2); pass++)
        for (int k = 0; k < SEBT_N_PARAMS; k++) {
            if (sebt_param_table[k].role != SEBT_ROLE_WINDOW || per_combo_window(k) != (pass == 1))
                continue;
            double x = sebt_params_get_double(a, k), y = sebt_params_get_double(b, k);
            if (x < y || x > y)
                return x < y ? -1 : 1;
        }
    return 0;
}

typedef struct {
    const sebt_params *combos;
    size_t i;
} by_window;

/* Then the same cheap terms' thresholds, which share a candidate list. */
static int cmp_by_window(const void *a, const void *b)
{
    const by_window *x = a, *y = b;
    const sebt_params *p = &x->combos[x->i], *q = &y->combos[y->i];
    int c = window_order(p, q, false);
    if (!c && (p->cloc_min < q->cloc_min || p->cloc_min > q->cloc_min))
        c = p->cloc_min < q->cloc_min ? -1 : 1;
    if (!c && p->use_rsi != q->use_rsi)
        c = p->use_rsi ? 1 : -1;
    if (!c && (p->rsi_max < q->rsi_max || p->rsi_max > q->rsi_max))
        c = p->rsi_max < q->rsi_max ? -1 : 1;
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* ---- z-scores where they are read --------------------------------------------- */

/* A z-score column filled bar by bar as combos ask: state[t] is 0 (not
 * made), 2 (being made by one thread) or 1 (made, val[t] readable). */
typedef struct {
    const double *x;
    int32_t w;
    double *val;
    uint8_t *state;
} lazy_z;

static double z_at(const lazy_z *z, size_t t)
{
    uint8_t st = __atomic_load_n(&z->state[t], __ATOMIC_ACQUIRE);
    if (st != 1) {
        uint8_t expect = 0;
        if (__atomic_compare_exchange_n(&z->state[t], &expect, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            sebt_ref_zscore_bars(z->x, z->w, t, t + 1, z->val);
            __atomic_store_n(&z->state[t], 1, __ATOMIC_RELEASE);
        } else {
            while (__atomic_load_n(&z->state[t], __ATOMIC_ACQUIRE) != 1)
                sched_yield();   /* another thread is summing this bar's window: microseconds, unless it lost its core */
        }
    }
    return z->val[t];
}

/* SPEC §4 at bar t: the reference's terms, once the cheap ones hold (each
 * a necessary condition: a term that fails makes the signal false) and
 * the z-scores they read exist. */
static bool signal_at(const sebt_features *f, const sebt_params *p, const lazy_z *vol, const lazy_z *trz, size_t t)
{
    if (!(f->ema_s[t] > f->ema_f[t]) || !(f->cloc[t] > p->cloc_min) || (p->use_rsi && !(p->rsi_max >= f->rsi[t])))
        return false;
    if (!(z_at(vol, t) > p->vol_z))
        return false;
    z_at(trz, t);
    bool holds[SEBT_REF_SIGNAL_TERMS];
    double lhs[SEBT_REF_SIGNAL_TERMS], rhs[SEBT_REF_SIGNAL_TERMS];
    sebt_ref_signal_terms(f, p, t, holds, lhs, rhs);
    for (int i = 0; i < SEBT_REF_SIGNAL_TERMS; i++)
        if (!holds[i])
            return false;
    return true;
}

/* ---- one combo's walk ----------------------------------------------------------- */

/* What every combo of a group reads: the shared columns, the valid bars
 * v[0..k) (SPEC §5) and the z-scores. */
typedef struct {
    const sebt_series *s;
    const double *tr, *cloc, *atr;
    uint8_t *valid;
    size_t *v, k;
    lazy_z vol, trz;
    size_t serial;   /* which group: a thread's candidates are for one */
} group;

/* A thread's columns: its combo's EMAs and RSI (made for `held`), the
 * signal as sebt_ref_step reads it (set at one bar at a time). */
typedef struct {
    const double *ema_f, *ema_s;   /* the shared table's columns, or buf_f, buf_s */
    double *buf_f, *buf_s, *rsi;
    uint8_t *signal;
    int32_t ema_fast, ema_slow, rsi_window;   /* the windows they were made for (0: none yet) */
    /* The valid bars' places k whose cheap terms hold, for group `serial`
     * and the combo `of` (its windows and thresholds). */
    size_t *cand, n_cand, serial;
    sebt_params of;
    bool have_cand;
} own_columns;

/* Columns made once for every combo that reads them, by window: the
 * sample's distinct windows of one kind when they are few (else each
 * thread makes its combo's as it comes to them). */
#define TABLE_MAX 24
typedef struct {
    int32_t win[TABLE_MAX];
    double *col[TABLE_MAX];
    size_t n;
} window_table;

static const double *table_column(const window_table *tb, int32_t w)
{
    for (size_t i = 0; i < tb->n; i++)
        if (tb->win[i] == w)
            return tb->col[i];
    return NULL;
}

static const double *ema_column(const sebt_series *s, const window_table *emas, int32_t w, double *buf)
{
    const double *c = table_column(emas, w);
    if (c)
        return c;
    sebt_ref_ema(s->close, s->n, w, buf);
    return buf;
}

static void make_own(const sebt_series *s, const window_table *emas, const sebt_params *p, own_columns *o)
{
    if (o->ema_fast != p->ema_fast)
        o->ema_f = ema_column(s, emas, p->ema_fast, o->buf_f);
    if (o->ema_slow != p->ema_slow)
        o->ema_s = ema_column(s, emas, p->ema_slow, o->buf_s);
    if (p->use_rsi && o->rsi_window != p->rsi_window) {
        sebt_ref_rsi(s, p->rsi_window, o->rsi);
        o->rsi_window = p->rsi_window;
    }
    o->ema_fast = p->ema_fast;
    o->ema_slow = p->ema_slow;
}

static int push(sebt_result *r, size_t *cap, const sebt_trade *tr)
{
    if (r->n_trades == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        sebt_trade *t = realloc(r->trades, c * sizeof *t);
        if (!t)
            return -1;
        r->trades = t;
        *cap = c;
    }
    r->trades[r->n_trades++] = *tr;
    return 0;
}

/* The valid bars' places k (below the last) whose cheap terms hold (the
 * EMAs', the location's, the RSI's: each necessary for the signal), made
 * once for the combos that share them: one pass without a call or a
 * branch per term, the whole walk's cost out of a position. */
static void make_candidates(const group *g, own_columns *o, const sebt_params *p)
{
    if (o->have_cand && o->serial == g->serial && o->of.ema_fast == p->ema_fast && o->of.ema_slow == p->ema_slow &&
        o->of.cloc_min == p->cloc_min && o->of.use_rsi == p->use_rsi &&
        (!p->use_rsi || (o->of.rsi_window == p->rsi_window && o->of.rsi_max == p->rsi_max)))
        return;
    const size_t *v = g->v, last = g->k ? g->k - 1 : 0;
    const double *ema_s = o->ema_s, *ema_f = o->ema_f, *cloc = g->cloc, *rsi = o->rsi;
    const double cloc_min = p->cloc_min, rsi_max = p->rsi_max;
    const int no_rsi = !p->use_rsi;
    size_t m = 0;
    for (size_t k = 0; k < last; k++) {
        size_t t = v[k];
        o->cand[m] = k;
        m += (ema_s[t] > ema_f[t]) & (cloc[t] > cloc_min) & (no_rsi | (rsi_max >= rsi[t]));
    }
    o->n_cand = m;
    o->serial = g->serial;
    o->of = *p;
    o->have_cand = true;
}

/* SPEC §6-7 for combo p over the group's valid bars: out of a position,
 * the bars whose signal is off are passed over (the reference's step does
 * nothing there); every other step is the reference's. */
static sebt_status walk(const group *g, own_columns *o, const sebt_params *p, sebt_result *r, sebt_error *e)
{
    sebt_features f = { .n = g->s->n, .signal = o->signal, .valid = g->valid };
    f.ema_f = (double *)o->ema_f;
    f.ema_s = (double *)o->ema_s;
    f.tr = (double *)g->tr;
    f.atr = (double *)g->atr;
    f.vol_z = g->vol.val;
    f.tr_z = g->trz.val;
    f.cloc = (double *)g->cloc;
    f.rsi = o->rsi;
    sebt_ref_position pos = { 0 };
    size_t cap = 0;
    make_candidates(g, o, p);
    size_t j = 0;   /* the next candidate */
    for (size_t k = 0; k + 1 < g->k; k++) {
        if (!pos.open) {
            while (j < o->n_cand && o->cand[j] < k)
                j++;
            if (j == o->n_cand)
                break;   /* no entry left: the rest of the walk changes nothing */
            k = o->cand[j];
            if (!signal_at(&f, p, &g->vol, &g->trz, g->v[k]))
                continue;
        }
        size_t t = g->v[k];
        o->signal[t] = 1;
        sebt_trade tr;
        bool closed = sebt_ref_step(g->s, &f, p, NULL, &pos, t, g->v[k + 1], &tr);
        o->signal[t] = 0;
        if (closed && push(r, &cap, &tr) != 0)
            return sebt_fail(e, SEBT_ERR_NOMEM, "out of memory after %zu trades", r->n_trades);
    }
    r->valid_bars = g->k;
    if (pos.open)
        r->open_at_end = (sebt_open_position){ .open = true, .signal_index = (int64_t)pos.signal_bar,
                                               .entry_index = (int64_t)pos.entry_bar, .entry_price = pos.entry,
                                               .stop = pos.stop, .tp = pos.tp, .risk = pos.risk,
                                               .bars_held = pos.bars };
    sebt_ref_metrics(r->trades, r->n_trades, &r->metrics);
    return SEBT_OK;
}

/* ---- the check ---------------------------------------------------------------- */

typedef struct {
    double *tr, *cloc, *atr, *vol_val, *trz_val;
    uint8_t *valid, *vol_state, *trz_state;
    size_t *v;
    own_columns *own;
    int threads;
    window_table emas, atrs;   /* the EMAs by span; the ATRs by window */
} workspace;

static void workspace_free(workspace *w)
{
    void *const each[] = { w->tr, w->cloc, w->atr, w->vol_val, w->trz_val, w->valid, w->vol_state, w->trz_state, w->v };
    for (size_t i = 0; i < sizeof each / sizeof each[0]; i++)
        free(each[i]);
    for (size_t i = 0; i < w->emas.n; i++)
        free(w->emas.col[i]);
    for (size_t i = 0; i < w->atrs.n; i++)
        free(w->atrs.col[i]);
    for (int i = 0; w->own && i < w->threads; i++) {
        free(w->own[i].buf_f);
        free(w->own[i].buf_s);
        free(w->own[i].rsi);
        free(w->own[i].signal);
        free(w->own[i].cand);
    }
    free(w->own);
}

static bool workspace_alloc(workspace *w, size_t n, int threads)
{
    size_t m = n ? n : 1;
    *w = (workspace){ .threads = threads };
    w->tr = malloc(m * sizeof *w->tr);
    w->cloc = malloc(m * sizeof *w->cloc);
    w->atr = malloc(m * sizeof *w->atr);
    w->vol_val = malloc(m * sizeof *w->vol_val);
    w->trz_val = malloc(m * sizeof *w->trz_val);
    w->valid = malloc(m);
    w->vol_state = malloc(m);
    w->trz_state = malloc(m);
    w->v = malloc(m * sizeof *w->v);
    w->own = calloc((size_t)threads, sizeof *w->own);
    bool ok = w->tr && w->cloc && w->atr && w->vol_val && w->trz_val && w->valid && w->vol_state && w->trz_state &&
              w->v && w->own;
    for (int i = 0; ok && i < threads; i++) {
        own_columns *o = &w->own[i];
        o->buf_f = malloc(m * sizeof *o->buf_f);
        o->buf_s = malloc(m * sizeof *o->buf_s);
        o->rsi = malloc(m * sizeof *o->rsi);
        o->signal = calloc(m, 1);
        o->cand = malloc(m * sizeof *o->cand);
        ok = o->buf_f && o->buf_s && o->rsi && o->signal && o->cand;
    }
    return ok;
}

/* The group of combos sharing p's shared windows: its ATR, valid bars and
 * empty z-score columns (vol_z kept when its window is the group before's). */
static void start_group(const sebt_series *s, const sebt_params *p, const sebt_params *before, size_t serial,
                        workspace *w, group *g)
{
    size_t n = s->n;
    const double *atr = table_column(&w->atrs, p->atr_window);
    if (!atr) {
        sebt_ref_atr(w->tr, n, p->atr_window, w->atr);
        atr = w->atr;
    }
    *g = (group){ .s = s, .tr = w->tr, .cloc = w->cloc, .atr = atr, .valid = w->valid, .v = w->v,
                  .serial = serial };
    for (size_t t = 0; t < n; t++) {
        w->valid[t] = !isnan(atr[t]);
        if (w->valid[t])
            w->v[g->k++] = t;
    }
    if (!before || before->z_window != p->z_window)
        memset(w->vol_state, 0, n);
    memset(w->trz_state, 0, n);
    g->vol = (lazy_z){ s->volume, p->z_window, w->vol_val, w->vol_state };
    g->trz = (lazy_z){ atr, p->z_window, w->trz_val, w->trz_state };
}

/* w[0..n) the distinct values of window parameter `k` (and `k2`, -1: none)
 * over the combos, when there are at most TABLE_MAX of them. */
static size_t distinct_windows(const sebt_params *combos, size_t n, int k, int k2, int32_t *w)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 2; j++) {
            int key = j ? k2 : k;
            if (key < 0)
                continue;
            int32_t x = (int32_t)sebt_params_get_double(&combos[i], key);
            size_t at = 0;
            while (at < m && w[at] != x)
                at++;
            if (at < m)
                continue;
            if (m == TABLE_MAX)
                return 0;
            w[m++] = x;
        }
    return m;
}

/* The EMA and ATR tables, their columns made on t threads; a table whose
 * windows are too many, or whose memory is not there, stays empty. */
static void make_tables(const sebt_series *s, const sebt_params *combos, size_t n, int t, workspace *w)
{
    window_table *tabs[2] = { &w->emas, &w->atrs };
    tabs[0]->n = distinct_windows(combos, n, SEBT_PI_ema_fast, SEBT_PI_ema_slow, tabs[0]->win);
    tabs[1]->n = distinct_windows(combos, n, SEBT_PI_atr_window, -1, tabs[1]->win);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < tabs[k]->n; i++)
            if (!(tabs[k]->col[i] = malloc((s->n ? s->n : 1) * sizeof(double)))) {
                for (size_t j = 0; j < i; j++)
                    free(tabs[k]->col[j]);
                tabs[k]->n = 0;
            }
    size_t ne = w->emas.n, all = ne + w->atrs.n;
    (void)t;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(t)
#endif
    for (size_t i = 0; i < all; i++) {
        if (i < ne)
            sebt_ref_ema(s->close, s->n, w->emas.win[i], w->emas.col[i]);
        else
            sebt_ref_atr(w->tr, s->n, w->atrs.win[i - ne], w->atrs.col[i - ne]);
    }
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The combos order[from, to), one group, on t threads, into v. */
static void check_group(const sebt_backend *cand, const group *g, workspace *w, const sebt_params *combos,
                        const sebt_sweep_record *got, const by_window *order, size_t from, size_t to, int t,
                        sebt_verify_verdict *v)
{
    (void)t;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(t)
#endif
    for (size_t k = from; k < to; k++) {
        size_t i = order[k].i;
        own_columns *o = &w->own[thread_num()];
        make_own(g->s, &w->emas, &combos[i], o);
        sebt_result r;
        memset(&r, 0, sizeof r);
        sebt_error e = { 0 };
        sebt_status one = walk(g, o, &combos[i], &r, &e);
        sebt_verify_judge(cand, g->s, got, i, one, &e, &r, v);
        sebt_result_free(&r);
    }
}

sebt_status sebt_verify_exact_all(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                  const sebt_sweep_record *got, size_t n, int t, sebt_verify_verdict *v, sebt_error *err)
{
    workspace w = { 0 };
    by_window *order = malloc((n ? n : 1) * sizeof *order);
    if (!order || !workspace_alloc(&w, s->n, t)) {
        free(order);
        workspace_free(&w);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a check of %zu combos", n);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (by_window){ combos, i };
    qsort(order, n, sizeof *order, cmp_by_window);
    sebt_ref_tr(s, w.tr);
    sebt_ref_cloc(s, w.cloc);
    make_tables(s, combos, n, t, &w);
    for (size_t from = 0, to, serial = 0; from < n; from = to, serial++) {
        const sebt_params *p = &combos[order[from].i];
        for (to = from + 1; to < n && window_order(&combos[order[to].i], p, true) == 0; to++)
            ;
        group g;
        start_group(s, p, from ? &combos[order[from - 1].i] : NULL, serial, &w, &g);
        check_group(cand, &g, &w, combos, got, order, from, to, t, v);
    }
    free(order);
    workspace_free(&w);
    return SEBT_OK;
}
