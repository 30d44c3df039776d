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

/* Decisions judged and near-ties adjudicated (SPEC §8). A decision is one
 * bar's signal whose four reference operands are all defined, or one bar's
 * exit check while a position is open. A tie is adjudicated only for a
 * tolerant contract, only where the reference margin is within tol AND
 * the candidate's own operands differ from the reference's bits (its
 * features for the signal; its trade's stop or tp for an exit): equal
 * operands and another decision is a logic error, reported as a
 * divergence. An exact contract never has ties. */
typedef struct {
    uint64_t decisions;
    uint64_t ties;
} sebt_oracle_tally;

/* Ties per 10^6 decisions (0 when no decision was judged). */
double sebt_oracle_tie_rate(uint64_t ties, uint64_t decisions);

/* The default limit on the tie rate, per 10^6 decisions, for `sebt parity`,
 * `sebt fuzz` and `sebt validate`: rounding alone ties far more rarely
 * (fast_cpu and the cuda module are exact: 0), so a rate above it means
 * the candidate decides near thresholds in a way of its own. */
#define SEBT_DEFAULT_MAX_TIE_RATE 100.0

typedef struct {
    size_t combos_checked;
    size_t combos_diverged;
    size_t ties;                 /* near-tie decisions where the candidate was followed */
    uint64_t decisions;          /* decisions judged (see sebt_oracle_tally) */
    sebt_batch_stats stats;      /* what the candidate's run_batch said of its paths */
    /* The analysis columns (sebt/analysis.h). A backend whose walk keeps
     * their tally (sebt_backend_tally_batch: fast_cpu, cuda) also runs the
     * batch tallied, and every combo that agrees up to there has each
     * column, as a sweep makes it from the tally, compared with the
     * reference's literal figures over the reference's own trades: counts
     * exactly, the rest under the contract (exact: bit for bit). Any other
     * backend's columns come from its trades, which are compared. */
    bool analysis_from_walk;
    size_t analysis_compared;    /* combos whose columns were compared */
    size_t n_details;            /* divergences kept in details (first few) */
    sebt_divergence details[8];
} sebt_oracle_report;

typedef struct {
    int threads;                 /* passed to the candidate's run_batch */
    size_t memory_budget;        /* passed to run_batch: bytes, 0 = the backend's default */
    bool stop_first;             /* stop at the first diverging combo */
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
 * candidate diverges; adds the decisions judged and the ties adjudicated
 * to *tally (may be NULL). Exposed so tests (and plugin validation) can
 * hand the oracle a candidate's output computed elsewhere. */
sebt_status sebt_oracle_compare_one(const sebt_contract *contract, const sebt_series *s,
                                    const sebt_params *p, const sebt_features *cand_features,
                                    const sebt_result *cand_result, bool *diverged,
                                    sebt_divergence *div, sebt_oracle_tally *tally,
                                    sebt_error *err);

/* Formats a divergence for people (a few lines). */
void sebt_divergence_text(const sebt_divergence *d, char *buf, size_t size);

/* SPEC §8's near-tie test on the margin alone: |margin| <= tol*max(1,|lhs|,|rhs|).
 * (Adjudication also asks that the candidate's operands moved.) */
bool sebt_oracle_near_tie(double lhs, double rhs, double tol);

/* ---- metamorphic checks (oracle/metamorphic.c) -------------------------- */

/* What a result must not depend on, judged without the reference: the same
 * call twice, the combos reversed on one thread with a 1-byte budget, and
 * each combo alone must agree with the call as given (bit for bit for an
 * exact contract; within tol, counts and bars exactly, for a tolerant one). */
typedef struct {
    bool failed;
    bool nondeterministic;   /* two identical calls disagreed */
    size_t combo;            /* the combo whose result moved */
    char what[64];           /* "trade count", "trade 2 pnl", "metrics.sharpe", ... */
    double first, second;    /* its value in the call as given, and in the other call */
    char detail[400];
    int calls;               /* comparisons made */
} sebt_metamorphic_report;

/* SEBT_OK when the calls ran (see rep); an error when a call failed. */
sebt_status sebt_oracle_metamorphic(const sebt_backend *cand, const sebt_series *s, const sebt_params *combos,
                                    size_t n, int threads, size_t memory_budget, sebt_metamorphic_report *rep,
                                    sebt_error *err);

/* ---- parity over data files (oracle/parity.c) ------------------------- */

#define SEBT_PARITY_MAX_JOIN 4
#define SEBT_PARITY_PATH_MAX 1024

typedef enum { SEBT_PARITY_BOTH = 0, SEBT_PARITY_PLAIN, SEBT_PARITY_FILLED } sebt_parity_gaps;

/* One series a parity run checks: a file as loaded or gap-filled, or
 * several files joined in time order (then loaded as they are). */
typedef struct {
    char label[160];             /* for people: "BTCUSDT-1m-2019-01.csv.gz, gap-filled" */
    const char *paths[SEBT_PARITY_MAX_JOIN];  /* not owned */
    size_t n_paths;
    bool fill_gaps, lenient;
    size_t memory_budget;        /* run_batch's budget on this input; 0: the run's */
} sebt_parity_input;

/* Each of paths as loaded and/or gap-filled (gaps), in order. Returns how
 * many inputs it wrote (at most max). */
size_t sebt_parity_inputs_for_files(const char *const *paths, size_t n_paths, sebt_parity_gaps gaps,
                                    sebt_parity_input *out, size_t max);

/* The bundled data set under data_dir (fixtures/data): each file as loaded
 * and gap-filled, smallest first, then the one-minute files joined into a
 * 569,276-bar series run with a 1-byte memory budget (as many batches as
 * the backend can make). Files that are not there are left out. paths is
 * storage for the inputs' paths (n_paths_buf entries; 8 is enough). */
size_t sebt_parity_default_inputs(const char *data_dir, sebt_parity_input *out, size_t max,
                                  char paths[][SEBT_PARITY_PATH_MAX], size_t n_paths_buf);

/* Grid-shaped combos for parity beside the hand-picked ones: a
 * 2x2x2x2x2 grid (ema_fast 1, 24; ema_slow 1, 96; z_window 2, 96; cloc_min
 * 0, 0.5; use_rsi false, true with rsi_window 2 and rsi_max 50) whose axes
 * share spans, as sweep engines group work. Writes at most max (32 is all)
 * and returns how many. */
#define SEBT_PARITY_GRID_COMBOS 32
size_t sebt_parity_grid_combos(sebt_params *out, size_t max);

/* Loads one input (joining its files). */
sebt_status sebt_parity_load(const sebt_parity_input *in, sebt_series *out, sebt_error *err);

typedef struct {
    int threads;                 /* run_batch's threads; 0: the backend's default */
    size_t memory_budget;        /* run_batch's budget; 0: the backend's default */
    bool stop_first;             /* stop at the first diverging combo (mutation testing) */
    /* Called before each input is loaded, and per combo compared; may be NULL. */
    void (*on_input)(void *user, size_t i, size_t n, const sebt_parity_input *in);
    sebt_progress_fn progress;
    void *user;
} sebt_parity_opts;

typedef struct {
    sebt_parity_input input;
    bool ran;                    /* false: not reached (stop_first stopped before it) */
    size_t bars, missing, gap_filled;
    sebt_oracle_report report;
    double seconds;              /* load and check */
} sebt_parity_result;

/* Checks candidate on every combo over every input (results: n_inputs
 * entries). SEBT_OK when it ran, whatever it found; an error when an input
 * could not be loaded or a check could not run. */
sebt_status sebt_parity_run(const sebt_backend *candidate, const sebt_parity_input *inputs,
                            size_t n_inputs, const sebt_params *combos, size_t n_combos,
                            const sebt_parity_opts *opts, sebt_parity_result *results,
                            sebt_error *err);

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
/* Cases a fuzz run keeps of the ones before a divergence, for a bug that
 * needs the state they leave (sebt_fuzz_report.previous). */
#define SEBT_FUZZ_KEPT_CASES 8

/* One generated case: a series and combos run as one batch, with the run
 * options the batch gets (the paths it makes a backend take). */
typedef struct {
    sebt_series series;
    size_t n_combos;
    sebt_params *combos;     /* n_combos, owned (sebt_fuzz_case_free) */
    int threads;             /* run_batch's threads: 1 in small cases, 2-8 in big ones */
    bool threads_fixed;      /* the thread count is part of the case (past the cores, or
                              * >= 2 for a wide call): sebt_fuzz_opts.threads leaves it */
    size_t memory_budget;    /* run_batch's memory budget in bytes; 0: the backend's default */
    bool big;
    char shape[160];         /* what the generator aimed at, for the report */
} sebt_fuzz_case;

/* The seed of stream k of a campaign: stream 0 is the seed itself; other
 * streams give disjoint case sequences (one per MPI rank or shard). */
uint64_t sebt_fuzz_stream_seed(uint64_t seed, uint64_t stream);

/* Small case number `iteration` of `seed` (<= 2,500 bars): a pure function
 * of both. Most have <= SEBT_FUZZ_MAX_COMBOS combos and one thread; about
 * one in eight is a sweep (a grid whose axes share spans, up to ~1,100
 * combos in grid order, reversed or shuffled, with budgets that leave a
 * partial tail batch and 1-4 threads), and about one in eight has extreme
 * values (a 10^12-10^15 volume spike, subnormal or huge prices, a long flat
 * run) followed by thresholds that tie with the reference's own z or cloc.
 * Early iterations are biased toward small series and windows. */
sebt_status sebt_fuzz_generate(uint64_t seed, uint64_t iteration, sebt_fuzz_case *out,
                               sebt_error *err);

/* Big case number `index` of `seed`: 100,000-140,000 bars cut from base (real
 * data; NULL or tiny: a synthetic series) with holes punched in (single
 * bars, runs of up to 400, sometimes the first bars, and holes or price
 * jumps at 2^16, 10^5 and 2^17), or (one in twelve) a sweep of 65,537 to
 * 65,600 combos on a short series; 2 to ~26 combos over
 * shared and distinct indicator keys with bars x combos on either side of
 * 10^6, 2-8 threads, and a memory budget of 1 byte, a few columns or the
 * default, so a backend runs on several threads, in several batches and
 * several ATR blocks. A pure function of (seed, index, base). */
sebt_status sebt_fuzz_generate_big(uint64_t seed, uint64_t index, const sebt_series *base,
                                   sebt_fuzz_case *out, sebt_error *err);
void sebt_fuzz_case_free(sebt_fuzz_case *c);
/* Whether small case `iteration` is a wide call (8,192+ combos on 2-8
 * threads): one in 256, from case 18. */
bool sebt_fuzz_is_wide(uint64_t iteration);

/* The share of a campaign's time spent on big cases unless told. */
#define SEBT_FUZZ_DEFAULT_BIG_SHARE 0.3

typedef struct {
    uint64_t seed;
    uint64_t stream;         /* 0 for a single process; rank r of an MPI run uses r (see
                              * sebt_fuzz_stream_seed). Nothing else is shared between
                              * calls: sebt_fuzz_run is reentrant. */
    uint64_t iterations;     /* 0: no limit on cases (then time_s must be > 0) */
    double time_s;           /* 0: no time limit */
    double big_share;        /* share of the time on big cases: 0 = the default, < 0 = none */
    const sebt_series *base; /* real bars big cases are cut from; NULL: synthetic */
    bool shrink;             /* shrink a divergence before reporting it */
    const char *save_dir;    /* write the reproducer under this folder; NULL: don't */
    sebt_progress_fn progress;   /* (done, total) in cases or in tenths of a second */
    void *progress_user;
    /* Asked before each case; true ends the campaign there (another MPI
     * rank found a divergence). May be NULL. */
    bool (*should_stop)(void *user);
    void *stop_user;
    /* What `--backend` must say to get the candidate again (a plugin's
     * path), for the replay commands a reproducer prints; NULL: the
     * registry's selector of candidate (a copied table has only its name). */
    const char *selector;
    int threads;             /* > 0: every case runs on this many threads instead of its own */
    /* Run only case `case_index` (a big one when one_big): what a replay
     * command asks for. iterations and time_s are then ignored. */
    bool one_case, one_big;
    uint64_t case_index;
    const char *base_path;   /* where base was loaded from, for replay commands; may be NULL */
    /* Called with each case just before it runs; what it sets stays while
     * the case is re-run and shrunk. For what the caller varies per case
     * outside the batch: sebt fuzz and validate give cuda under host
     * execution a device memory size per case. May be NULL. */
    void (*before_case)(void *user, const sebt_fuzz_case *c, bool big, uint64_t index);
    void *before_case_user;
    /* > 0: a big case after every big_every small ones, whatever the time
     * (big_share < 0 still means none): a campaign bounded by iterations
     * is then the same cases in the same order in every run, as a replay
     * of an allocation failure needs. 0: big cases by time, whose order
     * depends on the machine's speed. */
    uint64_t big_every;
    /* The first case is a big one (then as big_every or big_share say): for
     * a bug that no small case can show, whose hunt would otherwise spend
     * big_every small cases first. */
    bool big_first;
    /* Leave out the wide calls (8,192+ combos, small case k with k mod 256
     * = 18): for the mutants' fuzz, whose bugs smaller cases show, where a
     * reference-speed mutant spends seconds on each. Case numbers stay. */
    bool skip_wide;
} sebt_fuzz_opts;


/* The paths a campaign made the backend take, from its sebt_batch_stats. */
typedef struct {
    bool stats_reported;          /* the backend filled sebt_batch_stats at least once */
    uint64_t big_cases;
    uint64_t multi_thread_cases;  /* cases whose run_batch used more than one thread */
    uint64_t multi_batch_cases;   /* ... more than one batch */
    uint64_t multi_block_cases;   /* ... more than one series block */
    int max_threads;
    size_t max_batches, max_blocks, max_chunks;
    size_t max_bars, max_combos;
} sebt_fuzz_paths;

typedef struct {
    uint64_t cases_run;
    size_t combos_checked;
    size_t ties;
    uint64_t decisions;          /* see sebt_oracle_tally; ties per 10^6: sebt_oracle_tie_rate */
    sebt_fuzz_paths paths;
    double seconds;
    bool found;
    bool found_big;              /* found in big case found_iteration, not small case */
    uint64_t found_iteration;
    double seconds_to_find;
    char shape[160];
    sebt_divergence divergence;  /* as found, on the shrunk case when shrinking */
    /* The (shrunk) reproducer, owned (sebt_fuzz_report_free): the series and
     * the batch it needs. Most bugs need one combo (repro_n_combos 1, one
     * thread, default budget); a batch bug keeps several combos and the
     * run options that split them. */
    sebt_series repro;
    sebt_params *repro_combos;
    size_t repro_n_combos;
    size_t repro_focus;          /* the combo that diverges, in repro_combos */
    int repro_threads;
    size_t repro_memory_budget;
    sebt_params repro_params;    /* = repro_combos[repro_focus] */
    size_t original_bars, original_combos;
    char saved_path[1024];       /* where the reproducer was written, "" if not */
    sebt_divergence original;    /* the first divergence as found, before shrinking */
    /* The case, run again the same way, did not diverge the same way: a
     * data race or state kept between calls. The case is kept unshrunk
     * (shrinking needs a bug that repeats); nondet_detail says what the
     * runs did. */
    bool nondeterministic;
    char nondet_detail[640];
    /* The combo that diverged, run alone (one thread, the default budget)
     * on the case as found, agreed with the reference: the batch is part of
     * the bug, and the reproducer keeps it (repro_n_combos > 1, shrunk). */
    bool alone_agrees;
    /* A non-deterministic case run reruns more times on rerun_threads
     * threads (more than it was found on: a race shows more often), of
     * which reruns_diverged diverged; nondet_detail ends with the rate.
     * 0 reruns for a case too big to run again that often. */
    int reruns, reruns_diverged, rerun_threads;
    /* The cases run just before the one that diverged, oldest first, at
     * most SEBT_FUZZ_KEPT_CASES (sebt_fuzz_run keeps them, owned here).
     * When the case does not repeat alone but diverges each time it runs
     * right after the last n_needed of them, the backend keeps state
     * between calls (after_previous): nondet_detail says so, no rate is
     * drawn, and the reproducer holds those cases too (in its before/
     * folder, which sebt_fixture_check runs first). */
    int n_previous, n_needed;
    bool after_previous;
    sebt_fuzz_case previous[SEBT_FUZZ_KEPT_CASES];
    uint64_t previous_iteration[SEBT_FUZZ_KEPT_CASES];
    /* sebt_fuzz_finish ran its runs of the case again (repeat, state,
     * rate): a second finish, as an MPI campaign gives its winner's
     * report, keeps their findings rather than adding to them. */
    bool repeats_checked;
} sebt_fuzz_report;

/* Runs cases until a divergence, the case count or the time limit. Returns
 * SEBT_OK whatever it found (see report); an error only when it could not
 * run (no device, out of memory, a fixture not written), and then the
 * report holds nothing to free. */
sebt_status sebt_fuzz_run(const sebt_backend *candidate, const sebt_fuzz_opts *opts,
                          sebt_fuzz_report *report, sebt_error *err);
/* What sebt_fuzz_run does with the divergence it found, for a report that
 * was found with shrink off and no save_dir: reduces the batch when the
 * combo diverges alone, shrinks (opts->shrink) and saves (opts->save_dir).
 * An MPI campaign runs its ranks without it and calls it once, on the rank
 * whose divergence it reports. */
sebt_status sebt_fuzz_finish(const sebt_backend *candidate, const sebt_fuzz_opts *opts,
                             sebt_fuzz_report *report, sebt_error *err);
void sebt_fuzz_report_free(sebt_fuzz_report *r);
/* The command that runs exactly the case a report found (its seed, stream,
 * threads, kind and number, and base), for a person to paste. */
void sebt_fuzz_replay_command(const sebt_backend *candidate, const sebt_fuzz_opts *opts,
                              const sebt_fuzz_report *report, char *buf, size_t size);

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
/* Runs candidate on the fixture folder at path the way it was found (with
 * its batch: combos.csv and batch.txt, when sebt fuzz wrote them; after the
 * calls of its before/ folder, when it has one: a bug that needs state
 * left by an earlier call) and judges it against the reference; *diverged
 * and div (may be NULL) say what. */
sebt_status sebt_fixture_check(const sebt_backend *candidate, const char *path, bool *diverged,
                               sebt_divergence *div, sebt_error *err);
/* sebt_fixture_check on every fixture folder under dir: how many there are,
 * how many diverge, and the first diverging folder's name. */
sebt_status sebt_fixtures_check(const sebt_backend *candidate, const char *dir, size_t *n_fixtures,
                                size_t *n_diverged, char *first, size_t first_size, sebt_error *err);
void sebt_fixture_free(sebt_fixture *f);
/* Reads params.txt (name=value lines; # comments) over the defaults. */
sebt_status sebt_params_read_file(const char *path, sebt_params *p, sebt_error *err);

/* ---- one big call (oracle/bigcall.c) ------------------------------------ */

/* More than 2^32 bar-combos in one call, and the combos checked of it. */
#define SEBT_BIG_CALL_BAR_COMBOS ((uint64_t)1 << 32)
#define SEBT_BIG_CALL_SAMPLE 24

typedef struct {
    size_t bars, combos;
    uint64_t bar_combos;         /* bars x combos of the call */
    int threads;
    size_t sampled;              /* combos checked against the reference */
    bool diverged;
    sebt_divergence divergence;  /* .combo: the combo's index in the call */
    double seconds;
} sebt_big_call_report;

/* One metrics-only run_batch of more than 2^32 bar-combos over s (grid-
 * shaped combos drawn from seed, on threads threads), then the first and
 * last combos, those on either side of combo x bars = 2^31 and 2^32, and
 * random ones (SEBT_BIG_CALL_SAMPLE in all) run by the reference with
 * trades and compared (oracle_metrics_only_agree's rules). SEBT_OK when it
 * ran, whatever it found; a candidate error other than no device or memory
 * is a divergence. */
sebt_status sebt_oracle_big_call(const sebt_backend *cand, const sebt_series *s, uint64_t seed, int threads,
                                 sebt_big_call_report *rep, sebt_error *err);

/* ---- mutants (oracle/mutants.c) ---------------------------------------- */

/* Backends with one planted bug each, for `sebt fuzz --self-test`, parity
 * demos and tests. They are not in the public registry. Names are
 * "mutant:<bug>". */
size_t sebt_mutant_count(void);
const sebt_backend *sebt_mutant_at(size_t i);
const char *sebt_mutant_bug(size_t i);    /* one line: what is planted */
/* What a reproducer of mutant i needs beyond 50 bars ("more than 512
 * bars: a block boundary"), or NULL when 50 bars or fewer can show it. */
const char *sebt_mutant_needs(size_t i);
/* Whether small fuzz cases seldom or never show mutant i's bug, so that a
 * hunt for it starts with a big case (sebt_fuzz_opts.big_first). */
bool sebt_mutant_big_first(size_t i);
/* Why parity on the bundled data (hand-picked and grid-shaped combos)
 * cannot show mutant i's bug, NULL when it can: the self-test asks only
 * the fuzzer to catch such a mutant. */
const char *sebt_mutant_parity_blind(size_t i);
sebt_status sebt_mutant_get(const char *name, const sebt_backend **out, sebt_error *err);
/* The mutants' correct base (no bug), used to test the oracle itself. */
extern const sebt_backend sebt_mutant_base_backend;

#ifdef __cplusplus
}
#endif

#endif
