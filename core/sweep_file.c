/* Reading one combo's row back from a sweep's CSV or npy (sebt/sweep_file.h).
 * Columns are found by name, each must be one sebt writes and none may come
 * twice (sweep_columns.h); a file without a parameter's column gives that
 * parameter its default. The whole file is read, so that a combo on two
 * rows is refused. Nothing here grows with the file: lines and the npy
 * header have fixed limits, rows are read a block at a time. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "sebt/sweep_file.h"

#include "sweep_columns.h"

#define MAX_COLUMNS SWEEP_FILE_MAX_COLUMNS
#define NPY_BLOCK_ROWS 4096

typedef struct {
    sweep_col_kind kind;
    int index;             /* the parameter or metric */
    /* npy only: the field's bytes, offset and kind ('u', 'i', 'f', 'b'). */
    size_t bytes, offset;
    char type;
} column;

typedef struct {
    const char *path;
    column col[MAX_COLUMNS];
    size_t n_col;
    bool analysis;         /* every analysis column is there */
    bool relative;         /* and every relative column */
    bool *param_column;    /* [SEBT_N_PARAMS]: the file has its column */
    sebt_error *err;
} layout;

/* Every column a row must have to be read back: combo and the metrics.
 * Notes whether the analysis columns are all there. */
static sebt_status check_columns(layout *L)
{
    bool have_combo = false, have_metric[SEBT_N_METRICS] = { false }, have_analysis[SEBT_SWEEP_N_EXTRA] = { false };
    for (size_t i = 0; i < L->n_col; i++) {
        have_combo |= L->col[i].kind == SWEEP_COL_COMBO;
        if (L->col[i].kind == SWEEP_COL_METRIC)
            have_metric[L->col[i].index] = true;
        if (L->col[i].kind == SWEEP_COL_ANALYSIS)
            have_analysis[L->col[i].index] = true;
        if (L->col[i].kind == SWEEP_COL_PARAM)
            L->param_column[L->col[i].index] = true;
    }
    L->analysis = true;
    for (int i = 0; i < SEBT_SWEEP_N_ANALYSIS; i++)
        L->analysis = L->analysis && have_analysis[i];
    L->relative = L->analysis;
    for (int i = SEBT_SWEEP_N_ANALYSIS; i < SEBT_SWEEP_N_EXTRA; i++)
        L->relative = L->relative && have_analysis[i];
    if (!have_combo)
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: not a sweep's output: no 'combo' column", L->path);
    for (int m = 0; m < SEBT_N_METRICS; m++)
        if (!have_metric[m])
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: not a sweep's output: no '%s' column", L->path,
                             sebt_metric_name(m));
    return SEBT_OK;
}

static void set_metric(sebt_sweep_record *rec, int metric, double v)
{
    sebt_metrics *m = &rec->metrics;
    switch (metric) {
    case SEBT_METRIC_N: m->n = (int64_t)v; break;
    case SEBT_METRIC_WIN_RATE: m->win_rate = v; break;
    case SEBT_METRIC_AVG_R: m->avg_r = v; break;
    case SEBT_METRIC_TOTAL_PNL: m->total_pnl = v; break;
    case SEBT_METRIC_MAX_DD: m->max_dd = v; break;
    default: m->sharpe = v; break;
    }
}

/* ---- CSV --------------------------------------------------------------------- */

static bool parse_u64(const char *s, uint64_t *v)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    *v = x;
    return errno == 0 && *end == '\0';
}

static bool parse_f64(const char *s, double *v)
{
    if (!*s)
        return false;
    char *end;
    *v = strtod(s, &end);
    return *end == '\0';
}

/* Splits line (its '\n' removed) at commas in place; returns the fields. */
static size_t split(char *line, char **field, size_t max)
{
    size_t n = 0;
    for (char *s = line;; s++) {
        if (n == max)
            return max + 1;
        field[n++] = s;
        s = strchr(s, ',');
        if (!s)
            return n;
        *s = '\0';
    }
}

/* Reads a line into buf; 1 read, 0 end of file, -1 a line sebt never
 * writes (err set): longer than the limit, or holding a NUL byte. */
static int read_line(FILE *f, char *buf, size_t size, const layout *L, size_t line_no)
{
    size_t len = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == '\0') {
            sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: a NUL byte at byte %zu of the line: not a sweep's CSV "
                      "(a binary file?)", L->path, line_no, len + 1);
            return -1;
        }
        if (len + 1 >= size) {
            sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: a line of more than %d bytes: not a sweep's CSV", L->path,
                      line_no, SEBT_SWEEP_FILE_LINE_MAX);
            return -1;
        }
        buf[len++] = (char)c;
    }
    buf[len] = '\0';
    if (c == EOF && len == 0)
        return 0;
    if (len && buf[len - 1] == '\r')
        buf[--len] = '\0';
    return 1;
}

static sebt_status csv_row(const layout *L, char **field, size_t line_no, sebt_params *p, sebt_sweep_record *rec)
{
    for (size_t i = 0; i < L->n_col; i++) {
        const column *c = &L->col[i];
        const char *v = field[i];
        double d = 0;
        uint64_t u = 0;
        sebt_error e = { 0 };
        switch (c->kind) {
        case SWEEP_COL_PARAM:
            if (sebt_params_set(p, sebt_param_table[c->index].name, v, &e) != SEBT_OK)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %s", L->path, line_no, e.msg);
            break;
        case SWEEP_COL_METRIC:
            if (c->index == SEBT_METRIC_N ? !parse_u64(v, &u) : !parse_f64(v, &d))
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %s is '%s', not a number", L->path, line_no,
                                 sebt_metric_name(c->index), v);
            set_metric(rec, c->index, c->index == SEBT_METRIC_N ? (double)u : d);
            break;
        case SWEEP_COL_OPEN:
            if (!parse_u64(v, &u) || u > 1)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: open_at_end is '%s', not 0 or 1", L->path,
                                 line_no, v);
            rec->open_at_end = u;
            break;
        case SWEEP_COL_VALID:
            if (!parse_u64(v, &rec->valid_bars))
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: valid_bars is '%s', not a count", L->path,
                                 line_no, v);
            break;
        case SWEEP_COL_ANALYSIS: {
            /* A relative count may be -1 (undefined): read as a whole double. */
            bool count = sebt_sweep_analysis_is_count(c->index) && c->index < SEBT_SWEEP_N_ANALYSIS;
            bool ok = count ? parse_u64(v, &u) : parse_f64(v, &d);
            if (ok && !count && sebt_sweep_analysis_is_count(c->index))
                ok = d == (double)(int64_t)d;
            if (!ok)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %s is '%s', not a number", L->path, line_no,
                                 sebt_sweep_analysis_name(c->index), v);
            sebt_sweep_analysis_set(&rec->analysis, c->index, count ? (double)u : d);
            break;
        }
        default:
            break;
        }
    }
    return SEBT_OK;
}

static sebt_status csv_header(layout *L, char *line)
{
    char *field[MAX_COLUMNS + 1];
    size_t n = split(line, field, MAX_COLUMNS);
    if (n > MAX_COLUMNS)
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:1: more than %d columns: not a sweep's CSV", L->path,
                         MAX_COLUMNS);
    char where[SEBT_ERROR_MSG_MAX];
    snprintf(where, sizeof where, "%s:1", L->path);
    sebt_status st = sweep_columns_check(where, (const char *const *)field, n, L->err);
    if (st)
        return st;
    for (size_t i = 0; i < n; i++)
        sweep_column_kind(field[i], &L->col[i].kind, &L->col[i].index);
    L->n_col = n;
    return check_columns(L);
}

static sebt_status read_csv(FILE *f, layout *L, uint64_t combo, sebt_params *p, sebt_sweep_record *rec)
{
    char line[SEBT_SWEEP_FILE_LINE_MAX + 2];
    int got = read_line(f, line, sizeof line, L, 1);
    if (got <= 0)
        return got < 0 ? L->err->code : sebt_fail(L->err, SEBT_ERR_INPUT, "%s: empty: not a sweep's CSV", L->path);
    sebt_status st = csv_header(L, sweep_skip_bom(line));
    if (st)
        return st;
    size_t combo_col = 0, found = 0;
    while (L->col[combo_col].kind != SWEEP_COL_COMBO)
        combo_col++;
    for (size_t line_no = 2; (got = read_line(f, line, sizeof line, L, line_no)) > 0; line_no++) {
        char *field[MAX_COLUMNS + 1];
        if (!*line)
            continue;
        size_t n = split(line, field, MAX_COLUMNS);
        uint64_t id;
        if (n != L->n_col)
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %zu fields where the header has %zu", L->path,
                             line_no, n > MAX_COLUMNS ? (size_t)MAX_COLUMNS + 1 : n, L->n_col);
        if (!parse_u64(field[combo_col], &id))
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: combo is '%s', not an index", L->path, line_no,
                             field[combo_col]);
        if (id != combo)
            continue;
        if (found)
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: combo %" PRIu64 " on lines %zu and %zu: which one is "
                             "it?", L->path, combo, found, line_no);
        found = line_no;
        rec->combo = id;
        if ((st = csv_row(L, field, line_no, p, rec)) != SEBT_OK)
            return st;
    }
    if (got < 0)
        return L->err->code;
    if (ferror(f))
        return sebt_fail(L->err, SEBT_ERR_IO, "%s: %s", L->path, strerror(errno));
    if (found)
        return SEBT_OK;
    return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: no row of combo %" PRIu64 " (a sweep with --top or --where "
                     "keeps only some combos)", L->path, combo);
}

/* ---- npy --------------------------------------------------------------------- */

static double npy_value(const column *c, const unsigned char *row)
{
    uint64_t u = 0;
    for (size_t i = 0; i < c->bytes; i++)
        u |= (uint64_t)row[c->offset + i] << (8 * i);
    if (c->type == 'f') {
        if (c->bytes == 8) {
            double d;
            memcpy(&d, &u, sizeof d);
            return d;
        }
        float x;
        uint32_t w = (uint32_t)u;
        memcpy(&x, &w, sizeof x);
        return c->bytes == 4 ? (double)x : NAN;
    }
    if (c->type == 'i' && c->bytes < 8 && (u >> (8 * c->bytes - 1)) & 1)
        u |= ~UINT64_C(0) << (8 * c->bytes);   /* sign-extend */
    return c->type == 'i' ? (double)(int64_t)u : (double)u;
}

static uint64_t npy_u64(const column *c, const unsigned char *row)
{
    uint64_t u = 0;
    for (size_t i = 0; i < c->bytes; i++)
        u |= (uint64_t)row[c->offset + i] << (8 * i);
    return u;
}

static sebt_status npy_row(const layout *L, const unsigned char *row, uint64_t row_no, sebt_params *p,
                           sebt_sweep_record *rec)
{
    for (size_t i = 0; i < L->n_col; i++) {
        const column *c = &L->col[i];
        double v = npy_value(c, row);
        char text[40];
        sebt_error e = { 0 };
        switch (c->kind) {
        case SWEEP_COL_PARAM:
            if (sebt_param_table[c->index].type == SEBT_PARAM_BOOL)
                snprintf(text, sizeof text, "%s", v != 0 ? "true" : "false");
            else
                snprintf(text, sizeof text, "%.17g", v);
            if (sebt_params_set(p, sebt_param_table[c->index].name, text, &e) != SEBT_OK)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: row %" PRIu64 ": %s", L->path, row_no, e.msg);
            break;
        case SWEEP_COL_METRIC:
            if (c->index == SEBT_METRIC_N)
                rec->metrics.n = (int64_t)npy_u64(c, row);
            else
                set_metric(rec, c->index, v);
            break;
        case SWEEP_COL_OPEN: rec->open_at_end = npy_u64(c, row) != 0; break;
        case SWEEP_COL_VALID: rec->valid_bars = npy_u64(c, row); break;
        case SWEEP_COL_ANALYSIS: sebt_sweep_analysis_set(&rec->analysis, c->index, v); break;
        default: break;
        }
    }
    return SEBT_OK;
}

/* The header's fields as columns; f is left at the first row. */
static sebt_status npy_open(FILE *f, layout *L, size_t *row_bytes, uint64_t *n_rows)
{
    sweep_npy_layout *n = malloc(sizeof *n);
    if (!n)
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "out of memory reading %s", L->path);
    sebt_status st = sweep_npy_read_header(f, L->path, n, L->err);
    for (size_t i = 0; st == SEBT_OK && i < n->n_fields; i++) {
        column *c = &L->col[i];
        sweep_column_kind(n->field[i].name, &c->kind, &c->index);
        c->bytes = n->field[i].bytes;
        c->offset = n->field[i].offset;
        c->type = n->field[i].type;
    }
    L->n_col = st == SEBT_OK ? n->n_fields : 0;
    *row_bytes = n->row_bytes;
    *n_rows = n->n_rows;
    free(n);
    return st ? st : check_columns(L);
}

static sebt_status read_npy(FILE *f, layout *L, uint64_t combo, sebt_params *p, sebt_sweep_record *rec)
{
    size_t row_bytes = 0;
    uint64_t n_rows = 0, found = 0;
    bool have = false;
    sebt_status st = npy_open(f, L, &row_bytes, &n_rows);
    if (st)
        return st;
    size_t combo_col = 0;
    while (L->col[combo_col].kind != SWEEP_COL_COMBO)
        combo_col++;
    unsigned char *block = malloc(row_bytes * NPY_BLOCK_ROWS);
    if (!block)
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "out of memory reading %s", L->path);
    for (uint64_t r = 0; st == SEBT_OK && r < n_rows;) {
        size_t want = n_rows - r < NPY_BLOCK_ROWS ? (size_t)(n_rows - r) : NPY_BLOCK_ROWS;
        if (fread(block, row_bytes, want, f) != want) {
            st = ferror(f) ? sebt_fail(L->err, SEBT_ERR_IO, "%s: %s", L->path, strerror(errno))
                           : sebt_fail(L->err, SEBT_ERR_INPUT, "%s: cut short: its header promises %" PRIu64
                                       " rows", L->path, n_rows);
            break;
        }
        for (size_t k = 0; st == SEBT_OK && k < want; k++) {
            if (npy_u64(&L->col[combo_col], block + k * row_bytes) != combo)
                continue;
            if (have) {
                st = sebt_fail(L->err, SEBT_ERR_INPUT, "%s: combo %" PRIu64 " on rows %" PRIu64 " and %" PRIu64
                               ": which one is it?", L->path, combo, found, r + k);
                break;
            }
            have = true;
            found = r + k;
            rec->combo = combo;
            st = npy_row(L, block + k * row_bytes, r + k, p, rec);
        }
        r += want;
    }
    free(block);
    if (st == SEBT_OK && getc(f) != EOF)
        st = sebt_fail(L->err, SEBT_ERR_INPUT, "%s: more bytes than the %" PRIu64 " rows its header promises",
                       L->path, n_rows);
    if (st || have)
        return st;
    return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: no row of combo %" PRIu64 " (a sweep with --top or --where "
                     "keeps only some combos)", L->path, combo);
}

sebt_status sebt_sweep_file_combo_columns(const char *path, uint64_t combo, sebt_params *p, sebt_sweep_record *rec,
                                          bool param_column[SEBT_N_PARAMS], sebt_error *err)
{
    sebt_error scratch = { 0 };
    bool columns[SEBT_N_PARAMS] = { false };
    layout L = { .path = path, .err = err ? err : &scratch, .param_column = columns };
    *p = sebt_params_default();
    memset(rec, 0, sizeof *rec);
    /* Read row by row, so a pipe is read in bounded memory. */
    FILE *f = sweep_file_open(path, true, L.err);
    if (!f)
        return L.err->code;
    int c = getc(f);
    sebt_status st;
    if (c == EOF)
        st = ferror(f) ? sebt_fail(L.err, SEBT_ERR_IO, "cannot read %s: %s", path, strerror(errno))
                       : sebt_fail(L.err, SEBT_ERR_INPUT, "%s: empty: not a sweep's output", path);
    else {
        ungetc(c, f);
        st = c == 0x93 ? read_npy(f, &L, combo, p, rec) : read_csv(f, &L, combo, p, rec);
    }
    fclose(f);
    if (st != SEBT_OK)
        *p = sebt_params_default();
    rec->has_analysis = st == SEBT_OK && L.analysis;
    rec->analysis.has_relative = rec->has_analysis && L.relative;
    if (param_column)
        memcpy(param_column, columns, sizeof columns);
    return st;
}

sebt_status sebt_sweep_file_combo(const char *path, uint64_t combo, sebt_params *p, sebt_sweep_record *rec,
                                  sebt_error *err)
{
    return sebt_sweep_file_combo_columns(path, combo, p, rec, NULL, err);
}
