/* Reading a sweep's output back (include/sebt/plot.h): the columns a
 * picture needs, by name, from `sebt sweep`'s CSV or npy, whose columns
 * and npy header are checked as for `run --combo` (sweep_columns.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/plot.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"

#include "sweep_columns.h"

typedef struct {
    double **cols;
    size_t n_cols, n, cap;
} columns;

static bool grow(columns *c, size_t want)
{
    if (want <= c->cap)
        return true;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < want)
        cap *= 2;
    for (size_t k = 0; k < c->n_cols; k++) {
        double *p = realloc(c->cols[k], cap * sizeof *p);
        if (!p)
            return false;
        c->cols[k] = p;
    }
    c->cap = cap;
    return true;
}

static void drop(columns *c)
{
    for (size_t k = 0; k < c->n_cols; k++) {
        free(c->cols[k]);
        c->cols[k] = NULL;
    }
}

/* A column the file lacks, told apart: an analysis column of a sweep run
 * without them, a likely typo of a column, or none a sweep writes. The
 * file's columns were checked as a sweep's before this is asked. */
static sebt_status no_column(const char *path, const char *name, sebt_error *err)
{
    const char *names[SEBT_SWEEP_MAX_COLUMNS];
    bool is_bool[SEBT_SWEEP_MAX_COLUMNS];
    size_t n = sebt_sweep_columns_ex(names, is_bool, SEBT_COLS_RELATIVE);
    for (size_t i = SEBT_SWEEP_N_COLUMNS; i < n; i++)
        if (strcmp(names[i], name) == 0) {
            bool rel = i >= SEBT_SWEEP_N_COLUMNS + SEBT_SWEEP_N_ANALYSIS;
            return sebt_fail(err, SEBT_ERR_INPUT, "%s has no column '%s': it is %s column, written only by a sweep "
                             "run with %s", path, name, rel ? "a relative" : "an analysis",
                             rel ? "--relative" : "--analysis");
        }
    int near = sebt_nearest_name(name, names, n);
    if (near >= 0)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s has no column '%s'; did you mean '%s'?", path, name, names[near]);
    return sebt_fail(err, SEBT_ERR_INPUT, "%s has no column '%s': no sweep writes one by that name", path, name);
}

/* ---- npy ------------------------------------------------------------------ */

typedef sweep_npy_field npy_field;

/* Finds name among the header's fields. */
static bool npy_find(const sweep_npy_layout *L, const char *name, npy_field *out)
{
    for (size_t i = 0; i < L->n_fields; i++)
        if (strcmp(L->field[i].name, name) == 0) {
            *out = L->field[i];
            return true;
        }
    return false;
}

static double npy_value(const unsigned char *b, const npy_field *f)
{
    uint64_t u = 0;
    for (size_t i = 0; i < f->bytes; i++)
        u |= (uint64_t)b[f->offset + i] << (8 * i);
    switch (f->type) {
    case 'f': {
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    case 'i':
        if (f->bytes < 8 && (u >> (8 * f->bytes - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * f->bytes);
        return (double)(int64_t)u;
    default:
        return (double)u;
    }
}

static sebt_status read_npy(FILE *fp, const char *path, const char *const *names, columns *c, sebt_error *err)
{
    sweep_npy_layout *L = malloc(sizeof *L);
    if (!L)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory reading %s", path);
    sebt_status st = sweep_npy_read_header(fp, path, L, err);
    npy_field f[SEBT_SWEEP_READ_MAX_NAMES];
    for (size_t k = 0; st == SEBT_OK && k < c->n_cols; k++)
        if (!npy_find(L, names[k], &f[k]))
            st = no_column(path, names[k], err);
    size_t row = L->row_bytes;
    unsigned long long rows = L->n_rows;
    free(L);
    if (st)
        return st;
    /* The rows the header claims must be in the file before any memory is
     * taken for them. */
    long here = ftell(fp);
    if (here < 0 || fseek(fp, 0, SEEK_END) != 0)
        return sebt_fail(err, SEBT_ERR_IO, "%s: cannot seek", path);
    long size = ftell(fp);
    if (size < here || fseek(fp, here, SEEK_SET) != 0)
        return sebt_fail(err, SEBT_ERR_IO, "%s: cannot seek", path);
    if (rows > (unsigned long long)(size - here) / row)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: the header says %llu rows of %zu bytes, the file holds %ld bytes",
                         path, rows, row, size - here);
    unsigned char *buf = malloc(row * 4096);
    if (!buf || !grow(c, rows ? (size_t)rows : 1)) {
        free(buf);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory reading %s (%llu rows)", path, rows);
    }
    while (c->n < rows) {
        size_t want = rows - c->n < 4096 ? (size_t)(rows - c->n) : 4096;
        size_t got = fread(buf, row, want, fp);
        for (size_t r = 0; r < got; r++, c->n++)
            for (size_t k = 0; k < c->n_cols; k++)
                c->cols[k][c->n] = npy_value(buf + r * row, &f[k]);
        if (got < want) {
            free(buf);
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: %zu of %llu rows (the file is cut short)", path, c->n, rows);
        }
    }
    free(buf);
    return SEBT_OK;
}

/* ---- CSV: a header of names, a row per combo ------------------------------ */

static sebt_status read_csv(FILE *fp, const char *path, const char *const *names, columns *c, sebt_error *err)
{
    char *line = NULL;
    size_t cap = 0, lineno = 1;
    ssize_t len = getline(&line, &cap, fp);
    if (len <= 0) {
        free(line);
        return sebt_fail(err, SEBT_ERR_INPUT, "%s is empty", path);
    }
    int at[SEBT_SWEEP_READ_MAX_NAMES];
    for (size_t k = 0; k < c->n_cols; k++)
        at[k] = -1;
    line[strcspn(line, "\r\n")] = '\0';
    const char *header[SWEEP_FILE_MAX_COLUMNS];
    size_t n_header = 0;
    char *s = sweep_skip_bom(line);
    while (s && n_header < SWEEP_FILE_MAX_COLUMNS)
        header[n_header++] = strsep(&s, ",");
    char where[4096 + 8];
    snprintf(where, sizeof where, "%s:1", path);
    sebt_status st = s ? sebt_fail(err, SEBT_ERR_INPUT, "%s: more than %d columns: not a sweep's CSV", where,
                                   SWEEP_FILE_MAX_COLUMNS)
                       : sweep_columns_check(where, header, n_header, err);
    if (st) {
        free(line);
        return st;
    }
    for (size_t col = 0; col < n_header; col++)
        for (size_t k = 0; k < c->n_cols; k++)
            if (strcmp(header[col], names[k]) == 0)
                at[k] = (int)col;
    int col = 0;
    for (size_t k = 0; k < c->n_cols; k++)
        if (at[k] < 0) {
            free(line);
            return no_column(path, names[k], err);
        }
    while ((len = getline(&line, &cap, fp)) > 0 && st == SEBT_OK) {
        lineno++;
        if (!grow(c, c->n + 1)) {
            st = sebt_fail(err, SEBT_ERR_NOMEM, "out of memory reading %s at line %zu", path, lineno);
            break;
        }
        size_t filled = 0;
        col = 0;
        for (char *p = line; st == SEBT_OK; col++) {
            size_t w = strcspn(p, ",\r\n");
            for (size_t k = 0; k < c->n_cols; k++) {
                if (at[k] != col)
                    continue;
                char *end;
                double v;
                if (w == 4 && memcmp(p, "true", 4) == 0)
                    v = 1, end = p + 4;
                else if (w == 5 && memcmp(p, "false", 5) == 0)
                    v = 0, end = p + 5;
                else
                    v = strtod(p, &end);
                if (end != p + w || w == 0)
                    st = sebt_fail(err, SEBT_ERR_INPUT, "%s:%zu: column '%s': expected a number, got '%.*s'", path,
                                   lineno, names[k], (int)(w > 40 ? 40 : w), p);
                c->cols[k][c->n] = v;
                filled++;
            }
            if (p[w] != ',')
                break;
            p += w + 1;
        }
        if (st == SEBT_OK && filled != c->n_cols)
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s:%zu: the row has %d columns, fewer than its header", path,
                           lineno, col + 1);
        c->n++;
    }
    free(line);
    return st;
}

sebt_status sebt_sweep_columns_read(const char *path, const char *const *names, size_t n_names, double **cols,
                                    size_t *n_rows, sebt_error *err)
{
    if (!path || !names || !cols || !n_rows || n_names == 0 || n_names > SEBT_SWEEP_READ_MAX_NAMES)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_sweep_columns_read: a path and 1 to %d column names",
                         SEBT_SWEEP_READ_MAX_NAMES);
    /* Every row is kept: a file, bounded by its size; a FIFO could grow
     * without end. */
    FILE *fp = sweep_file_open(path, false, err);
    if (!fp)
        return err ? err->code : SEBT_ERR_IO;
    columns c = { .cols = cols, .n_cols = n_names };
    for (size_t k = 0; k < n_names; k++)
        cols[k] = NULL;
    int first = fgetc(fp);
    ungetc(first, fp);
    sebt_status st = first == 0x93 ? read_npy(fp, path, names, &c, err) : read_csv(fp, path, names, &c, err);
    if (st == SEBT_OK && ferror(fp))
        st = sebt_fail(err, SEBT_ERR_IO, "reading %s failed", path);
    fclose(fp);
    if (st == SEBT_OK && c.n == 0)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s has no rows", path);
    if (st != SEBT_OK) {
        drop(&c);
        return st;
    }
    *n_rows = c.n;
    return SEBT_OK;
}
