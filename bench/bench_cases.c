#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cases.h"
#include "sebt/backends.h"
#include "sebt/gpu.h"
#include "sebt/oracle.h"

#ifndef SEBT_FIXTURES_DIR
#define SEBT_FIXTURES_DIR "fixtures"
#endif
#ifndef SEBT_SOURCE_DIR
#define SEBT_SOURCE_DIR "."
#endif
#ifndef SEBT_C_COMPILER_DESC
#define SEBT_C_COMPILER_DESC "unknown"
#endif
#ifndef SEBT_NVCC_DESC
#define SEBT_NVCC_DESC ""
#endif
#ifndef SEBT_BUILD_TYPE
#define SEBT_BUILD_TYPE ""
#endif

/* --quick also shrinks the oracle's sample on the longest series. */
static bool quick_mode;

/* ---- the plan ----------------------------------------------------------- */

/* The bundled 15m series: the combo and thread sweeps run over all of it. */
#define BARS_15M 152832

/* Sizes per mode. The reference is SPEC written literally (window sums
 * recomputed at every bar), so its sweeps stop early: what it costs past
 * that is linear and adds nothing but minutes. */
typedef struct {
    size_t bars[8];            /* 0-terminated */
    size_t bars_sweep_combos;
    size_t combos[10];         /* 0-terminated */
    size_t reference_max_bars;
    size_t reference_max_combos;
    size_t fast_cpu_max_combos;
    size_t cuda_max_combos;
    size_t thread_combos;
    double min_time;
} bench_sizes;

static const bench_sizes quick_sizes = {
    .bars = { 1000, 10000, 100000, 1000000, 0 },
    .bars_sweep_combos = 8,
    .combos = { 1, 10, 100, 1000, 10000, 100000, 1000000, 0 },
    .reference_max_bars = 10000,
    .reference_max_combos = 10,
    .fast_cpu_max_combos = 10000,
    .cuda_max_combos = 100000,
    .thread_combos = 1000,
    .min_time = 0.05,
};

static const bench_sizes full_sizes = {
    .bars = { 1000, 10000, 100000, 1000000, 0 },
    .bars_sweep_combos = 16,
    .combos = { 1, 10, 100, 1000, 10000, 100000, 1000000, 0 },
    .reference_max_bars = 1000000,
    .reference_max_combos = 100,
    .fast_cpu_max_combos = 1000000,
    .cuda_max_combos = 1000000,
    .thread_combos = 10000,
    .min_time = 0.5,
};

static size_t max_combos_for(const bench_sizes *z, const char *backend)
{
    if (strcmp(backend, "reference") == 0)
        return z->reference_max_combos;
    if (strcmp(backend, "cuda") == 0)
        return z->cuda_max_combos;
    return z->fast_cpu_max_combos;
}

static void add_case(bench_case *cases, size_t max, size_t *n, bench_kind kind, const char *group,
                     const char *backend, size_t bars, size_t combos, int threads, double min_time)
{
    if (*n < max) {
        bench_case *c = &cases[*n];
        memset(c, 0, sizeof *c);
        c->kind = kind;
        snprintf(c->backend, sizeof c->backend, "%s", backend);
        c->bars = bars;
        c->combos = combos;
        c->threads = threads;
        c->min_time = min_time;
        snprintf(c->name, sizeof c->name, "%s/%s/bars:%zu/combos:%zu/threads:%d", group, backend,
                 bars, combos, threads);
    }
    (*n)++;
}

size_t bench_plan(bool quick, int n_cpus, bench_case *cases, size_t max)
{
    const bench_sizes *z = quick ? &quick_sizes : &full_sizes;
    size_t n = 0;
    quick_mode = quick;
    const char *backends[3] = { "reference", "fast_cpu", "cuda" };
    size_t n_backends = 2;

    sebt_error err = { 0 };
    const sebt_backend *cuda = NULL;
    if (sebt_backend_get("cuda", &cuda, &err) == SEBT_OK) {
        n_backends = 3;
    } else {
        add_case(cases, max, &n, BENCH_UNAVAILABLE, "unavailable", "cuda", 0, 0, 0, z->min_time);
        if (n <= max)
            snprintf(cases[n - 1].note, sizeof cases[n - 1].note, "%s", err.msg);
    }

    for (size_t b = 0; b < n_backends; b++) {
        const char *name = backends[b];
        bool is_ref = strcmp(name, "reference") == 0;
        if (strcmp(name, "cuda") != 0) {
            add_case(cases, max, &n, BENCH_FEATURES, "micro_features", name, BARS_15M, 1, 1, z->min_time);
            add_case(cases, max, &n, BENCH_BACKTEST, "micro_backtest", name, BARS_15M, 1, 1, z->min_time);
        }
        for (const size_t *bars = z->bars; *bars; bars++) {
            if (is_ref && *bars > z->reference_max_bars)
                break;
            add_case(cases, max, &n, BENCH_SWEEP_BARS, "sweep_bars", name, *bars,
                     z->bars_sweep_combos, 0, z->min_time);
        }
        for (const size_t *combos = z->combos; *combos; combos++) {
            if (*combos > max_combos_for(z, name))
                break;
            add_case(cases, max, &n, BENCH_SWEEP_COMBOS, "sweep_combos", name, BARS_15M, *combos, 0,
                     z->min_time);
        }
    }

    /* Thread scaling of fast_cpu: 1, 2, 4, ... and every core. */
    for (int t = 1;; t *= 2) {
        int threads = t < n_cpus ? t : n_cpus;
        if (threads < 1)
            threads = 1;
        add_case(cases, max, &n, BENCH_THREADS, "threads", "fast_cpu", BARS_15M, z->thread_combos,
                 threads, z->min_time);
        if (threads >= n_cpus)
            break;
    }
    if (n_cpus < 2) /* show 2 threads on one core too: the figure asks 1 vs 2 */
        add_case(cases, max, &n, BENCH_THREADS, "threads", "fast_cpu", BARS_15M, z->thread_combos, 2,
                 z->min_time);

    /* The loader: a compressed file as shipped, and the parser alone on the
     * same rows held in memory. */
    const char *gz = quick ? "BTCUSDT-1m-2019-01.csv.gz" : "BTCUSDT-1m-2021.csv.gz";
    add_case(cases, max, &n, BENCH_LOAD_GZ, "micro_loader_gz", "loader", 0, 0, 1, z->min_time);
    if (n <= max)
        snprintf(cases[n - 1].note, sizeof cases[n - 1].note, "%s", gz);
    add_case(cases, max, &n, BENCH_LOAD_CSV, "micro_loader_csv", "loader", 0, 0, 1, z->min_time);
    if (n <= max)
        snprintf(cases[n - 1].note, sizeof cases[n - 1].note, "%s", gz);
    return n;
}

/* ---- the grid ----------------------------------------------------------- */

/* Each axis starts with the SPEC default. Thresholds and exits vary
 * fastest; windows (which cost an indicator pass each) further up. The
 * product is 1,119,744 combos. */
static const double g_vol_z[] = { 2.0, 1.5, 2.5, 3.0 };
static const double g_tr_z[] = { 1.2, 0.8, 1.6 };
static const double g_cloc[] = { 0.6, 0.5, 0.7 };
static const double g_stop_mult[] = { 0.7, 0.5, 1.0 };
static const double g_reward[] = { 2.0, 1.5, 3.0 };
static const int32_t g_max_hold[] = { 96, 48, 192 };
static const int32_t g_ema_fast[] = { 96, 48, 192 };
static const int32_t g_z_window[] = { 672, 336 };
static const int32_t g_atr_window[] = { 96, 48 };
static const int32_t g_ema_slow[] = { 672, 336 };
static const double g_fee[] = { 5.0, 2.5, 10.0 };
static const double g_slip[] = { 5.0, 2.0 };
static const bool g_flag[] = { true, false };

#define PICK(axis) axis[i % (sizeof axis / sizeof axis[0])]; i /= sizeof axis / sizeof axis[0]

sebt_params bench_combo(size_t i)
{
    sebt_params p = sebt_params_default();
    p.vol_z = PICK(g_vol_z);
    p.tr_z = PICK(g_tr_z);
    p.cloc_min = PICK(g_cloc);
    p.atr_stop_mult = PICK(g_stop_mult);
    p.reward_r = PICK(g_reward);
    p.max_hold = PICK(g_max_hold);
    p.ema_fast = PICK(g_ema_fast);
    p.z_window = PICK(g_z_window);
    p.atr_window = PICK(g_atr_window);
    p.ema_slow = PICK(g_ema_slow);
    p.fee_bp = PICK(g_fee);
    p.slippage_bp = PICK(g_slip);
    p.use_tp = PICK(g_flag);
    p.use_stop = PICK(g_flag);
    p.use_time = PICK(g_flag);
    return p;
}

/* ---- real series, joined ------------------------------------------------ */

static const char *const segment_files[] = {
    "BTCUSDT-15m-2017-2021.csv.gz",
    "BTCUSDT-1m-2021.csv.gz",
    "BTCUSDT-1m-2019-01.csv.gz",
};
#define N_SEGMENTS (sizeof segment_files / sizeof segment_files[0])

static sebt_series segments[N_SEGMENTS];
static bool segment_loaded[N_SEGMENTS];

static const char *fixtures_dir(void)
{
    const char *d = getenv("SEBT_FIXTURES_DIR");
    return d && *d ? d : SEBT_FIXTURES_DIR;
}

static void data_path(const char *file, char *buf, size_t size)
{
    snprintf(buf, size, "%s/data/%s", fixtures_dir(), file);
}

static sebt_status load_segment(size_t k, const sebt_series **out, sebt_error *err)
{
    if (!segment_loaded[k]) {
        char path[4096];
        data_path(segment_files[k], path, sizeof path);
        sebt_load_opts opts = { 0 };
        sebt_status st = sebt_load_csv(path, &opts, &segments[k], err);
        if (st != SEBT_OK)
            return st;
        if (segments[k].n == 0)
            return sebt_fail(err, SEBT_ERR_INPUT, "%s holds no bars", path);
        segment_loaded[k] = true;
    }
    *out = &segments[k];
    return SEBT_OK;
}

/* The first n bars of the files joined end to end, cycling through them
 * when n is larger than all of them. Each later file is shifted in time to
 * start two steps after the previous one ends, and the step between them is
 * a missing bar: the seam reads as an outage, so TR, ATR and the z windows
 * restart there exactly as SPEC treats a hole, instead of seeing a jump from
 * 2021 prices to 2017 ones as one enormous bar. */
static sebt_status build_joined(size_t n, sebt_series *dst, sebt_error *err)
{
    sebt_status st = sebt_series_alloc(dst, n, err);
    if (st != SEBT_OK)
        return st;
    size_t t = 0;
    int64_t next_ts = 0;
    for (size_t k = 0; t < n; k = (k + 1) % N_SEGMENTS) {
        const sebt_series *seg;
        st = load_segment(k, &seg, err);
        if (st != SEBT_OK) {
            sebt_series_free(dst);
            return st;
        }
        int64_t step = seg->interval_ms > 0 ? seg->interval_ms : 60000;
        if (t > 0) {
            dst->ts[t] = next_ts;
            sebt_series_set_missing(dst, t);
            t++;
            next_ts += step;
        }
        int64_t shift = t == 0 ? 0 : next_ts - seg->ts[0];
        for (size_t i = 0; i < seg->n && t < n; i++, t++) {
            dst->ts[t] = seg->ts[i] + shift;
            dst->open[t] = seg->open[i];
            dst->high[t] = seg->high[i];
            dst->low[t] = seg->low[i];
            dst->close[t] = seg->close[i];
            dst->volume[t] = seg->volume[i];
        }
        next_ts = dst->ts[t - 1] + step;
    }
    sebt_series_recount(dst);
    return sebt_series_check(dst, err);
}

#define MAX_SERIES 16
static struct {
    size_t n;
    sebt_series s;
} series_cache[MAX_SERIES];
static size_t n_series_cached;

static sebt_status series_of(size_t n, const sebt_series **out, sebt_error *err)
{
    for (size_t i = 0; i < n_series_cached; i++)
        if (series_cache[i].n == n) {
            *out = &series_cache[i].s;
            return SEBT_OK;
        }
    if (n_series_cached == MAX_SERIES)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "bench: more than %d series sizes", MAX_SERIES);
    sebt_series *s = &series_cache[n_series_cached].s;
    sebt_status st = build_joined(n, s, err);
    if (st != SEBT_OK)
        return st;
    series_cache[n_series_cached++].n = n;
    *out = s;
    return SEBT_OK;
}

/* ---- prepared cases ----------------------------------------------------- */

struct bench_prepared {
    bench_case c;
    const sebt_backend *backend;
    const sebt_series *series;
    sebt_params *combos;
    sebt_result *results;
    sebt_features features;
    bench_parity parity;
    bench_work work;
    char path[4096];       /* the loader's file */
    char *csv;             /* the loader's text in memory */
    size_t csv_len;
    bench_prepared *next;
};

static bench_prepared *prepared_list;

bool bench_planted_slowdown(void)
{
    const char *v = getenv("SEBT_FAST_CPU_PLANTED_SLOWDOWN");
    return v && *v && strcmp(v, "0") != 0;
}

/* Oracle verdicts per (series length, combo index): the sweeps share
 * combos and series, and each verdict costs a reference run. */
typedef struct {
    size_t bars, combo;
    bool diverged;
    size_t ties;
    char text[SEBT_ERROR_MSG_MAX];
} verdict;

#define MAX_VERDICTS 256
static verdict verdicts[MAX_VERDICTS];
static size_t n_verdicts;

static sebt_status verdict_of(const bench_prepared *p, size_t idx, const verdict **out, sebt_error *err)
{
    for (size_t i = 0; i < n_verdicts; i++)
        if (verdicts[i].bars == p->series->n && verdicts[i].combo == idx) {
            *out = &verdicts[i];
            return SEBT_OK;
        }
    if (n_verdicts == MAX_VERDICTS)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "bench: more than %d oracle verdicts", MAX_VERDICTS);
    sebt_oracle_opts opts = { .threads = p->c.threads };
    sebt_oracle_report rep;
    memset(&rep, 0, sizeof rep);
    sebt_status st = sebt_oracle_check(p->backend, p->series, &p->combos[idx], 1, &opts, &rep, err);
    if (st != SEBT_OK)
        return st;
    verdict *v = &verdicts[n_verdicts++];
    memset(v, 0, sizeof *v);
    v->bars = p->series->n;
    v->combo = idx;
    v->diverged = rep.combos_diverged > 0;
    v->ties = rep.ties;
    if (v->diverged && rep.n_details > 0) {
        sebt_divergence_text(&rep.details[0], v->text, sizeof v->text);
        for (char *c = v->text; *c; c++) /* one line: it travels as a JSON string */
            if (*c == '\n' || *c == '\t')
                *c = ' ';
    }
    *out = v;
    return SEBT_OK;
}

/* A sample of the sweep's combos (first, middle, last; only the last on
 * the longest series in --quick) through the oracle. The reference is the
 * oracle's ground truth: checking it against itself would prove nothing. */
static sebt_status check_parity(bench_prepared *p, sebt_error *err)
{
    bench_parity *par = &p->parity;
    if (strcmp(p->backend->name, "reference") == 0) {
        par->status = BENCH_PARITY_ORACLE;
        snprintf(par->msg, sizeof par->msg, "the reference is the oracle");
        return SEBT_OK;
    }
    size_t n = p->c.combos;
    size_t idx[3] = { n - 1, 0, n / 2 };
    size_t want = quick_mode && p->series->n > 500000 ? 1 : 3;
    size_t diverged = 0;
    const verdict *first_bad = NULL;
    for (size_t i = 0; i < want; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= idx[j] == idx[i];
        if (seen)
            continue;
        const verdict *v;
        sebt_status st = verdict_of(p, idx[i], &v, err);
        if (st != SEBT_OK)
            return st;
        par->checked++;
        par->ties += v->ties;
        if (v->diverged) {
            diverged++;
            if (!first_bad)
                first_bad = v;
        }
    }
    if (diverged == 0) {
        par->status = BENCH_PARITY_OK;
        snprintf(par->msg, sizeof par->msg, "%zu sampled combos agree with the oracle, %zu near-ties adjudicated",
                 par->checked, par->ties);
        return SEBT_OK;
    }
    par->status = BENCH_PARITY_FAILED;
    snprintf(par->msg, sizeof par->msg, "%zu of %zu sampled combos diverge from the oracle; combo %zu: %.400s",
             diverged, par->checked, first_bad->combo, first_bad->text);
    return SEBT_OK;
}

static sebt_status prepare_new(const bench_case *c, bench_prepared *p, sebt_error *err)
{
    sebt_status st;
    p->c = *c;
    if (c->kind == BENCH_UNAVAILABLE)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s", c->note);
    if (c->kind == BENCH_LOAD_GZ || c->kind == BENCH_LOAD_CSV) {
        data_path(c->note, p->path, sizeof p->path);
        sebt_series s;
        sebt_load_opts opts = { 0 };
        st = sebt_load_csv(p->path, &opts, &s, err);
        if (st != SEBT_OK)
            return st;
        p->work.rows = (double)s.n;
        if (c->kind == BENCH_LOAD_CSV) {
            FILE *f = open_memstream(&p->csv, &p->csv_len);
            if (!f) {
                sebt_series_free(&s);
                return sebt_fail(err, SEBT_ERR_NOMEM, "bench: open_memstream failed");
            }
            st = sebt_write_csv(&s, f, err);
            fclose(f);
        }
        sebt_series_free(&s);
        p->parity.status = BENCH_PARITY_NONE;
        return st;
    }

    st = sebt_backend_get(c->backend, &p->backend, err);
    if (st != SEBT_OK)
        return st;
    st = series_of(c->bars, &p->series, err);
    if (st != SEBT_OK)
        return st;
    p->combos = malloc(c->combos * sizeof *p->combos);
    p->results = calloc(c->combos, sizeof *p->results);
    if (!p->combos || !p->results)
        return sebt_fail(err, SEBT_ERR_NOMEM, "bench: no memory for %zu combos", c->combos);
    for (size_t i = 0; i < c->combos; i++)
        p->combos[i] = bench_combo(i);
    p->work.bars = (double)p->series->n;
    p->work.combos = (double)c->combos;
    p->work.bar_combos = p->work.bars * p->work.combos;

    st = check_parity(p, err);
    if (st != SEBT_OK)
        return st;
    if (p->parity.status == BENCH_PARITY_FAILED)
        return SEBT_OK;

    if (c->kind == BENCH_FEATURES) {
        st = sebt_features_alloc(&p->features, p->series->n, err);
        if (st != SEBT_OK)
            return st;
    }
    /* One untimed run: a short case often runs a single timed iteration,
     * which should not carry first-touch page faults or a device's
     * start-up. The reference is spared (its runs take seconds and it has
     * nothing to warm), and so are sweeps long enough to amortize it. */
    bool warm = strcmp(c->backend, "reference") != 0 && p->work.bar_combos <= 2e8;
    if (warm || c->kind == BENCH_BACKTEST) {
        st = bench_run(p, err);
        if (st != SEBT_OK)
            return st;
    }
    if (c->kind == BENCH_BACKTEST)
        p->work.trades = (double)p->results[0].n_trades;
    return SEBT_OK;
}

sebt_status bench_prepare(const bench_case *c, bench_prepared **out, sebt_error *err)
{
    for (bench_prepared *p = prepared_list; p; p = p->next)
        if (strcmp(p->c.name, c->name) == 0) {
            *out = p;
            return SEBT_OK;
        }
    bench_prepared *p = calloc(1, sizeof *p);
    if (!p)
        return sebt_fail(err, SEBT_ERR_NOMEM, "bench: out of memory");
    p->next = prepared_list;
    prepared_list = p;
    sebt_status st = prepare_new(c, p, err);
    if (st != SEBT_OK) {
        /* Remembered as failed so the next call fails the same way, fast. */
        p->parity.status = BENCH_PARITY_FAILED;
        snprintf(p->parity.msg, sizeof p->parity.msg, "%s", err->msg);
        p->c.kind = BENCH_UNAVAILABLE;
        snprintf(p->c.note, sizeof p->c.note, "%s", err->msg);
        return st;
    }
    *out = p;
    return SEBT_OK;
}

const bench_parity *bench_parity_of(const bench_prepared *p) { return &p->parity; }

bench_work bench_work_of(const bench_prepared *p) { return p->work; }

static sebt_status run_sweep(bench_prepared *p, bool want_trades, sebt_error *err)
{
    sebt_batch_opts opts = { .threads = p->c.threads, .want_trades = want_trades };
    int times = bench_planted_slowdown() && strcmp(p->backend->name, "fast_cpu") == 0 ? 2 : 1;
    for (int k = 0; k < times; k++) {
        sebt_results_free(p->results, p->c.combos);
        memset(p->results, 0, p->c.combos * sizeof *p->results);
        sebt_status st = p->backend->run_batch(p->backend, p->series, p->combos, p->c.combos, &opts,
                                               p->results, err);
        if (st != SEBT_OK)
            return st;
    }
    return SEBT_OK;
}

sebt_status bench_run(bench_prepared *p, sebt_error *err)
{
    sebt_series s;
    sebt_load_opts load = { 0 };
    sebt_status st;
    switch (p->c.kind) {
    case BENCH_SWEEP_BARS:
    case BENCH_SWEEP_COMBOS:
    case BENCH_THREADS:
        return run_sweep(p, false, err);
    case BENCH_BACKTEST:
        return run_sweep(p, true, err);
    case BENCH_FEATURES: {
        int times = bench_planted_slowdown() && strcmp(p->backend->name, "fast_cpu") == 0 ? 2 : 1;
        for (int k = 0; k < times; k++) {
            st = p->backend->features(p->backend, p->series, &p->combos[0], &p->features, err);
            if (st != SEBT_OK)
                return st;
        }
        return SEBT_OK;
    }
    case BENCH_LOAD_GZ:
        st = sebt_load_csv(p->path, &load, &s, err);
        if (st == SEBT_OK)
            sebt_series_free(&s);
        return st;
    case BENCH_LOAD_CSV:
        st = sebt_load_csv_buffer(p->c.note, p->csv, p->csv_len, &load, &s, err);
        if (st == SEBT_OK)
            sebt_series_free(&s);
        return st;
    case BENCH_UNAVAILABLE:
        break;
    }
    return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s", p->c.note);
}

void bench_release_all(void)
{
    while (prepared_list) {
        bench_prepared *p = prepared_list;
        prepared_list = p->next;
        if (p->results)
            sebt_results_free(p->results, p->c.combos);
        free(p->results);
        free(p->combos);
        sebt_features_free(&p->features);
        free(p->csv);
        free(p);
    }
    for (size_t i = 0; i < n_series_cached; i++)
        sebt_series_free(&series_cache[i].s);
    n_series_cached = 0;
    for (size_t k = 0; k < N_SEGMENTS; k++)
        if (segment_loaded[k]) {
            sebt_series_free(&segments[k]);
            segment_loaded[k] = false;
        }
}

/* ---- context ------------------------------------------------------------ */

static void read_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ')
                    v++;
                v[strcspn(v, "\n")] = '\0';
                snprintf(buf, size, "%s", v);
            }
            break;
        }
    }
    fclose(f);
}

/* First line of a command's output, "" when it fails. */
static void command_line(const char *cmd, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = popen(cmd, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)size, f))
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    pclose(f);
}

void bench_context(bool quick, bench_context_fn emit, void *user)
{
    char buf[1024];
    read_cpu_model(buf, sizeof buf);
    emit("sebt_cpu_model", buf, user);
    snprintf(buf, sizeof buf, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    emit("sebt_cpu_cores", buf, user);
    emit("sebt_c_compiler", SEBT_C_COMPILER_DESC, user);
    emit("sebt_nvcc", SEBT_NVCC_DESC[0] ? SEBT_NVCC_DESC : "none", user);
    emit("sebt_build_type", SEBT_BUILD_TYPE, user);
    emit("sebt_version", SEBT_VERSION, user);
    emit("sebt_quick", quick ? "true" : "false", user);
    emit("sebt_planted_slowdown", bench_planted_slowdown() ? "true" : "false", user);
    double load[1];
    if (getloadavg(load, 1) == 1) {
        snprintf(buf, sizeof buf, "%.2f", load[0]);
        emit("sebt_load_avg", buf, user);
    }
    const char *omp = getenv("OMP_NUM_THREADS");
    emit("sebt_omp_num_threads", omp && *omp ? omp : "unset", user);
    /* Spinning OpenMP workers on a machine shared with other jobs can cost
     * a sweep 100 ms per parallel region: the report says which was used. */
    const char *wait = getenv("OMP_WAIT_POLICY");
    emit("sebt_omp_wait_policy", wait && *wait ? wait : "unset", user);

    /* Plumbing only: git status would rewrite the index of a tree that
     * other people are working in. */
    char commit[128], cmd[8192];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", SEBT_SOURCE_DIR);
    command_line(cmd, commit, sizeof commit);
    if (commit[0]) {
        char dirty[16];
        snprintf(cmd, sizeof cmd,
                 "git -C '%s' diff-index --quiet HEAD -- >/dev/null 2>&1 || echo dirty",
                 SEBT_SOURCE_DIR);
        command_line(cmd, dirty, sizeof dirty);
        snprintf(buf, sizeof buf, "%s%s", commit, dirty[0] ? " (with uncommitted changes)" : "");
    } else {
        snprintf(buf, sizeof buf, "unknown (not a git checkout)");
    }
    emit("sebt_git_commit", buf, user);

    sebt_gpu_info info;
    sebt_error err = { 0 };
    memset(&info, 0, sizeof info);
    sebt_status st = sebt_gpu_query(&info, &err);
    if (st == SEBT_OK && info.n_devices > 0) {
        int d = info.selected >= 0 ? info.selected : 0;
        snprintf(buf, sizeof buf, "driver %d.%d, runtime %d.%d, %s (cc %d.%d, %d SMs)",
                 info.driver_version / 1000, info.driver_version % 1000 / 10,
                 info.runtime_version / 1000, info.runtime_version % 1000 / 10,
                 info.devices[d].name, info.devices[d].cc_major, info.devices[d].cc_minor,
                 info.devices[d].multiprocessors);
    } else {
        snprintf(buf, sizeof buf, "none: %s", err.msg[0] ? err.msg : "no device");
    }
    emit("sebt_cuda", buf, user);
}
