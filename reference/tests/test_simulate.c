/* SPEC §6 worked by hand. The signal column is written directly (a string,
 * '1' = signal) and ATR is 2 on every present bar, so each case reads as a
 * few price bars. With atr_stop_mult 0.5 the stop is low[signal] - 1;
 * reward_r 2, no fees, no time limit unless a case says otherwise.
 * These call the reference's own SPEC §6 routine (reference/ref.h); the
 * end-to-end path through run_batch is covered by test_backend.c. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>

#include "../ref.h"
#include "ref_fixture.h"

typedef struct {
    sebt_series s;
    sebt_features f;
    sebt_result r;
} sim_case;

static sim_case simulate(const bar5 *bars, size_t n, const char *signal, const sebt_params *p)
{
    sim_case c;
    memset(&c, 0, sizeof c);
    sebt_error err = { 0 };
    cr_assert_eq(strlen(signal), n, "signal string must have one char per bar");
    c.s = make_series(bars, n);
    cr_assert_eq(sebt_features_alloc(&c.f, n, &err), SEBT_OK);
    for (size_t t = 0; t < n; t++) {
        int present = !isnan(bars[t][0]);
        c.f.atr[t] = present ? 2.0 : NAN;
        c.f.valid[t] = (uint8_t)present;
        c.f.signal[t] = signal[t] == '1';
    }
    cr_assert_eq(sebt_ref_walk(&c.s, &c.f, p, NULL, &c.r, &err), SEBT_OK, "%s", err.msg);
    sebt_ref_metrics(c.r.trades, c.r.n_trades, &c.r.metrics);
    return c;
}

static void done(sim_case *c)
{
    sebt_result_free(&c->r);
    sebt_features_free(&c->f);
    sebt_series_free(&c->s);
}

/* A trade as it must come out, in sebt_trade's order. */
typedef struct {
    int64_t sig, entry, exit;
    double entry_px, exit_px, stop, tp, risk, pnl, r;
    sebt_exit_reason reason;
    int32_t bars;
} want_trade;

static void assert_trade(const sebt_trade *t, const want_trade *w, const char *what)
{
    cr_assert_eq(t->signal_index, w->sig, "%s: signal_index %lld", what, (long long)t->signal_index);
    cr_assert_eq(t->entry_index, w->entry, "%s: entry_index %lld", what, (long long)t->entry_index);
    cr_assert_eq(t->exit_index, w->exit, "%s: exit_index %lld", what, (long long)t->exit_index);
    cr_assert(same_double(t->entry_price, w->entry_px), "%s: entry_price %.17g", what, t->entry_price);
    cr_assert(same_double(t->exit_price, w->exit_px), "%s: exit_price %.17g", what, t->exit_price);
    cr_assert(same_double(t->stop, w->stop), "%s: stop %.17g", what, t->stop);
    cr_assert(same_double(t->tp, w->tp), "%s: tp %.17g", what, t->tp);
    cr_assert(same_double(t->risk, w->risk), "%s: risk %.17g", what, t->risk);
    cr_assert(same_double(t->pnl, w->pnl), "%s: pnl %.17g", what, t->pnl);
    cr_assert(same_double(t->r, w->r), "%s: r %.17g", what, t->r);
    cr_assert_eq(t->reason, w->reason, "%s: reason %s", what, sebt_exit_reason_name(t->reason));
    cr_assert_eq(t->bars_held, w->bars, "%s: bars_held %d", what, t->bars_held);
}

/* With small_params(), no trade and nothing open at the end; valid_bars as
 * worked out. */
static void assert_nothing_opens(const bar5 *bars, const char *signal, size_t valid_bars)
{
    sebt_params p = small_params();
    sim_case c = simulate(bars, strlen(signal), signal, &p);
    cr_assert_eq(c.r.n_trades, 0, "signal %s", signal);
    cr_assert(!c.r.open_at_end.open, "signal %s", signal);
    cr_assert_eq(c.r.valid_bars, valid_bars, "signal %s", signal);
    done(&c);
}

/* The signal bar and the entry bar shared by most cases:
 * t0 signal (100,101,99,100): stop = 99 - 0.5*2 = 98.
 * t1 entry at open 100: risk = 100 - 98 = 2, tp = 100 + 2*2 = 104. The
 *    entry bar spans 90..110, which would hit both stop and target, but
 *    the entry bar is never checked. */
#define SIG_BAR { 100, 101, 99, 100, 1 }
#define ENTRY_BAR { 100, 110, 90, 100, 1 }

/* Cases with one trade that closes before the series ends: the bars, the
 * signal column, what differs from small_params() and the trade worked out
 * by hand. Each also has every present bar valid and nothing open at the
 * end. */
typedef struct {
    /* Arrays, not pointers: Criterion hands each case to a fresh process,
     * where this one's addresses mean nothing. */
    char name[72];
    bar5 bars[6];
    char signal[8]; /* one char a bar: its length is the bar count */
    int32_t max_hold;   /* 0: small_params' 1000 */
    bool no_stop, no_tp;
    double fee_bp, slippage_bp, reward_r; /* reward_r 0: small_params' 2 */
    size_t valid_bars;
    want_trade want;
} one_trade_case;

static const one_trade_case one_trade_cases[] = {
    /* t2 (100,101,97,99): open 100 > 98, low 97 <= 98 -> STOP at 98;
     * pnl = 98 - 100 = -2, R = -2/2 = -1, one bar held. */
    { "exits: stop, the entry bar never checked", { SIG_BAR, ENTRY_BAR, { 100, 101, 97, 99, 1 } }, "100",
      .valid_bars = 3, .want = { 0, 1, 2, 100, 98, 98, 104, 2, -2, -1, SEBT_EXIT_STOP, 1 } },
    /* t2 (95,96,94,95): open 95 <= 98 -> STOP_GAP at 95; pnl -5, R -2.5. */
    { "exits: a stop gap exits at the open", { SIG_BAR, ENTRY_BAR, { 95, 96, 94, 95, 1 } }, "100",
      .valid_bars = 3, .want = { 0, 1, 2, 100, 95, 98, 104, 2, -5, -2.5, SEBT_EXIT_STOP_GAP, 1 } },
    /* t2 (100,105,99,104): low 99 > 98, high 105 >= 104 -> TP at 104; pnl 4, R 2. */
    { "exits: take profit", { SIG_BAR, ENTRY_BAR, { 100, 105, 99, 104, 1 } }, "100",
      .valid_bars = 3, .want = { 0, 1, 2, 100, 104, 98, 104, 2, 4, 2, SEBT_EXIT_TP, 1 } },
    /* max_hold 2: t2 (100,101,99,100) nothing, bars = 1; t3 (100,102,99,101)
     * bars = 2 >= 2 -> TIME at close 101; pnl 1, R 0.5. */
    { "exits: time after max_hold bars",
      { SIG_BAR, ENTRY_BAR, { 100, 101, 99, 100, 1 }, { 100, 102, 99, 101, 1 } }, "1000", .max_hold = 2,
      .valid_bars = 4, .want = { 0, 1, 3, 100, 101, 98, 104, 2, 1, 0.5, SEBT_EXIT_TIME, 2 } },
    /* t2 (100,101,99,100.5): bars = 1 >= 1 -> TIME at 100.5; pnl 0.5, R 0.25. */
    { "exits: max_hold 1 exits on the first checked bar", { SIG_BAR, ENTRY_BAR, { 100, 101, 99, 100.5, 1 } },
      "100", .max_hold = 1,
      .valid_bars = 3, .want = { 0, 1, 2, 100, 100.5, 98, 104, 2, 0.5, 0.25, SEBT_EXIT_TIME, 1 } },
    /* t2 (97,105,90,100): open 97 <= 98 (gap), low 90 <= 98 (stop), high
     * 105 >= 104 (tp) -> STOP_GAP at 97; pnl -3, R -1.5. */
    { "priority: a gap beats stop and tp", { SIG_BAR, ENTRY_BAR, { 97, 105, 90, 100, 1 } }, "100",
      .valid_bars = 3, .want = { 0, 1, 2, 100, 97, 98, 104, 2, -3, -1.5, SEBT_EXIT_STOP_GAP, 1 } },
    /* t2 (100,105,97,100): open 100 > 98, low 97 <= 98, high 105 >= 104 -> STOP at 98. */
    { "priority: stop beats tp on the same bar", { SIG_BAR, ENTRY_BAR, { 100, 105, 97, 100, 1 } }, "100",
      .valid_bars = 3, .want = { 0, 1, 2, 100, 98, 98, 104, 2, -2, -1, SEBT_EXIT_STOP, 1 } },
    /* max_hold 1 and t2 reaches 104: TP at 104, not TIME at close 103. */
    { "priority: tp beats time", { SIG_BAR, ENTRY_BAR, { 100, 105, 99, 103, 1 } }, "100", .max_hold = 1,
      .valid_bars = 3, .want = { 0, 1, 2, 100, 104, 98, 104, 2, 4, 2, SEBT_EXIT_TP, 1 } },
    /* max_hold 1 and t2 touches 98: STOP (at 98: pnl -2, R -1), not TIME. */
    { "priority: stop beats time", { SIG_BAR, ENTRY_BAR, { 100, 101, 98, 99, 1 } }, "100", .max_hold = 1,
      .valid_bars = 3, .want = { 0, 1, 2, 100, 98, 98, 104, 2, -2, -1, SEBT_EXIT_STOP, 1 } },
    /* Signals at t0, t1 (the entry bar) and t2 (held); max_hold 2 exits at
     * t3 close 101. If t1/t2 were queued a trade would open at t4; none does. */
    { "positions: signals while in position are ignored, not queued",
      { SIG_BAR, ENTRY_BAR, { 100, 101, 99, 100, 1 }, { 100, 102, 99, 101, 1 }, { 101, 102, 100, 101, 1 },
        { 101, 102, 100, 101, 1 } },
      "111000", .max_hold = 2,
      .valid_bars = 6, .want = { 0, 1, 3, 100, 101, 98, 104, 2, 1, 0.5, SEBT_EXIT_TIME, 2 } },
    /* t1 missing: entry at t2's open 100. t3 missing. t4 is the first
     * checked bar: bars = 1 >= max_hold 1 -> TIME at t4's close 101.
     * t4 would have stopped out had t3 (a bar below the stop) been real. */
    { "positions: holes are skipped, the next bar is the next valid bar",
      { SIG_BAR, MISSING, ENTRY_BAR, MISSING, { 100, 102, 99, 101, 1 } }, "10000", .max_hold = 1,
      .valid_bars = 3, .want = { 0, 2, 4, 100, 101, 98, 104, 2, 1, 0.5, SEBT_EXIT_TIME, 1 } },
    /* use_stop false: stop = 0, risk = 100*0.01 = 1 (the double product
     * rounds to exactly 1), tp = 100 + 2*1 = 102. t2 dips to 50 (no stop),
     * high 101 < 102; t3 high 102 >= 102 -> TP at 102; pnl 2, R 2. */
    { "options: with no stop, risk is 1% of the entry",
      { SIG_BAR, ENTRY_BAR, { 100, 101, 50, 100, 1 }, { 100, 102, 99, 101, 1 } }, "1000", .no_stop = true,
      .valid_bars = 4, .want = { 0, 1, 3, 100, 102, 0, 102, 1, 2, 2, SEBT_EXIT_TP, 2 } },
    /* use_stop false: stop = 0. t2 opens and trades at 0, so open <= stop
     * and low <= stop both hold, yet neither stop rule applies; the time
     * limit (1) closes at 2: pnl = 2 - 100 = -98, R = -98 / 1 = -98. */
    { "options: with no stop, the zero stop never exits", { SIG_BAR, ENTRY_BAR, { 0, 3, 0, 2, 1 } }, "100",
      .max_hold = 1, .no_stop = true,
      .valid_bars = 3, .want = { 0, 1, 2, 100, 2, 0, 102, 1, -98, -98, SEBT_EXIT_TIME, 1 } },
    /* use_tp false: tp = 0. t2 rises to 200 (no target); max_hold 2: t3
     * closes at 155 -> TIME; pnl 55, R 27.5. */
    { "options: no tp means tp 0 and no target",
      { SIG_BAR, ENTRY_BAR, { 100, 200, 99, 150, 1 }, { 150, 160, 140, 155, 1 } }, "1000", .max_hold = 2,
      .no_tp = true,
      .valid_bars = 4, .want = { 0, 1, 3, 100, 155, 98, 0, 2, 55, 27.5, SEBT_EXIT_TIME, 2 } },
    /* fee_bp 20 + slippage_bp 5 = 25 bp; reward_r 40.
     * t0 (160,161,159,160): stop 158; t1 entry 160, risk 2, tp = 160 + 40*2 = 240.
     * t2 (200,250,199,245) -> TP at 240.
     * fee = (160 + 240) * 25 / 10000 = 10000 / 10000 = 1; pnl = 240 - 160 - 1 = 79;
     * R = 79 / 2 = 39.5. */
    { "fees: a fee on entry plus exit",
      { { 160, 161, 159, 160, 1 }, { 160, 161, 159, 160, 1 }, { 200, 250, 199, 245, 1 } }, "100",
      .fee_bp = 20, .slippage_bp = 5, .reward_r = 40,
      .valid_bars = 3, .want = { 0, 1, 2, 160, 240, 158, 240, 2, 79, 39.5, SEBT_EXIT_TP, 1 } },
};

ParameterizedTestParameters(one_trade, closes_as_worked_out)
{
    return cr_make_param_array(one_trade_case, (one_trade_case *)one_trade_cases, NBARS(one_trade_cases));
}

ParameterizedTest(const one_trade_case *k, one_trade, closes_as_worked_out)
{
    sebt_params p = small_params();
    if (k->max_hold)
        p.max_hold = k->max_hold;
    if (k->no_stop)
        p.use_stop = false;
    if (k->no_tp)
        p.use_tp = false;
    p.fee_bp = k->fee_bp;
    p.slippage_bp = k->slippage_bp;
    if (k->reward_r)
        p.reward_r = k->reward_r;
    sim_case c = simulate(k->bars, strlen(k->signal), k->signal, &p);
    cr_assert_eq(c.r.n_trades, 1, "%s: %zu trades", k->name, (size_t)c.r.n_trades);
    assert_trade(&c.r.trades[0], &k->want, k->name);
    cr_assert_eq(c.r.valid_bars, k->valid_bars, "%s: valid_bars %zu", k->name, c.r.valid_bars);
    cr_assert(!c.r.open_at_end.open, "%s: open at the end", k->name);
    done(&c);
}

Test(positions, signal_on_exit_bar_opens_the_next_trade)
{
    /* Trade 1 stops out at t2 (98), which also signals: stop2 = 97 - 1 = 96.
     * t3 entry at open 99: risk = 99 - 96 = 3, tp = 99 + 2*3 = 105.
     * t4 (99,106,98,100): low 98 > 96, high 106 >= 105 -> TP at 105;
     * pnl = 105 - 99 = 6, R = 2. */
    bar5 bars[] = { SIG_BAR, ENTRY_BAR, { 100, 101, 97, 99, 1 }, { 99, 100, 98, 99, 1 }, { 99, 106, 98, 100, 1 } };
    sebt_params p = small_params();
    sim_case c = simulate(bars, 5, "10100", &p);
    cr_assert_eq(c.r.n_trades, 2);
    assert_trade(&c.r.trades[0], &(want_trade){ 0, 1, 2, 100, 98, 98, 104, 2, -2, -1, SEBT_EXIT_STOP, 1 }, "trade 1");
    assert_trade(&c.r.trades[1], &(want_trade){ 2, 3, 4, 99, 105, 96, 105, 3, 6, 2, SEBT_EXIT_TP, 1 }, "trade 2");
    done(&c);
}

Test(positions, open_at_end_is_not_a_trade)
{
    /* t2 no exit (bars = 1); the series ends with the position open. */
    bar5 bars[] = { SIG_BAR, ENTRY_BAR, { 100, 101, 99, 100, 1 } };
    sebt_params p = small_params();
    sim_case c = simulate(bars, 3, "100", &p);
    cr_assert_eq(c.r.n_trades, 0);
    cr_assert_null(c.r.trades);
    const sebt_open_position *o = &c.r.open_at_end;
    cr_assert(o->open);
    cr_assert_eq(o->signal_index, 0);
    cr_assert_eq(o->entry_index, 1);
    cr_assert_eq(o->entry_price, 100);
    cr_assert_eq(o->stop, 98);
    cr_assert_eq(o->tp, 104);
    cr_assert_eq(o->risk, 2);
    cr_assert_eq(o->bars_held, 1);
    cr_assert_eq(c.r.metrics.n, 0);
    done(&c);
}

Test(positions, entry_on_last_bar_is_open_with_zero_bars)
{
    bar5 bars[] = { SIG_BAR, ENTRY_BAR };
    sebt_params p = small_params();
    sim_case c = simulate(bars, 2, "10", &p);
    cr_assert_eq(c.r.n_trades, 0);
    cr_assert(c.r.open_at_end.open);
    cr_assert_eq(c.r.open_at_end.entry_index, 1);
    cr_assert_eq(c.r.open_at_end.bars_held, 0);
    done(&c);
}

Test(positions, signal_on_last_valid_bar_opens_nothing)
{
    bar5 bars[] = { SIG_BAR, ENTRY_BAR, MISSING };
    assert_nothing_opens(bars, "010", 2);
}

Test(options, no_time_limit_holds_to_the_end)
{
    bar5 bars[] = { SIG_BAR, ENTRY_BAR, { 100, 101, 99, 100, 1 }, { 100, 101, 99, 100, 1 }, { 100, 101, 99, 100, 1 } };
    sebt_params p = small_params();
    p.use_time = false;
    p.max_hold = 1;
    sim_case c = simulate(bars, 5, "10000", &p);
    cr_assert_eq(c.r.n_trades, 0);
    cr_assert(c.r.open_at_end.open);
    cr_assert_eq(c.r.open_at_end.bars_held, 3);
    done(&c);
}

Test(options, risk_floor_1e_8)
{
    /* atr_stop_mult 0 puts the stop at the signal bar's low 99; the entry
     * opens at 99 too, so entry - stop = 0 and risk = max(1e-8, 0) = 1e-8.
     * tp = 99 + 2e-8. t2 (99.5,100,99.25,100): open and low above 99,
     * high 100 >= tp -> TP; pnl = tp - 99, R = pnl / 1e-8. */
    bar5 bars[] = { SIG_BAR, { 99, 100, 99, 99.5, 1 }, { 99.5, 100, 99.25, 100, 1 } };
    sebt_params p = small_params();
    p.atr_stop_mult = 0.0;
    sim_case c = simulate(bars, 3, "100", &p);
    cr_assert_eq(c.r.n_trades, 1);
    const sebt_trade *t = &c.r.trades[0];
    cr_assert_eq(t->risk, 1e-8);
    cr_assert_eq(t->stop, 99);
    cr_assert_eq(t->tp, 99 + 2 * 1e-8);
    cr_assert_eq(t->reason, SEBT_EXIT_TP);
    cr_assert_eq(t->pnl, (99 + 2 * 1e-8) - 99);
    done(&c);
}

Test(fees, default_ten_bp_round_trip)
{
    /* 5 + 5 bp: fee = (100 + 104) * 10 / 10000 = 0.204; pnl = 4 - 0.204 =
     * 3.796; a winner still, R = 1.898 (decimals: checked to 1e-12). */
    bar5 bars[] = { SIG_BAR, ENTRY_BAR, { 100, 105, 99, 104, 1 } };
    sebt_params p = small_params();
    p.fee_bp = 5;
    p.slippage_bp = 5;
    sim_case c = simulate(bars, 3, "100", &p);
    cr_assert_eq(c.r.n_trades, 1);
    cr_assert_float_eq(c.r.trades[0].pnl, 3.796, 1e-12);
    cr_assert_float_eq(c.r.trades[0].r, 1.898, 1e-12);
    cr_assert_eq(c.r.metrics.win_rate, 1.0);
    done(&c);
}

Test(edges, fewer_than_two_valid_bars_simulate_nothing)
{
    bar5 one[] = { SIG_BAR };
    assert_nothing_opens(one, "1", 1);
    bar5 holes[] = { MISSING, SIG_BAR, MISSING };
    assert_nothing_opens(holes, "010", 1);
}
