/* Each command's options, declared once: one table drives the parser, the
 * `--help` text, `sebt __options` (the test's view of the parser) and the
 * bash completion script (docs/cli-options.md). A command declares a
 * cli_command with its cli_opt table and calls cli_parse. */
#ifndef SEBT_CLI_OPTIONS_H
#define SEBT_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The one set of value rules: every option is one of these kinds. */
typedef enum {
    CLI_FLAG,    /* no value */
    CLI_TEXT,    /* a word that is not empty (a backend name, I/N) */
    CLI_FILE,    /* a path that is not empty; completes file names */
    CLI_DIR,     /* a folder that is not empty; completes folder names */
    CLI_UINT,    /* a whole number, digits only, from umin to umax */
    CLI_REAL,    /* a finite decimal from rmin to rmax (above rmin with CLI_ABOVE_MIN) */
    CLI_CHOICE,  /* one word of choices */
    CLI_ASSIGN   /* NAME=VALUE (the name not empty) */
} cli_kind;

/* Flags of an option. */
#define CLI_REPEAT 1u     /* may be given more than once; every value kept, in order */
#define CLI_ABOVE_MIN 2u  /* CLI_REAL: the value must be greater than rmin, not equal */

/* The largest whole number an option takes unless it says less: JSON
 * readers hold numbers as doubles, exact up to 2^53, and sebt prints some
 * of these values (and a few sums of them) in JSON; 2^52 leaves room for
 * "seed + round" and "stream + rank". */
#define CLI_UINT_MAX (UINT64_C(1) << 52)

typedef struct {
    const char *name;            /* "--data" */
    cli_kind kind;
    const char *metavar;         /* "FILE" in help and messages; NULL for flags */
    const char *help;            /* lines joined by '\n' */
    unsigned flags;
    int max_count;               /* CLI_REPEAT: at most this many (0: no limit) */
    int words;                   /* words of value (0 means 1; --baseline OLD NEW takes 2) */
    uint64_t umin, umax;         /* CLI_UINT */
    double rmin, rmax;           /* CLI_REAL */
    const char *const *choices;  /* CLI_CHOICE: NULL-terminated */
    const char *const *complete; /* CLI_TEXT: words offered by completion (NULL-terminated) */
    const char *section;         /* a heading printed in --help before this option */
} cli_opt;

typedef struct cli_command {
    const char *name;
    const char *summary;              /* one line for `sebt --help` */
    const char *usage;                /* the synopsis: its forms, one a line, each what follows
                                         "sebt NAME" (printed as help2man reads it:
                                         "Usage: sebt NAME ..." then "  or:  sebt NAME ...") */
    const char *about;                /* what it does, before the options */
    void (*about_fn)(FILE *f);        /* instead of about, when it has values to print */
    const cli_opt *opts;
    size_t n_opts;
    const char *positional;           /* "SHARD_FILE..." when it takes words, else NULL */
    const char *epilog;               /* after the options */
    void (*epilog_fn)(FILE *f);       /* printed after epilog */
    int (*fn)(int argc, char **argv);
    bool mpi;                         /* shares its work across the ranks of an MPI job */
} cli_command;

#define CLI_OPTS(table) (table), (sizeof(table) / sizeof((table)[0]))

/* What one option was given. values holds every value word in order
 * (words per use: 1, or 2 for a two-word option); u, r and choice the last
 * one, parsed by its kind. */
typedef struct {
    int count;
    int words;             /* value words per use */
    const char **values;
    uint64_t u;
    double r;
    int choice;
} cli_optval;

#define CLI_MAX_OPTS 40
typedef struct {
    const cli_command *cmd;
    cli_optval v[CLI_MAX_OPTS];
    const char **pos;      /* the positional words, in order */
    size_t n_pos;
} cli_args;

/* Parses argv (argv[0] is the command) by c's table. --help or -h anywhere
 * prints the help on stdout (rank 0 only under MPI) and returns 0. A usage
 * error is printed and returns 2. Else returns -1: go on. The value arrays
 * live until the process ends. */
int cli_parse(const cli_command *c, int argc, char **argv, cli_args *out);

static inline bool cli_given(const cli_args *a, int k) { return a->v[k].count > 0; }
/* The last value given, or NULL. */
static inline const char *cli_str(const cli_args *a, int k)
{
    const cli_optval *v = &a->v[k];
    return v->count ? v->values[(v->count - 1) * v->words] : NULL;
}

/* The --help text, from the table. */
void cli_print_help(const cli_command *c, FILE *f);

/* What --backend completes to (a plugin's path works too). */
extern const char *const cli_backend_words[];
/* The two output formats of most commands. */
extern const char *const cli_text_json[];

/* --threads N, the one rule of every command that takes it. */
#define CLI_OPT_THREADS(help) { "--threads", CLI_UINT, "N", help, .umin = 1, .umax = CLI_MAX_THREADS }

/* Every command of sebt, in the order of `sebt --help` (cli/main.c). */
extern const cli_command *const cli_commands[];
extern const size_t cli_n_commands;
const cli_command *cli_find_command(const char *name);
/* The command (or "help") a mistyped word most likely meant, or NULL. */
const char *cli_nearest_command(const char *word);

/* Each command's table (in its cmd_*.c file). */
extern const cli_command cli_cmd_run_spec, cli_cmd_features_spec, cli_cmd_backends_spec,
    cli_cmd_sweep_spec, cli_cmd_merge_spec, cli_cmd_parity_spec, cli_cmd_fuzz_spec,
    cli_cmd_validate_spec, cli_cmd_report_spec, cli_cmd_check_gpu_spec, cli_cmd_completion_spec,
    cli_cmd_split_spec, cli_cmd_walkforward_spec, cli_cmd_plot_spec;

/* `sebt __options CMD`: the parser's table, one option a line (name, kind,
 * repeatable) for the test that compares it with --help. */
int cli_list_options(const char *name);

#endif
