/* The oracle: judges a backend against the reference (SPEC §8), fuzzes
 * backends with generated series, shrinks what it finds to a small
 * reproducer and keeps it as a regression fixture.
 *
 * The reference backend is the ground truth; the oracle reaches it only
 * through sebt_reference_backend's function pointers. Near-ties of tolerant
 * backends are adjudicated by the oracle's own replay of SPEC §6 over the
 * reference's features (oracle/replay.c), never by the candidate's code. */
#ifndef SEBT_ORACLE_H
#define SEBT_ORACLE_H

#include <stdint.h>

#include "sebt/backend.h"
#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- comparison (oracle/compare.c) ------------------------------------- */

/* The first difference found in one combo, in a form a person can act on. */
typedef struct {
    size_t combo;          /* index of the combo in the batch */
    sebt_params params;
    char what[64];         /* "ema_f", "signal", "trade 2 exit bar", "metrics.sharpe", ... */
    int64_t bar;           /* first differing bar (series index), -1 when none applies */
    int64_t ts;            /* its timestamp in ms, 0 when bar is -1 */
    double ref_value;
    double cand_value;
    double margin;         /* the reference's decision margin; NaN when not a decision */
    char detail[320];      /* one sentence: what each side did */
} sebt_divergence;

typedef struct {
    size_t combos_checked;
    size_t combos_diverged;
    size_t ties;                 /* near-tie decisions where the candidate was followed */
    size_t n_details;            /* divergences kept in details (first few) */
    sebt_divergence details[8];
} sebt_oracle_report;

typedef struct {
    int threads;                 /* passed to the candidate's run_batch */
    sebt_progress_fn progress;   /* called per combo compared; may be NULL */
    void *progress_user;
} sebt_oracle_opts;

/* Compares candidate against the reference on every combo. Returns SEBT_OK
 * when the comparison ran, whatever it found (see report); an error when it
 * could not run: bad combos or series (the reference refuses them), no
 * device, out of memory. A candidate that fails where the reference
 * succeeds is a divergence, not an error (unless it has no device). */
sebt_status sebt_oracle_check(const sebt_backend *candidate, const sebt_series *s,
                              const sebt_params *combos, size_t n_combos,
                              const sebt_oracle_opts *opts, sebt_oracle_report *report,
                              sebt_error *err);

/* One combo, with the candidate's features and result already computed
 * (cand_result must hold trades). Sets *diverged and fills div when the
 * candidate diverges; adds adjudicated ties to *ties. Exposed so tests can
 * hand the oracle a doctored candidate output. */
sebt_status sebt_oracle_compare_one(const sebt_contract *contract, const sebt_series *s,
                                    const sebt_params *p, const sebt_features *cand_features,
                                    const sebt_result *cand_result, bool *diverged,
                                    sebt_divergence *div, size_t *ties, sebt_error *err);

/* Formats a divergence for people (a few lines). */
void sebt_divergence_text(const sebt_divergence *d, char *buf, size_t size);

/* SPEC §8's near-tie test: |margin| <= tol*max(1,|lhs|,|rhs|). */
bool sebt_oracle_near_tie(double lhs, double rhs, double tol);

/* ---- the oracle's own replay of SPEC §6-7 (oracle/replay.c) ------------- */

/* SPEC §7 over trades, written independently of every backend. */
sebt_metrics sebt_oracle_metrics(const sebt_trade *trades, size_t n);

/* ---- fuzzing (oracle/fuzz.c) ------------------------------------------- */

/* xoshiro256** seeded through splitmix64: the same seed gives the same
 * numbers on every platform. */
typedef struct {
    uint64_t s[4];
} sebt_rng;

void sebt_rng_seed(sebt_rng *r, uint64_t seed);
uint64_t sebt_rng_next(sebt_rng *r);
double sebt_rng_unit(sebt_rng *r);                     /* [0, 1) */
int64_t sebt_rng_range(sebt_rng *r, int64_t lo, int64_t hi); /* [lo, hi] */

#define SEBT_FUZZ_MAX_COMBOS 6

/* One generated case: a series and a few combos run as one batch. */
typedef struct {
    sebt_series series;
    size_t n_combos;
    sebt_params combos[SEBT_FUZZ_MAX_COMBOS];
    char shape[96];          /* what the generator aimed at, for the report */
} sebt_fuzz_case;

/* Case number `iteration` of `seed`: a pure function of both. Early
 * iterations are biased toward small series and windows. */
sebt_status sebt_fuzz_generate(uint64_t seed, uint64_t iteration, sebt_fuzz_case *out,
                               sebt_error *err);
void sebt_fuzz_case_free(sebt_fuzz_case *c);

typedef struct {
    uint64_t seed;
    uint64_t iterations;     /* 0: no limit on cases (then time_s must be > 0) */
    double time_s;           /* 0: no time limit */
    bool shrink;             /* shrink a divergence before reporting it */
    const char *save_dir;    /* write the reproducer under this folder; NULL: don't */
    sebt_progress_fn progress;   /* (done, total) in cases or in tenths of a second */
    void *progress_user;
} sebt_fuzz_opts;

typedef struct {
    uint64_t cases_run;
    size_t combos_checked;
    size_t ties;
    double seconds;
    bool found;
    uint64_t found_iteration;
    double seconds_to_find;
    char shape[96];
    sebt_divergence divergence;  /* as found, on the shrunk case when shrinking */
    sebt_series repro;           /* the (shrunk) reproducer; owned, free with sebt_fuzz_report_free */
    sebt_params repro_params;
    size_t original_bars;
    char saved_path[1024];       /* where the reproducer was written, "" if not */
} sebt_fuzz_report;

sebt_status sebt_fuzz_run(const sebt_backend *candidate, const sebt_fuzz_opts *opts,
                          sebt_fuzz_report *report, sebt_error *err);
void sebt_fuzz_report_free(sebt_fuzz_report *r);

/* ---- shrinking (oracle/shrink.c) --------------------------------------- */

/* Reduces (s, p) while candidate still diverges on it: fewer bars (delta
 * debugging in chunks, then single bars), smaller windows, simpler
 * parameters and values. s and p are replaced by the smaller case; div is
 * the divergence on it. */
sebt_status sebt_oracle_shrink(const sebt_backend *candidate, sebt_series *s, sebt_params *p,
                               sebt_divergence *div, sebt_error *err);

/* ---- regression fixtures (oracle/fixture.c) ---------------------------- */

/* Writes dir/<name>/{series.csv, params.txt, expected.json, expected_trades.csv,
 * README.txt}, the expectations from the reference. path receives the folder. */
sebt_status sebt_fixture_write(const char *dir, const char *name, const sebt_series *s,
                               const sebt_params *p, const char *note, char *path,
                               size_t path_size, sebt_error *err);

typedef struct {
    sebt_series series;
    sebt_params params;
    sebt_result expected;        /* trades included */
} sebt_fixture;

sebt_status sebt_fixture_read(const char *path, sebt_fixture *out, sebt_error *err);
void sebt_fixture_free(sebt_fixture *f);
/* Reads params.txt (name=value lines; # comments) over the defaults. */
sebt_status sebt_params_read_file(const char *path, sebt_params *p, sebt_error *err);

/* ---- mutants (oracle/mutants.c) ---------------------------------------- */

/* Backends with one planted bug each, for `sebt fuzz --self-test`, parity
 * demos and tests. They are not in the public registry. Names are
 * "mutant:<bug>". */
size_t sebt_mutant_count(void);
const sebt_backend *sebt_mutant_at(size_t i);
const char *sebt_mutant_bug(size_t i);    /* one line: what is planted */
sebt_status sebt_mutant_get(const char *name, const sebt_backend **out, sebt_error *err);
/* The mutants' correct base (no bug), used to test the oracle itself. */
extern const sebt_backend sebt_mutant_base_backend;

#ifdef __cplusplus
}
#endif

#endif
