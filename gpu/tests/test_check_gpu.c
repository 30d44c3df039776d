/* `sebt check-gpu` on any machine: with no device, no driver or no cuda
 * module it says so and exits 0, and still tells what each mode would pick. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../../core/tests/scratch_dir.h"
#include "spawn_sebt.h"

SEBT_SCRATCH_SUITE(check_gpu, "check_gpu");

static void expect_modes_without_gpu(const sebt_proc *p)
{
    cr_assert_eq(p->code, 0, "exit %d, stderr:\n%s", p->code, p->err);
    cr_assert_not_null(strstr(p->out, "  cpu   fast_cpu"), "%s", p->out);
    cr_assert_not_null(strstr(p->out, "  gpu   none: exits with code 3"), "%s", p->out);
    cr_assert_not_null(strstr(p->out, "  auto  fast_cpu, because no usable GPU"), "%s", p->out);
}

Test(check_gpu, every_device_hidden)
{
    const char *env[] = { "CUDA_VISIBLE_DEVICES=", NULL };
    const char *args[] = { "check-gpu", NULL };
    sebt_proc p = spawn_sebt(dir, env, args);
    expect_modes_without_gpu(&p);
    if (SEBT_CUDA_MODULE_BUILT) {
        cr_assert_not_null(strstr(p.out, "CUDA runtime: "), "%s", p.out);
        cr_assert_not_null(strstr(p.out, "CUDA devices: none usable"), "%s", p.out);
    }
    sebt_proc_free(&p);
}

Test(check_gpu, no_module)
{
    const char *env[] = { "SEBT_CUDA_LIBRARY=/nonexistent/libsebt_cuda.so", NULL };
    const char *args[] = { "check-gpu", "--bars", "1000", "--combos", "5", NULL };
    sebt_proc p = spawn_sebt(dir, env, args);
    expect_modes_without_gpu(&p);
    cr_assert_not_null(strstr(p.out, "CUDA: not available"), "%s", p.out);
    cr_assert_not_null(strstr(p.out, "/nonexistent/libsebt_cuda.so"), "%s", p.out);
    cr_assert_not_null(strstr(p.out, "1000 bars x 5 combos"), "%s", p.out);
    sebt_proc_free(&p);
}

Test(check_gpu, benchmark_without_a_gpu_exits_3)
{
    const char *env[] = { "CUDA_VISIBLE_DEVICES=", NULL };
    const char *args[] = { "check-gpu", "--benchmark", NULL };
    sebt_proc p = spawn_sebt(dir, env, args);
    cr_assert_eq(p.code, 3, "exit %d: %s", p.code, p.err);
    cr_assert_not_null(strstr(p.err, "--benchmark needs a usable GPU"), "%s", p.err);
    sebt_proc_free(&p);
}

Test(check_gpu, bad_options_exit_2)
{
    const char *bad[][4] = { { "check-gpu", "--bars", "0", NULL },
                             { "check-gpu", "--combos", "many", NULL },
                             { "check-gpu", "--save", NULL, NULL },
                             { "check-gpu", "--frobnicate", NULL, NULL } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sebt_proc p = spawn_sebt(dir, NULL, bad[i]);
        cr_assert_eq(p.code, 2, "%s %s: exit %d", bad[i][1], bad[i][2] ? bad[i][2] : "", p.code);
        cr_assert_not_null(strstr(p.err, "sebt check-gpu: "), "%s", p.err);
        sebt_proc_free(&p);
    }
}
