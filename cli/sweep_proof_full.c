/* `sebt sweep --verify full` (sweep.h): every row of the written file read
 * back and compared with the same sweep run another way (another window,
 * thread count and row format, through the library's driver), and the
 * series cache: a cached load against a fresh parse, every bit. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

typedef struct {
    const sweep_proof_ctx *c;
    FILE *f;                       /* the written file */
    char *line;
    size_t cap;
    bool other_csv;                /* the other way's rows are CSV (the file is npy), else npy */
    size_t rows;
    char what[700];
} full_cmp;

/* ---- the written file's rows -------------------------------------------------- */

/* The number after "KEY": in a JSON row (null: NaN, true 1, false 0). */
static bool json_value(const char *line, const char *key, double *v)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(line, pat);
    if (!at)
        return false;
    at += strlen(pat);
    if (strncmp(at, "null", 4) == 0 || strncmp(at, "false", 5) == 0 || strncmp(at, "true", 4) == 0) {
        *v = at[0] == 'n' ? NAN : at[0] == 't';
        return true;
    }
    char *end;
    *v = strtod(at, &end);
    return end != at;
}

static void set_param(sebt_params *p, int i, double v)
{
    unsigned char *field = (unsigned char *)p + sebt_param_table[i].offset;
    int32_t n = (int32_t)v;
    bool b = v != 0;
    switch (sebt_param_table[i].type) {
    case SEBT_PARAM_INT: memcpy(field, &n, sizeof n); break;
    case SEBT_PARAM_DOUBLE: memcpy(field, &v, sizeof v); break;
    default: memcpy(field, &b, sizeof b); break;
    }
}

static bool json_row(const char *line, uint64_t *idx, sebt_params *p, sebt_sweep_record *r)
{
    static const char *const m[] = { "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe" };
    double v[5], n, vb, open, combo;
    *p = sebt_params_default();
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        double x;
        if (!json_value(line, sebt_param_table[i].name, &x))
            return false;
        set_param(p, i, x);
    }
    for (int i = 0; i < 5; i++)
        if (!json_value(line, m[i], &v[i]))
            return false;
    if (!json_value(line, "combo", &combo) || !json_value(line, "n", &n) || !json_value(line, "valid_bars", &vb) ||
        !json_value(line, "open_at_end", &open))
        return false;
    *idx = (uint64_t)combo;
    *r = (sebt_sweep_record){ .combo = *idx, .metrics = { .n = (int64_t)n, .win_rate = v[0], .avg_r = v[1],
                              .total_pnl = v[2], .max_dd = v[3], .sharpe = v[4] },
                              .valid_bars = (uint64_t)vb, .open_at_end = open != 0 };
    return true;
}

/* The file's next row; false at its end or on a row that does not parse
 * (k->what says which). */
static bool file_row(full_cmp *k, uint64_t *idx, sebt_params *p, sebt_sweep_record *r)
{
    if (k->c->npy) {
        unsigned char b[SEBT_NPY_ROW_MAX];
        if (fread(b, 1, sebt_sweep_npy_row_bytes(), k->f) != sebt_sweep_npy_row_bytes())
            return false;
        sebt_sweep_npy_row_read(b, idx, p, r);
        return true;
    }
    ssize_t len;
    while ((len = getline(&k->line, &k->cap, k->f)) > 0) {
        if (k->line[len - 1] == '\n')
            k->line[--len] = '\0';
        if (k->c->json && strncmp(k->line, "    {\"combo\":", 13) != 0)
            continue;   /* the document around the rows */
        bool ok;
        if (k->c->json) {
            ok = json_row(k->line, idx, p, r);
        } else {
            sebt_result res;
            size_t i = 0;
            char why[200];
            ok = sweep_parse_csv_row(k->line, &i, p, &res, NULL, why, sizeof why);
            *idx = i;
            *r = (sebt_sweep_record){ .combo = i, .metrics = res.metrics, .valid_bars = res.valid_bars,
                                      .open_at_end = res.open_at_end.open };
        }
        if (!ok)
            snprintf(k->what, sizeof k->what, "row %zu of the file does not read back", k->rows);
        return ok;
    }
    return false;
}

/* ---- the other way's rows ------------------------------------------------------ */

/* Row k of the window as the other way formatted it; false if it does not parse. */
static bool other_row(full_cmp *k, const sebt_sweep_window *w, size_t *part, size_t *off, uint64_t *idx,
                      sebt_params *p, sebt_sweep_record *r)
{
    while (*part < (size_t)w->n_parts && *off >= w->part_bytes[*part]) {
        (*part)++;
        *off = 0;
    }
    if (*part >= (size_t)w->n_parts)
        return false;
    const char *at = w->part[*part] + *off;
    if (!k->other_csv) {
        sebt_sweep_npy_row_read((const unsigned char *)at, idx, p, r);
        *off += sebt_sweep_npy_row_bytes();
        return true;
    }
    const char *nl = memchr(at, '\n', w->part_bytes[*part] - *off);
    char line[SEBT_CSV_ROW_MAX + 1], why[200];
    size_t len = nl ? (size_t)(nl - at) : 0, i = 0;
    if (!nl || len > SEBT_CSV_ROW_MAX)
        return false;
    memcpy(line, at, len);
    line[len] = '\0';
    *off += len + 1;
    sebt_result res;
    if (!sweep_parse_csv_row(line, &i, p, &res, NULL, why, sizeof why))
        return false;
    *idx = i;
    *r = (sebt_sweep_record){ .combo = i, .metrics = res.metrics, .valid_bars = res.valid_bars,
                              .open_at_end = res.open_at_end.open };
    return true;
}

static int compare_window(void *user, const sebt_sweep_window *w)
{
    full_cmp *k = user;
    size_t part = 0, off = 0;
    for (size_t i = 0; i < w->count; i++) {
        if (w->passes && !w->passes[i])
            continue;   /* no row, here or in the file */
        k->rows++;
        uint64_t a, b;
        sebt_params pa, pb;
        sebt_sweep_record ra, rb;
        if (!other_row(k, w, &part, &off, &b, &pb, &rb)) {
            snprintf(k->what, sizeof k->what, "combo %" PRIu64 ": the other way's row does not read back",
                     w->first + i);
            return 1;
        }
        if (!file_row(k, &a, &pa, &ra)) {
            if (!k->what[0])
                snprintf(k->what, sizeof k->what, "the file ends after %zu rows, the sweep has more", k->rows - 1);
            return 1;
        }
        if (a != w->first + i || b != a || !sebt_params_same(&pa, &pb) || !sebt_sweep_record_same(&ra, &rb)) {
            snprintf(k->what, sizeof k->what, "row %zu of the file (combo %" PRIu64 ") differs from combo %" PRIu64
                     " of the sweep run another way%s", k->rows - 1, a, w->first + i,
                     a != w->first + i ? " (another combo's number)" : "");
            return 1;
        }
    }
    return 0;
}

static int compare_rows(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c)
{
    full_cmp k = { .c = c, .other_csv = c->npy };
    k.f = fopen(c->file, "rb");
    if (!k.f) {
        fprintf(stderr, "sebt %s: error: cannot read back %s\n", cmd, c->shown);
        return CLI_EXIT_USAGE;
    }
    char head[4096];
    size_t hl = c->npy ? c->header_bytes : c->json ? 0 : sebt_sweep_csv_header(head, sizeof head);
    if (c->npy)
        fseek(k.f, (long)hl, SEEK_SET);
    else if (!c->json && (getline(&k.line, &k.cap, k.f) != (ssize_t)hl || memcmp(k.line, head, hl) != 0))
        snprintf(k.what, sizeof k.what, "the CSV header differs");
    size_t window = c->window > 2 ? c->window / 3 + 1 : 2;
    sebt_sweep_opts o = { .grid = c->grid, .combos = c->grid ? NULL : c->combos, .n_combos = c->n_combos,
                          .threads = c->threads == 1 ? 2 : 1, .window = window,
                          .rows = c->npy ? SEBT_ROWS_CSV : SEBT_ROWS_NPY, .where = c->where,
                          .on_window = compare_window, .user = &k, .verify = SEBT_VERIFY_OFF };
    sebt_sweep_result r;
    sebt_error err = { 0 };
    int rc = CLI_EXIT_OK;
    if (!k.what[0] && sebt_sweep_run(c->b, c->s, &o, &r, &err) != SEBT_OK)
        rc = cli_report_error(cmd, &err);
    else if (!k.what[0]) {
        uint64_t idx;
        sebt_params pp;
        sebt_sweep_record rec;
        if (!r.stopped && file_row(&k, &idx, &pp, &rec))
            snprintf(k.what, sizeof k.what, "the file has more rows than the sweep's %zu", k.rows);
        sebt_sweep_result_free(&r);
    }
    fclose(k.f);
    free(k.line);
    p->rows_compared = k.rows;
    p->core.read_back = rc == CLI_EXIT_OK && !k.what[0];
    if (rc == CLI_EXIT_OK && k.what[0]) {
        p->core.differ++;
        snprintf(p->core.what, sizeof p->core.what, "%s", k.what);
        rc = CLI_EXIT_CHECK_FAILED;
    }
    return rc;
}

/* ---- the series cache ------------------------------------------------------------ */

int sweep_cache_check(const char *data, bool lenient, bool fill_gaps, const char *cache, char *what, size_t size,
                      sebt_error *err)
{
    if (!cache || !sebt_series_cache_available())
        return 2;
    sebt_load_opts o = { .lenient = lenient, .fill_gaps = fill_gaps };
    sebt_series cached;
    sebt_cache_use use = SEBT_CACHE_OFF;
    for (int tries = 0; tries < 2 && use != SEBT_CACHE_HIT && use != SEBT_CACHE_NO_MEMORY; tries++) {
        if (tries)
            sebt_series_free(&cached);
        if (sebt_load_csv_cached(data, &o, cache, &cached, &use, err) != SEBT_OK)
            return -1;
    }
    sebt_status st = use == SEBT_CACHE_HIT ? sebt_series_check_fresh(data, &o, &cached, err) : SEBT_OK;
    sebt_series_free(&cached);
    if (st == SEBT_ERR_VERIFY)
        snprintf(what, size, "%s (cache %s)", err->msg, cache);
    /* Out of memory is said as such (exit 5), never as a check left out. */
    if (use == SEBT_CACHE_NO_MEMORY) {
        sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory looking it up in the series cache %s", data, cache);
        return -1;
    }
    if (st == SEBT_OK && use != SEBT_CACHE_HIT)
        snprintf(what, size, "not checked: the cached load of %s did not hit (series cache: %s)", data,
                 cli_cache_use_name(use));
    return st == SEBT_ERR_VERIFY ? 1 : st != SEBT_OK ? -1 : use == SEBT_CACHE_HIT ? 0 : 2;
}

/* A cached load (a hit: loaded twice when the first stores the entry)
 * against a fresh parse, every bit. */
static int check_cache(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c)
{
    char dir[4096];
    sebt_error err = { 0 };
    if (!c->data)
        return CLI_EXIT_OK;
    int rc = sweep_cache_check(c->data, c->lenient, c->fill_gaps, cli_series_cache_dir(dir, sizeof dir), p->core.what,
                               sizeof p->core.what, &err);
    if (rc < 0)
        return cli_report_error(cmd, &err);
    p->cache_checked = rc == 0 || rc == 1;
    if (rc != 1) {
        p->core.what[0] = '\0';
        return CLI_EXIT_OK;
    }
    p->core.differ++;
    return CLI_EXIT_CHECK_FAILED;
}

int sweep_proof_full(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c)
{
    int rc = c->read_back && c->file ? compare_rows(cmd, p, c) : CLI_EXIT_OK;
    return rc == CLI_EXIT_OK ? check_cache(cmd, p, c) : rc;
}
