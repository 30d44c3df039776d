/* What `sebt split` and `sebt walkforward` share (cli/oos_args.c): the
 * options both take, in this order at the head of their tables, the date
 * and span parsers, and the job they open (the series, the grid streamed a
 * window at a time, the condition, the backend). */
#ifndef SEBT_CLI_OOS_H
#define SEBT_CLI_OOS_H

#include "sebt/grid.h"
#include "sebt/oos.h"
#include "sebt/overfit.h"
#include "sebt/sweep.h"

#include "cli.h"
#include "options.h"

enum { OOS_DATA, OOS_GRID, OOS_COMBOS, OOS_WHERE, OOS_BY, OOS_BACKEND, OOS_THREADS, OOS_OUTPUT, OOS_LENIENT,
       OOS_FILL_GAPS, OOS_N_SHARED };

/* The shared rows of an option table (a macro: each table is a static array). */
#define OOS_SHARED_OPTS(by_help)                                                                              \
    [OOS_DATA] = { "--data", CLI_FILE, "FILE", "the bars (CSV or Binance klines, .gz read as is)" },          \
    [OOS_GRID] = { "--grid", CLI_FILE, "FILE", "the combos: a grid file, as 'sebt sweep --grid'" },           \
    [OOS_COMBOS] = { "--combos", CLI_FILE, "FILE", "or a combos CSV, as 'sebt sweep --combos'" },             \
    [OOS_WHERE] = { "--where", CLI_TEXT, "COND", "only combos whose in-sample (train) row meets COND, a\n"     \
                    "condition over a sweep's columns as in 'sebt sweep --where'\n"                          \
                    "('n >= 30 and max_dd > -2000')" },                                                       \
    [OOS_BY] = { "--by", CLI_CHOICE, "METRIC", by_help, .choices = cli_oos_metrics },                         \
    [OOS_BACKEND] = { "--backend", CLI_TEXT, "NAME", "fast_cpu (default), reference, cuda, cpu|gpu|auto, a\n" \
                      "plugin's path, or exec:CMD, a kernel command", .complete = cli_backend_words },         \
    [OOS_THREADS] = CLI_OPT_THREADS("CPU threads, 1 to 4096 (default: OMP_NUM_THREADS, else every core)"),    \
    [OOS_OUTPUT] = { "--output", CLI_FILE, "FILE", "write there instead of stdout (atomically)" },            \
    [OOS_LENIENT] = { "--lenient", CLI_FLAG, NULL, "turn rejected rows into missing bars (counted on stderr)" }, \
    [OOS_FILL_GAPS] = { "--fill-gaps", CLI_FLAG, NULL, "insert missing bars where timestamps skip" }

extern const char *const cli_oos_metrics[];

typedef struct {
    const char *cmd;
    const char *data, *grid_path, *combos_path, *where_text, *backend_name, *output;
    const char *trades;     /* walkforward's --trades: one more output */
    int metric, threads;
    bool lenient, fill_gaps;
    sebt_series s;
    sebt_grid *grid;        /* --grid, made a window at a time */
    sebt_params *combos;    /* or --combos, held */
    size_t n_combos;
    sebt_where *where;
    const sebt_backend *b;
} cli_oos_job;

/* Reads the shared options of a; returns -1 to go on, else an exit code. */
int cli_oos_args(const char *cmd, const cli_args *a, cli_oos_job *j);
/* Compiles the condition, opens the grid, loads the series, picks the
 * backend; an exit code (0: ok). */
int cli_oos_open(cli_oos_job *j);
void cli_oos_close(cli_oos_job *j);

/* A date: YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z] (UTC), or milliseconds
 * since the epoch (digits only). Prints and returns 2 when malformed. */
int cli_oos_parse_date(const char *cmd, const char *flag, const char *text, int64_t *ms);
/* A window length: N bars, or N followed by m, h, d or w (minutes, hours,
 * days, weeks of open time). */
int cli_oos_parse_span(const char *cmd, const char *flag, const char *text, int64_t *v, bool *by_time);

/* For text reports: the parameters of n listed combos (labels[i] names
 * combo i: "rank 1, combo 58916"), those that differ between them on one
 * line per combo, then the ones they share on one line. */
void cli_oos_print_params(FILE *f, const sebt_params *p, const char *const *labels, size_t n);

/* A text table's mark after a Sharpe from n trades: '?' when n is below
 * SEBT_FEW_TRADES, else ' ' (last, a column at the end of a line: nothing,
 * so no line ends in a space). */
const char *cli_oos_few_mark(int64_t n, bool last);
/* The footnote that explains the mark, when any Sharpe had it. */
void cli_oos_few_footnote(FILE *f, bool any);
/* The median of the n values of v that are not NaN (sorted in place, NaN
 * last); NaN when none is. */
double cli_oos_median(double *v, size_t n);

/* --overfit and --overfit-blocks S of a command's options (cli/oos_overfit.c):
 * *blocks 0 without --overfit, else S (default SEBT_OVERFIT_BLOCKS).
 * Returns -1 to go on, else an exit code. */
int cli_oos_overfit_blocks(const char *cmd, const cli_args *a, int opt_overfit, int opt_blocks, int *blocks);
/* `sebt sweep --overfit`'s measures over every combo of the job on bars
 * [from, from + count) of its series, a series of their own; an exit code
 * (printed). Free o with sebt_overfit_free when 0. */
int cli_oos_overfit(const cli_oos_job *j, size_t from, size_t count, int blocks, sebt_overfit *o);

/* Walk-forward's records, one per train window (done[k]: window k has one). */
typedef struct {
    size_t windows;        /* with a record */
    size_t stand_out;      /* whose best has DSR >= 0.95 and PBO < 0.5 */
    double median_dsr, median_pbo;   /* over them, NaN left out; NaN when none */
} cli_wf_overfit_summary;
void cli_wf_overfit_medians(const sebt_overfit *of, const bool *done, size_t n_windows, cli_wf_overfit_summary *sum);
/* The text table: a line per window with a record. */
void cli_wf_overfit_text(FILE *f, const sebt_overfit *of, const bool *done, size_t n_windows);
/* JSON: "overfit_summary": {blocks, windows, median_dsr, median_pbo, stand_out}. */
void cli_wf_overfit_json(cli_json *j, const cli_wf_overfit_summary *sum, int blocks);

/* "2021-03-04 05:06" (UTC), for text tables. */
void cli_oos_minute(int64_t ms, char *buf, size_t size);

#endif
