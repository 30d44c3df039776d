/* The `sebt` command: shared pieces of its subcommands. Only the CLI prints. */
#ifndef SEBT_CLI_H
#define SEBT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "sebt/sebt.h"

/* Exit codes, documented in README "Exit codes". */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_CHECK_FAILED = 1, /* a parity/fuzz/baseline check found a problem */
    CLI_EXIT_USAGE = 2,        /* bad usage or bad input */
    CLI_EXIT_NO_DEVICE = 3     /* a GPU backend was asked for and none is usable */
};

/* Subcommands: argv[0] is the subcommand's name. Each returns an exit code. */
int cli_cmd_run(int argc, char **argv);
int cli_cmd_features(int argc, char **argv);
int cli_cmd_backends(int argc, char **argv);
int cli_cmd_sweep(int argc, char **argv);
int cli_cmd_parity(int argc, char **argv);
int cli_cmd_fuzz(int argc, char **argv);
int cli_cmd_report(int argc, char **argv);
int cli_cmd_check_gpu(int argc, char **argv);

/* "sebt CMD: MESSAGE\nTry 'sebt CMD --help'." on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) SEBT_PRINTF(2, 3);
/* Prints "sebt CMD: error: MSG" and maps the status to an exit code. */
int cli_report_error(const char *cmd, const sebt_error *err);
int cli_exit_code_for(sebt_status st);

/* Loads --data with --lenient/--fill-gaps; on failure prints and returns
 * the exit code (2), else 0. When lenient, says on stderr how many bars
 * were rejected. */
int cli_load_series(const char *cmd, const char *path, bool lenient, bool fill_gaps,
                    sebt_series *out);

/* Picks the backend: --backend NAME when given, else BACKTEST_BACKEND
 * (cpu|gpu|auto or a backend name), else fast_cpu. bars and combos are the
 * size of the work, for auto. Prints and returns the exit code on failure. */
int cli_select_backend(const char *cmd, const char *flag_value, size_t bars, size_t combos,
                       const sebt_backend **out);

/* Opens --output FILE (or stdout when path is NULL or "-"). */
FILE *cli_open_output(const char *cmd, const char *path);
void cli_close_output(FILE *f);

/* A progress bar on stderr: drawn only when stderr is a terminal and the
 * work has run for more than a second; silent in pipes and CI. */
typedef struct {
    const char *label;
    double start;
    bool tty;
    bool drawn;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *label);
void cli_progress_update(void *p, size_t done, size_t total); /* a sebt_progress_fn */
void cli_progress_finish(cli_progress *p);
double cli_now(void);

/* Prints a double so that it reads back bit-exact (%.17g; nan, inf, -inf). */
void cli_print_double(FILE *f, double v);

#endif
