/* A sweep's own proof (core/sweep_proof.c; docs/cli.md "Verification"):
 * the best combo re-run on the reference's columns, signal and walk (its
 * z-scores only where the signal reads them; the whole reference,
 * sebt_sweep_verify, when asked), a seeded sample of at least
 * SEBT_VERIFY_MIN combos recomputed on the exact path
 * (sebt_sweep_verify_exact), a series read from the cache compared with a
 * fresh parse of its file, and the sampled rows read back from the file
 * the sweep wrote. sebt_sweep_run runs it by default on what it hands out
 * (sebt_sweep_opts.verify); a caller that writes a file (`sebt sweep`)
 * runs it itself, to read the rows back from that file. */
#ifndef SEBT_SWEEP_PROOF_H
#define SEBT_SWEEP_PROOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sebt/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEBT_VERIFY_BEST 1          /* the best combos, always re-run on the reference */
#define SEBT_VERIFY_MIN 256         /* fewest sampled combos (all of a smaller sweep) */
#define SEBT_VERIFY_MAX 4096        /* most sampled combos */
#define SEBT_VERIFY_SHARE 0.05      /* more are sampled while the proof stays within this share of the sweep's time
                                     * (half the tenth it may cost: the rest is what it spends outside its own clock) */
#define SEBT_VERIFICATION_VERSION 3 /* of the record a verified output carries (docs/formats.md) */

/* The proof's state and outcome. The caller sets fixed, seed and
 * best_whole_reference, then sebt_sweep_proof_plan draws the candidates. */
typedef struct {
    size_t fixed;                  /* sampled combos whatever the time (0: at least SEBT_VERIFY_MIN) */
    uint64_t seed;
    /* The best combos on the whole reference (sebt_sweep_verify: every
     * bar's rolling windows summed afresh, about 0.4 s of CPU with z_window
     * 672 on the bundled 15m series), as `--verify full` asks; else on the
     * reference's columns, signal and walk over every bar with the z-scores
     * made only where the signal reads them: the same results. */
    bool best_whole_reference;
    /* The candidates in draw order (the edges, then the seeded draws), the
     * same ascending with their place in cand, what the driver handed over
     * for each, and where its row starts in the file (UINT64_MAX: none). */
    uint64_t *cand, *asc;
    size_t *asc_pos;
    size_t n_cand, n_edges, cursor;
    sebt_sweep_record *mem;
    uint64_t *offset;
    bool *kept;                    /* the sweep's condition's decision on each (true without one) */
    uint64_t written;              /* bytes before the next window's rows (the caller sets the header's) */
    /* The windows handed over, and how many carried the analysis columns
     * (made from each combo's trades): what the check may compare. */
    size_t windows, windows_with_analysis;
    /* The outcome. */
    size_t best, sampled, differ;
    bool read_back, series_fresh_checked;
    double seconds, sweep_seconds, last_seconds;
    char what[700];                /* on a difference: the combo, the field, both values */
} sebt_sweep_proof;

/* What the proof checks against. */
typedef struct {
    const sebt_backend *b;
    const sebt_series *s;
    const sebt_grid *grid;         /* the combos: a grid, or */
    const sebt_params *combos;     /* an array */
    size_t n_combos;
    int threads;
    const char *file;              /* the rows as written (NULL: compare what was handed over) */
    bool npy;                      /* the file's rows: npy or CSV */
    int cols;                      /* their extra columns (sebt/sweep.h: SEBT_COLS_...) */
    const sebt_where *where;       /* the sweep's condition: only passing rows are in the file */
    double sweep_seconds;          /* the sweep's own time, for the sample's budget */
    /* A series read from the cache: its file and load options, compared
     * with a fresh parse (NULL: s was parsed from its file by this run). */
    const char *series_file;
    sebt_load_opts series_load;
} sebt_sweep_proof_ctx;

/* Draws the candidates for n combos in windows of `window`: the first
 * row, the last and the last of the first window (a writer's likeliest
 * slips), then seeded draws. */
sebt_status sebt_sweep_proof_plan(sebt_sweep_proof *p, size_t n, size_t window, sebt_error *err);
/* For each window handed over, in order (from the driver's callback):
 * what was handed over for each candidate in it, and (rows_in_file: the
 * window's rows were written after p->written bytes) where its row is. */
void sebt_sweep_proof_window(sebt_sweep_proof *p, const sebt_sweep_window *w, bool rows_in_file);
void sebt_sweep_proof_free(sebt_sweep_proof *p);
/* The proof once every window is handed over: the series (when it came
 * from the cache: a fresh parse of its file), the best combos (their
 * records as handed over) against the reference (p->best_whole_reference
 * says which way) and the sample recomputed on the exact path (its rows
 * read back from c->file when that is set), the three side by side.
 * SEBT_ERR_VERIFY on a difference, err->msg (and p->what) naming it (the
 * series' first, then the best combos', then the sample's); also when the
 * check would compare other columns than the sweep made (c->cols against
 * the windows and records handed over): analysis columns asked of a sweep
 * that ran without trades, or left out of one that made them. */
sebt_status sebt_sweep_proof_check(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, const sebt_sweep_record *best,
                                   size_t n_best, sebt_error *err);

/* The series s, read from the cache, against a fresh parse of file, every
 * bit: SEBT_OK equal, SEBT_ERR_VERIFY different (err names the column),
 * else the parse's error. */
sebt_status sebt_series_check_fresh(const char *file, const sebt_load_opts *o, const sebt_series *s,
                                    sebt_error *err);

/* One CSV row of a sweep (sebt_sweep_csv_row_ex's bytes, without its
 * '\n'; line is cut in place) into its combo, parameters and record; with
 * cols (sebt/sweep.h), its analysis (and relative) columns too. false with
 * why on a malformed row. */
bool sebt_sweep_csv_row_read(char *line, int cols, uint64_t *combo, sebt_params *p, sebt_sweep_record *rec,
                             char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif
