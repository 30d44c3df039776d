/* Constraints over a sweep's columns (core/where.c): what passes and what
 * is refused, each expected value worked out by hand from the rows. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/where.h"

static const char *const cols[] = { "n", "sharpe", "max_dd", "use_stop", "vol_z" };
static const bool is_bool[] = { false, false, false, true, false };
#define N_COLS 5

static sebt_where *compile_ok(const char *text)
{
    sebt_where *w = NULL;
    sebt_error err = { 0 };
    sebt_status st = sebt_where_compile(text, cols, is_bool, N_COLS, &w, &err);
    cr_assert_eq(st, SEBT_OK, "'%s': %s", text, err.msg);
    return w;
}

static bool passes(const char *text, double n, double sharpe, double max_dd, double use_stop, double vol_z)
{
    sebt_where *w = compile_ok(text);
    const double row[N_COLS] = { n, sharpe, max_dd, use_stop, vol_z };
    bool ok = sebt_where_eval(w, row);
    sebt_where_free(w);
    return ok;
}

static void refused(const char *text, const char *needle, size_t at)
{
    sebt_where *w = (sebt_where *)1;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_where_compile(text, cols, is_bool, N_COLS, &w, &err), SEBT_ERR_USAGE, "'%s' compiled", text);
    cr_assert_null(w);
    cr_assert(strstr(err.msg, needle), "'%s': '%s' lacks '%s'", text, err.msg, needle);
    char pos[32];
    snprintf(pos, sizeof pos, "at character %zu ", at);
    cr_assert(strstr(err.msg, pos), "'%s': '%s' lacks '%s'", text, err.msg, pos);
}

/* Conditions over one row (n, sharpe, max_dd, use_stop, vol_z) and whether
 * the row passes, worked out by hand; why: what a case shows, when it says. */
static const struct {
    const char *text;
    double row[N_COLS];
    bool passes;
    const char *why;
} cases[] = {
    /* the analyst's question */
    { "n >= 30 and max_dd > -0.2", { 30, 1, -0.1, 1, 2 }, true, "" },
    { "n >= 30 and max_dd > -0.2", { 29, 1, -0.1, 1, 2 }, false, "" },
    { "n >= 30 and max_dd > -0.2", { 30, 1, -0.2, 1, 2 }, false, "max_dd > -0.2 is strict" },
    { "n >= 30 and max_dd > -0.2", { 31, 1, 0, 1, 2 }, true, "" },
    /* precedence is not then and then or */
    /* a or b and c == a or (b and c): n=0 fails a; b true, c false -> false */
    { "n > 5 or sharpe > 0 and vol_z > 3", { 0, 1, 0, 1, 2 }, false, "" },
    { "(n > 5 or sharpe > 0) and vol_z < 3", { 0, 1, 0, 1, 2 }, true, "" },
    { "n > 5 or sharpe > 0 and vol_z > 1", { 0, 1, 0, 1, 2 }, true, "" },
    { "not n > 5 and sharpe > 0", { 0, 1, 0, 1, 2 }, true, "not binds tighter than and" },
    { "not (n < 5 and sharpe > 0)", { 0, 1, 0, 1, 2 }, false, "" },
    { "not not n == 0", { 0, 1, 0, 1, 2 }, true, "" },
    /* every comparison */
    { "vol_z < 2.5", { 0, 0, 0, 0, 2 }, true, "" },
    { "vol_z < 2", { 0, 0, 0, 0, 2 }, false, "" },
    { "vol_z <= 2", { 0, 0, 0, 0, 2 }, true, "" },
    { "vol_z > 1.5", { 0, 0, 0, 0, 2 }, true, "" },
    { "vol_z >= 2", { 0, 0, 0, 0, 2 }, true, "" },
    { "vol_z == 2.0", { 0, 0, 0, 0, 2 }, true, "" },
    { "vol_z != 2.5", { 0, 0, 0, 0, 2 }, true, "" },
    { "2 <= vol_z", { 0, 0, 0, 0, 2 }, true, "a number may stand on the left" },
    { "vol_z == 2e0 and vol_z < .25e1 and vol_z > -1E+3", { 0, 0, 0, 0, 2 }, true, "" },
    { "vol_z==2", { 0, 0, 0, 0, 2 }, true, "spaces are optional" },
    /* booleans */
    { "use_stop", { 0, 0, 0, 1, 0 }, true, "" },
    { "use_stop", { 0, 0, 0, 0, 0 }, false, "" },
    { "use_stop == false", { 0, 0, 0, 0, 0 }, true, "" },
    { "not use_stop", { 0, 0, 0, 0, 0 }, true, "" },
    { "use_stop != false and true", { 0, 0, 0, 1, 0 }, true, "" },
    /* nan fails every comparison */
    { "sharpe > 0", { 0, NAN, 0, 0, 0 }, false, "" },
    { "sharpe <= 0", { 0, NAN, 0, 0, 0 }, false, "" },
    { "sharpe != 1", { 0, NAN, 0, 0, 0 }, false, "" },
    { "not sharpe > 0", { 0, NAN, 0, 0, 0 }, true, "" },
};

Test(where, each_condition_on_its_row)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double *r = cases[i].row;
        cr_assert_eq(passes(cases[i].text, r[0], r[1], r[2], r[3], r[4]), cases[i].passes, "case %zu, '%s': %s",
                     i, cases[i].text, cases[i].why);
    }
}

Test(where, only_named_columns_are_read)
{
    sebt_where *w = compile_ok("n >= 30 and (sharpe > 1 or use_stop)");
    cr_assert(sebt_where_uses(w, 0));
    cr_assert(sebt_where_uses(w, 1));
    cr_assert_not(sebt_where_uses(w, 2));
    cr_assert(sebt_where_uses(w, 3));
    cr_assert_not(sebt_where_uses(w, 4));
    cr_assert_not(sebt_where_uses(w, 99));
    cr_assert_str_eq(sebt_where_text(w), "n >= 30 and (sharpe > 1 or use_stop)");
    sebt_where_free(w);
}

Test(where, mistakes_are_named_where_they_are)
{
    refused("vol_zz > 2", "no column named 'vol_zz'; did you mean 'vol_z'?", 1);
    refused("n >= 30 and bogus_column > 1", "no column named 'bogus_column'", 13);
    refused("n = 30", "write == to test equality", 3);
    refused("n >= 30 && sharpe > 1", "write 'and'", 9);
    refused("n >= 30 || sharpe > 1", "write 'or'", 9);
    refused("n", "a number, not a condition", 1);
    refused("n and sharpe > 1", "a number where a condition was expected", 1);
    refused("sharpe > 1 and n", "a number where a condition was expected", 16);
    refused("not n", "'not' needs a condition", 1);
    refused("1 < n < 5", "comparisons do not chain", 7);
    refused("use_stop > 0", "compares a boolean with a number", 10);
    refused("use_stop < true", "booleans are compared with == or != only", 10);
    refused("(n > 1", "this parenthesis is never closed", 1);
    refused("n > 1)", "a ')' that closes nothing", 6);
    refused("n > 1 sharpe > 2", "more text after a whole condition", 7);
    refused("n >", "the condition ends", 4);
    refused("", "the condition ends", 1);
    refused("n > 1e", "an exponent has digits", 5);
    refused("n > 1x", "not a number", 5);
    refused("n > 1e999", "too large", 5);
    refused("n > - sharpe", "a minus sign goes before a number", 7);
    refused("n > 2,0", "a character the language does not have", 6);
    refused("n > $", "a character the language does not have", 5);
}

Test(where, hostile_sizes_are_refused_without_growing)
{
    char deep[300];
    memset(deep, '(', 100);
    strcpy(deep + 100, "n > 1");
    refused(deep, "nested too deep", 65);

    static char many[SEBT_WHERE_MAX_TEXT + 2];
    memset(many, 'n', sizeof many - 1);
    many[sizeof many - 1] = '\0';
    sebt_where *w = NULL;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_where_compile(many, cols, is_bool, N_COLS, &w, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "more than 4096 characters"), "%s", err.msg);

    /* 1,000 terms: more than a condition may hold. */
    static char terms[SEBT_WHERE_MAX_TEXT];
    size_t len = 0;
    for (int i = 0; i < 300 && len < sizeof terms - 16; i++)
        len += (size_t)snprintf(terms + len, sizeof terms - len, "%sn>%d", i ? " or " : "", i);
    cr_assert_eq(sebt_where_compile(terms, cols, is_bool, N_COLS, &w, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "more terms than a condition may have"), "%s", err.msg);
}
