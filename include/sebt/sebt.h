/* The sebt library: what every backend and tool shares (core/). */
#ifndef SEBT_SEBT_H
#define SEBT_SEBT_H

#include <stdarg.h>
#include <stdio.h>

#include "sebt/backend.h"
#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEBT_VERSION "0.1.0"

/* ---- errors (core/error.c) --------------------------------------------- */

#if defined(__GNUC__)
#define SEBT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SEBT_PRINTF(a, b)
#endif

/* Sets err (when not NULL) and returns code, so a caller can write
 * `return sebt_fail(err, SEBT_ERR_INPUT, "%s:%zu: ...", ...);`. */
sebt_status sebt_fail(sebt_error *err, sebt_status code, const char *fmt, ...) SEBT_PRINTF(3, 4);
void sebt_error_clear(sebt_error *err);
const char *sebt_status_name(sebt_status code);
/* Text from outside (an option, a file's bytes, a kernel's message) made
 * safe to show on one line: control bytes (escape sequences, bells, line
 * breaks that would start a fake line) written as \\n, \\r, \\t or \\xHH;
 * other bytes, UTF-8 included, as they are. Reads n bytes of p (NUL bytes
 * too), writes at most max bytes to out, always NUL-terminated (max > 0);
 * returns out. */
char *sebt_text_visible(const void *p, size_t n, char *out, size_t max);

/* ---- series (core/series.c) -------------------------------------------- */

/* Allocates n bars (all arrays), zeroed. */
sebt_status sebt_series_alloc(sebt_series *s, size_t n, sebt_error *err);
void sebt_series_free(sebt_series *s);
/* Copies bars [from, from+count) of src into a new series dst. */
sebt_status sebt_series_slice(const sebt_series *src, size_t from, size_t count,
                              sebt_series *dst, sebt_error *err);
/* Marks bar t missing (all five values NaN). */
void sebt_series_set_missing(sebt_series *s, size_t t);
bool sebt_series_is_missing(const sebt_series *s, size_t t);
/* Checks SPEC §1 for every bar: increasing ts, each bar present or missing.
 * The message names the first offending bar. */
sebt_status sebt_series_check(const sebt_series *s, sebt_error *err);
/* Recounts n_missing and interval_ms from the bars. */
void sebt_series_recount(sebt_series *s);

/* ---- parameters (core/params.c) ---------------------------------------- */

extern const sebt_param_info sebt_param_table[SEBT_N_PARAMS];

/* SPEC §2 defaults. */
sebt_params sebt_params_default(void);
/* Index into sebt_param_table, or -1. Names are matched exactly. */
int sebt_param_index(const char *name);
/* "Did you mean": the index of the name in names[0..n) (NULL entries
 * skipped) nearest word, when it is a likely typo of it (edits counted as
 * insertions, deletions, substitutions and swaps of neighbours: at most 1
 * for a word of up to 4 characters, 2 up to 8, 3 beyond; the first such
 * name wins a tie; word itself when it is a name), or -1 when none is that
 * near. */
int sebt_nearest_name(const char *word, const char *const *names, size_t n);
/* Parses value (ints as decimal, doubles as strtod, booleans true|false)
 * into the named field. Range rules are checked by sebt_params_validate. */
sebt_status sebt_params_set(sebt_params *p, const char *name, const char *value,
                            sebt_error *err);
/* SPEC §2 rules (sebt_param_table); the message names the parameter, the
 * value and the rule. */
sebt_status sebt_params_validate(const sebt_params *p, sebt_error *err);
/* Parameter idx's rule in words ("must be finite and > 0"; "" for none). */
void sebt_param_rule(int idx, char *buf, size_t bufsize);
/* Formats field idx of p: ints as %d, doubles as sebt_format_double
 * (sebt/number.h: shortest exact), booleans true|false. */
void sebt_params_format(const sebt_params *p, int idx, char *buf, size_t bufsize);
double sebt_params_get_double(const sebt_params *p, int idx); /* any type, as double */
/* Every parameter the same, bit for bit (field by field: struct padding
 * makes memcmp of sebt_params meaningless). */
bool sebt_params_same(const sebt_params *a, const sebt_params *b);

/* ---- the strategy's columns and terms (core/strategy.c) ---------------- */

/* A feature column of sebt/strategy.def: its name, inputs and the
 * parameter that sets its window ("" for none). */
typedef struct {
    const char *name;
    const char *inputs;
    const char *window;
} sebt_feature_info;
extern const sebt_feature_info sebt_feature_table[SEBT_N_FEATURES];
/* Index into sebt_feature_table, or -1. */
int sebt_feature_index(const char *name);

/* A signal term of SPEC §4 (sebt/strategy.def): col[column] cmp rhs, where
 * rhs is the column rhs_column or, when that is -1, the parameter
 * rhs_param; enable is the boolean parameter that switches the term on, or
 * -1 for a term that always holds a place in the signal. */
typedef enum { SEBT_CMP_LT, SEBT_CMP_GT, SEBT_CMP_LE } sebt_cmp;
typedef struct {
    const char *name;
    int column;
    sebt_cmp cmp;
    int rhs_column;
    int rhs_param;
    int enable;
} sebt_term_info;
extern const sebt_term_info sebt_term_table[SEBT_N_TERMS];
/* Whether term k is part of p's signal (always, or switched on). */
bool sebt_term_on(int k, const sebt_params *p);

/* ---- features and results (core/results.c) ----------------------------- */

sebt_status sebt_features_alloc(sebt_features *f, size_t n, sebt_error *err);
void sebt_features_free(sebt_features *f);
void sebt_result_free(sebt_result *r);
void sebt_results_free(sebt_result *r, size_t n);
/* What a backend's features checks before computing (backend.h): series,
 * params and out given, out sized for the series, the params' SPEC §2 and
 * the series' SPEC §1. who ("fast_cpu") names the backend in the message. */
sebt_status sebt_features_check(const char *who, const sebt_series *s, const sebt_params *p,
                                const sebt_features *out, sebt_error *err);
/* What a backend's run_batch checks before running any combo: series,
 * combos and results given, every combo's SPEC §2 (the message names the
 * combo), the series' SPEC §1. */
sebt_status sebt_batch_check(const char *who, const sebt_series *s, const sebt_params *combos,
                             size_t n_combos, const sebt_result *results, sebt_error *err);
const char *sebt_exit_reason_name(sebt_exit_reason reason); /* stop_gap|stop|tp|time */
/* An exit outcome 0 .. SEBT_EXIT_KINDS (types.h) by name: the reasons' and
 * "no exit"; NULL for anything else (v need not be a whole number). */
const char *sebt_exit_outcome_name(double v);
/* The reason named name[0 .. len): true and *out set, or false. */
bool sebt_exit_reason_parse(const char *name, size_t len, sebt_exit_reason *out);

/* ---- result checks (core/check.c) --------------------------------------
 * What every caller of a backend runs before it prints or writes a result
 * (the sebt command does, for every backend and plugin): SPEC's invariants
 * that hold whatever the arithmetic (counts, ranges, indices, exit reasons,
 * flag bytes; never values that rounding may change). A violation is
 * SEBT_ERR_INTERNAL naming the backend, the combo (its index in the caller's
 * numbering: combo_ids[i], or i when NULL) and the field. */
sebt_status sebt_result_check(const sebt_backend *b, const sebt_series *s, const sebt_params *p,
                              size_t combo, const sebt_result *r, sebt_error *err);
sebt_status sebt_results_check(const sebt_backend *b, const sebt_series *s, const sebt_params *combos,
                               const size_t *combo_ids, size_t n, const sebt_result *results, sebt_error *err);
sebt_status sebt_features_result_check(const sebt_backend *b, const sebt_series *s, const sebt_features *f,
                                sebt_error *err);
/* Makes a backend's failure honest: st as returned, err as filled. An
 * unknown status becomes SEBT_ERR_INTERNAL; err->code is set to st; an
 * empty message is replaced by one naming the backend and the status. So
 * a failure can never read as "ok". */
sebt_status sebt_backend_status(const sebt_backend *b, sebt_status st, sebt_error *err);
/* b->run_batch / b->features, then sebt_backend_status and the checks. */
sebt_status sebt_backend_run(const sebt_backend *b, const sebt_series *s, const sebt_params *combos,
                             size_t n_combos, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err);
sebt_status sebt_backend_features(const sebt_backend *b, const sebt_series *s, const sebt_params *p,
                                  sebt_features *out, sebt_error *err);

/* ---- loader (core/loader.c) -------------------------------------------- */

typedef struct {
    bool lenient;      /* a rejected bar becomes a missing bar, counted */
    bool fill_gaps;    /* timestamp skips become missing bars at the series' interval */
} sebt_load_opts;

/* Loads a CSV with a header (columns found by name) or a headerless Binance
 * kline file; gzip-compressed files (.gz) are read transparently. Errors
 * name path:line:column and what was expected. */
sebt_status sebt_load_csv(const char *path, const sebt_load_opts *opts,
                          sebt_series *out, sebt_error *err);
/* The same over a buffer in memory; name is used in messages. */
sebt_status sebt_load_csv_buffer(const char *name, const char *data, size_t len,
                                 const sebt_load_opts *opts, sebt_series *out,
                                 sebt_error *err);
/* The series cache (core/series_cache.c, docs/big-sweeps.md): a file that
 * was parsed once is read back as its binary arrays. An entry is named by
 * the XXH3-128 of the file's bytes, the options and the loader's build ID,
 * and carries a checksum over itself; a damaged entry is parsed again and
 * replaced. Files under 256 KiB are not kept; the folder keeps the 16 most
 * recently used entries. cache_dir NULL or "" loads as sebt_load_csv.
 * Keeping an entry is best effort: a folder that cannot be written changes
 * nothing but the time. *use says what happened. A hit's arrays lie in a
 * private mapping of the entry (writable; writes stay in this process):
 * free the series with sebt_series_free, never its arrays one by one. */
typedef enum {
    SEBT_CACHE_OFF,            /* no folder, or no cache in this build */
    SEBT_CACHE_SMALL,          /* the file is too small to keep */
    SEBT_CACHE_HIT,            /* read from the cache */
    SEBT_CACHE_STORED,         /* parsed, and kept for next time */
    SEBT_CACHE_NOT_STORED,     /* parsed; the entry could not be written */
    SEBT_CACHE_REPLACED,       /* a damaged entry was found: parsed, and replaced */
    SEBT_CACHE_BAD_NOT_STORED, /* a damaged entry was found: parsed; not replaced */
    /* In the entry's place, something that is not a regular file of this
     * user (a FIFO, a device, a link, another user's file in a shared
     * folder): never opened for reading nor trusted; the file is parsed. */
    SEBT_CACHE_UNTRUSTED_REPLACED,   /* ... and the entry replaced */
    SEBT_CACHE_UNTRUSTED_NOT_STORED, /* ... the entry could not be replaced */
    SEBT_CACHE_NO_MEMORY       /* no memory to look the file up: parsed without the cache */
} sebt_cache_use;
sebt_status sebt_load_csv_cached(const char *path, const sebt_load_opts *opts, const char *cache_dir,
                                 sebt_series *out, sebt_cache_use *use, sebt_error *err);
/* Whether this build can cache series (xxhash found, a build ID present). */
bool sebt_series_cache_available(void);

/* Checks every limit variable the library reads (SEBT_MAX_GAP_FILL,
 * SEBT_MAX_INFLATE_MB, SEBT_MAX_COMBOS, SEBT_MAX_STREAM_MB,
 * SEBT_FAST_CPU_MEMORY_MB; docs/cli.md "Limits"), set or not consulted: a
 * value that is set, not empty, and not a whole number >= 1 is
 * SEBT_ERR_USAGE naming the variable. A program calls it once at start-up,
 * so a mistyped limit fails every run, not only the one that needs it. */
sebt_status sebt_check_limit_env(sebt_error *err);

/* Writes a series as CSV (open_time,open,high,low,close,volume; missing bars
 * as nan) that sebt_load_csv reads back bit-exact. */
sebt_status sebt_write_csv(const sebt_series *s, FILE *f, sebt_error *err);

/* Reads a whole file into a malloc'd, NUL-terminated buffer (*len excludes
 * the NUL); errors name the path (core/loader_io.c). */
sebt_status sebt_read_file(const char *path, char **text, size_t *len, sebt_error *err);
/* Opens a file the user named, for reading: what every reader of an input
 * goes through. A device (/dev/zero, /dev/urandom, a disk), a socket or a
 * folder is refused (SEBT_ERR_INPUT) before a byte is read; so is a FIFO or
 * pipe unless stream_ok (the reader bounds what it reads from one, as
 * sebt_read_file does with SEBT_MAX_STREAM_MB; a reader that seeks or
 * measures its file passes false). Never blocks on a FIFO without a
 * writer when it refuses it. */
sebt_status sebt_open_input(const char *path, bool stream_ok, FILE **f, sebt_error *err);

/* ---- where sebt's own files are (core/paths.c) ------------------------- */

/* Found relative to the program or library holding sebt's code, never at a
 * path fixed when it was built: an installed prefix can be moved, and a
 * build folder has the same layout. */

/* The folder of sebt's shared files, PREFIX/share/sebt: fixtures/ (the
 * bundled data/ and regressions/), parity-combos.csv, plugin-template/,
 * cuda-host/, peers/. $SEBT_SHARE_DIR overrides it. NULL when not found. */
const char *sebt_data_dir(void);
/* The path of one of sebt's own programs or modules by file name:
 * PREFIX/lib/sebt/NAME (libsebt_cuda.so, libsebt_mpi.so,
 * libsebt_cuda_host.so, sebt_bench), or PREFIX/bin/sebt for "sebt". True
 * when the file is there; false with path naming where it was looked for. */
bool sebt_part_path(const char *name, char *path, size_t size);

/* ---- backends (core/registry.c) ---------------------------------------- */

/* The backends built into this binary, in a stable order. The cuda backend
 * is listed when its library was built; it is only opened (dlopen) by
 * sebt_backend_get("cuda"). */
size_t sebt_backend_count(void);
const char *sebt_backend_name_at(size_t i);
/* Looks a backend up by name, opening it if needed. Unknown names fail with
 * a message that lists the valid ones. */
sebt_status sebt_backend_get(const char *name, const sebt_backend **out, sebt_error *err);

/* A backend value that is a kernel command: it starts with "exec:", and
 * the rest is a shell command that serves the kernel protocol on its stdin
 * and stdout (docs/kernel-protocol.md). It is never a plugin path. */
bool sebt_backend_is_kernel(const char *value);
/* The kernel protocol version this sebt speaks (docs/kernel-protocol.md:
 * Versions); a kernel speaking another is refused at its handshake. */
#define SEBT_KERNEL_PROTOCOL_VERSION 2
/* Ends every kernel process this process started (sending BYE, then ending
 * its process group) and reaps them. Runs at exit by itself; a forked child
 * that leaves with _exit calls it first. */
void sebt_kernels_close(void);
/* Kills the process group of every kernel this process started, at once
 * (SIGKILL, no BYE, nothing reaped): what a SIGINT/SIGTERM/SIGHUP handler
 * calls, since a kernel behind `/bin/sh -c` does not die with the shell.
 * Async-signal-safe. */
void sebt_kernels_kill(void);
/* Reproducers of a kernel's protocol faults (SEBT_ERR_PROTOCOL, SEBT_ERR_TIMEOUT:
 * docs/kernel-protocol.md). sebt_kernel_record makes kernel b keep every
 * byte sent to its process since the handshake (up to 256 MiB, in a
 * temporary file); after a fault, sebt_kernel_save_requests writes the
 * requests that led to it to path (SEBT_ERR_UNAVAILABLE when none were
 * kept), and sebt_kernel_replay sends such a file's requests to a fresh
 * process of b, one at a time, checking every reply as the calls do: it
 * returns the fault again (the request numbered as before), or SEBT_OK
 * with *replayed requests answered well. */
sebt_status sebt_kernel_record(const sebt_backend *b, sebt_error *err);
sebt_status sebt_kernel_save_requests(const sebt_backend *b, const char *path, sebt_error *err);
sebt_status sebt_kernel_replay(const sebt_backend *b, const char *path, uint64_t *replayed, sebt_error *err);
/* A limit on kernel b's RUN and FEATURES requests by their work: from now
 * on each may take limit(user, combos, bars) seconds to be answered,
 * instead of the fixed SEBT_KERNEL_TIMEOUT, and a hang past it names `why`
 * (what the limit is, for people). NULL limit: back to the fixed one. The
 * handshake keeps the fixed limit, and a SEBT_KERNEL_TIMEOUT set in the
 * environment wins over any limit set here. sebt validate sets its call
 * limit this way (docs/validate.md). */
typedef double (*sebt_kernel_limit_fn)(void *user, size_t combos, size_t bars);
sebt_status sebt_kernel_set_limit(const sebt_backend *b, sebt_kernel_limit_fn limit, void *user, const char *why,
                                  sebt_error *err);
/* A backend value that names a plugin: it contains '/' or ends in ".so",
 * and is not a kernel command. */
bool sebt_backend_is_path(const char *value);
/* Opens the plugin at path (include/sebt/plugin.h), once per process: an
 * ABI mismatch, a missing entry point or a malformed table is an error
 * (SEBT_ERR_USAGE) naming the path; SEBT_ERR_NODEVICE when the plugin says
 * it has no device. sebt_backend_get does this for path values. */
sebt_status sebt_plugin_open(const char *path, const sebt_backend **out, sebt_error *err);
/* What to pass to --backend to get b again: a plugin's absolute path, a
 * kernel's command (quoted for a POSIX shell when it needs quoting), else
 * its name. Reproducer commands print this, so they work when pasted. */
const char *sebt_backend_selector(const sebt_backend *b);

#ifdef __cplusplus
}
#endif

#endif
