#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_cases.h"
#include "sebt/backends.h"
#include "sebt/gpu.h"
#include "sebt/oracle.h"

#include "sebt_git.h"

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
 * that is linear and adds nothing but minutes. Every case is repeated
 * (bench_default_repetitions), so a size here costs that many times. */
typedef struct {
    size_t bars[8];            /* 0-terminated */
    size_t bars_sweep_combos;
    size_t combos[10];         /* 0-terminated */
    size_t reference_max_bars;
    size_t reference_max_combos;
    size_t fast_cpu_max_combos;
    size_t cuda_max_combos;
    size_t thread_combos;
    size_t peer_combos[4];     /* 0-terminated: numba peer sweeps over the 15m series, every core */
    size_t peer_combos_1t[4];  /* 0-terminated: the same, one thread each */
    size_t pair_bars, pair_combos; /* the gated sweep, 1 thread each */
    double min_time;
    int repetitions;
} bench_sizes;

static const bench_sizes quick_sizes = {
    .bars = { 1000, 10000, 100000, 1000000, 0 },
    .bars_sweep_combos = 4,
    .combos = { 1, 10, 100, 1000, 10000, 0 },
    .reference_max_bars = 100000,
    .reference_max_combos = 1,
    .fast_cpu_max_combos = 10000,
    .cuda_max_combos = 100000,
    .thread_combos = 1000,
    .peer_combos = { 100, 0 },
    .peer_combos_1t = { 1000, 0 },
    .pair_bars = 10000,
    .pair_combos = 8,
    .min_time = 0.05,
    .repetitions = 5,
};

static const bench_sizes full_sizes = {
    .bars = { 1000, 10000, 100000, 1000000, 0 },
    .bars_sweep_combos = 4,
    .combos = { 1, 10, 100, 1000, 10000, 100000, 1000000, 0 },
    .reference_max_bars = 1000000,
    .reference_max_combos = 10,
    .fast_cpu_max_combos = 1000000,
    .cuda_max_combos = 1000000,
    .thread_combos = 10000,
    .peer_combos = { 100, 1000, 10000, 0 },
    .peer_combos_1t = { 1000, 0 },
    .pair_bars = 10000,
    .pair_combos = 8,
    .min_time = 0.5,
    .repetitions = 7,
};

int bench_default_repetitions(bool quick) { return (quick ? &quick_sizes : &full_sizes)->repetitions; }
double bench_min_time(bool quick) { return (quick ? &quick_sizes : &full_sizes)->min_time; }

static int run_repetitions = 1;
void bench_set_repetitions(int repetitions) { run_repetitions = repetitions > 0 ? repetitions : 1; }

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
    /* Host execution of the CUDA sources (SEBT_CUDA_LIBRARY pointing at
     * libsebt_cuda_host.so) is a check, not a GPU: it is never timed. */
    sebt_gpu_info gi;
    sebt_error gerr = { 0 };
    memset(&gi, 0, sizeof gi);
    sebt_status gst = sebt_gpu_query(&gi, &gerr);
    bool host_exec = (gst == SEBT_OK && gi.n_devices > 0 && strstr(gi.devices[0].name, "host execution")) ||
                     (gst != SEBT_OK && strstr(gerr.msg, "host execution"));
    if (!host_exec && sebt_backend_get("cuda", &cuda, &err) == SEBT_OK) {
        n_backends = 3;
    } else {
        if (host_exec)
            snprintf(err.msg, sizeof err.msg, "the cuda module loaded is host execution (no device): "
                     "its parity is checked, its speed is never timed");
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
            /* The gated ratio: one thread each, so that a core taken by
             * another process slows both sides alike. */
            add_case(cases, max, &n, BENCH_PAIR, "pair", name, z->pair_bars, z->pair_combos, 1, z->min_time);
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

    /* The numba peer on the work of fast_cpu's combo sweeps (same series,
     * same combos), on every core and on one thread each: on a shared
     * machine a descheduled thread stalls each parallel region, so the
     * one-thread pair is the steadier comparison. */
    for (const size_t *combos = z->peer_combos; *combos; combos++)
        add_case(cases, max, &n, BENCH_PEER, "peer", "numba", BARS_15M, *combos, 0, z->min_time);
    for (const size_t *combos = z->peer_combos_1t; *combos; combos++) {
        add_case(cases, max, &n, BENCH_PEER, "peer", "numba", BARS_15M, *combos, 1, z->min_time);
        add_case(cases, max, &n, BENCH_SWEEP_COMBOS, "sweep_combos", "fast_cpu", BARS_15M, *combos, 1,
                 z->min_time);
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

/* sebt's shared files (core/paths.c): PREFIX/share/sebt, or the build
 * folder's share/sebt; SEBT_SHARE_DIR overrides it. */
static void share_path(const char *rel, char *buf, size_t size)
{
    const char *d = sebt_data_dir();
    snprintf(buf, size, "%s/%s", d ? d : "share/sebt", rel);
}

static const char *fixtures_dir(void)
{
    const char *d = getenv("SEBT_FIXTURES_DIR");
    if (d && *d)
        return d;
    static char dir[2048];   /* leaves room for the file names callers add */
    if (!dir[0])
        share_path("fixtures", dir, sizeof dir);
    return dir;
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
    double *peer_times;    /* BENCH_PEER: the seconds of each timed run */
    size_t n_peer_times;
    double peer_others_busy, peer_load_avg; /* the machine while the peer ran */
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

/* ---- the numba peer ------------------------------------------------------ */

#ifndef SEBT_NUMBA_PYTHON
#define SEBT_NUMBA_PYTHON "/usr/bin/python3"
#endif

static const char *numba_python(void)
{
    const char *v = getenv("SEBT_NUMBA_PYTHON");
    return v && *v ? v : SEBT_NUMBA_PYTHON;
}

/* The sebt beside this program (the peer is checked against its reference). */
static void sebt_beside(char *out, size_t size)
{
    const char *env = getenv("SEBT_BINARY");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return;
    }
    /* PREFIX/bin/sebt of this installation, or the build folder's. */
    if (!sebt_part_path("sebt", out, size))
        snprintf(out, size, "sebt");
}

static bool shell_safe(const char *s)
{
    return strchr(s, '\'') == NULL;
}

/* Numbers of a JSON array "key": [a, b, ...] in the peer's own output. */
static size_t json_numbers(const char *text, const char *key, double *out, size_t max)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(text, pat);
    if (!at)
        return 0;
    at = strchr(at, '[');
    if (!at)
        return 0;
    size_t n = 0;
    at++;
    while (n < max) {
        char *end;
        double v = strtod(at, &end);
        if (end == at)
            break;
        out[n++] = v;
        at = end;
        while (*at == ' ' || *at == '\n' || *at == ',')
            at++;
    }
    return n;
}

/* Runs the peer once on this case's series and combos: it checks a sample
 * against the reference, then times as many whole sweeps as this run has
 * repetitions. JIT compilation is done and reported apart by the peer. */
static sebt_status prepare_peer(bench_prepared *p, sebt_error *err)
{
    const bench_case *c = &p->c;
    char cmd[32768], data[4096], script[4096], sebt[4096];
    share_path("peers/numba_peer.py", script, sizeof script);
    data_path(segment_files[0], data, sizeof data);
    sebt_beside(sebt, sizeof sebt);
    const char *py = numba_python();
    if (!shell_safe(py) || !shell_safe(script) || !shell_safe(data) || !shell_safe(sebt))
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "a path holds a quote; the peer is not run");
    snprintf(cmd, sizeof cmd, "'%s' -c 'import numba' >/dev/null 2>&1", py);
    if (system(cmd) != 0)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE,
                         "numba is not importable by %s (apt-get install python3-numba, or set "
                         "SEBT_NUMBA_PYTHON): the numba peer is skipped", py);
    if (c->bars != BARS_15M)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "bench: the peer runs on the 15m file only");

    char dir[] = "/tmp/sebt-bench-peer-XXXXXX";
    if (!mkdtemp(dir))
        return sebt_fail(err, SEBT_ERR_IO, "bench: cannot create a temporary folder: %s", strerror(errno));
    char combos_path[4096], err_path[4096];
    snprintf(combos_path, sizeof combos_path, "%s/combos.csv", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    FILE *f = fopen(combos_path, "w");
    sebt_status st = SEBT_OK;
    if (!f) {
        st = sebt_fail(err, SEBT_ERR_IO, "bench: cannot write %s", combos_path);
        goto out;
    }
    fputs("ema_fast,ema_slow,z_window,atr_window,vol_z,tr_z,cloc_min,use_stop,atr_stop_mult,use_tp,"
          "reward_r,use_time,max_hold,fee_bp,slippage_bp\n", f);
    for (size_t i = 0; i < c->combos; i++) {
        sebt_params q = bench_combo(i);
        fprintf(f, "%d,%d,%d,%d,%.17g,%.17g,%.17g,%s,%.17g,%s,%.17g,%s,%d,%.17g,%.17g\n", (int)q.ema_fast,
                (int)q.ema_slow, (int)q.z_window, (int)q.atr_window, q.vol_z, q.tr_z, q.cloc_min,
                q.use_stop ? "true" : "false", q.atr_stop_mult, q.use_tp ? "true" : "false", q.reward_r,
                q.use_time ? "true" : "false", (int)q.max_hold, q.fee_bp, q.slippage_bp);
    }
    if (fclose(f) != 0) {
        st = sebt_fail(err, SEBT_ERR_IO, "bench: cannot write %s", combos_path);
        goto out;
    }
    char threads[32] = "";
    if (c->threads > 0)
        snprintf(threads, sizeof threads, " --threads %d", c->threads);
    if ((size_t)snprintf(cmd, sizeof cmd,
                         "'%.4000s' '%.4000s' --data '%.4000s' --combos '%.4000s'%s --repetitions %d "
                         "--check-sample 3 --sebt '%.4000s' 2>'%.4000s'",
                         py, script, data, combos_path, threads, run_repetitions, sebt, err_path) >= sizeof cmd) {
        st = sebt_fail(err, SEBT_ERR_INTERNAL, "bench: the peer's command line is too long");
        goto out;
    }
    FILE *pp = popen(cmd, "r");
    if (!pp) {
        st = sebt_fail(err, SEBT_ERR_IO, "bench: cannot start the peer: %s", strerror(errno));
        goto out;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, pp)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *t = realloc(text, cap);
            if (!t)
                break;
            text = t;
        }
        memcpy(text + len, buf, got);
        len += got;
    }
    int rc = pclose(pp);
    if (text)
        text[len] = '\0';
    int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
    char why[512] = "";
    FILE *ef = fopen(err_path, "r");
    if (ef) {
        size_t k = fread(why, 1, sizeof why - 1, ef);
        why[k] = '\0';
        for (char *q = why; *q; q++)
            if (*q == '\n')
                *q = ' ';
        fclose(ef);
    }
    if (code == 1) {
        p->parity.status = BENCH_PARITY_FAILED;
        snprintf(p->parity.msg, sizeof p->parity.msg, "the numba peer's trade counts differ from the "
                 "reference's: %.300s", why);
    } else if (code != 0 || !text) {
        st = sebt_fail(err, SEBT_ERR_UNAVAILABLE, "the numba peer exited with %d: %.400s", code, why);
    } else {
        double times[256];
        size_t n = json_numbers(text, "seconds_all", times, 256);
        double checked[16];
        size_t n_checked = json_numbers(text, "trades_reference", checked, 16);
        if (n == 0 || !strstr(text, "\"ok\": true")) {
            st = sebt_fail(err, SEBT_ERR_INTERNAL, "the numba peer printed no timed, checked run");
        } else {
            p->peer_times = malloc(n * sizeof *p->peer_times);
            if (!p->peer_times) {
                st = sebt_fail(err, SEBT_ERR_NOMEM, "bench: out of memory");
            } else {
                memcpy(p->peer_times, times, n * sizeof *times);
                p->n_peer_times = n;
                p->parity.status = BENCH_PARITY_OK;
                p->parity.checked = n_checked;
                snprintf(p->parity.msg, sizeof p->parity.msg,
                         "%zu sampled combos have the reference's trade counts", n_checked);
            }
        }
    }
    free(text);
out:
    remove(combos_path);
    remove(err_path);
    rmdir(dir);
    return st;
}

void bench_peer_machine(const bench_prepared *p, double *others_busy, double *load_avg)
{
    *others_busy = p->peer_others_busy;
    *load_avg = p->peer_load_avg;
}

double bench_peer_seconds(const bench_prepared *p, size_t i)
{
    return p->n_peer_times ? p->peer_times[i % p->n_peer_times] : NAN;
}

/* ---- machine noise -------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* All CPUs' busy and total ticks (/proc/stat), and this process's own
 * (with waited-for children: the peer). Zeros where unreadable. */
static void read_ticks(unsigned long long *busy, unsigned long long *total, unsigned long long *self)
{
    *busy = *total = *self = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[10] = { 0 };
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
            for (int k = 0; k < 8; k++)
                *total += v[k];
            *busy = *total - v[3] - v[4]; /* idle and iowait */
        }
        fclose(f);
    }
    f = fopen("/proc/self/stat", "r");
    if (f) {
        char line[2048];
        if (fgets(line, sizeof line, f)) {
            char *q = strrchr(line, ')'); /* the name may hold spaces */
            unsigned long long ut = 0, stt = 0, cut = 0, cst = 0;
            if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut, &stt,
                            &cut, &cst) == 4)
                *self = ut + stt + cut + cst;
        }
        fclose(f);
    }
}

void bench_machine_begin(bench_machine_mark *m)
{
    read_ticks(&m->busy, &m->total, &m->self);
    m->wall = now_seconds();
}

void bench_machine_end(const bench_machine_mark *m, double *others_busy, double *load_avg)
{
    bench_machine_mark e;
    bench_machine_begin(&e);
    double load[1];
    *load_avg = getloadavg(load, 1) == 1 ? load[0] : NAN;
    *others_busy = NAN;
    if (e.total > m->total) {
        double others = (double)(e.busy - m->busy) - (double)(e.self - m->self);
        double v = others / (double)(e.total - m->total);
        *others_busy = v < 0 ? 0 : v > 1 ? 1 : v;
    }
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

    if (c->kind == BENCH_PEER) {
        p->work.bars = (double)c->bars;
        p->work.combos = (double)c->combos;
        p->work.bar_combos = p->work.bars * p->work.combos;
        bench_machine_mark mark;
        bench_machine_begin(&mark);
        st = prepare_peer(p, err);
        bench_machine_end(&mark, &p->peer_others_busy, &p->peer_load_avg);
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
    case BENCH_PAIR:
        return run_sweep(p, false, err);
    case BENCH_PEER:
        return SEBT_OK; /* timed by the peer itself: see bench_peer_seconds */
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
        free(p->peer_times);
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

/* The cuda backend's parity by host execution (gpu/README.md): the real
 * .cu sources built by the host compiler against a checking CUDA runtime
 * stand-in, run by `sebt parity` on the bundled 1m data. Not a GPU, and
 * never timed here. */
static void cuda_host_parity(char *buf, size_t size)
{
    char lib[4096], sebt[4096];
    sebt_part_path("libsebt_cuda_host.so", lib, sizeof lib);
    sebt_beside(sebt, sizeof sebt);
    if (access(lib, R_OK) != 0) {
        snprintf(buf, size, "not checked: %.900s is not built", lib);
        return;
    }
    char cmd[16384], data[4096], combos[4096], line[1024] = "", last[1024] = "";
    data_path("BTCUSDT-1m-2019-01.csv.gz", data, sizeof data);
    share_path("parity-combos.csv", combos, sizeof combos);
    if (!shell_safe(lib) || !shell_safe(sebt) || !shell_safe(data) || !shell_safe(combos)) {
        snprintf(buf, size, "not checked: a path holds a quote");
        return;
    }
    snprintf(cmd, sizeof cmd, "SEBT_CUDA_LIBRARY='%.4000s' '%.4000s' parity --backend cuda --data '%.4000s' "
             "--combos '%.4000s' 2>&1", lib, sebt, data, combos);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(buf, size, "not checked: cannot run sebt parity");
        return;
    }
    char prev[1024] = "";
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n') {
            snprintf(prev, sizeof prev, "%s", last);
            snprintf(last, sizeof last, "%s", line);
        }
    int rc = pclose(f);
    prev[strcspn(prev, "\n")] = '\0';
    last[strcspn(last, "\n")] = '\0';
    if (prev[0]) {
        char both[1024];
        snprintf(both, sizeof both, "%.500s; %.500s", prev, last);
        snprintf(last, sizeof last, "%s", both);
    }
    int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    snprintf(buf, size, "%s (host execution of the .cu sources, no device; sebt parity exit %d on "
             "BTCUSDT-1m-2019-01, oracle/parity-combos.csv): %.600s",
             code == 0 ? "ok" : "FAILED", code, last);
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
    double load[3];
    if (getloadavg(load, 3) == 3) {
        snprintf(buf, sizeof buf, "%.2f", load[0]);
        emit("sebt_load_avg", buf, user);
        snprintf(buf, sizeof buf, "%.2f %.2f %.2f", load[0], load[1], load[2]);
        emit("sebt_load_avg_1_5_15", buf, user);
    }
    /* The frequency policy moves timings by tens of percent; a VM often
     * hides it, and the report says so rather than guessing. */
    buf[0] = '\0';
    FILE *gov = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");
    if (gov) {
        if (!fgets(buf, sizeof buf, gov))
            buf[0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        fclose(gov);
    }
    emit("sebt_cpu_governor", buf[0] ? buf : "not readable (no cpufreq here, as in most VMs)", user);
    snprintf(buf, sizeof buf, "'%s' -c 'import numba; print(numba.__version__)' 2>/dev/null", numba_python());
    char ver[128];
    command_line(buf, ver, sizeof ver);
    if (ver[0])
        snprintf(buf, sizeof buf, "numba %s (%s)", ver, numba_python());
    else
        snprintf(buf, sizeof buf, "missing: numba is not importable by %s", numba_python());
    emit("sebt_numba", buf, user);
    const char *omp = getenv("OMP_NUM_THREADS");
    emit("sebt_omp_num_threads", omp && *omp ? omp : "unset", user);
    /* Spinning OpenMP workers on a machine shared with other jobs can cost
     * a sweep 100 ms per parallel region: the report says which was used. */
    const char *wait = getenv("OMP_WAIT_POLICY");
    emit("sebt_omp_wait_policy", wait && *wait ? wait : "unset", user);

    /* Captured when this program was built (cmake/sebt_version.cmake): an
     * installed sebt_bench has no checkout to ask. */
    emit("sebt_git_commit", SEBT_GIT_COMMIT, user);

    /* Each backend's contract (SPEC §8), for the report's per-backend table. */
    static const char *const names[] = { "reference", "fast_cpu", "cuda" };
    for (size_t k = 0; k < 3; k++) {
        const sebt_backend *be = NULL;
        sebt_error e = { 0 };
        char key[64];
        snprintf(key, sizeof key, "sebt_contract_%s", names[k]);
        if (sebt_backend_get(names[k], &be, &e) == SEBT_OK && be) {
            if (be->contract.kind == SEBT_CONTRACT_EXACT)
                snprintf(buf, sizeof buf, "exact");
            else
                snprintf(buf, sizeof buf, "tolerant(%g)", be->contract.tol);
        } else {
            snprintf(buf, sizeof buf, "unavailable: %.900s", e.msg);
        }
        emit(key, buf, user);
    }
    cuda_host_parity(buf, sizeof buf);
    emit("sebt_cuda_host_parity", buf, user);

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
