/* A sweep's own proof (include/sebt/sweep.h): a seeded sample of combos,
 * and the reference run on chosen combos and compared with what the sweep
 * wrote for them. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sebt/number.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "sweep_verify.h"
/* The reference's own signal, walk, metrics and analysis figures for the
 * checks below: the checking side reaches the oracle's code, never the
 * other way round. */
#include "../reference/ref.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* An open-addressing set of the indices drawn so far (cap a power of two). */
static bool set_add(uint64_t *slots, size_t cap, uint64_t v)
{
    size_t mask = cap - 1, i = (size_t)((v * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & mask;
    for (; slots[i] != UINT64_MAX; i = (i + 1) & mask)
        if (slots[i] == v)
            return false;
    slots[i] = v;
    return true;
}

sebt_status sebt_sweep_sample(uint64_t seed, uint64_t n, size_t k, uint64_t *out, sebt_error *err)
{
    if (k > n || (k && !out))
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_sweep_sample: %zu indices asked of %" PRIu64, k, n);
    size_t cap = 16;
    while (cap < 2 * k)
        cap *= 2;
    uint64_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a sample of %zu combos", k);
    memset(slots, 0xff, cap * sizeof *slots);
    uint64_t state = seed;
    for (size_t i = 0; i < k;) {
        /* The high word of a 128-bit product: an index in [0, n) without a division. */
        uint64_t v = (uint64_t)(((unsigned __int128)splitmix64(&state) * n) >> 64);
        if (set_add(slots, cap, v))
            out[i++] = v;
    }
    free(slots);
    return SEBT_OK;
}

/* ---- comparing with the reference ------------------------------------------ */

static bool same_double(double a, double b, const sebt_contract *c)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (c->kind == SEBT_CONTRACT_EXACT)
        return memcmp(&a, &b, sizeof a) == 0;
    double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= c->tol * (scale > 1 ? scale : 1);
}

/* Empty when got equals the reference's r, else the first field that differs. */
static void differs(const sebt_sweep_record *got, const sebt_result *r, const sebt_contract *c, char *what,
                    size_t size)
{
    static const char *const names[] = { "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe" };
    const double mine[] = { got->metrics.win_rate, got->metrics.avg_r, got->metrics.total_pnl,
                            got->metrics.max_dd, got->metrics.sharpe };
    const double ref[] = { r->metrics.win_rate, r->metrics.avg_r, r->metrics.total_pnl, r->metrics.max_dd,
                           r->metrics.sharpe };
    what[0] = '\0';
    if (got->metrics.n != r->metrics.n) {
        snprintf(what, size, "n is %" PRId64 ", the reference's %" PRId64, got->metrics.n, r->metrics.n);
        return;
    }
    for (int i = 0; i < 5; i++)
        if (!same_double(mine[i], ref[i], c)) {
            char a[SEBT_DOUBLE_CHARS + 1], b[SEBT_DOUBLE_CHARS + 1];
            a[sebt_format_double(mine[i], a)] = '\0';
            b[sebt_format_double(ref[i], b)] = '\0';
            snprintf(what, size, "%s is %s, the reference's %s", names[i], a, b);
            return;
        }
    if (got->valid_bars != (uint64_t)r->valid_bars)
        snprintf(what, size, "valid_bars is %" PRIu64 ", the reference's %zu", got->valid_bars, r->valid_bars);
    else if ((got->open_at_end != 0) != r->open_at_end.open)
        snprintf(what, size, "open_at_end is %d, the reference's %d", got->open_at_end != 0, r->open_at_end.open);
}

/* The same for the analysis columns, against a: the reference's literal
 * figures from the reference's trades. */
static void analysis_differs(const sebt_sweep_record *got, const sebt_trade_stats *a, const sebt_contract *c,
                             char *what, size_t size)
{
    for (int i = 0; i < sebt_sweep_extra_count(sebt_sweep_row_cols(&got->analysis)) && !what[0]; i++) {
        double mine = sebt_sweep_analysis_value(&got->analysis, i), ref = sebt_sweep_analysis_value(a, i);
        if (sebt_sweep_analysis_is_count(i) ? mine == ref : same_double(mine, ref, c))
            continue;
        char x[SEBT_DOUBLE_CHARS + 1], y[SEBT_DOUBLE_CHARS + 1];
        x[sebt_format_double(mine, x)] = '\0';
        y[sebt_format_double(ref, y)] = '\0';
        snprintf(what, size, "%s is %s, the reference's %s", sebt_sweep_analysis_name(i), x, y);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The reference on combo i alone, on `threads` threads (its Z columns'
 * bars shared out); its error, if any, into *e. */
static sebt_status reference_one(const sebt_backend *ref, const sebt_series *s, const sebt_params *p, int threads,
                                 bool trades, sebt_result *r, sebt_error *e)
{
    sebt_batch_opts o = { .threads = threads, .want_trades = trades };
    memset(r, 0, sizeof *r);
    return sebt_backend_status(ref, ref->run_batch(ref, s, p, 1, &o, r, e), e);
}

/* ---- the reference's walk with its z-scores where they are read --------------- */

/* SPEC §4's terms that read a z-score, by their place in
 * sebt_ref_signal_terms' order (ema, vol_z, tr_z, cloc, rsi). */
enum { TERM_VOL_Z = 1, TERM_TR_Z = 2 };

/* The z-score column of `term` at the bars where every other term holds
 * (tr_z, not made yet, left out of vol_z's pass), each bar by
 * sebt_ref_zscore_bars from its own window; NaN elsewhere, where a term
 * that fails makes the signal false whatever the z-score. The terms are
 * the reference's own, read by sebt_ref_signal_terms. */
static void z_where_read(const sebt_series *s, const sebt_params *p, sebt_features *f, int term, int threads)
{
    const double *x = term == TERM_VOL_Z ? s->volume : f->atr;
    double *out = term == TERM_VOL_Z ? f->vol_z : f->tr_z;
    (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4096) num_threads(threads)
#endif
    for (size_t t = 0; t < f->n; t++) {
        bool holds[SEBT_REF_SIGNAL_TERMS];
        double lhs[SEBT_REF_SIGNAL_TERMS], rhs[SEBT_REF_SIGNAL_TERMS];
        sebt_ref_signal_terms(f, p, t, holds, lhs, rhs);
        bool others = true;
        for (int i = 0; i < SEBT_REF_SIGNAL_TERMS; i++)
            others = others && (i == term || (term == TERM_VOL_Z && i == TERM_TR_Z) || holds[i]);
        if (others)
            sebt_ref_zscore_bars(x, p->z_window, t, t + 1, out);
    }
}

/* The reference's pipeline for combo p (its columns, sebt_ref_decide_bars'
 * signal and valid bars over every bar, sebt_ref_walk over every valid
 * bar, sebt_ref_metrics), its two z-score columns made only where the
 * signal reads them (z_where_read): nothing but the signal reads a
 * z-score, so the result is the reference's, bit for bit, without its
 * cost (every bar's window summed afresh, twice). Shares nothing with the
 * exact path's candidate lists and skipped bars. */
static sebt_status reference_z_read_one(const sebt_series *s, const sebt_params *p, int threads, sebt_result *r,
                                        sebt_error *e)
{
    size_t n = s->n, m = n ? n : 1;
    sebt_features f = { .n = n };
    memset(r, 0, sizeof *r);
    /* What the reference's run_batch refuses first. */
    sebt_status st = sebt_ref_check_params(p, 0, e);
    if (st == SEBT_OK)
        st = sebt_ref_check_series(s, e);
    if (st != SEBT_OK)
        return st;
    bool ok = true;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        ok = (f.col[c] = malloc(m * sizeof(double))) != NULL && ok;
    f.signal = malloc(m);
    f.valid = malloc(m);
    if (!ok || !f.signal || !f.valid) {
        st = sebt_fail(e, SEBT_ERR_NOMEM, "out of memory for the reference's columns of %zu bars", n);
    } else {
        sebt_ref_ema(s->close, n, p->ema_fast, f.ema_f);
        sebt_ref_ema(s->close, n, p->ema_slow, f.ema_s);
        sebt_ref_tr(s, f.tr);
        sebt_ref_atr(f.tr, n, p->atr_window, f.atr);
        sebt_ref_cloc(s, f.cloc);
        /* Only the signal's RSI term reads the RSI column, and only with
         * use_rsi: without it the column is not made. */
        for (size_t t = 0; t < n; t++)
            f.vol_z[t] = f.tr_z[t] = f.rsi[t] = NAN;
        if (p->use_rsi)
            sebt_ref_rsi(s, p->rsi_window, f.rsi);
        z_where_read(s, p, &f, TERM_VOL_Z, threads);
        z_where_read(s, p, &f, TERM_TR_Z, threads);
        sebt_ref_decide_bars(&f, p);
        st = sebt_ref_walk(s, &f, p, NULL, r, e);
        if (st == SEBT_OK)
            sebt_ref_metrics(r->trades, r->n_trades, &r->metrics);
    }
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        free(f.col[c]);
    free(f.signal);
    free(f.valid);
    return st;
}

/* Combo i's row on the reference's values r and a (NULL: no analysis
 * columns), by column name (docs/formats.md), into names and values. */
static size_t reference_row(const sebt_sweep_record *got, const sebt_params *p, const sebt_result *r,
                            const sebt_trade_stats *a, const char **names, double *values)
{
    size_t k = 0;
    names[k] = "combo";
    values[k++] = (double)got->combo;
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        names[k] = sebt_param_table[i].name;
        values[k++] = sebt_params_get_double(p, i);
    }
    const sebt_metrics *m = &r->metrics;
    const char *const plain[] = { "n", "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe", "open_at_end", "valid_bars" };
    const double plain_v[] = { (double)m->n, m->win_rate, m->avg_r, m->total_pnl, m->max_dd, m->sharpe,
                               r->open_at_end.open ? 1.0 : 0.0, (double)r->valid_bars };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        names[k] = plain[i];
        values[k++] = plain_v[i];
    }
    if (!a)
        return k;
    const char *const extra[] = { "exits_stop_gap", "exits_stop", "exits_tp", "exits_time", "gross_profit",
                                  "gross_loss", "profit_factor", "bars_in_market", "exposure", "sharpe_annual" };
    const double extra_v[] = { (double)a->exits[SEBT_EXIT_STOP_GAP], (double)a->exits[SEBT_EXIT_STOP],
                               (double)a->exits[SEBT_EXIT_TP], (double)a->exits[SEBT_EXIT_TIME], a->gross_profit,
                               a->gross_loss, a->profit_factor, (double)a->bars_in_market, a->exposure,
                               a->sharpe_annual };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        names[k] = extra[i];
        values[k++] = extra_v[i];
    }
    for (int i = SEBT_SWEEP_N_ANALYSIS; a->has_relative && i < SEBT_SWEEP_N_EXTRA; i++) {
        names[k] = sebt_sweep_analysis_name(i);
        values[k++] = sebt_sweep_analysis_value(a, i);
    }
    return k;
}

/* Empty when the sweep's decision on combo i's row (kept or dropped by
 * the condition) is the literal condition's on the reference's row. */
static void where_differs(const sebt_verify_verdict *v, const sebt_sweep_record *got, size_t i, const sebt_result *r,
                          const sebt_trade_stats *a, char *what, size_t size)
{
    const char *names[64];
    double values[64];
    sebt_ref_row row = { names, values, reference_row(&got[i], &v->combos[i], r, a, names, values) };
    char why[160];
    int ref = sebt_ref_where(v->where->text, &row, why, sizeof why);
    bool kept = !v->where->kept || v->where->kept[i];
    if (ref < 0)
        snprintf(what, size, "--where '%s' does not read as a condition over the row: %s", v->where->text, why);
    else if ((ref == 1) != kept)
        snprintf(what, size, "--where '%s' %s the row on the reference's values, the sweep %s it", v->where->text,
                 ref ? "keeps" : "rejects", kept ? "kept" : "dropped");
}

/* Combo i's result r (with its trades when the record has the analysis
 * columns) against what the sweep wrote, into v; one's failure instead. */
void sebt_verify_judge(const sebt_backend *cand, const sebt_series *s, const sebt_sweep_record *got, size_t i,
                       sebt_status one, const sebt_error *e, const sebt_result *r, sebt_verify_verdict *v)
{
    char what[sizeof v->what] = "";
    /* From the reference's literal form, not the library's
     * sebt_trade_stats_of that made the sweep's columns. */
    sebt_trade_stats a = { 0 };
    if (one == SEBT_OK && got[i].has_analysis)
        sebt_ref_trade_stats(s, r, &a);
    /* The relative columns from the reference's trades; their formulas'
     * literal check is the package's test_relative.py. */
    sebt_error re = { 0 };
    if (one == SEBT_OK && got[i].has_analysis && got[i].analysis.has_relative)
        a.has_relative = sebt_relative_stats_of(s, r, NULL, &a.relative, &re) == SEBT_OK;
    if (one == SEBT_OK)
        differs(&got[i], r, &cand->contract, what, sizeof what);
    if (one == SEBT_OK && got[i].has_analysis)
        analysis_differs(&got[i], &a, &cand->contract, what, sizeof what);
    if (one == SEBT_OK && !what[0] && v->where)
        where_differs(v, got, i, r, got[i].has_analysis ? &a : NULL, what, sizeof what);
#ifdef _OPENMP
#pragma omp critical(sebt_sweep_verify)
#endif
    {
        if (one != SEBT_OK && v->failed == SEBT_OK) {
            v->failed = one;
            v->first_err = *e;
        } else if (one == SEBT_OK && what[0]) {
            if (v->first_at == SIZE_MAX || got[i].combo < got[v->first_at].combo) {
                v->first_at = i;
                snprintf(v->what, sizeof v->what, "%s", what);
            }
            v->differ++;
        }
    }
}

/* Combo i against the reference (ref) or its walk with the z-scores where
 * read (ref NULL), into v. */
static void check_one(const sebt_backend *ref, const sebt_backend *cand, const sebt_series *s,
                      const sebt_params *combos, const sebt_sweep_record *got, size_t i, int threads, sebt_verify_verdict *v)
{
    sebt_result r;
    sebt_error e = { 0 };
    sebt_status one = ref ? reference_one(ref, s, &combos[i], threads, got[i].has_analysis, &r, &e)
                          : reference_z_read_one(s, &combos[i], threads, &r, &e);
    sebt_verify_judge(cand, s, got, i, one, &e, &r, v);
    sebt_result_free(&r);
}

static int verify_threads(int threads)
{
#ifdef _OPENMP
    if (threads < 1)
        threads = omp_get_max_threads();
#endif
    return threads < 1 ? 1 : threads;
}

/* Every combo on the reference (whole: the backend), or its walk with the
 * z-scores where read, into v. */
static sebt_status reference_all(bool whole, const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                 const sebt_sweep_record *got, size_t n, int t, sebt_verify_verdict *v,
                                 sebt_error *err)
{
    const sebt_backend *ref = NULL;
    sebt_status st = whole ? sebt_backend_get("reference", &ref, err) : SEBT_OK;
    if (st != SEBT_OK)
        return st;
    if (n < (size_t)t) {
        /* Fewer combos than threads (the best combo alone, typically):
         * each on every thread, one after another. */
        for (size_t i = 0; i < n; i++)
            check_one(ref, cand, s, combos, got, i, t, v);
    } else {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(t)
#endif
        for (size_t i = 0; i < n; i++)
            check_one(ref, cand, s, combos, got, i, 1, v);
    }
    return SEBT_OK;
}

sebt_status sebt_sweep_verify_on(sebt_recompute on, const sebt_backend *cand, const sebt_series *s,
                                 const sebt_params *combos, const sebt_sweep_record *got, size_t n, int threads,
                                 const sebt_sweep_where_decisions *where, sebt_verify_report *rep, sebt_error *err)
{
    if (!cand || !s || !rep || (n && (!combos || !got)))
        return sebt_fail(err, SEBT_ERR_USAGE, "%s: a backend, a series, combos and a report are required",
                         on == SEBT_RECOMPUTE_EXACT ? "sebt_sweep_verify_exact" : "sebt_sweep_verify");
    memset(rep, 0, sizeof *rep);
    double t0 = now_s();
    sebt_verify_verdict v = { .failed = SEBT_OK, .first_at = SIZE_MAX, .where = where, .combos = combos };
    int t = verify_threads(threads);
    sebt_status st = on == SEBT_RECOMPUTE_EXACT
                         ? sebt_verify_exact_all(cand, s, combos, got, n, t, &v, err)
                         : reference_all(on == SEBT_RECOMPUTE_REFERENCE, cand, s, combos, got, n, t, &v, err);
    if (st != SEBT_OK)
        return st;
    rep->seconds = now_s() - t0;
    if (v.failed != SEBT_OK) {
        if (err)
            *err = v.first_err;
        return v.failed;
    }
    rep->checked = n;
    rep->differ = v.differ;
    rep->first_differ = v.first_at == SIZE_MAX ? 0 : got[v.first_at].combo;
    snprintf(rep->what, sizeof rep->what, "%s", v.what);
    return SEBT_OK;
}

sebt_status sebt_sweep_verify(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                              const sebt_sweep_record *got, size_t n, int threads, sebt_verify_report *rep,
                              sebt_error *err)
{
    return sebt_sweep_verify_on(SEBT_RECOMPUTE_REFERENCE, cand, s, combos, got, n, threads, NULL, rep, err);
}

sebt_status sebt_sweep_verify_exact(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                    const sebt_sweep_record *got, size_t n, int threads, sebt_verify_report *rep,
                                    sebt_error *err)
{
    return sebt_sweep_verify_on(SEBT_RECOMPUTE_EXACT, cand, s, combos, got, n, threads, NULL, rep, err);
}
