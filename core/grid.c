/* Grid files and combos CSV files (include/sebt/grid.h). */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "trim.h"
#include "sebt/grid.h"
#include "sebt/sebt.h"

/* ---- small text helpers ------------------------------------------------- */

/* A UTF-8 byte order mark, as editors on Windows write it: data files
 * accept one, so grids and combos files do too (it was reported as an
 * invisible character in the first name). */
static void skip_bom(const char **text, size_t *len)
{
    if (*len >= 3 && memcmp(*text, "\xEF\xBB\xBF", 3) == 0) {
        *text += 3;
        *len -= 3;
    }
}

/* A text's lines: at[0..n-1] point into store, which owns them. */
typedef struct {
    char *store;
    char **at;
    size_t n;
} text_lines;

static void text_lines_free(text_lines *t)
{
    free(t->at);
    free(t->store);
}

/* Copies text, past a byte order mark, into lines (NUL-terminated, '\r'
 * dropped). A NUL byte in the text is an error naming its line and column:
 * the lines are C strings, and a NUL would silently end one and drop the
 * rest of the file. */
static sebt_status split_lines(const char *name, const char *text, size_t len, text_lines *out, sebt_error *err)
{
    skip_bom(&text, &len);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        size_t line = 1, col = 1;
        for (const char *c = text; c < nul; c++) {
            col++;
            if (*c == '\n') {
                line++;
                col = 1;
            }
        }
        return sebt_fail(err, SEBT_ERR_INPUT, "%s:%zu:%zu: a NUL byte; this is a text file of parameters "
                         "(is it binary or UTF-16?)", name, line, col);
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    memcpy(copy, text, len);
    copy[len] = '\0';
    size_t count = 1;
    for (size_t i = 0; i < len; i++)
        count += copy[i] == '\n';
    char **lines = malloc(count * sizeof *lines);
    if (!lines) {
        free(copy);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    }
    size_t k = 0;
    char *p = copy;
    for (;;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        size_t l = strlen(p);
        if (l && p[l - 1] == '\r')
            p[l - 1] = '\0';
        lines[k++] = p;
        if (!nl)
            break;
        p = nl + 1;
    }
    out->store = copy;
    out->at = lines;
    out->n = k;
    return SEBT_OK;
}

static void set_field(sebt_params *p, int idx, double v)
{
    const sebt_param_info *info = &sebt_param_table[idx];
    char *at = (char *)p + info->offset;
    switch (info->type) {
    case SEBT_PARAM_INT: { int32_t iv = (int32_t)v; memcpy(at, &iv, sizeof iv); break; }
    case SEBT_PARAM_DOUBLE: memcpy(at, &v, sizeof v); break;
    case SEBT_PARAM_BOOL: { bool bv = v != 0.0; memcpy(at, &bv, sizeof bv); break; }
    }
}

/* Parses one value of parameter idx and checks its SPEC §2 rule alone
 * (the rules are per parameter, so a value that passes fits any combo). */
static sebt_status parse_value(const char *where, int idx, const char *text, double *out, sebt_error *err)
{
    sebt_params p = sebt_params_default();
    sebt_error e = { 0 };
    const char *name = sebt_param_table[idx].name;
    if (!*text)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s: empty value", where, name);
    if (sebt_params_set(&p, name, text, &e) != SEBT_OK || sebt_params_validate(&p, &e) != SEBT_OK)
        return sebt_fail(err, SEBT_ERR_PARAM, "%s: %s", where, e.msg);
    *out = sebt_params_get_double(&p, idx);
    return SEBT_OK;
}

/* ---- the combos limit -------------------------------- */

typedef struct {
    size_t max;
    int set;      /* from SEBT_MAX_COMBOS */
    int streamed; /* sebt_grid_open: no combo is held, only counted */
} combo_limit;

static sebt_status get_limit(combo_limit *l, sebt_error *err)
{
    return sebt_env_limit("SEBT_MAX_COMBOS", SEBT_GRID_MAX_COMBOS, &l->max, &l->set, err);
}

/* "more than the limit of N combos; ... set SEBT_MAX_COMBOS=N" */
static sebt_status too_many(sebt_error *err, const combo_limit *l, const char *fmt_where, const char *what)
{
    if (l->streamed)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: %s, more than %zu, the most a streamed sweep takes "
                         "(at a million backtests a second, 13 days)", fmt_where, what, l->max);
    if (l->set)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: %s, more than SEBT_MAX_COMBOS=%zu", fmt_where, what, l->max);
    return sebt_fail(err, SEBT_ERR_INPUT,
                     "%s: %s, more than the limit of %zu combos (each costs memory and time before the "
                     "first backtest): narrow it, split it, or set SEBT_MAX_COMBOS=N to allow N combos",
                     fmt_where, what, l->max);
}

/* ---- grids --------------------------------------------------------------- */

typedef struct {
    int idx;
    size_t line;
    double *values;
    size_t n;
} axis;

/* Digits after the point of a plain decimal ("0.25" -> 2), -1 when the
 * text has an exponent or is not plain. */
static int decimals(const char *s)
{
    if (strpbrk(s, "eEnNiI"))
        return -1;
    const char *dot = strchr(s, '.');
    return dot ? (int)strlen(dot + 1) : 0;
}

static sebt_status parse_range(const char *where, int idx, char *spec, axis *ax, const combo_limit *lim,
                               sebt_error *err)
{
    const char *name = sebt_param_table[idx].name;
    sebt_param_type type = sebt_param_table[idx].type;
    if (type == SEBT_PARAM_BOOL)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s is true/false: list its values, not a range",
                         where, name);
    char *parts[3];
    char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || strchr(c2 + 1, ':'))
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s: a range is start:stop:step, got '%s'", where,
                         name, spec);
    *c1 = *c2 = '\0';
    parts[0] = spec;
    parts[1] = c1 + 1;
    parts[2] = c2 + 1;
    for (int i = 0; i < 3; i++)
        parts[i] = trim(parts[i]);
    double start, stop;
    sebt_status st = parse_value(where, idx, parts[0], &start, err);
    if (st == SEBT_OK)
        st = parse_value(where, idx, parts[1], &stop, err);
    if (st != SEBT_OK)
        return st;
    char *end = NULL;
    double step = strtod(parts[2], &end);
    if (end == parts[2] || *end || !isfinite(step) || step == 0.0 ||
        (type == SEBT_PARAM_INT && step != floor(step)))
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s: step '%s' must be a %snumber other than 0",
                         where, name, parts[2], type == SEBT_PARAM_INT ? "whole " : "");
    if ((stop - start) / step < 0)
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s: step %s goes away from %s to %s", where,
                         name, parts[2], parts[0], parts[1]);
    /* A tiny slack so that 0.1:0.3:0.1 includes 0.3. */
    double count_d = floor((stop - start) / step + 1e-9) + 1.0;
    if (!(count_d <= (double)lim->max)) {
        char what[200];
        snprintf(what, sizeof what, "parameter %s: the range %s:%s:%s has %.0f values", name, parts[0], parts[1],
                 parts[2], count_d);
        return too_many(err, lim, where, what);
    }
    size_t count = (size_t)count_d;
    ax->values = malloc(count * sizeof(double));
    if (!ax->values)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", where);
    int dec = decimals(parts[0]) > decimals(parts[2]) ? decimals(parts[0]) : decimals(parts[2]);
    if (decimals(parts[0]) < 0 || decimals(parts[2]) < 0)
        dec = -1;
    for (size_t i = 0; i < count; i++) {
        double v = start + (double)i * step;
        if (type == SEBT_PARAM_DOUBLE && dec >= 0 && dec <= 17) {
            /* 0.1 + 2*0.1 reads back as 0.3, as the user wrote it. %.17f of
             * the largest double is 327 characters: the buffer holds any. */
            char buf[400];
            snprintf(buf, sizeof buf, "%.*f", dec, v);
            v = strtod(buf, NULL);
        }
        char buf[64];
        snprintf(buf, sizeof buf, type == SEBT_PARAM_INT ? "%.0f" : "%.17g", v);
        st = parse_value(where, idx, buf, &ax->values[i], err);
        if (st != SEBT_OK)
            return st;
    }
    ax->n = count;
    return SEBT_OK;
}

/* A decimal comma ("vol_z = 1.5, 2,0", "vol_z = 1,5") would otherwise be
 * read as a separator and silently make other values. In the list of a
 * parameter that takes decimals, a comma with a digit right before and
 * right after it is refused when another comma of the list is followed by
 * a space (the separators disagree), or when no value of the list has a
 * '.' or an exponent (each comma could be a decimal one). docs/cli.md
 * states the rule. */
static sebt_status check_decimal_comma(const char *where, int idx, const char *spec, sebt_error *err)
{
    if (sebt_param_table[idx].type != SEBT_PARAM_DOUBLE)
        return SEBT_OK;
    const char *tight = NULL;
    bool spaced = false;
    for (const char *c = spec; *c; c++) {
        if (*c != ',')
            continue;
        if (isspace((unsigned char)c[1]))
            spaced = true;
        else if (!tight && c > spec && isdigit((unsigned char)c[-1]) && isdigit((unsigned char)c[1]))
            tight = c;
    }
    if (!tight || (!spaced && strpbrk(spec, ".eE")))
        return SEBT_OK;
    const char *from = tight, *to = tight + 1;
    while (from > spec && isdigit((unsigned char)from[-1]))
        from--;
    while (isdigit((unsigned char)*to))
        to++;
    int before = (int)(tight - from), after = (int)(to - tight - 1);
    return sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s: '%.*s' looks like a number written with a decimal "
                     "comma, but ',' separates values: write %.*s.%.*s for one value, or '%.*s, %.*s' (a space "
                     "after each comma) for two", where, sebt_param_table[idx].name, before + 1 + after, from,
                     before, from, after, tight + 1, before, from, after, tight + 1);
}

static sebt_status parse_list(const char *where, int idx, char *spec, axis *ax, sebt_error *err)
{
    sebt_status dc = check_decimal_comma(where, idx, spec, err);
    if (dc != SEBT_OK)
        return dc;
    size_t count = 1;
    for (char *c = spec; *c; c++)
        count += *c == ',';
    ax->values = malloc(count * sizeof(double));
    if (!ax->values)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", where);
    char *tok = spec;
    for (size_t i = 0; i < count; i++) {
        char *c = strchr(tok, ',');
        if (c)
            *c = '\0';
        sebt_status st = parse_value(where, idx, trim(tok), &ax->values[i], err);
        if (st != SEBT_OK)
            return st;
        tok = c ? c + 1 : tok;
    }
    ax->n = count;
    return SEBT_OK;
}


/* Parses a grid's axes (their values) and counts its combos, refusing a
 * product above lim; the combos themselves are not made. */
static sebt_status grid_axes(const char *name, const char *text, size_t len, const combo_limit *lim_in,
                             axis *axes, size_t *n_axes_out, size_t *total_out, sebt_error *err)
{
    *n_axes_out = 0;
    text_lines lines;
    sebt_status sl = split_lines(name, text, len, &lines, err);
    if (sl != SEBT_OK)
        return sl;
    size_t n_axes = 0;
    sebt_status st = SEBT_OK;
    char where[600];
    combo_limit lim = *lim_in;
    size_t total = 1;
    for (size_t l = 0; l < lines.n && st == SEBT_OK; l++) {
        char *line = lines.at[l];
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        line = trim(line);
        if (!*line)
            continue;
        snprintf(where, sizeof where, "%s:%zu", name, l + 1);
        char *eq = strchr(line, '=');
        if (!eq) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s: expected 'name = values', got '%s'", where, line);
            break;
        }
        *eq = '\0';
        char *pname = trim(line), *spec = trim(eq + 1);
        int idx = sebt_param_index(pname);
        if (idx < 0) {
            sebt_params p = sebt_params_default();
            sebt_error e = { 0 };
            sebt_params_set(&p, pname, "0", &e);    /* for its list of valid names */
            st = sebt_fail(err, SEBT_ERR_PARAM, "%s: %s", where, e.msg);
            break;
        }
        for (size_t a = 0; a < n_axes; a++)
            if (axes[a].idx == idx) {
                st = sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s given again (first on line %zu)", where,
                               pname, axes[a].line);
                break;
            }
        if (st != SEBT_OK)
            break;
        if (!*spec) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s: parameter %s has no values", where, pname);
            break;
        }
        axis *ax = &axes[n_axes++];
        memset(ax, 0, sizeof *ax);
        ax->idx = idx;
        ax->line = l + 1;
        if (strchr(spec, ':'))
            st = parse_range(where, idx, spec, ax, &lim, err);
        else
            st = parse_list(where, idx, spec, ax, err);
        /* The product so far, checked line by line: a grid is refused at
         * the line that passes the limit, before later lines are expanded. */
        if (st == SEBT_OK && total > lim.max / ax->n) {
            char what[200];
            snprintf(what, sizeof what, "with the %zu values of %s the grid has %.0f combos", ax->n,
                     sebt_param_table[idx].name, (double)total * (double)ax->n);
            st = too_many(err, &lim, where, what);
        }
        if (st == SEBT_OK)
            total *= ax->n;
    }
    if (st == SEBT_OK && n_axes == 0)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: the grid sets no parameter (no 'name = values' line), so it would "
                       "run only the default combo; write e.g. 'ema_fast = 12' to mean that", name);
    *n_axes_out = n_axes;
    *total_out = total;
    text_lines_free(&lines);
    return st;
}

static void free_axes(axis *axes, size_t n_axes)
{
    for (size_t a = 0; a < n_axes; a++)
        free(axes[a].values);
}

/* Combo i of a grid: mixed radix, the last axis fastest. */
static void grid_combo(const axis *axes, size_t n_axes, size_t i, sebt_params *out)
{
    sebt_params p = sebt_params_default();
    size_t rest = i;
    for (size_t a = n_axes; a-- > 0;) {
        set_field(&p, axes[a].idx, axes[a].values[rest % axes[a].n]);
        rest /= axes[a].n;
    }
    *out = p;
}

sebt_status sebt_grid_parse(const char *name, const char *text, size_t len, sebt_params **out,
                            size_t *n_out, sebt_error *err)
{
    *out = NULL;
    *n_out = 0;
    axis axes[SEBT_N_PARAMS];
    size_t n_axes = 0, total = 0;
    combo_limit lim = { 0 };
    sebt_status st = get_limit(&lim, err);
    if (st == SEBT_OK)
        st = grid_axes(name, text, len, &lim, axes, &n_axes, &total, err);
    if (st == SEBT_OK) {
        sebt_params *combos = malloc(total * sizeof *combos);
        if (!combos) {
            st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory for %zu combos", name, total);
        } else {
            for (size_t i = 0; i < total; i++)
                grid_combo(axes, n_axes, i, &combos[i]);
            *out = combos;
            *n_out = total;
        }
    }
    free_axes(axes, n_axes);
    return st;
}

struct sebt_grid {
    axis axes[SEBT_N_PARAMS];
    size_t n_axes, total;
};

sebt_status sebt_grid_open(const char *path, sebt_grid **out, size_t *n_out, sebt_error *err)
{
    *out = NULL;
    *n_out = 0;
    char *text;
    size_t len;
    sebt_status st = sebt_read_file(path, &text, &len, err);
    if (st != SEBT_OK)
        return st;
    sebt_grid *g = calloc(1, sizeof *g);
    if (!g) {
        free(text);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
    }
    combo_limit lim = { .max = SEBT_GRID_MAX_STREAMED, .set = 0, .streamed = 1 };
    st = grid_axes(path, text, len, &lim, g->axes, &g->n_axes, &g->total, err);
    free(text);
    if (st != SEBT_OK) {
        sebt_grid_close(g);
        return st;
    }
    *out = g;
    *n_out = g->total;
    return SEBT_OK;
}

/* Combos first .. first+n-1: combo first by grid_combo, then each next
 * one by counting its digits up (the last axis fastest), which spares a
 * division an axis a combo. */
void sebt_grid_combos(const sebt_grid *g, size_t first, size_t n, sebt_params *out)
{
    if (n == 0)
        return;
    size_t digit[SEBT_N_PARAMS];
    size_t rest = first;
    for (size_t a = g->n_axes; a-- > 0;) {
        digit[a] = rest % g->axes[a].n;
        rest /= g->axes[a].n;
    }
    grid_combo(g->axes, g->n_axes, first, &out[0]);
    for (size_t k = 1; k < n; k++) {
        out[k] = out[k - 1];
        for (size_t a = g->n_axes; a-- > 0;) {
            const axis *ax = &g->axes[a];
            digit[a] = digit[a] + 1 == ax->n ? 0 : digit[a] + 1;
            set_field(&out[k], ax->idx, ax->values[digit[a]]);
            if (digit[a] != 0)
                break;
        }
    }
}

void sebt_grid_close(sebt_grid *g)
{
    if (!g)
        return;
    free_axes(g->axes, g->n_axes);
    free(g);
}

typedef sebt_status (*combo_text_parser)(const char *, const char *, size_t, sebt_params **, size_t *,
                                         sebt_error *);

static sebt_status load_parsed(const char *path, combo_text_parser parse, sebt_params **out, size_t *n_out,
                               sebt_error *err)
{
    char *text;
    size_t len;
    sebt_status st = sebt_read_file(path, &text, &len, err);
    if (st != SEBT_OK)
        return st;
    st = parse(path, text, len, out, n_out, err);
    free(text);
    return st;
}

sebt_status sebt_grid_load(const char *path, sebt_params **out, size_t *n_out, sebt_error *err)
{
    return load_parsed(path, sebt_grid_parse, out, n_out, err);
}

/* ---- combos CSV ----------------------------------------------------------- */

/* Splits line at commas in place; returns the field count (<= cap + 1). */
static size_t split_fields(char *line, char **fields, size_t cap)
{
    size_t n = 0;
    char *tok = line;
    for (;;) {
        char *c = strchr(tok, ',');
        if (c)
            *c = '\0';
        if (n < cap)
            fields[n] = trim(tok);
        n++;
        if (!c)
            break;
        tok = c + 1;
    }
    return n;
}

sebt_status sebt_combos_parse(const char *name, const char *text, size_t len, sebt_params **out,
                              size_t *n_out, sebt_error *err)
{
    *out = NULL;
    *n_out = 0;
    text_lines lines;
    sebt_status sl = split_lines(name, text, len, &lines, err);
    if (sl != SEBT_OK)
        return sl;
    /* Grown as rows come: sized by lines, a file of newlines would ask for
     * 88 bytes a byte. */
    size_t cap = 64;
    sebt_params *combos = malloc(cap * sizeof *combos);
    if (!combos) {
        text_lines_free(&lines);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    }
    sebt_status st = SEBT_OK;
    int cols[SEBT_N_PARAMS];
    size_t n_cols = 0, n = 0;
    int have_header = 0;
    char where[600];
    combo_limit lim = { 0 };
    st = get_limit(&lim, err);
    for (size_t l = 0; l < lines.n && st == SEBT_OK; l++) {
        char *line = trim(lines.at[l]);
        if (!*line || *line == '#')
            continue;
        snprintf(where, sizeof where, "%s:%zu", name, l + 1);
        char *fields[SEBT_N_PARAMS];
        size_t nf = split_fields(line, fields, SEBT_N_PARAMS);
        if (!have_header) {
            if (nf > SEBT_N_PARAMS) {
                st = sebt_fail(err, SEBT_ERR_INPUT, "%s: header has %zu columns; there are only %d parameters",
                               where, nf, SEBT_N_PARAMS);
                break;
            }
            for (size_t c = 0; c < nf && st == SEBT_OK; c++) {
                int idx = sebt_param_index(fields[c]);
                if (idx < 0) {
                    sebt_params p = sebt_params_default();
                    sebt_error e = { 0 };
                    sebt_params_set(&p, fields[c], "0", &e);
                    st = sebt_fail(err, SEBT_ERR_PARAM, "%s: column %zu of the header: %s", where, c + 1, e.msg);
                }
                for (size_t k = 0; k < c && st == SEBT_OK; k++)
                    if (cols[k] == idx)
                        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: column %zu repeats parameter %s (column %zu)",
                                       where, c + 1, fields[c], k + 1);
                cols[c] = idx;
            }
            n_cols = nf;
            have_header = 1;
            continue;
        }
        if (nf != n_cols) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s: %zu fields, the header has %zu", where, nf, n_cols);
            break;
        }
        if (n == lim.max) {
            st = too_many(err, &lim, where, "the file has another combo");
            break;
        }
        sebt_params p = sebt_params_default();
        for (size_t c = 0; c < nf && st == SEBT_OK; c++) {
            double v;
            char w2[700];
            snprintf(w2, sizeof w2, "%s: column %zu", where, c + 1);
            st = parse_value(w2, cols[c], fields[c], &v, err);
            if (st == SEBT_OK)
                set_field(&p, cols[c], v);
        }
        if (st != SEBT_OK)
            break;      /* a row with a bad value is never stored, not even past the end */
        if (n == cap) {
            sebt_params *bigger = realloc(combos, 2 * cap * sizeof *combos);
            if (!bigger) {
                st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory for %zu combos", name, 2 * cap);
                break;
            }
            combos = bigger;
            cap *= 2;
        }
        combos[n++] = p;
    }
    if (st == SEBT_OK && !have_header)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: empty: expected a header of parameter names", name);
    else if (st == SEBT_OK && n == 0)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: a header but no combos", name);
    text_lines_free(&lines);
    if (st != SEBT_OK) {
        free(combos);
        return st;
    }
    *out = combos;
    *n_out = n;
    return SEBT_OK;
}

sebt_status sebt_combos_load(const char *path, sebt_params **out, size_t *n_out, sebt_error *err)
{
    return load_parsed(path, sebt_combos_parse, out, n_out, err);
}
