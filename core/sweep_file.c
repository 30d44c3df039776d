/* Reading one combo's row back from a sweep's CSV or npy (sebt/sweep_file.h).
 * Columns are found by name, so a file with columns appended by a later
 * version still reads, and one without a parameter's column gives that
 * parameter its default. Nothing here grows with the file: lines and the
 * npy header have fixed limits, rows are read a block at a time. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "sebt/sweep_file.h"

#define MAX_COLUMNS 128
#define NPY_HEADER_MAX 65536
#define NPY_BLOCK_ROWS 4096

typedef enum { COL_SKIP, COL_COMBO, COL_PARAM, COL_METRIC, COL_OPEN, COL_VALID, COL_ANALYSIS } col_kind;

typedef struct {
    col_kind kind;
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
    sebt_error *err;
} layout;

static col_kind classify(const char *name, int *index)
{
    if (strcmp(name, "combo") == 0)
        return COL_COMBO;
    if (strcmp(name, "open_at_end") == 0)
        return COL_OPEN;
    if (strcmp(name, "valid_bars") == 0)
        return COL_VALID;
    if ((*index = sebt_param_index(name)) >= 0)
        return COL_PARAM;
    if ((*index = sebt_metric_index(name)) >= 0)
        return COL_METRIC;
    for (*index = 0; *index < SEBT_SWEEP_N_ANALYSIS; ++*index)
        if (strcmp(name, sebt_sweep_analysis_name(*index)) == 0)
            return COL_ANALYSIS;
    return COL_SKIP;
}

/* Every column a row must have to be read back: combo and the metrics.
 * Notes whether the analysis columns are all there. */
static sebt_status check_columns(layout *L)
{
    bool have_combo = false, have_metric[SEBT_N_METRICS] = { false }, have_analysis[SEBT_SWEEP_N_ANALYSIS] = { false };
    for (size_t i = 0; i < L->n_col; i++) {
        have_combo |= L->col[i].kind == COL_COMBO;
        if (L->col[i].kind == COL_METRIC)
            have_metric[L->col[i].index] = true;
        if (L->col[i].kind == COL_ANALYSIS)
            have_analysis[L->col[i].index] = true;
    }
    L->analysis = true;
    for (int i = 0; i < SEBT_SWEEP_N_ANALYSIS; i++)
        L->analysis = L->analysis && have_analysis[i];
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

/* Reads a line into buf; 1 read, 0 end of file, -1 too long (err set). */
static int read_line(FILE *f, char *buf, size_t size, const layout *L, size_t line_no)
{
    if (!fgets(buf, (int)size, f))
        return 0;
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\n')
        buf[--len] = '\0';
    else if (!feof(f)) {
        sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: a line of more than %d bytes: not a sweep's CSV", L->path,
                  line_no, SEBT_SWEEP_FILE_LINE_MAX);
        return -1;
    }
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
        case COL_PARAM:
            if (sebt_params_set(p, sebt_param_table[c->index].name, v, &e) != SEBT_OK)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %s", L->path, line_no, e.msg);
            break;
        case COL_METRIC:
            if (c->index == SEBT_METRIC_N ? !parse_u64(v, &u) : !parse_f64(v, &d))
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %s is '%s', not a number", L->path, line_no,
                                 sebt_metric_name(c->index), v);
            set_metric(rec, c->index, c->index == SEBT_METRIC_N ? (double)u : d);
            break;
        case COL_OPEN:
            if (!parse_u64(v, &u) || u > 1)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: open_at_end is '%s', not 0 or 1", L->path,
                                 line_no, v);
            rec->open_at_end = u;
            break;
        case COL_VALID:
            if (!parse_u64(v, &rec->valid_bars))
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: valid_bars is '%s', not a count", L->path,
                                 line_no, v);
            break;
        case COL_ANALYSIS:
            if (sebt_sweep_analysis_is_count(c->index) ? !parse_u64(v, &u) : !parse_f64(v, &d))
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu: %s is '%s', not a number", L->path, line_no,
                                 sebt_sweep_analysis_name(c->index), v);
            sebt_sweep_analysis_set(&rec->analysis, c->index, sebt_sweep_analysis_is_count(c->index) ? (double)u : d);
            break;
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
    for (size_t i = 0; i < n; i++)
        L->col[i].kind = classify(field[i], &L->col[i].index);
    L->n_col = n;
    return check_columns(L);
}

static sebt_status read_csv(FILE *f, layout *L, uint64_t combo, sebt_params *p, sebt_sweep_record *rec)
{
    char line[SEBT_SWEEP_FILE_LINE_MAX + 2];
    int got = read_line(f, line, sizeof line, L, 1);
    if (got <= 0)
        return got < 0 ? L->err->code : sebt_fail(L->err, SEBT_ERR_INPUT, "%s: empty: not a sweep's CSV", L->path);
    sebt_status st = csv_header(L, line);
    if (st)
        return st;
    size_t combo_col = 0;
    while (L->col[combo_col].kind != COL_COMBO)
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
        if (id == combo) {
            rec->combo = id;
            return csv_row(L, field, line_no, p, rec);
        }
    }
    if (got < 0)
        return L->err->code;
    if (ferror(f))
        return sebt_fail(L->err, SEBT_ERR_IO, "%s: %s", L->path, strerror(errno));
    return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: no row of combo %" PRIu64 " (a sweep with --top or --where "
                     "keeps only some combos)", L->path, combo);
}

/* ---- npy --------------------------------------------------------------------- */

/* A quoted string at *s ('...' or "..."), copied into out; advances *s. */
static bool quoted(const char **s, char *out, size_t size)
{
    char q = **s;
    if (q != '\'' && q != '"')
        return false;
    const char *end = strchr(*s + 1, q);
    if (!end || (size_t)(end - *s - 1) >= size)
        return false;
    memcpy(out, *s + 1, (size_t)(end - *s - 1));
    out[end - *s - 1] = '\0';
    *s = end + 1;
    return true;
}

static void skip_space(const char **s)
{
    while (**s == ' ')
        (*s)++;
}

/* One field's dtype ("<f8", "|b1", ...): its kind and bytes; false for a
 * dtype a sweep never writes (big-endian, strings, objects...). */
static bool npy_dtype(const char *t, column *c)
{
    if ((t[0] != '<' && t[0] != '|') || !strchr("uifb", t[1]) || t[2] < '1' || t[2] > '8' || t[3])
        return false;
    c->type = t[1];
    c->bytes = (size_t)(t[2] - '0');
    return c->bytes == 1 || c->bytes == 2 || c->bytes == 4 || c->bytes == 8;
}

static sebt_status npy_descr(layout *L, const char *h, size_t *row_bytes)
{
    const char *s = strstr(h, "'descr':");
    if (!s)
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: an npy header without 'descr'", L->path);
    s += 8;
    skip_space(&s);
    if (*s++ != '[')
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: not a structured array (a sweep's npy has named fields)",
                         L->path);
    size_t off = 0;
    for (L->n_col = 0;;) {
        skip_space(&s);
        if (*s == ']')
            break;
        char name[64], type[16];
        column *c = &L->col[L->n_col];
        if (L->n_col == MAX_COLUMNS || *s++ != '(')
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: an npy field list sebt cannot read", L->path);
        skip_space(&s);
        bool ok = quoted(&s, name, sizeof name);
        skip_space(&s);
        ok = ok && *s++ == ',';
        skip_space(&s);
        ok = ok && quoted(&s, type, sizeof type);
        skip_space(&s);
        if (!ok || *s++ != ')' || !npy_dtype(type, c))
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: npy field %zu is not a field a sweep writes", L->path,
                             L->n_col + 1);
        c->kind = classify(name, &c->index);
        c->offset = off;
        off += c->bytes;
        L->n_col++;
        skip_space(&s);
        if (*s == ',')
            s++;
    }
    *row_bytes = off;
    if (strstr(h, "'fortran_order': False") == NULL)
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: a Fortran-ordered npy", L->path);
    return check_columns(L);
}

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
        case COL_PARAM:
            if (sebt_param_table[c->index].type == SEBT_PARAM_BOOL)
                snprintf(text, sizeof text, "%s", v != 0 ? "true" : "false");
            else
                snprintf(text, sizeof text, "%.17g", v);
            if (sebt_params_set(p, sebt_param_table[c->index].name, text, &e) != SEBT_OK)
                return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: row %" PRIu64 ": %s", L->path, row_no, e.msg);
            break;
        case COL_METRIC:
            if (c->index == SEBT_METRIC_N)
                rec->metrics.n = (int64_t)npy_u64(c, row);
            else
                set_metric(rec, c->index, v);
            break;
        case COL_OPEN: rec->open_at_end = npy_u64(c, row) != 0; break;
        case COL_VALID: rec->valid_bars = npy_u64(c, row); break;
        case COL_ANALYSIS: sebt_sweep_analysis_set(&rec->analysis, c->index, v); break;
        default: break;
        }
    }
    return SEBT_OK;
}

/* The header's length and the row count; f is left at the first row. */
static sebt_status npy_open(FILE *f, layout *L, size_t *row_bytes, uint64_t *n_rows)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: not an npy file", L->path);
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {
        if (fread(pre + 10, 1, 2, f) != 2)
            return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: an npy file cut short", L->path);
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen > NPY_HEADER_MAX)
        return sebt_fail(L->err, SEBT_ERR_INPUT, "%s: an npy header of %zu bytes: not a sweep's", L->path, hlen);
    char *h = malloc(hlen + 1);
    if (!h)
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "out of memory reading %s", L->path);
    sebt_status st = SEBT_OK;
    if (fread(h, 1, hlen, f) != hlen)
        st = sebt_fail(L->err, SEBT_ERR_INPUT, "%s: an npy file cut short", L->path);
    h[st == SEBT_OK ? hlen : 0] = '\0';
    const char *shape = st == SEBT_OK ? strstr(h, "'shape': (") : NULL;
    char *end = NULL;
    if (st == SEBT_OK && (!shape || (*n_rows = strtoull(shape + 10, &end, 10), !end || *end != ',')))
        st = sebt_fail(L->err, SEBT_ERR_INPUT, "%s: not a one-dimensional npy array", L->path);
    if (st == SEBT_OK)
        st = npy_descr(L, h, row_bytes);
    free(h);
    return st;
}

static sebt_status read_npy(FILE *f, layout *L, uint64_t combo, sebt_params *p, sebt_sweep_record *rec)
{
    size_t row_bytes = 0;
    uint64_t n_rows = 0;
    sebt_status st = npy_open(f, L, &row_bytes, &n_rows);
    if (st)
        return st;
    long start = ftell(f);
    size_t combo_col = 0;
    while (L->col[combo_col].kind != COL_COMBO)
        combo_col++;
    unsigned char *block = malloc(row_bytes * NPY_BLOCK_ROWS);
    if (!block)
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "out of memory reading %s", L->path);
    /* A whole sweep's row k is combo k: try it first, then look row by row
     * (--top, --where and merged shards keep other orders). */
    if (combo < n_rows && fseek(f, start + (long)(combo * row_bytes), SEEK_SET) == 0 &&
        fread(block, row_bytes, 1, f) == 1 && npy_u64(&L->col[combo_col], block) == combo) {
        rec->combo = combo;
        st = npy_row(L, block, combo, p, rec);
        free(block);
        return st;
    }
    st = fseek(f, start, SEEK_SET) == 0 ? SEBT_OK : sebt_fail(L->err, SEBT_ERR_IO, "%s: %s", L->path, strerror(errno));
    for (uint64_t r = 0; st == SEBT_OK && r < n_rows;) {
        size_t want = n_rows - r < NPY_BLOCK_ROWS ? (size_t)(n_rows - r) : NPY_BLOCK_ROWS;
        if (fread(block, row_bytes, want, f) != want) {
            st = sebt_fail(L->err, SEBT_ERR_INPUT, "%s: cut short: its header promises %" PRIu64 " rows", L->path,
                           n_rows);
            break;
        }
        for (size_t k = 0; k < want; k++)
            if (npy_u64(&L->col[combo_col], block + k * row_bytes) == combo) {
                rec->combo = combo;
                st = npy_row(L, block + k * row_bytes, r + k, p, rec);
                free(block);
                return st;
            }
        r += want;
    }
    free(block);
    return st ? st : sebt_fail(L->err, SEBT_ERR_INPUT, "%s: no row of combo %" PRIu64 " (a sweep with --top or "
                               "--where keeps only some combos)", L->path, combo);
}

sebt_status sebt_sweep_file_combo(const char *path, uint64_t combo, sebt_params *p, sebt_sweep_record *rec,
                                  sebt_error *err)
{
    sebt_error scratch = { 0 };
    layout L = { .path = path, .err = err ? err : &scratch };
    *p = sebt_params_default();
    memset(rec, 0, sizeof *rec);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sebt_fail(L.err, SEBT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    int c = fgetc(f);
    rewind(f);
    sebt_status st = c == 0x93 ? read_npy(f, &L, combo, p, rec) : read_csv(f, &L, combo, p, rec);
    fclose(f);
    if (st != SEBT_OK)
        *p = sebt_params_default();
    rec->has_analysis = st == SEBT_OK && L.analysis;
    return st;
}
