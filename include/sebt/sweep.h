/* Streamed sweeps (core/sweep.c) and the sweep's row formats
 * (core/sweep_rows.c): the driver `sebt sweep` runs, as a library call.
 *
 * sebt_sweep_run backtests n combos a window at a time (65,536 by
 * default): window k+1 is backtested while a writer thread hands window k
 * to the caller's callback, so memory is two windows whatever n is. Every
 * result is checked (sebt_result_check, then sebt_result_fits) before its
 * window is handed over; windows come in input order, one at a time, so
 * what a callback writes is what a serial writer would write. Optionally
 * the driver formats each window's rows (CSV or npy, the bytes `sebt
 * sweep` writes) and keeps the K best combos by a metric.
 *
 * Plain C types only, so it can be called through a foreign function
 * interface (Python's ctypes): a callback per window, arrays and sizes. */
#ifndef SEBT_SWEEP_API_H
#define SEBT_SWEEP_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sebt/analysis.h"
#include "sebt/backend.h"
#include "sebt/grid.h"
#include "sebt/sebt.h"
#include "sebt/shard.h"
#include "sebt/types.h"
#include "sebt/where.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- metrics and ranking -------------------------------------------------- */

/* The metrics a sweep ranks by, in the order of its output columns. */
typedef enum {
    SEBT_METRIC_N = 0,
    SEBT_METRIC_WIN_RATE,
    SEBT_METRIC_AVG_R,
    SEBT_METRIC_TOTAL_PNL,
    SEBT_METRIC_MAX_DD,
    SEBT_METRIC_SHARPE,
    SEBT_N_METRICS
} sebt_metric;

/* The metric's column name ("n", "win_rate", ...), or NULL out of range. */
const char *sebt_metric_name(int metric);
/* The metric named name, or -1. */
int sebt_metric_index(const char *name);
double sebt_metric_value(const sebt_metrics *m, int metric);
/* < 0 when combo a (metrics ma) ranks before combo b: best first (higher
 * is better), NaN last, ties by input index, so the ranking is total. */
int sebt_rank_compare(const sebt_metrics *ma, uint64_t a, const sebt_metrics *mb, uint64_t b, int metric);

/* ---- rows --------------------------------------------------------------------
 * CSV: combo (0-based input index), the parameters, n, win_rate, avg_r,
 * total_pnl, max_dd, sharpe, open_at_end (0|1), valid_bars; shortest
 * round-trip numbers, "nan" for NaN; '\n' after each row.
 * npy: the same columns as a NumPy structured array, format 1.0,
 * little-endian, packed (docs/formats.md); NaN as 0x7ff8000000000000. */
typedef enum { SEBT_ROWS_NONE = 0, SEBT_ROWS_CSV = 1, SEBT_ROWS_NPY = 2 } sebt_rows_format;

#define SEBT_CSV_ROW_MAX 2048
#define SEBT_NPY_ROW_MAX 512
#define SEBT_NPY_HEADER_MAX 4096

/* One CSV row into b (SEBT_CSV_ROW_MAX bytes, no NUL); returns its length. */
size_t sebt_sweep_csv_row(char *b, uint64_t combo, const sebt_params *p, const sebt_result *r);
/* The CSV header line (with its '\n') into b of size bytes; returns its
 * length, or 0 when it does not fit. */
size_t sebt_sweep_csv_header(char *b, size_t size);
/* Bytes of one npy row (the same for every row). */
size_t sebt_sweep_npy_row_bytes(void);
/* One npy row into b (SEBT_NPY_ROW_MAX bytes); returns sebt_sweep_npy_row_bytes(). */
size_t sebt_sweep_npy_row(unsigned char *b, uint64_t combo, const sebt_params *p, const sebt_result *r);
/* The npy preamble and header dict of an array of n_rows rows into b
 * (SEBT_NPY_HEADER_MAX bytes); returns its length, a multiple of 64. */
size_t sebt_sweep_npy_header(char *b, uint64_t n_rows);

/* Whether r can be written: every metric, trade and open-position value
 * finite. A sweep never writes one that is not (docs/decisions.md); err
 * (SEBT_ERR_INPUT) names combo, the value and the parameters that may
 * have caused it. */
sebt_status sebt_result_fits(const sebt_params *p, uint64_t combo, const sebt_result *r, sebt_error *err);

/* ---- the analysis columns ------------------------------------------------------
 * With opts.analysis (`sebt sweep --analysis`), each row gains, after
 * valid_bars, what `sebt run` shows under "analysis" (sebt/analysis.h):
 * exits_stop_gap, exits_stop, exits_tp, exits_time (int), gross_profit,
 * gross_loss, profit_factor (NaN when no trade lost), bars_in_market
 * (int), exposure, sharpe_annual. The _ex functions below take them: a
 * NULL a (or analysis false) gives the plain row, the bytes of the
 * functions without _ex. */
#define SEBT_SWEEP_N_ANALYSIS 10

/* ---- the relative columns ----------------------------------------------------
 * With opts.relative (`sebt sweep --relative`, which implies --analysis),
 * each row gains, after the analysis columns, the relative measures of
 * `sebt run` (sebt/analysis.h, at the default capital and fraction; not
 * capital, fraction and final_equity, which say nothing a percentage does
 * not): total_return_pct, annual_return_pct, buy_hold_pct,
 * volatility_pct, return_sharpe, return_sortino, calmar, max_dd_pct,
 * avg_dd_pct, longest_dd_bars (int), best_trade_pct, worst_trade_pct,
 * avg_trade_pct, expectancy_pct, avg_trade_bars, longest_trade_bars (int),
 * sqn. Column i of the functions below is analysis column i for
 * i < SEBT_SWEEP_N_ANALYSIS, relative column i - SEBT_SWEEP_N_ANALYSIS
 * after. A row's a writes them when a->has_relative. */
#define SEBT_SWEEP_N_RELATIVE 17
#define SEBT_SWEEP_N_EXTRA (SEBT_SWEEP_N_ANALYSIS + SEBT_SWEEP_N_RELATIVE)

/* Which extra columns a sweep's rows have: the functions below taking
 * `int cols` take one of these (false and true read as the first two). */
enum { SEBT_COLS_PLAIN = 0, SEBT_COLS_ANALYSIS = 1, SEBT_COLS_RELATIVE = 2 };
/* The extra columns cols has: 0, SEBT_SWEEP_N_ANALYSIS or SEBT_SWEEP_N_EXTRA. */
int sebt_sweep_extra_count(int cols);
/* The columns a row's analysis a writes: SEBT_COLS_PLAIN for NULL. */
int sebt_sweep_row_cols(const sebt_trade_stats *a);

/* The analysis (or relative) column i's name, or NULL out of range. */
const char *sebt_sweep_analysis_name(int i);
/* Whether it is a count (an int64_t: the exits, bars_in_market; npy '<i8'). */
bool sebt_sweep_analysis_is_count(int i);
/* Its value as a double (the counts converted), and the reverse: sets
 * column i of a to v (a count from its whole value). */
double sebt_sweep_analysis_value(const sebt_trade_stats *a, int i);
void sebt_sweep_analysis_set(sebt_trade_stats *a, int i, double v);

/* What a sweep with the analysis columns can rank by (opts.metric): a
 * sebt_metric, or SEBT_N_METRICS + i for analysis column i. */
#define SEBT_SWEEP_N_RANK_KEYS (SEBT_N_METRICS + SEBT_SWEEP_N_EXTRA)
/* The key named name (a metric or an analysis column), or -1. */
int sebt_sweep_rank_key(const char *name);
/* The key's name, or NULL out of range. */
const char *sebt_sweep_rank_name(int key);
/* sebt_rank_compare over records, by any key (an analysis key reads
 * record->analysis): best first, NaN last, ties by input index. */
int sebt_sweep_record_compare(const sebt_sweep_record *a, const sebt_sweep_record *b, int key);

size_t sebt_sweep_csv_row_ex(char *b, uint64_t combo, const sebt_params *p, const sebt_result *r,
                             const sebt_trade_stats *a);
size_t sebt_sweep_csv_header_ex(char *b, size_t size, int cols);
size_t sebt_sweep_npy_row_bytes_ex(int cols);
size_t sebt_sweep_npy_row_ex(unsigned char *b, uint64_t combo, const sebt_params *p, const sebt_result *r,
                             const sebt_trade_stats *a);
size_t sebt_sweep_npy_header_ex(char *b, uint64_t n_rows, int cols);

/* ---- columns for conditions ---------------------------------------------------- */

/* A sweep row's columns, in the CSV's order: combo, the parameters, the
 * metrics, open_at_end, valid_bars (and, in the _ex forms with analysis,
 * the analysis columns). */
#define SEBT_SWEEP_N_COLUMNS (1 + SEBT_N_PARAMS + SEBT_N_METRICS + 2)
#define SEBT_SWEEP_MAX_COLUMNS (SEBT_SWEEP_N_COLUMNS + SEBT_SWEEP_N_EXTRA)
/* Fills names (the CSV header's) and is_bool (the parameters written
 * true|false), SEBT_SWEEP_N_COLUMNS entries each; returns their count. */
size_t sebt_sweep_columns(const char **names, bool *is_bool);
size_t sebt_sweep_columns_ex(const char **names, bool *is_bool, int cols);
/* Compiles a condition over a sweep's columns (sebt/where.h). Without
 * analysis, a condition naming an analysis column fails (SEBT_ERR_USAGE)
 * saying that it needs the analysis columns. */
sebt_status sebt_sweep_where(const char *text, sebt_where **out, sebt_error *err);
sebt_status sebt_sweep_where_ex(const char *text, int cols, sebt_where **out, sebt_error *err);
/* Whether the row of combo (parameters p, result r) passes w. */
bool sebt_sweep_row_passes(const sebt_where *w, uint64_t combo, const sebt_params *p, const sebt_result *r);
/* The same for a condition compiled with analysis; a: the row's analysis. */
bool sebt_sweep_row_passes_ex(const sebt_where *w, uint64_t combo, const sebt_params *p, const sebt_result *r,
                              const sebt_trade_stats *a);

/* ---- the driver ---------------------------------------------------------------- */

/* Combos per window unless sebt_sweep_opts.window says otherwise. */
#define SEBT_SWEEP_WINDOW ((size_t)65536)
/* Most pieces a window's rows come in (one per formatting thread). */
#define SEBT_SWEEP_MAX_PARTS 64

/* One window, handed to the callback. Valid during the call only. */
typedef struct {
    uint64_t first;                /* input index of combos[0] */
    size_t count;
    const sebt_params *combos;     /* count combos */
    const sebt_result *results;    /* count results, checked; trades only with want_trades */
    /* The window's rows in opts.rows' format: n_parts pieces, to be
     * written one after another (none with SEBT_ROWS_NONE). */
    int n_parts;
    const char *const *part;
    const size_t *part_bytes;
    /* With opts.where: passes[k] says whether combo first + k passed (only
     * those are in the rows and the top); NULL without a condition. */
    const bool *passes;
    /* Where each combo's row is, so a reader finds one without scanning
     * the rows before it (none with SEBT_ROWS_NONE): piece i holds the
     * rows of combos first + part_first[i] up to first + part_first[i + 1]
     * (the window's end for the last piece), and the row of combo
     * first + k starts row_at[k] bytes into its piece (SIZE_MAX: it has
     * no row, failing opts.where). */
    const size_t *part_first;
    const size_t *row_at;
    /* With opts.analysis: count analysis rows (sebt/analysis.h), else NULL. */
    const sebt_trade_stats *analysis;
} sebt_sweep_window;

/* What a sweep's own proof checked (sebt/sweep_proof.h): the record a
 * verified output carries (docs/formats.md "Verification"). */
typedef struct {
    bool done;                     /* a proof ran and found no difference */
    int version;                   /* SEBT_VERIFICATION_VERSION */
    size_t best;                   /* best combos re-run on the reference (see best_whole_reference) */
    size_t sampled;                /* combos recomputed on the exact path */
    bool series_fresh_checked;     /* the series came from the cache and equalled a fresh parse */
    bool rows_read_back;           /* the sampled rows were read back from the file written */
    uint64_t seed;                 /* the sample's */
    double seconds;                /* the proof's own wall time */
    double sweep_seconds;          /* the sweep's, before the proof */
    /* The best combos ran on the whole reference (every bar's z-scores,
     * `--verify full`), else on its columns, signal and walk with the
     * z-scores only where the signal reads them. */
    bool best_whole_reference;
} sebt_sweep_verification;

/* Called once per window, in input order, from one thread at a time (the
 * driver's writer thread, which runs beside the backtests of the next
 * window). A nonzero return stops the sweep: no later window is handed
 * over and sebt_sweep_run returns SEBT_OK with stopped set to it. */
typedef int (*sebt_sweep_window_fn)(void *user, const sebt_sweep_window *w);

typedef struct {
    /* The combos: a grid (sebt_grid_open: made a window at a time) or an
     * array (combos); n_combos of them. */
    const sebt_grid *grid;
    const sebt_params *combos;
    size_t n_combos;
    int threads;                   /* 0: the backend's default */
    size_t window;                 /* 0: SEBT_SWEEP_WINDOW */
    bool want_trades;              /* results carry their trades */
    sebt_rows_format rows;
    size_t top;                    /* keep the top best combos (0: none) */
    int metric;                    /* what top ranks by (sebt_metric; with analysis, any sebt_sweep_rank_key) */
    /* Only combos whose row passes this condition (sebt_sweep_where) are
     * formatted and ranked; NULL: all. */
    const sebt_where *where;
    sebt_sweep_window_fn on_window;   /* may be NULL */
    void *user;
    sebt_progress_fn progress;     /* combos done of n_combos; may be NULL */
    void *progress_user;
    /* The analysis columns (above): each combo is run with its trades,
     * its sebt_trade_stats_of taken, and the trades then dropped unless
     * want_trades. The rows, the condition, the window's analysis and the
     * top's records carry them. Slower than metrics only (the backends'
     * trade-recording path; docs/cli.md gives figures). Every trade of a
     * window is held until its analysis is taken, so unless window says
     * otherwise the windows are sized by their trades: the first is
     * SEBT_SWEEP_ANALYSIS_WINDOW combos, each later one as many (at least
     * that, at most SEBT_SWEEP_WINDOW) as hold about
     * SEBT_SWEEP_ANALYSIS_BYTES of trades at the window before's trades
     * per combo. The rows are the same whatever the windows. */
    bool analysis;
    /* The relative columns (above) after the analysis columns; implies
     * analysis, from the same trades (so never from a backend's tallies). */
    bool relative;
    /* The driver's own proof of what it hands out (sebt/sweep_proof.h):
     * SEBT_VERIFY_DEFAULT (0) runs it once the last window is handed over:
     * the series (when series_file is set) against a fresh parse, the best
     * combo (by metric) on the reference's walk (its z-scores where read),
     * at least SEBT_VERIFY_MIN sampled combos on the exact path; a difference fails the sweep with
     * SEBT_ERR_VERIFY, err naming the combo, the field and both values.
     * SEBT_VERIFY_OFF: none (a caller that runs the proof itself on the
     * file it wrote, as `sebt sweep` does). */
    int verify;
    size_t verify_n;               /* sampled combos whatever the time (0: at least SEBT_VERIFY_MIN) */
    bool verify_seeded;            /* verify_seed draws the sample (else the clock) */
    uint64_t verify_seed;
    /* The series' file and load options when the series came from the
     * series cache (sebt_load_csv_cached said SEBT_CACHE_HIT): the proof
     * compares it with a fresh parse. NULL: the series was parsed. */
    const char *series_file;
    sebt_load_opts series_load;
    /* The file the caller writes every window's formatted rows to (rows
     * CSV or npy, every part in order, after verify_file_start bytes of
     * its own), flushed by the time on_window returns for the last window:
     * the proof reads its sampled rows back from there, as written. NULL:
     * it compares what it handed over. */
    const char *verify_file;
    uint64_t verify_file_start;
    /* What `--overfit` needs (sebt/overfit.h, sebt_overfit_gathered),
     * gathered as the sweep goes, so that it needs no second run: with
     * relative (the trade path) from each combo's trades; without, from a
     * backend whose metrics-only walk sums the block statistics
     * (sebt_backend_blocks_batch: fast_cpu), want_trades off. NULL:
     * nothing gathered. */
    const struct sebt_overfit_gather *overfit;
} sebt_sweep_opts;

enum { SEBT_VERIFY_DEFAULT = 0, SEBT_VERIFY_OFF = 1 };

#define SEBT_SWEEP_ANALYSIS_WINDOW ((size_t)256)
#define SEBT_SWEEP_ANALYSIS_BYTES ((size_t)128 << 20)

typedef struct {
    /* The kept combos, best first (opts.top > 0); free with sebt_sweep_result_free. */
    sebt_sweep_record *top;
    size_t n_top;
    size_t combos_done;            /* handed to the callback, checked */
    size_t combos_passed;          /* of those, the ones opts.where let through (all without it) */
    int stopped;                   /* the callback's nonzero return, else 0 */
    /* Wall and CPU (the whole process) seconds inside the backends. */
    double compute_s, compute_cpu_s;
    /* Rows were formatted by the backtests' threads between windows (CSV
     * without trades, when they take every core), else by the writer thread. */
    bool rows_by_backtest_threads;
    /* What the driver's own proof checked (opts.verify). */
    sebt_sweep_verification verification;
} sebt_sweep_result;

/* Runs the sweep. Errors: SEBT_ERR_USAGE (bad options), SEBT_ERR_NOMEM,
 * a backend's failure, SEBT_ERR_INTERNAL (a result failing
 * sebt_result_check), SEBT_ERR_INPUT (a result that does not fit,
 * sebt_result_fits); the windows before it were handed over. */
sebt_status sebt_sweep_run(const sebt_backend *b, const sebt_series *s, const sebt_sweep_opts *opts,
                           sebt_sweep_result *out, sebt_error *err);
void sebt_sweep_result_free(sebt_sweep_result *r);

/* ---- a sweep's own proof (core/sweep_verify.c) ------------------------------ */

/* Decodes one npy row (sebt_sweep_npy_row's bytes) into its combo index,
 * parameters and record (record->combo = the index). */
void sebt_sweep_npy_row_read(const unsigned char *b, uint64_t *combo, sebt_params *p, sebt_sweep_record *r);
/* The same for a row with or without the analysis columns (then
 * record->has_analysis and record->analysis; its years is 0). */
void sebt_sweep_npy_row_read_ex(const unsigned char *b, int cols, uint64_t *combo, sebt_params *p,
                                sebt_sweep_record *r);

/* k distinct indices of [0, n), in the order drawn from seed (splitmix64):
 * the same (seed, n, k) gives the same indices on every machine, and the
 * first j of k draws are the j draws of the same seed. k <= n. */
sebt_status sebt_sweep_sample(uint64_t seed, uint64_t n, size_t k, uint64_t *out, sebt_error *err);

typedef struct {
    size_t checked;            /* combos the reference ran */
    size_t differ;             /* of them, how many differ */
    uint64_t first_differ;     /* input index of the first that differs */
    char what[480];            /* how it differs: the field, the value written, the reference's */
    double seconds;            /* the reference's wall time */
} sebt_verify_report;

/* Runs the reference on combos[0..n) (threads: 0 every core; with at
 * least as many combos as threads the combos are shared out, one thread
 * each; with fewer, each runs alone on every thread, the reference sharing
 * out the bars of its rolling-z columns: the same bits) and compares each
 * result with got[i], what the sweep wrote for combo got[i].combo, under
 * cand's contract: exact: n, valid_bars, open_at_end and every metric bit
 * for bit (a NaN equals a NaN); tolerant: the doubles within cand's tol,
 * relative to the larger magnitude (at least 1). A record with
 * has_analysis is compared on its analysis columns too, from the
 * reference's trades (the counts exactly, the doubles as the metrics).
 * Returns SEBT_OK when the comparison ran; rep says what it found. */
sebt_status sebt_sweep_verify(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                              const sebt_sweep_record *got, size_t n, int threads, sebt_verify_report *rep,
                              sebt_error *err);

/* sebt_sweep_verify on an exact path cheap enough for thousands of combos,
 * on the reference's own code only (core/sweep_exact.c; none of a
 * backend's columns, signal bitsets, paired combos or cost-twin walks):
 * each column made once for the combos that share its window, the rolling
 * z-scores (the reference's whole cost, each window summed afresh) only at
 * the bars where a combo out of a position reads them, the signal, the
 * walk's steps and the metrics by the reference's functions. Compared as
 * sebt_sweep_verify compares. */
sebt_status sebt_sweep_verify_exact(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                    const sebt_sweep_record *got, size_t n, int threads, sebt_verify_report *rep,
                                    sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
