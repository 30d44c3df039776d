/* The columns of a sweep's output file and its npy header, checked strictly
 * (sweep_columns.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/sweep.h"

#include "sweep_columns.h"

#define NPY_HEADER_MAX 65536

bool sweep_column_kind(const char *name, sweep_col_kind *kind, int *index)
{
    *index = 0;
    if (strcmp(name, "combo") == 0)
        *kind = SWEEP_COL_COMBO;
    else if (strcmp(name, "open_at_end") == 0)
        *kind = SWEEP_COL_OPEN;
    else if (strcmp(name, "valid_bars") == 0)
        *kind = SWEEP_COL_VALID;
    else if ((*index = sebt_param_index(name)) >= 0)
        *kind = SWEEP_COL_PARAM;
    else if ((*index = sebt_metric_index(name)) >= 0)
        *kind = SWEEP_COL_METRIC;
    else {
        for (*index = 0; *index < SEBT_SWEEP_N_EXTRA; ++*index)
            if (strcmp(name, sebt_sweep_analysis_name(*index)) == 0) {
                *kind = SWEEP_COL_ANALYSIS;
                return true;
            }
        return false;
    }
    return true;
}

/* The name sebt writes nearest word, or NULL. */
static const char *nearest_column(const char *word)
{
    const char *names[SEBT_SWEEP_MAX_COLUMNS];
    size_t n = 0;
    names[n++] = "combo";
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        names[n++] = sebt_param_table[i].name;
    for (int i = 0; i < SEBT_N_METRICS; i++)
        names[n++] = sebt_metric_name(i);
    names[n++] = "open_at_end";
    names[n++] = "valid_bars";
    for (int i = 0; i < SEBT_SWEEP_N_EXTRA; i++)
        names[n++] = sebt_sweep_analysis_name(i);
    int k = sebt_nearest_name(word, names, n);
    return k >= 0 ? names[k] : NULL;
}

sebt_status sweep_columns_check(const char *where, const char *const *names, size_t n, sebt_error *err)
{
    size_t combo = 0;
    while (combo < n && strcmp(names[combo], "combo") != 0)
        combo++;
    if (combo == n)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: not a sweep's output: no 'combo' column", where);
    for (size_t i = 0; i < n; i++) {
        sweep_col_kind kind;
        int index;
        char shown[4 * SWEEP_COLUMN_NAME_MAX + 1];
        sebt_text_visible(names[i], strnlen(names[i], SWEEP_COLUMN_NAME_MAX), shown, sizeof shown);
        if (!sweep_column_kind(names[i], &kind, &index)) {
            const char *near = nearest_column(names[i]);
            if (near)
                return sebt_fail(err, SEBT_ERR_INPUT, "%s: column %zu, '%s', is not a column a sweep writes "
                                 "(did you mean '%s'?)", where, i + 1, shown, near);
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: column %zu, '%s', is not a column a sweep writes (combo, "
                             "the parameters, the metrics, open_at_end, valid_bars, the --analysis and --relative columns)", where,
                             i + 1, shown);
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return sebt_fail(err, SEBT_ERR_INPUT, "%s: column '%s' twice (columns %zu and %zu): which one "
                                 "is the combo's?", where, shown, j + 1, i + 1);
    }
    return SEBT_OK;
}

FILE *sweep_file_open(const char *path, bool stream_ok, sebt_error *err)
{
    FILE *f = NULL;
    return sebt_open_input(path, stream_ok, &f, err) == SEBT_OK ? f : NULL;
}

char *sweep_skip_bom(char *line)
{
    return strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? line + 3 : line;
}

/* ---- the npy header, to the letter -------------------------------------- */

typedef struct {
    const char *s;        /* the header's text, NUL-terminated */
    const char *path;
    sebt_error *err;
} npy_text;

static void skip_space(npy_text *t)
{
    while (*t->s == ' ')
        t->s++;
}

static sebt_status bad(npy_text *t, const char *what)
{
    return sebt_fail(t->err, SEBT_ERR_INPUT, "%s: its npy header is not one a sweep writes: %s", t->path, what);
}

/* A quoted string ('...' or "..."), copied into out. */
static bool quoted(npy_text *t, char *out, size_t size)
{
    char q = *t->s;
    if (q != '\'' && q != '"')
        return false;
    const char *end = strchr(t->s + 1, q);
    if (!end || (size_t)(end - t->s - 1) >= size)
        return false;
    memcpy(out, t->s + 1, (size_t)(end - t->s - 1));
    out[end - t->s - 1] = '\0';
    t->s = end + 1;
    return true;
}

static bool expect(npy_text *t, char c)
{
    skip_space(t);
    if (*t->s != c)
        return false;
    t->s++;
    skip_space(t);
    return true;
}

/* One field's dtype ("<f8", "|b1", ...); false for one a sweep never
 * writes (big-endian, strings, objects, sub-arrays...). */
static bool npy_dtype(const char *d, sweep_npy_field *f)
{
    if ((d[0] != '<' && d[0] != '|') || !d[1] || !strchr("uifb", d[1]) || d[2] < '1' || d[2] > '8' || d[3])
        return false;
    f->type = d[1];
    f->bytes = (size_t)(d[2] - '0');
    return f->bytes == 1 || f->bytes == 2 || f->bytes == 4 || f->bytes == 8;
}

static sebt_status npy_descr(npy_text *t, sweep_npy_layout *L)
{
    if (!expect(t, '['))
        return bad(t, "'descr' is not a list of named fields");
    size_t off = 0;
    for (L->n_fields = 0; *t->s != ']';) {
        sweep_npy_field *f = &L->field[L->n_fields];
        char type[16];
        if (L->n_fields == SWEEP_FILE_MAX_COLUMNS)
            return bad(t, "more than 128 fields");
        if (!expect(t, '(') || !quoted(t, f->name, sizeof f->name) || !expect(t, ',') ||
            !quoted(t, type, sizeof type) || !expect(t, ')') || !npy_dtype(type, f))
            return sebt_fail(t->err, SEBT_ERR_INPUT, "%s: npy field %zu is not a field a sweep writes (a name "
                             "and a little-endian number type)", t->path, L->n_fields + 1);
        f->offset = off;
        off += f->bytes;
        L->n_fields++;
        if (*t->s == ',')
            expect(t, ',');
        else if (*t->s != ']')
            return bad(t, "its field list is not closed by ']'");
    }
    t->s++;
    L->row_bytes = off;
    if (L->n_fields == 0)
        return bad(t, "no fields");
    return SEBT_OK;
}

static sebt_status npy_shape(npy_text *t, uint64_t *n_rows)
{
    if (!expect(t, '('))
        return bad(t, "'shape' is not a tuple");
    if (*t->s < '0' || *t->s > '9')
        return bad(t, "'shape' is not (N,) with N a count of rows");
    uint64_t n = 0;
    for (; *t->s >= '0' && *t->s <= '9'; t->s++) {
        if (n > (UINT64_MAX - 9) / 10)
            return bad(t, "'shape' holds a count beyond 2^64");
        n = n * 10 + (uint64_t)(*t->s - '0');
    }
    if (!expect(t, ',') || !expect(t, ')'))
        return bad(t, "'shape' is not (N,): a sweep's output has one dimension");
    *n_rows = n;
    return SEBT_OK;
}

static sebt_status npy_dict(npy_text *t, sweep_npy_layout *L)
{
    bool have_descr = false, have_order = false, have_shape = false;
    if (!expect(t, '{'))
        return bad(t, "it does not start with '{'");
    while (*t->s != '}') {
        char key[32];
        sebt_status st = SEBT_OK;
        if (*t->s == '\n' || *t->s == '\0' || *t->s == '#')
            return bad(t, "it is not closed by '}'");
        if (!quoted(t, key, sizeof key) || !expect(t, ':'))
            return bad(t, "a key that is not a quoted name followed by ':'");
        if (strcmp(key, "descr") == 0 && !have_descr) {
            have_descr = true;
            st = npy_descr(t, L);
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            have_order = true;
            if (strncmp(t->s, "False", 5) != 0)
                return bad(t, "'fortran_order' is not False");
            t->s += 5;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            have_shape = true;
            st = npy_shape(t, &L->n_rows);
        } else {
            return bad(t, "a key other than 'descr', 'fortran_order' and 'shape', or one of them twice");
        }
        if (st)
            return st;
        skip_space(t);
        if (*t->s == ',')
            expect(t, ',');
        else if (*t->s != '}')
            return bad(t, "it is not closed by '}'");
    }
    t->s++;
    if (!have_descr || !have_order || !have_shape)
        return bad(t, "it lacks 'descr', 'fortran_order' or 'shape'");
    /* A sweep writes its proof's note as a Python comment there (numpy
     * reads the dict with ast.literal_eval, which skips it). */
    skip_space(t);
    if (*t->s == '#')
        t->s += strcspn(t->s, "\n");
    if (t->s[0] != '\n' || t->s[1] != '\0')
        return bad(t, "something other than spaces, a '#' comment and one '\\n' after its '}'");
    return SEBT_OK;
}

sebt_status sweep_npy_read_header(FILE *f, const char *path, sweep_npy_layout *out, sebt_error *err)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: not an npy file", path);
    if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: npy format version %d.%d (sebt reads 1.0, 2.0, 3.0)", path,
                         pre[6], pre[7]);
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {
        if (fread(pre + 10, 1, 2, f) != 2)
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: an npy file cut short", path);
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen > NPY_HEADER_MAX)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: an npy header of %zu bytes: not a sweep's", path, hlen);
    char *h = malloc(hlen + 1);
    if (!h)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory reading %s", path);
    sebt_status st = SEBT_OK;
    if (fread(h, 1, hlen, f) != hlen)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: an npy file cut short in its header", path);
    h[st == SEBT_OK ? hlen : 0] = '\0';
    if (st == SEBT_OK && strlen(h) != hlen)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: a NUL byte in its npy header", path);
    npy_text t = { .s = h, .path = path, .err = err };
    memset(out, 0, sizeof *out);
    if (st == SEBT_OK)
        st = npy_dict(&t, out);
    free(h);
    if (st)
        return st;
    const char *names[SWEEP_FILE_MAX_COLUMNS];
    for (size_t i = 0; i < out->n_fields; i++)
        names[i] = out->field[i].name;
    char where[4096 + 32];
    snprintf(where, sizeof where, "%s (npy header)", path);
    return sweep_columns_check(where, names, out->n_fields, err);
}
