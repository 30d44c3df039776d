/* Out of memory in the oracle's paths, each allocation failing in turn:
 * a call is made once without a fault to count its allocations, then once
 * with each of them failing. The test binary is linked with
 * -Wl,--wrap=malloc,calloc,realloc,strdup, as sebt_faultsim is, so every
 * allocation of the static libraries goes through the wrappers below
 * (Criterion's own, in its shared library, do not).
 *
 * run_batch, for every backend in this process (the reference, fast_cpu,
 * every mutant): each call must end as SEBT_ERR_NOMEM with no result
 * holding trades (the caller, e.g. the oracle's run_check, frees only its
 * array: a result left filled leaks), or as SEBT_OK with the bits of the
 * run without a fault (a backend may work around a failure with smaller
 * batches). Regression: the mutants' run_batch returned a failure with the
 * earlier combos' trades still attached (validate's anti-vacuity stage
 * under cli_faultsim: 4 kB and 184 kB leaked).
 *
 * sebt_fuzz_run that finds a mutant and shrinks it: each call must end as
 * SEBT_ERR_NOMEM with nothing left in the report (its callers free a report
 * only after SEBT_OK), or find the same divergence. Regression: the case
 * that diverged had moved into the report, and an allocation failing while
 * it was checked again leaked it (103 kB of a sweep's combos and its bars,
 * validate with allocation 963,167 of 972,058 failing). Leaks themselves
 * are seen by the sanitized pass's leak check. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/oracle.h"
#include "sebt/sebt.h"

#ifdef __SANITIZE_ADDRESS__
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libcriterion.so\n"; }
#endif

#include "../../core/tests/alloc_wrap.h"

/* Counting only while armed, so the test's own set-up is never failed. */
static bool armed;
static unsigned long allocs, fail_at;

static bool fail_now(void)
{
    return armed && ++allocs == fail_at;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fail_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fail_now() ? NULL : __real_strdup(s); }

#define N_COMBOS 4

static sebt_series series;
static sebt_params combos[N_COMBOS];

/* 800 bars of real data and the four combos cli_faultsim sweeps: every
 * combo trades, so a result left behind holds trades. */
static void setup(void)
{
    sebt_series all;
    sebt_load_opts lo = { 0 };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz", &lo, &all, &err), SEBT_OK, "%s",
                 err.msg);
    cr_assert_eq(sebt_series_slice(&all, 0, 800, &series, &err), SEBT_OK, "%s", err.msg);
    sebt_series_free(&all);
    for (size_t i = 0; i < N_COMBOS; i++) {
        combos[i] = sebt_params_default();
        combos[i].ema_fast = i < 2 ? 2 : 4;
        combos[i].ema_slow = 8;
        combos[i].z_window = 5;
        combos[i].atr_window = 3;
        combos[i].vol_z = (double)(i % 2);
        combos[i].tr_z = 0;
        combos[i].cloc_min = 0.3;
    }
}

static void teardown(void)
{
    sebt_series_free(&series);
}

TestSuite(batch_nomem, .init = setup, .fini = teardown);

static sebt_status run(const sebt_backend *b, size_t budget, unsigned long nth, sebt_result *res,
                       unsigned long *made, sebt_error *err)
{
    memset(res, 0, N_COMBOS * sizeof *res);
    sebt_batch_opts o = { .threads = 1, .want_trades = true, .memory_budget = budget };
    allocs = 0;
    fail_at = nth;
    armed = true;
    sebt_status st = b->run_batch(b, &series, combos, N_COMBOS, &o, res, err);
    armed = false;
    *made = allocs;
    return st;
}

static bool same_result(const sebt_result *a, const sebt_result *b)
{
    return a->n_trades == b->n_trades && a->valid_bars == b->valid_bars &&
           memcmp(&a->metrics, &b->metrics, sizeof a->metrics) == 0 &&
           (a->n_trades == 0 || memcmp(a->trades, b->trades, a->n_trades * sizeof *a->trades) == 0);
}

/* Returns how many of the backend's allocations failed cleanly. */
static unsigned long every_allocation(const sebt_backend *b, size_t budget)
{
    sebt_result want[N_COMBOS], got[N_COMBOS];
    sebt_error err = { 0 };
    unsigned long total, made;
    cr_assert_eq(run(b, budget, 0, want, &total, &err), SEBT_OK, "%s: %s", b->name, err.msg);
    size_t traded = 0;
    for (size_t i = 0; i < N_COMBOS; i++)
        traded += want[i].n_trades > 0;
    /* A mutant may lose a combo's trades (split_skip); one left is enough. */
    cr_assert_gt(traded, 0, "%s: nothing trades on these bars", b->name);
    unsigned long nomem = 0;
    for (unsigned long k = 1; k <= total; k++) {
        err = (sebt_error){ 0 };
        sebt_status st = run(b, budget, k, got, &made, &err);
        if (st == SEBT_OK) {
            for (size_t i = 0; i < N_COMBOS; i++)
                cr_expect(same_result(&got[i], &want[i]), "%s, budget %zu, allocation %lu of %lu failing: "
                          "recovered, but combo %zu differs", b->name, budget, k, total, i);
            sebt_results_free(got, N_COMBOS);
            continue;
        }
        nomem++;
        cr_expect_eq(st, SEBT_ERR_NOMEM, "%s, budget %zu, allocation %lu of %lu failing: %s (%s)", b->name,
                     budget, k, total, sebt_status_name(st), err.msg);
        for (size_t i = 0; i < N_COMBOS; i++) {
            cr_expect(got[i].trades == NULL, "%s, budget %zu, allocation %lu of %lu failing: combo %zu keeps "
                      "%zu trades after the call failed", b->name, budget, k, total, i, got[i].n_trades);
            /* Freed here so one finding does not also fail the leak check. */
            sebt_result_free(&got[i]);
        }
    }
    sebt_results_free(want, N_COMBOS);
    return nomem;
}

static void each_budget(const sebt_backend *b)
{
    /* The default budget: one batch; 1 byte: a batch per combo, so a failure
     * also lands after whole batches were written. */
    cr_expect_gt(every_allocation(b, 0), 0, "%s: no allocation failure was reported", b->name);
    every_allocation(b, 1);
}

Test(batch_nomem, reference)
{
    each_budget(&sebt_reference_backend);
}

Test(batch_nomem, fast_cpu)
{
    const sebt_backend *b;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("fast_cpu", &b, &err), SEBT_OK, "%s", err.msg);
    each_budget(b);
}

Test(batch_nomem, every_mutant)
{
    each_budget(&sebt_mutant_base_backend);
    for (size_t i = 0; i < sebt_mutant_count(); i++)
        each_budget(sebt_mutant_at(i));
}

/* A mutant the first small cases catch (fee_one_side: case 1), so the
 * finding and its re-runs take a few hundred allocations: each is failed.
 * The shrinker's take thousands: every STRIDE-th is. */
static void fuzz_every_allocation(bool shrink, unsigned long stride)
{
    const sebt_backend *m;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_mutant_get("mutant:fee_one_side", &m, &err), SEBT_OK, "%s", err.msg);
    sebt_fuzz_opts o = { .seed = 1, .iterations = 20, .big_share = -1, .shrink = shrink };
    sebt_fuzz_report want, got;
    allocs = 0;
    fail_at = 0;
    armed = true;
    sebt_status st = sebt_fuzz_run(m, &o, &want, &err);
    armed = false;
    unsigned long total = allocs;
    cr_assert_eq(st, SEBT_OK, "%s", err.msg);
    cr_assert(want.found, "fee_one_side should be caught");
    unsigned long nomem = 0;
    for (unsigned long k = 1; k <= total; k += stride) {
        err = (sebt_error){ 0 };
        allocs = 0;
        fail_at = k;
        armed = true;
        st = sebt_fuzz_run(m, &o, &got, &err);
        armed = false;
        if (st == SEBT_OK) {
            /* The shrinker takes a check that fails as "no divergence", so
             * its reproducer may be a larger one: the finding is the same. */
            cr_expect(got.found && got.found_iteration == want.found_iteration &&
                      strcmp(got.original.what, want.original.what) == 0,
                      "shrink %d, allocation %lu of %lu failing: SEBT_OK, but not the same finding", shrink, k,
                      total);
            sebt_fuzz_report_free(&got);
            continue;
        }
        nomem++;
        cr_expect_eq(st, SEBT_ERR_NOMEM, "shrink %d, allocation %lu of %lu failing: %s (%s)", shrink, k, total,
                     sebt_status_name(st), err.msg);
        cr_expect(got.repro.n == 0 && got.repro.close == NULL && got.repro_combos == NULL,
                  "shrink %d, allocation %lu of %lu failing: the failed run left a case of %zu bars in its report",
                  shrink, k, total, got.repro.n);
        sebt_fuzz_report_free(&got);
    }
    cr_expect_gt(nomem, 0, "no allocation failure was reported");
    sebt_fuzz_report_free(&want);
}

Test(fuzz_nomem, a_finding)
{
    fuzz_every_allocation(false, 1);
}

Test(fuzz_nomem, a_finding_shrunk)
{
    fuzz_every_allocation(true, 17);
}
