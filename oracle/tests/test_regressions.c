/* Every fixture under fixtures/regressions/ is replayed, forever: the
 * reference must still produce what it wrote down, and every backend built
 * here (reference, fast_cpu, cuda when a device is usable, and the
 * mutants' correct base) must agree with the reference on it. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sebt/backends.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

#define REGRESSIONS SEBT_FIXTURES_DIR "/regressions"

static bool same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void check_expected(const char *name, const sebt_fixture *f)
{
    sebt_result got = { 0 };
    sebt_error err = { 0 };
    sebt_batch_opts o = { .threads = 1, .want_trades = true };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, &f->series, &f->params, 1, &o,
                                                  &got, &err), SEBT_OK, "%s: %s", name, err.msg);
    const sebt_result *want = &f->expected;
    cr_expect_eq(got.valid_bars, want->valid_bars, "%s: valid_bars", name);
    cr_expect_eq(got.n_trades, want->n_trades, "%s: trades", name);
    for (size_t i = 0; i < got.n_trades && i < want->n_trades; i++) {
        const sebt_trade *a = &got.trades[i], *b = &want->trades[i];
        cr_expect(a->signal_index == b->signal_index && a->entry_index == b->entry_index &&
                  a->exit_index == b->exit_index && a->reason == b->reason && a->bars_held == b->bars_held &&
                  same_bits(a->exit_price, b->exit_price) && same_bits(a->pnl, b->pnl) &&
                  same_bits(a->r, b->r), "%s: trade %zu differs from expected.json", name, i);
    }
    cr_expect_eq(got.open_at_end.open, want->open_at_end.open, "%s: open_at_end", name);
    cr_expect_eq(got.metrics.n, want->metrics.n, "%s", name);
    cr_expect(same_bits(got.metrics.total_pnl, want->metrics.total_pnl), "%s: total_pnl", name);
    cr_expect(same_bits(got.metrics.sharpe, want->metrics.sharpe), "%s: sharpe", name);
    cr_expect(same_bits(got.metrics.max_dd, want->metrics.max_dd), "%s: max_dd", name);
    sebt_result_free(&got);
}

static void check_backend(const char *name, const sebt_fixture *f, const sebt_backend *b)
{
    sebt_oracle_report r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_oracle_check(b, &f->series, &f->params, 1, NULL, &r, &err), SEBT_OK, "%s on %s: %s",
                 name, b->name, err.msg);
    cr_expect_eq(r.combos_diverged, 0, "%s: %s diverges: %s at bar %lld: %s", name, b->name,
                 r.n_details ? r.details[0].what : "", r.n_details ? (long long)r.details[0].bar : -1LL,
                 r.n_details ? r.details[0].detail : "");
}

Test(regressions, every_fixture_against_every_backend, .timeout = 300)
{
    DIR *d = opendir(REGRESSIONS);
    cr_assert(d, "cannot open %s", REGRESSIONS);
    const sebt_backend *backends[4];
    size_t nb = 0;
    const char *names[] = { "reference", "fast_cpu", "cuda" };
    for (size_t i = 0; i < 3; i++) {
        sebt_error err = { 0 };
        const sebt_backend *b;
        if (sebt_backend_get(names[i], &b, &err) == SEBT_OK)
            backends[nb++] = b;
        else
            cr_log_info("regressions: %s skipped: %s", names[i], err.msg);
    }
    backends[nb++] = &sebt_mutant_base_backend;
    size_t seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", REGRESSIONS, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        sebt_fixture f;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_fixture_read(path, &f, &err), SEBT_OK, "%s", err.msg);
        check_expected(e->d_name, &f);
        for (size_t i = 0; i < nb; i++)
            check_backend(e->d_name, &f, backends[i]);
        sebt_fixture_free(&f);
        seen++;
    }
    closedir(d);
    cr_expect_gt(seen, 0, "no fixture under %s", REGRESSIONS);
}
