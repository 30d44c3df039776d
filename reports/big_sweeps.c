/* The big-sweep benchmark (bench/run_big_sweeps.sh writes runs.jsonl, one
 * JSON object a run) read into one row per workload: engine, grid, format,
 * threads, with the medians of its repetitions. Fields are read
 * defensively: a missing one is NaN (shown as "-"), an unreadable line is
 * counted and skipped, never fatal: the file is a record kept by a script
 * that other hands extend. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "report.h"
#include "report_internal.h"
#include "sebt/sebt.h"

typedef struct {
    sebt_big_row key;
    double e2e, compute, cpu, rss_kb, bytes, load_lo, load_hi;
} big_run;

/* The median of the finite values among n, NaN when none. */
static double median_of(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[k++] = v[i];
    return k ? sebt_report_median(v, k) : NAN;
}

static bool same_workload(const sebt_big_row *a, const sebt_big_row *b)
{
    return strcmp(a->engine, b->engine) == 0 && strcmp(a->grid, b->grid) == 0 && a->combos == b->combos &&
           strcmp(a->format, b->format) == 0;
}

/* The engine first (this build, then the numba peer, then older builds),
 * then combos, format, threads. */
static int engine_rank(const char *e)
{
    return strcmp(e, "sebt") == 0 ? 0 : strcmp(e, "numba") == 0 ? 1 : 2;
}

static int cmp_rows(const void *a, const void *b)
{
    const sebt_big_row *x = a, *y = b;
    int c = engine_rank(x->engine) - engine_rank(y->engine);
    if (!c)
        c = strcmp(x->engine, y->engine);
    if (!c)
        c = (x->combos > y->combos) - (x->combos < y->combos);
    if (!c)
        c = strcmp(x->format, y->format);
    if (!c)
        c = (x->threads > y->threads) - (x->threads < y->threads);
    return c;
}

static sebt_status read_runs(const char *path, const char *text, size_t len, big_run **out, size_t *n_out,
                             sebt_big_sweeps *bs, sebt_error *err)
{
    size_t cap = 16, n = 0;
    big_run *runs = malloc(cap * sizeof *runs);
    if (!runs)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
    for (size_t at = 0, line = 1; at < len; line++) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *s = text + at;
        size_t sl = end - at;
        at = end + 1;
        while (sl && (s[sl - 1] == '\r' || s[sl - 1] == ' '))
            sl--;
        if (sl == 0)
            continue;
        sebt_json *v = NULL;
        sebt_error e = { 0 };
        if (sebt_json_parse(path, s, sl, &v, &e) != SEBT_OK || v->type != SEBT_JSON_OBJECT) {
            if (e.code == SEBT_ERR_NOMEM) {
                free(runs);
                return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
            }
            if (bs->skipped++ == 0)
                bs->first_skipped = line;
            sebt_json_free(v);
            continue;
        }
        double combos = sebt_json_get_number(v, "combos", NAN), threads = sebt_json_get_number(v, "threads", NAN);
        double e2e = sebt_json_get_number(v, "end_to_end_s", NAN);
        if (!(combos >= 1 && combos < 1e15) || !(threads >= 1 && threads <= 4096) || !(e2e >= 0)) {
            if (bs->skipped++ == 0)
                bs->first_skipped = line;
            sebt_json_free(v);
            continue;
        }
        if (n == cap) {
            big_run *more = realloc(runs, 2 * cap * sizeof *runs);
            if (!more) {
                sebt_json_free(v);
                free(runs);
                return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
            }
            runs = more;
            cap *= 2;
        }
        big_run *r = &runs[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->key.engine, sizeof r->key.engine, "%s", sebt_json_get_string(v, "engine", "sebt"));
        snprintf(r->key.grid, sizeof r->key.grid, "%s", sebt_json_get_string(v, "grid", "-"));
        snprintf(r->key.format, sizeof r->key.format, "%s", sebt_json_get_string(v, "format", "-"));
        snprintf(r->key.commit, sizeof r->key.commit, "%s", sebt_json_get_string(v, "sebt", ""));
        r->key.combos = (long long)combos;
        r->key.threads = (int)threads;
        r->e2e = e2e;
        r->compute = sebt_json_get_number(v, "compute_s", NAN);
        r->cpu = sebt_json_get_number(v, "cpu_s", NAN);
        r->rss_kb = sebt_json_get_number(v, "peak_rss_kb", NAN);
        r->bytes = sebt_json_get_number(v, "bytes", NAN);
        double l0 = sebt_json_get_number(v, "load_before", NAN), l1 = sebt_json_get_number(v, "load_after", NAN);
        r->load_lo = fmin(l0, l1); /* fmin/fmax skip a NaN */
        r->load_hi = fmax(l0, l1);
        sebt_json_free(v);
    }
    *out = runs;
    *n_out = n;
    return SEBT_OK;
}

sebt_status sebt_big_sweeps_read(const char *path, sebt_big_sweeps *bs, sebt_error *err)
{
    memset(bs, 0, sizeof *bs);
    bs->load_min = bs->load_max = NAN;
    snprintf(bs->path, sizeof bs->path, "%s", path ? path : "");
    if (!path || access(path, F_OK) != 0)
        return SEBT_OK; /* none found: the report says so */
    char *text;
    size_t len;
    sebt_status st = sebt_read_file(path, &text, &len, err);
    if (st != SEBT_OK)
        return st;
    bs->found = true;
    big_run *runs = NULL;
    size_t n = 0;
    st = read_runs(path, text, len, &runs, &n, bs, err);
    free(text);
    if (st != SEBT_OK)
        return st;
    bs->rows = calloc(n ? n : 1, sizeof *bs->rows);
    double *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!bs->rows || !tmp) {
        free(tmp);
        free(runs);
        sebt_big_sweeps_free(bs);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
    }
    bs->n_runs = n;
    for (size_t i = 0; i < n; i++) {
        bs->load_min = fmin(bs->load_min, runs[i].load_lo);
        bs->load_max = fmax(bs->load_max, runs[i].load_hi);
        bool seen = false;
        for (size_t j = 0; j < bs->n_rows && !seen; j++)
            seen = same_workload(&bs->rows[j], &runs[i].key) && bs->rows[j].threads == runs[i].key.threads;
        if (seen)
            continue;
        sebt_big_row *row = &bs->rows[bs->n_rows++];
        *row = runs[i].key;
        row->load_min = row->load_max = NAN;
        const size_t offsets[] = { offsetof(big_run, e2e), offsetof(big_run, compute), offsetof(big_run, cpu),
                                   offsetof(big_run, rss_kb), offsetof(big_run, bytes) };
        double *dest[] = { &row->end_to_end_s, &row->compute_s, &row->cpu_s, &row->peak_rss_kb, &row->bytes };
        for (size_t f = 0; f < 5; f++) {
            size_t k = 0;
            for (size_t j = i; j < n; j++)
                if (same_workload(&runs[j].key, &runs[i].key) && runs[j].key.threads == runs[i].key.threads)
                    tmp[k++] = *(const double *)((const char *)&runs[j] + offsets[f]);
            *dest[f] = median_of(tmp, k);
            row->reps = k;
        }
        for (size_t j = i; j < n; j++)
            if (same_workload(&runs[j].key, &runs[i].key) && runs[j].key.threads == runs[i].key.threads) {
                row->load_min = fmin(row->load_min, runs[j].load_lo);
                row->load_max = fmax(row->load_max, runs[j].load_hi);
            }
    }
    free(tmp);
    free(runs);
    /* Parallel efficiency of compute on T threads: the 1-thread compute
     * over T times the T-thread compute (1 = perfect), medians. */
    for (size_t i = 0; i < bs->n_rows; i++) {
        sebt_big_row *row = &bs->rows[i];
        row->efficiency = NAN;
        if (row->threads < 2)
            continue;
        for (size_t j = 0; j < bs->n_rows; j++)
            if (bs->rows[j].threads == 1 && same_workload(&bs->rows[j], row) && row->compute_s > 0)
                row->efficiency = bs->rows[j].compute_s / (row->threads * row->compute_s);
    }
    qsort(bs->rows, bs->n_rows, sizeof *bs->rows, cmp_rows);
    return SEBT_OK;
}

void sebt_big_sweeps_free(sebt_big_sweeps *bs)
{
    free(bs->rows);
    bs->rows = NULL;
    bs->n_rows = 0;
}

void sebt_big_engine_label(const sebt_big_row *r, char *buf, size_t size)
{
    const char *c = r->commit[0] && strcmp(r->commit, "old") != 0 ? r->commit : NULL;
    if (strcmp(r->engine, "sebt") == 0)
        snprintf(buf, size, "sebt%s%s", c ? " " : "", c ? c : "");
    else if (strcmp(r->engine, "sebt-cached") == 0)
        snprintf(buf, size, "sebt%s%s, series cached", c ? " " : "", c ? c : "");
    else if (strcmp(r->engine, "sebt-old") == 0)
        snprintf(buf, size, "older sebt (OLD)");
    else if (strcmp(r->engine, "numba") == 0)
        snprintf(buf, size, "numba peer");
    else
        snprintf(buf, size, "%s", r->engine);
}

bool sebt_big_sweeps_loaded(const sebt_big_sweeps *bs)
{
    int most = 1;
    for (size_t i = 0; i < bs->n_rows; i++)
        most = bs->rows[i].threads > most ? bs->rows[i].threads : most;
    return isfinite(bs->load_max) && bs->load_max > most + 1;
}
