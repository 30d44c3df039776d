/* fast_cpu: the combos of a batch backtested (sweep.c's plan, step 4),
 * and run_batch, which checks its input and drives the batches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../core/test_faults.h"
#include "sebt/overfit.h"
#include "sweep_internal.h"

/* The signal bitsets of combo ref q over its atr set s, a row per term. A
 * combo that leaves a filter off has no row of it: it gets its cloc row
 * there again (x & x is x), and with every filter off the hop skips their
 * rows (filters_on), so a sweep without a filter hops as it did before
 * filters existed. */
_Static_assert(SEBT_N_TERMS == 4 + FAST_N_FILTERS, "a new signal term's rows are built in sweep_z.c and placed here");
static sebt_k_sigbits combo_sigbits(const fast_aset *s, const fast_zpair *pairs, const fast_combo_ref *q)
{
    const fast_zpair *p = &pairs[q->pair];
    sebt_k_sigbits sb;
    sb.w[SEBT_TI_ema] = s->ebits + (size_t)q->ema * s->words;
    sb.w[SEBT_TI_vol_z] = p->vbits + (size_t)q->vslot * s->words;
    sb.w[SEBT_TI_tr_z] = p->tbits + (size_t)q->tslot * s->words;
    sb.w[SEBT_TI_cloc] = s->cbits + (size_t)q->cslot * s->words;
    sb.filters_on = false;
    for (int f = 0; f < FAST_N_FILTERS; f++) {
        sb.w[fast_filter_term(f)] = q->fslot[f] < 0 ? sb.w[SEBT_TI_cloc] : s->fbits[f] + (size_t)q->fslot[f] * s->words;
        sb.filters_on = sb.filters_on || q->fslot[f] >= 0;
    }
    return sb;
}

/* Whether two combos have one stop and one target, whose exits searched to
 * the last valid bar they then share (sebt_k_raw_exits). */
static bool same_stop_and_target(const fast_combo_ref *x, const fast_combo_ref *y)
{
    return x->batch == y->batch && x->a == y->a && x->use_stop == y->use_stop && x->stop_mult == y->stop_mult &&
           x->use_tp == y->use_tp && x->reward == y->reward;
}

/* Whether task t (refs[ts[t] .. ts[t+1])) can share walks with task t - 1
 * (sebt_k_walk): its combos differ from that task's, one for one and in
 * order, only in their costs (fee_bp + slippage_bp), which the sort puts
 * last in the exit key; a grid with a fee axis makes such runs. */
static bool cost_twin(const fast_combo_ref *R, const size_t *ts, size_t t)
{
    size_t a0 = ts[t - 1], b0 = ts[t], len = ts[t + 1] - b0;
    if (ts[t] - a0 != len)
        return false;
    const fast_combo_ref *x = &R[a0], *y = &R[b0];
    if (!same_stop_and_target(x, y) || x->use_time != y->use_time || x->max_hold != y->max_hold)
        return false;
    for (size_t i = 0; i < len; i++) {
        x = &R[a0 + i];
        y = &R[b0 + i];
        if (x->pair != y->pair || x->ema != y->ema || x->vslot != y->vslot || x->tslot != y->tslot ||
            x->cslot != y->cslot || memcmp(x->fslot, y->fslot, sizeof x->fslot) != 0)
            return false;
    }
    return true;
}

/* The units run_zbatch hands out: runs of cost twins (cost_twin), a task
 * alone otherwise. unit_start[k] is the first task of unit k. And, per
 * task, an epoch for the exits it shares with the tasks of its stop and
 * target (sebt_k_raw_exits): the sort makes those a run of tasks, numbered
 * by their first. */
static size_t *plan_units(const fast_sweep *w, const fast_zbatch *zb, bool want_trades, size_t *n_units,
                          uint32_t **raw_epoch_out)
{
    size_t nt = zb->n_tasks;
    uint8_t *twin = calloc(nt ? nt : 1, 1);
    size_t *unit_start = malloc((nt + 1) * sizeof *unit_start);
    uint32_t *raw_epoch = malloc((nt ? nt : 1) * sizeof *raw_epoch);
    if (!twin || !unit_start || !raw_epoch) {
        free(twin);
        free(unit_start);
        free(raw_epoch);
        return NULL;
    }
    for (size_t t = 0; t < nt; t++)
        raw_epoch[t] = t && same_stop_and_target(&w->refs[zb->task_start[t - 1]], &w->refs[zb->task_start[t]])
                           ? raw_epoch[t - 1]
                           : (uint32_t)t + 1;
    *raw_epoch_out = raw_epoch;
    if (!want_trades) {   /* walks give metrics only */
        #pragma omp parallel for schedule(dynamic, 64) num_threads(plan_threads(w, zb->q1 - zb->q0))
        for (size_t t = 1; t < nt; t++)
            twin[t] = cost_twin(w->refs, zb->task_start, t);
    }
    size_t n = 0;
    for (size_t t = 0; t < nt; t++)
        if (!twin[t])
            unit_start[n++] = t;
    unit_start[n] = nt;
    free(twin);
    *n_units = n;
    return unit_start;
}

/* A combo's closed trades (their candidates jv and R rv, n of them, in
 * trade order) into its row of the overfit block sums: each trade's exit bar
 * from its candidate's memo entry (one load where the bar, its rank and
 * the bars held were three dependent ones), then what
 * sebt_overfit_add_trades adds from the trades, in the same order: the same
 * bits. */
static void fold_blocks(const fast_sweep *w, const sebt_k_memo_exit *ex, const int32_t *jv, const double *rv, int64_t n, size_t idx)
{
    if (!w->block_stats)
        return;
    double *row = w->block_stats + idx * (size_t)(SEBT_OVERFIT_STATS * w->blocks);
    size_t S = (size_t)w->blocks, N = w->n, b = 0;
    /* The current block's sums in registers, put back when the next trade
     * exits in another block (the trades exit in time order, so each block
     * once; any order gives the same additions in the same order). Block b
     * is sebt_overfit_block's: the bars t with b N <= t S < (b + 1) N, so
     * the division is taken only on leaving one. */
    double *c = row, cn = c[0], cs = c[1], cq = c[2];
    for (int64_t k = 0; k < n; k++) {
        int32_t j = jv[k];
        size_t ts = (size_t)ex[j].exit_bar * S;
        if (ts < b * N || ts >= (b + 1) * N) {
            c[0] = cn;
            c[1] = cs;
            c[2] = cq;
            b = ts / N;   /* an exit bar lies in the series */
            c = row + SEBT_OVERFIT_STATS * b;
            cn = c[0];
            cs = c[1];
            cq = c[2];
        }
        cn += 1.0;
        cs += rv[k];
        cq += rv[k] * rv[k];
    }
    c[0] = cn;
    c[1] = cs;
    c[2] = cq;
}

/* A unit of n_twins cost twins (their first combos at ts[0 .. n_twins)):
 * each signal set is walked once through the unit's memo of exits
 * (its link and geom: filled for epoch), and each twin sums its costs over
 * it. */
static void run_twins(fast_sweep *w, const sebt_k_valid *v, const sebt_k_union *u, const fast_aset *s,
                      const fast_zpair *pairs, const size_t *ts, size_t n_twins, uint32_t epoch,
                      const sebt_k_memo *memo, sebt_k_memo_geom *geom, int32_t *path, double *rbuf)
{
    const fast_combo_ref *R = w->refs;
    for (size_t i = 0; i < ts[1] - ts[0]; i++) {
        sebt_k_sigbits sb = combo_sigbits(s, pairs, &R[ts[0] + i]);
        int64_t open_j, n = sebt_k_walk(&w->fm.m, v, u, &sb, memo->link, geom, &memo->raw, memo->ex, epoch,
                                        &w->combos[R[ts[0] + i].index], path, &open_j);
        for (size_t k = 0; k < n_twins; k++) {
            size_t idx = R[ts[k] + i].index;
            sebt_result *r = &w->results[idx];
            memset(r, 0, sizeof *r);
            sebt_k_run_combo_path(&w->fm.m, v, u, geom, memo->ex, path, n, open_j, &w->combos[idx], rbuf, r,
                                  w->tallies ? &w->tallies[idx] : NULL);
            fold_blocks(w, memo->ex, path, rbuf, n, idx);
        }
    }
}

/* The combos of a built batch, in parallel, one unit at a time: a task, or
 * tasks that are cost twins, whose combos then share each walk. */
static sebt_status run_zbatch(fast_sweep *w, const fast_zbatch *zb, sebt_error *err)
{
    int nt = w->threads, failed = 0;
    (void)nt; /* read by OpenMP's num_threads alone */
    const fast_combo_ref *R = w->refs;
    const fast_zpair *pairs = zb->pairs;
    const fast_aset *sets = zb->sets;
    const int32_t *set_of_atr = zb->set_of_atr;
    const size_t *task_start = zb->task_start;
    size_t umax = zb->umax;
    bool want_trades = w->opts && w->opts->want_trades;
    sebt_progress_fn progress = w->opts ? w->opts->progress : NULL;
    void *puser = w->opts ? w->opts->progress_user : NULL;
    size_t n_units = 0;
    uint32_t *raw_epoch = NULL;
    size_t *unit_start = plan_units(w, zb, want_trades, &n_units, &raw_epoch);
    if (!unit_start)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory running a batch of %zu combos",
                         zb->q1 - zb->q0);
    w->stats.chunks += n_units;
    #pragma omp parallel num_threads(nt) reduction(|:failed)
    {
        sebt_k_memo memo = { calloc(umax, sizeof *memo.link),   /* stamps 0: nothing filled */
                             malloc(umax * sizeof *memo.val),
                             { malloc(umax * sizeof *memo.raw.e), calloc(umax, sizeof *memo.raw.stamp), 0 },
                             w->tallies || w->block_stats ? malloc(umax * sizeof *memo.ex) : NULL };
        double *rbuf = malloc(2 * umax * sizeof *rbuf), *rbuf_b = rbuf ? rbuf + umax : NULL;
        int32_t *jbuf = w->block_stats ? malloc(2 * umax * sizeof *jbuf) : NULL, *jbuf_b = jbuf ? jbuf + umax : NULL;
        sebt_k_memo_geom *geom = NULL;
        int32_t *path = NULL;
        if (!memo.link || !memo.val || !memo.raw.e || !memo.raw.stamp || !rbuf || ((w->tallies || w->block_stats) && !memo.ex) ||
            (w->block_stats && !jbuf))
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t unit = 0; unit < n_units; unit++) {
            if (failed)
                continue;
            size_t task = unit_start[unit], n_twins = unit_start[unit + 1] - task;
            size_t t0 = task_start[task], t1 = task_start[task + 1];
            int32_t a = R[t0].a;
            const fast_aset *s = &sets[set_of_atr[a]];
            sebt_k_valid v = { w->valid[a], w->rank[a], w->vbar[a], w->n_valid[a] };
            sebt_k_union u = { (int64_t)s->n, s->bar, s->atr };
            uint32_t epoch = (uint32_t)task + 1;   /* a unit's first task is its own */
            memo.raw.epoch = raw_epoch[task];
            if (n_twins > 1) {
                if (!geom && (!(geom = malloc(umax * sizeof *geom)) || !(path = malloc(umax * sizeof *path)))) {
                    failed = 1;
                    continue;
                }
                run_twins(w, &v, &u, s, pairs, task_start + task, n_twins, epoch, &memo, geom, path, rbuf);
            } else {
                for (size_t q = t0; q < t1 && !failed; q++) {
                    sebt_k_sigbits sb = combo_sigbits(s, pairs, &R[q]);
                    size_t idx = R[q].index;
                    const sebt_params *cp = &w->combos[idx];
                    sebt_result *r = &w->results[idx];
                    memset(r, 0, sizeof *r);
                    if (!want_trades && q + 1 < t1) {   /* two at once: sebt_k_run_combo_pair_hop */
                        sebt_k_sigbits sb_b = combo_sigbits(s, pairs, &R[q + 1]);
                        size_t idx_b = R[q + 1].index;
                        sebt_result *r_b = &w->results[idx_b];
                        memset(r_b, 0, sizeof *r_b);
                        sebt_k_run_combo_pair_hop(&w->fm.m, &v, &u, &memo, epoch, &sb, cp, rbuf, r, &sb_b,
                                                  &w->combos[idx_b], rbuf_b, r_b, (int64_t)umax,
                                                  w->tallies ? &w->tallies[idx] : NULL,
                                                  w->tallies ? &w->tallies[idx_b] : NULL, jbuf, jbuf_b);
                        fold_blocks(w, memo.ex, jbuf, rbuf, r->metrics.n, idx);
                        fold_blocks(w, memo.ex, jbuf_b, rbuf_b, r_b->metrics.n, idx_b);
                        q++;
                        continue;
                    }
                    sebt_k_run_combo_hop(&w->fm.m, &v, &u, &sb, &memo, epoch, cp, NULL, 0, rbuf,
                                         (int64_t)umax, r, w->tallies ? &w->tallies[idx] : NULL, jbuf);
                    fold_blocks(w, memo.ex, jbuf, rbuf, r->metrics.n, idx);
                    if (want_trades && r->n_trades) {
                        sebt_trade *tt = malloc(r->n_trades * sizeof *tt);
                        if (!tt) {
                            failed = 1;
                            break;
                        }
                        sebt_k_run_combo_hop(&w->fm.m, &v, &u, &sb, &memo, epoch, cp, tt,
                                             (int64_t)r->n_trades, rbuf, (int64_t)umax, r, NULL, NULL);
                        r->trades = tt;
                    }
                }
            }
            size_t d;
            #pragma omp atomic capture
            { w->done += task_start[task + n_twins] - task_start[task]; d = w->done; }
            if (progress && thread_id() == 0) {
                double t = now_s();
                if (t - w->last_progress >= 0.25) {
                    w->last_progress = t;
                    progress(puser, d, w->total);
                }
            }
        }
        free(memo.link);
        free(memo.val);
        free(memo.raw.e);
        free(memo.raw.stamp);
        free(memo.ex);
        free(rbuf);
        free(jbuf);
        free(geom);
        free(path);
    }
    free(unit_start);
    free(raw_epoch);
    if (failed)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory running a batch of %zu combos",
                         zb->q1 - zb->q0);
    return SEBT_OK;
}

/* sebt_batch_check's verdict and message, with the combos and the series
 * checked in pieces on every thread, in one loop: serial, the check of a
 * streamed sweep's window (and of a whole sweep's million combos) left the
 * other threads waiting, and as the first loop of a call, taken
 * dynamically, it also covers the time the other threads take to wake.
 * Each piece goes through sebt_params_validate or sebt_series_check
 * itself, so the verdict is theirs; a series piece starts a bar early, so
 * every timestamp is still compared with the one before (a per-bar column
 * added to sebt_series must be offset here too). A failure is then named
 * by sebt_batch_check (the first bad combo before the series, in its
 * order), which stops there. */
#define CHECK_PIECE 8192
static sebt_status check_combos(const sebt_series *s, const sebt_params *combos, size_t n, const sebt_result *results,
                                int threads, sebt_error *err)
{
    size_t bad = SIZE_MAX, n_cp = (n + CHECK_PIECE - 1) / CHECK_PIECE, n_sp = (s->n + CHECK_PIECE - 1) / CHECK_PIECE;
    int series_bad = 0;
    (void)threads; /* read by OpenMP's num_threads alone */
    #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(min:bad) reduction(|:series_bad)
    for (size_t k = 0; k < n_cp + n_sp; k++) {
        sebt_error e;
        if (k < n_cp) {
            size_t end = (k + 1) * CHECK_PIECE < n ? (k + 1) * CHECK_PIECE : n;
            for (size_t i = k * CHECK_PIECE; i < end && i < bad; i++)
                if (sebt_params_validate(&combos[i], &e) != SEBT_OK)
                    bad = i;
            continue;
        }
        size_t from = (k - n_cp) * CHECK_PIECE, to = from + CHECK_PIECE < s->n ? from + CHECK_PIECE : s->n;
        from = from ? from - 1 : 0;
        sebt_series piece = *s;
        piece.n = to - from;
        piece.ts += from;
        piece.open += from;
        piece.high += from;
        piece.low += from;
        piece.close += from;
        piece.volume += from;
        series_bad |= sebt_series_check(&piece, &e) != SEBT_OK;
    }
    if (bad < n)
        return sebt_batch_check("fast_cpu", s, combos, bad + 1, results, err);
    return series_bad ? sebt_batch_check("fast_cpu", s, combos, 0, results, err) : SEBT_OK;
}

static sebt_status run_batch(const sebt_series *s, const sebt_params *combos, size_t n_combos,
                             const sebt_batch_opts *opts, sebt_result *results, sebt_trade_tally *tallies,
                             double *block_stats, int blocks, sebt_error *err)
{
    if (opts && opts->stats)
        memset(opts->stats, 0, sizeof *opts->stats);
    if (!s || (n_combos && (!combos || !results)))
        return sebt_batch_check("fast_cpu", s, combos, n_combos, results, err);

    int threads = sweep_threads(opts ? opts->threads : 0);
    /* A sweep of well under a millisecond of work gains nothing from a
     * thread team and, on a loaded machine, loses to its wake-up and spin
     * costs. Results do not depend on this choice. */
    if ((double)s->n * (double)n_combos < 1e6)
        threads = 1;

    sebt_status st = check_combos(s, combos, n_combos, results, threads, err);
    if (st != SEBT_OK)
        return st;
    if (s->n >= (size_t)INT32_MAX)
        return sebt_fail(err, SEBT_ERR_INPUT, "fast_cpu: %zu bars is more than it handles (%d)", s->n,
                         INT32_MAX - 1);
    if (n_combos == 0)
        return SEBT_OK;

    fast_sweep w;
    st = fast_sweep_begin(s, combos, n_combos, opts, threads, results, &w, err);
    if (st != SEBT_OK)
        return st;
    w.tallies = tallies;
    w.block_stats = block_stats;
    w.blocks = blocks;
    for (size_t q0 = 0; q0 < n_combos;) {
        size_t q1, z0, z1;
        fast_sweep_next_batch(&w, q0, &q1, &z0, &z1);
        w.stats.batches++;
        fast_zbatch zb;
        st = fast_zbatch_build(&w, q0, q1, z0, z1, &zb, err);
        if (st == SEBT_OK)
            st = run_zbatch(&w, &zb, err);
        fast_zbatch_free(&zb);
        if (st != SEBT_OK) {
            sebt_results_free(results, n_combos);
            fast_sweep_end(&w);
            return st;
        }
        q0 = q1;
    }
    if (opts && opts->progress)
        opts->progress(opts->progress_user, n_combos, n_combos);
    if (opts && opts->stats)
        *opts->stats = w.stats;
    fast_sweep_end(&w);
    return SEBT_OK;
}

sebt_status fast_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                           size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                           sebt_error *err)
{
    (void)self;
    return run_batch(s, combos, n_combos, opts, results, NULL, NULL, 0, err);
}

sebt_status sebt_fast_cpu_run_tallied(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                      size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                      sebt_trade_tally *tallies, sebt_error *err)
{
    (void)self;
    if (opts && opts->want_trades)
        return sebt_fail(err, SEBT_ERR_USAGE, "fast_cpu: a tallied batch is metrics only (want_trades off)");
    if (n_combos && !tallies)
        return sebt_fail(err, SEBT_ERR_USAGE, "fast_cpu: a tallied batch needs its tallies");
    sebt_status st = run_batch(s, combos, n_combos, opts, results, tallies, NULL, 0, err);
    /* Only in the test build (core/test_faults.h; compiled out of what
     * ships): each trade's bars in the market counted one too many, as a
     * walk that counted from the signal bar would, for the oracle's test
     * that parity and validate judge the tally. */
    for (size_t i = 0; st == SEBT_OK && SEBT_FAULT("tally_bars_from_signal") && i < n_combos; i++)
        for (int k = 0; k < SEBT_EXIT_KINDS; k++)
            tallies[i].bars_in_market += tallies[i].exits[k];
    return st;
}

sebt_status sebt_fast_cpu_run_blocked(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                      size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                                      sebt_trade_tally *tallies, double *block_stats, int blocks, sebt_error *err)
{
    (void)self;
    if (opts && opts->want_trades)
        return sebt_fail(err, SEBT_ERR_USAGE, "fast_cpu: a blocked batch is metrics only (want_trades off)");
    if (n_combos && !block_stats)
        return sebt_fail(err, SEBT_ERR_USAGE, "fast_cpu: a blocked batch needs its block sums");
    if (blocks < 2 || blocks > SEBT_OVERFIT_MAX_BLOCKS)
        return sebt_fail(err, SEBT_ERR_USAGE, "fast_cpu: blocks %d: expected 2 to %d", blocks, SEBT_OVERFIT_MAX_BLOCKS);
    return run_batch(s, combos, n_combos, opts, results, tallies, block_stats, blocks, err);
}
