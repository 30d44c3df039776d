/* libFuzzer harness: the report's JSON reader (reports/json.c: jansson,
 * plus the rewrite of Google Benchmark's bare NaN/Infinity tokens and the
 * mapping of error positions back to the text as written).
 * Invariants: a refusal is an input error whose message starts with the
 * name, a line within the text and a column; an accepted document, written
 * back out (NaN and infinities as bare tokens, strings escaped), parses
 * again to the same tree: the same types, keys, strings and number bits. */
#include "fuzz_common.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    char *s;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->s = realloc(b->s, b->cap);
        FUZZ_CHECK(b->s != NULL, "realloc");
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static void put_string(buf *b, const char *s)
{
    puts_(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            puts_(b, esc);
        } else {
            put(b, (const char *)&c, 1);
        }
    }
    puts_(b, "\"");
}

static void write_value(buf *b, const sebt_json *v)
{
    char num[64];
    switch (v->type) {
    case SEBT_JSON_NULL: puts_(b, "null"); break;
    case SEBT_JSON_BOOL: puts_(b, v->boolean ? "true" : "false"); break;
    case SEBT_JSON_NUMBER:
        if (isnan(v->number))
            puts_(b, "NaN");
        else if (isinf(v->number))
            puts_(b, v->number > 0 ? "Infinity" : "-Infinity");
        else {
            snprintf(num, sizeof num, "%.17g", v->number);
            puts_(b, num);
        }
        break;
    case SEBT_JSON_STRING: put_string(b, v->string); break;
    case SEBT_JSON_ARRAY:
        puts_(b, "[");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                puts_(b, ",");
            write_value(b, &v->items[i]);
        }
        puts_(b, "]");
        break;
    case SEBT_JSON_OBJECT:
        puts_(b, "{");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                puts_(b, ",");
            FUZZ_CHECK(v->keys && v->keys[i], "an object member without a name");
            put_string(b, v->keys[i]);
            puts_(b, ":");
            write_value(b, &v->items[i]);
        }
        puts_(b, "}");
        break;
    }
}

static void same_tree(const sebt_json *a, const sebt_json *b)
{
    FUZZ_CHECK(a->type == b->type, "type %d, then %d", (int)a->type, (int)b->type);
    switch (a->type) {
    case SEBT_JSON_NULL: break;
    case SEBT_JSON_BOOL: FUZZ_CHECK(a->boolean == b->boolean, "a boolean changed"); break;
    case SEBT_JSON_NUMBER:
        FUZZ_CHECK(fuzz_same_double(a->number, b->number), "%.17g read back as %.17g", a->number, b->number);
        break;
    case SEBT_JSON_STRING: FUZZ_CHECK(strcmp(a->string, b->string) == 0, "a string changed"); break;
    case SEBT_JSON_ARRAY:
    case SEBT_JSON_OBJECT:
        FUZZ_CHECK(a->n == b->n, "%zu members, then %zu", a->n, b->n);
        for (size_t i = 0; i < a->n; i++) {
            if (a->type == SEBT_JSON_OBJECT)
                FUZZ_CHECK(strcmp(a->keys[i], b->keys[i]) == 0, "key '%s', then '%s'", a->keys[i], b->keys[i]);
            same_tree(&a->items[i], &b->items[i]);
        }
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sebt_json *v = NULL;
    sebt_error e = { 0 };
    sebt_status st = sebt_json_parse("in.json", (const char *)data, size, &v, &e);
    if (st != SEBT_OK) {
        fuzz_check_error(st, &e);
        FUZZ_CHECK(st == SEBT_ERR_INPUT, "status %d: %s", (int)st, e.msg);
        FUZZ_CHECK(v == NULL, "a refused document left a tree");
        size_t line = 0, col = 0, lines = 1;
        FUZZ_CHECK(sscanf(e.msg, "in.json:%zu:%zu: ", &line, &col) == 2, "no line and column: %s", e.msg);
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n';
        FUZZ_CHECK(line >= 1 && line <= lines && col >= 1, "line %zu of %zu, column %zu: %s", line, lines, col,
                   e.msg);
        return 0;
    }
    buf out = { 0 };
    write_value(&out, v);
    sebt_json *w = NULL;
    st = sebt_json_parse("out.json", out.s, out.len, &w, &e);
    FUZZ_CHECK(st == SEBT_OK, "the document written back does not parse: %s\n  %s", e.msg, out.s);
    same_tree(v, w);
    sebt_json_free(w);
    sebt_json_free(v);
    free(out.s);
    return 0;
}
