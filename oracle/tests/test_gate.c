/* What the release gate says when it catches something: the
 * shrinker keeps the bug it was given, not any bug; a bug that does not
 * repeat is reported as non-deterministic with its case kept as generated;
 * the metamorphic checks see, without the reference, a result that depends
 * on the call before it or on the combos sharing its call. Each candidate
 * here is the reference with one fault planted by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"
#include "sebt/backends.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

static const sebt_backend *ref = &sebt_reference_backend;

static sebt_status ref_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                sebt_features *out, sebt_error *err)
{
    (void)self;
    return ref->features(ref, s, p, out, err);
}

static sebt_status ref_batch(const sebt_series *s, const sebt_params *combos, size_t n, const sebt_batch_opts *o,
                             sebt_result *res, sebt_error *err)
{
    sebt_batch_opts mine = o ? *o : (sebt_batch_opts){ 0 };
    mine.want_trades = true;
    mine.stats = NULL;
    return ref->run_batch(ref, s, combos, n, &mine, res, err);
}

/* Two bugs: on 12 bars or more the first trade's pnl is one too high; on
 * fewer, the Sharpe is. Shrinking "any divergence" below 12 bars trades
 * the first bug for the second. */
static sebt_status two_bugs(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                            const sebt_batch_opts *o, sebt_result *res, sebt_error *err)
{
    (void)self;
    sebt_status st = ref_batch(s, combos, n, o, res, err);
    for (size_t i = 0; st == SEBT_OK && i < n; i++) {
        if (s->n >= 12 && res[i].n_trades)
            res[i].trades[0].pnl += 1.0;
        else if (s->n < 12)
            res[i].metrics.sharpe += 1.0;
    }
    return st;
}

/* Every second call that records trades adds one to the first trade's
 * pnl: state kept between calls. (Counting every call would put each
 * check's call with trades, the one its metrics-only twin follows, always
 * on the same side.) */
static unsigned long calls;
static sebt_status flaky(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                         const sebt_batch_opts *o, sebt_result *res, sebt_error *err)
{
    (void)self;
    sebt_status st = ref_batch(s, combos, n, o, res, err);
    if (st == SEBT_OK && o && o->want_trades && ++calls % 2 == 0)
        for (size_t i = 0; i < n; i++)
            if (res[i].n_trades) {
                res[i].trades[0].pnl += 1.0;
                break;
            }
    return st;
}

/* Combo 0's result depends on how many combos share its call. */
static sebt_status companions(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                              const sebt_batch_opts *o, sebt_result *res, sebt_error *err)
{
    (void)self;
    sebt_status st = ref_batch(s, combos, n, o, res, err);
    if (st == SEBT_OK && n > 1)
        res[0].metrics.total_pnl += 1.0;
    return st;
}

/* Right with trades recorded; metrics-only (the path a sweep takes) the
 * total pnl of a trading combo is one too high. */
static sebt_status metrics_only_slip(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n, const sebt_batch_opts *o, sebt_result *res, sebt_error *err)
{
    (void)self;
    sebt_status st = ref_batch(s, combos, n, o, res, err);
    for (size_t i = 0; st == SEBT_OK && !(o && o->want_trades) && i < n; i++)
        if (res[i].n_trades)
            res[i].metrics.total_pnl += 1.0;
    return st;
}

#define CANDIDATE(fn) { .name = #fn, .description = "test", .contract = { SEBT_CONTRACT_EXACT, 0 }, \
                        .features = ref_features, .run_batch = fn }

/* A case where the reference trades: the first generated case of seed 1
 * with a trade, at least 30 bars. */
static void a_trading_case(sebt_series *s, sebt_params *p)
{
    for (uint64_t it = 0; it < 2000; it++) {
        sebt_fuzz_case c;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_generate(1, it, &c, &err), SEBT_OK, "%s", err.msg);
        if (c.series.n >= 30) {
            sebt_result r = { 0 };
            sebt_batch_opts o = { .threads = 1, .want_trades = true };
            cr_assert_eq(ref->run_batch(ref, &c.series, &c.combos[0], 1, &o, &r, &err), SEBT_OK, "%s", err.msg);
            bool trades = r.n_trades >= 1;
            sebt_result_free(&r);
            if (trades) {
                *s = c.series;
                *p = c.combos[0];
                c.series = (sebt_series){ 0 };
                sebt_fuzz_case_free(&c);
                return;
            }
        }
        sebt_fuzz_case_free(&c);
    }
    cr_assert_fail("no trading case");
}

Test(gate, the_shrinker_keeps_the_bug_it_was_given, .timeout = 120)
{
    const sebt_backend b = CANDIDATE(two_bugs);
    sebt_series s;
    sebt_params p;
    a_trading_case(&s, &p);
    sebt_divergence d;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_shrink(&b, &s, &p, &d, &err), SEBT_OK, "%s", err.msg);
    cr_expect_geq(s.n, 12, "shrunk to %zu bars, where the other bug (%s) took over", s.n, d.what);
    cr_expect(strstr(d.what, "pnl") != NULL, "the shrunk case shows %s, not the pnl bug", d.what);
    sebt_series_free(&s);
}

Test(gate, the_metrics_only_path_is_checked_too)
{
    const sebt_backend b = CANDIDATE(metrics_only_slip);
    sebt_series s;
    sebt_params p;
    a_trading_case(&s, &p);
    sebt_oracle_report rep;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_check(&b, &s, &p, 1, NULL, &rep, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(rep.combos_diverged, 1, "a slip in the metrics-only run passed");
    cr_expect_str_eq(rep.details[0].what, "metrics-only metrics.total_pnl");
    cr_expect_eq(rep.details[0].cand_value, rep.details[0].ref_value + 1.0);
    cr_expect(strstr(rep.details[0].detail, "want_trades off") != NULL, "%s", rep.details[0].detail);
    /* The reference itself passes: its two runs agree. */
    cr_assert_eq(sebt_oracle_check(ref, &s, &p, 1, NULL, &rep, &err), SEBT_OK, "%s", err.msg);
    cr_expect_eq(rep.combos_diverged, 0, "%s", rep.n_details ? rep.details[0].detail : "");
    sebt_series_free(&s);
}

Test(gate, divergences_of_one_kind)
{
    sebt_divergence a = { .what = "trade 3 pnl", .ref_value = 1, .cand_value = 2 };
    sebt_divergence b = { .what = "trade 0 pnl", .ref_value = 5, .cand_value = 4 };
    cr_expect(oracle_same_kind(&a, &b), "which trade and which way a value moved are not the bug");
    sebt_divergence sig1 = { .what = "signal", .ref_value = 1, .cand_value = 0 };
    sebt_divergence sig2 = { .what = "signal", .ref_value = 0, .cand_value = 1 };
    cr_expect_not(oracle_same_kind(&sig1, &sig2), "a missed signal and an extra one are two bugs");
    sebt_divergence nan1 = { .what = "atr", .ref_value = NAN, .cand_value = 3 };
    sebt_divergence num = { .what = "atr", .ref_value = 2, .cand_value = 3 };
    cr_expect_not(oracle_same_kind(&nan1, &num), "NaN on one side is another bug than a moved value");
    sebt_divergence pnl = { .what = "metrics.sharpe", .ref_value = 1, .cand_value = 2 };
    cr_expect_not(oracle_same_kind(&a, &pnl));
}

Test(gate, a_bug_that_does_not_repeat_is_non_deterministic, .timeout = 120)
{
    const sebt_backend b = CANDIDATE(flaky);
    calls = 0;
    sebt_fuzz_opts o = { .seed = 1, .iterations = 500, .big_share = -1, .shrink = true };
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fuzz_run(&b, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert(r.found);
    cr_expect(r.nondeterministic);
    cr_expect(strstr(r.nondet_detail, "did not diverge") != NULL, "%s", r.nondet_detail);
    /* Every second call diverges: so do 4 of 8 re-runs, and the report says so. */
    cr_expect_eq(r.reruns, 8);
    cr_expect_eq(r.reruns_diverged, 4, "%s", r.nondet_detail);
    cr_expect_geq(r.rerun_threads, 4, "more threads than found on");
    cr_expect_geq(r.rerun_threads, 2 * r.repro_threads);
    char rate[96];
    snprintf(rate, sizeof rate, "run again 8 times on %d threads it diverged 4 times", r.rerun_threads);
    cr_expect(strstr(r.nondet_detail, rate) != NULL, "%s", r.nondet_detail);
    cr_expect_eq(r.repro.n, r.original_bars, "kept as generated, unshrunk");
    cr_expect_eq(r.repro_n_combos, r.original_combos);
    /* A second finish (an MPI campaign's winner is finished again, to
     * shrink and save) keeps what the first found. */
    char detail[sizeof r.nondet_detail];
    memcpy(detail, r.nondet_detail, sizeof detail);
    cr_assert_eq(sebt_fuzz_finish(&b, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_expect(r.nondeterministic);
    cr_expect_eq(r.reruns, 8);
    cr_expect_eq(r.reruns_diverged, 4);
    cr_expect_str_eq(r.nondet_detail, detail);
    sebt_fuzz_report_free(&r);
}

Test(gate, a_deterministic_bug_is_not_called_non_deterministic, .timeout = 120)
{
    const sebt_backend b = CANDIDATE(two_bugs);
    sebt_fuzz_opts o = { .seed = 1, .iterations = 500, .big_share = -1, .shrink = true };
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fuzz_run(&b, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert(r.found);
    cr_expect_not(r.nondeterministic, "%s", r.nondet_detail);
    cr_expect(oracle_same_kind(&r.original, &r.divergence), "as found %s, shrunk %s", r.original.what,
              r.divergence.what);
    sebt_fuzz_report_free(&r);
}

Test(gate, metamorphic_checks_need_no_reference)
{
    sebt_series s;
    sebt_params p;
    a_trading_case(&s, &p);
    sebt_params combos[5];
    for (size_t i = 0; i < 5; i++) {
        combos[i] = p;
        combos[i].max_hold = (int32_t)(i + 1);
    }
    sebt_metamorphic_report mr;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_metamorphic(ref, &s, combos, 5, 2, 0, &mr, &err), SEBT_OK, "%s", err.msg);
    cr_expect_not(mr.failed, "the reference: %s", mr.detail);
    cr_expect_eq(mr.calls, 3);

    const sebt_backend f = CANDIDATE(flaky);
    calls = 1; /* the second call of the check is the one that errs */
    cr_assert_eq(sebt_oracle_metamorphic(&f, &s, combos, 5, 2, 0, &mr, &err), SEBT_OK, "%s", err.msg);
    cr_expect(mr.failed && mr.nondeterministic, "%s", mr.detail);
    cr_expect(strstr(mr.detail, "non-deterministic") != NULL, "%s", mr.detail);

    const sebt_backend c = CANDIDATE(companions);
    cr_assert_eq(sebt_oracle_metamorphic(&c, &s, combos, 5, 2, 0, &mr, &err), SEBT_OK, "%s", err.msg);
    cr_expect(mr.failed && !mr.nondeterministic, "%s", mr.detail);
    cr_expect_eq(mr.combo, 0);
    cr_expect_str_eq(mr.what, "metrics.total_pnl");
    cr_expect(strstr(mr.detail, "depends on") != NULL, "%s", mr.detail);
    sebt_series_free(&s);
}

/* SPEC §3: a z window whose variance computes to 0 is NaN, never an
 * infinity. Subnormal volumes that differ (5e-324 and 1e-323) have squared
 * deviations that underflow to 0: vol_z is NaN there and no signal can
 * pass, whatever vol_z asks; a kernel that reads the old words as +-inf
 * trades there. The series is fixtures/regressions/spec3-var0-subnormal-volume
 * (SEBT_WRITE_FIXTURE=DIR writes it again). */
static sebt_series subnormal_volumes(sebt_params *p)
{
    sebt_series s;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_alloc(&s, 30, &err), SEBT_OK);
    for (size_t t = 0; t < s.n; t++) {
        s.ts[t] = 1600000000000LL + (int64_t)t * 900000;
        double o = 100 - (double)(t % 4), c = o - 1 + (double)(t % 3);
        s.open[t] = o;
        s.close[t] = c;
        s.high[t] = fmax(o, c) + 1;
        s.low[t] = fmin(o, c) - 1;
        s.volume[t] = t < 10 ? 10.0 + (double)(t % 3) : (t % 2 ? 1e-323 : 5e-324);
    }
    sebt_series_recount(&s);
    *p = sebt_params_default();
    p->ema_fast = 1;
    p->ema_slow = 3;
    p->z_window = 2;
    p->atr_window = 1;
    p->vol_z = -100;
    p->tr_z = -100;
    p->cloc_min = -1;
    p->use_stop = p->use_tp = false;
    p->use_time = true;
    p->max_hold = 1;
    p->fee_bp = p->slippage_bp = 0;
    return s;
}

static sebt_status inf_z_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                  sebt_features *out, sebt_error *err)
{
    (void)self;
    sebt_status st = ref->features(ref, s, p, out, err);
    for (size_t t = 1; st == SEBT_OK && t < s->n; t++)
        if (isnan(out->vol_z[t]) && !sebt_series_is_missing(s, t) && !sebt_series_is_missing(s, t - 1))
            out->vol_z[t] = INFINITY;
    return st;
}

static sebt_status ref_run(const sebt_backend *self, const sebt_series *s, const sebt_params *combos, size_t n,
                           const sebt_batch_opts *o, sebt_result *res, sebt_error *err)
{
    (void)self;
    return ref_batch(s, combos, n, o, res, err);
}

Test(gate, spec3_a_zero_variance_z_is_nan_not_infinite)
{
    sebt_params p;
    sebt_series s = subnormal_volumes(&p);
    sebt_features f;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_features_alloc(&f, s.n, &err), SEBT_OK);
    cr_assert_eq(ref->features(ref, &s, &p, &f, &err), SEBT_OK, "%s", err.msg);
    for (size_t t = 11; t < s.n; t++) {
        cr_expect(s.volume[t] != s.volume[t - 1], "the window's values differ");
        cr_expect(isnan(f.vol_z[t]), "bar %zu: vol_z %g, SPEC §3 says NaN", t, f.vol_z[t]);
        cr_expect_not(f.signal[t], "bar %zu: no signal passes a NaN vol_z", t);
    }
    cr_expect(isfinite(f.vol_z[5]), "the normal volumes have a z");
    const sebt_backend inf = { .name = "inf_z", .description = "test", .contract = { SEBT_CONTRACT_EXACT, 0 },
                               .features = inf_z_features, .run_batch = ref_run };
    sebt_oracle_report r;
    cr_assert_eq(sebt_oracle_check(&inf, &s, &p, 1, NULL, &r, &err), SEBT_OK, "%s", err.msg);
    cr_expect_eq(r.combos_diverged, 1, "a +inf reading of var == 0 is caught");
    const char *dir = getenv("SEBT_WRITE_FIXTURE");
    if (dir) {
        char path[1024];
        cr_assert_eq(sebt_fixture_write(dir, "spec3-var0-subnormal-volume", &s, &p,
                                        "SPEC §3: a z window whose variance computes to 0 is NaN, never an "
                                        "infinity. From bar 10 the volumes are subnormal (5e-324, 1e-323): "
                                        "their squared deviations underflow to 0, so vol_z is NaN and no "
                                        "signal passes, though vol_z=-100 asks for none. A kernel that "
                                        "reads var == 0 as +-inf trades there (oracle/tests/test_gate.c).\n",
                                        path, sizeof path, &err), SEBT_OK, "%s", err.msg);
    }
    sebt_features_free(&f);
    sebt_series_free(&s);
}
