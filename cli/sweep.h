/* What `sebt sweep` and `sebt merge` share: the output writers, the shard
 * file format and the atomic file writer (cli/sweep_output.c). */
#ifndef SEBT_CLI_SWEEP_H
#define SEBT_CLI_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "sebt/outfile.h"
#include "sebt/overfit.h"
#include "sebt/sweep.h"
#include "sebt/sweep_proof.h"

/* The metrics, their names and the ranking are the library's (sebt/sweep.h). */
#define SWEEP_N_METRICS SEBT_N_METRICS
/* Rows `--format text` shows when --top is not given. */
#define SWEEP_TEXT_TOP 10

/* How the final output looks: what a shard file records so that `sebt
 * merge` writes the bytes the whole sweep would have written. */
typedef struct {
    bool json;
    bool npy;                  /* NumPy .npy structured array (docs/formats.md) */
    bool text;                 /* for people: the top combos, aligned (top 10 unless --top) */
    bool have_top;
    bool analysis;             /* the rows carry the analysis columns (streamed sweeps only) */
    bool relative;             /* and the relative columns after them */
    long top;
    int metric;                /* a sebt_metric (sharpe by default) */
    const sebt_where *where;   /* --where: only the combos that pass are ranked (NULL: all) */
    const char *backend;
    size_t bars;
    size_t n_combos;
    /* Called on the written file before it is published (NULL: none);
     * false, with why, discards it (exit 1: the previous file stays). */
    bool (*check_written)(void *ctx, const char *tmp, const size_t *rows, size_t n_rows, char *why,
                          size_t why_size);
    void *check_ctx;
} sweep_output_spec;

/* Writes the sweep's output for all spec->n_combos combos (results[i] is
 * combos[i]'s; only metrics, open_at_end.open and valid_bars are read)
 * to path (NULL or "-": stdout), atomically. With --top, rows_out (may be
 * NULL) receives the kept rows, best first, and *n_rows_out their count;
 * free it. Prints and returns an exit code. */
int sweep_write_output(const char *cmd, const char *path, const sweep_output_spec *spec,
                       const sebt_params *combos, const sebt_result *results, size_t **rows_out,
                       size_t *n_rows_out);

/* rows[0..k) = the indices of the n combos that pass where (all of them
 * when where is NULL), in input order; returns k. */
size_t sweep_passing(size_t *rows, size_t n, const sebt_where *where, const sebt_params *combos,
                     const sebt_result *results);

/* The ranking --top applies: rows[0..n) sorted best first (ties: input order). */
void sweep_rank(size_t *rows, size_t n, const sebt_result *results, int metric);

/* ---- shard files ------------------------------------------------------------
 * Line 1: "# sebt-shard 3 version=V shard=I/N combos=C rows=R bars=B
 *          data=HEX grid=HEX backend=NAME format=csv|json top=K by=METRIC
 *          verified=BEST/SAMPLED|no seed=HEX": the shard's own proof (its
 *          best combo on the reference, SAMPLED of its combos on the exact
 *          path; "no": run with --no-verify).
 * Line 2: the sweep's CSV header; then the shard's R rows in input order.
 * Last line: "# sebt-shard-end fnv1a64=HEX": the FNV-1a 64 hash (sebt_fnv1a)
 * of every byte before that line, so merge refuses a shard damaged or cut
 * anywhere. Format 1 had no checksum, format 2 no proof; merge refuses
 * them by their number. */
#define SWEEP_SHARD_FORMAT 3
#define SWEEP_SHARD_END "# sebt-shard-end fnv1a64="
typedef struct {
    char version[32];
    unsigned index, count;     /* shard I of N, 1-based */
    uint64_t combos, rows, bars;
    uint64_t data_fp, grid_fp;
    char backend[64];
    char format[8];
    long top;                  /* 0: no --top */
    char by[16];
    bool verified;             /* the shard proved its rows before writing them */
    uint64_t v_best, v_sampled;
    char seed[24];
} sweep_shard_header;

/* f hashes what is written to it, then passes it on to under. */
typedef struct {
    FILE *f;
    FILE *under;
    uint64_t h;
} hash_writer;
bool hash_writer_open(hash_writer *w, FILE *under);
/* Flushes and closes w->f; false when a write failed. */
bool hash_writer_close(hash_writer *w, uint64_t *hash);

void sweep_write_csv_header(FILE *f);
void sweep_write_csv_row(FILE *f, size_t idx, const sebt_params *p, const sebt_result *r);
/* The JSON document of a sweep written a row at a time (what
 * sweep_write_output writes whole). */
void sweep_json_begin(cli_json *j, FILE *f, const sweep_output_spec *spec);
/* a: the row's analysis columns, an "analysis" object after valid_bars (NULL: none). */
void sweep_json_row(cli_json *j, size_t i, const sebt_params *p, const sebt_result *r, const sebt_trade_stats *a);
void sweep_json_end(cli_json *j);

/* --overfit (sweep_overfit.c): the pass over the sweep's combos (prints
 * its error and returns an exit code), its text block and JSON section. */
int sweep_overfit_run(const char *cmd, const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                      const sebt_params *combos, size_t n_combos, int blocks, int threads, sebt_overfit *out);
/* scope follows "Overfitting" in the heading ("" for the whole series). */
void sweep_overfit_text(FILE *f, const sebt_overfit *o, const char *scope);
void sweep_overfit_json(cli_json *j, const sebt_overfit *o);
/* npy: the CSV's columns as a NumPy structured array (docs/formats.md;
 * sebt_sweep_npy_header and sebt_sweep_npy_row write the bytes). */
void sweep_write_npy_header(FILE *f, uint64_t n_rows);
void sweep_write_npy_row(FILE *f, size_t idx, const sebt_params *p, const sebt_result *r);
/* Parses one data row written by sweep_write_csv_row (line without '\n'),
 * or, with a, by sebt_sweep_csv_row_ex with the analysis columns (into a;
 * its years is 0). Returns false on a malformed row, with what went wrong
 * in why. */
bool sweep_parse_csv_row(char *line, size_t *idx, sebt_params *p, sebt_result *r, sebt_trade_stats *a, char *why,
                         size_t why_size);


/* ---- a sweep's own proof (cli/sweep_proof.c, docs/cli.md "Verification") ---
 * By default a streamed sweep re-checks its best combos and a seeded random
 * sample against the reference, sized to about a tenth of its own time,
 * reading the sampled rows back from the file it wrote (CSV, npy); a
 * difference fails the sweep (exit 1) and nothing is committed. --verify N
 * checks N sampled combos whatever the time; --verify full also compares
 * every written row with the same sweep run another way and the series
 * cache with a fresh parse. */
typedef enum { PROOF_OFF, PROOF_SAMPLE, PROOF_FULL } sweep_proof_mode;
/* The library's proof (sebt/sweep_proof.h) and what --verify full adds. */
typedef struct {
    sebt_sweep_proof core;
    sweep_proof_mode mode;
    size_t rows_compared;          /* --verify full: rows compared with the other run */
    bool cache_checked;            /* --verify full: a cached load against a fresh parse */
} sweep_proof;

/* What the proof needs of the sweep. */
typedef struct {
    const sebt_backend *b;
    const sebt_series *s;
    const sebt_grid *grid;         /* the combos: a grid, or */
    const sebt_params *combos;     /* an array */
    size_t n_combos, window;
    int threads;
    const char *file;              /* the written file, unpublished (NULL: stdout) */
    const char *shown;             /* its name for people */
    bool npy, json;                /* else CSV */
    bool analysis;                 /* the rows carry the analysis columns */
    bool relative;                 /* and the relative columns */
    uint64_t header_bytes;         /* npy: where the rows start */
    bool read_back;                /* the file holds every row (no --top) */
    double sweep_seconds;
    const sebt_where *where;       /* the sweep's condition: only passing rows are written */
    const char *data;              /* the series' file, for the cache checks */
    bool lenient, fill_gaps;
    bool series_cached;            /* s came from a cache entry: checked against a fresh parse of data */
} sweep_proof_ctx;

/* The library's proof (sebt_sweep_proof_plan, _window, _check) with its
 * failures printed: exit 1 on a difference, naming the combo, the field,
 * both values and the seed. sweep_proof_check runs --verify full's checks
 * too. */
int sweep_proof_plan(const char *cmd, sweep_proof *p, size_t n, size_t window);
void sweep_proof_window(sweep_proof *p, const sebt_sweep_window *w, bool rows_in_file);
void sweep_proof_free(sweep_proof *p);
int sweep_proof_check(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c, const sebt_sweep_record *best,
                      size_t n_best);
/* What --no-verify left out, said on stderr. */
void sweep_proof_say_skipped(const char *cmd);
/* --verify full's checks; a difference (1) is in p->core.what. */
int sweep_proof_full(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c);
/* data loaded through the cache in folder cache (stored, then a hit)
 * against a fresh parse, every bit: 0 equal, 1 different (what says how),
 * 2 not checked (no cache, or the file is not kept), -1 an error in err. */
int sweep_cache_check(const char *data, bool lenient, bool fill_gaps, const char *cache, char *what, size_t size,
                      sebt_error *err);
/* The one line on stderr once the output is committed. */
void sweep_proof_say(const char *cmd, const sweep_proof *p, const char *shown);
/* The outcome as the JSON document's "verification" object, and as the
 * comment an npy header carries (its length, 0 when it does not fit). */
void sweep_proof_json(cli_json *j, const sweep_proof *p);
size_t sweep_proof_note(const sweep_proof *p, char *b, size_t size);

/* ---- atomic files --------------------------------------------------------------
 * sebt_outfile (a temporary file beside PATH, fsync, rename) plus a sync
 * of the folder: a reader, or a run after a crash, sees the old file or
 * the whole new one, never a part. "-" or NULL is stdout (written directly). */
typedef struct {
    FILE *f;
    sebt_outfile o;
    char path[4096];
    bool is_stdout;
    int stdout_errno;   /* atomic_write_failed's, for stdout */
} atomic_file;
/* CLI_EXIT_OK, or the exit code of the failure (CLI_EXIT_NOMEM, else
 * CLI_EXIT_USAGE) with why filled. */
int atomic_open(atomic_file *a, const char *path, char *why, size_t why_size);
/* Before anything is written: a big file's bytes go past the page cache
 * (sebt_outfile_direct); false where they cannot (stdout, a device). */
bool atomic_direct(atomic_file *a);
/* Flushes, syncs and renames; on any failure removes the temporary file.
 * Returns false with why set when anything was lost. */
bool atomic_commit(atomic_file *a, char *why, size_t why_size);
/* A write to a->f came back short with errnum (0: none did), so that the
 * commit names the reason (sebt_outfile_write_failed). */
void atomic_write_failed(atomic_file *a, int errnum);
/* Writes out and closes the file, which stays unpublished at a->o.tmp for
 * reading back (sebt_outfile_sync); atomic_commit then publishes it. */
bool atomic_sync(atomic_file *a, char *why, size_t why_size);
void atomic_discard(atomic_file *a);

/* ---- checkpoints (cli/checkpoint.c) --------------------------------------
 * A checkpoint directory holds chunk files chunk-FIRST-COUNT-TAG.sebt, each
 * the results of a set of combos, written atomically (temporary file,
 * fsync, rename). Every chunk names the sweep it belongs to; a directory
 * holding chunks of another sweep is refused, never mixed. */
#include "sebt/shard.h"

typedef struct {
    const char *dir;
    uint64_t data_fp, grid_fp, bars, n_combos;
    const char *backend;
} ckpt_id;

typedef void (*ckpt_found_fn)(void *user, const sebt_sweep_record *rec);

/* Creates dir when missing, then reads every chunk in it and calls found
 * for each record. Prints and returns an exit code (2 for a chunk of
 * another sweep or a damaged one). *n_chunks receives the chunks read. */
int ckpt_load(const char *cmd, const ckpt_id *id, ckpt_found_fn found, void *user, size_t *n_chunks);
/* Writes one chunk durably. tag keeps names of concurrent writers apart
 * (the MPI rank). Prints and returns an exit code. */
int ckpt_write(const char *cmd, const ckpt_id *id, const sebt_sweep_record *recs, size_t n, unsigned tag);

#endif
