/* The shrinker: a large diverging case comes back at <= 50 bars and still
 * diverges; a fixture written from it reads back as the reference said. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sebt/backends.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

/* A generated case of at least min_bars on which b diverges. */
static bool find_big_case(const sebt_backend *b, size_t min_bars, sebt_series *s, sebt_params *p)
{
    for (uint64_t it = 300; it < 3000; it++) {
        sebt_fuzz_case c;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fuzz_generate(11, it, &c, &err), SEBT_OK, "%s", err.msg);
        if (c.series.n < min_bars) {
            sebt_fuzz_case_free(&c);
            continue;
        }
        for (size_t i = 0; i < c.n_combos; i++) {
            sebt_oracle_report r;
            cr_assert_eq(sebt_oracle_check(b, &c.series, &c.combos[i], 1, NULL, &r, &err), SEBT_OK, "%s", err.msg);
            if (r.combos_diverged) {
                *s = c.series;
                *p = c.combos[i];
                c.series = (sebt_series){ 0 };   /* moved to *s */
                sebt_fuzz_case_free(&c);
                return true;
            }
        }
        sebt_fuzz_case_free(&c);
    }
    return false;
}

static void shrink_one(const char *mutant)
{
    const sebt_backend *b;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_mutant_get(mutant, &b, &err), SEBT_OK, "%s", err.msg);
    sebt_series s;
    sebt_params p;
    cr_assert(find_big_case(b, 400, &s, &p), "no large diverging case for %s", mutant);
    size_t before = s.n;
    sebt_divergence d;
    cr_assert_eq(sebt_oracle_shrink(b, &s, &p, &d, &err), SEBT_OK, "%s", err.msg);
    cr_expect_leq(s.n, 50, "%s: %zu bars shrunk to %zu", mutant, before, s.n);
    sebt_oracle_report r;
    cr_assert_eq(sebt_oracle_check(b, &s, &p, 1, NULL, &r, &err), SEBT_OK, "%s", err.msg);
    cr_expect_eq(r.combos_diverged, 1, "the shrunk case still diverges");
    cr_expect_eq(sebt_series_check(&s, &err), SEBT_OK, "%s", err.msg);
    sebt_series_free(&s);
}

Test(shrink, overlapping_positions_shrink_to_50_bars_or_fewer, .timeout = 120) { shrink_one("mutant:overlap"); }
Test(shrink, tp_before_stop_shrinks_to_50_bars_or_fewer, .timeout = 120) { shrink_one("mutant:tp_first"); }
Test(shrink, sma_shrinks_to_50_bars_or_fewer, .timeout = 120) { shrink_one("mutant:sma"); }

Test(shrink, a_case_that_does_not_diverge_is_refused)
{
    sebt_fuzz_case c;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fuzz_generate(1, 5, &c, &err), SEBT_OK);
    sebt_divergence d;
    cr_expect_eq(sebt_oracle_shrink(&sebt_reference_backend, &c.series, &c.combos[0], &d, &err), SEBT_ERR_USAGE);
    sebt_fuzz_case_free(&c);
}

Test(shrink, a_fixture_reads_back_as_the_reference_wrote_it)
{
    char dir[] = "/tmp/sebt-fixture-XXXXXX";
    cr_assert(mkdtemp(dir));
    sebt_fuzz_case c;
    sebt_error err = { 0 };
    /* A case with trades, so the fixture carries some. */
    uint64_t it = 0;
    sebt_result want = { 0 };
    sebt_batch_opts o = { .threads = 1, .want_trades = true };
    for (;; it++) {
        cr_assert_lt(it, 500, "no generated case with two trades");
        cr_assert_eq(sebt_fuzz_generate(2, it, &c, &err), SEBT_OK);
        cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, &c.series, &c.combos[0], 1,
                                                      &o, &want, &err), SEBT_OK, "%s", err.msg);
        if (want.n_trades >= 2 && c.series.n_missing > 0)
            break;
        sebt_result_free(&want);
        sebt_fuzz_case_free(&c);
    }
    char path[1024];
    cr_assert_eq(sebt_fixture_write(dir, "case", &c.series, &c.combos[0], "a test\n", path, sizeof path, &err),
                 SEBT_OK, "%s", err.msg);
    sebt_fixture f;
    cr_assert_eq(sebt_fixture_read(path, &f, &err), SEBT_OK, "%s", err.msg);
    cr_expect_eq(f.series.n, c.series.n);
    for (size_t t = 0; t < c.series.n; t++) {
        cr_expect_eq(f.series.ts[t], c.series.ts[t]);
        cr_expect(memcmp(&f.series.close[t], &c.series.close[t], sizeof(double)) == 0 ||
                  (isnan(f.series.close[t]) && isnan(c.series.close[t])), "bar %zu", t);
    }
    cr_expect(sebt_params_same(&f.params, &c.combos[0]));
    cr_expect_eq(f.expected.n_trades, want.n_trades);
    for (size_t i = 0; i < want.n_trades && i < f.expected.n_trades; i++) {
        cr_expect_eq(f.expected.trades[i].exit_index, want.trades[i].exit_index);
        cr_expect_eq(f.expected.trades[i].reason, want.trades[i].reason);
        cr_expect_eq(memcmp(&f.expected.trades[i].pnl, &want.trades[i].pnl, sizeof(double)), 0);
    }
    cr_expect_eq(f.expected.metrics.n, want.metrics.n);
    cr_expect_eq(memcmp(&f.expected.metrics.sharpe, &want.metrics.sharpe, sizeof(double)), 0);
    sebt_fixture_free(&f);
    sebt_result_free(&want);
    sebt_fuzz_case_free(&c);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(shrink, params_files_name_the_line_of_a_bad_value)
{
    char path[] = "/tmp/sebt-params-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char text[] = "# a comment\nema_fast=5\nz_window=abc\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    sebt_params p = sebt_params_default();
    sebt_error err = { 0 };
    cr_expect_eq(sebt_params_read_file(path, &p, &err), SEBT_ERR_PARAM);
    cr_expect(strstr(err.msg, ":3:") != NULL && strstr(err.msg, "z_window") != NULL, "%s", err.msg);
    cr_expect_eq(p.ema_fast, 5);
    unlink(path);
}
