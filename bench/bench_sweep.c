/* sebt_bench_sweep: how fast fast_cpu sweeps against the reference, on the
 * bundled BTCUSDT 15m series (~150k bars), for 1, 100 and 10,000 combos,
 * with 1 and 2 threads, and the ratios between them measured in one run.
 *
 * The grids are what people sweep: a few window values (each window is a
 * distinct indicator series, computed once) and many values of the cheap
 * parameters (thresholds, stops, rewards, holding time):
 *   100:    vol_z x5, reward_r x4, max_hold x5 over the default windows;
 *   10,000: atr_window {48,96} x z_window {336,672} (4 indicator keys) x
 *           vol_z x5, tr_z x4, cloc_min x5, atr_stop_mult x5, reward_r x5.
 * The reference is slow (naive windows, every bar): it runs each grid's
 * first combos until a time cap and its rate is combos done / time taken.
 * Before timing, fast_cpu's results on those combos are compared with the
 * reference's (trade count and total pnl), so no speed is shown for a wrong
 * answer.
 *
 * usage: sebt_bench_sweep [--data FILE] [--json FILE] [--ref-seconds S]
 *                         [--threads LIST] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sebt/backends.h"
#include "sebt/sebt.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static sebt_params *grid_100(size_t *n)
{
    static const double vz[] = { 1.5, 2.0, 2.5, 3.0, 3.5 }, rr[] = { 1.0, 1.5, 2.0, 3.0 };
    static const int32_t mh[] = { 24, 48, 96, 192, 384 };
    sebt_params *c = malloc(100 * sizeof *c);
    size_t k = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 4; b++)
            for (int d = 0; d < 5; d++) {
                sebt_params p = sebt_params_default();
                p.vol_z = vz[a];
                p.reward_r = rr[b];
                p.max_hold = mh[d];
                c[k++] = p;
            }
    *n = k;
    return c;
}

static sebt_params *grid_10000(size_t *n)
{
    static const int32_t aw[] = { 48, 96 }, zw[] = { 336, 672 };
    static const double vz[] = { 1.0, 1.5, 2.0, 2.5, 3.0 }, tz[] = { 0.8, 1.0, 1.2, 1.5 },
                        cm[] = { 0.5, 0.6, 0.7, 0.8, 0.9 }, sm[] = { 0.3, 0.5, 0.7, 1.0, 1.5 },
                        rr[] = { 1.0, 1.5, 2.0, 2.5, 3.0 };
    sebt_params *c = malloc(10000 * sizeof *c);
    size_t k = 0;
    for (int i0 = 0; i0 < 2; i0++)
        for (int i1 = 0; i1 < 2; i1++)
            for (int i2 = 0; i2 < 5; i2++)
                for (int i3 = 0; i3 < 4; i3++)
                    for (int i4 = 0; i4 < 5; i4++)
                        for (int i5 = 0; i5 < 5; i5++)
                            for (int i6 = 0; i6 < 5; i6++) {
                                sebt_params p = sebt_params_default();
                                p.atr_window = aw[i0];
                                p.z_window = zw[i1];
                                p.vol_z = vz[i2];
                                p.tr_z = tz[i3];
                                p.cloc_min = cm[i4];
                                p.atr_stop_mult = sm[i5];
                                p.reward_r = rr[i6];
                                c[k++] = p;
                            }
    *n = k;
    return c;
}

typedef struct {
    const char *backend;
    size_t combos;      /* combos in the grid */
    size_t timed;       /* combos actually run (reference: up to the cap) */
    int threads;
    double seconds;
    double backtests_per_s;
    double bar_combos_per_s;
} row;

/* Runs combos[0 .. n) and returns the seconds (best of reps). */
static double time_batch(const sebt_backend *b, const sebt_series *s, const sebt_params *c, size_t n,
                         int threads, int reps, sebt_result *out)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        sebt_batch_opts o = { .threads = threads };
        sebt_error err = { 0 };
        double t0 = now_s();
        if (b->run_batch(b, s, c, n, &o, out, &err) != SEBT_OK) {
            fprintf(stderr, "sebt_bench_sweep: %s: %s\n", b->name, err.msg);
            exit(1);
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
        sebt_results_free(out, n);
    }
    return best;
}

int main(int argc, char **argv)
{
    const char *data = SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz";
    const char *json = NULL;
    double ref_cap = 20.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else if (strcmp(argv[i], "--ref-seconds") == 0 && i + 1 < argc)
            ref_cap = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: sebt_bench_sweep [--data FILE] [--json FILE] [--ref-seconds S]\n");
            return 2;
        }
    }
    sebt_series s;
    sebt_error err = { 0 };
    sebt_load_opts lo = { 0 };
    if (sebt_load_csv(data, &lo, &s, &err) != SEBT_OK) {
        fprintf(stderr, "sebt_bench_sweep: %s\n", err.msg);
        return 2;
    }
    const sebt_backend *ref = &sebt_reference_backend, *fast = &sebt_fast_cpu_backend;
    size_t n100, n10k;
    sebt_params one = sebt_params_default();
    sebt_params *g100 = grid_100(&n100), *g10k = grid_10000(&n10k);
    struct { const char *name; sebt_params *c; size_t n; } grids[] = {
        { "1", &one, 1 }, { "100", g100, n100 }, { "10000", g10k, n10k },
    };
    sebt_result *res = calloc(n10k, sizeof *res), *chk = calloc(n10k, sizeof *chk);
    row rows[16];
    size_t nrows = 0;
    int checked_ok = 1;
    size_t checked = 0;

    for (size_t g = 0; g < 3; g++) {
        /* The reference on the 1- and 100-combo grids, up to the time cap. */
        if (grids[g].n <= 100) {
            double t0 = now_s();
            size_t done = 0;
            while (done < grids[g].n && (done == 0 || now_s() - t0 < ref_cap)) {
                sebt_batch_opts o = { .threads = 1 };
                if (ref->run_batch(ref, &s, &grids[g].c[done], 1, &o, &res[done], &err) != SEBT_OK) {
                    fprintf(stderr, "sebt_bench_sweep: reference: %s\n", err.msg);
                    return 1;
                }
                done++;
            }
            double dt = now_s() - t0;
            /* Parity of what the reference ran, before timing fast_cpu. */
            sebt_batch_opts o = { .threads = 2 };
            if (fast->run_batch(fast, &s, grids[g].c, done, &o, chk, &err) != SEBT_OK) {
                fprintf(stderr, "sebt_bench_sweep: fast_cpu: %s\n", err.msg);
                return 1;
            }
            for (size_t i = 0; i < done; i++) {
                double a = res[i].metrics.total_pnl, b = chk[i].metrics.total_pnl;
                if (res[i].metrics.n != chk[i].metrics.n ||
                    fabs(a - b) > fast->contract.tol * fmax(1.0, fmax(fabs(a), fabs(b))))
                    checked_ok = 0;
                checked++;
            }
            sebt_results_free(res, done);
            sebt_results_free(chk, done);
            rows[nrows++] = (row){ "reference", grids[g].n, done, 1, dt, (double)done / dt,
                                   (double)done * (double)s.n / dt };
        }
        for (int threads = 1; threads <= 2; threads++) {
            int reps = grids[g].n >= 10000 ? 3 : 5;
            double dt = time_batch(fast, &s, grids[g].c, grids[g].n, threads, reps, res);
            rows[nrows++] = (row){ "fast_cpu", grids[g].n, grids[g].n, threads, dt, (double)grids[g].n / dt,
                                   (double)grids[g].n * (double)s.n / dt };
        }
    }

    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    printf("sebt_bench_sweep: %zu bars of %s, %ld online CPUs, parity of %zu combos vs reference: %s\n\n", s.n,
           data, sysconf(_SC_NPROCESSORS_ONLN), checked, checked_ok ? "ok" : "FAILED");
    printf("%-10s %8s %8s %7s %10s %14s %16s\n", "backend", "combos", "timed", "threads", "seconds",
           "backtests/s", "bar-combos/s");
    for (size_t i = 0; i < nrows; i++)
        printf("%-10s %8zu %8zu %7d %10.4f %14.1f %16.4g\n", rows[i].backend, rows[i].combos, rows[i].timed,
               rows[i].threads, rows[i].seconds, rows[i].backtests_per_s, rows[i].bar_combos_per_s);

    /* Ratios within this run. */
    double ratio_fast_ref[3] = { 0 }, ratio_threads[3] = { 0 };
    for (size_t g = 0; g < 3; g++) {
        double r1 = 0, f1 = 0, f2 = 0;
        for (size_t i = 0; i < nrows; i++) {
            if (rows[i].combos != grids[g].n)
                continue;
            if (strcmp(rows[i].backend, "reference") == 0)
                r1 = rows[i].backtests_per_s;
            else if (rows[i].threads == 1)
                f1 = rows[i].backtests_per_s;
            else
                f2 = rows[i].backtests_per_s;
        }
        ratio_fast_ref[g] = r1 > 0 ? f1 / r1 : 0;
        ratio_threads[g] = f1 > 0 ? f2 / f1 : 0;
    }
    printf("\n%-8s %26s %22s\n", "combos", "fast_cpu(1t)/reference", "fast_cpu 2t/1t");
    for (size_t g = 0; g < 3; g++) {
        if (ratio_fast_ref[g] > 0)
            printf("%-8s %26.1f %22.2f\n", grids[g].name, ratio_fast_ref[g], ratio_threads[g]);
        else
            printf("%-8s %26s %22.2f\n", grids[g].name, "-", ratio_threads[g]);
    }
    double best10k = 0;
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].combos == 10000 && rows[i].threads == 2)
            best10k = rows[i].backtests_per_s;
    printf("\ntargets: fast_cpu >= 200x reference on 100 combos: %s (%.0fx); "
           ">= 50,000 backtests/s on 10,000 combos with 2 threads: %s (%.0f); 2 threads >= 1.8x 1: %s (%.2fx)\n",
           ratio_fast_ref[1] >= 200 ? "met" : "NOT met", ratio_fast_ref[1], best10k >= 50000 ? "met" : "NOT met",
           best10k, ratio_threads[2] >= 1.8 ? "met" : "NOT met", ratio_threads[2]);

    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "sebt_bench_sweep: cannot write %s\n", json);
            return 2;
        }
        time_t now = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        fprintf(f, "{\n  \"benchmark\":\"sebt_bench_sweep\",\n  \"date\":\"%s\",\n  \"host\":\"%s\",\n", date, host);
        fprintf(f, "  \"cpus_online\":%ld,\n  \"data\":\"%s\",\n  \"bars\":%zu,\n", sysconf(_SC_NPROCESSORS_ONLN),
                data, s.n);
        fprintf(f, "  \"parity\":{\"combos_checked\":%zu,\"ok\":%s},\n", checked, checked_ok ? "true" : "false");
        fprintf(f, "  \"runs\":[\n");
        for (size_t i = 0; i < nrows; i++)
            fprintf(f, "    {\"backend\":\"%s\",\"combos\":%zu,\"timed\":%zu,\"threads\":%d,\"seconds\":%.6g,"
                       "\"backtests_per_s\":%.6g,\"bar_combos_per_s\":%.6g}%s\n",
                    rows[i].backend, rows[i].combos, rows[i].timed, rows[i].threads, rows[i].seconds,
                    rows[i].backtests_per_s, rows[i].bar_combos_per_s, i + 1 < nrows ? "," : "");
        fprintf(f, "  ],\n  \"ratios\":[\n");
        for (size_t g = 0; g < 3; g++)
            fprintf(f, "    {\"combos\":%s,\"fast_cpu_1t_over_reference\":%.6g,\"fast_cpu_2t_over_1t\":%.6g}%s\n",
                    grids[g].name, ratio_fast_ref[g], ratio_threads[g], g < 2 ? "," : "");
        fprintf(f, "  ]\n}\n");
        fclose(f);
    }
    free(res);
    free(chk);
    free(g100);
    free(g10k);
    sebt_series_free(&s);
    return checked_ok ? 0 : 1;
}
