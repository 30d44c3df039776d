/* Each command's options are declared once (cli/options.h): the parser, its
 * --help and its completion come from one table. These tests hold the
 * parser to the help (every option the parser takes is listed, every option
 * listed is taken) and the value rules to what docs/cli-options.md says.
 * Each test spawns the built binary (SEBT_BINARY). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_sebt.h"


SEBT_SCRATCH_SUITE(options, "opts");

#define DATA SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz"

/* Every command of `sebt --help`. */
static const char *const commands[] = { "run", "features", "backends", "sweep", "merge", "parity", "fuzz",
                                        "validate", "report", "check-gpu", "completion" };
#define N_COMMANDS (sizeof commands / sizeof commands[0])

#define MAX_NAMES 64
typedef struct {
    char name[MAX_NAMES][40];
    bool flag[MAX_NAMES];
    int n;
} name_set;

static bool has(const name_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return true;
    return false;
}

static void add(name_set *s, const char *name, size_t len, bool flag)
{
    cr_assert_lt(s->n, MAX_NAMES);
    cr_assert_lt(len, sizeof s->name[0]);
    memcpy(s->name[s->n], name, len);
    s->name[s->n][len] = '\0';
    s->flag[s->n] = flag;
    if (!has(s, s->name[s->n]))
        s->n++;
}

/* The parser's table: `sebt __options CMD` prints "NAME KIND once|repeat". */
static void parser_options(const char *cmd, name_set *s)
{
    memset(s, 0, sizeof *s);
    proc *p = run("__options", cmd, NULL);
    cr_assert_eq(p->code, 0, "sebt __options %s: exit %d: %s", cmd, p->code, p->err);
    for (const char *line = p->out; *line;) {
        size_t len = strcspn(line, " \n");
        add(s, line, len, strncmp(line + len, " flag ", 6) == 0);
        line += strcspn(line, "\n");
        line += *line == '\n';
    }
}

/* The options --help lists: the lines "  --name ..." after "Options:". */
static void help_options(const char *cmd, name_set *s, char *usage, size_t usize)
{
    memset(s, 0, sizeof *s);
    proc *p = run(cmd, "--help", NULL);
    cr_assert_eq(p->code, 0);
    const char *opts = strstr(p->out, "\nOptions:\n");
    cr_assert_not_null(opts, "sebt %s --help has no Options: section:\n%s", cmd, p->out);
    /* The synopsis: the lines up to the first blank one. */
    const char *blank = strstr(p->out, "\n\n");
    snprintf(usage, usize, "%.*s", (int)((blank && blank < opts ? blank : opts) - p->out), p->out);
    for (const char *line = opts + 1; *line;) {
        if (strncmp(line, "  --", 4) == 0)
            add(s, line + 2, strcspn(line + 2, " \n"), false);
        line += strcspn(line, "\n");
        line += *line == '\n';
    }
}

Test(options, every_command_is_in_the_top_level_help)
{
    proc *p = run("--help", NULL);
    cr_assert_eq(p->code, 0);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n  %s ", commands[i]);
        cr_assert_not_null(strstr(p->out, want), "sebt --help does not list %s:\n%s", commands[i], p->out);
    }
}

/* The parser and --help list the same options, and the parser really takes
 * each one: given with no value (or a flag followed by an unknown option),
 * the error is never "unknown option" about it. */
Test(options, help_lists_exactly_the_options_the_parser_takes)
{
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const char *cmd = commands[i];
        name_set parsed, listed;
        static char usage[8192];
        parser_options(cmd, &parsed);
        help_options(cmd, &listed, usage, sizeof usage);
        if (strcmp(cmd, "completion") != 0)
            cr_assert_gt(parsed.n, 0, "sebt %s takes no option?", cmd);
        for (int k = 0; k < parsed.n; k++)
            cr_assert(has(&listed, parsed.name[k]), "sebt %s takes %s but its --help does not list it", cmd,
                      parsed.name[k]);
        for (int k = 0; k < listed.n; k++)
            cr_assert(has(&parsed, listed.name[k]), "sebt %s --help lists %s but the parser does not take it",
                      cmd, listed.name[k]);
        /* Every option named in the synopsis is one the parser takes. */
        for (const char *u = strstr(usage, "--"); u; u = strstr(u + 2, "--")) {
            char name[40];
            size_t len = strspn(u, "-abcdefghijklmnopqrstuvwxyz");
            snprintf(name, sizeof name, "%.*s", (int)len, u);
            cr_assert(has(&parsed, name), "sebt %s's usage names %s, which the parser does not take", cmd, name);
        }
        for (int k = 0; k < parsed.n; k++) {
            const char *args[] = { cmd, parsed.name[k], parsed.flag[k] ? "--zz-not-an-option" : NULL, NULL };
            proc *p = runv(args);
            cr_assert_eq(p->code, 2, "sebt %s %s: exit %d", cmd, parsed.name[k], p->code);
            char refused[80];
            snprintf(refused, sizeof refused, "unknown option '%s'", parsed.name[k]);
            cr_assert_null(strstr(p->err, refused), "sebt %s refuses its own %s:\n%s", cmd, parsed.name[k], p->err);
            if (parsed.flag[k])
                cr_assert_not_null(strstr(p->err, "unknown option '--zz-not-an-option'"), "%s", p->err);
        }
        const char *bogus[] = { cmd, "--zz-not-an-option", NULL };
        proc *p = runv(bogus);
        cr_assert_eq(p->code, 2);
        cr_assert_not_null(strstr(p->err, "unknown option '--zz-not-an-option'"), "sebt %s: %s", cmd, p->err);
    }
}

/* ---- value rules ------------------------------------- */

#define assert_usage_error(p, needle)                                                                  \
    do {                                                                                               \
        cr_assert_eq((p)->code, 2, "exit %d, stderr:\n%s", (p)->code, (p)->err);                       \
        cr_assert_not_null(strstr((p)->err, (needle)), "expected\n  %s\nin\n%s", (needle), (p)->err); \
    } while (0)

Test(options, a_repeated_option_that_is_not_repeatable_is_an_error)
{
    assert_usage_error(run("run", "--data", DATA, "--data", DATA, NULL), "--data given twice");
    assert_usage_error(run("sweep", "--data", DATA, "--grid", "g", "--threads", "2", "--threads=3", NULL),
                       "--threads given twice");
    assert_usage_error(run("run", "--data", DATA, "--lenient", "--lenient", NULL), "--lenient given twice");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--seed", "1", "--seed", "2", NULL),
                       "--seed given twice");
    /* Repeatable ones stay repeatable: two --set are both applied. */
    proc *p = run("run", "--data", DATA, "--set", "ema_fast=5", "--set", "ema_slow=7", "--format", "json", NULL);
    cr_assert_eq(p->code, 0, "%s", p->err);
    cr_assert_not_null(strstr(p->out, "\"ema_fast\":5,"), "%.400s", p->out);
    cr_assert_not_null(strstr(p->out, "\"ema_slow\":7,"), "%.400s", p->out);
    /* ... up to their limit. */
    const char *args[40] = { "parity", "--backend", "fast_cpu" };
    int n = 3;
    for (int k = 0; k < 9; k++) {
        args[n++] = "--data";
        args[n++] = DATA;
    }
    args[n] = NULL;
    assert_usage_error(runv(args), "--data given more than 8 times");
}

Test(options, an_empty_path_is_a_usage_error)
{
    proc *p = run("run", "--data", DATA, "--output", "", NULL);
    assert_usage_error(p, "--output expects a FILE, got an empty string");
    cr_assert_null(strstr(p->err, "sebt_outfile_open"), "%s", p->err);
    assert_usage_error(run("run", "--data=", NULL), "--data expects a FILE, got an empty string");
    assert_usage_error(run("sweep", "--data", DATA, "--grid", "g", "--trades", "", NULL),
                       "--trades expects a DIR, got an empty string");
    assert_usage_error(run("parity", "--backend", "fast_cpu", "--junit", "", NULL),
                       "--junit expects a FILE, got an empty string");
    assert_usage_error(run("backends", "--backend", "", NULL), "--backend expects a X, got an empty string");
}

Test(options, numbers_out_of_range_are_refused_naming_option_and_value)
{
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--seed", "99999999999999999999", NULL),
                       "--seed expects a whole number from 0 to 4503599627370496, got '99999999999999999999'");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--stream", "18446744073709551615", NULL),
                       "--stream expects a whole number from 0 to 4503599627370496, got '18446744073709551615'");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--stream", "-1", NULL), "got '-1'");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--iterations", "+5", NULL), "got '+5'");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--iterations", " 5", NULL), "got ' 5'");
    assert_usage_error(run("validate", "--backend", "fast_cpu", "--seed", "4503599627370497", NULL),
                       "--seed expects a whole number from 0 to 4503599627370496");
    assert_usage_error(run("parity", "--backend", "fast_cpu", "--memory-budget", "-5", NULL),
                       "--memory-budget expects a whole number from 1 to 4503599627370496, got '-5'");
    assert_usage_error(run("parity", "--backend", "fast_cpu", "--memory-budget", "99999999999999999999", NULL),
                       "got '99999999999999999999'");
    assert_usage_error(run("sweep", "--data", DATA, "--grid", "g", "--threads", "0", NULL),
                       "--threads expects a whole number from 1 to 4096, got '0'");
    assert_usage_error(run("sweep", "--data", DATA, "--grid", "g", "--top", "1e3", NULL),
                       "--top expects a whole number from 1 to 1000000000, got '1e3'");
    assert_usage_error(run("check-gpu", "--bars", "-1", NULL), "--bars expects a whole number from 1");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--time", "nan", NULL),
                       "--time expects a number > 0 and <= 10000000, got 'nan'");
    assert_usage_error(run("fuzz", "--backend", "fast_cpu", "--big-share", "1.5", NULL),
                       "--big-share expects a number from 0 to 1, got '1.5'");
    assert_usage_error(run("report", "--baseline", "a", "b", "--threshold", "inf", NULL),
                       "--threshold expects a number >= 0, got 'inf'");
    assert_usage_error(run("backends", "--format=xml", NULL), "--format expects text or json, got 'xml'");
    assert_usage_error(run("run", "--data", DATA, "--format", "xml", NULL),
                       "--format expects json, csv or text, got 'xml'");
}

/* The largest seed prints exactly in the JSON (it used to print as -1). */
Test(options, the_largest_seed_prints_exactly_in_json)
{
    proc *p = run("fuzz", "--backend", "fast_cpu", "--seed", "4503599627370496", "--iterations", "1",
                  "--no-save", "--format", "json", NULL);
    cr_assert_eq(p->code, 0, "exit %d: %s", p->code, p->err);
    cr_assert_not_null(strstr(p->out, "\"seed\":4503599627370496,"), "%.600s", p->out);
}

Test(options, values_and_their_forms)
{
    /* --name=VALUE and --name VALUE are one rule; a flag takes no value;
     * a value may start with a dash. */
    assert_usage_error(run("run", "--data", DATA, "--lenient=yes", NULL), "--lenient takes no value");
    assert_usage_error(run("report", "--baseline=a", "b", NULL), "--baseline takes 2 words");
    assert_usage_error(run("run", "--data", NULL), "--data needs a FILE");
    assert_usage_error(run("sweep", "--data", DATA, "--grid", "g", "--top", NULL), "--top needs a value: K");
    assert_usage_error(run("run", "--data", DATA, "--set", "=5", NULL), "--set expects NAME=VALUE, got '=5'");
    proc *p = run("run", "--data=" DATA, "--set=ema_fast=5", "--format=csv", NULL);
    cr_assert_eq(p->code, 0, "%s", p->err);
    /* --help wins wherever it stands, even after a mistake. */
    p = run("sweep", "--no-such", "--help", NULL);
    cr_assert_eq(p->code, 0);
    cr_assert_not_null(strstr(p->out, "Usage: sebt sweep"));
    /* The hidden table dump refuses an unknown command. */
    p = run("__options", "nope", NULL);
    cr_assert_eq(p->code, 2);
}
