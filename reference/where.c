/* A `--where` condition decided literally (the language of docs/cli.md,
 * "sebt sweep"): its text read and evaluated in one go over one row's
 * named values, without compiling it. The sweep decides which rows a
 * condition keeps with core/where.c (a compiler into a postfix program and
 * a stack machine); the sweep's proof re-decides the sampled rows here, on
 * the reference's values, so a slip in the sweep's decision (a `>=` read
 * as `>`) shows as a disagreement instead of agreeing with itself.
 *
 * The grammar, as the docs give it:
 *   condition  := conjunction { "or" conjunction }
 *   conjunction:= negation { "and" negation }
 *   negation   := "not" negation | comparison
 *   comparison := operand [ ("<" | "<=" | ">" | ">=" | "==" | "!=") operand ]
 *   operand    := number | "-" number | "true" | "false" | name | "(" condition ")"
 * A comparison is 1 or 0 and false whenever a side is NaN, `!=` included;
 * `and`, `or` and `not` read a value as true when it is not 0 (true is 1,
 * false 0); a boolean column standing alone is itself. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* Deeper than this is no one's condition (the sweep refuses it too). */
#define REF_WHERE_DEPTH 64

typedef struct {
    const char *at;                 /* the text not read yet */
    const sebt_ref_row *row;
    int depth;
    bool bad;
    char *why;
    size_t why_size;
} reading;

static double refuse(reading *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static double refuse(reading *r, const char *fmt, ...)
{
    if (!r->bad && r->why && r->why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->why, r->why_size, fmt, ap);
        va_end(ap);
    }
    r->bad = true;
    return 0.0;
}

static void skip_blanks(reading *r)
{
    while (*r->at == ' ' || *r->at == '\t')
        r->at++;
}

static bool is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The word at the cursor (letters, digits, '_', not starting with a digit): its length, 0 if none. */
static size_t word_length(const reading *r)
{
    if (!isalpha((unsigned char)*r->at) && *r->at != '_')
        return 0;
    size_t n = 0;
    while (is_word_char(r->at[n]))
        n++;
    return n;
}

/* Whether `word` is the next whole word. */
static bool next_word_is(reading *r, const char *word)
{
    skip_blanks(r);
    size_t n = strlen(word);
    return word_length(r) == n && strncmp(r->at, word, n) == 0;
}

/* Takes `word` when it is the next whole word. */
static bool take_word(reading *r, const char *word)
{
    if (!next_word_is(r, word))
        return false;
    r->at += strlen(word);
    return true;
}

/* The comparison at the cursor, taken: its symbol, or NULL when there is none. */
static const char *take_comparison(reading *r)
{
    static const char *const symbols[] = { "<=", ">=", "==", "!=", "<", ">" };
    skip_blanks(r);
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        size_t n = strlen(symbols[i]);
        if (strncmp(r->at, symbols[i], n) == 0) {
            r->at += n;
            return symbols[i];
        }
    }
    return NULL;
}

static bool holds(const char *symbol, double a, double b)
{
    if (isnan(a) || isnan(b))
        return false;
    if (strcmp(symbol, "<") == 0)
        return a < b;
    if (strcmp(symbol, "<=") == 0)
        return a <= b;
    if (strcmp(symbol, ">") == 0)
        return a > b;
    if (strcmp(symbol, ">=") == 0)
        return a >= b;
    if (strcmp(symbol, "==") == 0)
        return a == b;
    return a != b;
}

/* digits [. digits] [e [+-] digits], or . digits [...]: its value. */
static double number(reading *r)
{
    const char *s = r->at, *t = s;
    size_t digits = 0;
    for (; isdigit((unsigned char)*t); t++)
        digits++;
    if (*t == '.')
        for (t++; isdigit((unsigned char)*t); t++)
            digits++;
    if (digits == 0)
        return refuse(r, "a number without digits at '%.16s'", s);
    if (*t == 'e' || *t == 'E') {
        const char *e = t + 1;
        if (*e == '+' || *e == '-')
            e++;
        if (!isdigit((unsigned char)*e))
            return refuse(r, "an exponent without digits at '%.16s'", s);
        for (t = e; isdigit((unsigned char)*t); t++) {
        }
    }
    if (is_word_char(*t) || *t == '.')
        return refuse(r, "not a number at '%.16s'", s);
    char buf[80];
    size_t len = (size_t)(t - s);
    if (len >= sizeof buf)
        return refuse(r, "a number of %zu characters", len);
    memcpy(buf, s, len);
    buf[len] = '\0';
    r->at = t;
    return strtod(buf, NULL);
}

/* The row's value of the column named by the word at the cursor. */
static double column(reading *r)
{
    size_t n = word_length(r);
    for (size_t i = 0; i < r->row->n; i++)
        if (strlen(r->row->names[i]) == n && strncmp(r->row->names[i], r->at, n) == 0) {
            r->at += n;
            return r->row->values[i];
        }
    return refuse(r, "no column named '%.*s' in the row", (int)n, r->at);
}

static double condition(reading *r);

static double operand(reading *r)
{
    skip_blanks(r);
    if (*r->at == '(') {
        r->at++;
        if (++r->depth > REF_WHERE_DEPTH)
            return refuse(r, "parentheses nested deeper than %d", REF_WHERE_DEPTH);
        double v = condition(r);
        r->depth--;
        skip_blanks(r);
        if (*r->at != ')')
            return refuse(r, "a '(' never closed");
        r->at++;
        return v;
    }
    if (*r->at == '-') {
        r->at++;
        skip_blanks(r);
        return -number(r);
    }
    if (isdigit((unsigned char)*r->at) || *r->at == '.')
        return number(r);
    if (take_word(r, "true"))
        return 1.0;
    if (take_word(r, "false"))
        return 0.0;
    if (word_length(r) && !next_word_is(r, "and") && !next_word_is(r, "or") && !next_word_is(r, "not"))
        return column(r);
    return refuse(r, "a name, number or '(' expected at '%.16s'", r->at);
}

static double comparison(reading *r)
{
    double a = operand(r);
    const char *symbol = take_comparison(r);
    if (!symbol)
        return a;
    double b = operand(r);
    return holds(symbol, a, b) ? 1.0 : 0.0;
}

static double negation(reading *r)
{
    if (!take_word(r, "not"))
        return comparison(r);
    if (++r->depth > REF_WHERE_DEPTH)
        return refuse(r, "'not' nested deeper than %d", REF_WHERE_DEPTH);
    double v = negation(r);
    r->depth--;
    return v != 0.0 ? 0.0 : 1.0;
}

static double conjunction(reading *r)
{
    double v = negation(r);
    while (!r->bad && take_word(r, "and")) {
        double w = negation(r);
        v = v != 0.0 && w != 0.0 ? 1.0 : 0.0;
    }
    return v;
}

static double condition(reading *r)
{
    double v = conjunction(r);
    while (!r->bad && take_word(r, "or")) {
        double w = conjunction(r);
        v = v != 0.0 || w != 0.0 ? 1.0 : 0.0;
    }
    return v;
}

int sebt_ref_where(const char *text, const sebt_ref_row *row, char *why, size_t why_size)
{
    reading r = { .at = text, .row = row, .why = why, .why_size = why_size };
    double v = condition(&r);
    skip_blanks(&r);
    if (!r.bad && *r.at != '\0')
        refuse(&r, "more text after the condition at '%.16s'", r.at);
    if (r.bad)
        return -1;
    return v != 0.0;
}
