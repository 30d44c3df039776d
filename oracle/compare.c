/* SPEC §8: a candidate backend against the reference, combo by combo.
 *
 * Per combo the oracle compares, in order, the indicator columns (values
 * and NaN pattern), the signal (near-ties adjudicated for tolerant
 * contracts), the trades through its own steerable replay (replay.c), the
 * open position and the metrics; then the same combo run metrics-only and,
 * for a backend whose walk keeps the analysis tally, tallied, with the
 * analysis columns against the reference's literal figures. The first
 * difference is the divergence. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../reference/ref.h"
#include "oracle_internal.h"
#include "sebt/backends.h"
#include "sebt/number.h"
#include "sebt/sweep.h"

#define ORACLE_CROSS_CHECK_BARS 20000

double oracle_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void oracle_diverge(sebt_divergence *div, const sebt_series *s, const sebt_params *p,
                    const char *what, int64_t bar, double ref_value, double cand_value,
                    double margin, const char *fmt, ...)
{
    if (!div)
        return;
    memset(div, 0, sizeof *div);
    div->params = *p;
    snprintf(div->what, sizeof div->what, "%s", what);
    div->bar = bar;
    div->ts = bar >= 0 && (size_t)bar < s->n ? s->ts[bar] : 0;
    div->ref_value = ref_value;
    div->cand_value = cand_value;
    div->margin = margin;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(div->detail, sizeof div->detail, fmt, ap);
    va_end(ap);
}

static bool same_bits(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Exact: bits; tolerant: |a-b| <= tol*max(1,|a|,|b|); NaN only with NaN. */
static bool agree(double a, double b, double tol)
{
    if (tol <= 0)
        return same_bits(a, b);
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b || fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* A z-score over a nearly flat window is ill-conditioned: the last bits of
 * its inputs decide it. Saying how flat the window was tells the reader
 * whether a backend's algorithm or its arithmetic order is at fault. */
static void note_z_window(sebt_divergence *div, const double *x, size_t t, int w)
{
    if (t + 1 < (size_t)w)
        return;
    double sum = 0.0, ss = 0.0;
    for (size_t i = t + 1 - (size_t)w; i <= t; i++)
        sum += x[i];
    double m = sum / w;
    for (size_t i = t + 1 - (size_t)w; i <= t; i++)
        ss += (x[i] - m) * (x[i] - m);
    size_t used = strlen(div->detail);
    snprintf(div->detail + used, sizeof div->detail - used,
             "; its window (%d values) has mean %.6g and sd/|mean| %.3g%s", w, m,
             sqrt(ss / w) / fabs(m), sqrt(ss / w) < 1e-6 * fabs(m) ? ", nearly flat" : "");
}

double sebt_oracle_tie_rate(uint64_t ties, uint64_t decisions)
{
    return decisions ? (double)ties * 1e6 / (double)decisions : 0.0;
}

/* Whether every operand of p's signal terms at t is defined in f; with
 * buf, also the operands as "ema_f 1.5, ema_s 1.7, ...". */
static bool signal_operands(const sebt_features *f, const sebt_params *p, size_t t, char *buf, size_t size)
{
    bool defined = true;
    size_t used = 0;
    if (buf)
        buf[0] = '\0';
    for (int k = 0; k < SEBT_N_TERMS; k++) {
        if (!sebt_term_on(k, p))
            continue;
        for (int side = 0; side < 2; side++) {
            int col = side ? sebt_term_table[k].rhs_column : sebt_term_table[k].column;
            if (col < 0)
                continue;
            defined = defined && !isnan(f->col[col][t]);
            if (buf && used < size)
                used += (size_t)snprintf(buf + used, size - used, "%s%s %.17g", used ? ", " : "",
                                         sebt_feature_table[col].name, f->col[col][t]);
        }
    }
    return defined;
}

static bool compare_features(const sebt_series *s, const sebt_params *p, const sebt_features *r,
                             const sebt_features *c, double tol, uint8_t *tie_bars,
                             sebt_divergence *div, oracle_tally *tally)
{
    for (size_t t = 0; t < s->n; t++) {
        for (int i = 0; i < SEBT_N_FEATURES; i++) {
            double a = r->col[i][t], b = c->col[i][t];
            const char *name = sebt_feature_table[i].name;
            if (agree(a, b, tol))
                continue;
            if (isnan(a) != isnan(b))
                oracle_diverge(div, s, p, name, (int64_t)t, a, b, NAN,
                               "%s is %s in the reference and %s in the candidate", name,
                               isnan(a) ? "NaN" : "defined", isnan(b) ? "NaN" : "defined");
            else
                oracle_diverge(div, s, p, name, (int64_t)t, a, b, NAN,
                               "%s differs beyond the contract (%s)", name,
                               tol > 0 ? "tolerant" : "exact: bits differ");
            if (i == SEBT_FI_vol_z || i == SEBT_FI_tr_z)
                note_z_window(div, i == SEBT_FI_vol_z ? s->volume : r->atr, t, p->z_window);
            return false;
        }
        if ((r->valid[t] != 0) != (c->valid[t] != 0)) {
            oracle_diverge(div, s, p, "valid", (int64_t)t, r->valid[t] != 0, c->valid[t] != 0, NAN,
                           "bar %zu is %s in the reference (ATR %s) and %s in the candidate", t,
                           r->valid[t] ? "valid" : "not valid", isnan(r->atr[t]) ? "NaN" : "defined",
                           c->valid[t] ? "valid" : "not valid");
            return false;
        }
        bool rs = r->signal[t] != 0, cs = c->signal[t] != 0;
        if (signal_operands(r, p, t, NULL, 0))
            tally->decisions++;
        if (rs == cs)
            continue;
        double margin = NAN;
        if (tol > 0 && oracle_signal_tie(r, c, p, t, cs, tol, &margin)) {
            tie_bars[t] = 1;
            tally->ties++;
            continue;
        }
        if (tol <= 0)
            oracle_signal_tie(r, NULL, p, t, cs, 1.0, &margin); /* only to name the deciding margin */
        char ops[64 * 2 * SEBT_N_TERMS];
        signal_operands(r, p, t, ops, sizeof ops);
        oracle_diverge(div, s, p, "signal", (int64_t)t, rs, cs, margin,
                       "reference signal %d, candidate %d (%s)%s", rs, cs, ops,
                       tol > 0 && fabs(margin) <= tol * fmax(1.0, fabs(margin))
                           ? "; a near-tie, but the candidate's operands are the reference's bits: "
                             "a logic error, not rounding" : "");
        return false;
    }
    return true;
}

static bool same_trade_bits(const sebt_trade *a, const sebt_trade *b)
{
    return a->signal_index == b->signal_index && a->entry_index == b->entry_index &&
           a->exit_index == b->exit_index && a->reason == b->reason && a->bars_held == b->bars_held &&
           same_bits(a->entry_price, b->entry_price) && same_bits(a->exit_price, b->exit_price) &&
           same_bits(a->stop, b->stop) && same_bits(a->tp, b->tp) && same_bits(a->risk, b->risk) &&
           same_bits(a->pnl, b->pnl) && same_bits(a->r, b->r);
}

static bool compare_metrics(const sebt_series *s, const sebt_params *p, const sebt_metrics *want,
                            const sebt_metrics *got, double tol, bool skip_sharpe,
                            sebt_divergence *div)
{
    if (want->n != got->n) {
        oracle_diverge(div, s, p, "metrics.n", -1, (double)want->n, (double)got->n, NAN,
                       "metrics count %lld trades, the trades %lld", (long long)got->n,
                       (long long)want->n);
        return false;
    }
    struct { const char *name; double a, b; } m[] = {
        { "metrics.win_rate", want->win_rate, got->win_rate }, { "metrics.avg_r", want->avg_r, got->avg_r },
        { "metrics.total_pnl", want->total_pnl, got->total_pnl }, { "metrics.max_dd", want->max_dd, got->max_dd },
        { "metrics.sharpe", want->sharpe, got->sharpe },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (skip_sharpe && i == 4)
            continue;
        if (!agree(m[i].a, m[i].b, tol)) {
            oracle_diverge(div, s, p, m[i].name, -1, m[i].a, m[i].b, NAN,
                           "%s differs beyond the contract", m[i].name);
            return false;
        }
    }
    return true;
}

/* Sharpe = mean/sd is ill-conditioned when sd is tiny next to the mean (all
 * trades alike): rounding alone moves it anywhere. A tolerant backend is
 * not held to it there. */
static bool sharpe_ill_conditioned(const sebt_trade *t, size_t n)
{
    if (n < 2)
        return false;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += t[i].r;
    double mean = sum / (double)n, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (t[i].r - mean) * (t[i].r - mean);
    return sqrt(ss / (double)(n - 1)) <= 1e-6 * fmax(1.0, fabs(mean));
}

/* Whether the replay walked as the reference's own simulation did. */
static bool same_walk(const sebt_result *replay, const sebt_result *rr)
{
    bool same = replay->n_trades == rr->n_trades && replay->open_at_end.open == rr->open_at_end.open;
    for (size_t i = 0; same && i < rr->n_trades; i++)
        same = same_trade_bits(&replay->trades[i], &rr->trades[i]);
    return same;
}

/* The candidate's metrics: an exact one's against the reference's (want),
 * a tolerant one's within tol of SPEC §7 over its own trades. */
static bool metrics_agree(const sebt_series *s, const sebt_params *p, double tol, const sebt_metrics *want,
                          const sebt_result *cr, sebt_divergence *div)
{
    if (tol <= 0)
        return compare_metrics(s, p, want, &cr->metrics, 0.0, false, div);
    sebt_metrics own = sebt_oracle_metrics(cr->trades, cr->n_trades);
    bool skip = sharpe_ill_conditioned(cr->trades, cr->n_trades);
    return compare_metrics(s, p, &own, &cr->metrics, tol, skip, div);
}

static void name_trade_list_cause(const sebt_series *s, const sebt_params *p, const sebt_features *rf,
                                  const sebt_features *cf, const sebt_result *rr, const sebt_result *cr,
                                  sebt_divergence *div);

/* sebt_oracle_compare_one; when the candidate agrees, ref_out (may be
 * NULL) receives the reference's result with trades that its metrics were
 * judged against: the reference's own run where it was made, else the
 * replay (the reference's walk, following a tolerant candidate at ties). */
static sebt_status compare_one(const sebt_contract *contract, const sebt_series *s, const sebt_params *p,
                               const sebt_features *cf, const sebt_result *cr, bool *diverged,
                               sebt_divergence *div, sebt_oracle_tally *tally, sebt_result *ref_out,
                               sebt_error *err)
{
    const sebt_backend *ref = &sebt_reference_backend;
    double tol = contract->kind == SEBT_CONTRACT_EXACT ? 0.0 : contract->tol;
    *diverged = false;
    oracle_tally combo = { 0, 0 };
    sebt_features rf;
    sebt_result rr = { 0 }, replay = { 0 };
    uint8_t *tie_bars = calloc(s->n ? s->n : 1, 1);
    sebt_status st = sebt_features_alloc(&rf, s->n, err);
    if (st || !tie_bars) {
        free(tie_bars);
        if (st == SEBT_OK)
            sebt_features_free(&rf);
        return st ? st : sebt_fail(err, SEBT_ERR_NOMEM, "oracle: out of memory");
    }
    st = ref->features(ref, s, p, &rf, err);
    /* The reference's own simulation checks the oracle's replay (below).
     * It costs as much as the features again, so long series, where the
     * replay has nothing new to show, go without it. */
    bool cross_check = s->n <= ORACLE_CROSS_CHECK_BARS;
    if (st == SEBT_OK && cross_check) {
        sebt_batch_opts o = { .threads = 1, .want_trades = true };
        st = ref->run_batch(ref, s, p, 1, &o, &rr, err);
    }
    if (st)
        goto out;
    if (cr->n_trades && !cr->trades) {
        st = sebt_fail(err, SEBT_ERR_USAGE, "oracle: the candidate's result holds no trades "
                                            "(run it with want_trades)");
        goto out;
    }
    if (!compare_features(s, p, &rf, cf, tol, tie_bars, div, &combo)) {
        *diverged = true;
        goto out;
    }
    st = oracle_replay(s, p, &rf, cf, tol, cr, tie_bars, &replay, diverged, div, &combo, err);
    if (st == SEBT_OK && *diverged && !cross_check && strcmp(div->what, "signal") == 0) {
        sebt_batch_opts o = { .threads = 1, .want_trades = true };
        st = ref->run_batch(ref, s, p, 1, &o, &rr, err);
    }
    if (st == SEBT_OK && *diverged)
        name_trade_list_cause(s, p, &rf, cf, &rr, cr, div);
    if (st || *diverged)
        goto out;
    if (cr->valid_bars != replay.valid_bars) {
        oracle_diverge(div, s, p, "valid_bars", -1, (double)replay.valid_bars, (double)cr->valid_bars,
                       NAN, "the reference walks %zu valid bars, the candidate reports %zu",
                       replay.valid_bars, cr->valid_bars);
        *diverged = true;
        goto out;
    }
    /* Without ties the replay must be the reference's own simulation; if
     * not, the oracle (or the reference) is wrong, not the candidate. */
    if (combo.ties == 0 && cross_check) {
        if (!same_walk(&replay, &rr)) {
            st = sebt_fail(err, SEBT_ERR_INTERNAL,
                           "oracle: its replay of SPEC §6 disagrees with the reference backend "
                           "(%zu trades against %zu): a bug in the oracle or the reference",
                           replay.n_trades, rr.n_trades);
            goto out;
        }
    }
    /* Without ties the replay is the reference's simulation (checked
     * against it on every series up to ORACLE_CROSS_CHECK_BARS). */
    sebt_result *judged = tol <= 0 && cross_check ? &rr : &replay;
    *diverged = !metrics_agree(s, p, tol, &judged->metrics, cr, div);
    if (!*diverged && ref_out) {
        *ref_out = *judged;
        memset(judged, 0, sizeof *judged);
    }
out:
    if (tally) {
        tally->decisions += combo.decisions;
        tally->ties += combo.ties;
    }
    free(tie_bars);
    sebt_features_free(&rf);
    sebt_result_free(&rr);
    sebt_result_free(&replay);
    return st;
}

sebt_status sebt_oracle_compare_one(const sebt_contract *contract, const sebt_series *s,
                                    const sebt_params *p, const sebt_features *cf,
                                    const sebt_result *cr, bool *diverged, sebt_divergence *div,
                                    sebt_oracle_tally *tally, sebt_error *err)
{
    return compare_one(contract, s, p, cf, cr, diverged, div, tally, NULL, err);
}

/* The replay meets a missing or extra trade as a signal decision; when
 * the candidate's own signal column agrees with the reference's at that
 * bar, the signal is not the cause: its trade list or open position is
 * (SPEC §6). Names that, with the counts on both sides. That column comes
 * from the candidate's features entry, which runs one combo alone: no
 * backend gives the features of a batch, so the message says where the
 * column came from (a fault that needs the batch shows only in its
 * trades; the fuzz report then says "alone it agrees"). */
static void name_trade_list_cause(const sebt_series *s, const sebt_params *p, const sebt_features *rf,
                                  const sebt_features *cf, const sebt_result *rr, const sebt_result *cr,
                                  sebt_divergence *div)
{
    if (strcmp(div->what, "signal") != 0 || div->bar < 0 || (size_t)div->bar >= s->n)
        return;
    size_t t = (size_t)div->bar;
    if (cf && (cf->signal[t] != 0) != (rf->signal[t] != 0))
        return;
    const sebt_open_position *ro = &rr->open_at_end, *co = &cr->open_at_end;
    bool ref_takes = rf->signal[t] != 0;
    if (ref_takes && ro->open && ro->signal_index == (int64_t)t && !co->open) {
        oracle_diverge(div, s, p, "open_at_end", (int64_t)t, 1, 0, NAN,
                       "SPEC §6: the reference ends with a position open (signal bar %zu, entry bar %lld, "
                       "entry %.17g); the candidate reports no open position (its signal column, from its "
                       "features for this combo alone, agrees at bar %zu; its %zu trades are the reference's %zu)", t, (long long)ro->entry_index,
                       ro->entry_price, t, cr->n_trades, rr->n_trades);
        return;
    }
    if (!ref_takes && co->open && co->signal_index == (int64_t)t && !ro->open) {
        oracle_diverge(div, s, p, "open_at_end", (int64_t)t, 0, 1, NAN,
                       "SPEC §6: the candidate reports a position open at the end (signal bar %zu), "
                       "the reference none (both signal columns, the candidate's from its features for this "
                       "combo alone, say %d at bar %zu)", t, rf->signal[t] != 0, t);
        return;
    }
    if (cr->n_trades != rr->n_trades)
        oracle_diverge(div, s, p, "trade count", (int64_t)t, (double)rr->n_trades, (double)cr->n_trades, NAN,
                       "SPEC §6: the reference %s a trade at signal bar %zu and the candidate %s, "
                       "though its signal column, from its features for this combo alone, agrees there (%d): "
                       "%zu trades against the reference's %zu",
                       ref_takes ? "opens" : "does not open", t, ref_takes ? "does not" : "does",
                       rf->signal[t] != 0, cr->n_trades,
                       rr->n_trades);
}

/* Sweeps run metrics-only (want_trades off), and a backend may take
 * other paths there (fast_cpu walks combos that differ only in costs once,
 * and runs two combos at a time): the same combo run metrics-only must
 * give what the run with trades gave, which compare_one has just judged
 * against the reference, under the same contract (exact: bits; tolerant:
 * within tol of SPEC §7 over the trades). Counts, bars and indices are
 * exact. */
bool oracle_metrics_only_agree(const sebt_contract *contract, const sebt_series *s, const sebt_params *p,
                               const sebt_result *want, const sebt_result *got, const char *how,
                               const char *against, sebt_divergence *div)
{
    double tol = contract->kind == SEBT_CONTRACT_EXACT ? 0.0 : contract->tol;
    const sebt_open_position *wo = &want->open_at_end, *go = &got->open_at_end;
    struct { const char *name; double a, b; bool exact; } f[] = {
        { "metrics-only n_trades", (double)want->n_trades, (double)got->n_trades, true },
        { "metrics-only metrics.n", (double)want->metrics.n, (double)got->metrics.n, true },
        { "metrics-only valid_bars", (double)want->valid_bars, (double)got->valid_bars, true },
        { "metrics-only open_at_end", wo->open, go->open, true },
        { "metrics-only open entry bar", wo->open ? (double)wo->entry_index : 0, go->open ? (double)go->entry_index : 0,
          true },
        { "metrics-only open stop", wo->open ? wo->stop : 0, go->open ? go->stop : 0, false },
        { "metrics-only open tp", wo->open ? wo->tp : 0, go->open ? go->tp : 0, false },
        { "metrics-only metrics.win_rate", want->metrics.win_rate, got->metrics.win_rate, false },
        { "metrics-only metrics.avg_r", want->metrics.avg_r, got->metrics.avg_r, false },
        { "metrics-only metrics.total_pnl", want->metrics.total_pnl, got->metrics.total_pnl, false },
        { "metrics-only metrics.max_dd", want->metrics.max_dd, got->metrics.max_dd, false },
        { "metrics-only metrics.sharpe", want->metrics.sharpe, got->metrics.sharpe, false },
    };
    bool skip_sharpe = false;
    if (tol > 0 && want->trades) {
        /* A tolerant candidate's metrics are judged from the trades. */
        sebt_metrics own = sebt_oracle_metrics(want->trades, want->n_trades);
        skip_sharpe = sharpe_ill_conditioned(want->trades, want->n_trades);
        f[7].a = own.win_rate;
        f[8].a = own.avg_r;
        f[9].a = own.total_pnl;
        f[10].a = own.max_dd;
        f[11].a = own.sharpe;
    }
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (i == 11 && skip_sharpe)
            continue;
        if (!agree(f[i].a, f[i].b, f[i].exact ? 0.0 : tol)) {
            oracle_diverge(div, s, p, f[i].name, -1, f[i].a, f[i].b, NAN, "%s, the candidate gives %s %.17g; %s: %.17g",
                           how, f[i].name + strlen("metrics-only "), f[i].b, against, f[i].a);
            return false;
        }
    }
    return true;
}

/* A walk backend's analysis columns as a sweep makes them (its tallied
 * call: the result got and the tally t, through sebt_trade_stats_of_tally)
 * against the reference's literal figures (reference/analysis.c) over ref,
 * the reference's own result with trades for the combo: never the
 * library's pass over trades, which shares its arithmetic with the tally's
 * figures. Counts exactly, the rest under the contract (exact: bits). */
static bool analysis_agree(const sebt_contract *contract, const sebt_series *s, const sebt_params *p,
                           const sebt_result *ref, const sebt_result *got, const sebt_trade_tally *t,
                           sebt_divergence *div)
{
    double tol = contract->kind == SEBT_CONTRACT_EXACT ? 0.0 : contract->tol;
    sebt_trade_stats want, mine;
    sebt_ref_trade_stats(s, ref, &want);
    sebt_trade_stats_of_tally(s, got, t, &mine);
    for (int i = 0; i < SEBT_SWEEP_N_ANALYSIS; i++) {
        double a = sebt_sweep_analysis_value(&want, i), b = sebt_sweep_analysis_value(&mine, i);
        if (agree(a, b, sebt_sweep_analysis_is_count(i) ? 0.0 : tol))
            continue;
        const char *name = sebt_sweep_analysis_name(i);
        char what[64];
        snprintf(what, sizeof what, "analysis %s", name);
        oracle_diverge(div, s, p, what, -1, a, b, NAN,
                       "run tallied (metrics only, the analysis tally kept in the walk: the path sweep --analysis "
                       "takes), the candidate gives %s %.17g; the reference's literal figures over its own "
                       "%zu trades: %.17g", name, b, ref->n_trades, a);
        return false;
    }
    return true;
}

/* Failures of the candidate that are not its answer to this input: no
 * device or memory (nothing is known), a kernel that broke its protocol or
 * a backend that ran out of time (reported as such, with the request, never
 * as a divergence to shrink). Any other refusal of valid input diverges. */
static bool cannot_judge(sebt_status st)
{
    return st == SEBT_ERR_NODEVICE || st == SEBT_ERR_NOMEM || st == SEBT_ERR_UNAVAILABLE || st == SEBT_ERR_PROTOCOL ||
           st == SEBT_ERR_TIMEOUT;
}

/* One call of the candidate over the batch that the per-combo judgement
 * reads: its results (and tallies), or how it failed. */
typedef struct {
    sebt_result *r;
    sebt_trade_tally *tally;     /* the tallied call's */
    sebt_status st;
    sebt_error err;
} cand_call;

/* The candidate's calls over a batch: with trades (judged against the
 * reference); metrics-only, the path a sweep takes; and, for a backend
 * whose walk keeps the analysis tally (sebt_backend_tally_batch), tallied,
 * the path `sweep --analysis` takes. A metrics-only or tallied call that
 * fails is a divergence of each combo that agrees otherwise. */
typedef struct {
    cand_call trades, metrics, tallied;
    sebt_tally_batch_fn tally_fn;
} cand_calls;

static void cand_call_free(cand_call *c, size_t n)
{
    if (c->r && c->st == SEBT_OK)
        sebt_results_free(c->r, n);
    free(c->r);
    free(c->tally);
}

static void cand_calls_free(cand_calls *k, size_t n)
{
    cand_call_free(&k->trades, n);
    cand_call_free(&k->metrics, n);
    cand_call_free(&k->tallied, n);
}

/* Makes the calls; an error (the returned status, in err) only when the
 * oracle cannot judge: out of memory, or a failure of cannot_judge's. */
static sebt_status cand_calls_run(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                  size_t n, const sebt_oracle_opts *opts, sebt_batch_stats *stats, cand_calls *k,
                                  sebt_error *err)
{
    memset(k, 0, sizeof *k);
    k->tally_fn = sebt_backend_tally_batch(cand);
    size_t m = n ? n : 1;
    k->trades.r = calloc(m, sizeof *k->trades.r);
    k->metrics.r = calloc(m, sizeof *k->metrics.r);
    if (k->tally_fn) {
        k->tallied.r = calloc(m, sizeof *k->tallied.r);
        k->tallied.tally = calloc(m, sizeof *k->tallied.tally);
    }
    if (!k->trades.r || !k->metrics.r || (k->tally_fn && (!k->tallied.r || !k->tallied.tally)))
        return sebt_fail(err, SEBT_ERR_NOMEM, "oracle: out of memory for %zu results", n);
    sebt_batch_opts o = { .threads = opts->threads, .want_trades = true, .memory_budget = opts->memory_budget,
                          .stats = stats };
    k->trades.st = cand->run_batch(cand, s, combos, n, &o, k->trades.r, &k->trades.err);
    if (k->trades.st != SEBT_OK)
        k->metrics.st = k->tallied.st = k->trades.st; /* not made: nothing of theirs to free */
    sebt_batch_opts om = { .threads = opts->threads, .memory_budget = opts->memory_budget };
    if (k->trades.st == SEBT_OK)
        k->metrics.st = cand->run_batch(cand, s, combos, n, &om, k->metrics.r, &k->metrics.err);
    if (k->trades.st == SEBT_OK && !cannot_judge(k->metrics.st) && k->tally_fn)
        k->tallied.st = k->tally_fn(cand, s, combos, n, &om, k->tallied.r, k->tallied.tally, &k->tallied.err);
    const cand_call *calls[] = { &k->trades, &k->metrics, &k->tallied };
    for (size_t i = 0; i < 3; i++)
        if (cannot_judge(calls[i]->st)) {
            if (err)
                *err = calls[i]->err;
            return calls[i]->st;
        }
    return SEBT_OK;
}

/* One later call of combo i (metrics-only, tallied) against the run with
 * trades recorded: its error, else its metrics. failed says how it ran,
 * up to the status; run says it for the metrics' comparison. */
static bool later_call_agrees(const sebt_backend *cand, const sebt_series *s, const sebt_params *p, size_t i,
                              const cand_calls *k, const cand_call *c, const char *field, const char *failed,
                              const char *run, sebt_divergence *d)
{
    if (c->st != SEBT_OK) {
        oracle_diverge(d, s, p, field, -1, 0, (double)c->st, NAN,
                       "the candidate's %s: %s), though it ran with trades recorded: %s", failed,
                       sebt_status_name(c->st), c->err.msg);
        return false;
    }
    return oracle_metrics_only_agree(&cand->contract, s, p, &k->trades.r[i], &c->r[i], run,
                                     "with trades recorded, which agreed with the reference", d);
}

/* Combo i's judgement past the reference's (compare_one's verdict that
 * it agrees, with ref the reference's result): the metrics-only and the
 * tallied calls, then the analysis columns. rep counts the combos whose
 * columns were compared. */
static bool later_calls_agree(const sebt_backend *cand, const sebt_series *s, const sebt_params *p, size_t i,
                              const cand_calls *k, const sebt_result *ref, sebt_oracle_report *rep,
                              sebt_divergence *d)
{
    if (!later_call_agrees(cand, s, p, i, k, &k->metrics, "metrics-only run_batch error",
                           "run_batch failed metrics-only (want_trades off",
                           "run metrics-only (want_trades off, the path a sweep takes)", d))
        return false;
    if (!k->tally_fn)
        return true;
    if (!later_call_agrees(cand, s, p, i, k, &k->tallied, "tallied run_batch error",
                           "tallied batch failed (metrics only with the analysis tally",
                           "run tallied (metrics only with the analysis tally, the path sweep --analysis takes)", d))
        return false;
    rep->analysis_compared++;
    return analysis_agree(&cand->contract, s, p, ref, &k->tallied.r[i], &k->tallied.tally[i], d);
}

/* The candidate's refusal of a batch the reference accepts (every combo
 * and the series, checked before it ran): each combo diverges. */
static void batch_refused(const sebt_series *s, const sebt_params *combos, size_t n, const cand_call *c,
                          sebt_oracle_report *rep)
{
    rep->combos_checked = n;
    rep->combos_diverged = n;
    if (n) {
        sebt_divergence *d = &rep->details[rep->n_details++];
        oracle_diverge(d, s, &combos[0], "run_batch error", -1, 0, (double)c->st, NAN,
                       "the candidate's run_batch failed (%s): %s", sebt_status_name(c->st), c->err.msg);
        d->combo = 0;
    }
}

/* Combo i: the candidate's features and result with trades against the
 * reference (compare_one), then its later calls. */
static sebt_status judge_combo(const sebt_backend *cand, const sebt_series *s, const sebt_params *p, size_t i,
                               const cand_calls *k, sebt_features *cf, sebt_oracle_report *rep, bool *diverged,
                               sebt_divergence *d, sebt_error *err)
{
    *diverged = false;
    sebt_error cerr = { 0 };
    sebt_status cst = cand->features(cand, s, p, cf, &cerr);
    if (cannot_judge(cst)) {
        if (err)
            *err = cerr;
        return cst;
    }
    if (cst) {
        *diverged = true;
        oracle_diverge(d, s, p, "features error", -1, 0, (double)cst, NAN,
                       "the candidate's features failed (%s): %s", sebt_status_name(cst), cerr.msg);
        return SEBT_OK;
    }
    oracle_tally tally = { 0, 0 };
    sebt_result ref = { 0 };
    sebt_status st = compare_one(&cand->contract, s, p, cf, &k->trades.r[i], diverged, d, &tally, &ref, err);
    rep->ties += (size_t)tally.ties;
    rep->decisions += tally.decisions;
    if (st) {
        char msg[SEBT_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        st = sebt_fail(err, st, "combo %zu: %s", i, msg);
    } else if (!*diverged) {
        *diverged = !later_calls_agree(cand, s, p, i, k, &ref, rep, d);
    }
    sebt_result_free(&ref);
    return st;
}

/* The loop behind sebt_oracle_check and oracle_check_case. */
static sebt_status run_check(const sebt_backend *cand, const sebt_series *s,
                             const sebt_params *combos, size_t n, const sebt_oracle_opts *opts,
                             sebt_oracle_report *rep, sebt_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->analysis_from_walk = sebt_backend_tally_batch(cand) != NULL;
    sebt_status st = sebt_series_check(s, err);
    if (st)
        return st;
    for (size_t i = 0; i < n; i++) {
        st = sebt_params_validate(&combos[i], err);
        if (st) {
            char msg[SEBT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            return sebt_fail(err, st, "combo %zu: %s", i, msg);
        }
    }
    cand_calls k;
    st = cand_calls_run(cand, s, combos, n, opts, &rep->stats, &k, err);
    if (st == SEBT_OK && k.trades.st != SEBT_OK) {
        batch_refused(s, combos, n, &k.trades, rep);
        cand_calls_free(&k, n);
        return SEBT_OK;
    }
    sebt_features cf;
    if (st == SEBT_OK)
        st = sebt_features_alloc(&cf, s->n, err);
    else
        memset(&cf, 0, sizeof cf);
    for (size_t i = 0; st == SEBT_OK && i < n; i++) {
        sebt_divergence d;
        bool diverged = false;
        st = judge_combo(cand, s, &combos[i], i, &k, &cf, rep, &diverged, &d, err);
        if (st)
            break;
        rep->combos_checked++;
        if (diverged) {
            d.combo = i;
            rep->combos_diverged++;
            if (rep->n_details < sizeof rep->details / sizeof rep->details[0])
                rep->details[rep->n_details++] = d;
        }
        if (opts->progress)
            opts->progress(opts->progress_user, i + 1, n);
        if (diverged && opts->stop_first)
            break;
    }
    sebt_features_free(&cf);
    cand_calls_free(&k, n);
    return st;
}

sebt_status sebt_oracle_check(const sebt_backend *candidate, const sebt_series *s,
                              const sebt_params *combos, size_t n_combos,
                              const sebt_oracle_opts *opts, sebt_oracle_report *report,
                              sebt_error *err)
{
    sebt_oracle_opts none = { 0 };
    return run_check(candidate, s, combos, n_combos, opts ? opts : &none, report, err);
}

sebt_status oracle_check_case(const sebt_backend *candidate, const sebt_series *s,
                              const sebt_params *p, size_t n_combos, const oracle_case_opts *co,
                              bool *diverged, sebt_divergence *div, oracle_tally *tally,
                              size_t *diverged_combo, sebt_error *err)
{
    sebt_oracle_report rep;
    sebt_oracle_opts o = { .threads = co && co->threads > 0 ? co->threads : 1,
                           .memory_budget = co ? co->memory_budget : 0, .stop_first = true };
    sebt_status st = run_check(candidate, s, p, n_combos, &o, &rep, err);
    *diverged = st == SEBT_OK && rep.combos_diverged > 0;
    if (co && co->stats)
        *co->stats = rep.stats;
    if (tally) {
        tally->ties += rep.ties;
        tally->decisions += rep.decisions;
    }
    if (*diverged) {
        if (div)
            *div = rep.details[0];
        if (diverged_combo)
            *diverged_combo = rep.details[0].combo;
    }
    return st;
}

/* ---- reports ----------------------------------------------------------- */

/* The ISO form `sebt run` writes (2021-01-01T00:30:00Z, with .mmm only
 * when the time has milliseconds), so a time can be searched for as is. */
static void format_ts(int64_t ms, char *buf, size_t size)
{
    int64_t rem = ms % 1000;
    time_t secs = (time_t)(ms / 1000 - (rem < 0));
    if (rem < 0)
        rem += 1000;
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, size, "?");
        return;
    }
    char date[40];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    if (rem)
        snprintf(buf, size, "%s.%03dZ", date, (int)rem);
    else
        snprintf(buf, size, "%sZ", date);
}

/* An exit divergence carries SPEC §6 outcomes (sebt_exit_outcome_name) as its
 * values: a person reads them by name. */
static bool is_exit_divergence(const sebt_divergence *d)
{
    return strcmp(d->what, "exit") == 0 || strcmp(d->what, "exit reason") == 0;
}

static void fmt_outcome(double v, char *buf, size_t size)
{
    const char *name = sebt_exit_outcome_name(v);
    if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "%g (no exit reason)", v);
}

static size_t params_line(const sebt_params *p, char *buf, size_t size)
{
    size_t used = 0;
    for (int i = 0; i < SEBT_N_PARAMS && used < size; i++) {
        char v[64];
        sebt_params_format(p, i, v, sizeof v);
        if (sebt_param_table[i].type == SEBT_PARAM_DOUBLE) {
            /* The shortest form that reads back: 0.6, not 0.59999999999999998. */
            double x = sebt_params_get_double(p, i);
            for (int digits = 1; digits <= 17; digits++) {
                snprintf(v, sizeof v, "%.*g", digits, x);
                bool exp_form = strchr(v, 'e') != NULL && fabs(x) >= 1e-4 && fabs(x) < 1e15;
                if (strtod(v, NULL) == x && !exp_form)
                    break;
            }
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", i ? " " : "",
                                 sebt_param_table[i].name, v);
    }
    return used;
}

static void fmt_num(double v, char *buf, size_t size)
{
    char num[SEBT_DOUBLE_CHARS];
    sebt_format_double(v, num);
    snprintf(buf, size, "%s", num);
}

void sebt_divergence_text(const sebt_divergence *d, char *buf, size_t size)
{
    char params[1024], when[64] = "", a[32], b[32], m[32];
    params_line(&d->params, params, sizeof params);
    if (d->bar >= 0)
        format_ts(d->ts, when, sizeof when);
    if (is_exit_divergence(d)) {
        fmt_outcome(d->ref_value, a, sizeof a);
        fmt_outcome(d->cand_value, b, sizeof b);
    } else {
        fmt_num(d->ref_value, a, sizeof a);
        fmt_num(d->cand_value, b, sizeof b);
    }
    fmt_num(d->margin, m, sizeof m);
    int used;
    if (d->bar >= 0)
        used = snprintf(buf, size, "combo %zu: %s differs at bar %lld (%s, ts %lld)\n", d->combo,
                        d->what, (long long)d->bar, when, (long long)d->ts);
    else
        used = snprintf(buf, size, "combo %zu: %s differs\n", d->combo, d->what);
    if (used < 0 || (size_t)used >= size)
        return;
    /* A margin exists only for a decision (SPEC §8); elsewhere "nan" would read as a value. */
    char margin[64] = "";
    if (!isnan(d->margin))
        snprintf(margin, sizeof margin, "   reference margin: %s", m);
    snprintf(buf + used, size - (size_t)used, "  reference: %s   candidate: %s%s\n  %s\n  params: %s\n", a, b,
             margin, d->detail, params);
}
