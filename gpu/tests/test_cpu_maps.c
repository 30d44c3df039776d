/* A process in cpu mode never maps libcuda or libcudart (nor the cuda
 * module). Checked twice: in a spawned `sebt run` (SEBT_DEBUG_MAPS=1 makes
 * it write /proc/self/maps to stderr at exit) and in this very process after
 * a fast_cpu batch through the library. Each check also finds something it
 * knows must be there, so a dump that went missing cannot pass. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "sebt/sebt.h"
#include "../../core/tests/scratch_dir.h"
#include "spawn_sebt.h"

static char csv_path[300];

static void make_fixture(void)
{
    scratch_make("maps");
    FILE *f = fixture_csv_begin(dir, csv_path, sizeof csv_path);
    for (int i = 0; i < 20; i++)
        fprintf(f, "%lld,100,102,99,101,%d\n", 1609459200000LL + 60000LL * i, 5 + i % 4);
    fclose(f);
}

TestSuite(cpu_maps, .init = make_fixture, .fini = scratch_remove);

static void expect_no_cuda(const char *maps, const char *what)
{
    cr_assert_eq(count_lines_with(maps, "libcuda"), 0, "%s maps libcuda", what);
    cr_assert_eq(count_lines_with(maps, "libcudart"), 0, "%s maps libcudart", what);
    cr_assert_eq(count_lines_with(maps, "libsebt_cuda"), 0, "%s maps the cuda module", what);
}

static void expect_cpu_run_maps_no_cuda(const char *const *env, const char *flag)
{
    const char *args[] = { "run", "--data", csv_path, NULL, NULL, NULL };
    if (flag) {
        args[3] = "--backend";
        args[4] = flag;
    }
    sebt_proc p = spawn_sebt(dir, env, args);
    cr_assert_eq(p.code, 0, "sebt run exited %d: %s", p.code, p.err);
    cr_assert_gt(count_lines_with(p.err, "maps: "), 5, "no memory map dumped:\n%.500s", p.err);
    cr_assert_gt(count_lines_with(p.err, "[stack]"), 0, "the dump lacks the stack:\n%.500s", p.err);
    cr_assert_gt(count_lines_with(p.err, "libc.so"), 0, "the dump lacks libc:\n%.500s", p.err);
    expect_no_cuda(p.err, flag ? flag : "the default mode");
    sebt_proc_free(&p);
}

Test(cpu_maps, spawned_cpu_runs_map_no_cuda)
{
    const char *env[] = { "SEBT_DEBUG_MAPS=1", NULL };
    expect_cpu_run_maps_no_cuda(env, NULL);
    expect_cpu_run_maps_no_cuda(env, "cpu");
    expect_cpu_run_maps_no_cuda(env, "fast_cpu");
    expect_cpu_run_maps_no_cuda(env, "reference");
    const char *env_cpu[] = { "SEBT_DEBUG_MAPS=1", "BACKTEST_BACKEND=cpu", NULL };
    expect_cpu_run_maps_no_cuda(env_cpu, NULL);
}

/* The converse, so the check above is known to see CUDA when it is there. */
Test(cpu_maps, spawned_gpu_run_maps_cuda)
{
    const char *env[] = { "SEBT_DEBUG_MAPS=1", NULL };
    const char *args[] = { "run", "--data", csv_path, "--backend", "gpu", NULL };
    sebt_proc p = spawn_sebt(dir, env, args);
    if (p.code == 3) {
        sebt_proc_free(&p);
        cr_skip_test("no CUDA device: the gpu run exited 3, so there is no CUDA mapping to see");
    }
    cr_assert_eq(p.code, 0, "%s", p.err);
    cr_assert_gt(count_lines_with(p.err, "libsebt_cuda"), 0, "the cuda module is not in the maps");
    cr_assert_gt(count_lines_with(p.err, "libcuda"), 0, "the CUDA driver is not in the maps");
    sebt_proc_free(&p);
}

Test(cpu_maps, library_fast_cpu_batch_maps_no_cuda)
{
    sebt_series s = { 0 };
    sebt_error err = { 0 };
    sebt_load_opts opts = { 0 };
    cr_assert_eq(sebt_load_csv(csv_path, &opts, &s, &err), SEBT_OK, "%s", err.msg);
    const sebt_backend *b;
    cr_assert_eq(sebt_backend_get("fast_cpu", &b, &err), SEBT_OK, "%s", err.msg);
    sebt_params combos[4];
    for (int i = 0; i < 4; i++) {
        combos[i] = sebt_params_default();
        combos[i].ema_fast = 2 + i;
        combos[i].ema_slow = 5;
        combos[i].z_window = 4;
        combos[i].atr_window = 3;
    }
    sebt_result res[4];
    memset(res, 0, sizeof res);
    sebt_batch_opts bo = { .threads = 2, .want_trades = true };
    cr_assert_eq(b->run_batch(b, &s, combos, 4, &bo, res, &err), SEBT_OK, "%s", err.msg);
    sebt_results_free(res, 4);
    sebt_series_free(&s);

    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    size_t cap = 1 << 20;
    char *maps = malloc(cap);
    size_t len = fread(maps, 1, cap - 1, f);
    maps[len] = '\0';
    fclose(f);
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    cr_assert_gt(count_lines_with(maps, exe), 0, "this program is not in its own maps");
    expect_no_cuda(maps, "a fast_cpu batch");
    free(maps);
}
