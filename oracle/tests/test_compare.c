/* The oracle's comparison (SPEC §8) on hand-made cases: identical outputs
 * agree, a near-tie decision is adjudicated and counted, anything else is a
 * divergence that names its bar. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

/* A downtrend whose bar 1 signals (ema_fast 1 < ema_slow 5, rising volume
 * z = +1, rising TR z = +1, cloc 0.4 > -1), entry at bar 2's open 97, stop
 * low[1] = 95 (atr_stop_mult 0), risk 2, target 101. Bar 3's low touches
 * the stop exactly: a margin of 0, the nearest tie there is. */
static const double bars[][5] = {
    { 100, 102, 98, 99, 10 },
    { 99, 100, 95, 97, 30 },
    { 97, 99, 96, 98, 20 },
    { 98, 99, 95, 97, 25 },   /* low == stop */
    { 97, 98, 96, 97, 20 },
    { 97, 98, 96, 97.5, 22 },
    { 97, 98, 96, 97, 20 },
    { 97, 98, 96, 97, 21 },
};
#define N_BARS (sizeof bars / sizeof bars[0])

static sebt_series series_with_low3(double low3)
{
    sebt_series s;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_alloc(&s, N_BARS, &err), SEBT_OK);
    for (size_t t = 0; t < N_BARS; t++) {
        s.ts[t] = 1600000000000 + (int64_t)t * 900000;
        s.open[t] = bars[t][0];
        s.high[t] = bars[t][1];
        s.low[t] = t == 3 ? low3 : bars[t][2];
        s.close[t] = bars[t][3];
        s.volume[t] = bars[t][4];
    }
    return s;
}

static sebt_params params(void)
{
    sebt_params p = sebt_params_default();
    p.ema_fast = 1;
    p.ema_slow = 5;
    p.z_window = 2;
    p.atr_window = 1;
    p.vol_z = -100;
    p.tr_z = -100;
    p.cloc_min = -1;
    p.atr_stop_mult = 0;
    p.reward_r = 2;
    p.max_hold = 3;
    p.fee_bp = 0;
    p.slippage_bp = 0;
    return p;
}

typedef struct {
    sebt_features f;
    sebt_result r;
} output;

static output run_reference(const sebt_series *s, const sebt_params *p)
{
    const sebt_backend *ref = &sebt_reference_backend;
    output o = { 0 };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_features_alloc(&o.f, s->n, &err), SEBT_OK);
    cr_assert_eq(ref->features(ref, s, p, &o.f, &err), SEBT_OK, "%s", err.msg);
    sebt_batch_opts opts = { .threads = 1, .want_trades = true };
    cr_assert_eq(ref->run_batch(ref, s, p, 1, &opts, &o.r, &err), SEBT_OK, "%s", err.msg);
    return o;
}

static void output_free(output *o)
{
    sebt_features_free(&o->f);
    sebt_result_free(&o->r);
}

static const sebt_contract tolerant = { SEBT_CONTRACT_TOLERANT, 1e-9 };
static const sebt_contract exact = { SEBT_CONTRACT_EXACT, 0 };

Test(compare, the_hand_made_case_is_what_the_comments_say)
{
    sebt_series s = series_with_low3(95);
    sebt_params p = params();
    output o = run_reference(&s, &p);
    cr_assert(o.f.signal[1]);
    cr_assert_geq(o.r.n_trades, 1);
    cr_expect_eq(o.r.trades[0].signal_index, 1);
    cr_expect_eq(o.r.trades[0].exit_index, 3);
    cr_expect_eq(o.r.trades[0].reason, SEBT_EXIT_STOP);
    cr_expect_eq(o.r.trades[0].exit_price, 95.0);
    output_free(&o);
    sebt_series_free(&s);
}

Test(compare, identical_outputs_agree_exactly_with_no_ties)
{
    sebt_series s = series_with_low3(95);
    sebt_params p = params();
    output o = run_reference(&s, &p);
    bool diverged = true;
    sebt_oracle_tally ties = { 0, 0 };
    sebt_divergence d;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_compare_one(&exact, &s, &p, &o.f, &o.r, &diverged, &d, &ties, &err), SEBT_OK,
                 "%s", err.msg);
    cr_expect_not(diverged, "%s: %s", d.what, d.detail);
    cr_expect_eq(ties.ties, 0);
    output_free(&o);
    sebt_series_free(&s);
}

Test(compare, reference_against_itself_on_a_batch)
{
    sebt_series s = series_with_low3(95);
    sebt_params p[3] = { params(), params(), params() };
    p[1].use_stop = false;
    p[2].max_hold = 1;
    sebt_oracle_report r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_check(&sebt_reference_backend, &s, p, 3, NULL, &r, &err), SEBT_OK, "%s", err.msg);
    cr_expect_eq(r.combos_checked, 3);
    cr_expect_eq(r.combos_diverged, 0);
    cr_expect_eq(r.ties, 0);
    sebt_series_free(&s);
}

/* The candidate's stop came out a hair below the reference's 95 (1e-10
 * away, far inside tol 1e-9: its ATR rounded differently), so bar 3's low
 * of 95 did not reach it and it left on time at bar 5. Its operand moved,
 * so rounding explains it: the oracle follows it and counts one tie. */
Test(compare, a_near_tie_exit_is_adjudicated_and_counted)
{
    sebt_series s = series_with_low3(95);
    sebt_params p = params();
    sebt_params p2 = p;
    p2.atr_stop_mult = 2e-11;     /* atr[1] = 5: stop 95 - 1e-10 */
    output cand = run_reference(&s, &p2);
    cr_assert_eq(cand.r.trades[0].exit_index, 5, "the candidate leaves on time");
    cr_assert_eq(cand.r.trades[0].reason, SEBT_EXIT_TIME);
    cr_assert_neq(cand.r.trades[0].stop, 95.0);
    bool diverged = true;
    sebt_oracle_tally ties = { 0, 0 };
    sebt_divergence d;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &cand.f, &cand.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect_not(diverged, "%s at bar %lld: %s", d.what, (long long)d.bar, d.detail);
    cr_expect_eq(ties.ties, 1);
    cr_expect_gt(ties.decisions, 3, "the signal bars and the exit checks are decisions");

    /* The same difference under an exact contract is a divergence at bar 3. */
    ties = (sebt_oracle_tally){ 0, 0 };
    cr_assert_eq(sebt_oracle_compare_one(&exact, &s, &p, &cand.f, &cand.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    cr_expect_eq(d.bar, 3, "first differing bar: %lld (%s)", (long long)d.bar, d.what);
    cr_expect_eq(ties.ties, 0, "an exact backend is never adjudicated");
    output_free(&cand);
    sebt_series_free(&s);
}

/* A stop-gap or stop test written `<`: the candidate's stop is the
 * reference's very bits and bar 3's low equals it, yet it did not stop.
 * No rounding can explain that: a divergence, tolerant contract or not. */
Test(compare, a_different_exit_over_the_same_operands_is_a_divergence)
{
    sebt_series s = series_with_low3(95);
    sebt_series s2 = series_with_low3(95 + 1e-10);
    sebt_params p = params();
    output cand = run_reference(&s2, &p);
    cr_assert_eq(cand.r.trades[0].exit_index, 5);
    cr_assert_eq(cand.r.trades[0].stop, 95.0, "same stop bits as the reference");
    bool diverged = false;
    sebt_oracle_tally ties = { 0, 0 };
    sebt_divergence d;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &cand.f, &cand.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    cr_expect_str_eq(d.what, "exit");
    cr_expect_eq(d.bar, 3);
    cr_expect(strstr(d.detail, "logic error") != NULL, "%s", d.detail);
    cr_expect_eq(ties.ties, 0);
    output_free(&cand);
    sebt_series_free(&s);
    sebt_series_free(&s2);
}

/* A signal that differs where cloc sits exactly on cloc_min is a tie only
 * when the candidate's cloc is not the reference's bits. */
Test(compare, a_near_tie_signal_is_adjudicated_only_when_its_operand_moved)
{
    sebt_series s = series_with_low3(95);
    sebt_params p = params();
    /* Bar 4: cloc = (97-96)/(98-96) = 0.5; with cloc_min 0.5 the reference
     * says no (0.5 > 0.5 is false) and the candidate says yes. */
    p.cloc_min = 0.5;
    output r = run_reference(&s, &p);
    cr_assert_eq(r.f.cloc[4], 0.5);
    cr_assert_not(r.f.signal[4]);
    r.f.signal[4] = 1;
    bool diverged = false;
    sebt_oracle_tally ties = { 0, 0 };
    sebt_divergence d;
    sebt_error err = { 0 };
    /* Same cloc bits, other decision: a `>=` written for `>`. */
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &r.f, &r.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    cr_expect_str_eq(d.what, "signal");
    cr_expect_eq(d.bar, 4);
    cr_expect_eq(ties.ties, 0);
    /* Its cloc rounded a hair above 0.5: rounding explains it, a tie. */
    r.f.cloc[4] = nextafter(0.5, 1.0);
    ties = (sebt_oracle_tally){ 0, 0 };
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &r.f, &r.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect_not(diverged, "%s at bar %lld: %s", d.what, (long long)d.bar, d.detail);
    cr_expect_eq(ties.ties, 1);
    /* Exact contracts are never adjudicated. */
    ties = (sebt_oracle_tally){ 0, 0 };
    cr_assert_eq(sebt_oracle_compare_one(&exact, &s, &p, &r.f, &r.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    /* A signal flipped where no comparison is close is a divergence. */
    r.f.signal[4] = 0;
    r.f.cloc[4] = 0.5;
    r.f.signal[2] = !r.f.signal[2];
    ties = (sebt_oracle_tally){ 0, 0 };
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &r.f, &r.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    cr_expect_str_eq(d.what, "signal");
    cr_expect_eq(d.bar, 2);
    output_free(&r);
    sebt_series_free(&s);
}

Test(compare, the_tie_rate_is_per_million_decisions)
{
    cr_expect_eq(sebt_oracle_tie_rate(0, 0), 0.0);
    cr_expect_eq(sebt_oracle_tie_rate(3, 1000000), 3.0);
    cr_expect_eq(sebt_oracle_tie_rate(1, 4), 250000.0);
}

/* Bar 3's low is 1 below the stop in the reference; a candidate that did
 * not stop there is wrong, and the report says where and by how much. */
Test(compare, a_difference_beyond_a_tie_is_a_divergence_naming_the_bar)
{
    sebt_series s = series_with_low3(94);
    sebt_series s2 = series_with_low3(96);
    sebt_params p = params();
    output ref = run_reference(&s, &p);
    output other = run_reference(&s2, &p);
    cr_assert_eq(ref.r.trades[0].exit_index, 3);
    cr_assert_neq(other.r.trades[0].exit_index, 3);
    bool diverged = false;
    sebt_oracle_tally ties = { 0, 0 };
    sebt_divergence d;
    sebt_error err = { 0 };
    /* Honest features, the other series' trades. */
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &ref.f, &other.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    cr_expect_str_eq(d.what, "exit");
    cr_expect_eq(d.bar, 3);
    cr_expect_eq(d.ts, s.ts[3]);
    cr_expect_eq(d.margin, -1.0, "margin low - stop = 94 - 95, got %g", d.margin);
    char text[2048];
    sebt_divergence_text(&d, text, sizeof text);
    cr_expect(strstr(text, "bar 3") != NULL, "%s", text);
    cr_expect(strstr(text, "stop") != NULL, "%s", text);
    /* Features that differ are reported at the first bar they differ. */
    ref.f.atr[6] *= 1.001;
    cr_assert_eq(sebt_oracle_compare_one(&tolerant, &s, &p, &ref.f, &ref.r, &diverged, &d, &ties, &err),
                 SEBT_OK, "%s", err.msg);
    cr_expect(diverged);
    cr_expect_str_eq(d.what, "atr");
    cr_expect_eq(d.bar, 6);
    output_free(&ref);
    output_free(&other);
    sebt_series_free(&s);
    sebt_series_free(&s2);
}

Test(compare, a_failing_candidate_is_a_divergence_and_bad_input_an_error)
{
    sebt_series s = series_with_low3(95);
    sebt_params p = params();
    sebt_oracle_report r;
    sebt_error err = { 0 };
    p.ema_fast = 0;
    cr_expect_eq(sebt_oracle_check(&sebt_reference_backend, &s, &p, 1, NULL, &r, &err), SEBT_ERR_PARAM);
    cr_expect(strstr(err.msg, "ema_fast") != NULL, "%s", err.msg);
    sebt_series_free(&s);
}

Test(compare, near_tie_rule_is_spec_8)
{
    cr_expect(sebt_oracle_near_tie(1.0, 1.0, 1e-9));
    cr_expect(sebt_oracle_near_tie(1e6, 1e6 + 1e-4, 1e-9));
    cr_expect_not(sebt_oracle_near_tie(1e6, 1e6 + 1e-2, 1e-9));
    cr_expect(sebt_oracle_near_tie(1e-6, 1e-6 + 5e-10, 1e-9)); /* max(1, ...) floor */
    cr_expect_not(sebt_oracle_near_tie(NAN, 1.0, 1e-9));
}

/* Regressions: an exact contract has no tie, so no margin is
 * named (it printed an uninitialised "reference margin: 4.66e-310"); a
 * trade moved to another signal bar reads "does not open", never "opens no
 * a trade". */
Test(compare, an_exact_signal_divergence_names_no_margin)
{
    sebt_series s = series_with_low3(94);
    sebt_params p = params();
    output ref = run_reference(&s, &p);
    cr_assert_geq(ref.r.n_trades, 1);
    cr_assert_eq(ref.r.trades[0].signal_index, 1);
    sebt_result moved = ref.r;
    sebt_trade t[16];
    cr_assert_leq(ref.r.n_trades, 16);
    memcpy(t, ref.r.trades, ref.r.n_trades * sizeof *t);
    t[0].signal_index = 2;
    moved.trades = t;
    bool diverged = false;
    sebt_divergence d;
    sebt_error err = { 0 };
    memset(&d, 0x5a, sizeof d); /* garbage where a field is left unset */
    cr_assert_eq(sebt_oracle_compare_one(&exact, &s, &p, &ref.f, &moved, &diverged, &d, NULL, &err), SEBT_OK,
                 "%s", err.msg);
    cr_assert(diverged);
    cr_expect_str_eq(d.what, "signal");
    cr_expect_eq(d.bar, 1);
    cr_expect(isnan(d.margin), "an exact contract judged no tie, yet margin %g", d.margin);
    char text[2048];
    sebt_divergence_text(&d, text, sizeof text);
    cr_expect(strstr(text, "margin") == NULL, "%s", text);
    cr_expect(strstr(text, "opens no") == NULL, "%s", text);
    output_free(&ref);
    sebt_series_free(&s);
}

/* A kernel that loses open_at_end has the reference's signal column: the
 * diagnosis names open_at_end, not "signal differs at bar 1". */
Test(compare, a_lost_open_position_is_named_open_at_end)
{
    sebt_series s = series_with_low3(94);
    sebt_params p = params();
    p.use_stop = p.use_tp = p.use_time = false; /* the position of bar 1 never closes */
    output ref = run_reference(&s, &p);
    cr_assert_eq(ref.r.n_trades, 0);
    cr_assert(ref.r.open_at_end.open);
    cr_assert_eq(ref.r.open_at_end.signal_index, 1);
    sebt_result lost = ref.r;
    lost.open_at_end.open = false;
    bool diverged = false;
    sebt_divergence d;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_compare_one(&exact, &s, &p, &ref.f, &lost, &diverged, &d, NULL, &err), SEBT_OK,
                 "%s", err.msg);
    cr_assert(diverged);
    cr_expect_str_eq(d.what, "open_at_end");
    cr_expect_eq(d.bar, 1);
    cr_expect_eq(d.ref_value, 1);
    cr_expect_eq(d.cand_value, 0);
    cr_expect(isnan(d.margin));
    cr_expect(strstr(d.detail, "SPEC §6") != NULL, "%s", d.detail);
    output_free(&ref);
    sebt_series_free(&s);
}

/* A dropped trade with the right signal column is a trade count. */
Test(compare, a_dropped_trade_is_named_trade_count)
{
    sebt_series s = series_with_low3(94);
    sebt_params p = params();
    output ref = run_reference(&s, &p);
    cr_assert_geq(ref.r.n_trades, 1);
    sebt_result fewer = ref.r;
    fewer.n_trades = 0;
    fewer.trades = NULL;
    bool diverged = false;
    sebt_divergence d;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_compare_one(&exact, &s, &p, &ref.f, &fewer, &diverged, &d, NULL, &err), SEBT_OK,
                 "%s", err.msg);
    cr_assert(diverged);
    cr_expect_str_eq(d.what, "trade count");
    cr_expect_eq(d.ref_value, (double)ref.r.n_trades);
    cr_expect_eq(d.cand_value, 0);
    output_free(&ref);
    sebt_series_free(&s);
}
