/* The auto crossover (cli/select.c) without a device: the model from a
 * device's SM count and clock, the saved file, and its errors. The expected
 * numbers are worked out from the model in gpu/README.md:
 *   W* = 0.25 / (1/(T * r) - 1/(SMs * clock * 0.073))
 * with r fast_cpu's measured rate per thread (SEBT_MODEL_CPU_RATE, from
 * bench/results/bench_sweep.json; 8.56793e9 when the build found none) and
 * 0.073 the bar-combos per SM and clock cuda reached on an H200:
 * H100 SXM, 132 SMs at 1.98 GHz, r = 8.56793e9: r_gpu = 1.907928e10, so
 *   T = 16: 1.37087e11 > r_gpu, never;
 *   T = 1: 0.25 / (1/8.56793e9 - 1/1.907928e10) = 3.88793864e9 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/tests/scratch_dir.h"
#include "../cli.h"
#include "../select.h"

static char file[300];

static void make_dir(void)
{
    scratch_make("crossover");
    snprintf(file, sizeof file, "%s/crossover", dir);
    setenv("SEBT_CROSSOVER_FILE", file, 1);
}

TestSuite(crossover, .init = make_dir, .fini = scratch_remove);

static sebt_gpu_device device(const char *name, int sms, int clock_khz)
{
    sebt_gpu_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.multiprocessors = sms;
    d.clock_khz = clock_khz;
    return d;
}

static void write_file(const char *text)
{
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

#ifndef SEBT_MODEL_CPU_RATE
#define SEBT_MODEL_CPU_RATE 8.56793e9
#endif

static double model(int sms, double ghz, int threads)
{
    double c = threads * (double)SEBT_MODEL_CPU_RATE, g = 0.073 * sms * ghz * 1e9;
    return g > c ? 0.25 / (1.0 / c - 1.0 / g) : INFINITY;
}

static void expect_near(double got, double want)
{
    cr_assert(fabs(got - want) <= 1e-6 * want, "got %.9g, want %.9g", got, want);
}

Test(crossover, model_without_a_file)
{
    cli_crossover x;
    sebt_gpu_device h100 = device("NVIDIA H100 80GB HBM3", 132, 1980000);
    cr_assert_eq(cli_crossover_for("test", &h100, 1, &x), 0);
    cr_assert(!x.measured);
    expect_near(x.bar_combos, model(132, 1.98, 1));
    cr_assert_not_null(strstr(x.source, "model: 132 SMs x 1.98 GHz vs 1 CPU threads"), "%s", x.source);
    cr_assert_not_null(strstr(x.source, "fast_cpu's measured rate"), "%s", x.source);
    if (SEBT_MODEL_CPU_RATE == 8.56793e9) {
        expect_near(x.bar_combos, 3.88793864e9);   /* by hand, above */
        cr_assert_eq(cli_crossover_for("test", &h100, 16, &x), 0);
        cr_assert(isinf(x.bar_combos), "16 threads: %g", x.bar_combos);
    }

    sebt_gpu_device a100 = device("NVIDIA A100", 108, 1410000);
    cr_assert_eq(cli_crossover_for("test", &a100, 1, &x), 0);
    expect_near(x.bar_combos, model(108, 1.41, 1));
}

Test(crossover, model_says_never_when_the_gpu_is_slower)
{
    cli_crossover x;
    sebt_gpu_device tiny = device("tiny", 1, 1000000); /* 1e9 bar-combos/s < 16 x r */
    cr_assert_eq(cli_crossover_for("test", &tiny, 16, &x), 0);
    cr_assert(isinf(x.bar_combos));
}

Test(crossover, saved_value_for_this_device_scaled_by_threads)
{
    write_file("# saved\ndevice = NVIDIA H200\nthreads = 8\nbars = 152832\ncrossover_bar_combos = 5e9\n");
    cli_crossover x;
    sebt_gpu_device h200 = device("NVIDIA H200", 132, 1980000);
    cr_assert_eq(cli_crossover_for("test", &h200, 16, &x), 0);
    cr_assert(x.measured);
    expect_near(x.bar_combos, 1e10);
    cr_assert_eq(cli_crossover_for("test", &h200, 8, &x), 0);
    expect_near(x.bar_combos, 5e9);
    cr_assert_not_null(strstr(x.source, file), "%s", x.source);

    write_file("device = NVIDIA H200\ncrossover_bar_combos = inf\n");
    cr_assert_eq(cli_crossover_for("test", &h200, 8, &x), 0);
    cr_assert(isinf(x.bar_combos));
}

Test(crossover, saved_value_for_another_device_is_not_used)
{
    write_file("device = NVIDIA H200\nthreads = 16\ncrossover_bar_combos = 1\n");
    cli_crossover x;
    sebt_gpu_device h100 = device("NVIDIA H100 80GB HBM3", 132, 1980000);
    cr_assert_eq(cli_crossover_for("test", &h100, 1, &x), 0);
    cr_assert(!x.measured);
    expect_near(x.bar_combos, model(132, 1.98, 1));
    cr_assert_not_null(strstr(x.source, "the saved crossover is for NVIDIA H200"), "%s", x.source);
}

Test(crossover, malformed_files_are_errors)
{
    const char *bad[] = { "device = X\ncrossover_bar_combos = lots\n", "device = X\ncrossover_bar_combos = -5\n",
                          "device = X\nthreads = 0\ncrossover_bar_combos = 5\n", "device = X\n",
                          "just some words\n" };
    sebt_gpu_device d = device("X", 1, 1000000);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(bad[i]);
        cli_crossover x;
        cr_assert_eq(cli_crossover_for("test", &d, 1, &x), 2, "accepted: %s", bad[i]);
    }
}

Test(crossover, where_the_file_lives)
{
    char buf[512];
    cli_crossover_path(buf, sizeof buf);
    cr_assert_str_eq(buf, file);
    unsetenv("SEBT_CROSSOVER_FILE");
    setenv("XDG_CONFIG_HOME", "/cfg", 1);
    cli_crossover_path(buf, sizeof buf);
    cr_assert_str_eq(buf, "/cfg/sebt/crossover");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    cli_crossover_path(buf, sizeof buf);
    cr_assert_str_eq(buf, "/home/u/.config/sebt/crossover");
}

Test(crossover, cpu_threads_from_omp_num_threads)
{
    setenv("OMP_NUM_THREADS", "7", 1);
    cr_assert_eq(cli_cpu_threads(), 7);
    unsetenv("OMP_NUM_THREADS");
    cr_assert_geq(cli_cpu_threads(), 1);
}

/* check-gpu --benchmark's rows on an H200 against 16 fast_cpu threads
 * (bench/results/gpu-h200-2026-11-29): cuda "won" the first, one-combo row
 * (fast_cpu's first run paid for its threads), lost from 10 to 10^6 combos
 * and won at 10^7. The crossover lies between the last two rows:
 *   diff 0.5327 - 0.4161 = 0.1166 at 1.528e11, 3.9588 - 3.9764 = -0.0176 at 1.528e12
 *   1.528e11 + 0.1166 * (1.528e12 - 1.528e11) / (0.1166 + 0.0176) = 1.3475e12 */
Test(crossover, measured_from_the_last_run_of_wins)
{
    const double w[] = { 1.528e5, 1.528e6, 1.528e7, 1.528e8, 1.528e9, 1.528e10, 1.528e11, 1.528e12 };
    const double cpu[] = { 0.0226, 0.0064, 0.0064, 0.0073, 0.0156, 0.0523, 0.4161, 3.9764 };
    const double gpu[] = { 0.0105, 0.0109, 0.0134, 0.0353, 0.0912, 0.1386, 0.5327, 3.9588 };
    double diff[8];
    for (int k = 0; k < 8; k++)
        diff[k] = gpu[k] - cpu[k];
    double x = cli_crossover_measured(w, diff, 8);
    cr_assert(fabs(x - 1.3475e12) < 0.0005e12, "crossover %.6g, by hand 1.3475e12", x);
    /* cuda slower at the largest size: no crossover, whatever came before */
    cr_assert(isinf(cli_crossover_measured(w, diff, 7)));
    cr_assert(isinf(cli_crossover_measured(w, diff, 0)));
    /* cuda faster at every size: from the first */
    const double all_win[] = { -1, -2, -3 };
    cr_assert_eq(cli_crossover_measured(w, all_win, 3), w[0]);
    /* a tie counts as a win; the row before is interpolated: 1e6 + 1 * 9e6 / (1 + 0) */
    const double w2[] = { 1e5, 1e6, 1e7 }, tie[] = { 2, 1, 0 };
    cr_assert_eq(cli_crossover_measured(w2, tie, 3), 1e7);
}
