/* The one option parser and the texts made from the same tables: --help,
 * `sebt __options` and the bash completion script (cli/options.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mpi.h"
#include "options.h"

const char *const cli_backend_words[] = { "reference", "fast_cpu", "cuda", "cpu", "gpu", "auto", NULL };
const char *const cli_text_json[] = { "text", "json", NULL };

/* ---- value rules ------------------------------------------------------------ */

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static const cli_opt *find_opt(const cli_command *c, const char *name, size_t len, int *k)
{
    for (size_t i = 0; i < c->n_opts; i++)
        if (strlen(c->opts[i].name) == len && strncmp(c->opts[i].name, name, len) == 0) {
            *k = (int)i;
            return &c->opts[i];
        }
    return NULL;
}

/* "text or json", "csv, json or text". */
static void choice_list(const cli_opt *o, char *buf, size_t size)
{
    size_t n = 0, used = 0;
    while (o->choices[n])
        n++;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                                 o->choices[i]);
}

static void real_range(const cli_opt *o, char *buf, size_t size)
{
    const char *lo = o->flags & CLI_ABOVE_MIN ? ">" : ">=";
    if (isinf(o->rmax))
        snprintf(buf, size, "%s %.15g", lo, o->rmin);
    else if (o->flags & CLI_ABOVE_MIN)
        snprintf(buf, size, "> %.15g and <= %.15g", o->rmin, o->rmax);
    else
        snprintf(buf, size, "from %.15g to %.15g", o->rmin, o->rmax);
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* Checks one value word by the option's kind and keeps what it parsed. */
static int check_value(const char *cmd, const cli_opt *o, const char *v, cli_optval *out)
{
    char what[160];
    switch (o->kind) {
    case CLI_FLAG:
        return CLI_EXIT_OK;
    case CLI_TEXT:
    case CLI_FILE:
    case CLI_DIR:
        if (!*v)
            return cli_usage_error(cmd, "%s expects a %s, got an empty string", o->name, o->metavar);
        return CLI_EXIT_OK;
    case CLI_ASSIGN: {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v)
            return cli_usage_error(cmd, "%s expects %s, got '%s'", o->name, o->metavar, v);
        return CLI_EXIT_OK;
    }
    case CLI_UINT: {
        errno = 0;
        char *end = NULL;
        unsigned long long x = all_digits(v) ? strtoull(v, &end, 10) : 0;
        if (!all_digits(v) || errno || x < o->umin || x > o->umax)
            return cli_usage_error(cmd, "%s expects a whole number from %llu to %llu, got '%s'", o->name,
                                   (unsigned long long)o->umin, (unsigned long long)o->umax, v);
        out->u = x;
        return CLI_EXIT_OK;
    }
    case CLI_REAL: {
        errno = 0;
        char *end = NULL;
        double x = *v ? strtod(v, &end) : NAN;
        bool ok = *v && end != v && !*end && isfinite(x) && x <= o->rmax &&
                  (o->flags & CLI_ABOVE_MIN ? x > o->rmin : x >= o->rmin);
        if (!ok) {
            real_range(o, what, sizeof what);
            return cli_usage_error(cmd, "%s expects a number %s, got '%s'", o->name, what, v);
        }
        out->r = x;
        return CLI_EXIT_OK;
    }
    case CLI_CHOICE: {
        size_t n = 0;
        for (; o->choices[n]; n++)
            if (strcmp(o->choices[n], v) == 0) {
                out->choice = (int)n;
                return CLI_EXIT_OK;
            }
        /* Every choice, however many: a list cut short hides the one meant. */
        char all[2048];
        choice_list(o, all, sizeof all);
        int near = sebt_nearest_name(v, o->choices, n);
        if (near >= 0)
            return cli_usage_error(cmd, "%s expects %s, got '%s'; did you mean %s?", o->name, all, v, o->choices[near]);
        return cli_usage_error(cmd, "%s expects %s, got '%s'", o->name, all, v);
    }
    }
    return CLI_EXIT_USAGE;
}

/* ---- the parser ---------------------------------------------------------------- */

/* "unknown option '--sett'; did you mean --set?" (the option's name, its
 * value after '=' left out). */
static int unknown_option(const cli_command *c, const char *arg, size_t len)
{
    const char *names[CLI_MAX_OPTS + 1];
    size_t n = 0;
    for (size_t i = 0; i < c->n_opts && n < CLI_MAX_OPTS; i++)
        names[n++] = c->opts[i].name;
    names[n++] = "--help";
    char word[80];
    snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), arg);
    int near = sebt_nearest_name(word, names, n);
    if (near >= 0)
        return cli_usage_error(c->name, "unknown option '%s'; did you mean %s?", arg, names[near]);
    return cli_usage_error(c->name, "unknown option '%s'", arg);
}

/* Where an option's value words are: argv index of the first (or -1 when it
 * was written --name=VALUE, then eq is the value). */
typedef struct {
    int opt;       /* index in the table, -1: a positional word */
    int at;
    const char *inline_value;
} use;

int cli_parse(const cli_command *c, int argc, char **argv, cli_args *out)
{
    const char *cmd = c->name;
    memset(out, 0, sizeof *out);
    out->cmd = c;
    if (c->n_opts > CLI_MAX_OPTS) {
        fprintf(stderr, "sebt %s: error: %zu options, more than CLI_MAX_OPTS\n", cmd, c->n_opts);
        return CLI_EXIT_CHECK_FAILED;
    }
    /* --help wins wherever it stands, so a half-typed command line still
     * gets its help rather than an error about some other word. */
    for (int i = 1; i < argc; i++)
        if (is_help(argv[i])) {
            if (cli_mpi.rank == 0)
                cli_print_help(c, stdout);
            return CLI_EXIT_OK;
        }

    /* One pass finds each word's option and checks its value; the values
     * are then laid out per option, in the order given. */
    use *uses = calloc((size_t)argc + 1, sizeof *uses);
    if (!uses) {
        fprintf(stderr, "sebt %s: error: out of memory reading the options\n", cmd);
        return CLI_EXIT_NOMEM;
    }
    size_t n_uses = 0, n_words = 0;
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (!c->positional) {
                rc = cli_usage_error(cmd, "unexpected argument '%s'", arg);
                break;
            }
            uses[n_uses++] = (use){ -1, i, NULL };
            n_words++;
            continue;
        }
        const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        int k = -1;
        const cli_opt *o = find_opt(c, arg, len, &k);
        if (!o) {
            rc = unknown_option(c, arg, len);
            break;
        }
        cli_optval *v = &out->v[k];
        int words = o->kind == CLI_FLAG ? 0 : o->words ? o->words : 1;
        if (v->count >= 1 && !(o->flags & CLI_REPEAT)) {
            rc = cli_usage_error(cmd, "%s given twice: it is not repeatable", o->name);
            break;
        }
        if (o->max_count && v->count >= o->max_count) {
            rc = cli_usage_error(cmd, "%s given more than %d times", o->name, o->max_count);
            break;
        }
        if (words == 0 && eq) {
            rc = cli_usage_error(cmd, "%s takes no value, got '%s'", o->name, arg);
            break;
        }
        if (eq && words > 1) {
            rc = cli_usage_error(cmd, "%s takes %d words: %s %s", o->name, words, o->name, o->metavar);
            break;
        }
        if (!eq && i + words >= argc) {
            if (o->kind == CLI_FILE || o->kind == CLI_DIR || words > 1)
                rc = cli_usage_error(cmd, "%s needs %s%s", o->name, words > 1 ? "" : "a ", o->metavar);
            else
                rc = cli_usage_error(cmd, "%s needs a value: %s", o->name, o->metavar);
            break;
        }
        uses[n_uses++] = (use){ k, i, eq ? eq + 1 : NULL };
        for (int w = 0; w < words && rc == CLI_EXIT_OK; w++)
            rc = check_value(cmd, o, eq ? eq + 1 : argv[i + 1 + w], v);
        v->count++;
        v->words = words;
        n_words += (size_t)words;
        if (!eq)
            i += words;
    }
    if (rc != CLI_EXIT_OK) {
        free(uses);
        return rc;
    }

    /* Kept for the life of the process (commands hold pointers into it);
     * reachable from here, so leak checkers do not count it. */
    static const char **storage;
    free(storage);
    storage = calloc(n_words + 1, sizeof *storage);
    if (!storage) {
        free(uses);
        fprintf(stderr, "sebt %s: error: out of memory reading the options\n", cmd);
        return CLI_EXIT_NOMEM;
    }
    size_t at = 0;
    for (size_t k = 0; k < c->n_opts; k++) {
        cli_optval *v = &out->v[k];
        v->values = storage + at;
        for (size_t u = 0; u < n_uses; u++) {
            if (uses[u].opt != (int)k)
                continue;
            if (uses[u].inline_value)
                storage[at++] = uses[u].inline_value;
            else
                for (int w = 0; w < v->words; w++)
                    storage[at++] = argv[uses[u].at + 1 + w];
        }
        if (!v->words)
            v->words = 1;   /* flags: values stays empty, cli_str is NULL */
        if (c->opts[k].kind == CLI_FLAG)
            v->values = NULL;
    }
    out->pos = storage + at;
    for (size_t u = 0; u < n_uses; u++)
        if (uses[u].opt < 0)
            storage[at + out->n_pos++] = argv[uses[u].at];
    free(uses);
    return -1;
}

/* ---- --help ------------------------------------------------------------------ */

static size_t label_len(const cli_opt *o)
{
    return strlen(o->name) + (o->metavar ? 1 + strlen(o->metavar) : 0);
}

/* Prints text (lines joined by '\n'), each line after the first indented to col. */
static void print_indented(FILE *f, const char *text, int col)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        size_t len = strcspn(p, "\n");
        if (!first)
            fprintf(f, "%*s", col, "");
        fprintf(f, "%.*s\n", (int)len, p);
        first = false;
        p += len + (p[len] == '\n');
    }
    if (first)
        fputc('\n', f);
}

void cli_print_help(const cli_command *c, FILE *f)
{
    const char *form = c->usage;
    for (bool first = true; *form; first = false) {
        size_t len = strcspn(form, "\n");
        fprintf(f, "%s sebt %s %.*s\n", first ? "Usage:" : "  or: ", c->name, (int)len, form);
        form += len + (form[len] == '\n');
    }
    if (c->about || c->about_fn)
        fputc('\n', f);
    if (c->about)
        fputs(c->about, f);
    if (c->about_fn)
        c->about_fn(f);
    size_t width = strlen("-h, --help");
    for (size_t i = 0; i < c->n_opts; i++)
        if (label_len(&c->opts[i]) > width)
            width = label_len(&c->opts[i]);
    int col = 2 + (int)width + 3;
    fputs("\nOptions:\n", f);
    fprintf(f, "  %-*s%s\n", col - 2, "-h, --help", "this help");
    for (size_t i = 0; i < c->n_opts; i++) {
        const cli_opt *o = &c->opts[i];
        if (o->section)
            fprintf(f, "\n%s\n", o->section);
        char label[128];
        snprintf(label, sizeof label, "%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        fprintf(f, "  %-*s", col - 2, label);
        print_indented(f, o->help, col);
    }
    if (c->epilog) {
        fputc('\n', f);
        fputs(c->epilog, f);
    }
    if (c->epilog_fn)
        c->epilog_fn(f);
}

/* ---- the table as data: `sebt __options CMD` ------------------------------------ */

static const char *const kind_names[] = {
    [CLI_FLAG] = "flag", [CLI_TEXT] = "text", [CLI_FILE] = "file", [CLI_DIR] = "dir",
    [CLI_UINT] = "uint", [CLI_REAL] = "real", [CLI_CHOICE] = "choice", [CLI_ASSIGN] = "assign",
};

const cli_command *cli_find_command(const char *name)
{
    for (size_t i = 0; i < cli_n_commands; i++)
        if (strcmp(cli_commands[i]->name, name) == 0)
            return cli_commands[i];
    return NULL;
}

const char *cli_nearest_command(const char *word)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < cli_n_commands && n < 63; i++)
        names[n++] = cli_commands[i]->name;
    names[n++] = "help";
    int near = sebt_nearest_name(word, names, n);
    return near >= 0 ? names[near] : NULL;
}

int cli_list_options(const char *name)
{
    const cli_command *c = name ? cli_find_command(name) : NULL;
    if (!c) {
        fprintf(stderr, "sebt __options: error: unknown command '%s'\n", name ? name : "");
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < c->n_opts; i++) {
        const cli_opt *o = &c->opts[i];
        printf("%s %s %s\n", o->name, kind_names[o->kind], o->flags & CLI_REPEAT ? "repeat" : "once");
    }
    return CLI_EXIT_OK;
}
