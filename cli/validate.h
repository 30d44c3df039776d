/* What the files of `sebt validate` share: its options, one check's outcome
 * and the context the stages run in. cmd_validate.c parses and runs the
 * stages, validate_checks.c holds the checks, validate_isolate.c runs each
 * in a child process, validate_report.c writes the reports. */
#ifndef SEBT_CLI_VALIDATE_H
#define SEBT_CLI_VALIDATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

#define FUZZ_ROUND 1500        /* cases per fuzz round: long enough to reach big cases */
#define MUTANT_CASES 2000      /* a mutant not caught within this many is a harness failure */
/* In the mutants' hunt, and with --cases, a big case after every FUZZ_BIG_EVERY small ones instead of
 * by time (the first comes after 2.3 s of small cases: about 500 under ASan,
 * 2,000 in a plain build on the 2-core machine). 500: past the last small
 * case that catches a mutant on seed 1 (stamp_wrap's, 451), so each mutant
 * is caught by the same case as by time. */
#define FUZZ_BIG_EVERY 500
#define SPEED_REPEATS 3
#define SPEED_SLOW_S 1.0
#define SPEED_MAX_REPEATS 101
#define SPEED_MIN_TOTAL_S 1.0
/* Below this share of fast_cpu's speed a backend is warned about (a pass
 * still, unless --min-speedup says otherwise): slower than the scalar
 * template, which is what a kernel that is correct but not yet fast is. */
#define SPEED_WARN_BELOW 0.01
#define MAX_DATA 8             /* --data files; each runs plain and gap-filled */
#define MAX_INPUTS 16
#define MAX_CHECKS 512
/* A call of the backend is hung once it has run this many times the
 * reference's time for the same work, and at least --call-timeout. */
#define CALL_TIMEOUT_SCALE 20
#define CALL_TIMEOUT_DEFAULT_S 60
#define BIG_CALL_MIN_TIME 60       /* the big call runs at --time 60 or more ... */
#define BIG_CALL_MIN_CASES 10000   /* ... or --cases 10,000 or more */
/* ... and when the backend's measured speed predicts it within the check's
 * time limit divided by this: a call past its limit is hung, and a correct
 * backend on a loaded machine must not get there. */
#define BIG_CALL_MARGIN 4
#define BIG_CALL_BARS 152832       /* the bundled 15m series as loaded, the big call's */

typedef struct {
    const char *backend;
    double time_s;
    uint64_t cases;          /* > 0: fuzz this many cases instead of for time_s */
    double check_timeout_s;  /* a child check running longer is stopped (0: the default) */
    double call_timeout_s;   /* the least time one call of the backend gets before it counts as hung */
    uint64_t seed;
    int threads;
    const char *data[MAX_DATA];
    size_t n_data;
    double min_speedup;
    bool no_speed;
    const char *save_dir;
    const char *replay;
    bool json;
    const char *junit;
    const char *markdown;
    int isolate;             /* 1 fork per check, 0 in-process, -1 the backend's default */
    bool fail_fast;          /* stop at the first check that does not pass */
    bool big_call_only;      /* --big-call: only the big-call check */
    bool speed_only;         /* --speed-only: only the speed stage */
} validate_args;

/* ---- one check, run in a child ------------------------------------------- */

typedef enum { V_PASS, V_FAIL, V_ERROR, V_SKIP, V_CRASH } v_status;
extern const char *const status_names[];

/* What a child reports; lives in shared memory so it survives the child. */
typedef struct {
    v_status status;
    sebt_status err_code;
    char message[512];       /* one line */
    char detail[4096];       /* the divergence, for people */
    char replay[2048];       /* a command that reproduces the failure */
    double seconds;
    uint64_t combos, ties, cases, trades, bars;
    /* Combos whose analysis columns were compared with the reference's
     * (a backend whose walk keeps their tally: analysis_walk). */
    uint64_t analysis;
    bool analysis_walk;
    double value[4];         /* speed: candidate s, fast_cpu s, speedup (NaN: not compared) */
    char warning[256];       /* a pass that deserves a look ("" when none) */
    uint64_t at_seed, at_case;   /* fuzz: the case running (for a crash) */
    bool at_known, at_big;       /* ... set by fuzz; a big case or a small one */
    int at_threads;              /* ... the threads it was given */
    bool written;            /* the child got as far as an outcome */
    /* The backend's call in progress, for the parent's watch (0: none):
     * when it started, how long it may take, what it is. */
    double call_t0, call_limit, call_ref_s;
    char call_what[128];
    /* The candidate's run_batch calls that returned: seconds in them and
     * the bar x combo units they ran (its measured speed). */
    double cand_call_s, cand_units;
} v_outcome;

typedef struct {
    const char *stage;       /* replay, parity, fuzz, anti-vacuity, speed */
    char name[512];
    v_outcome out;
} v_check;

typedef struct {
    const validate_args *a;
    const sebt_backend *cand;
    const char *sel;         /* what --backend must say to get cand again */
    char fixtures[PATH_MAX];
    char combos_path[PATH_MAX];
    sebt_params *combos;
    size_t n_combos;
    v_check *checks;
    size_t n_checks;
    bool isolate;
    double check_timeout_s;
    char hung_in[600];       /* the check the backend hung in ("" while none has) */
    bool kernel;             /* the candidate is a kernel command (exec:) */
    double cand_call_s, cand_units;   /* summed over the checks that passed */
} v_ctx;

typedef void (*v_fn)(v_ctx *c, const void *arg, v_outcome *out);

/* ---- validate_isolate.c: running a check ---------------------------------- */

const char *signal_name(int sig);
/* A plugin whose constructor or entry point crashes would take sebt down
 * with a bare signal: it is opened once in a child first, under the time
 * limit. Prints and returns an exit code. */
int probe_plugin(const char *cmd, const char *path, double limit_s);
/* Runs fn in a child; a crash becomes V_CRASH with the signal named. */
void run_isolated(v_ctx *c, v_fn fn, const void *arg, v_check *check);
/* A kernel's requests limited as the isolated calls are (validate_isolate.c). */
void watch_kernel(v_ctx *c);

/* ---- validate_checks.c: the checks (v_fn) ---------------------------------- */

void do_replay(v_ctx *c, const void *arg, v_outcome *o);
void do_parity(v_ctx *c, const void *varg, v_outcome *o);
void do_parity_grid(v_ctx *c, const void *varg, v_outcome *o);
/* sebt_parity_grid_combos as a grid file under dir, for the replay
 * command of a failing grid parity check; false when it cannot be written. */
bool write_grid_file(const char *dir, char *path, size_t size);
void do_fuzz(v_ctx *c, const void *arg, v_outcome *o);
void do_determinism(v_ctx *c, const void *arg, v_outcome *o);
/* One metrics-only call of more than 2^32 bar-combos (sebt_oracle_big_call)
 * over the bundled 15m series (whatever --data says: few bars would make
 * it millions of combos), on
 * big_call_threads threads: at least 4, past a small machine's cores. */
void do_big_call(v_ctx *c, const void *arg, v_outcome *o);
int big_call_threads(const validate_args *a);
void do_bad_input(v_ctx *c, const void *arg, v_outcome *o);
void do_mutant(v_ctx *c, const void *arg, v_outcome *o);
void do_speed(v_ctx *c, const void *arg, v_outcome *o);
/* A streamed sweep written in the format arg names ("csv", "json", "npy")
 * and verified in full (every row read back, the cache). */
void do_written_sweep(v_ctx *c, const void *arg, v_outcome *o);
/* The series cache: a cached load of the bundled minutes against a fresh parse. */
void do_series_cache(v_ctx *c, const void *arg, v_outcome *o);

/* ---- validate_report.c: the reports ---------------------------------------- */

/* One line for a check that ran: its numbers when it passed, else its message. */
const char *check_summary(const v_check *k, char *buf, size_t size);
/* The line saying how the run judged the analysis columns (cli_analysis_line). */
void analysis_summary(const v_ctx *c, char *buf, size_t size);
void write_text(const v_ctx *c, int code);
void write_json(const v_ctx *c, int code);
int write_junit(const v_ctx *c);
int write_markdown(const v_ctx *c, int code);
/* The check's line on a terminal as it finishes (nothing with --format json). */
void announce(const v_ctx *c, const v_check *k);

#endif
