/* `sebt check-gpu`: the CUDA devices this process can use, what each
 * backend mode would pick now and why, and (--benchmark) the measured
 * crossover between fast_cpu and cuda that auto then uses. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "options.h"
#include "select.h"

static void print_version(const char *label, int v)
{
    if (v > 0)
        printf("%s %d.%d\n", label, v / 1000, (v % 1000) / 10);
    else
        printf("%s none\n", label);
}

static void print_devices(const sebt_gpu_info *info, sebt_status st, const sebt_error *err)
{
    if (st == SEBT_ERR_UNAVAILABLE) {
        printf("CUDA: not available: %s\n", err->msg);
        return;
    }
    print_version("CUDA driver: ", info->driver_version);
    print_version("CUDA runtime:", info->runtime_version);
    if (info->n_devices == 0) {
        printf("CUDA devices: none usable: %s\n", err->msg);
        return;
    }
    printf("CUDA devices: %d visible%s\n", info->n_devices, getenv("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES is set)" : "");
    for (int i = 0; i < info->n_devices; i++) {
        const sebt_gpu_device *d = &info->devices[i];
        printf("  [%d]%s %s\n", d->id, d->id == info->selected ? "*" : " ", d->name);
        printf("       compute capability %d.%d, %d multiprocessors at %.2f GHz\n", d->cc_major, d->cc_minor,
               d->multiprocessors, d->clock_khz * 1e-6);
        printf("       memory %.2f GiB total, %.2f GiB free, %.0f GB/s peak (%d-bit bus at %.2f GHz)\n",
               (double)d->mem_total / (1 << 30), (double)d->mem_free / (1 << 30), d->mem_bandwidth * 1e-9,
               d->mem_bus_bits, d->mem_clock_khz * 1e-6);
    }
    if (st != SEBT_OK)
        printf("  selected: none: %s\n", err->msg);
    else
        printf("  selected: [%d] (BACKTEST_GPU_ID=%s)\n", info->selected,
               getenv("BACKTEST_GPU_ID") ? getenv("BACKTEST_GPU_ID") : "unset, so 0");
}

static int print_modes(const char *cmd, const sebt_gpu_info *info, size_t bars, size_t combos)
{
    printf("\nBackend each mode would pick for %zu bars x %zu combos:\n", bars, combos);
    printf("  cpu   fast_cpu, always; CUDA is never loaded (%d threads: OMP_NUM_THREADS or the cores)\n",
           cli_cpu_threads());
    const sebt_backend *b;
    sebt_error err = { 0 };
    if (sebt_backend_get("cuda", &b, &err) == SEBT_OK && info->selected < 0)
        /* The module opens but lists no device: host execution. */
        printf("  gpu   none: exits with code %d: the cuda module lists no device (host execution); "
               "--backend cuda runs it on CPU threads\n", CLI_EXIT_NO_DEVICE);
    else if (b)
        printf("  gpu   cuda on device [%d]\n", info->selected);
    else
        printf("  gpu   none: exits with code %d: %s\n",
               err.code == SEBT_ERR_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_NO_DEVICE, err.msg);
    cli_auto_choice pick;
    int rc = cli_auto_choose(cmd, bars, combos, &pick);
    if (rc != CLI_EXIT_OK)
        return rc;
    printf("  auto  %s, because %s\n", pick.backend, pick.why);
    const char *env = getenv("BACKTEST_BACKEND");
    printf("Now: BACKTEST_BACKEND=%s\n", env && *env ? env : "unset, so cpu");
    return CLI_EXIT_OK;
}

/* ---- --benchmark -------------------------------------------------------- */

/* Combo i of a sweep shaped like a real one: a few distinct indicator
 * windows (so indicators are shared, as in a grid), thresholds and exits
 * varied within each. */
static sebt_params bench_combo(size_t i)
{
    static const int32_t fast[] = { 48, 96 }, slow[] = { 336, 672 }, zw[] = { 336, 672 }, aw[] = { 48, 96 };
    sebt_params p = sebt_params_default();
    p.ema_fast = fast[i % 2];
    i /= 2;
    p.ema_slow = slow[i % 2];
    i /= 2;
    p.z_window = zw[i % 2];
    i /= 2;
    p.atr_window = aw[i % 2];
    i /= 2;
    p.vol_z = 1.0 + 0.1 * (double)(i % 20);
    i /= 20;
    p.tr_z = 0.8 + 0.1 * (double)(i % 10);
    i /= 10;
    p.cloc_min = 0.4 + 0.05 * (double)(i % 8);
    i /= 8;
    p.atr_stop_mult = 0.5 + 0.1 * (double)(i % 10);
    i /= 10;
    p.max_hold = 24 + (int32_t)(i % 1000);
    return p;
}

/* One sweep's time: the least of three runs when one is short (a short
 * run's time is mostly noise), else the one run's. */
static int timed_sweep(const char *cmd, const sebt_backend *b, const sebt_series *s, const sebt_params *combos,
                       size_t n, sebt_result *res, double *seconds)
{
    sebt_batch_opts opts = { .threads = 0, .want_trades = false };
    sebt_error err = { 0 };
    *seconds = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        sebt_results_free(res, n);
        memset(res, 0, n * sizeof *res);
        double t0 = cli_now();
        sebt_status st = b->run_batch(b, s, combos, n, &opts, res, &err);
        double t = cli_now() - t0;
        if (st != SEBT_OK)
            return cli_report_error(cmd, &err);
        *seconds = t < *seconds ? t : *seconds;
        if (t > 0.5)
            break;
    }
    return CLI_EXIT_OK;
}

/* Bit for bit: the shared per-combo code must give the same bits. */
static bool same_result(const sebt_result *a, const sebt_result *b)
{
    return memcmp(&a->metrics, &b->metrics, sizeof a->metrics) == 0 && a->n_trades == b->n_trades
           && a->valid_bars == b->valid_bars && a->open_at_end.open == b->open_at_end.open;
}

static int save_crossover(const char *cmd, const sebt_gpu_device *d, double crossover, size_t bars)
{
    char path[512];
    cli_crossover_path(path, sizeof path);
    /* mkdir -p of the file's folder */
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "sebt %s: error: cannot create %s: %s\n", cmd, path, strerror(errno));
            return CLI_EXIT_USAGE;
        }
        *p = '/';
    }
    FILE *f = cli_open_output(cmd, path);
    if (!f)
        return CLI_EXIT_USAGE;
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "# written by sebt check-gpu --benchmark --save; auto picks cuda from this many bar-combos\n");
    fprintf(f, "device = %s\nthreads = %d\nbars = %zu\ndate = %s\ncrossover_bar_combos = %.6g\n", d->name,
            cli_cpu_threads(), bars, date, crossover);
    if (cli_close_output(f) != 0)
        return CLI_EXIT_USAGE;
    printf("saved to %s\n", path);
    return CLI_EXIT_OK;
}

static int benchmark(const char *cmd, const char *data, size_t max_combos, double budget, bool save)
{
    sebt_gpu_info info;
    sebt_error err = { 0 };
    if (sebt_gpu_query(&info, &err) != SEBT_OK || info.selected < 0) {
        fprintf(stderr, "sebt %s: error: --benchmark needs a usable GPU: %s\n", cmd, err.msg);
        return err.code == SEBT_ERR_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_NO_DEVICE;
    }
    const sebt_gpu_device *d = &info.devices[info.selected];
    sebt_series s = { 0 };
    int rc = cli_load_series(cmd, data, false, false, &s);
    if (rc != CLI_EXIT_OK)
        return rc;
    const sebt_backend *cpu, *gpu;
    sebt_backend_get("fast_cpu", &cpu, &err);
    double t0 = cli_now();
    if (sebt_backend_get("cuda", &gpu, &err) != SEBT_OK) {
        sebt_series_free(&s);
        return cli_report_error(cmd, &err);
    }
    /* A process pays for the CUDA context once; auto decides per process,
     * so every cuda time below includes it. */
    double t_open = cli_now() - t0;

    sebt_params *combos = malloc(max_combos * sizeof *combos);
    sebt_result *r_cpu = calloc(max_combos, sizeof *r_cpu), *r_gpu = calloc(max_combos, sizeof *r_gpu);
    if (!combos || !r_cpu || !r_gpu) {
        free(combos), free(r_cpu), free(r_gpu), sebt_series_free(&s);
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, max_combos);
        return CLI_EXIT_NOMEM;
    }
    for (size_t i = 0; i < max_combos; i++)
        combos[i] = bench_combo(i);

    printf("fast_cpu (%d threads) against cuda on [%d] %s, %zu bars of %s\n", cli_cpu_threads(), d->id, d->name,
           s.n, data);
    printf("cuda context and module: %.3f s, counted in every cuda time\n", t_open);
    /* Each backend's first run pays for its threads and first touches of
     * memory: one untimed run of each first. */
    size_t warm = max_combos < 10 ? max_combos : 10;
    double ignored;
    rc = timed_sweep(cmd, cpu, &s, combos, warm, r_cpu, &ignored);
    if (rc == CLI_EXIT_OK)
        rc = timed_sweep(cmd, gpu, &s, combos, warm, r_gpu, &ignored);
    sebt_results_free(r_cpu, warm);
    sebt_results_free(r_gpu, warm);
    printf("%10s %14s %12s %12s %9s\n", "combos", "bar-combos", "fast_cpu s", "cuda s", "speed-up");
    double work[24], diffs[24];
    size_t rows = 0;
    for (size_t n = 1; n <= max_combos && rc == CLI_EXIT_OK && rows < 24; n *= 10) {
        double tc, tg;
        if ((rc = timed_sweep(cmd, cpu, &s, combos, n, r_cpu, &tc)) != CLI_EXIT_OK
            || (rc = timed_sweep(cmd, gpu, &s, combos, n, r_gpu, &tg)) != CLI_EXIT_OK)
            break;
        tg += t_open;
        for (size_t i = 0; i < n; i++)
            if (!same_result(&r_cpu[i], &r_gpu[i])) {
                fprintf(stderr, "sebt %s: error: cuda and fast_cpu differ on combo %zu of the benchmark sweep "
                        "(n %lld vs %lld, total_pnl %.17g vs %.17g); run 'sebt parity --backend cuda'\n",
                        cmd, i, (long long)r_cpu[i].metrics.n, (long long)r_gpu[i].metrics.n,
                        r_cpu[i].metrics.total_pnl, r_gpu[i].metrics.total_pnl);
                rc = CLI_EXIT_CHECK_FAILED;
                break;
            }
        work[rows] = (double)n * (double)s.n;
        diffs[rows++] = tg - tc;
        printf("%10zu %14.4g %12.4f %12.4f %8.2fx\n", n, work[rows - 1], tc, tg, tc / tg);
        /* Each row as it is measured, into a file too: a larger size can
         * take minutes, and a run stopped there keeps the rows before it. */
        fflush(stdout);
        sebt_results_free(r_cpu, n);
        sebt_results_free(r_gpu, n);
        if (tc > budget)
            break;
    }
    double crossover = cli_crossover_measured(work, diffs, rows);
    if (rc == CLI_EXIT_OK) {
        if (isfinite(crossover))
            printf("crossover: cuda wins from %.4g bar-combos (%.0f combos of these %zu bars)\n", crossover,
                   crossover / (double)s.n, s.n);
        else
            printf("crossover: cuda did not win at the largest size, %.4g bar-combos; auto keeps fast_cpu\n",
                   rows ? work[rows - 1] : 0.0);
        if (save)
            rc = save_crossover(cmd, d, crossover, s.n);
    }
    free(combos), free(r_cpu), free(r_gpu);
    sebt_series_free(&s);
    return rc;
}

enum { OPT_BARS, OPT_COMBOS, OPT_BENCHMARK, OPT_DATA, OPT_MAX_COMBOS, OPT_BUDGET, OPT_SAVE };
static const cli_opt check_gpu_opts[] = {
    [OPT_BARS] = { "--bars", CLI_UINT, "N", "bars of the sweep the modes are asked about (default 150000)",
                   .umin = 1, .umax = CLI_UINT_MAX },
    [OPT_COMBOS] = { "--combos", CLI_UINT, "N", "combos of that sweep (default 10000)", .umin = 1,
                     .umax = CLI_UINT_MAX },
    [OPT_BENCHMARK] = { "--benchmark", CLI_FLAG, NULL,
                        "time fast_cpu against cuda over growing sweeps (1, 10,\n"
                        "100, ... combos) on --data (default: the bundled 15m\n"
                        "series), check that both agree bit for bit, and print\n"
                        "the crossover in bar-combos; exit 3 without a GPU" },
    [OPT_DATA] = { "--data", CLI_FILE, "FILE", "the series --benchmark runs on" },
    [OPT_MAX_COMBOS] = { "--max-combos", CLI_UINT, "N", "largest sweep measured (default 100000)", .umin = 1,
                         .umax = CLI_UINT_MAX },
    [OPT_BUDGET] = { "--budget", CLI_REAL, "S", "stop growing once one fast_cpu sweep takes S seconds (default 30)",
                     .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = 1e9 },
    [OPT_SAVE] = { "--save", CLI_FLAG, NULL, "write the crossover where auto reads it:\n"
                   "SEBT_CROSSOVER_FILE, else $XDG_CONFIG_HOME/sebt/crossover,\n"
                   "else ~/.config/sebt/crossover" },
};

const cli_command cli_cmd_check_gpu_spec = {
    .name = "check-gpu",
    .summary = "the GPUs this process can use and what each mode would pick",
    .usage = "[--bars N] [--combos N]\n"
             "--benchmark [--data FILE] [--max-combos N] [--budget SECONDS] [--save]\n",
    .about = "Lists the CUDA devices this process can use (name, compute capability,\n"
             "memory, multiprocessors, driver and runtime versions) and which backend\n"
             "each mode (cpu, gpu, auto) would pick for a sweep of --bars x --combos\n"
             "(default 150000 x 10000), and why. With no device, no driver or no cuda\n"
             "module it says so and exits 0.\n",
    .opts = CLI_OPTS(check_gpu_opts),
    .epilog = "Environment: BACKTEST_BACKEND, BACKTEST_GPU_ID, CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS.\n",
    .fn = cli_cmd_check_gpu,
};

int cli_cmd_check_gpu(int argc, char **argv)
{
    const char *cmd = argv[0];
    size_t bars = 150000, combos = 10000, max_combos = 100000;
    double budget = 30;
    bool bench = false, save = false;
    const char *data = cli_share("fixtures/data/BTCUSDT-15m-2017-2021.csv.gz");
    cli_args a;
    int rc = cli_parse(&cli_cmd_check_gpu_spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (cli_given(&a, OPT_BARS))
        bars = (size_t)a.v[OPT_BARS].u;
    if (cli_given(&a, OPT_COMBOS))
        combos = (size_t)a.v[OPT_COMBOS].u;
    if (cli_given(&a, OPT_MAX_COMBOS))
        max_combos = (size_t)a.v[OPT_MAX_COMBOS].u;
    if (cli_given(&a, OPT_BUDGET))
        budget = a.v[OPT_BUDGET].r;
    if (cli_given(&a, OPT_DATA))
        data = cli_str(&a, OPT_DATA);
    bench = cli_given(&a, OPT_BENCHMARK);
    save = cli_given(&a, OPT_SAVE);
    if (save && !bench)
        return cli_usage_error(cmd, "--save goes with --benchmark");
    if (bench)
        return benchmark(cmd, data, max_combos, budget, save);

    sebt_gpu_info info;
    sebt_error err = { 0 };
    sebt_status st = sebt_gpu_query(&info, &err);
    print_devices(&info, st, &err);
    return print_modes(cmd, &info, bars, combos);
}
