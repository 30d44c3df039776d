/* sebt_bench_grid: fast_cpu's sweep of one grid file over one series, timed
 * alone (the data loaded and the grid expanded before the clock starts, no
 * output written), so it can stand side by side with the numba peer, which
 * times its sweep the same way (bench/run_exact_fast.sh runs both).
 *
 * usage: sebt_bench_grid --data FILE --grid FILE [--threads N]
 *                        [--repetitions R] [--bars N] [--backend NAME]
 *
 * --bars N takes the last N bars of the series, or, when N is more than it
 * has, repeats the series end to end (timestamps continued, each copy's
 * prices scaled to start where the previous copy ended) until it has N.
 * Prints one JSON object: median, min and max seconds, backtests/s,
 * bar-combos/s, total trades, peak resident memory of the process, and the
 * run's path statistics (threads, batches, chunks, blocks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sebt/backends.h"
#include "sebt/grid.h"
#include "sebt/sebt.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the process (all threads): on a shared machine the wall
 * clock counts other people's work too; this does not. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int usage(const char *msg)
{
    fprintf(stderr, "sebt_bench_grid: %s\nusage: sebt_bench_grid --data FILE --grid FILE [--threads N] "
                    "[--repetitions R] [--bars N] [--backend NAME]\n", msg);
    return 2;
}

/* The series made n bars long (see the top of the file). */
static int resize(const sebt_series *src, size_t n, sebt_series *out, sebt_error *err)
{
    if (n <= src->n)
        return sebt_series_slice(src, src->n - n, n, out, err) == SEBT_OK ? 0 : -1;
    if (sebt_series_alloc(out, n, err) != SEBT_OK)
        return -1;
    int64_t step = src->interval_ms ? src->interval_ms : 60000;
    double scale = 1.0;
    size_t last_present = 0;
    for (size_t t = 0; t < n; t++) {
        size_t k = t % src->n;
        if (t > 0 && k == 0) {
            /* Scale the next copy so that its first open meets the last close. */
            size_t f = 0;
            while (f < src->n && isnan(src->open[f]))
                f++;
            if (f < src->n && !isnan(out->close[last_present]))
                scale = out->close[last_present] / src->open[f];
        }
        out->ts[t] = t < src->n ? src->ts[t] : out->ts[t - 1] + (k == 0 ? step : src->ts[k] - src->ts[k - 1]);
        if (isnan(src->open[k])) {
            out->open[t] = out->high[t] = out->low[t] = out->close[t] = out->volume[t] = NAN;
            continue;
        }
        out->open[t] = src->open[k] * scale;
        out->high[t] = src->high[k] * scale;
        out->low[t] = src->low[k] * scale;
        out->close[t] = src->close[k] * scale;
        /* Scaling can break low <= open, close <= high by an ulp: clamp. */
        out->low[t] = fmin(out->low[t], fmin(out->open[t], out->close[t]));
        out->high[t] = fmax(out->high[t], fmax(out->open[t], out->close[t]));
        out->volume[t] = src->volume[k];
        last_present = t;
    }
    sebt_series_recount(out);
    return 0;
}

int main(int argc, char **argv)
{
    const char *data = NULL, *grid = NULL, *backend_name = "fast_cpu";
    int threads = 0, reps = 3;
    size_t bars = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage("every option takes a value");
        if (strcmp(a, "--data") == 0) data = v;
        else if (strcmp(a, "--grid") == 0) grid = v;
        else if (strcmp(a, "--backend") == 0) backend_name = v;
        else if (strcmp(a, "--threads") == 0) threads = atoi(v);
        else if (strcmp(a, "--repetitions") == 0) reps = atoi(v);
        else if (strcmp(a, "--bars") == 0) bars = (size_t)strtoull(v, NULL, 10);
        else return usage("unknown option");
        i++;
    }
    if (!data || !grid || reps < 1)
        return usage("--data and --grid are required");
    const sebt_backend *b = strcmp(backend_name, "reference") == 0 ? &sebt_reference_backend
                                                                   : &sebt_fast_cpu_backend;
    sebt_error err = { 0 };
    sebt_series full, s;
    sebt_load_opts lo = { 0 };
    if (sebt_load_csv(data, &lo, &full, &err) != SEBT_OK) {
        fprintf(stderr, "sebt_bench_grid: %s\n", err.msg);
        return 2;
    }
    if (resize(&full, bars ? bars : full.n, &s, &err) != 0) {
        fprintf(stderr, "sebt_bench_grid: %s\n", err.msg);
        return 2;
    }
    sebt_params *combos = NULL;
    size_t n = 0;
    if (sebt_grid_load(grid, &combos, &n, &err) != SEBT_OK) {
        fprintf(stderr, "sebt_bench_grid: %s\n", err.msg);
        return 2;
    }
    double *secs = malloc((size_t)reps * sizeof *secs), *cpus = malloc((size_t)reps * sizeof *cpus);
    sebt_result *res = calloc(n, sizeof *res);
    if (!secs || !cpus || !res)
        return 2;
    sebt_batch_stats stats = { 0 };
    sebt_batch_opts opts = { .threads = threads, .stats = &stats };
    long long trades = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s(), c0 = cpu_s();
        if (b->run_batch(b, &s, combos, n, &opts, res, &err) != SEBT_OK) {
            fprintf(stderr, "sebt_bench_grid: %s\n", err.msg);
            return 2;
        }
        secs[r] = now_s() - t0;
        cpus[r] = cpu_s() - c0;
        trades = 0;
        for (size_t i = 0; i < n; i++)
            trades += (long long)res[i].n_trades;
        sebt_results_free(res, n);
        memset(res, 0, n * sizeof *res);
    }
    qsort(secs, (size_t)reps, sizeof *secs, cmp_d);
    qsort(cpus, (size_t)reps, sizeof *cpus, cmp_d);
    double cmed = reps % 2 ? cpus[reps / 2] : 0.5 * (cpus[reps / 2 - 1] + cpus[reps / 2]);
    double med = reps % 2 ? secs[reps / 2] : 0.5 * (secs[reps / 2 - 1] + secs[reps / 2]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"engine\": \"%s\", \"data\": \"%s\", \"bars\": %zu, \"combos\": %zu, \"threads\": %d, "
           "\"repetitions\": %d, \"seconds\": %.6f, \"seconds_min\": %.6f, \"seconds_max\": %.6f, "
           "\"cpu_seconds\": %.6f, \"backtests_per_s\": %.1f, \"bar_combos_per_s\": %.4g, \"trades_total\": %lld, "
           "\"peak_rss_mb\": %.1f, \"stats\": {\"threads_used\": %d, \"batches\": %zu, \"chunks\": %zu, "
           "\"blocks\": %zu}}\n",
           b->name, data, s.n, n, stats.threads_used, reps, med, secs[0], secs[reps - 1], cmed, (double)n / med,
           (double)n * (double)s.n / med, trades, (double)ru.ru_maxrss / 1024.0, stats.threads_used,
           stats.batches, stats.chunks, stats.blocks);
    free(secs);
    free(cpus);
    free(res);
    free(combos);
    sebt_series_free(&s);
    sebt_series_free(&full);
    return 0;
}
