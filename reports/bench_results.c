#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "report_internal.h"
#include "sebt/sebt.h"

static double unit_seconds(const char *unit)
{
    if (strcmp(unit, "ns") == 0)
        return 1e-9;
    if (strcmp(unit, "us") == 0)
        return 1e-6;
    if (strcmp(unit, "ms") == 0)
        return 1e-3;
    if (strcmp(unit, "s") == 0)
        return 1.0;
    return NAN;
}

/* "group/backend/bars:N/combos:C/threads:T", then whatever Google Benchmark
 * appends ("/min_time:0.050", "/repeats:5", "/real_time", "/manual_time"),
 * which is dropped from the name: those depend on how a run was made, not
 * on the work it measured. */
static void parse_name(sebt_bench_run *r)
{
    r->bars = -1;
    r->combos = -1;
    r->threads = 0;
    char buf[sizeof r->name], canon[sizeof r->name];
    snprintf(buf, sizeof buf, "%s", r->name);
    size_t used = 0;
    canon[0] = '\0';
    char *save = NULL;
    int part = 0;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save), part++) {
        bool keep = part < 2;
        if (part == 0)
            snprintf(r->group, sizeof r->group, "%s", tok);
        else if (part == 1)
            snprintf(r->backend, sizeof r->backend, "%s", tok);
        else if (strncmp(tok, "bars:", 5) == 0)
            r->bars = strtoll(tok + 5, NULL, 10), keep = true;
        else if (strncmp(tok, "combos:", 7) == 0)
            r->combos = strtoll(tok + 7, NULL, 10), keep = true;
        else if (strncmp(tok, "threads:", 8) == 0)
            r->threads = (int)strtol(tok + 8, NULL, 10), keep = true;
        if (keep && used < sizeof canon)
            used += (size_t)snprintf(canon + used, sizeof canon - used, "%s%s", used ? "/" : "", tok);
    }
    snprintf(r->name, sizeof r->name, "%s", canon);
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static sebt_status read_run(const char *src, size_t index, const sebt_json *b, sebt_bench_run *r,
                            sebt_error *err)
{
    memset(r, 0, sizeof *r);
    const char *name = sebt_json_get_string(b, "name", NULL);
    if (!name)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: benchmarks[%zu] has no \"name\" string", src, index);
    snprintf(r->name, sizeof r->name, "%s", name);
    parse_name(r);
    r->seconds = NAN;
    r->bars_per_s = sebt_json_get_number(b, "bars_per_second", NAN);
    r->combos_per_s = sebt_json_get_number(b, "combos_per_second", NAN);
    r->bar_combos_per_s = sebt_json_get_number(b, "bar_combos_per_second", NAN);
    r->trades_per_s = sebt_json_get_number(b, "trades_per_second", NAN);
    r->rows_per_s = sebt_json_get_number(b, "rows_per_second", NAN);
    r->parity_checked = sebt_json_get_number(b, "parity_checked", 0);
    r->parity_ties = sebt_json_get_number(b, "parity_ties", 0);
    r->iterations = (long long)sebt_json_get_number(b, "iterations", 0);
    r->others_busy = sebt_json_get_number(b, "machine_others_busy", NAN);
    r->load_avg = sebt_json_get_number(b, "machine_load_avg", NAN);
    r->cpu_seconds = NAN;
    r->seconds_min = r->seconds_max = r->cv = NAN;

    const sebt_json *errored = sebt_json_get(b, "error_occurred");
    if (errored && errored->type == SEBT_JSON_BOOL && errored->boolean) {
        const char *msg = sebt_json_get_string(b, "error_message", "no message");
        snprintf(r->message, sizeof r->message, "%s", msg);
        if (starts_with(msg, "parity failed:"))
            r->status = SEBT_RUN_PARITY_FAILED;
        else if (starts_with(msg, "unavailable:"))
            r->status = SEBT_RUN_UNAVAILABLE;
        else
            r->status = SEBT_RUN_ERROR;
        /* A run that was not timed shows no speed, whatever the file says. */
        r->bars_per_s = r->combos_per_s = r->bar_combos_per_s = NAN;
        r->trades_per_s = r->rows_per_s = NAN;
        return SEBT_OK;
    }
    r->status = SEBT_RUN_OK;
    snprintf(r->message, sizeof r->message, "%s", sebt_json_get_string(b, "label", ""));
    double t = sebt_json_get_number(b, "real_time", NAN);
    const char *unit = sebt_json_get_string(b, "time_unit", "ns");
    double scale = unit_seconds(unit);
    if (isnan(scale))
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: benchmark '%s' has an unknown time_unit '%s'", src,
                         name, unit);
    if (!isfinite(t) || t < 0)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: benchmark '%s' has no usable \"real_time\"", src, name);
    r->seconds = t * scale;
    double cpu = sebt_json_get_number(b, "cpu_time", NAN);
    r->cpu_seconds = isfinite(cpu) && cpu >= 0 ? cpu * scale : NAN;
    return SEBT_OK;
}

int sebt_report_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sebt_report_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, sebt_report_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Repetitions of one benchmark become one run: each measure its median,
 * the time's range and coefficient of variation, and every repetition's
 * times (for the rank test of the baseline gate). */
static void merge_repetitions(sebt_bench_set *set)
{
    size_t out = 0;
    double *tmp = malloc((set->n_runs + 1) * sizeof *tmp);
    for (size_t i = 0; i < set->n_runs; i++) {
        bool seen = false;
        for (size_t j = 0; j < out && !seen; j++)
            seen = strcmp(set->runs[j].name, set->runs[i].name) == 0;
        if (seen)
            continue;
        sebt_bench_run r = set->runs[i];
        /* A repetition that failed fails the point: a speed from the others
         * would hide it. */
        for (size_t j = i; j < set->n_runs; j++)
            if (strcmp(set->runs[j].name, r.name) == 0 && set->runs[j].status != SEBT_RUN_OK &&
                r.status == SEBT_RUN_OK) {
                sebt_bench_run bad = set->runs[j];
                r = bad;
            }
        if (tmp && r.status == SEBT_RUN_OK) {
            size_t offsets[] = { offsetof(sebt_bench_run, seconds), offsetof(sebt_bench_run, cpu_seconds),
                                 offsetof(sebt_bench_run, bars_per_s), offsetof(sebt_bench_run, combos_per_s),
                                 offsetof(sebt_bench_run, bar_combos_per_s),
                                 offsetof(sebt_bench_run, trades_per_s), offsetof(sebt_bench_run, rows_per_s),
                                 offsetof(sebt_bench_run, others_busy) };
            r.n_reps = 0;
            r.load_avg = NAN;
            for (size_t j = i; j < set->n_runs; j++) {
                const sebt_bench_run *q = &set->runs[j];
                if (strcmp(q->name, r.name) != 0)
                    continue;
                if (r.n_reps < SEBT_BENCH_MAX_REPS) {
                    r.rep_seconds[r.n_reps] = q->seconds;
                    r.rep_cpu_seconds[r.n_reps] = q->cpu_seconds;
                    r.n_reps++;
                }
                if (isfinite(q->load_avg) && !(q->load_avg <= r.load_avg))
                    r.load_avg = q->load_avg;
            }
            for (size_t f = 0; f < sizeof offsets / sizeof offsets[0]; f++) {
                size_t k = 0;
                for (size_t j = i; j < set->n_runs; j++) {
                    double v = *(const double *)((const char *)&set->runs[j] + offsets[f]);
                    if (strcmp(set->runs[j].name, r.name) == 0 && !isnan(v))
                        tmp[k++] = v;
                }
                *(double *)((char *)&r + offsets[f]) = k ? sebt_report_median(tmp, k) : NAN;
            }
            double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0;
            for (size_t k = 0; k < r.n_reps; k++) {
                double v = r.rep_seconds[k];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
                sum += v;
            }
            double mean = sum / (double)r.n_reps;
            for (size_t k = 0; k < r.n_reps; k++)
                sq += (r.rep_seconds[k] - mean) * (r.rep_seconds[k] - mean);
            r.seconds_min = lo;
            r.seconds_max = hi;
            r.cv = r.n_reps >= 2 && mean > 0 ? sqrt(sq / (double)(r.n_reps - 1)) / mean : NAN;
        }
        set->runs[out++] = r;
    }
    free(tmp);
    set->n_runs = out;
}

int sebt_bench_threads_used(const sebt_bench_set *set, const sebt_bench_run *r)
{
    if (r->threads > 0)
        return r->threads;
    const char *omp = sebt_bench_context(set, "sebt_omp_num_threads");
    const char *cores = sebt_bench_context(set, "sebt_cpu_cores");
    char *end;
    long v = omp ? strtol(omp, &end, 10) : 0;
    if (omp && end != omp && *end == '\0' && v > 0)
        return (int)v;
    v = cores ? strtol(cores, &end, 10) : 0;
    return cores && end != cores && v > 0 ? (int)v : 0;
}

bool sebt_bench_run_loaded(const sebt_bench_set *set, const sebt_bench_run *r)
{
    const char *cores = sebt_bench_context(set, "sebt_cpu_cores");
    return r->status == SEBT_RUN_OK && sebt_machine_loaded(r->others_busy, r->load_avg, cores ? strtod(cores, NULL) : NAN);
}

static bool timed(const sebt_bench_run *r) { return r && r->status == SEBT_RUN_OK && r->combos_per_s > 0; }

const sebt_bench_run *sebt_bench_speed_run(const sebt_bench_set *set, const char *backend)
{
    const char *group = strcmp(backend, "numba") == 0 ? "peer" : "sweep_combos";
    const sebt_bench_run *fixed = sebt_bench_find(set, group, backend, SEBT_HEADLINE_BARS, SEBT_HEADLINE_COMBOS, 0);
    if (timed(fixed))
        return fixed;
    const sebt_bench_run *best = NULL;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (timed(r) && strcmp(r->group, group) == 0 && strcmp(r->backend, backend) == 0 &&
            r->bars == SEBT_HEADLINE_BARS && r->threads == 0 && (!best || r->combos > best->combos))
            best = r;
    }
    return best;
}

/* The combo sweeps, the bar sweeps and the thread scaling can time the
 * same workload (1,000 combos on every core is a point of the combo sweep
 * and of the thread scaling): two measurements of one thing would print
 * two numbers for it. The first in this order is kept and shown in both
 * places, the other noted as the same workload. */
static void share_workloads(sebt_bench_set *set)
{
    static const char *const order[] = { "sweep_combos", "sweep_bars", "threads" };
    for (size_t i = 0; i < set->n_runs; i++) {
        sebt_bench_run *r = &set->runs[i];
        int rank = -1;
        for (int k = 0; k < 3; k++)
            if (strcmp(r->group, order[k]) == 0)
                rank = k;
        if (rank < 0 || r->status != SEBT_RUN_OK)
            continue;
        const sebt_bench_run *keep = NULL;
        int keep_rank = rank;
        for (size_t j = 0; j < set->n_runs; j++) {
            const sebt_bench_run *q = &set->runs[j];
            int qr = -1;
            for (int k = 0; k < 3; k++)
                if (strcmp(q->group, order[k]) == 0)
                    qr = k;
            if (j == i || qr < 0 || q->status != SEBT_RUN_OK || q->same_as[0] || strcmp(q->backend, r->backend) != 0 ||
                q->bars != r->bars || q->combos != r->combos ||
                sebt_bench_threads_used(set, q) != sebt_bench_threads_used(set, r))
                continue;
            if (qr < keep_rank || (qr == keep_rank && j < i)) {
                keep = q;
                keep_rank = qr;
            }
        }
        if (!keep)
            continue;
        sebt_bench_run copy = *keep;
        memcpy(copy.name, r->name, sizeof copy.name);
        memcpy(copy.group, r->group, sizeof copy.group);
        copy.threads = r->threads;
        snprintf(copy.message, sizeof copy.message, "%s", r->message);
        snprintf(copy.same_as, sizeof copy.same_as, "%s", keep->name);
        *r = copy;
    }
}

sebt_status sebt_bench_parse(const char *name, const char *text, size_t len, sebt_bench_set *out,
                             sebt_error *err)
{
    memset(out, 0, sizeof *out);
    sebt_json *root;
    sebt_status st = sebt_json_parse(name, text, len, &root, err);
    if (st != SEBT_OK)
        return st;
    const sebt_json *benchmarks = sebt_json_get(root, "benchmarks");
    if (!benchmarks || benchmarks->type != SEBT_JSON_ARRAY) {
        sebt_json_free(root);
        return sebt_fail(err, SEBT_ERR_INPUT,
                         "%s: no \"benchmarks\" array: is this Google Benchmark JSON "
                         "(--benchmark_out_format=json)?", name);
    }
    out->runs = calloc(benchmarks->n ? benchmarks->n : 1, sizeof *out->runs);
    if (!out->runs) {
        sebt_json_free(root);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    }
    for (size_t i = 0; i < benchmarks->n; i++) {
        const sebt_json *b = &benchmarks->items[i];
        if (b->type != SEBT_JSON_OBJECT) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s: benchmarks[%zu] is not an object", name, i);
            break;
        }
        /* Aggregates (mean, median, stddev of repetitions) are recomputed
         * from the repetitions themselves. */
        if (strcmp(sebt_json_get_string(b, "run_type", "iteration"), "aggregate") == 0)
            continue;
        st = read_run(name, i, b, &out->runs[out->n_runs], err);
        if (st != SEBT_OK)
            break;
        out->n_runs++;
    }
    const sebt_json *ctx = sebt_json_get(root, "context");
    if (st == SEBT_OK && ctx && ctx->type == SEBT_JSON_OBJECT && ctx->n > 0) {
        out->context_keys = calloc(ctx->n, sizeof *out->context_keys);
        out->context_values = calloc(ctx->n, sizeof *out->context_values);
        if (!out->context_keys || !out->context_values)
            st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
        for (size_t i = 0; st == SEBT_OK && i < ctx->n; i++) {
            char num[64];
            const char *v = num;
            if (ctx->items[i].type == SEBT_JSON_STRING)
                v = ctx->items[i].string;
            else if (ctx->items[i].type == SEBT_JSON_NUMBER)
                snprintf(num, sizeof num, "%.10g", ctx->items[i].number);
            else if (ctx->items[i].type == SEBT_JSON_BOOL)
                v = ctx->items[i].boolean ? "true" : "false";
            else
                continue; /* caches and load averages: not shown */
            out->context_keys[out->n_context] = strdup(ctx->keys[i]);
            out->context_values[out->n_context] = strdup(v);
            if (!out->context_keys[out->n_context] || !out->context_values[out->n_context])
                st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
            out->n_context++;
        }
    }
    sebt_json_free(root);
    if (st != SEBT_OK) {
        sebt_bench_set_free(out);
        return st;
    }
    merge_repetitions(out);
    share_workloads(out);
    return SEBT_OK;
}

sebt_status sebt_bench_read(const char *path, sebt_bench_set *out, sebt_error *err)
{
    char *text;
    size_t len;
    memset(out, 0, sizeof *out);
    sebt_status st = sebt_read_file(path, &text, &len, err);
    if (st != SEBT_OK)
        return st;
    st = sebt_bench_parse(path, text, len, out, err);
    free(text);
    return st;
}

void sebt_bench_set_free(sebt_bench_set *set)
{
    for (size_t i = 0; i < set->n_context; i++) {
        free(set->context_keys[i]);
        free(set->context_values[i]);
    }
    free(set->context_keys);
    free(set->context_values);
    free(set->runs);
    memset(set, 0, sizeof *set);
}

const char *sebt_bench_context(const sebt_bench_set *set, const char *key)
{
    for (size_t i = 0; i < set->n_context; i++)
        if (strcmp(set->context_keys[i], key) == 0)
            return set->context_values[i];
    return NULL;
}

const sebt_bench_run *sebt_bench_find(const sebt_bench_set *set, const char *group,
                                      const char *backend, long long bars, long long combos,
                                      int threads)
{
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->backend, backend) == 0 && r->bars == bars &&
            r->combos == combos && (threads < 0 || r->threads == threads))
            return r;
    }
    return NULL;
}
