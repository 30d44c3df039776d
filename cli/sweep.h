/* What `sebt sweep` and `sebt merge` share: the output writers, the shard
 * file format and the atomic file writer (cli/sweep_output.c). */
#ifndef SEBT_CLI_SWEEP_H
#define SEBT_CLI_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "sebt/outfile.h"
#include "sebt/sweep.h"

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
    long top;
    int metric;                /* a sebt_metric (sharpe by default) */
    const char *backend;
    size_t bars;
    size_t n_combos;
} sweep_output_spec;

/* Writes the sweep's output for all spec->n_combos combos (results[i] is
 * combos[i]'s; only metrics, open_at_end.open and valid_bars are read)
 * to path (NULL or "-": stdout), atomically. With --top, rows_out (may be
 * NULL) receives the kept rows, best first, and *n_rows_out their count;
 * free it. Prints and returns an exit code. */
int sweep_write_output(const char *cmd, const char *path, const sweep_output_spec *spec,
                       const sebt_params *combos, const sebt_result *results, size_t **rows_out,
                       size_t *n_rows_out);

/* The ranking --top applies: rows[0..n) sorted best first (ties: input order). */
void sweep_rank(size_t *rows, size_t n, const sebt_result *results, int metric);

/* ---- shard files ------------------------------------------------------------
 * Line 1: "# sebt-shard 1 version=V shard=I/N combos=C rows=R bars=B
 *          data=HEX grid=HEX backend=NAME format=csv|json top=K by=METRIC"
 * Line 2: the sweep's CSV header; then the shard's R rows in input order.
 * Last line: "# sebt-shard-end fnv1a64=HEX": the FNV-1a 64 hash (sebt_fnv1a)
 * of every byte before that line, so merge refuses a shard damaged or cut
 * anywhere. Format 1 had no checksum; merge refuses it by its number. */
#define SWEEP_SHARD_FORMAT 2
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
void sweep_json_row(cli_json *j, size_t i, const sebt_params *p, const sebt_result *r);
void sweep_json_end(cli_json *j);
/* npy: the CSV's columns as a NumPy structured array (docs/formats.md;
 * sebt_sweep_npy_header and sebt_sweep_npy_row write the bytes). */
void sweep_write_npy_header(FILE *f, uint64_t n_rows);
void sweep_write_npy_row(FILE *f, size_t idx, const sebt_params *p, const sebt_result *r);
/* Parses one data row written by sweep_write_csv_row (line without '\n').
 * Returns false on a malformed row, with what went wrong in why. */
bool sweep_parse_csv_row(char *line, size_t *idx, sebt_params *p, sebt_result *r, char *why,
                         size_t why_size);

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
bool atomic_open(atomic_file *a, const char *path, char *why, size_t why_size);
/* Before anything is written: a big file's bytes go past the page cache
 * (sebt_outfile_direct); false where they cannot (stdout, a device). */
bool atomic_direct(atomic_file *a);
/* Flushes, syncs and renames; on any failure removes the temporary file.
 * Returns false with why set when anything was lost. */
bool atomic_commit(atomic_file *a, char *why, size_t why_size);
/* A write to a->f came back short with errnum (0: none did), so that the
 * commit names the reason (sebt_outfile_write_failed). */
void atomic_write_failed(atomic_file *a, int errnum);
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
