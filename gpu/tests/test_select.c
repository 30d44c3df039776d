/* Backend selection as a user meets it: each test spawns `sebt` with
 * BACKTEST_BACKEND / --backend / BACKTEST_GPU_ID / CUDA_VISIBLE_DEVICES and
 * checks which backend ran (the "backend" field of `sebt run`'s JSON), the
 * exit code and stderr. Rules (cli/select.c): the flag wins over the
 * variable; cpu is the default and means fast_cpu; gpu with no usable device
 * exits 3, never falling back; auto says on one stderr line what it picked
 * and why; anything else exits 2 listing the valid values.
 *
 * "No device" is forced two ways that work on any machine: an empty
 * CUDA_VISIBLE_DEVICES hides every GPU, and SEBT_CUDA_LIBRARY pointing at
 * nothing stands for a build without the cuda module. Tests that need a
 * real device skip, saying so. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "sebt/gpu.h"
#include "sebt/sebt.h"
#include "../../core/tests/scratch_dir.h"
#include "spawn_sebt.h"

static char csv_path[300];

/* 40 quiet 15-minute bars: enough for `sebt run` to run, no trade needed. */
static void make_fixture(void)
{
    scratch_make("select");
    FILE *f = fixture_csv_begin(dir, csv_path, sizeof csv_path);
    for (int i = 0; i < 40; i++)
        fprintf(f, "%lld,%d,%d,%d,%d,%d\n", 1609459200000LL + 900000LL * i, 100 + i % 3, 103 + i % 3,
                98 + i % 3, 101 + i % 3, 10 + i % 7);
    fclose(f);
}

TestSuite(select, .init = make_fixture, .fini = scratch_remove);

static sebt_proc run_with(const char *const *env, const char *backend_flag)
{
    const char *args[] = { "run", "--data", csv_path, "--format", "json", NULL, NULL, NULL };
    if (backend_flag) {
        args[5] = "--backend";
        args[6] = backend_flag;
    }
    return spawn_sebt(dir, env, args);
}

static void expect_backend(const char *const *env, const char *flag, const char *backend)
{
    sebt_proc p = run_with(env, flag);
    char want[64];
    snprintf(want, sizeof want, "\"backend\":\"%s\"", backend);
    cr_assert_eq(p.code, 0, "sebt run exited %d; stderr:\n%s", p.code, p.err);
    cr_assert_not_null(strstr(p.out, want), "expected %s in:\n%.400s", want, p.out);
    sebt_proc_free(&p);
}

static bool gpu_usable(char *why, size_t size)
{
    sebt_gpu_info info;
    sebt_error err = { 0 };
    bool ok = sebt_gpu_query(&info, &err) == SEBT_OK && info.selected >= 0;
    snprintf(why, size, "%s", err.msg);
    return ok;
}

#define SKIP_WITHOUT_GPU()                                            \
    do {                                                              \
        char why_[SEBT_ERROR_MSG_MAX];                                \
        if (!gpu_usable(why_, sizeof why_))                           \
            cr_skip_test("no CUDA device: %s", why_);                 \
    } while (0)

Test(select, default_is_fast_cpu) { expect_backend(NULL, NULL, "fast_cpu"); }

Test(select, env_cpu_is_fast_cpu)
{
    const char *env[] = { "BACKTEST_BACKEND=cpu", NULL };
    expect_backend(env, NULL, "fast_cpu");
}

Test(select, env_names_any_backend)
{
    const char *env[] = { "BACKTEST_BACKEND=reference", NULL };
    expect_backend(env, NULL, "reference");
}

Test(select, flag_names_any_backend) { expect_backend(NULL, "reference", "reference"); }

Test(select, flag_wins_over_env)
{
    const char *env[] = { "BACKTEST_BACKEND=reference", NULL };
    expect_backend(env, "cpu", "fast_cpu");
    /* The variable asks for a GPU that is not there: the flag must win
     * before the GPU is even looked at. */
    const char *env_gpu[] = { "BACKTEST_BACKEND=gpu", "CUDA_VISIBLE_DEVICES=", NULL };
    expect_backend(env_gpu, "fast_cpu", "fast_cpu");
}

Test(select, unknown_flag_value_lists_valid_ones)
{
    sebt_proc p = run_with(NULL, "turbo");
    cr_assert_eq(p.code, 2, "exit %d, stderr:\n%s", p.code, p.err);
    cr_assert_not_null(strstr(p.err, "--backend 'turbo'"), "%s", p.err);
    cr_assert_not_null(strstr(p.err, "cpu, gpu, auto, reference, fast_cpu, cuda"), "%s", p.err);
    cr_assert_str_empty(p.out);
    sebt_proc_free(&p);
}

Test(select, unknown_env_value_lists_valid_ones)
{
    const char *env[] = { "BACKTEST_BACKEND=GPU", NULL }; /* names are case-sensitive */
    sebt_proc p = run_with(env, NULL);
    cr_assert_eq(p.code, 2, "exit %d, stderr:\n%s", p.code, p.err);
    cr_assert_not_null(strstr(p.err, "BACKTEST_BACKEND='GPU'"), "%s", p.err);
    cr_assert_not_null(strstr(p.err, "cpu, gpu, auto, reference, fast_cpu, cuda"), "%s", p.err);
    sebt_proc_free(&p);
}

static void expect_no_device_exit(const char *const *env, const char *flag)
{
    sebt_proc p = run_with(env, flag);
    cr_assert_eq(p.code, 3, "exit %d (expected 3, no usable GPU), stderr:\n%s", p.code, p.err);
    cr_assert_not_null(strstr(p.err, "no usable GPU"), "%s", p.err);
    cr_assert_str_empty(p.out, "a gpu run without a GPU must not print a result:\n%s", p.out);
    cr_assert_eq(count_lines_with(p.err, "fast_cpu"), 0, "no fallback may be mentioned:\n%s", p.err);
    sebt_proc_free(&p);
}

Test(select, gpu_with_every_device_hidden_exits_3)
{
    const char *env[] = { "BACKTEST_BACKEND=gpu", "CUDA_VISIBLE_DEVICES=", NULL };
    expect_no_device_exit(env, NULL);
    const char *hidden[] = { "CUDA_VISIBLE_DEVICES=", NULL };
    expect_no_device_exit(hidden, "gpu");
    expect_no_device_exit(hidden, "cuda");
}

Test(select, gpu_without_the_module_exits_3)
{
    const char *env[] = { "BACKTEST_BACKEND=gpu", "SEBT_CUDA_LIBRARY=/nonexistent/libsebt_cuda.so", NULL };
    expect_no_device_exit(env, NULL);
}

Test(select, gpu_id_past_the_devices_exits_3)
{
    const char *env[] = { "BACKTEST_BACKEND=gpu", "BACKTEST_GPU_ID=99", NULL };
    expect_no_device_exit(env, NULL);
}

Test(select, malformed_gpu_id_is_bad_input)
{
    if (!SEBT_CUDA_MODULE_BUILT)
        cr_skip_test("the cuda module is not built: BACKTEST_GPU_ID is never read");
    const char *env[] = { "BACKTEST_BACKEND=gpu", "BACKTEST_GPU_ID=first", NULL };
    sebt_proc p = run_with(env, NULL);
    cr_assert_eq(p.code, 2, "exit %d, stderr:\n%s", p.code, p.err);
    cr_assert_not_null(strstr(p.err, "BACKTEST_GPU_ID='first'"), "%s", p.err);
    sebt_proc_free(&p);
}

static void expect_auto_fast_cpu(const char *const *env, const char *why)
{
    sebt_proc p = run_with(env, NULL);
    cr_assert_eq(p.code, 0, "exit %d, stderr:\n%s", p.code, p.err);
    cr_assert_not_null(strstr(p.out, "\"backend\":\"fast_cpu\""), "%.300s", p.out);
    cr_assert_eq(count_lines_with(p.err, "auto:"), 1, "one line saying what auto picked:\n%s", p.err);
    cr_assert_not_null(strstr(p.err, "sebt run: auto: fast_cpu, because "), "%s", p.err);
    cr_assert_not_null(strstr(p.err, why), "expected '%s' in:\n%s", why, p.err);
    sebt_proc_free(&p);
}

Test(select, auto_without_device_says_fast_cpu_and_why)
{
    const char *env[] = { "BACKTEST_BACKEND=auto", "CUDA_VISIBLE_DEVICES=", NULL };
    expect_auto_fast_cpu(env, "no usable GPU");
    const char *no_module[] = { "BACKTEST_BACKEND=auto", "SEBT_CUDA_LIBRARY=/nonexistent/libsebt_cuda.so", NULL };
    expect_auto_fast_cpu(no_module, "no usable GPU");
}

Test(select, cpu_mode_prints_no_auto_line)
{
    sebt_proc p = run_with(NULL, "cpu");
    cr_assert_eq(p.code, 0, "%s", p.err);
    cr_assert_eq(count_lines_with(p.err, "auto:"), 0, "%s", p.err);
    sebt_proc_free(&p);
}

/* ---- with a device -------------------------------------------------------- */

Test(select, gpu_with_a_device_runs_cuda)
{
    SKIP_WITHOUT_GPU();
    const char *env[] = { "BACKTEST_BACKEND=gpu", NULL };
    expect_backend(env, NULL, "cuda");
}

Test(select, auto_keeps_tiny_work_on_the_cpu)
{
    SKIP_WITHOUT_GPU();
    char path[400];
    snprintf(path, sizeof path, "SEBT_CROSSOVER_FILE=%s/none-here", dir);
    const char *env[] = { "BACKTEST_BACKEND=auto", path, NULL };
    expect_auto_fast_cpu(env, "is below the crossover");
}

/* A saved crossover of 0 for this device sends even one combo to cuda;
 * inf keeps everything on fast_cpu. */
Test(select, auto_uses_the_saved_crossover)
{
    SKIP_WITHOUT_GPU();
    sebt_gpu_info info;
    sebt_error err = { 0 };
    sebt_gpu_query(&info, &err);
    char file[300], env_file[400];
    snprintf(file, sizeof file, "%s/crossover", dir);
    snprintf(env_file, sizeof env_file, "SEBT_CROSSOVER_FILE=%s", file);
    const char *env[] = { "BACKTEST_BACKEND=auto", env_file, NULL };

    FILE *f = fopen(file, "w");
    fprintf(f, "device = %s\nthreads = 1\ncrossover_bar_combos = 0\n", info.devices[info.selected].name);
    fclose(f);
    sebt_proc p = run_with(env, NULL);
    cr_assert_eq(p.code, 0, "%s", p.err);
    cr_assert_not_null(strstr(p.out, "\"backend\":\"cuda\""), "%.300s", p.out);
    cr_assert_not_null(strstr(p.err, "auto: cuda, because"), "%s", p.err);
    cr_assert_not_null(strstr(p.err, "measured by check-gpu"), "%s", p.err);
    sebt_proc_free(&p);

    f = fopen(file, "w");
    fprintf(f, "device = %s\nthreads = 1\ncrossover_bar_combos = inf\n", info.devices[info.selected].name);
    fclose(f);
    expect_auto_fast_cpu(env, "measured by check-gpu");
}

Test(select, malformed_crossover_file_names_file_and_line)
{
    SKIP_WITHOUT_GPU();
    char file[300], env_file[400];
    snprintf(file, sizeof file, "%s/crossover", dir);
    snprintf(env_file, sizeof env_file, "SEBT_CROSSOVER_FILE=%s", file);
    FILE *f = fopen(file, "w");
    fprintf(f, "# comment\ncrossover_bar_combos = lots\n");
    fclose(f);
    const char *env[] = { "BACKTEST_BACKEND=auto", env_file, NULL };
    sebt_proc p = run_with(env, NULL);
    cr_assert_eq(p.code, 2, "exit %d: %s", p.code, p.err);
    char want[400];
    snprintf(want, sizeof want, "%s:2:", file);
    cr_assert_not_null(strstr(p.err, want), "%s", p.err);
    sebt_proc_free(&p);
}
