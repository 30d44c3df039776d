/* Constraints over a sweep's columns (sebt/where.h): a recursive-descent
 * compiler into a postfix program, and a stack machine that runs it per
 * row. Types are checked when compiling, so evaluating cannot fail. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/where.h"
#include "test_faults.h"

/* Parentheses and `not` nest; deeper than this is no one's condition, and
 * the limit keeps the recursion's stack small. */
#define WHERE_MAX_DEPTH 64

typedef enum { OP_COL, OP_NUM, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR, OP_NOT } op_kind;

typedef struct {
    op_kind kind;
    size_t col;
    double num;
} op;

struct sebt_where {
    size_t n_ops;
    op ops[SEBT_WHERE_MAX_OPS];
    size_t n_columns;
    bool *uses;
    char *text;
};

typedef enum { T_NUM, T_BOOL } value_type;

typedef enum { TK_END, TK_NAME, TK_NUM, TK_CMP, TK_LPAREN, TK_RPAREN, TK_MINUS, TK_AND, TK_OR, TK_NOT, TK_TRUE, TK_FALSE } token_kind;

typedef struct {
    token_kind kind;
    size_t at;   /* offset into the text */
    size_t len;
    op_kind cmp; /* TK_CMP */
    double num;  /* TK_NUM */
} token;

typedef struct {
    const char *text;
    size_t pos;
    token tok;
    const char *const *names;
    const bool *is_bool;
    size_t n_columns;
    sebt_where *w;
    sebt_error *err;
    int depth;
} parser;

static sebt_status fail_at(parser *p, size_t at, const char *what)
{
    if (p->text[at] == '\0')
        return sebt_fail(p->err, SEBT_ERR_USAGE, "at character %zu (the end): %s", at + 1, what);
    return sebt_fail(p->err, SEBT_ERR_USAGE, "at character %zu (near '%.16s'): %s", at + 1, p->text + at, what);
}

static bool word_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

static sebt_status lex_number(parser *p, size_t start)
{
    const char *t = p->text;
    size_t i = start;
    while (isdigit((unsigned char)t[i]))
        i++;
    if (t[i] == '.')
        for (i++; isdigit((unsigned char)t[i]); i++) {
        }
    if (i == start + (t[start] == '.') && !isdigit((unsigned char)t[start]))
        return fail_at(p, start, "a number has digits");
    if (t[i] == 'e' || t[i] == 'E') {
        size_t e = i + 1;
        if (t[e] == '+' || t[e] == '-')
            e++;
        if (!isdigit((unsigned char)t[e]))
            return fail_at(p, start, "an exponent has digits (1e-3)");
        for (i = e; isdigit((unsigned char)t[i]); i++) {
        }
    }
    if (isalpha((unsigned char)t[i]) || t[i] == '_' || t[i] == '.')
        return fail_at(p, start, "not a number");
    char buf[64];
    if (i - start >= sizeof buf)
        return fail_at(p, start, "a number of more than 63 characters");
    memcpy(buf, t + start, i - start);
    buf[i - start] = '\0';
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return fail_at(p, start, "a number too large for a double");
    p->tok = (token){ .kind = TK_NUM, .at = start, .len = i - start, .num = v };
    p->pos = i;
    return SEBT_OK;
}

static sebt_status lex_word(parser *p, size_t start)
{
    const char *t = p->text;
    size_t i = start;
    while (isalnum((unsigned char)t[i]) || t[i] == '_')
        i++;
    size_t len = i - start;
    token_kind k = TK_NAME;
    if (word_is(t + start, len, "and"))
        k = TK_AND;
    else if (word_is(t + start, len, "or"))
        k = TK_OR;
    else if (word_is(t + start, len, "not"))
        k = TK_NOT;
    else if (word_is(t + start, len, "true"))
        k = TK_TRUE;
    else if (word_is(t + start, len, "false"))
        k = TK_FALSE;
    p->tok = (token){ .kind = k, .at = start, .len = len };
    p->pos = i;
    return SEBT_OK;
}

/* The comparison starting at t, or 0 characters when there is none. */
static size_t lex_cmp(const char *t, op_kind *kind)
{
    static const struct {
        const char *s;
        op_kind k;
    } cmps[] = { { "<=", OP_LE }, { ">=", OP_GE }, { "==", OP_EQ }, { "!=", OP_NE }, { "<", OP_LT }, { ">", OP_GT } };
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++) {
        size_t n = strlen(cmps[i].s);
        if (strncmp(t, cmps[i].s, n) == 0) {
            *kind = cmps[i].k;
            return n;
        }
    }
    return 0;
}

static sebt_status next(parser *p)
{
    const char *t = p->text;
    while (t[p->pos] == ' ' || t[p->pos] == '\t')
        p->pos++;
    size_t at = p->pos;
    char c = t[at];
    if (c == '\0') {
        p->tok = (token){ .kind = TK_END, .at = at };
        return SEBT_OK;
    }
    if (isdigit((unsigned char)c) || c == '.')
        return lex_number(p, at);
    if (isalpha((unsigned char)c) || c == '_')
        return lex_word(p, at);
    op_kind cmp;
    size_t n = lex_cmp(t + at, &cmp);
    if (n) {
        p->tok = (token){ .kind = TK_CMP, .at = at, .len = n, .cmp = cmp };
        p->pos += n;
        return SEBT_OK;
    }
    token_kind k;
    switch (c) {
    case '(': k = TK_LPAREN; break;
    case ')': k = TK_RPAREN; break;
    case '-': k = TK_MINUS; break;
    case '=': return fail_at(p, at, "'=' is not a comparison: write == to test equality");
    case '&': return fail_at(p, at, "write 'and', not '&' or '&&'");
    case '|': return fail_at(p, at, "write 'or', not '|' or '||'");
    case '!': return fail_at(p, at, "write 'not', or != for 'not equal'");
    default: return fail_at(p, at, "a character the language does not have (names, numbers, < <= > >= == !=, and, or, not, parentheses)");
    }
    p->tok = (token){ .kind = k, .at = at, .len = 1 };
    p->pos++;
    return SEBT_OK;
}

static sebt_status emit(parser *p, op o)
{
    if (p->w->n_ops == SEBT_WHERE_MAX_OPS)
        return fail_at(p, p->tok.at, "more terms than a condition may have");
    p->w->ops[p->w->n_ops++] = o;
    return SEBT_OK;
}

static sebt_status parse_or(parser *p, value_type *type);

/* The text tables (`sebt sweep --format text`, split, walkforward) head
 * some columns with words a reader sees ("trades", "win rate", "max dd");
 * a condition names the file's columns, one name each, so a heading typed
 * as a name (or the first word of one) is answered with the column it
 * heads. Sets near to that column when it is among the names. */
static const char *table_heading_at(const parser *p, const char *name, int *near)
{
    static const struct {
        const char *word, *heading, *column;
    } headings[] = {
        { "trades", "trades", "n" },      { "win", "win rate", "win_rate" }, { "avg", "avg R", "avg_r" },
        { "total", "total pnl", "total_pnl" }, { "max", "max dd", "max_dd" },
    };
    for (size_t h = 0; h < sizeof headings / sizeof headings[0]; h++) {
        if (strcmp(name, headings[h].word) != 0)
            continue;
        for (size_t i = 0; i < p->n_columns; i++)
            if (p->names[i] && strcmp(p->names[i], headings[h].column) == 0) {
                *near = (int)i;
                return headings[h].heading;
            }
    }
    return NULL;
}

static sebt_status parse_name(parser *p, value_type *type)
{
    const token *tk = &p->tok;
    char name[72];
    size_t len = tk->len < sizeof name - 1 ? tk->len : sizeof name - 1;
    memcpy(name, p->text + tk->at, len);
    name[len] = '\0';
    for (size_t i = 0; i < p->n_columns; i++)
        if (p->names[i] && word_is(p->text + tk->at, tk->len, p->names[i])) {
            *type = p->is_bool && p->is_bool[i] ? T_BOOL : T_NUM;
            p->w->uses[i] = true;
            sebt_status st = emit(p, (op){ .kind = OP_COL, .col = i });
            return st ? st : next(p);
        }
    int near = sebt_nearest_name(name, p->names, p->n_columns);
    const char *heading = table_heading_at(p, name, &near);
    char what[240];
    if (heading)
        snprintf(what, sizeof what, "no column named '%s': the text table's '%s' is the column '%s' (a condition "
                 "names the columns of the CSV and npy)", name, heading, p->names[near]);
    else if (near >= 0)
        snprintf(what, sizeof what, "no column named '%s'; did you mean '%s'?", name, p->names[near]);
    else
        snprintf(what, sizeof what, "no column named '%s' (the columns are the sweep's output columns)", name);
    return fail_at(p, tk->at, what);
}

static sebt_status parse_operand(parser *p, value_type *type)
{
    sebt_status st;
    switch (p->tok.kind) {
    case TK_NUM:
    case TK_MINUS: {
        bool neg = p->tok.kind == TK_MINUS;
        if (neg && ((st = next(p)) || p->tok.kind != TK_NUM))
            return st ? st : fail_at(p, p->tok.at, "a minus sign goes before a number");
        *type = T_NUM;
        if ((st = emit(p, (op){ .kind = OP_NUM, .num = neg ? -p->tok.num : p->tok.num })))
            return st;
        return next(p);
    }
    case TK_TRUE:
    case TK_FALSE:
        *type = T_BOOL;
        if ((st = emit(p, (op){ .kind = OP_NUM, .num = p->tok.kind == TK_TRUE })))
            return st;
        return next(p);
    case TK_NAME:
        return parse_name(p, type);
    case TK_LPAREN: {
        size_t open = p->tok.at;
        if (++p->depth > WHERE_MAX_DEPTH)
            return fail_at(p, open, "parentheses nested too deep");
        if ((st = next(p)) || (st = parse_or(p, type)))
            return st;
        p->depth--;
        if (p->tok.kind != TK_RPAREN)
            return fail_at(p, open, "this parenthesis is never closed");
        return next(p);
    }
    case TK_END:
        return fail_at(p, p->tok.at, "the condition ends where a name, number or '(' was expected");
    default:
        return fail_at(p, p->tok.at, "a name, number or '(' was expected here");
    }
}

static sebt_status parse_cmp(parser *p, value_type *type)
{
    value_type left;
    sebt_status st = parse_operand(p, &left);
    if (st)
        return st;
    if (p->tok.kind != TK_CMP) {
        *type = left;
        return SEBT_OK;
    }
    token cmp = p->tok;
    value_type right;
    if ((st = next(p)) || (st = parse_operand(p, &right)))
        return st;
    if (left != right)
        return fail_at(p, cmp.at, "compares a boolean with a number (booleans compare with true or false)");
    if (left == T_BOOL && cmp.cmp != OP_EQ && cmp.cmp != OP_NE)
        return fail_at(p, cmp.at, "booleans are compared with == or != only");
    if (p->tok.kind == TK_CMP)
        return fail_at(p, p->tok.at, "comparisons do not chain: write 'a < x and x < b'");
    *type = T_BOOL;
    return emit(p, (op){ .kind = cmp.cmp });
}

static sebt_status parse_not(parser *p, value_type *type)
{
    if (p->tok.kind != TK_NOT)
        return parse_cmp(p, type);
    size_t at = p->tok.at;
    if (++p->depth > WHERE_MAX_DEPTH)
        return fail_at(p, at, "'not' nested too deep");
    sebt_status st = next(p);
    if (st || (st = parse_not(p, type)))
        return st;
    p->depth--;
    if (*type != T_BOOL)
        return fail_at(p, at, "'not' needs a condition, not a number");
    return emit(p, (op){ .kind = OP_NOT });
}

/* One level of `and` or `or`: operands of `sub` joined by `word`. */
static sebt_status parse_chain(parser *p, value_type *type, token_kind word, op_kind kind,
                               sebt_status (*sub)(parser *, value_type *))
{
    size_t at = p->tok.at;
    sebt_status st = sub(p, type);
    while (!st && p->tok.kind == word) {
        if (*type != T_BOOL)
            return fail_at(p, at, "a number where a condition was expected: compare it (n >= 30)");
        at = p->tok.at;
        value_type right;
        if ((st = next(p)))
            return st;
        size_t right_at = p->tok.at;
        if ((st = sub(p, &right)))
            return st;
        if (right != T_BOOL)
            return fail_at(p, right_at, "a number where a condition was expected: compare it (n >= 30)");
        st = emit(p, (op){ .kind = kind });
    }
    return st;
}

static sebt_status parse_and(parser *p, value_type *type)
{
    return parse_chain(p, type, TK_AND, OP_AND, parse_not);
}

static sebt_status parse_or(parser *p, value_type *type)
{
    return parse_chain(p, type, TK_OR, OP_OR, parse_and);
}

static sebt_status compile(parser *p)
{
    value_type type;
    sebt_status st = next(p);
    if (st || (st = parse_or(p, &type)))
        return st;
    if (p->tok.kind == TK_RPAREN)
        return fail_at(p, p->tok.at, "a ')' that closes nothing");
    if (p->tok.kind != TK_END)
        return fail_at(p, p->tok.at, "more text after a whole condition (join conditions with and / or)");
    if (type != T_BOOL)
        return fail_at(p, 0, "a number, not a condition: compare it (n >= 30)");
    return SEBT_OK;
}

sebt_status sebt_where_compile(const char *text, const char *const *names, const bool *is_bool, size_t n_columns,
                               sebt_where **out, sebt_error *err)
{
    *out = NULL;
    if (!text || (!names && n_columns))
        return sebt_fail(err, SEBT_ERR_USAGE, "no condition");
    if (strlen(text) > SEBT_WHERE_MAX_TEXT)
        return sebt_fail(err, SEBT_ERR_USAGE, "a condition of more than %d characters", SEBT_WHERE_MAX_TEXT);
    sebt_where *w = calloc(1, sizeof *w);
    bool *uses = calloc(n_columns ? n_columns : 1, sizeof *uses);
    char *copy = strdup(text);
    if (!w || !uses || !copy) {
        free(w);
        free(uses);
        free(copy);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory compiling a condition");
    }
    w->uses = uses;
    w->text = copy;
    w->n_columns = n_columns;
    parser p = { .text = text, .names = names, .is_bool = is_bool, .n_columns = n_columns, .w = w, .err = err };
    sebt_status st = compile(&p);
    if (st) {
        sebt_where_free(w);
        return st;
    }
    *out = w;
    return SEBT_OK;
}

static double compare(op_kind k, double a, double b)
{
    if (isnan(a) || isnan(b))
        return 0.0;
    switch (k) {
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return SEBT_FAULT("where_ge_read_as_gt") ? a > b : a >= b;
    case OP_EQ: return a == b;
    default: return a != b;
    }
}

bool sebt_where_eval(const sebt_where *w, const double *values)
{
    double stack[SEBT_WHERE_MAX_OPS];
    size_t top = 0;
    for (size_t i = 0; i < w->n_ops; i++) {
        const op *o = &w->ops[i];
        switch (o->kind) {
        case OP_COL: stack[top++] = values[o->col]; break;
        case OP_NUM: stack[top++] = o->num; break;
        case OP_NOT: stack[top - 1] = stack[top - 1] == 0.0; break;
        case OP_AND: top--; stack[top - 1] = stack[top - 1] != 0.0 && stack[top] != 0.0; break;
        case OP_OR: top--; stack[top - 1] = stack[top - 1] != 0.0 || stack[top] != 0.0; break;
        default: top--; stack[top - 1] = compare(o->kind, stack[top - 1], stack[top]); break;
        }
    }
    return top == 1 && stack[0] != 0.0;
}

bool sebt_where_uses(const sebt_where *w, size_t column)
{
    return column < w->n_columns && w->uses[column];
}

const char *sebt_where_text(const sebt_where *w)
{
    return w->text;
}

void sebt_where_free(sebt_where *w)
{
    if (!w)
        return;
    free(w->uses);
    free(w->text);
    free(w);
}
