/* The `sebt` command: shared pieces of its subcommands. Only the CLI prints. */
#ifndef SEBT_CLI_H
#define SEBT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sebt/oracle.h"
#include "sebt/outfile.h"
#include "sebt/analysis.h"
#include "sebt/sebt.h"
#include "sebt/shard.h"

/* Exit codes, documented in docs/cli.md "Exit codes". */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_CHECK_FAILED = 1, /* a parity/fuzz/baseline check found a problem */
    CLI_EXIT_USAGE = 2,        /* bad usage or bad input */
    CLI_EXIT_NO_DEVICE = 3,    /* a GPU backend was asked for and none is usable */
    CLI_EXIT_INCONCLUSIVE = 4, /* report --baseline: a drop the repetitions do not confirm */
    CLI_EXIT_NOMEM = 5         /* out of memory: nothing was checked, nothing written */
};

/* Subcommands: argv[0] is the subcommand's name. Each returns an exit code. */
int cli_cmd_run(int argc, char **argv);
int cli_cmd_features(int argc, char **argv);
int cli_cmd_backends(int argc, char **argv);
int cli_cmd_sweep(int argc, char **argv);
int cli_cmd_merge(int argc, char **argv);
int cli_cmd_parity(int argc, char **argv);
int cli_cmd_fuzz(int argc, char **argv);
int cli_cmd_report(int argc, char **argv);
int cli_cmd_check_gpu(int argc, char **argv);
int cli_cmd_validate(int argc, char **argv);
int cli_cmd_completion(int argc, char **argv);
int cli_cmd_split(int argc, char **argv);
int cli_cmd_walkforward(int argc, char **argv);
int cli_cmd_plot(int argc, char **argv);

/* "sebt CMD: error: MESSAGE\nTry 'sebt help CMD'." on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) SEBT_PRINTF(2, 3);
/* Prints "sebt CMD: error: MSG" and maps the status to an exit code. */
int cli_report_error(const char *cmd, const sebt_error *err);
int cli_exit_code_for(sebt_status st);

/* Loads --data with --lenient/--fill-gaps, through the series cache
 * (cli_series_cache_dir); on failure prints and returns the exit code (2),
 * else 0. When lenient, says on stderr how many bars were rejected. */
/* SEBT_CACHE_DIR's value says "no cache": empty, or off, 0, false, no or
 * none in any case. */
bool cli_cache_switched_off(const char *value);
/* The series cache's folder: SEBT_CACHE_DIR (cli_cache_switched_off: none), else
 * $XDG_CACHE_HOME/sebt/series, else $HOME/.cache/sebt/series where HOME is
 * a folder that exists; NULL for none. Written into buf. */
const char *cli_series_cache_dir(char *buf, size_t size);
const char *cli_cache_use_name(sebt_cache_use use);
int cli_load_series(const char *cmd, const char *path, bool lenient, bool fill_gaps,
                    sebt_series *out);
/* The same, saying where the series came from (a cache hit: the entry, not
 * the file, which a sweep's proof then parses afresh). */
int cli_load_series_use(const char *cmd, const char *path, bool lenient, bool fill_gaps, sebt_series *out,
                        sebt_cache_use *cache_use);

/* Picks the backend: --backend NAME when given, else BACKTEST_BACKEND
 * (cpu|gpu|auto or a backend name), else fast_cpu. bars and combos are the
 * size of the work, for auto. Prints and returns the exit code on failure. */
int cli_select_backend(const char *cmd, const char *flag_value, size_t bars, size_t combos,
                       const sebt_backend **out);

/* Installs handlers that print, should plugin b crash the process, which
 * plugin it was (name and path) before the process dies of the signal. */
void cli_note_plugin_crashes(const char *cmd, const sebt_backend *b);
/* "exact" or "tolerant(TOL)". */
void cli_contract_text(const sebt_contract *c, char *buf, size_t n);

/* Output files are atomic (include/sebt/outfile.h): every command that
 * writes a file goes through these three.
 * cli_open_output opens --output FILE (or stdout when path is NULL or "-")
 * as a temporary file beside FILE; prints and returns NULL on failure.
 * cli_close_output publishes it (rename over FILE) or, on a write error,
 * removes it and leaves FILE as it was; nonzero (after printing the reason)
 * when anything written was lost. For stdout it flushes, and a failure
 * names stdout and its reason ("No space left on device").
 * cli_abandon_output discards a file that should not be published (the
 * command failed after opening it). SIGINT, SIGTERM, SIGHUP and exit()
 * remove what was never closed (cli/main.c). */
FILE *cli_open_output(const char *cmd, const char *path);
/* A regular file this process may execute. */
bool cli_executable(const char *path);
/* A program name without a slash is looked up on PATH, as exec would;
 * out gets the path tried last. */
bool cli_find_program(const char *name, char *out, size_t size);
/* The gnuplot to run (SEBT_GNUPLOT, else the one found at build time, else
 * PATH's) into out; else an error saying how to get one, for `purpose`
 * ("draw pictures"), and CLI_EXIT_USAGE. */
int cli_find_gnuplot(const char *cmd, const char *purpose, char *out, size_t size);
int cli_close_output(FILE *f);
/* Called just before a command's own output is first renamed into place:
 * from then to sebt's exit, an ending signal (SIGINT, SIGTERM, SIGHUP, ...;
 * not SIGPIPE) no longer stops the run, so exit 128+N always means every
 * previous file was kept (docs/decisions.md). cli_close_output calls it;
 * so does the sweep before its shard or --output. Never for what is
 * written mid-run (checkpoints, per-combo trades), after which the run
 * goes on for long. */
void cli_outputs_landing(void);
/* Whether it was called: a lock-free atomic load, for a signal handler. */
bool cli_outputs_are_landing(void);
/* Flushes stdout itself (what a command printed there); nonzero after
 * printing "writing stdout failed" and the reason where stdio kept it. */
int cli_close_stdout(const char *cmd);
/* stdout as its own FILE* whose first failed write's errno lands in
 * *first_errno (cli/stdout_writer.c); cli_open_output's stdout. */
FILE *cli_stdout_open(int *first_errno);
void cli_abandon_output(FILE *f);

/* A progress bar on stderr: drawn only when stderr is a terminal and the
 * work has run for more than a second; silent in pipes and CI. It redraws
 * at most 10 times a second, and shows done/total in a named unit
 * ("1200/5000 combos"; "12.3/30.0 s" for a unit with scale 0.1, as the
 * fuzzer counts tenths of a second). */
typedef struct {
    const char *label;
    const char *unit;   /* "combos", "cases", "s"...; "" until set */
    double scale;       /* shown = done * scale */
    double start;
    double last_draw;
    bool tty;
    bool drawn;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *label);
/* Names the unit of done/total; scale 1 for counts. */
void cli_progress_units(cli_progress *p, const char *unit, double scale);
void cli_progress_update(void *p, size_t done, size_t total); /* a sebt_progress_fn */
void cli_progress_finish(cli_progress *p);
double cli_now(void);

/* Valid parameters and valid prices can still overflow a double (fee_bp =
 * 1e308 makes every fee infinite). sebt never writes such a result: this
 * prints which combo, trade and field, and the parameters large enough to
 * be the cause, and returns 2; else 0. combo is the index printed. */
int cli_check_result(const char *cmd, size_t combo, const sebt_params *p, const sebt_result *r);
/* cli_check_result's test, saying nothing: true when it would pass. */
bool cli_result_fits(const sebt_result *r);

/* Prints a double in the shortest form that reads back bit-exact
 * (sebt_format_double; nan, inf, -inf). */
void cli_print_double(FILE *f, double v);
/* A combo's trades as CSV, one row a trade (cli/trades_csv.c; docs/formats.md). */
void cli_write_trades_csv(FILE *f, const sebt_series *s, const sebt_result *r);

/* ---- JSON output (cli/output_json.c) ------------------------------
 * A small streaming writer shared by every subcommand that emits JSON, so
 * all of them agree on the format: no spaces ("key":value), strings escaped,
 * doubles in the shortest form that reads back bit-exact, and a double that is not
 * finite (NaN, inf) written as null because JSON has no token for it.
 * Containers opened at depth < wrap_depth put each element on its own line
 * (indented two spaces a level); deeper ones stay on one line, so a
 * `sebt run` document shows one trade per line. key is NULL for an array
 * element or the top-level value. */
#define CLI_JSON_MAX_DEPTH 32
typedef struct {
    FILE *f;
    int depth;
    int wrap_depth;
    bool has_items[CLI_JSON_MAX_DEPTH];
} cli_json;
void cli_json_init(cli_json *j, FILE *f, int wrap_depth);
void cli_json_begin_object(cli_json *j, const char *key);
void cli_json_end_object(cli_json *j);
void cli_json_begin_array(cli_json *j, const char *key);
void cli_json_end_array(cli_json *j);
void cli_json_string(cli_json *j, const char *key, const char *v);
void cli_json_int(cli_json *j, const char *key, int64_t v);
void cli_json_double(cli_json *j, const char *key, double v);
void cli_json_bool(cli_json *j, const char *key, bool v);
void cli_json_null(cli_json *j, const char *key);
/* The first field of every JSON document sebt writes:
 * "schema":"sebt-NAME/N". N (CLI_JSON_SCHEMA_VERSION) grows when a field
 * changes meaning or goes away; new fields may appear without a bump
 * (docs/formats.md). */
#define CLI_JSON_SCHEMA_VERSION 1
void cli_json_schema(cli_json *j, const char *name);
/* "contract": "exact" or "tolerant", the kind of b's parity contract. */
void cli_json_contract(cli_json *j, const sebt_backend *b);
/* A check of backend b (fuzz, parity) on stdout: its object begun with the
 * schema, the backend's name and its contract. */
void cli_json_begin_check(cli_json *j, int wrap_depth, const char *schema, const sebt_backend *b);
/* Ends the document with a newline. */
void cli_json_finish(cli_json *j);
/* All the parameters in SPEC §2 order, ints as numbers, booleans as true|false. */
void cli_json_params(cli_json *j, const char *key, const sebt_params *p);
/* {"n","win_rate","avg_r","total_pnl","max_dd","sharpe"} */
void cli_json_metrics(cli_json *j, const char *key, const sebt_metrics *m);
/* The figures beside SPEC §7 (sebt/analysis.h) as `sebt run` writes them:
 * {"exits":{"stop_gap",...},"gross_profit",...,"years","sharpe_annual"}. */
void cli_json_analysis(cli_json *j, const char *key, const sebt_trade_stats *st);
/* `sebt run`'s relative measures, every field of sebt_relative_fields. */
void cli_json_relative(cli_json *j, const char *key, const sebt_relative_stats *rel);
/* Writes a string as a JSON string literal (quotes included). */
void cli_json_write_string(FILE *f, const char *s);

/* ---- small shared helpers (cli/common.c) -------------------------- */

/* "2021-03-04T05:06:07Z" (with ".mmm" only when ms % 1000 != 0). */
void cli_format_utc(int64_t ms, char *buf, size_t bufsize);
/* A span of time for people: "15 min", "29 h", "2 d", "1.5 s", "250 ms". */
void cli_format_duration(int64_t ms, char *buf, size_t bufsize);

/* Timestamp gaps of a series as loaded (steps longer than its interval):
 * the holes --fill-gaps would fill, counted when it is off. */
typedef struct {
    size_t gaps;            /* steps longer than the interval */
    uint64_t bars;          /* missing bars they stand for (whole intervals) */
    int64_t longest_ms;     /* the longest step */
    int64_t longest_after;  /* open time of the bar before it */
} cli_gaps;
void cli_find_gaps(const sebt_series *s, cli_gaps *g);
/* One line on stderr when the series has timestamp gaps that were not
 * filled (how many, the bars missing, the longest and where): the
 * indicators run across them as if the bars were adjacent. */
void cli_warn_gaps(const char *cmd, const char *path, const sebt_series *s);
/* Applies one --set NAME=VALUE to p; prints and returns 2 when malformed
 * or the parameter is unknown, else 0. Range rules are checked later by
 * cli_validate_params, once every --set is in. */
int cli_apply_set(const char *cmd, sebt_params *p, const char *assignment);
/* sebt_params_validate; prints and returns 2 naming parameter and value. */
int cli_validate_params(const char *cmd, const sebt_params *p);
/* The most threads --threads takes (cli/options.h has the option). */
#define CLI_MAX_THREADS 4096
/* OMP_NUM_THREADS held to the same rule as --threads (the backends would
 * take it as their default): prints and returns 2 when it breaks it. */
int cli_check_omp_env(void);
/* sebt_paths_check over what a command reads and writes: prints and returns
 * 2 naming both options when an output would replace an input or another
 * output, before anything is written. Every command that writes a file
 * calls it with all its paths. */
int cli_check_paths(const char *cmd, const sebt_path_use *uses, size_t n);

/* ---- options of the one-combo commands, run and features (cli/combo_args.c) */
typedef struct {
    const char *data;
    const char *backend;
    const char *format;      /* NULL unless --format was given */
    const char *output;
    const char *script;      /* plot's --script: one more output */
    bool lenient;
    bool fill_gaps;
    sebt_params params;      /* defaults, or --combo's row, then every --set, validated */
    /* --combo FILE:ID: the sweep output the parameters came from, and what
     * it says of that combo (a run without --set must give the same). */
    char sweep_file[4096];   /* "" without --combo */
    uint64_t sweep_combo;
    sebt_sweep_record sweep_row;
    bool sweep_param_column[SEBT_N_PARAMS];   /* the file has the parameter's column */
    bool sets;               /* --set was given */
    sebt_relative_opts relative;   /* run's --capital and --fraction (else the defaults) */
} cli_combo_args;
/* The options both tables list first, in this order (run adds --format,
 * --capital and --fraction). */
enum cli_combo_opt { COMBO_DATA, COMBO_SET, COMBO_PICK, COMBO_BACKEND, COMBO_OUTPUT, COMBO_LENIENT, COMBO_FILL_GAPS,
                     COMBO_FORMAT, COMBO_CAPITAL, COMBO_FRACTION };
struct cli_command;
/* Parses argv (argv[0] is the command) by c's table. Returns -1 when the
 * command should go on, else the exit code (0 after --help, 2 after a usage
 * or parameter error, already printed). */
int cli_parse_combo_args(const struct cli_command *c, int argc, char **argv, cli_combo_args *out);
/* --combo FILE:ID into out: the sweep file, the combo and its parameters
 * (out->params, before any --set). 0 or the exit code, printed. */
int cli_pick_combo(const char *cmd, const char *arg, cli_combo_args *out);
/* The series of --data and the --backend for one combo's run (run, features,
 * plot equity): refuses an --output that names the data, loads it
 * (--lenient, --fill-gaps), warns of unfilled gaps and picks the backend
 * for one combo over its bars. Else the exit code, printed, and nothing
 * left to free. */
int cli_combo_open(const char *cmd, const cli_combo_args *a, sebt_series *s, const sebt_backend **b);
/* --help's texts made from sebt/strategy.def: the parameters (name, type,
 * default, rule) and the features CSV's header. */
void cli_print_param_table(FILE *f);
void cli_print_features_header(FILE *f);

/* ---- JUnit XML reports (cli/junit.c) ------------------------------ */
typedef enum {
    CLI_JUNIT_PASSED = 0,
    CLI_JUNIT_FAILURE = 1,   /* a check found a problem */
    CLI_JUNIT_ERROR = 2,     /* it could not run, or the backend crashed */
    CLI_JUNIT_SKIPPED = 3
} cli_junit_outcome;
typedef struct {
    const char *classname;   /* "sebt.validate.parity" */
    const char *name;        /* the data set or fixture */
    double seconds;
    cli_junit_outcome outcome;
    const char *message;     /* one line, for failures, errors and skips */
    const char *text;        /* the divergence and the replay command; may be NULL */
    const char *output;      /* <system-out>; may be NULL */
} cli_junit_case;
/* Writes FILE atomically; prints and returns 2 when it cannot, else 0. */
int cli_junit_write(const char *cmd, const char *path, const char *suite, const cli_junit_case *cases,
                    size_t n);

/* The path of rel under sebt's shared files (sebt_data_dir():
 * SEBT_SHARE_DIR, else PREFIX/share/sebt of this installation or build
 * folder), as "fixtures/data". The same rel gives the same pointer, valid
 * for the life of the process. When nothing was found it names where an
 * installed sebt would have it, so the error that follows says where. */
const char *cli_share(const char *rel);
/* fixtures receives the folder holding data/ and regressions/, combos
 * the parity combos file (both under cli_share). */
void cli_share_paths(char *fixtures, size_t fsize, char *combos, size_t csize);

/* ---- the oracle's commands, parity and fuzz (cli/cmd_parity.c) ----- */
/* Like cli_select_backend, and also "mutant:NAME" (the oracle's test
 * subjects, never in the public registry). */
int cli_select_oracle_backend(const char *cmd, const char *name, const sebt_backend **out);
/* One divergence as a JSON object (bar and ts null when none applies). */
void cli_json_divergence(cli_json *j, const char *key, const sebt_divergence *d);
/* How a checked backend's analysis columns were judged, one line for
 * people: "analysis columns: ..." (from its walk: compared on `compared`
 * combos under its contract; else from its trades, compared as trades). */
void cli_analysis_line(const sebt_backend *b, bool from_walk, size_t compared, char *buf, size_t size);
/* The same for JSON: "walk" or "trades". */
const char *cli_analysis_source(bool from_walk);

#endif
