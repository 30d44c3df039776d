#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sebt/sebt.h"

/* Deeper nesting than this is not something Google Benchmark writes; the
 * limit keeps a hostile file from exhausting the stack. */
#define MAX_DEPTH 64

typedef struct {
    const char *name;
    const char *s;
    size_t len;
    size_t pos;
    sebt_error *err;
} parser;

static sebt_status fail_at(parser *p, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < p->pos && i < p->len; i++) {
        if (p->s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    if (p->pos >= p->len)
        return sebt_fail(p->err, SEBT_ERR_INPUT, "%s:%zu:%zu: %s, got the end of the input",
                         p->name, line, col, what);
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c >= 0x20 && c < 0x7f)
        return sebt_fail(p->err, SEBT_ERR_INPUT, "%s:%zu:%zu: %s, got '%c'", p->name, line, col,
                         what, c);
    return sebt_fail(p->err, SEBT_ERR_INPUT, "%s:%zu:%zu: %s, got byte 0x%02x", p->name, line, col,
                     what, c);
}

static void skip_space(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static bool take_word(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos >= n && memcmp(p->s + p->pos, word, n) == 0) {
        p->pos += n;
        return true;
    }
    return false;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_hex4(parser *p, unsigned *out)
{
    if (p->len - p->pos < 4)
        return false;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p->s[p->pos + (size_t)i]);
        if (d < 0)
            return false;
        v = v * 16 + (unsigned)d;
    }
    p->pos += 4;
    *out = v;
    return true;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* At the opening quote. The decoded string is never longer than the
 * escaped one, so one allocation of the raw length suffices. */
static sebt_status parse_string(parser *p, char **out)
{
    p->pos++;
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] != '"') {
        if (p->s[p->pos] == '\\')
            p->pos++;
        p->pos++;
    }
    if (p->pos >= p->len) {
        p->pos = start - 1;
        return fail_at(p, "unterminated string");
    }
    size_t end = p->pos;
    char *o = malloc(end - start + 1);
    if (!o)
        return sebt_fail(p->err, SEBT_ERR_NOMEM, "%s: out of memory", p->name);
    size_t k = 0;
    p->pos = start;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(o);
            return fail_at(p, "expected no control character inside a string");
        }
        if (c != '\\') {
            o[k++] = (char)c;
            p->pos++;
            continue;
        }
        p->pos++;
        char e = p->s[p->pos++];
        switch (e) {
        case '"': o[k++] = '"'; break;
        case '\\': o[k++] = '\\'; break;
        case '/': o[k++] = '/'; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (!read_hex4(p, &cp)) {
                free(o);
                return fail_at(p, "expected four hex digits after \\u");
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                unsigned lo;
                if (!(take_word(p, "\\u") && read_hex4(p, &lo) && lo >= 0xdc00 && lo <= 0xdfff)) {
                    free(o);
                    return fail_at(p, "expected a low surrogate \\uDC00..\\uDFFF");
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                free(o);
                return fail_at(p, "unpaired low surrogate");
            }
            if (cp == 0) {
                free(o);
                return fail_at(p, "\\u0000 is not accepted in a string");
            }
            k += put_utf8(o + k, cp);
            break;
        }
        default:
            p->pos -= 2;
            free(o);
            return fail_at(p, "unknown escape in a string");
        }
    }
    o[k] = '\0';
    p->pos = end + 1;
    *out = o;
    return SEBT_OK;
}

static sebt_status parse_number(parser *p, double *out)
{
    size_t start = p->pos;
    if (p->pos < p->len && p->s[p->pos] == '-')
        p->pos++;
    if (take_word(p, "NaN")) {
        *out = NAN;
        return SEBT_OK;
    }
    if (take_word(p, "Infinity")) {
        *out = p->s[start] == '-' ? -INFINITY : INFINITY;
        return SEBT_OK;
    }
    /* Strict JSON grammar first, then strtod on exactly that span. */
    size_t digits = p->pos;
    if (p->pos < p->len && p->s[p->pos] == '0')
        p->pos++; /* no leading zeros: "01" is not a JSON number */
    else
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    if (p->pos == digits)
        return fail_at(p, "expected a digit");
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        size_t frac = p->pos;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == frac)
            return fail_at(p, "expected a digit after '.'");
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        size_t exp = p->pos;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == exp)
            return fail_at(p, "expected a digit in the exponent");
    }
    char buf[64];
    size_t n = p->pos - start;
    if (n >= sizeof buf) {
        p->pos = start;
        return fail_at(p, "number too long");
    }
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    return SEBT_OK;
}

static sebt_status parse_value(parser *p, sebt_json *v, int depth);

static sebt_status grow(parser *p, sebt_json *v, size_t *cap, bool with_keys)
{
    if (v->n < *cap)
        return SEBT_OK;
    size_t ncap = *cap ? *cap * 2 : 8;
    sebt_json *items = realloc(v->items, ncap * sizeof *items);
    if (!items)
        return sebt_fail(p->err, SEBT_ERR_NOMEM, "%s: out of memory", p->name);
    v->items = items;
    if (with_keys) {
        char **keys = realloc(v->keys, ncap * sizeof *keys);
        if (!keys)
            return sebt_fail(p->err, SEBT_ERR_NOMEM, "%s: out of memory", p->name);
        v->keys = keys;
    }
    *cap = ncap;
    return SEBT_OK;
}

static sebt_status parse_array(parser *p, sebt_json *v, int depth)
{
    v->type = SEBT_JSON_ARRAY;
    size_t cap = 0;
    p->pos++;
    skip_space(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return SEBT_OK;
    }
    for (;;) {
        sebt_status st = grow(p, v, &cap, false);
        if (st != SEBT_OK)
            return st;
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        v->n++;
        st = parse_value(p, &v->items[v->n - 1], depth + 1);
        if (st != SEBT_OK)
            return st;
        skip_space(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return SEBT_OK;
        }
        return fail_at(p, "expected ',' or ']' in an array");
    }
}

static sebt_status parse_object(parser *p, sebt_json *v, int depth)
{
    v->type = SEBT_JSON_OBJECT;
    size_t cap = 0;
    p->pos++;
    skip_space(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return SEBT_OK;
    }
    for (;;) {
        skip_space(p);
        if (p->pos >= p->len || p->s[p->pos] != '"')
            return fail_at(p, "expected a member name in double quotes");
        sebt_status st = grow(p, v, &cap, true);
        if (st != SEBT_OK)
            return st;
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        v->keys[v->n] = NULL;
        v->n++;
        st = parse_string(p, &v->keys[v->n - 1]);
        if (st != SEBT_OK)
            return st;
        skip_space(p);
        if (p->pos >= p->len || p->s[p->pos] != ':')
            return fail_at(p, "expected ':' after a member name");
        p->pos++;
        st = parse_value(p, &v->items[v->n - 1], depth + 1);
        if (st != SEBT_OK)
            return st;
        skip_space(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return SEBT_OK;
        }
        return fail_at(p, "expected ',' or '}' in an object");
    }
}

static sebt_status parse_value(parser *p, sebt_json *v, int depth)
{
    if (depth > MAX_DEPTH)
        return fail_at(p, "nesting deeper than 64 levels");
    skip_space(p);
    if (p->pos >= p->len)
        return fail_at(p, "expected a value");
    char c = p->s[p->pos];
    if (c == '{')
        return parse_object(p, v, depth);
    if (c == '[')
        return parse_array(p, v, depth);
    if (c == '"') {
        v->type = SEBT_JSON_STRING;
        return parse_string(p, &v->string);
    }
    if (take_word(p, "true")) {
        v->type = SEBT_JSON_BOOL;
        v->boolean = true;
        return SEBT_OK;
    }
    if (take_word(p, "false")) {
        v->type = SEBT_JSON_BOOL;
        return SEBT_OK;
    }
    if (take_word(p, "null")) {
        v->type = SEBT_JSON_NULL;
        return SEBT_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I') {
        v->type = SEBT_JSON_NUMBER;
        return parse_number(p, &v->number);
    }
    return fail_at(p, "expected a value");
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

sebt_status sebt_json_parse(const char *name, const char *text, size_t len, sebt_json **out,
                            sebt_error *err)
{
    *out = NULL;
    parser p = { name, text, len, 0, err };
    sebt_json *v = calloc(1, sizeof *v);
    if (!v)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", name);
    sebt_status st = parse_value(&p, v, 0);
    if (st == SEBT_OK) {
        skip_space(&p);
        if (p.pos < p.len)
            st = fail_at(&p, "expected the end of the input after the value");
    }
    if (st != SEBT_OK) {
        sebt_json_free(v);
        return st;
    }
    *out = v;
    return SEBT_OK;
}

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
