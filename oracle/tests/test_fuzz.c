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


/* Field by field: struct padding makes memcmp of sebt_params meaningless. */
static bool same_params(const sebt_params *a, const sebt_params *b)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        double x = sebt_params_get_double(a, i), y = sebt_params_get_double(b, i);
        if (memcmp(&x, &y, sizeof x) != 0)
            return false;
    }
    return true;
}

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
            cr_expect(same_params(&a.combos[i], &b.combos[i]), "case %llu combo %zu", (unsigned long long)it, i);
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

/* The self-test of `sebt fuzz --self-test`, bounded: every mutant caught
 * within 30 s (in practice a few seconds) with <= 50 bars, or with what its
 * bug needs (a block boundary: 513 bars). The batch bug needs several
 * batches: a sweep-shaped small case or a big one, with a batch of combos. */
Test(fuzz, every_mutant_is_caught_with_a_small_reproducer, .timeout = 300)
{
    cr_assert_geq(sebt_mutant_count(), 25);
    for (size_t i = 0; i < sebt_mutant_count(); i++) {
        const sebt_backend *b = sebt_mutant_at(i);
        sebt_fuzz_opts o = { .seed = 1, .iterations = 100000, .time_s = 30, .shrink = true };
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_run(b, &o, &r, &err), SEBT_OK, "%s: %s", b->name, err.msg);
        cr_expect(r.found, "%s was not caught in %llu cases", b->name, (unsigned long long)r.cases_run);
        if (sebt_mutant_needs(i))
            cr_expect_leq(r.repro.n, 600, "%s: reproducer of %zu bars", b->name, r.repro.n);
        else
            cr_expect_leq(r.repro.n, 50, "%s: reproducer of %zu bars", b->name, r.repro.n);
        cr_expect_lt(r.seconds_to_find, 30.0, "%s", b->name);
        static const char *const batch_bugs[] = { "mutant:batch_restart", "mutant:shared_slow", "mutant:stamp_wrap",
                                                  "mutant:split_skip", "mutant:tail_drop" };
        bool batch_bug = false;
        for (size_t k = 0; k < sizeof batch_bugs / sizeof batch_bugs[0]; k++)
            batch_bug |= strcmp(b->name, batch_bugs[k]) == 0;
        if (strcmp(b->name, "mutant:batch_restart") == 0)
            cr_expect_eq(r.repro_memory_budget, 1, "the smallest budget keeps the batches");
        if (strcmp(b->name, "mutant:stamp_wrap") == 0)
            cr_expect_geq(r.repro_n_combos, 257, "an 8-bit stamp wraps at 257 combos");
        if (batch_bug) {
            /* Small sweeps (which split into batches) and big cases find them. */
            cr_expect_geq(r.repro_n_combos, 2, "%s: a batch bug keeps its batch", b->name);
        } else {
            cr_expect_eq(r.repro_n_combos, 1, "%s: one combo shows it", b->name);
        }
        sebt_fuzz_report_free(&r);
    }
}

/* Small cases alone (no big ones) catch every mutant but the batch bug. */
Test(fuzz, another_seed_catches_them_too, .timeout = 240)
{
    for (size_t i = 0; i < sebt_mutant_count(); i++) {
        const sebt_backend *b = sebt_mutant_at(i);
        if (strcmp(b->name, "mutant:batch_restart") == 0)
            continue;
        sebt_fuzz_opts o = { .seed = 20240611, .iterations = 100000, .time_s = 30, .big_share = -1,
                             .shrink = true };
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_run(b, &o, &r, &err), SEBT_OK, "%s: %s", b->name, err.msg);
        cr_expect(r.found, "%s was not caught", b->name);
        cr_expect_not(r.found_big);
        cr_expect_leq(r.repro.n, sebt_mutant_needs(i) ? 600 : 50, "%s: reproducer of %zu bars", b->name,
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
