/* A split and a walk-forward on fast_cpu, worked out again from the
 * reference run on sub-series cut by hand: every combo's in-sample and
 * out-of-sample metrics, every window's pick (the best under the condition,
 * ties to the lower index), its test trades, and the chained metrics (the
 * oracle's SPEC §7). sebt_walkforward_check agrees, and finds a change. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/oos.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"

#define N_COMBOS 12

static sebt_series series;
static sebt_params combos[N_COMBOS];
static const sebt_backend *fast, *ref;

static void setup(void)
{
    sebt_error err = { 0 };
    sebt_load_opts lo = { .fill_gaps = true };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz", &lo, &series, &err), SEBT_OK,
                 "%s", err.msg);
    for (int i = 0; i < N_COMBOS; i++) {
        sebt_params *p = &combos[i];
        *p = sebt_params_default();
        p->ema_fast = 8 << (i % 3);
        p->ema_slow = 96;
        p->z_window = 96;
        p->atr_window = 24;
        p->vol_z = (i / 3) % 2 ? 2.0 : 1.0;
        p->tr_z = 0.5;
        p->cloc_min = 0.5;
        p->reward_r = i / 6 ? 2.0 : 1.0;
        p->max_hold = 30;
    }
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(sebt_backend_get("reference", &ref, &err), SEBT_OK, "%s", err.msg);
}

static void teardown(void)
{
    sebt_series_free(&series);
}

TestSuite(oos_ref, .init = setup, .fini = teardown);

/* The reference's results of every combo on bars [from, to). */
static void ref_part(size_t from, size_t to, bool trades, sebt_result *out)
{
    sebt_series part;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_slice(&series, from, to - from, &part, &err), SEBT_OK);
    sebt_batch_opts bo = { .want_trades = trades };
    memset(out, 0, N_COMBOS * sizeof *out);
    cr_assert_eq(ref->run_batch(ref, &part, combos, N_COMBOS, &bo, out, &err), SEBT_OK, "%s", err.msg);
    sebt_series_free(&part);
}

static bool same_metrics_and_flags(const sebt_result *a, const sebt_result *b)
{
    return memcmp(&a->metrics, &b->metrics, sizeof a->metrics) == 0 && a->valid_bars == b->valid_bars &&
           a->open_at_end.open == b->open_at_end.open && a->n_trades == b->n_trades;
}

typedef struct {
    size_t windows;
    sebt_result is[N_COMBOS], oos[N_COMBOS];
} split_seen;

static int on_split(void *user, const sebt_split_window *w)
{
    split_seen *s = user;
    s->windows++;
    for (size_t i = 0; i < w->count; i++) {
        s->is[w->first + i] = w->in_sample[i];
        s->oos[w->first + i] = w->out_sample[i];
    }
    return 0;
}

Test(oos_ref, split_equals_the_reference_on_each_part)
{
    int64_t at = series.ts[0] + 20LL * 86400000;   /* 2019-01-21 00:00 */
    size_t cut = 20 * 1440;
    sebt_where *w;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_where("n >= 135 and not use_time == false", &w, &err), SEBT_OK, "%s", err.msg);
    split_seen seen;
    memset(&seen, 0, sizeof seen);
    sebt_split_opts o = { .combos = combos, .n_combos = N_COMBOS, .split_ts = at, .window = 5, .top = 3,
                          .metric = SEBT_METRIC_SHARPE, .where = w, .on_window = on_split, .user = &seen };
    sebt_split_result r;
    cr_assert_eq(sebt_split_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.cut, cut);
    cr_assert_eq(seen.windows, 3);   /* 5 + 5 + 2 */
    sebt_result is[N_COMBOS], oos[N_COMBOS];
    ref_part(0, cut, false, is);
    ref_part(cut, series.n, false, oos);
    size_t passing = 0, best = N_COMBOS;
    for (size_t i = 0; i < N_COMBOS; i++) {
        cr_assert(same_metrics_and_flags(&seen.is[i], &is[i]), "combo %zu in sample", i);
        cr_assert(same_metrics_and_flags(&seen.oos[i], &oos[i]), "combo %zu out of sample", i);
        if (is[i].metrics.n < 135)
            continue;
        passing++;
        if (best == N_COMBOS || is[i].metrics.sharpe > is[best].metrics.sharpe)
            best = i;
    }
    cr_assert(passing >= 3 && passing < N_COMBOS, "the condition should keep some combos, not all: %zu", passing);
    cr_assert_eq(r.passing, passing);
    cr_assert_eq(r.n_top, 3);
    cr_assert_eq(r.top[0].combo, best);
    cr_assert(memcmp(&r.top[0].out_sample.metrics, &oos[best].metrics, sizeof oos[best].metrics) == 0);
    for (size_t k = 1; k < r.n_top; k++)
        cr_assert(r.top[k - 1].in_sample.metrics.sharpe >= r.top[k].in_sample.metrics.sharpe);
    sebt_split_result_free(&r);
    sebt_where_free(w);
}

/* The best under "n >= 10" by sharpe on train, from the reference's results. */
static size_t pick_by_hand(const sebt_result *train)
{
    size_t best = N_COMBOS;
    for (size_t i = 0; i < N_COMBOS; i++)
        if (train[i].metrics.n >= 10 && (best == N_COMBOS || train[i].metrics.sharpe > train[best].metrics.sharpe))
            best = i;
    return best;
}

/* Window k's test trades by hand: the reference's run of the pick on the
 * test bars, its indices moved to the whole series'. */
static size_t check_window(const sebt_wf_window *x, size_t k, sebt_trade *chain, size_t n_chain)
{
    size_t train_to = 8000 + 6000 * k, test_to = train_to + 6000;
    cr_assert(x->train_from == 6000 * k && x->train_to == train_to && x->test_from == train_to &&
              x->test_to == test_to, "window %zu", k);
    sebt_result train[N_COMBOS], test[N_COMBOS];
    ref_part(x->train_from, train_to, false, train);
    size_t best = pick_by_hand(train);
    cr_assert_eq(x->picked, best < N_COMBOS, "window %zu", k);
    if (best == N_COMBOS)
        return n_chain;
    cr_assert_eq(x->combo, best, "window %zu", k);
    cr_assert(same_metrics_and_flags(&x->train, &train[best]), "window %zu train", k);
    ref_part(train_to, test_to, true, test);
    const sebt_result *t = &test[best];
    cr_assert(same_metrics_and_flags(&x->test, t), "window %zu test", k);
    for (size_t j = 0; j < t->n_trades; j++) {
        sebt_trade want = t->trades[j];
        want.signal_index += (int64_t)train_to;
        want.entry_index += (int64_t)train_to;
        want.exit_index += (int64_t)train_to;
        cr_assert(memcmp(&x->test.trades[j], &want, sizeof want) == 0, "window %zu trade %zu", k, j);
        chain[n_chain++] = want;
    }
    sebt_results_free(test, N_COMBOS);
    return n_chain;
}

Test(oos_ref, walkforward_equals_the_reference_by_hand)
{
    sebt_where *w;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_where("n >= 10", &w, &err), SEBT_OK, "%s", err.msg);
    sebt_wf_opts o = { .combos = combos, .n_combos = N_COMBOS, .train = 8000, .test = 6000,
                       .metric = SEBT_METRIC_SHARPE, .where = w, .window = 5, .sample = 4 };
    sebt_wf_result r;
    cr_assert_eq(sebt_walkforward_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.n_windows, (series.n - 8000) / 6000);
    static sebt_trade chain[20000];
    size_t n = 0, picked = 0;
    for (size_t k = 0; k < r.n_windows; k++) {
        n = check_window(&r.windows[k], k, chain, n);
        picked += r.windows[k].picked;
    }
    cr_assert(picked >= 2 && n >= 20, "too little to check: %zu picks, %zu trades", picked, n);
    cr_assert_eq(r.n_trades, n);
    cr_assert(memcmp(r.trades, chain, n * sizeof *chain) == 0);
    sebt_metrics want = sebt_oracle_metrics(chain, n);
    cr_assert(memcmp(&r.metrics, &want, sizeof want) == 0);

    size_t compared = 0;
    cr_assert_eq(sebt_walkforward_check(ref, &series, &r, &compared, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(compared, 2 * picked + 4 * r.n_windows);
    double keep = r.windows[0].sample_metrics[1].avg_r;
    r.windows[0].sample_metrics[1].avg_r = nextafter(keep, INFINITY);
    cr_assert_eq(sebt_walkforward_check(ref, &series, &r, &compared, &err), SEBT_ERR_INTERNAL);
    cr_assert(strstr(err.msg, "window 1: combo 3 on its train window: avg_r differs"), "%s", err.msg);
    r.windows[0].sample_metrics[1].avg_r = keep;
    for (size_t k = 0; k < r.n_windows; k++)
        if (r.windows[k].test.n_trades) {
            r.windows[k].test.trades[0].pnl = nextafter(r.windows[k].test.trades[0].pnl, INFINITY);
            break;
        }
    cr_assert_eq(sebt_walkforward_check(ref, &series, &r, &compared, &err), SEBT_ERR_INTERNAL);
    cr_assert(strstr(err.msg, "test window: a price, pnl or R differs"), "%s", err.msg);
    sebt_walkforward_free(&r);
    sebt_where_free(w);
}
