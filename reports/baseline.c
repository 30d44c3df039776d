/* The baseline gate: the within-run ratios of two runs, compared over their
 * repetitions with a rank test and a minimum effect size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_internal.h"
#include "sebt/sebt.h"

/* The gated pairs: each backend against the one it must beat, on work both
 * ran the same way. fast_cpu and the reference are compared on one thread
 * each, in CPU time: on a shared machine another process taking a core
 * stretches wall time and starves a multi-threaded sweep, but leaves the
 * CPU time of one thread nearly alone. Multi-threaded sweeps and the peer
 * are shown in the report, not gated. cuda runs on a device: wall time. */
static const struct {
    const char *fast;
    const char *slow;
    bool cpu_time;
} pairs[] = {
    { "fast_cpu", "reference", true },
    { "cuda", "fast_cpu", false },
};
#define N_PAIRS (sizeof pairs / sizeof pairs[0])

static bool gated_group(size_t pair, const char *group)
{
    if (pairs[pair].cpu_time)
        return strcmp(group, "pair") == 0 || strcmp(group, "micro_features") == 0 ||
               strcmp(group, "micro_backtest") == 0;
    return strcmp(group, "sweep_bars") == 0 || strcmp(group, "sweep_combos") == 0;
}

/* ---- Mann-Whitney U ------------------------------------------------------ */

/* The number of arrangements of m x's and n y's with U = u, for every u,
 * by the recursion f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u). */
static double *u_counts(size_t m, size_t n)
{
    size_t umax = m * n;
    double *prev = calloc((n + 1) * (umax + 1), sizeof *prev);
    double *cur = calloc((n + 1) * (umax + 1), sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NULL;
    }
#define AT(a, j, u) (a)[(j) * (umax + 1) + (u)]
    for (size_t j = 0; j <= n; j++) /* m = 0: U = 0 in one way */
        AT(prev, j, 0) = 1;
    for (size_t i = 1; i <= m; i++) {
        memset(cur, 0, (n + 1) * (umax + 1) * sizeof *cur);
        AT(cur, 0, 0) = 1;
        for (size_t j = 1; j <= n; j++)
            for (size_t u = 0; u <= i * j; u++)
                AT(cur, j, u) = (u >= j ? AT(prev, j, u - j) : 0) + AT(cur, j - 1, u);
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double *out = malloc((umax + 1) * sizeof *out);
    if (out)
        for (size_t u = 0; u <= umax; u++)
            out[u] = AT(prev, n, u);
#undef AT
    free(prev);
    free(cur);
    return out;
}

double sebt_mann_whitney_p(const double *x, size_t nx, const double *y, size_t ny)
{
    if (nx == 0 || ny == 0)
        return NAN;
    size_t n = nx + ny;
    double *all = malloc(n * sizeof *all);
    double *rank = malloc(n * sizeof *rank);
    if (!all || !rank) {
        free(all);
        free(rank);
        return NAN;
    }
    memcpy(all, x, nx * sizeof *x);
    memcpy(all + nx, y, ny * sizeof *y);
    qsort(all, n, sizeof *all, sebt_report_cmp_double);
    /* Average ranks; the tie term for the variance. */
    double tie_term = 0;
    bool ties = false;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && all[j + 1] == all[i])
            j++;
        double t = (double)(j - i + 1);
        if (t > 1) {
            ties = true;
            tie_term += t * t * t - t;
        }
        for (size_t k = i; k <= j; k++)
            rank[k] = 0.5 * (double)(i + j) + 1;
        i = j + 1;
    }
    double r1 = 0;
    for (size_t i = 0; i < nx; i++) {
        /* the rank of x[i]: where it sits among the sorted values */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (all[mid] < x[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        r1 += rank[lo];
    }
    free(all);
    free(rank);
    double u1 = r1 - (double)nx * (double)(nx + 1) / 2;
    double mu = (double)nx * (double)ny / 2;
    double p;
    if (!ties && nx <= 30 && ny <= 30) {
        double *c = u_counts(nx, ny);
        if (!c)
            return NAN;
        size_t umax = nx * ny;
        double total = 0, tail = 0;
        double u_lo = u1 < (double)umax - u1 ? u1 : (double)umax - u1;
        for (size_t u = 0; u <= umax; u++) {
            total += c[u];
            if ((double)u <= u_lo + 1e-9)
                tail += c[u];
        }
        free(c);
        p = 2 * tail / total;
    } else {
        double var = (double)nx * (double)ny / 12 * ((double)(n + 1) - tie_term / ((double)n * (double)(n - 1)));
        if (!(var > 0))
            return 1.0;
        double z = (fabs(u1 - mu) - 0.5) / sqrt(var);
        p = z <= 0 ? 1.0 : erfc(z / sqrt(2.0));
    }
    return p > 1 ? 1 : p;
}

/* The smallest two-sided p the exact test can give with m and n samples:
 * both sides wholly apart. */
static double best_p(size_t m, size_t n)
{
    double comb = 1; /* C(m+n, m) */
    for (size_t k = 1; k <= m; k++)
        comb = comb * (double)(n + k) / (double)k;
    return 2 / comb;
}

/* ---- ratios within one run -------------------------------------------------- */

typedef struct {
    bool present;      /* both backends ran this work in the run */
    bool ok;           /* both were timed */
    bool fast_parity_failed;
    size_t n;          /* repetitions paired */
    double ratio[SEBT_BENCH_MAX_REPS];
    double med, lo, hi;
} pair_ratio;

static double median_of(const double *v, size_t n)
{
    double tmp[SEBT_BENCH_MAX_REPS];
    memcpy(tmp, v, n * sizeof *v);
    return sebt_report_median(tmp, n);
}

static pair_ratio ratio_in(const sebt_bench_set *set, const sebt_bench_run *like, size_t pair)
{
    pair_ratio pr;
    memset(&pr, 0, sizeof pr);
    pr.med = pr.lo = pr.hi = NAN;
    const char *fast = pairs[pair].fast, *slow = pairs[pair].slow;
    const sebt_bench_run *f = sebt_bench_find(set, like->group, fast, like->bars, like->combos, like->threads);
    const sebt_bench_run *s = sebt_bench_find(set, like->group, slow, like->bars, like->combos, like->threads);
    /* A parity failure counts even where the slower backend did not run
     * the same work: the faster one has no result to trust. */
    if (f && f->status == SEBT_RUN_PARITY_FAILED) {
        pr.present = true;
        pr.fast_parity_failed = true;
        return pr;
    }
    if (!f || !s)
        return pr;
    pr.present = true;
    if (f->status != SEBT_RUN_OK || s->status != SEBT_RUN_OK)
        return pr;
    /* The i-th repetition of each side makes the i-th ratio. Repetitions
     * are interleaved at random through the run, so a burst of load lands
     * on either side alike. */
    size_t n = f->n_reps < s->n_reps ? f->n_reps : s->n_reps;
    bool cpu = pairs[pair].cpu_time;
    for (size_t i = 0; i < n; i++) {
        double a = cpu ? s->rep_cpu_seconds[i] : s->rep_seconds[i];
        double b = cpu ? f->rep_cpu_seconds[i] : f->rep_seconds[i];
        if (isfinite(a) && isfinite(b) && a > 0 && b > 0)
            pr.ratio[pr.n++] = a / b;
    }
    if (pr.n == 0)
        return pr;
    pr.ok = true;
    pr.med = median_of(pr.ratio, pr.n);
    pr.lo = pr.hi = pr.ratio[0];
    for (size_t i = 1; i < pr.n; i++) {
        pr.lo = pr.ratio[i] < pr.lo ? pr.ratio[i] : pr.lo;
        pr.hi = pr.ratio[i] > pr.hi ? pr.ratio[i] : pr.hi;
    }
    return pr;
}

static void describe(const sebt_bench_run *r, size_t pair, char *buf, size_t size)
{
    snprintf(buf, size, "%s bars:%lld combos:%lld threads:%d: %s/%s", r->group, r->bars, r->combos,
             r->threads, pairs[pair].fast, pairs[pair].slow);
}

static bool already(const sebt_baseline *b, const char *what)
{
    for (size_t i = 0; i < b->n_ratios; i++)
        if (strcmp(b->ratios[i].what, what) == 0)
            return true;
    return false;
}

sebt_verdict sebt_ratio_judge(const double *old_r, size_t old_n, const double *new_r, size_t new_n,
                              double threshold_pct, double alpha, const char *fast, sebt_ratio_row *row)
{
    if (old_n == 0 || new_n == 0 || old_n > SEBT_BENCH_MAX_REPS || new_n > SEBT_BENCH_MAX_REPS) {
        row->change_pct = row->p_value = NAN;
        row->verdict = SEBT_VERDICT_NOT_COMPARED;
        snprintf(row->note, sizeof row->note, "not compared: %zu and %zu repetitions", old_n, new_n);
        return row->verdict;
    }
    double old_med = median_of(old_r, old_n), new_med = median_of(new_r, new_n);
    row->change_pct = 100.0 * (new_med / old_med - 1.0);
    row->p_value = sebt_mann_whitney_p(old_r, old_n, new_r, new_n);
    bool drop = row->change_pct < -threshold_pct;
    bool gain = row->change_pct > threshold_pct;
    bool significant = row->p_value < alpha;
    /* A regression must show in every repetition, not only in the median:
     * a burst of load that slows fast_cpu's half of a few repetitions moves
     * the median and can move the rank test, never all of them at once. */
    double bar = old_med * (1.0 - threshold_pct / 100.0);
    size_t above = 0;
    for (size_t i = 0; i < new_n; i++)
        above += !(new_r[i] < bar);
    if (!drop && !gain) {
        row->verdict = SEBT_VERDICT_OK;
        snprintf(row->note, sizeof row->note, "within %g%%", threshold_pct);
    } else if (drop && significant && above == 0) {
        row->verdict = SEBT_VERDICT_REGRESSION;
        snprintf(row->note, sizeof row->note, "REGRESSION: %s lost %.0f%% of its lead (p = %.3g)", fast,
                 -row->change_pct, row->p_value);
    } else if (drop && significant) {
        row->verdict = SEBT_VERDICT_INCONCLUSIVE;
        snprintf(row->note, sizeof row->note,
                 "INCONCLUSIVE: a drop of %.0f%% (p = %.3g) that %zu of %zu repetitions do not show "
                 "(ratio at or above %.3g): unstable",
                 -row->change_pct, row->p_value, above, new_n, bar);
    } else if (gain && significant) {
        row->verdict = SEBT_VERDICT_IMPROVED;
        snprintf(row->note, sizeof row->note, "faster: %s gained %.0f%% (p = %.3g)", fast, row->change_pct,
                 row->p_value);
    } else if (drop) {
        row->verdict = SEBT_VERDICT_INCONCLUSIVE;
        if (best_p(old_n, new_n) >= alpha)
            snprintf(row->note, sizeof row->note,
                     "INCONCLUSIVE: %zu and %zu repetitions cannot reach p < %g (5 a side can)", old_n, new_n,
                     alpha);
        else
            snprintf(row->note, sizeof row->note,
                     "INCONCLUSIVE: a drop of %.0f%% the repetitions do not confirm (p = %.3g): too noisy",
                     -row->change_pct, row->p_value);
    } else {
        row->verdict = SEBT_VERDICT_OK;
        snprintf(row->note, sizeof row->note, "a gain the repetitions do not confirm (p = %.3g)", row->p_value);
    }
    return row->verdict;
}

static void add_pair_rows(const sebt_bench_set *old_set, const sebt_bench_set *new_set,
                          const sebt_bench_set *walk, double threshold_pct, sebt_baseline *b)
{
    for (size_t p = 0; p < N_PAIRS; p++) {
        for (size_t i = 0; i < walk->n_runs; i++) {
            const sebt_bench_run *r = &walk->runs[i];
            if (strcmp(r->backend, pairs[p].fast) != 0 || !gated_group(p, r->group))
                continue;
            sebt_ratio_row row;
            memset(&row, 0, sizeof row);
            describe(r, p, row.what, sizeof row.what);
            if (already(b, row.what))
                continue;
            pair_ratio o = ratio_in(old_set, r, p);
            pair_ratio n = ratio_in(new_set, r, p);
            if (!o.present && !n.present)
                continue;
            row.measure = pairs[p].cpu_time ? "cpu" : "real";
            row.old_ratio = o.med;
            row.old_min = o.lo;
            row.old_max = o.hi;
            row.new_ratio = n.med;
            row.new_min = n.lo;
            row.new_max = n.hi;
            row.old_n = o.n;
            row.new_n = n.n;
            row.change_pct = NAN;
            row.p_value = NAN;
            row.verdict = SEBT_VERDICT_NOT_COMPARED;
            if (n.fast_parity_failed && !o.fast_parity_failed) {
                row.flagged = true;
                row.verdict = SEBT_VERDICT_REGRESSION;
                snprintf(row.note, sizeof row.note, "%s fails parity in the new run", pairs[p].fast);
            } else if (!n.present) {
                snprintf(row.note, sizeof row.note, "not in the new run");
            } else if (!o.present) {
                snprintf(row.note, sizeof row.note, "not in the old run");
            } else if (o.ok && n.ok) {
                b->n_compared++;
                sebt_ratio_judge(o.ratio, o.n, n.ratio, n.n, threshold_pct, b->alpha, pairs[p].fast, &row);
                row.flagged = row.verdict == SEBT_VERDICT_REGRESSION;
                b->n_inconclusive += row.verdict == SEBT_VERDICT_INCONCLUSIVE;
            } else {
                snprintf(row.note, sizeof row.note, "not timed in %s run",
                         !o.ok && !n.ok ? "either" : !o.ok ? "the old" : "the new");
            }
            if (row.flagged)
                b->n_flagged++;
            b->ratios[b->n_ratios++] = row;
        }
    }
}

/* fast_cpu over the numba peer (wall time, sebt_headline_of): not gated,
 * since a peer's wall time on a shared machine is noise the rank test is
 * not given repetitions for, but a drop beyond the threshold is flagged so
 * that it does not sit unremarked in a table. */
static void add_peer_rows(const sebt_bench_set *old_set, const sebt_bench_set *new_set, double threshold_pct,
                          sebt_baseline *b)
{
    sebt_headline o, n;
    sebt_headline_of(old_set, &o);
    sebt_headline_of(new_set, &n);
    for (int one = 1; one >= 0; one--) {
        double ov = one ? o.vs_numba_1t : o.vs_numba, nv = one ? n.vs_numba_1t : n.vs_numba;
        long long oc = one ? o.numba_1t_combos : o.numba_combos, nc = one ? n.numba_1t_combos : n.numba_combos;
        if (!isfinite(ov) && !isfinite(nv))
            continue;
        sebt_ratio_row *row = &b->ratios[b->n_ratios++];
        memset(row, 0, sizeof *row);
        snprintf(row->what, sizeof row->what, "peer bars:%lld combos:%lld threads:%s: fast_cpu/numba (not gated)",
                 isfinite(nv) ? n.numba_bars : o.numba_bars, isfinite(nv) ? nc : oc, one ? "1" : "all");
        row->measure = "real";
        row->old_ratio = ov;
        row->old_min = one ? o.vs_numba_1t_min : o.vs_numba_min;
        row->old_max = one ? o.vs_numba_1t_max : o.vs_numba_max;
        row->new_ratio = nv;
        row->new_min = one ? n.vs_numba_1t_min : n.vs_numba_min;
        row->new_max = one ? n.vs_numba_1t_max : n.vs_numba_max;
        row->p_value = NAN;
        row->change_pct = NAN;
        row->verdict = SEBT_VERDICT_NOT_COMPARED;
        if (!isfinite(ov) || !isfinite(nv) || oc != nc) {
            snprintf(row->note, sizeof row->note, "not gated; %s", !isfinite(ov) ? "not in the old run"
                     : !isfinite(nv) ? "not in the new run" : "the two runs timed different sweeps");
            continue;
        }
        row->change_pct = 100.0 * (nv / ov - 1.0);
        if (row->change_pct < -threshold_pct) {
            row->dropped = true;
            b->n_dropped++;
            snprintf(row->note, sizeof row->note, "DROP: fast_cpu lost %.0f%% of its lead over numba (not gated: "
                     "wall time against a peer; look before trusting it)", -row->change_pct);
        } else {
            snprintf(row->note, sizeof row->note, "not gated; within %g%%", threshold_pct);
            if (row->change_pct > threshold_pct)
                snprintf(row->note, sizeof row->note, "not gated; fast_cpu gained %.0f%%", row->change_pct);
        }
    }
}

sebt_status sebt_baseline_compare(const sebt_bench_set *old_set, const sebt_bench_set *new_set,
                                  double threshold_pct, sebt_baseline *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(threshold_pct >= 0) || !isfinite(threshold_pct))
        return sebt_fail(err, SEBT_ERR_USAGE, "threshold must be a percentage >= 0, got %g", threshold_pct);
    out->threshold_pct = threshold_pct;
    out->alpha = SEBT_BASELINE_ALPHA;
    size_t cap = (N_PAIRS + 1) * (old_set->n_runs + new_set->n_runs) + 3;
    out->ratios = calloc(cap, sizeof *out->ratios);
    out->times = calloc(new_set->n_runs + 1, sizeof *out->times);
    if (!out->ratios || !out->times) {
        sebt_baseline_free(out);
        return sebt_fail(err, SEBT_ERR_NOMEM, "baseline: out of memory");
    }
    add_pair_rows(old_set, new_set, new_set, threshold_pct, out);
    add_pair_rows(old_set, new_set, old_set, threshold_pct, out);
    for (size_t i = 0; i < out->n_ratios; i++)
        out->ratios[i].gated = true;
    add_peer_rows(old_set, new_set, threshold_pct, out);
    /* A backend that fails parity in the new run where it passed before is
     * a regression whatever the group: it has no result to time. */
    for (size_t i = 0; i < new_set->n_runs; i++) {
        const sebt_bench_run *n = &new_set->runs[i];
        if (n->status != SEBT_RUN_PARITY_FAILED)
            continue;
        const sebt_bench_run *o = sebt_bench_find(old_set, n->group, n->backend, n->bars, n->combos, n->threads);
        if (o && o->status == SEBT_RUN_PARITY_FAILED)
            continue;
        sebt_ratio_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.what, sizeof row.what, "%s bars:%lld combos:%lld threads:%d: %s", n->group, n->bars,
                 n->combos, n->threads, n->backend);
        if (already(out, row.what))
            continue;
        row.measure = "";
        row.old_ratio = row.new_ratio = row.old_min = row.old_max = row.new_min = row.new_max = NAN;
        row.change_pct = row.p_value = NAN;
        row.verdict = SEBT_VERDICT_REGRESSION;
        row.flagged = true;
        row.gated = true;
        snprintf(row.note, sizeof row.note, "%s fails parity in the new run", n->backend);
        out->ratios[out->n_ratios++] = row;
        out->n_flagged++;
    }

    for (size_t i = 0; i < new_set->n_runs; i++) {
        const sebt_bench_run *n = &new_set->runs[i];
        for (size_t j = 0; j < old_set->n_runs; j++) {
            const sebt_bench_run *o = &old_set->runs[j];
            if (strcmp(o->name, n->name) != 0)
                continue;
            if (o->status == SEBT_RUN_OK && n->status == SEBT_RUN_OK && o->seconds > 0) {
                sebt_time_row *t = &out->times[out->n_times++];
                snprintf(t->name, sizeof t->name, "%s", n->name);
                t->old_seconds = o->seconds;
                t->new_seconds = n->seconds;
                t->ratio = n->seconds / o->seconds;
            }
            break;
        }
    }
    return SEBT_OK;
}

void sebt_baseline_free(sebt_baseline *b)
{
    free(b->ratios);
    free(b->times);
    memset(b, 0, sizeof *b);
}
