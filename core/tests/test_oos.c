/* Out-of-sample checks (core/oos.c, core/walkforward.c), worked by hand:
 * SPEC §7 over a trade list (and equal to the oracle's on random lists);
 * the cut of a series; the windows of a walk-forward in bars and in hours;
 * a twelve-bar series whose one trade crosses the split, on the reference
 * and on fast_cpu (the position stays in sample, out of sample starts flat);
 * the errors of a series too short. The same on real data against the
 * reference: test_oos_ref.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/oos.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"

static bool same_metrics(const sebt_metrics *a, const sebt_metrics *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

Test(oos, metrics_by_hand)
{
    sebt_trade t[4];
    memset(t, 0, sizeof t);
    const double pnl[] = { 2, -1, -3, 4 }, r[] = { 1, -0.5, -1.5, 2 };
    for (int i = 0; i < 4; i++) {
        t[i].pnl = pnl[i];
        t[i].r = r[i];
    }
    sebt_metrics m;
    sebt_trades_metrics(t, 4, &m);
    cr_assert_eq(m.n, 4);
    cr_assert_eq(m.win_rate, 0.5);
    cr_assert_eq(m.avg_r, 0.25);
    cr_assert_eq(m.total_pnl, 2.0);
    cr_assert_eq(m.max_dd, -4.0);   /* cumulative 2, 1, -2, 2: 4 below the peak of 2 */
    /* squared deviations .5625 + .5625 + 3.0625 + 3.0625 = 7.25, over n-1 = 3 */
    cr_assert_eq(m.sharpe, 0.25 / sqrt(7.25 / 3.0));
    sebt_trades_metrics(t, 1, &m);
    cr_assert(m.n == 1 && m.sharpe == 0.0 && m.max_dd == 0.0 && m.total_pnl == 2.0);
    sebt_trades_metrics(t, 0, &m);
    cr_assert(m.n == 0 && m.win_rate == 0.0 && m.avg_r == 0.0);
}

Test(oos, metrics_equal_the_oracle)
{
    sebt_rng g;
    sebt_rng_seed(&g, 7);
    sebt_trade t[200];
    memset(t, 0, sizeof t);
    for (size_t n = 0; n <= 200; n += 13) {
        for (size_t i = 0; i < n; i++) {
            t[i].pnl = (sebt_rng_unit(&g) - 0.45) * 100.0;
            t[i].r = t[i].pnl / (1.0 + 10.0 * sebt_rng_unit(&g));
        }
        sebt_metrics a, b = sebt_oracle_metrics(t, n);
        sebt_trades_metrics(t, n, &a);
        cr_assert(same_metrics(&a, &b), "%zu trades", n);
    }
}

/* n bars, one an hour from 0, flat prices: nothing trades. */
static void flat_series(sebt_series *s, size_t n)
{
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_alloc(s, n, &err), SEBT_OK);
    for (size_t t = 0; t < n; t++) {
        s->ts[t] = (int64_t)t * 3600000;
        s->open[t] = s->close[t] = 100;
        s->high[t] = 101;
        s->low[t] = 99;
        s->volume[t] = 1;
    }
    sebt_series_recount(s);
}

Test(oos, cut)
{
    sebt_series s;
    flat_series(&s, 10);
    cr_assert_eq(sebt_series_cut(&s, -5), 0);
    cr_assert_eq(sebt_series_cut(&s, 0), 0);
    cr_assert_eq(sebt_series_cut(&s, 1), 1);
    cr_assert_eq(sebt_series_cut(&s, 3 * 3600000), 3);
    cr_assert_eq(sebt_series_cut(&s, 9 * 3600000 + 1), 10);
    sebt_series_free(&s);
}

static const sebt_backend *backend(const char *name)
{
    const sebt_backend *b;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get(name, &b, &err), SEBT_OK, "%s", err.msg);
    return b;
}

/* 10 bars, train 4, test 2: windows [0,4)+[4,6), [2,6)+[6,8), [4,8)+[8,10);
 * the same in hours; none trades, so every combo ties at 0 and the first
 * wins, unless the condition asks for a trade. */
static void windows_by_hand(bool by_time, const char *where_text, bool picked)
{
    sebt_series s;
    flat_series(&s, 11);
    s.n = 10;   /* by time the last bar's hour ends at 10h: the third test span is whole */
    sebt_params c[3] = { sebt_params_default(), sebt_params_default(), sebt_params_default() };
    sebt_where *w = NULL;
    sebt_error err = { 0 };
    if (where_text)
        cr_assert_eq(sebt_sweep_where(where_text, &w, &err), SEBT_OK, "%s", err.msg);
    int64_t unit = by_time ? 3600000 : 1;
    sebt_wf_opts o = { .combos = c, .n_combos = 3, .train = 4 * unit, .test = 2 * unit, .by_time = by_time,
                       .metric = SEBT_METRIC_SHARPE, .where = w, .sample = 2 };
    sebt_wf_result r;
    cr_assert_eq(sebt_walkforward_run(backend("fast_cpu"), &s, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.n_windows, 3);
    for (size_t k = 0; k < 3; k++) {
        const sebt_wf_window *x = &r.windows[k];
        cr_assert(x->train_from == 2 * k && x->train_to == 2 * k + 4 && x->test_from == 2 * k + 4 &&
                  x->test_to == 2 * k + 6, "window %zu: [%zu,%zu) [%zu,%zu)", k, x->train_from, x->train_to,
                  x->test_from, x->test_to);
        cr_assert_eq(x->picked, picked);
        cr_assert_eq(x->passing, picked ? 3u : 0u);
        cr_assert_eq(x->combo, 0u);
        cr_assert_eq(x->test.n_trades, 0u);
    }
    cr_assert(r.n_trades == 0 && r.metrics.n == 0);
    cr_assert(r.n_sample == 2 && r.sample_ids[0] == 0 && r.sample_ids[1] == 1);
    sebt_walkforward_free(&r);
    sebt_where_free(w);
    s.n = 11;
    sebt_series_free(&s);
}

Test(oos, windows_in_bars) { windows_by_hand(false, NULL, true); }
Test(oos, windows_in_hours) { windows_by_hand(true, NULL, true); }
Test(oos, windows_none_passing) { windows_by_hand(false, "n >= 1", false); }

Test(oos, too_short_and_bad_split)
{
    sebt_series s;
    flat_series(&s, 5);
    sebt_params c = sebt_params_default();
    sebt_error err = { 0 };
    sebt_wf_opts o = { .combos = &c, .n_combos = 1, .train = 4, .test = 2, .metric = SEBT_METRIC_SHARPE };
    sebt_wf_result r;
    cr_assert_eq(sebt_walkforward_run(backend("fast_cpu"), &s, &o, &r, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "no whole train window"), "%s", err.msg);
    sebt_split_opts so = { .combos = &c, .n_combos = 1, .split_ts = 0 };
    sebt_split_result sr;
    cr_assert_eq(sebt_split_run(backend("fast_cpu"), &s, &so, &sr, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "no in-sample bars"), "%s", err.msg);
    so.split_ts = 5 * 3600000;
    cr_assert_eq(sebt_split_run(backend("fast_cpu"), &s, &so, &sr, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "no out-of-sample bars"), "%s", err.msg);
    sebt_series_free(&s);
}

/* Twelve bars worked by hand. Bar 3 is the one spike (volume 10 -> 50, true
 * range 3 -> 6, close 98.4 near its high and under the slow EMA 98.415): a
 * signal, entry at bar 4's open 98, out by time at bar 7's close 98 (max_hold
 * 3). Bars 6-11 are all alike: no spike, no signal. */
static void spike_series(sebt_series *s)
{
    static const double bars[12][5] = {
        { 100, 101, 99, 100, 10 }, { 100, 101, 98, 99, 10 }, { 99, 100, 97, 98, 10 }, { 98, 99, 93, 98.4, 50 },
        { 98, 99, 97, 98, 10 },    { 98, 99, 97, 98, 10 },   { 98, 99, 97, 98, 10 }, { 98, 99, 97, 98, 10 },
        { 98, 99, 97, 98, 10 },    { 98, 99, 97, 98, 10 },   { 98, 99, 97, 98, 10 }, { 98, 99, 97, 98, 10 },
    };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_alloc(s, 12, &err), SEBT_OK);
    for (size_t t = 0; t < 12; t++) {
        s->ts[t] = (int64_t)t * 3600000;
        s->open[t] = bars[t][0];
        s->high[t] = bars[t][1];
        s->low[t] = bars[t][2];
        s->close[t] = bars[t][3];
        s->volume[t] = bars[t][4];
    }
    sebt_series_recount(s);
}

static sebt_params spike_params(void)
{
    sebt_params p = sebt_params_default();
    p.ema_fast = 1;
    p.ema_slow = 2;
    p.z_window = 2;
    p.atr_window = 1;
    p.vol_z = 0.5;
    p.tr_z = 0.5;
    p.use_tp = false;
    p.max_hold = 3;
    return p;
}

typedef struct {
    sebt_result is, oos;
} one_split;

static int keep_split(void *user, const sebt_split_window *w)
{
    one_split *k = user;
    k->is = w->in_sample[0];
    k->oos = w->out_sample[0];
    return 0;
}

/* The whole series trades once, across bar 6; split at bar 6 the position
 * is the in-sample part's open_at_end and the out-of-sample part starts flat. */
static void split_by_hand(const char *backend_name)
{
    sebt_series s;
    spike_series(&s);
    sebt_params p = spike_params();
    sebt_error err = { 0 };
    sebt_result whole = { 0 };
    sebt_batch_opts bo = { .want_trades = true };
    const sebt_backend *b = backend(backend_name);
    cr_assert_eq(sebt_backend_run(b, &s, &p, 1, &bo, &whole, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(whole.n_trades, 1);
    const sebt_trade *t = &whole.trades[0];
    cr_assert(t->signal_index == 3 && t->entry_index == 4 && t->exit_index == 7 && t->reason == SEBT_EXIT_TIME &&
              t->bars_held == 3);
    double fee = (98.0 + 98.0) * (5.0 + 5.0) / 10000.0;
    cr_assert_eq(t->pnl, 98.0 - 98.0 - fee);
    sebt_result_free(&whole);

    one_split k;
    memset(&k, 0, sizeof k);
    sebt_split_opts o = { .combos = &p, .n_combos = 1, .split_ts = 6 * 3600000, .on_window = keep_split, .user = &k };
    sebt_split_result r;
    cr_assert_eq(sebt_split_run(b, &s, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.cut, 6);
    cr_assert(k.is.metrics.n == 0 && k.is.valid_bars == 6 && k.is.open_at_end.open &&
              k.is.open_at_end.signal_index == 3 && k.is.open_at_end.entry_index == 4);
    cr_assert(k.oos.metrics.n == 0 && k.oos.valid_bars == 6 && !k.oos.open_at_end.open);
    sebt_split_result_free(&r);
    sebt_series_free(&s);
}

Test(oos, split_by_hand_reference) { split_by_hand("reference"); }
Test(oos, split_by_hand_fast_cpu) { split_by_hand("fast_cpu"); }

/* Train 6, test 6 on the same bars (one window): the spike is in the train window, whose
 * only trade never closes (so the pick has n = 0), and the test window,
 * flat bars, trades nothing: the position is not carried into it. */
Test(oos, walkforward_by_hand)
{
    sebt_series s;
    spike_series(&s);
    sebt_params p = spike_params();
    sebt_error err = { 0 };
    sebt_wf_opts o = { .combos = &p, .n_combos = 1, .train = 6, .test = 6, .metric = SEBT_METRIC_N };
    sebt_wf_result r;
    cr_assert_eq(sebt_walkforward_run(backend("fast_cpu"), &s, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.n_windows, 1);
    cr_assert(r.windows[0].picked && r.windows[0].train.metrics.n == 0 && r.windows[0].train.open_at_end.open);
    cr_assert(r.windows[0].test.n_trades == 0 && !r.windows[0].test.open_at_end.open && r.n_trades == 0);
    o.train = 4;   /* train [0,4), test [4,10): the spike's signal is in train, its trade never opens */
    sebt_walkforward_free(&r);
    cr_assert_eq(sebt_walkforward_run(backend("fast_cpu"), &s, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.n_windows, 1);
    cr_assert(r.windows[0].train.metrics.n == 0 && !r.windows[0].train.open_at_end.open &&
              r.windows[0].test.n_trades == 0 && r.n_trades == 0);
    sebt_walkforward_free(&r);
    sebt_series_free(&s);
}
