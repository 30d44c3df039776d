/* The report folder: bench.json, the figures, report.md and index.html.
 * index.html carries everything inline (styles, and the SVG figures as data
 * URIs), so it opens from a CI artifact or a laptop with no network. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include "report_internal.h"
#include "sebt/outfile.h"
#include "sebt/sebt.h"

/* ---- numbers for people ------------------------------------------------- */

static void fmt_rate(double v, char *buf, size_t size)
{
    static const char *const prefix[] = { "", " k", " M", " G", " T" };
    if (!isfinite(v)) {
        snprintf(buf, size, "-");
        return;
    }
    int k = 0;
    while (fabs(v) >= 1000 && k < 4) {
        v /= 1000;
        k++;
    }
    snprintf(buf, size, "%.3g%s", v, prefix[k]);
}

static void fmt_seconds(double s, char *buf, size_t size)
{
    if (!isfinite(s))
        snprintf(buf, size, "-");
    else if (s >= 1)
        snprintf(buf, size, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, size, "%.3g ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, size, "%.3g us", s * 1e6);
    else
        snprintf(buf, size, "%.3g ns", s * 1e9);
}

/* "30.7-38.4 ms": one unit when both ends share it, no spaces, so a
 * table cell does not wrap. */
static void fmt_range(double lo, double hi, char *buf, size_t size)
{
    char a[32], b[32];
    fmt_seconds(lo, a, sizeof a);
    fmt_seconds(hi, b, sizeof b);
    const char *ua = strchr(a, ' '), *ub = strchr(b, ' ');
    if (ua && ub && strcmp(ua, ub) == 0)
        snprintf(buf, size, "%.*s-%s", (int)(ua - a), a, b);
    else
        snprintf(buf, size, "%s-%s", a, b);
}

static void fmt_count(long long v, char *buf, size_t size)
{
    if (v < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%lld", v);
}

static const char *status_word(const sebt_bench_run *r)
{
    switch (r->status) {
    case SEBT_RUN_OK: return "ok";
    case SEBT_RUN_PARITY_FAILED: return "PARITY FAILED (not timed)";
    case SEBT_RUN_UNAVAILABLE: return "unavailable";
    case SEBT_RUN_ERROR: return "ERROR";
    }
    return "?";
}

/* ---- what the report says ----------------------------------------------- */

typedef struct {
    char key[64];
    char value[1024];
} kv;

#define N_FACTS 20

static size_t collect_facts(const sebt_bench_set *set, const sebt_report_opts *opts, kv *facts)
{
    size_t n = 0;
#define FACT(k, ...) do { snprintf(facts[n].key, sizeof facts[n].key, "%s", k); \
                          snprintf(facts[n].value, sizeof facts[n].value, __VA_ARGS__); n++; } while (0)
#define CTX(k, fb) (sebt_bench_context(set, k) ? sebt_bench_context(set, k) : (fb))
    FACT("Machine", "%s, %s logical cores (host %s)", CTX("sebt_cpu_model", "unknown CPU"),
         CTX("sebt_cpu_cores", CTX("num_cpus", "?")), CTX("host_name", "?"));
    FACT("C compiler", "%s", CTX("sebt_c_compiler", "unknown"));
    FACT("C++ compiler (bench shim)", "%s", CTX("sebt_cxx_compiler", "unknown"));
    FACT("nvcc", "%s", CTX("sebt_nvcc", "unknown"));
    /* The reason a backend cannot run is said once, in the Backends table. */
    const char *cuda = CTX("sebt_cuda", "unknown");
    if (strncmp(cuda, "none:", 5) == 0)
        FACT("CUDA", "none here (the cuda row of the Backends table says why)");
    else
        FACT("CUDA", "%s", cuda);
    FACT("Commit", "%s", CTX("sebt_git_commit", "unknown"));
    FACT("Benchmarks run", "%s", CTX("date", "unknown"));
    time_t now = time(NULL);
    struct tm tm;
    char date[64] = "?";
    if (gmtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    FACT("Report written", "%s", date);
    FACT("Build", "sebt %s, %s build", CTX("sebt_version", "?"), CTX("sebt_build_type", "?"));
    FACT("Mode", "%s, %s repetitions of every point (interleaved at random), OMP_NUM_THREADS=%s, "
         "OMP_WAIT_POLICY=%s",
         strcmp(CTX("sebt_quick", "false"), "true") == 0 ? "--quick (capped sizes)" : "full",
         CTX("sebt_repetitions", "1"), CTX("sebt_omp_num_threads", "?"), CTX("sebt_omp_wait_policy", "?"));
    char why[256];
    bool loaded = sebt_run_loaded(set, why, sizeof why);
    FACT("Machine noise", "%s%s; load average %s (1, 5, 15 min) when it started; CPU frequency policy: %s",
         loaded ? "LOADED: " : "quiet: ", why, CTX("sebt_load_avg_1_5_15", CTX("sebt_load_avg", "?")),
         CTX("sebt_cpu_governor", "not recorded"));
    FACT("numba peer", "%s", CTX("sebt_numba", "not recorded"));
    if (strcmp(CTX("sebt_planted_slowdown", "false"), "true") == 0)
        FACT("WARNING", "SEBT_FAST_CPU_PLANTED_SLOWDOWN was set: fast_cpu did every call twice");
    FACT("Numbers from", "%s", opts->source ? opts->source : "?");
#undef FACT
#undef CTX
    return n;
}

typedef struct {
    const char *backend;
    size_t ok, failed, unavailable, errors;
    double checked, ties;
    const char *first_problem;
    bool oracle;
} parity_summary;

static size_t summarize_parity(const sebt_bench_set *set, parity_summary *out, size_t max)
{
    const char *names[16];
    size_t nb = sebt_report_backends(set, names, max < 16 ? max : 16);
    for (size_t b = 0; b < nb; b++) {
        parity_summary *p = &out[b];
        memset(p, 0, sizeof *p);
        p->backend = names[b];
        for (size_t i = 0; i < set->n_runs; i++) {
            const sebt_bench_run *r = &set->runs[i];
            if (strcmp(r->backend, names[b]) != 0)
                continue;
            switch (r->status) {
            case SEBT_RUN_OK:
                p->ok++;
                p->checked += r->parity_checked;
                p->ties += r->parity_ties;
                if (strncmp(r->message, "parity oracle", 13) == 0)
                    p->oracle = true;
                break;
            case SEBT_RUN_PARITY_FAILED: p->failed++; break;
            case SEBT_RUN_UNAVAILABLE: p->unavailable++; break;
            case SEBT_RUN_ERROR: p->errors++; break;
            }
            if (r->status != SEBT_RUN_OK && !p->first_problem)
                p->first_problem = r->message;
        }
    }
    return nb;
}

static void parity_text(const parity_summary *p, char *buf, size_t size)
{
    if (p->failed)
        snprintf(buf, size, "FAILED: %zu benchmark(s) diverged from the oracle and are not timed", p->failed);
    else if (p->errors)
        snprintf(buf, size, "ERROR: %zu benchmark(s) failed to run", p->errors);
    else if (p->ok == 0)
        snprintf(buf, size, "not run here");
    else if (p->oracle)
        snprintf(buf, size, "the oracle itself (%zu benchmarks)", p->ok);
    else
        snprintf(buf, size, "ok: %zu benchmarks, %.0f sampled combos agree, %.0f near-ties adjudicated",
                 p->ok, p->checked, p->ties);
}

/* ---- escaping ----------------------------------------------------------- */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') /* the only character that breaks a table cell */
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

/* ---- the tables, written once for both formats -------------------------- */

typedef enum { FMT_MD, FMT_HTML } fmt;

static void cell(FILE *f, fmt k, const char *s, bool first)
{
    if (k == FMT_MD) {
        fputs(first ? "| " : " | ", f);
        md_text(f, s);
    } else {
        fputs("<td>", f);
        html_text(f, s);
        fputs("</td>", f);
    }
}

static void row_start(FILE *f, fmt k) { fputs(k == FMT_MD ? "" : "<tr>", f); }
static void row_end(FILE *f, fmt k) { fputs(k == FMT_MD ? " |\n" : "</tr>\n", f); }

/* numeric: an HTML table whose cells never wrap (figures and ranges). */
static void header_of(FILE *f, fmt k, const char *const *cols, size_t n, bool numeric)
{
    if (k == FMT_MD) {
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%s", i ? " | " : "| ", cols[i]);
        fputs(" |\n", f);
        for (size_t i = 0; i < n; i++)
            fputs(i ? "|---" : "|---", f);
        fputs("|\n", f);
    } else {
        fputs(numeric ? "<table class=\"num\">\n<tr>" : "<table>\n<tr>", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "<th>%s</th>", cols[i]);
        fputs("</tr>\n", f);
    }
}

static void header(FILE *f, fmt k, const char *const *cols, size_t n) { header_of(f, k, cols, n, false); }

static void table_end(FILE *f, fmt k) { fputs(k == FMT_MD ? "\n" : "</table>\n", f); }

static void write_facts(FILE *f, fmt k, const kv *facts, size_t n)
{
    static const char *const cols[] = { "", "" };
    header(f, k, cols, 2);
    for (size_t i = 0; i < n; i++) {
        row_start(f, k);
        cell(f, k, facts[i].key, true);
        cell(f, k, facts[i].value, false);
        row_end(f, k);
    }
    table_end(f, k);
}

static bool is_sweep(const sebt_bench_run *r)
{
    return strcmp(r->group, "sweep_bars") == 0 || strcmp(r->group, "sweep_combos") == 0 ||
           strcmp(r->group, "threads") == 0 || strcmp(r->group, "pair") == 0 || strcmp(r->group, "peer") == 0;
}

/* Tables read top-down: by kind of sweep, backend, then size. */
static int cmp_runs(const void *a, const void *b)
{
    const sebt_bench_run *x = *(const sebt_bench_run *const *)a, *y = *(const sebt_bench_run *const *)b;
    int c = strcmp(x->group, y->group);
    if (!c)
        c = strcmp(x->backend, y->backend);
    if (!c)
        c = (x->bars > y->bars) - (x->bars < y->bars);
    if (!c)
        c = (x->combos > y->combos) - (x->combos < y->combos);
    if (!c) { /* "all" (0) after the counted threads */
        int tx = x->threads > 0 ? x->threads : 1 << 30, ty = y->threads > 0 ? y->threads : 1 << 30;
        c = (tx > ty) - (tx < ty);
    }
    return c;
}

static const sebt_bench_run **sorted_runs(const sebt_bench_set *set)
{
    const sebt_bench_run **v = malloc((set->n_runs + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < set->n_runs; i++)
        v[i] = &set->runs[i];
    qsort(v, set->n_runs, sizeof *v, cmp_runs);
    return v;
}

static void write_sweeps(FILE *f, fmt k, const sebt_bench_set *set)
{
    const sebt_bench_run **order = sorted_runs(set);
    if (!order)
        return;
    static const char *const cols[] = { "sweep", "backend", "bars", "combos", "threads", "time / sweep (median)",
                                        "min-max", "CV", "reps", "others busy", "backtests/s", "bar-combos/s",
                                        "status" };
    header_of(f, k, cols, 13, true);
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = order[i];
        if (!is_sweep(r))
            continue;
        char bars[32], combos[32], threads[32], t[32], a[32], b[32], c[32];
        fmt_count(r->bars, bars, sizeof bars);
        fmt_count(r->combos, combos, sizeof combos);
        if (r->threads > 0)
            snprintf(threads, sizeof threads, "%d", r->threads);
        else
            snprintf(threads, sizeof threads, "all");
        fmt_seconds(r->seconds, t, sizeof t);
        (void)a;
        fmt_rate(r->combos_per_s, b, sizeof b);
        fmt_rate(r->bar_combos_per_s, c, sizeof c);
        char range[80] = "-", cv[32] = "-", reps[32], busy[48] = "-";
        if (r->status == SEBT_RUN_OK) {
            fmt_range(r->seconds_min, r->seconds_max, range, sizeof range);
            if (isfinite(r->cv))
                snprintf(cv, sizeof cv, "%.1f%%%s", 100 * r->cv, r->cv > 0.1 ? " noisy" : "");
            if (isfinite(r->others_busy))
                snprintf(busy, sizeof busy, "%.0f%%", 100 * r->others_busy);
            if (sebt_bench_run_loaded(set, r)) {
                size_t used = strlen(busy);
                snprintf(busy + used, sizeof busy - used, " LOADED");
            }
        }
        snprintf(reps, sizeof reps, "%zu", r->n_reps);
        char status[300];
        if (r->same_as[0])
            snprintf(status, sizeof status, "%s (the %s row: same workload, one measurement)", status_word(r),
                     r->same_as);
        else
            snprintf(status, sizeof status, "%s", status_word(r));
        row_start(f, k);
        cell(f, k, r->group, true);
        cell(f, k, r->backend, false);
        cell(f, k, bars, false);
        cell(f, k, combos, false);
        cell(f, k, threads, false);
        cell(f, k, t, false);
        cell(f, k, range, false);
        cell(f, k, cv, false);
        cell(f, k, reps, false);
        cell(f, k, busy, false);
        cell(f, k, b, false);
        cell(f, k, c, false);
        cell(f, k, status, false);
        row_end(f, k);
    }
    table_end(f, k);
    free(order);
}

static void write_micro(FILE *f, fmt k, const sebt_bench_set *set)
{
    static const char *const cols[] = { "benchmark", "backend", "time / call", "cost per unit", "rate", "status" };
    const sebt_bench_run **order = sorted_runs(set);
    if (!order)
        return;
    header_of(f, k, cols, 6, true);
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = order[i];
        if (is_sweep(r) || strcmp(r->group, "unavailable") == 0)
            continue;
        char t[32], unit[64] = "-", rate[64] = "-", tmp[32];
        fmt_seconds(r->seconds, t, sizeof t);
        const char *what = r->group;
        if (strcmp(r->group, "micro_features") == 0) {
            what = "features: every indicator and the signal, per bar";
            if (r->bars_per_s > 0) {
                fmt_seconds(1 / r->bars_per_s, tmp, sizeof tmp);
                snprintf(unit, sizeof unit, "%s per bar", tmp);
                fmt_rate(r->bars_per_s, tmp, sizeof tmp);
                snprintf(rate, sizeof rate, "%s bars/s", tmp);
            }
        } else if (strcmp(r->group, "micro_backtest") == 0) {
            what = "one backtest with its trades, per trade";
            if (r->trades_per_s > 0) {
                fmt_seconds(1 / r->trades_per_s, tmp, sizeof tmp);
                snprintf(unit, sizeof unit, "%s per trade", tmp);
                fmt_rate(r->trades_per_s, tmp, sizeof tmp);
                snprintf(rate, sizeof rate, "%s trades/s", tmp);
            }
        } else if (strncmp(r->group, "micro_loader", 12) == 0) {
            what = strcmp(r->group, "micro_loader_gz") == 0 ? "loader: .csv.gz file, per million rows"
                                                            : "loader: CSV text in memory, per million rows";
            if (r->rows_per_s > 0) {
                fmt_seconds(1e6 / r->rows_per_s, tmp, sizeof tmp);
                snprintf(unit, sizeof unit, "%s per million rows", tmp);
                fmt_rate(r->rows_per_s, tmp, sizeof tmp);
                snprintf(rate, sizeof rate, "%s rows/s", tmp);
            }
        }
        row_start(f, k);
        cell(f, k, what, true);
        cell(f, k, r->backend, false);
        cell(f, k, t, false);
        cell(f, k, unit, false);
        cell(f, k, rate, false);
        cell(f, k, status_word(r), false);
        row_end(f, k);
    }
    table_end(f, k);
    free(order);
}

static void bullet(FILE *f, fmt k, const char *line)
{
    if (k == FMT_MD) {
        fputs("- ", f);
        md_text(f, line);
        fputs("\n", f);
    } else {
        fputs("<li>", f);
        html_text(f, line);
        fputs("</li>\n", f);
    }
}

/* The first lines: the verdict and against what, one speed figure with
 * its workload, then what could make them wrong (a loaded machine, the
 * benchmark library's warning), each said once. */
static void write_headline(FILE *f, fmt k, const sebt_bench_set *set, const sebt_report_summary *sum)
{
    if (k == FMT_MD) {
        fputs("**", f);
        md_text(f, sum->verdict);
        fputs("**\n\n", f);
        md_text(f, sum->headline);
        fputs("\n\n", f);
    } else {
        fprintf(f, "<p class=\"verdict %s\">", sum->call == SEBT_CALL_PASS || sum->call == SEBT_CALL_FASTER ? "good"
                                              : sum->call == SEBT_CALL_INCONCLUSIVE ? "unsure" : "bad");
        html_text(f, sum->verdict);
        fputs("</p>\n<p class=\"speed\">", f);
        html_text(f, sum->headline);
        fputs("</p>\n", f);
    }
    char why[256], line[768];
    bool loaded = sebt_run_loaded(set, why, sizeof why);
    if (loaded || sum->warning[0]) {
        fputs(k == FMT_MD ? "" : "<ul class=\"warn\">\n", f);
        if (loaded) {
            snprintf(line, sizeof line, "MACHINE LOADED while measuring: %s. Wall times and thread scaling are "
                     "pessimistic; the gated ratio uses CPU time on one thread.", why);
            bullet(f, k, line);
        }
        if (sum->warning[0])
            bullet(f, k, sum->warning);
        fputs(k == FMT_MD ? "\n" : "</ul>\n", f);
    }
}

/* A paragraph of notes under a table, escaped for the format. */
static void note_para(FILE *f, fmt k, const char *text)
{
    fputs(k == FMT_MD ? "" : "<p class=\"note\">", f);
    if (k == FMT_MD)
        md_text(f, text);
    else
        html_text(f, text);
    fputs(k == FMT_MD ? "\n\n" : "</p>\n", f);
}

/* One row of the ratios table: what over what, the median, the range, the
 * work per sweep, the threads and what timed it. */
static void ratio_row(FILE *f, fmt k, const char *ratio, const char *med, const char *range, const char *work,
                      const char *threads, const char *timed_by)
{
    row_start(f, k);
    cell(f, k, ratio, true);
    cell(f, k, med, false);
    cell(f, k, range, false);
    cell(f, k, work, false);
    cell(f, k, threads, false);
    cell(f, k, timed_by, false);
    row_end(f, k);
}

/* A row against the numba peer (wall time), its ratios to one decimal. */
static void numba_row(FILE *f, fmt k, double ratio, double lo, double hi, long long combos, long long bars,
                      const char *threads)
{
    char med[32], range[64], work[96];
    snprintf(med, sizeof med, "%.1f", ratio);
    snprintf(range, sizeof range, "%.1f-%.1f", lo, hi);
    snprintf(work, sizeof work, "%lld combos x %lld bars", combos, bars);
    ratio_row(f, k, "fast_cpu / numba", med, range, work, threads, "wall time");
}

/* The ratios measured side by side in this run, each with its workload,
 * so that 12 x and 174 x against numba read as two questions, not one
 * contradiction. Sorted: the gated ratio first, then the peer. */
static void write_ratios(FILE *f, fmt k, const sebt_bench_set *set)
{
    static const char *const cols[] = { "ratio (times faster)", "median", "min-max", "work per sweep", "threads",
                                         "timed by" };
    sebt_headline h;
    sebt_headline_of(set, &h);
    header_of(f, k, cols, 6, true);
    char med[32], range[64], work[96], threads[64];
    const char *cores = sebt_bench_context(set, "sebt_cpu_cores");
    if (isfinite(h.vs_reference)) {
        const sebt_bench_run *pair = NULL;
        for (size_t i = 0; i < set->n_runs && !pair; i++)
            if (strcmp(set->runs[i].group, "pair") == 0 && strcmp(set->runs[i].backend, "fast_cpu") == 0)
                pair = &set->runs[i];
        snprintf(med, sizeof med, "%.0f", h.vs_reference);
        snprintf(range, sizeof range, "%.0f-%.0f", h.vs_reference_min, h.vs_reference_max);
        if (pair)
            snprintf(work, sizeof work, "%lld combos x %lld bars", pair->combos, pair->bars);
        else
            snprintf(work, sizeof work, "-");
        ratio_row(f, k, "fast_cpu / reference (gated by --baseline)", med, range, work, "1 each", "CPU time");
    }
    if (isfinite(h.vs_numba_1t))
        numba_row(f, k, h.vs_numba_1t, h.vs_numba_1t_min, h.vs_numba_1t_max, h.numba_1t_combos, h.numba_bars,
                  "1 each");
    if (isfinite(h.vs_numba)) {
        snprintf(threads, sizeof threads, "every core (%s)", cores ? cores : "?");
        numba_row(f, k, h.vs_numba, h.vs_numba_min, h.vs_numba_max, h.numba_combos, h.numba_bars, threads);
    }
    table_end(f, k);
    const sebt_bench_run *peer = NULL;
    for (size_t i = 0; i < set->n_runs && !peer; i++)
        if (strcmp(set->runs[i].group, "peer") == 0)
            peer = &set->runs[i];
    char line[768];
    if (!isfinite(h.vs_numba) && !isfinite(h.vs_numba_1t))
        snprintf(line, sizeof line, "numba: %s", peer ? peer->message : "the peer was not run");
    else
        snprintf(line, sizeof line, "The numba peer (bench/peers/numba_peer.py) runs the same combos over the same "
                 "bars after its trade counts are checked against the reference. On every core a small sweep is "
                 "dominated by fixed costs (numba's call overhead, fast_cpu's series work), so the one-thread "
                 "ratio is the comparison of the engines.");
    note_para(f, k, line);
}

/* One row per backend: its contract, its parity here, its speed here. */
static void write_backends(FILE *f, fmt k, const sebt_bench_set *set)
{
    static const char *const cols[] = { "backend", "contract (SPEC §8)", "parity", "speed" };
    header(f, k, cols, 4);
    parity_summary ps[16];
    size_t n = summarize_parity(set, ps, 16);
    static const char *const all[] = { "reference", "fast_cpu", "cuda", "numba" };
    for (size_t b = 0; b < 4; b++) {
        char contract[256], parity[1024], speed[512], key[64];
        snprintf(key, sizeof key, "sebt_contract_%s", all[b]);
        const char *c = sebt_bench_context(set, key);
        snprintf(contract, sizeof contract, "%s", strcmp(all[b], "numba") == 0 ? "a peer: trade counts checked on a sample"
                                                  : c ? c : "not recorded");
        const parity_summary *p = NULL;
        for (size_t i = 0; i < n; i++)
            if (strcmp(ps[i].backend, all[b]) == 0)
                p = &ps[i];
        if (p) {
            parity_text(p, parity, sizeof parity);
            /* Each reason once: an unavailable backend's is often its contract cell already. */
            if (p->first_problem && (p->failed || p->errors || !strstr(contract, p->first_problem))) {
                size_t used = strlen(parity);
                snprintf(parity + used, sizeof parity - used, "%s%s", p->failed || p->errors ? "; first: " : ": ",
                         p->first_problem);
            }
        } else {
            snprintf(parity, sizeof parity, "not run here");
        }
        /* The number of one row of the Sweeps table, with its workload:
         * the same figure wherever the report gives this speed. */
        const sebt_bench_run *sr = sebt_bench_speed_run(set, all[b]);
        if (sr) {
            char rate[32];
            fmt_rate(sr->combos_per_s, rate, sizeof rate);
            int th = sebt_bench_threads_used(set, sr);
            char how[64];
            if (strcmp(all[b], "reference") == 0) /* scalar: one thread whatever it is given */
                snprintf(how, sizeof how, "one thread (it is scalar)");
            else
                snprintf(how, sizeof how, "every core (%d thread%s)", th, th == 1 ? "" : "s");
            snprintf(speed, sizeof speed, "measured: %s backtests/s on %lld combo%s x %lld bars, %s%s", rate,
                     sr->combos, sr->combos == 1 ? "" : "s", sr->bars, how,
                     sebt_bench_run_loaded(set, sr) ? "; MEASURED UNDER LOAD" : "");
        } else if (strcmp(all[b], "cuda") == 0) {
            snprintf(speed, sizeof speed, "no device here. Modelled (not measured): 1 bar-combo per SM per cycle, "
                     "e.g. about 2.6e11 bar-combos/s (1.7 M backtests/s of 152,832 bars) on an H100 SXM "
                     "after 0.25 s of start-up (gpu/README.md)");
        } else {
            snprintf(speed, sizeof speed, "not measured");
        }
        if (strcmp(all[b], "cuda") == 0) {
            const char *host = sebt_bench_context(set, "sebt_cuda_host_parity");
            size_t used = strlen(parity);
            snprintf(parity + used, sizeof parity - used, "%sHost execution: %s", used ? ". " : "",
                     host ? host : "not recorded");
        }
        row_start(f, k);
        cell(f, k, all[b], true);
        cell(f, k, contract, false);
        cell(f, k, parity, false);
        cell(f, k, speed, false);
        row_end(f, k);
    }
    table_end(f, k);
}

/* One workload of the big-sweep benchmark, its medians formatted. */
static void big_row(FILE *f, fmt k, const sebt_big_row *r)
{
    char combos[32], threads[16], reps[16], e2e[32], per[32], comp[32], cpu[32], rss[32] = "-", out[32] = "-",
        eff[32] = "-", load[48] = "-";
    snprintf(combos, sizeof combos, "%lld", r->combos);
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(reps, sizeof reps, "%zu", r->reps);
    fmt_seconds(r->end_to_end_s, e2e, sizeof e2e);
    fmt_seconds(r->end_to_end_s / (double)r->combos, per, sizeof per);
    fmt_seconds(r->compute_s, comp, sizeof comp);
    fmt_seconds(r->cpu_s, cpu, sizeof cpu);
    if (isfinite(r->peak_rss_kb))
        snprintf(rss, sizeof rss, "%.1f MiB", r->peak_rss_kb / 1024);
    if (isfinite(r->bytes))
        snprintf(out, sizeof out, "%.1f MB", r->bytes / 1e6);
    if (isfinite(r->efficiency))
        snprintf(eff, sizeof eff, "%.0f%%", 100 * r->efficiency);
    if (isfinite(r->load_min))
        snprintf(load, sizeof load, "%.1f-%.1f", r->load_min, r->load_max);
    char engine[64];
    sebt_big_engine_label(r, engine, sizeof engine);
    row_start(f, k);
    cell(f, k, engine, true);
    cell(f, k, r->grid, false);
    cell(f, k, combos, false);
    cell(f, k, r->format, false);
    cell(f, k, threads, false);
    cell(f, k, reps, false);
    cell(f, k, e2e, false);
    cell(f, k, per, false);
    cell(f, k, comp, false);
    cell(f, k, cpu, false);
    cell(f, k, rss, false);
    cell(f, k, out, false);
    cell(f, k, eff, false);
    cell(f, k, load, false);
    row_end(f, k);
}

/* The big-sweep benchmark, when there is one: a row per workload, the
 * medians of its repetitions; else where one was looked for and how to
 * make one. */
static void write_big_sweeps(FILE *f, fmt k, const sebt_big_sweeps *bs)
{
    char line[8192];
    if (!bs->found || bs->n_rows == 0) {
        snprintf(line, sizeof line, "No big-sweep benchmark was found%s%s%s. bench/run_big_sweeps.sh BUILD_DIR makes "
                 "one (sweeps of 10^4 to 10^6 combos over the bundled 15m series, CSV, JSON and npy, 1 and 2 "
                 "threads, each repeated; FULL=1 adds 10^7) into " SEBT_BIG_SWEEPS_DEFAULT ", which is "
                 "installed with sebt and which the report reads from there (or name one: --big-sweeps FILE).",
                 bs->found ? ": " : " (looked for ", bs->path[0] ? bs->path : "none",
                 bs->found ? " has no run in it" : ")");
        note_para(f, k, line);
        return;
    }
    static const char *const cols[] = { "engine", "grid", "combos", "format", "threads", "runs", "end to end",
                                        "per combo", "compute", "CPU", "peak RSS", "output", "parallel efficiency",
                                        "load" };
    header_of(f, k, cols, 14, true);
    for (size_t i = 0; i < bs->n_rows; i++) {
        big_row(f, k, &bs->rows[i]);
    }
    table_end(f, k);
    char skipped[256] = "";
    if (bs->skipped)
        snprintf(skipped, sizeof skipped, " %zu line(s) that are not a run were skipped (the first: line %zu).",
                 bs->skipped, bs->first_skipped);
    char load[96] = "not recorded";
    if (isfinite(bs->load_min))
        snprintf(load, sizeof load, "from %.1f to %.1f", bs->load_min, bs->load_max);
    bool old = false, cached = false;
    for (size_t i = 0; i < bs->n_rows; i++) {
        old |= strcmp(bs->rows[i].engine, "sebt-old") == 0;
        cached |= strcmp(bs->rows[i].engine, "sebt-cached") == 0;
    }
    snprintf(line, sizeof line, "From %s (bench/run_big_sweeps.sh, measured when it ran, not by this report's "
             "run): %zu runs of `sebt sweep` in %zu workloads, each shown as the median of its repetitions. "
             "Engines: sebt COMMIT is this project at the commit measured%s%s; numba peer is "
             "bench/peers/numba_peer.py on the same grid. End "
             "to end is the wall time of the whole command (load, sweep, write); compute, the backtests alone; "
             "CPU, the process's user and system time. Parallel efficiency: compute on 1 thread / (threads x "
             "compute on that many threads), 100%% is perfect. The 1-minute load average was %s while they ran%s: "
             "a machine busier than its cores stretches wall times and lowers the efficiency.%s",
             bs->path, bs->n_runs, bs->n_rows,
             cached ? "; series cached, the same reading the series from sebt's series cache" : "",
             old ? "; older sebt (OLD) is an earlier sebt binary the script was given (OLD=path), run over the "
                   "same grids on the same machine so that the two read as same-machine ratios (its commit was "
                   "not recorded)" : "",
             load, sebt_big_sweeps_loaded(bs) ? " (MEASURED UNDER LOAD: above the runs' own threads)" : "",
             skipped);
    note_para(f, k, line);
}

static const char *const figure_captions[SEBT_REPORT_N_FIGURES];

/* --baseline: every ratio the gate compared, the gated ones first; a
 * regression, an unconfirmed drop and a large drop outside the gate are
 * each marked in their row (and in red in the HTML). */
static void write_baseline(FILE *f, fmt k, const sebt_baseline *b, const char *old_name)
{
    char line[1024];
    snprintf(line, sizeof line, "Against %s: ratios within each run (how many times faster; median and min-max "
             "over the repetitions). A gated ratio whose median fell by more than %g%% is a regression when a "
             "Mann-Whitney U test of the two runs' repetitions gives p < %g and every new repetition fell that far "
             "below the old median, inconclusive when either does not. "
             "Ratios marked not gated are shown, and a drop beyond %g%% in them flagged, but they decide nothing.",
             old_name, b->threshold_pct, b->alpha, b->threshold_pct);
    note_para(f, k, line);
    static const char *const cols[] = { "work: faster/slower backend", "time", "old", "old min-max (n)", "new",
                                        "new min-max (n)", "change", "p", "verdict" };
    header(f, k, cols, 9); /* the work and the verdict wrap: the table fits the page */
    for (size_t i = 0; i < b->n_ratios; i++) {
        const sebt_ratio_row *r = &b->ratios[i];
        char o[32] = "-", or[64] = "-", n[32] = "-", nr[64] = "-", ch[32] = "-", pv[32] = "-";
        if (isfinite(r->old_ratio))
            snprintf(o, sizeof o, "%.4g", r->old_ratio);
        /* n: repetitions paired into ratios; the peer's range is of its medians' ranges. */
        if (isfinite(r->old_min))
            snprintf(or, sizeof or, r->old_n ? "%.4g-%.4g (%zu)" : "%.4g-%.4g", r->old_min, r->old_max, r->old_n);
        if (isfinite(r->new_ratio))
            snprintf(n, sizeof n, "%.4g", r->new_ratio);
        if (isfinite(r->new_min))
            snprintf(nr, sizeof nr, r->new_n ? "%.4g-%.4g (%zu)" : "%.4g-%.4g", r->new_min, r->new_max, r->new_n);
        if (isfinite(r->change_pct))
            snprintf(ch, sizeof ch, "%+.1f%%", r->change_pct);
        if (isfinite(r->p_value))
            snprintf(pv, sizeof pv, "%.4f", r->p_value);
        bool mark = r->flagged || r->dropped || r->verdict == SEBT_VERDICT_INCONCLUSIVE;
        fputs(k == FMT_MD ? "" : mark ? "<tr class=\"flag\">" : "<tr>", f);
        cell(f, k, r->what, true);
        cell(f, k, r->measure ? r->measure : "", false);
        cell(f, k, o, false);
        cell(f, k, or, false);
        cell(f, k, n, false);
        cell(f, k, nr, false);
        cell(f, k, ch, false);
        cell(f, k, pv, false);
        if (k == FMT_MD && mark) {
            char bold[256];
            snprintf(bold, sizeof bold, "**%s**", r->note);
            cell(f, k, bold, false);
        } else {
            cell(f, k, r->note, false);
        }
        row_end(f, k);
    }
    table_end(f, k);
}

/* A figure's caption, with its load flag when points of it were measured
 * under load. */
static void caption_of(const sebt_bench_set *set, int fig, fmt k, char *buf, size_t size)
{
    char why[256];
    if (fig < SEBT_REPORT_N_FIGURES - 1 && sebt_report_figure_loaded(set, fig, why, sizeof why))
        snprintf(buf, size, k == FMT_HTML ? "%s <strong class=\"load\">MEASURED UNDER LOAD: %s.</strong>"
                                          : "%s **MEASURED UNDER LOAD: %s.**", figure_captions[fig], why);
    else
        snprintf(buf, size, "%s", figure_captions[fig]);
}

static const char *const big_caption_loaded =
    "Big sweeps: end-to-end seconds of one `sebt sweep` against the combos in it, one line per engine and output "
    "format, at the most threads each ran on (log-log; medians). <strong class=\"load\">MEASURED UNDER LOAD: the "
    "load average was above the runs' own threads (see the table's load column).</strong>";

static const char *const big_caption =
    "Big sweeps: end-to-end seconds of one `sebt sweep` against the combos in it, one line per engine and output "
    "format, at the most threads each ran on (log-log; medians).";

static const char *const figure_captions[SEBT_REPORT_N_FIGURES] = {
    "Backtests per second as the sweep grows, one line per backend and the numba peer on the same combos "
    "and bars (log-log; points: median of the repetitions, bars: min-max).",
    "Bar-combos per second as the series grows (log-log; median, min-max).",
    "How many times faster, measured side by side in this run: each line is one family of sweeps (more "
    "combos, more bars, against numba), never joined across families.",
    "How one sweep speeds up with more CPU threads (dashed: perfect scaling). Flagged in red when other "
    "processes held the CPUs while it ran.",
    "History: the within-run ratios of every report appended to the history file, oldest first; ringed in red: measured on a loaded machine.",
};

static const char *const notes =
    "Every timed sweep was checked first: a sample of its combos (first, middle, last) went through the "
    "oracle against the reference; a backend that diverged is marked PARITY FAILED and none of its "
    "speeds is shown. Series longer than one bundled file are real files joined end to end, each "
    "later file shifted in time, with one missing bar at each seam.";

/* ---- files -------------------------------------------------------------- */

sebt_status sebt_report_open_in(sebt_outfile *o, const char *dir, const char *name, sebt_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return sebt_outfile_open(o, path, err);
}

static sebt_status io_fail(sebt_error *err, const char *what, const char *path)
{
    return sebt_fail(err, SEBT_ERR_IO, "cannot %s %s: %s", what, path, strerror(errno));
}

static sebt_status write_markdown(const sebt_bench_set *set, const sebt_report_summary *sum, const kv *facts,
                                  size_t n_facts, const sebt_report_opts *opts, const char *dir, sebt_error *err)
{
    const sebt_big_sweeps *bs = opts->big_sweeps;
    sebt_outfile of; /* atomic: a failed run keeps the previous report */
    if (sebt_report_open_in(&of, dir, "report.md", err) != SEBT_OK)
        return err->code;
    FILE *f = of.f;
    fputs("# sebt performance report\n\n", f);
    write_headline(f, FMT_MD, set, sum);
    if (opts->baseline) {
        fputs("## Against the baseline\n\n", f);
        write_baseline(f, FMT_MD, opts->baseline, opts->baseline_name ? opts->baseline_name : "the baseline");
    }
    fputs("## Ratios measured in this run\n\n", f);
    write_ratios(f, FMT_MD, set);
    fputs("## Backends: contract, parity with the oracle, speed\n\n", f);
    write_backends(f, FMT_MD, set);
    fprintf(f, "%s\n\n## Figures\n\n", notes);
    for (int i = 0; i < SEBT_REPORT_N_FIGURES; i++) {
        char cap[1024];
        caption_of(set, i, FMT_MD, cap, sizeof cap);
        fprintf(f, "![%s](%s.svg)\n\n%s ([PNG](%s.png))\n\n", sebt_report_figures[i], sebt_report_figures[i], cap,
                sebt_report_figures[i]);
    }
    fputs("## Sweeps\n\n", f);
    write_sweeps(f, FMT_MD, set);
    if (bs) {
        fputs("## Big sweeps\n\n", f);
        write_big_sweeps(f, FMT_MD, bs);
        if (bs->found && bs->n_rows)
            fprintf(f, "![%s](%s.svg)\n\n%s%s ([PNG](%s.png))\n\n", SEBT_REPORT_BIG_FIGURE, SEBT_REPORT_BIG_FIGURE,
                    big_caption, sebt_big_sweeps_loaded(bs) ? " **MEASURED UNDER LOAD: the load average was above the "
                                                              "runs' own threads (see the table's load column).**" : "",
                    SEBT_REPORT_BIG_FIGURE);
    }
    fputs("## Micro benchmarks\n\n", f);
    write_micro(f, FMT_MD, set);
    fputs("## Machine and build\n\n", f);
    write_facts(f, FMT_MD, facts, n_facts);
    fputs("Raw numbers: bench.json (Google Benchmark JSON). Figures: gnuplot/figures.gp.\n", f);
    return sebt_outfile_commit(&of, err);
}

static void base64(FILE *f, const unsigned char *d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)d[i + 1] << 8;
        if (i + 2 < n)
            v |= d[i + 2];
        fputc(tab[(v >> 18) & 63], f);
        fputc(tab[(v >> 12) & 63], f);
        fputc(i + 1 < n ? tab[(v >> 6) & 63] : '=', f);
        fputc(i + 2 < n ? tab[v & 63] : '=', f);
    }
}

static const char *const css =
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:14px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #ddd}"
    "figcaption{color:#555}.note{color:#555}table.num td{white-space:nowrap}"
    ".verdict{font-size:18px;font-weight:bold;padding:6px 10px;border-left:6px solid}"
    ".verdict.good{border-color:#2a2;background:#efe}.verdict.unsure{border-color:#c90;background:#ffd}"
    ".verdict.bad{border-color:#c00;background:#fee}.speed{font-size:16px}.warn li{color:#a00}"
    "tr.flag td{color:#a00;font-weight:bold}.load{color:#a00}";

/* A figure inline (a data URI): index.html opens with no other file. */
static sebt_status embed_figure(FILE *f, const char *dir, const char *name, const char *caption, sebt_error *err)
{
    char svg[4096], *data;
    size_t len;
    snprintf(svg, sizeof svg, "%s/%s.svg", dir, name);
    sebt_status st = sebt_read_file(svg, &data, &len, err);
    if (st != SEBT_OK)
        return st;
    fprintf(f, "<figure id=\"%s\"><img alt=\"%s\" src=\"data:image/svg+xml;base64,", name, name);
    base64(f, (const unsigned char *)data, len);
    fprintf(f, "\">\n<figcaption>%s <a href=\"%s.svg\">SVG</a> <a href=\"%s.png\">PNG</a></figcaption>"
               "</figure>\n", caption, name, name);
    free(data);
    return SEBT_OK;
}

static sebt_status write_html(const sebt_bench_set *set, const sebt_report_summary *sum, const kv *facts,
                              size_t n_facts, const sebt_report_opts *opts, const char *dir, sebt_error *err)
{
    const sebt_big_sweeps *bs = opts->big_sweeps;
    sebt_outfile of;
    if (sebt_report_open_in(&of, dir, "index.html", err) != SEBT_OK)
        return err->code;
    FILE *f = of.f;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<title>sebt performance report: %s</title>\n<style>%s</style>\n</head>\n<body>\n"
               "<h1>sebt performance report</h1>\n", sebt_call_name(sum->call), css);
    write_headline(f, FMT_HTML, set, sum);
    if (opts->baseline) {
        fputs("<h2>Against the baseline</h2>\n", f);
        write_baseline(f, FMT_HTML, opts->baseline, opts->baseline_name ? opts->baseline_name : "the baseline");
    }
    fputs("<h2>Ratios measured in this run</h2>\n", f);
    write_ratios(f, FMT_HTML, set);
    fputs("<h2>Backends: contract, parity with the oracle, speed</h2>\n", f);
    write_backends(f, FMT_HTML, set);
    fprintf(f, "<p class=\"note\">%s</p>\n<h2>Figures</h2>\n", notes);
    sebt_status st = SEBT_OK;
    for (int i = 0; i < SEBT_REPORT_N_FIGURES && st == SEBT_OK; i++) {
        char cap[1024];
        caption_of(set, i, FMT_HTML, cap, sizeof cap);
        st = embed_figure(f, dir, sebt_report_figures[i], cap, err);
    }
    fputs("<h2>Sweeps</h2>\n", f);
    write_sweeps(f, FMT_HTML, set);
    if (bs && st == SEBT_OK) {
        fputs("<h2>Big sweeps</h2>\n", f);
        write_big_sweeps(f, FMT_HTML, bs);
        if (bs->found && bs->n_rows)
            st = embed_figure(f, dir, SEBT_REPORT_BIG_FIGURE, sebt_big_sweeps_loaded(bs) ? big_caption_loaded
                                                                                           : big_caption, err);
    }
    fputs("<h2>Micro benchmarks</h2>\n", f);
    write_micro(f, FMT_HTML, set);
    fputs("<h2>Machine and build</h2>\n", f);
    write_facts(f, FMT_HTML, facts, n_facts);
    fputs("<p class=\"note\">Raw numbers: <a href=\"bench.json\">bench.json</a> (Google Benchmark JSON). "
          "Figures: <a href=\"gnuplot/figures.gp\">gnuplot/figures.gp</a>. Markdown copy: "
          "<a href=\"report.md\">report.md</a>.</p>\n</body>\n</html>\n", f);
    if (st != SEBT_OK) {
        sebt_outfile_abort(&of);
        return st;
    }
    return sebt_outfile_commit(&of, err);
}

static sebt_status make_dir(const char *dir, sebt_error *err)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path)
        return sebt_fail(err, SEBT_ERR_USAGE, "report: the output folder name is empty or too long");
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] == '/' || path[i] == '\0') {
            char c = path[i];
            path[i] = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                return io_fail(err, "create", path);
            path[i] = c;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return sebt_fail(err, SEBT_ERR_IO, "report: %s exists and is not a folder", dir);
    return SEBT_OK;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

sebt_status sebt_report_folder_check(const char *dir, sebt_error *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return errno == ENOENT ? SEBT_OK : io_fail(err, "read", dir);
    if (!S_ISDIR(sb.st_mode))
        return sebt_fail(err, SEBT_ERR_USAGE, "report: --out %s exists and is not a folder", dir);
    DIR *d = opendir(dir);
    if (!d)
        return io_fail(err, "read", dir);
    static const char *const own[] = { "index.html", "report.md", "bench.json", "bench.log", "gnuplot" };
    sebt_status st = SEBT_OK;
    for (struct dirent *e; st == SEBT_OK && (e = readdir(d));) {
        const char *n = e->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        bool ok = ends_with(n, ".svg") || ends_with(n, ".png") || (n[0] == '.' && strstr(n, ".tmp-"));
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            ok |= strcmp(n, own[i]) == 0;
        if (!ok)
            st = sebt_fail(err, SEBT_ERR_USAGE,
                           "report: --out %s holds '%s', which a report does not write; the report replaces "
                           "the whole folder, so name a new or empty folder, or an earlier report's", dir, n);
    }
    closedir(d);
    return st;
}

sebt_status sebt_report_write(const sebt_bench_set *set, const char *json, size_t json_len, const char *dir,
                              const sebt_report_opts *opts, sebt_error *err)
{
    sebt_status st = make_dir(dir, err);
    if (st != SEBT_OK)
        return st;
    sebt_outfile of;
    if (sebt_report_open_in(&of, dir, "bench.json", err) != SEBT_OK)
        return err->code;
    fwrite(json, 1, json_len, of.f);
    if (sebt_outfile_commit(&of, err) != SEBT_OK)
        return err->code;

    /* The verdict compares with the history as it was before this run. */
    sebt_report_summary own;
    const sebt_report_summary *sum = opts->summary;
    if (!sum) {
        char log[4096];
        snprintf(log, sizeof log, "%s/bench.log", dir);
        sebt_report_summary_of(set, opts->history, log, &own);
        sum = &own;
    }
    if (opts->history && opts->append_history) {
        st = sebt_history_append(opts->history, set, err);
        if (st != SEBT_OK)
            return st;
    }
    st = sebt_report_figures_write(set, dir, opts->gnuplot, opts->history, opts->big_sweeps, err);
    if (st != SEBT_OK)
        return st;
    kv facts[N_FACTS];
    size_t n_facts = collect_facts(set, opts, facts);
    st = write_markdown(set, sum, facts, n_facts, opts, dir, err);
    if (st != SEBT_OK)
        return st;
    return write_html(set, sum, facts, n_facts, opts, dir, err);
}
