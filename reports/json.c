/* JSON through jansson (Debian's libjansson), turned into the small tree of
 * json.h that the report reads. jansson does the parsing (UTF-8, escapes,
 * surrogates, numbers, depth limits); this file adds the one thing it
 * refuses and Google Benchmark writes: bare NaN, Infinity and -Infinity as
 * numbers (its JSON reporter prints a counter that is not finite that way).
 * Those tokens, outside strings, are rewritten as marker strings before
 * jansson sees the text and turned back into numbers after; error positions
 * are mapped back to the original text, so messages name the line and
 * column of the file as written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sebt/sebt.h"

#ifdef SEBT_HAVE_JANSSON
#include <jansson.h>

/* A marker string: a control character no benchmark name or label has. */
#define MARK "\\u0001"
static const struct {
    const char *token, *marker;
    double value;
} specials[] = {
    { "-Infinity", "\"" MARK "-Infinity\"", -INFINITY },
    { "Infinity", "\"" MARK "Infinity\"", INFINITY },
    { "NaN", "\"" MARK "NaN\"", NAN },
};
#define N_SPECIALS (sizeof specials / sizeof specials[0])

/* Where a rewrite grew the text: at original offset pos, by grow bytes. */
typedef struct {
    size_t pos, grow;
} shift;

typedef struct {
    char *text;
    size_t len;
    shift *shifts;
    size_t n_shifts;
} rewritten;

static sebt_status rewrite_specials(const char *name, const char *in, size_t len, rewritten *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (in_string) {
            if (in[i] == '\\')
                i++;
            else if (in[i] == '"')
                in_string = false;
        } else if (in[i] == '"') {
            in_string = true;
        } else if (in[i] == 'N' || in[i] == 'I' || in[i] == '-') {
            n++;
        }
    }
    /* At most 12 bytes more per candidate (the longest marker's growth). */
    out->text = malloc(len + 12 * n + 1);
    out->shifts = malloc((n + 1) * sizeof *out->shifts);
    if (!out->text || !out->shifts) {
        free(out->text);
        free(out->shifts);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    }
    in_string = false;
    for (size_t i = 0; i < len;) {
        char c = in[i];
        if (in_string) {
            out->text[out->len++] = c;
            if (c == '\\' && i + 1 < len)
                out->text[out->len++] = in[++i];
            else if (c == '"')
                in_string = false;
            i++;
            continue;
        }
        if (c == '"')
            in_string = true;
        size_t k = 0;
        for (; k < N_SPECIALS; k++) {
            size_t tl = strlen(specials[k].token);
            if (len - i >= tl && memcmp(in + i, specials[k].token, tl) == 0)
                break;
        }
        if (k < N_SPECIALS) {
            size_t tl = strlen(specials[k].token), ml = strlen(specials[k].marker);
            memcpy(out->text + out->len, specials[k].marker, ml);
            out->len += ml;
            out->shifts[out->n_shifts++] = (shift){ i, ml - tl };
            i += tl;
            continue;
        }
        out->text[out->len++] = c;
        i++;
    }
    out->text[out->len] = '\0';
    return SEBT_OK;
}

/* jansson's byte position in the rewritten text, as an offset into the original. */
static size_t original_offset(const rewritten *rw, size_t pos)
{
    size_t grown = 0;
    for (size_t k = 0; k < rw->n_shifts; k++) {
        size_t at = rw->shifts[k].pos + grown; /* where the marker starts in the rewritten text */
        if (pos <= at)
            break;
        if (pos < at + rw->shifts[k].grow + 1) /* inside the marker: its token's start */
            return rw->shifts[k].pos;
        grown += rw->shifts[k].grow;
    }
    return pos - grown;
}

static double special_value(const char *s, bool *is)
{
    *is = false;
    if (s[0] != '\x01')
        return 0;
    for (size_t k = 0; k < N_SPECIALS; k++) {
        if (strcmp(s + 1, specials[k].token) == 0) {
            *is = true;
            return specials[k].value;
        }
    }
    return 0;
}

static bool convert(const json_t *j, sebt_json *v)
{
    memset(v, 0, sizeof *v);
    switch (json_typeof(j)) {
    case JSON_NULL: v->type = SEBT_JSON_NULL; return true;
    case JSON_TRUE: v->type = SEBT_JSON_BOOL; v->boolean = true; return true;
    case JSON_FALSE: v->type = SEBT_JSON_BOOL; v->boolean = false; return true;
    case JSON_INTEGER: v->type = SEBT_JSON_NUMBER; v->number = (double)json_integer_value(j); return true;
    case JSON_REAL: v->type = SEBT_JSON_NUMBER; v->number = json_real_value(j); return true;
    case JSON_STRING: {
        bool special;
        double x = special_value(json_string_value(j), &special);
        if (special) {
            v->type = SEBT_JSON_NUMBER;
            v->number = x;
            return true;
        }
        v->type = SEBT_JSON_STRING;
        v->string = strdup(json_string_value(j));
        return v->string != NULL;
    }
    case JSON_ARRAY: {
        v->type = SEBT_JSON_ARRAY;
        size_t n = json_array_size(j);
        if (n && !(v->items = calloc(n, sizeof *v->items)))
            return false;
        for (size_t i = 0; i < n; i++, v->n++)
            if (!convert(json_array_get(j, i), &v->items[i]))
                return false;
        return true;
    }
    case JSON_OBJECT: {
        v->type = SEBT_JSON_OBJECT;
        size_t n = json_object_size(j);
        if (n && (!(v->items = calloc(n, sizeof *v->items)) || !(v->keys = calloc(n, sizeof *v->keys))))
            return false;
        const char *key;
        json_t *val;
        /* Members in the order written (jansson keeps insertion order). */
        json_object_foreach((json_t *)j, key, val) {
            if (!(v->keys[v->n] = strdup(key)) || !convert(val, &v->items[v->n])) {
                v->n++;
                return false;
            }
            v->n++;
        }
        return true;
    }
    }
    return false;
}

static void free_inner(sebt_json *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void sebt_json_free(sebt_json *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

sebt_status sebt_json_parse(const char *name, const char *text, size_t len, sebt_json **out, sebt_error *err)
{
    *out = NULL;
    rewritten rw;
    sebt_status st = rewrite_specials(name, text, len, &rw, err);
    if (st != SEBT_OK)
        return st;
    json_error_t jerr;
    /* Any value at the top; every number a double, as the report reads them;
     * a \u0000 inside a string is refused (jansson's default). */
    json_t *root = json_loadb(rw.text, rw.len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &jerr);
    if (!root) {
        /* jansson's position is just past what it read; its text names the
         * token ("near 'x'"), so the column is the token's first byte. */
        size_t pos = jerr.position > 0 ? (size_t)jerr.position : 0;
        const char *near = strstr(jerr.text, " near '");
        size_t tl = near ? strlen(near + 7) : 0;
        if (tl > 0 && near[7 + tl - 1] == '\'' && tl - 1 <= pos)
            pos -= tl - 1;
        const char *nul = strstr(jerr.text, "without JSON_ALLOW_NUL");
        if (nul) /* say it without jansson's flag name */
            snprintf(jerr.text, sizeof jerr.text, "\\u0000 is not allowed in a string");
        size_t at = original_offset(&rw, pos), line = 1, col = 1;
        for (size_t i = 0; i < at && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        free(rw.text);
        free(rw.shifts);
        return sebt_fail(err, SEBT_ERR_INPUT, "%s:%zu:%zu: %s", name, line, col, jerr.text);
    }
    free(rw.text);
    free(rw.shifts);
    sebt_json *v = calloc(1, sizeof *v);
    if (!v || !convert(root, v)) {
        json_decref(root);
        sebt_json_free(v);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    }
    json_decref(root);
    *out = v;
    return SEBT_OK;
}

#else /* built without jansson: the report says what it needs */

void sebt_json_free(sebt_json *v)
{
    free(v);
}

sebt_status sebt_json_parse(const char *name, const char *text, size_t len, sebt_json **out, sebt_error *err)
{
    (void)text;
    (void)len;
    *out = NULL;
    return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s: sebt was built without jansson, which `sebt report` needs "
                     "to read benchmark JSON: apt-get install libjansson-dev and rebuild", name);
}

#endif

const sebt_json *sebt_json_get(const sebt_json *obj, const char *key)
{
    if (!obj || obj->type != SEBT_JSON_OBJECT)
        return NULL;
    for (size_t i = obj->n; i-- > 0;)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const char *sebt_json_get_string(const sebt_json *obj, const char *key, const char *fallback)
{
    const sebt_json *v = sebt_json_get(obj, key);
    return v && v->type == SEBT_JSON_STRING ? v->string : fallback;
}

double sebt_json_get_number(const sebt_json *obj, const char *key, double fallback)
{
    const sebt_json *v = sebt_json_get(obj, key);
    return v && v->type == SEBT_JSON_NUMBER ? v->number : fallback;
}
