/* The fuzzer: same seed, same cases; every bar it makes obeys SPEC §1; it
 * reaches the shapes it promises; and it catches every planted bug fast
 * with a small reproducer, while the reference and a correct backend stay
 * clean. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

#ifdef __SANITIZE_ADDRESS__
/* Criterion's runner (not sebt) leaks 48 bytes when several long tests run
 * in its parallel workers; LeakSanitizer ignores what the runner allocates
 * and still reports every allocation sebt makes. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libcriterion.so\n"; }
#endif


static bool same_series(const sebt_series *a, const sebt_series *b)
{
    if (a->n != b->n)
        return false;
    size_t d = a->n * sizeof(double);
    /* memcmp, not ==: NaN (missing) bars must match too. */
    return memcmp(a->ts, b->ts, a->n * sizeof *a->ts) == 0 && memcmp(a->open, b->open, d) == 0 &&
           memcmp(a->high, b->high, d) == 0 && memcmp(a->low, b->low, d) == 0 &&
           memcmp(a->close, b->close, d) == 0 && memcmp(a->volume, b->volume, d) == 0;
}

Test(fuzz, the_same_seed_gives_the_same_cases)
{
    size_t differ = 0;
    for (uint64_t it = 0; it < 60; it++) {
        sebt_fuzz_case a, b, c;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_generate(7, it, &a, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(sebt_fuzz_generate(7, it, &b, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(sebt_fuzz_generate(8, it, &c, &err), SEBT_OK, "%s", err.msg);
        cr_expect(same_series(&a.series, &b.series), "case %llu", (unsigned long long)it);
        cr_expect_eq(a.n_combos, b.n_combos);
        for (size_t i = 0; i < a.n_combos && i < b.n_combos; i++)
            cr_expect(sebt_params_same(&a.combos[i], &b.combos[i]), "case %llu combo %zu", (unsigned long long)it, i);
        differ += !same_series(&a.series, &c.series);
        sebt_fuzz_case_free(&a);
        sebt_fuzz_case_free(&b);
        sebt_fuzz_case_free(&c);
    }
    cr_expect_gt(differ, 50, "another seed gives other cases");
}

Test(fuzz, the_prng_is_xoshiro256starstar_seeded_by_splitmix64)
{
    /* Pinned outputs: a change here changes every seed's cases. */
    sebt_rng r;
    sebt_rng_seed(&r, 0);
    uint64_t first = sebt_rng_next(&r);
    sebt_rng_seed(&r, 0);
    cr_expect_eq(sebt_rng_next(&r), first);
    /* splitmix64(0) = 0xE220A8397B1DCDAF is the first state word. */
    sebt_rng_seed(&r, 0);
    cr_expect_eq(r.s[0], 0xE220A8397B1DCDAFull);
    for (int i = 0; i < 1000; i++) {
        double u = sebt_rng_unit(&r);
        cr_assert(u >= 0 && u < 1);
        int64_t k = sebt_rng_range(&r, -3, 3);
        cr_assert(k >= -3 && k <= 3);
    }
}

Test(fuzz, generated_bars_obey_spec_1_and_cover_the_edge_shapes)
{
    size_t tiny = 0, with_holes = 0, flat_bars = 0, zero_vol = 0, long_windows = 0, hold1 = 0,
           always = 0, never = 0, missing_first = 0;
    double lo_price = INFINITY, hi_price = 0;
    for (uint64_t it = 0; it < 400; it++) {
        sebt_fuzz_case c;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_generate(3, it, &c, &err), SEBT_OK, "%s", err.msg);
        const sebt_series *s = &c.series;
        tiny += s->n <= 2;
        if (s->n && sebt_series_is_missing(s, 0))
            missing_first++;
        bool holes = false;
        for (size_t t = 0; t < s->n; t++) {
            if (t)
                cr_assert_gt(s->ts[t], s->ts[t - 1]);
            if (sebt_series_is_missing(s, t)) {
                holes = true;
                continue;
            }
            double o = s->open[t], h = s->high[t], l = s->low[t], cl = s->close[t], v = s->volume[t];
            cr_assert(isfinite(o) && isfinite(h) && isfinite(l) && isfinite(cl) && isfinite(v));
            /* Volume spikes reach 10^15 (SPEC §1 asks only finite, >= 0). */
            cr_assert(l <= fmin(o, cl) && h >= fmax(o, cl) && l >= 0 && v >= 0 && v <= 1e16,
                      "case %llu bar %zu", (unsigned long long)it, t);
            flat_bars += h == l;
            zero_vol += v == 0;
            lo_price = fmin(lo_price, cl);
            hi_price = fmax(hi_price, cl);
        }
        with_holes += holes;
        for (size_t i = 0; i < c.n_combos; i++) {
            const sebt_params *p = &c.combos[i];
            cr_assert_eq(sebt_params_validate(p, &err), SEBT_OK, "%s", err.msg);
            long_windows += (size_t)p->z_window > s->n || (size_t)p->atr_window > s->n;
            hold1 += p->max_hold == 1;
            always += p->vol_z == -100 && p->tr_z == -100 && p->cloc_min == -1;
            never += p->vol_z == 100 || p->tr_z == 100 || p->cloc_min == 1;
        }
        sebt_fuzz_case_free(&c);
    }
    cr_expect_gt(tiny, 0);
    cr_expect_gt(with_holes, 40);
    cr_expect_gt(missing_first, 10);
    cr_expect_gt(flat_bars, 100);
    cr_expect_gt(zero_vol, 10);
    cr_expect_gt(long_windows, 20);
    cr_expect_gt(hold1, 20);
    cr_expect_gt(always, 5);
    cr_expect_gt(never, 20);
    cr_expect_lt(lo_price, 1e-3);
    cr_expect_gt(hi_price, 1e3);
}

/* The batch bugs, fuzzed as `sebt fuzz --self-test` fuzzes every mutant
 * (seed 5, 1,000 small cases, a big one after 500, no wide calls,
 * shrinking): each is
 * caught with its batch kept in the reproducer, where the combo alone
 * agrees; batch_restart at the smallest budget. That every mutant is
 * caught by that fuzz, each with a small reproducer of one combo (these
 * several), is test_cli_oracle's self_test_catches_every_mutant: the same
 * fuzz run once, not twice. */
Test(fuzz, batch_mutants_keep_their_batch, .timeout = 300)
{
    static const char *const batch_bugs[] = { "mutant:batch_restart", "mutant:shared_slow", "mutant:stamp_wrap",
                                              "mutant:split_skip", "mutant:tail_drop" };
    for (size_t k = 0; k < sizeof batch_bugs / sizeof batch_bugs[0]; k++) {
        const sebt_backend *b = NULL;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_mutant_get(batch_bugs[k] + strlen("mutant:"), &b, &err), SEBT_OK, "%s", err.msg);
        sebt_fuzz_opts o = { .seed = 5, .iterations = 1000, .big_every = 500, .shrink = true, .skip_wide = true };
        sebt_fuzz_report r;
        cr_assert_eq(sebt_fuzz_run(b, &o, &r, &err), SEBT_OK, "%s: %s", b->name, err.msg);
        cr_expect(r.found, "%s was not caught in %llu cases", b->name, (unsigned long long)r.cases_run);
        if (strcmp(b->name, "mutant:batch_restart") == 0)
            cr_expect_eq(r.repro_memory_budget, 1, "the smallest budget keeps the batches");
        if (strcmp(b->name, "mutant:stamp_wrap") == 0)
            cr_expect_geq(r.repro_n_combos, 257, "an 8-bit stamp wraps at 257 combos");
        /* Small sweeps (which split into batches) and big cases find them. */
        cr_expect_geq(r.repro_n_combos, 2, "%s: a batch bug keeps its batch", b->name);
        cr_expect(r.alone_agrees, "%s: alone the combo agrees, in its batch it does not", b->name);
        sebt_fuzz_report_free(&r);
    }
}

/* Small cases alone (no big ones) catch every mutant but the batch bug;
 * without the wide calls, as every mutants' fuzz runs (the self-test,
 * validate's anti-vacuity stage): its bugs show in smaller cases. */
Test(fuzz, another_seed_catches_them_too, .timeout = 240)
{
    for (size_t i = 0; i < sebt_mutant_count(); i++) {
        const sebt_backend *b = sebt_mutant_at(i);
        if (strcmp(b->name, "mutant:batch_restart") == 0 || strcmp(b->name, "mutant:far_hole") == 0)
            continue;   /* need a big case */
        sebt_fuzz_opts o = { .seed = 20240611, .iterations = 3000, .big_share = -1, .skip_wide = true,
                             .shrink = true };
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_run(b, &o, &r, &err), SEBT_OK, "%s: %s", b->name, err.msg);
        cr_expect(r.found, "%s was not caught", b->name);
        cr_expect_not(r.found_big);
        cr_expect_leq(r.repro.n, sebt_mutant_needs(i) ? 2500 : 50, "%s: reproducer of %zu bars", b->name,
                      r.repro.n);
        sebt_fuzz_report_free(&r);
    }
}

/* Big cases: long, holed, many combos on both sides of 10^6 bars x combos,
 * several threads, budgets down to 1 byte; a pure function of the seed. */
Test(fuzz, big_cases_reach_the_long_paths)
{
    size_t under = 0, over = 0, tiny_budget = 0, holes = 0, sweeps = 0, past_2_17 = 0;
    for (uint64_t it = 0; it < 12; it++) {
        sebt_fuzz_case c, d;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_generate_big(9, it, NULL, &c, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(sebt_fuzz_generate_big(9, it, NULL, &d, &err), SEBT_OK, "%s", err.msg);
        cr_expect(c.big);
        cr_expect(same_series(&c.series, &d.series));
        cr_expect_geq(c.threads, 2);
        if (c.n_combos > 65536) {
            /* A sweep past 65,536 combos on a short series. */
            cr_expect_leq(c.series.n, 150);
            sweeps++;
            sebt_fuzz_case_free(&c);
            sebt_fuzz_case_free(&d);
            continue;
        }
        cr_expect_geq(c.series.n, 100000);
        double work = (double)c.series.n * (double)c.n_combos;
        under += work < 1e6;
        over += work >= 1e6;
        tiny_budget += c.memory_budget == 1;
        holes += c.series.n_missing > 0;
        past_2_17 += c.series.n > 131072;
        for (size_t i = 0; i < c.n_combos; i++)
            cr_assert_eq(sebt_params_validate(&c.combos[i], &err), SEBT_OK, "%s", err.msg);
        sebt_fuzz_case_free(&c);
        sebt_fuzz_case_free(&d);
    }
    cr_expect_gt(under, 0);
    cr_expect_gt(over, 0);
    cr_expect_gt(tiny_budget, 0);
    cr_expect_gt(past_2_17, 0, "some big case reaches past 2^17 bars");
    cr_expect_eq(holes + sweeps, 12);
}

/* A case's largest volume against its median: a spike stands out. */
static double spike_ratio(const sebt_series *s)
{
    double mx = 0.0, v[4096];
    size_t k = 0;
    for (size_t t = 0; t < s->n && k < 4096; t++)
        if (!sebt_series_is_missing(s, t)) {
            v[k++] = s->volume[t];
            mx = fmax(mx, s->volume[t]);
        }
    double med = 0.0;
    for (size_t i = 0; i < k; i++) {
        size_t below = 0;
        for (size_t j = 0; j < k; j++)
            below += v[j] < v[i];
        if (below == k / 2)
            med = v[i];
    }
    return med > 0 ? mx / med : INFINITY;
}

/* "rolling z not recomputed after a 10^12 spike leaves the
 * window": mutant:z_stale slides M2 as fast_cpu does, without the
 * recompute when it collapses, and uses it as fast_cpu does (a pre-filter
 * 2^-20 wide, the exact z behind it), so only a collapse past ~2^32 loses
 * a signal. The fuzzer finds it; the shrunk reproducer is still a lost
 * trade (the kind it was found as); the same case is clean on the
 * mutants' correct base, the code without the bug. */
Test(fuzz, z_stale_is_caught_as_a_lost_trade, .timeout = 240)
{
    const sebt_backend *m = NULL, *base = &sebt_mutant_base_backend;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_mutant_get("z_stale", &m, &err), SEBT_OK, "%s", err.msg);
    sebt_fuzz_opts o = { .seed = 5, .iterations = 1000, .big_share = -1, .shrink = true };
    sebt_fuzz_report r;
    cr_assert_eq(sebt_fuzz_run(m, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert(r.found, "z_stale not caught in %llu cases", (unsigned long long)r.cases_run);
    cr_expect_str_eq(r.original.what, "trade count");
    cr_expect_str_eq(r.divergence.what, "trade count");
    cr_expect_lt(r.divergence.cand_value, r.divergence.ref_value, "a signal lost, not one made up");
    cr_expect_leq(r.repro.n, 50);
    /* The found case, run again: caught on the mutant, clean on the base. */
    sebt_fuzz_opts one = { .seed = 5, .one_case = true, .case_index = r.found_iteration, .shrink = false };
    sebt_fuzz_report again, clean;
    cr_assert_eq(sebt_fuzz_run(m, &one, &again, &err), SEBT_OK, "%s", err.msg);
    cr_expect(again.found);
    cr_expect_str_eq(again.divergence.what, r.original.what);
    cr_assert_eq(sebt_fuzz_run(base, &one, &clean, &err), SEBT_OK, "%s", err.msg);
    cr_expect_not(clean.found, "the base diverged: %s", clean.divergence.what);
    sebt_fuzz_report_free(&again);
    sebt_fuzz_report_free(&clean);
    sebt_fuzz_report_free(&r);
    /* The 10^12-10^15 spike cases alone catch it: the first such case of
     * seed 5 that z_stale fails is found by the spike generator, and its
     * spike (10^12 x the median volume) is in the case. */
    bool spiked = false;
    for (uint64_t it = 0; it < 20000 && !spiked; it++) {
        sebt_fuzz_case c;
        cr_assert_eq(sebt_fuzz_generate(5, it, &c, &err), SEBT_OK, "%s", err.msg);
        if (strstr(c.shape, "a volume spike") && spike_ratio(&c.series) > 1e9) {
            sebt_fuzz_opts k = { .seed = 5, .one_case = true, .case_index = it };
            sebt_fuzz_report kr;
            cr_assert_eq(sebt_fuzz_run(m, &k, &kr, &err), SEBT_OK, "%s", err.msg);
            spiked = kr.found;
            sebt_fuzz_report_free(&kr);
        }
        sebt_fuzz_case_free(&c);
    }
    cr_expect(spiked, "no spike case of seed 5 catches z_stale");
}

/* "a fault only after bar 100,000": mutant:far_hole takes the
 * close before a hole as TR's previous close, but only past bar 100,000
 * (a hole mask of 10^5 bars). No small case reaches it; big cases put
 * holes there, and the first big case of seed 1 catches it past that bar,
 * while the correct base passes the same case. */
Test(fuzz, far_hole_is_caught_past_bar_100000, .timeout = 300)
{
    const sebt_backend *m = NULL, *base = &sebt_mutant_base_backend;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_mutant_get("far_hole", &m, &err), SEBT_OK, "%s", err.msg);
    /* Small cases alone never see it (the wide calls, of at most 240 bars,
     * cannot reach bar 100,000 either, and are left out). */
    sebt_fuzz_opts small = { .seed = 1, .iterations = 3000, .big_share = -1, .skip_wide = true };
    sebt_fuzz_report r;
    cr_assert_eq(sebt_fuzz_run(m, &small, &r, &err), SEBT_OK, "%s", err.msg);
    cr_expect_not(r.found, "found by a small case: %s", r.divergence.what);
    sebt_fuzz_report_free(&r);
    /* Big cases hold holes past bar 100,000. */
    size_t far_holes = 0, long_ones = 0;
    for (uint64_t it = 0; it < 12; it++) {
        sebt_fuzz_case c;
        cr_assert_eq(sebt_fuzz_generate_big(1, it, NULL, &c, &err), SEBT_OK, "%s", err.msg);
        if (c.series.n > 100001) {
            long_ones++;
            for (size_t t = 100001; t < c.series.n; t++)
                if (sebt_series_is_missing(&c.series, t)) {
                    far_holes++;
                    break;
                }
        }
        sebt_fuzz_case_free(&c);
    }
    cr_expect_gt(long_ones, 6);
    cr_expect_eq(far_holes, long_ones, "every big case past 100,000 bars has a hole there");
    sebt_fuzz_report caught, clean;
    for (uint64_t it = 0; it < 3; it++) {
        sebt_fuzz_opts one = { .seed = 1, .one_case = true, .one_big = true, .case_index = it };
        /* Big case 0 as validate's hunt for this mutant runs it: its first
         * case (big_first), not after 500 small ones. */
        sebt_fuzz_opts hunt = { .seed = 1, .iterations = 1, .big_every = 500, .big_first = true, .skip_wide = true };
        cr_assert_eq(sebt_fuzz_run(m, it == 0 ? &hunt : &one, &caught, &err), SEBT_OK, "%s", err.msg);
        if (it == 0)
            cr_expect(caught.cases_run == 1 && caught.paths.big_cases == 1, "the hunt's first case: %llu run, %llu big",
                      (unsigned long long)caught.cases_run, (unsigned long long)caught.paths.big_cases);
        if (!caught.found) {
            sebt_fuzz_report_free(&caught);
            continue;
        }
        cr_expect_geq(caught.divergence.bar, 100000, "found at bar %lld: %s", (long long)caught.divergence.bar,
                      caught.divergence.what);
        cr_assert_eq(sebt_fuzz_run(base, &one, &clean, &err), SEBT_OK, "%s", err.msg);
        cr_expect_not(clean.found, "the base diverged: %s", clean.divergence.what);
        sebt_fuzz_report_free(&clean);
        sebt_fuzz_report_free(&caught);
        return;
    }
    cr_assert_fail("none of the first 3 big cases of seed 1 catches far_hole");
}

/* Streams of one seed are disjoint case sequences (MPI ranks, shards). */
Test(fuzz, streams_give_other_cases)
{
    cr_expect_eq(sebt_fuzz_stream_seed(7, 0), 7);
    cr_expect_neq(sebt_fuzz_stream_seed(7, 1), sebt_fuzz_stream_seed(7, 2));
    cr_expect_neq(sebt_fuzz_stream_seed(7, 1), 7);
}

Test(fuzz, the_reference_and_the_correct_base_stay_clean, .timeout = 240)
{
    const sebt_backend *subjects[] = { &sebt_reference_backend, &sebt_mutant_base_backend };
    for (size_t i = 0; i < 2; i++) {
        sebt_fuzz_opts o = { .seed = 5, .iterations = 400, .big_share = -1, .shrink = false };
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_run(subjects[i], &o, &r, &err), SEBT_OK, "%s", err.msg);
        cr_expect_not(r.found, "%s diverged in case %llu: %s at bar %lld: %s", subjects[i]->name,
                      (unsigned long long)r.found_iteration, r.divergence.what,
                      (long long)r.divergence.bar, r.divergence.detail);
        cr_expect_eq(r.cases_run, 400);
        sebt_fuzz_report_free(&r);
    }
}

Test(fuzz, a_run_needs_a_bound)
{
    sebt_fuzz_opts o = { .seed = 1 };
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    cr_expect_eq(sebt_fuzz_run(&sebt_reference_backend, &o, &r, &err), SEBT_ERR_USAGE);
}
