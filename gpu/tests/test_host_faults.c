/* Host execution only (SEBT_CUDA_LIBRARY = libsebt_cuda_host.so): the cuda
 * backend under injected device faults. Every sweep must end one of two
 * ways: the bits fast_cpu gives (metrics and trades), or a clean
 * SEBT_ERR_NOMEM with every result freed (ASan's leak check runs on it).
 * The sweep also counts what happened, so it cannot pass by never reaching
 * the split it exists to test. A single failed allocation anywhere (series,
 * batch, exit memo, chunk) must no longer end the sweep: the batch splits
 * or the series is uploaded again, and the bits are fast_cpu's. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "device_main.h"
#include "sweep_fixture.h"

static sebt_series series;
static sebt_params combos[FIXTURE_COMBOS];
static sebt_result expect_t[FIXTURE_COMBOS], expect_m[FIXTURE_COMBOS];
static size_t base_chunks, base_batches;   /* of a sweep without faults */

static void setup(void)
{
    fixture_series(&series);
    fixture_combos(combos);
    const sebt_backend *fast;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK);
    sebt_batch_opts t = { .threads = 2, .want_trades = true }, m = { .threads = 2 };
    memset(expect_t, 0, sizeof expect_t);
    memset(expect_m, 0, sizeof expect_m);
    cr_assert_eq(fast->run_batch(fast, &series, combos, FIXTURE_COMBOS, &t, expect_t, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(fast->run_batch(fast, &series, combos, FIXTURE_COMBOS, &m, expect_m, &err), SEBT_OK, "%s", err.msg);
    const sebt_backend *cuda;
    cr_assert_eq(sebt_backend_get("cuda", &cuda, &err), SEBT_OK, "%s", err.msg);
    sebt_result r[FIXTURE_COMBOS];
    sebt_batch_stats st = { 0 };
    sebt_batch_opts o = { .threads = 2, .stats = &st };
    cr_assert_eq(cuda->run_batch(cuda, &series, combos, FIXTURE_COMBOS, &o, r, &err), SEBT_OK, "%s", err.msg);
    sebt_results_free(r, FIXTURE_COMBOS);
    base_chunks = st.chunks;
    base_batches = st.batches;
}

static void teardown(void)
{
    sebt_results_free(expect_t, FIXTURE_COMBOS);
    sebt_results_free(expect_m, FIXTURE_COMBOS);
    sebt_series_free(&series);
}

TestSuite(host_faults, .init = setup, .fini = teardown);

static const char *const fault_vars[] = { "SEBT_CUDA_HOST_MEMORY", "SEBT_CUDA_HOST_FAIL_NTH", "SEBT_CUDA_HOST_FAIL_P",
                                          "SEBT_CUDA_HOST_SEED", "SEBT_CUDA_HOST_FAIL_MEMINFO" };

static void clear_faults(void)
{
    for (size_t i = 0; i < sizeof fault_vars / sizeof fault_vars[0]; i++)
        unsetenv(fault_vars[i]);
}

static bool same_bits(const sebt_result *a, const sebt_result *b, bool trades)
{
    if (memcmp(&a->metrics, &b->metrics, sizeof a->metrics) || a->n_trades != b->n_trades
        || a->valid_bars != b->valid_bars || a->open_at_end.open != b->open_at_end.open)
        return false;
    if (!trades)
        return b->trades == NULL;
    for (size_t k = 0; k < a->n_trades; k++)
        if (a->trades[k].exit_index != b->trades[k].exit_index || a->trades[k].reason != b->trades[k].reason
            || memcmp(&a->trades[k].entry_price, &b->trades[k].entry_price, 7 * sizeof(double)))
            return false;
    return true;
}

typedef struct {
    int same, nomem, split, batch_split;
} tally;

/* One cuda sweep under the faults now in the environment. */
static void run_one(const char *label, bool trades, tally *t)
{
    const sebt_backend *cuda;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("cuda", &cuda, &err), SEBT_OK, "%s", err.msg);
    sebt_result r[FIXTURE_COMBOS];
    memset(r, 0x5a, sizeof r);   /* the backend must not trust what it is given */
    sebt_batch_stats st = { 0 };
    sebt_batch_opts o = { .threads = 2, .want_trades = trades, .stats = &st };
    sebt_status s = cuda->run_batch(cuda, &series, combos, FIXTURE_COMBOS, &o, r, &err);
    if (getenv("SEBT_TEST_VERBOSE"))
        fprintf(stderr, "%s: %s chunks %zu batches %zu: %s\n", label, sebt_status_name(s), st.chunks, st.batches, err.msg);
    if (s == SEBT_ERR_NOMEM) {
        cr_assert_not_null(strstr(err.msg, "out of"), "%s: %s", label, err.msg);
        t->nomem++;
        return;
    }
    cr_assert_eq(s, SEBT_OK, "%s: %s (%s)", label, sebt_status_name(s), err.msg);
    const sebt_result *expect = trades ? expect_t : expect_m;
    for (size_t i = 0; i < FIXTURE_COMBOS; i++)
        cr_assert(same_bits(&expect[i], &r[i], trades), "%s: combo %zu differs from fast_cpu", label, i);
    t->same++;
    t->split += st.chunks > base_chunks || st.batches > 1;
    t->batch_split += st.batches > base_batches;
    sebt_results_free(r, FIXTURE_COMBOS);
}

/* Device sizes from plenty down to too small for the series itself. */
Test(host_faults, memory_sizes)
{
    static const char *sizes[] = { "64M", "4M", "1M", "640K", "600K", "64K" };
    tally t = { 0 };
    for (int trades = 0; trades < 2; trades++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            clear_faults();
            setenv("SEBT_CUDA_HOST_MEMORY", sizes[i], 1);
            char label[64];
            snprintf(label, sizeof label, "memory %s, trades %d", sizes[i], trades);
            run_one(label, trades, &t);
        }
    clear_faults();
    cr_assert_gt(t.same, 4, "same %d", t.same);
    cr_assert_gt(t.nomem, 0, "nomem %d", t.nomem);
}

/* The Nth device allocation fails, for every N from the series' uploads
 * through the batch's candidates and bitsets, the exit memos and the
 * chunks, to past the sweep's last allocation: one failure never ends the
 * sweep; the bits are fast_cpu's, and for many N the work had to split
 * (a wave of exit keys whose memos failed halves; a batch whose
 * candidates or bitsets failed, or a one-key wave's memo, runs as two
 * halves). */
Test(host_faults, nth_allocation)
{
    tally t = { 0 };
    for (int trades = 0; trades < 2; trades++)
        for (int n = 1; n <= 60; n += 1 + trades) {
            clear_faults();
            char v[16], label[64];
            snprintf(v, sizeof v, "%d", n);
            setenv("SEBT_CUDA_HOST_FAIL_NTH", v, 1);
            snprintf(label, sizeof label, "allocation %d fails, trades %d", n, trades);
            run_one(label, trades, &t);
        }
    clear_faults();
    cr_assert_eq(t.nomem, 0, "a single failed allocation ended %d sweeps", t.nomem);
    cr_assert_gt(t.split, 15, "splits %d", t.split);
    cr_assert_gt(t.batch_split, 4, "batch splits %d", t.batch_split);
}

/* Allocations fail at random, reproducibly: every sweep ends with
 * fast_cpu's bits or a clean NOMEM. */
Test(host_faults, seeded_probability)
{
    static const char *ps[] = { "0.02", "0.05", "0.1" };
    tally t = { 0 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (int seed = 1; seed <= 3; seed++) {
            clear_faults();
            char v[16], label[64];
            snprintf(v, sizeof v, "%d", seed);
            setenv("SEBT_CUDA_HOST_FAIL_P", ps[i], 1);
            setenv("SEBT_CUDA_HOST_SEED", v, 1);
            snprintf(label, sizeof label, "p %s seed %d", ps[i], seed);
            run_one(label, seed % 2, &t);
        }
    clear_faults();
    /* Failures this dense can hit one combo twice in a row (a clean
     * NOMEM); most sweeps must still finish, having split their batches. */
    cr_assert_eq(t.same + t.nomem, 9);
    cr_assert_gt(t.same, 3, "same %d", t.same);
    cr_assert_gt(t.split, 2, "splits %d", t.split);
    cr_assert_gt(t.batch_split, 0, "batch splits %d", t.batch_split);
}

/* cudaMemGetInfo failing used to make every chunk one combo: now the
 * device's total memory stands in and the chunks are the same. */
Test(host_faults, meminfo_failure_keeps_chunks)
{
    clear_faults();
    setenv("SEBT_CUDA_HOST_FAIL_MEMINFO", "1", 1);
    const sebt_backend *cuda;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("cuda", &cuda, &err), SEBT_OK, "%s", err.msg);
    sebt_result r[FIXTURE_COMBOS];
    sebt_batch_stats st = { 0 };
    sebt_batch_opts o = { .threads = 2, .want_trades = true, .stats = &st };
    cr_assert_eq(cuda->run_batch(cuda, &series, combos, FIXTURE_COMBOS, &o, r, &err), SEBT_OK, "%s", err.msg);
    for (size_t i = 0; i < FIXTURE_COMBOS; i++)
        cr_assert(same_bits(&expect_t[i], &r[i], true), "combo %zu", i);
    cr_assert_eq(st.chunks, base_chunks, "chunks %zu, %zu without the fault", st.chunks, base_chunks);
    sebt_results_free(r, FIXTURE_COMBOS);
    clear_faults();
}

/* 1,400 distinct atr_windows: three device allocations each for their
 * valid bars used to overflow a 4,096-slot table into a spurious
 * out-of-memory (the table now grows). A 1,500-bar slice keeps it short. */
Test(host_faults, many_distinct_atr_windows_one_batch)
{
    clear_faults();
    enum { K = 1400 };
    sebt_series s;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_slice(&series, 0, 1500, &s, &err), SEBT_OK, "%s", err.msg);
    sebt_series_recount(&s);
    sebt_params *c = malloc(K * sizeof *c);
    sebt_result *rf = calloc(K, sizeof *rf), *rc = calloc(K, sizeof *rc);
    cr_assert(c && rf && rc);
    for (int i = 0; i < K; i++) {
        c[i] = combos[i % FIXTURE_COMBOS];
        c[i].atr_window = 1 + i;
    }
    const sebt_backend *cuda, *fast;
    cr_assert_eq(sebt_backend_get("cuda", &cuda, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK);
    sebt_batch_stats st = { 0 };
    sebt_batch_opts fo = { .threads = 2 }, co = { .threads = 2, .stats = &st };
    cr_assert_eq(fast->run_batch(fast, &s, c, K, &fo, rf, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(cuda->run_batch(cuda, &s, c, K, &co, rc, &err), SEBT_OK, "%s", err.msg);
    size_t trades = 0;
    for (int i = 0; i < K; i++) {
        cr_assert(same_bits(&rf[i], &rc[i], false), "combo %d", i);
        trades += rf[i].n_trades;
    }
    cr_assert_gt(trades, 0);
    free(c), free(rf), free(rc);
    sebt_series_free(&s);
}
