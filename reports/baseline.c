#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sebt/sebt.h"

/* The gated pairs: each backend against the one it must beat. */
static const struct {
    const char *fast;
    const char *slow;
} pairs[] = {
    { "fast_cpu", "reference" },
    { "cuda", "fast_cpu" },
};
#define N_PAIRS (sizeof pairs / sizeof pairs[0])

/* Groups where both backends run the same work; thread scaling is one
 * backend against itself and is shown in the report instead. */
static bool gated_group(const char *group)
{
    return strcmp(group, "sweep_bars") == 0 || strcmp(group, "sweep_combos") == 0 ||
           strcmp(group, "micro_features") == 0 || strcmp(group, "micro_backtest") == 0;
}

typedef struct {
    bool present;      /* both backends ran this work in the run */
    bool ok;           /* both were timed */
    bool fast_parity_failed;
    double ratio;      /* slow seconds / fast seconds */
} pair_ratio;

static pair_ratio ratio_in(const sebt_bench_set *set, const sebt_bench_run *like, const char *fast,
                           const char *slow)
{
    pair_ratio pr = { false, false, false, NAN };
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
    if (f->status == SEBT_RUN_OK && s->status == SEBT_RUN_OK && f->seconds > 0) {
        pr.ok = true;
        pr.ratio = s->seconds / f->seconds;
    }
    return pr;
}

static void describe(const sebt_bench_run *r, const char *fast, const char *slow, char *buf, size_t size)
{
    snprintf(buf, size, "%s bars:%lld combos:%lld threads:%d: %s/%s", r->group, r->bars, r->combos,
             r->threads, fast, slow);
}

static bool already(const sebt_baseline *b, const char *what)
{
    for (size_t i = 0; i < b->n_ratios; i++)
        if (strcmp(b->ratios[i].what, what) == 0)
            return true;
    return false;
}

static void add_pair_rows(const sebt_bench_set *old_set, const sebt_bench_set *new_set,
                          const sebt_bench_set *walk, double threshold_pct, sebt_baseline *b)
{
    for (size_t p = 0; p < N_PAIRS; p++) {
        for (size_t i = 0; i < walk->n_runs; i++) {
            const sebt_bench_run *r = &walk->runs[i];
            if (strcmp(r->backend, pairs[p].fast) != 0 || !gated_group(r->group))
                continue;
            sebt_ratio_row row;
            memset(&row, 0, sizeof row);
            describe(r, pairs[p].fast, pairs[p].slow, row.what, sizeof row.what);
            if (already(b, row.what))
                continue;
            pair_ratio o = ratio_in(old_set, r, pairs[p].fast, pairs[p].slow);
            pair_ratio n = ratio_in(new_set, r, pairs[p].fast, pairs[p].slow);
            if (!o.present && !n.present)
                continue;
            row.old_ratio = o.ratio;
            row.new_ratio = n.ratio;
            row.change_pct = NAN;
            if (n.fast_parity_failed && !o.fast_parity_failed) {
                row.flagged = true;
                snprintf(row.note, sizeof row.note, "%s fails parity in the new run", pairs[p].fast);
            } else if (!n.present) {
                snprintf(row.note, sizeof row.note, "not in the new run");
            } else if (!o.present) {
                snprintf(row.note, sizeof row.note, "not in the old run");
            } else if (o.ok && n.ok) {
                row.change_pct = 100.0 * (n.ratio / o.ratio - 1.0);
                b->n_compared++;
                if (row.change_pct < -threshold_pct) {
                    row.flagged = true;
                    snprintf(row.note, sizeof row.note, "REGRESSION: %s lost %.0f%% of its lead",
                             pairs[p].fast, -row.change_pct);
                }
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

sebt_status sebt_baseline_compare(const sebt_bench_set *old_set, const sebt_bench_set *new_set,
                                  double threshold_pct, sebt_baseline *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(threshold_pct >= 0) || !isfinite(threshold_pct))
        return sebt_fail(err, SEBT_ERR_USAGE, "threshold must be a percentage >= 0, got %g", threshold_pct);
    out->threshold_pct = threshold_pct;
    size_t cap = N_PAIRS * (old_set->n_runs + new_set->n_runs) + 1;
    out->ratios = calloc(cap, sizeof *out->ratios);
    out->times = calloc(new_set->n_runs + 1, sizeof *out->times);
    if (!out->ratios || !out->times) {
        sebt_baseline_free(out);
        return sebt_fail(err, SEBT_ERR_NOMEM, "baseline: out of memory");
    }
    add_pair_rows(old_set, new_set, new_set, threshold_pct, out);
    add_pair_rows(old_set, new_set, old_set, threshold_pct, out);

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
