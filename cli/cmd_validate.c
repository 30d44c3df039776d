/* `sebt validate`: the release gate for one backend, one command.
 *
 * Stages, each a list of checks (one JUnit testcase each):
 *   replay        every fixture of fixtures/regressions
 *   parity        every bundled real series, plain and gap-filled, with the
 *                 parity combos; counts the candidate's trades
 *   fuzz          generated cases for --time seconds (or --cases of them),
 *                 in rounds of FUZZ_ROUND cases with their own seeds and
 *                 thread counts
 *   anti-vacuity  the same harness catches every mutant in this run, and
 *                 the candidate produced trades on real data
 *   speed         a fixed sweep against fast_cpu (reported; gated only
 *                 with --min-speedup)
 *
 * Every check runs in a child process (fork) that writes its outcome into
 * shared memory: a backend that crashes takes down the child only, and the
 * crash is reported as such, with the command that reproduces it, never as
 * a divergence. The parent runs no backend code (in particular no OpenMP
 * before a fork). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "select.h"

/* Messages and commands are built in fixed buffers that live in shared
 * memory; one that would not fit (a path of thousands of characters) is
 * cut, never overflowed, which is what this warning is about. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include "sebt/grid.h"
#include "sebt/outfile.h"

#define FUZZ_ROUND 1500        /* cases per fuzz round: long enough to reach big cases */
#define MUTANT_CASES 2000      /* a mutant not caught within this many is a harness failure */
/* With --cases, a big case after every FUZZ_BIG_EVERY small ones instead of
 * by time (the first comes after 2.3 s of small cases: about 500 under ASan,
 * 2,000 in a plain build on the 2-core machine). 500: past the last small
 * case that catches a mutant on seed 1 (stamp_wrap's, 451), so each mutant
 * is caught by the same case as by time. */
#define FUZZ_BIG_EVERY 500
#define SPEED_REPEATS 3
#define SPEED_SLOW_S 1.0
#define SPEED_MAX_REPEATS 101
#define SPEED_MIN_TOTAL_S 1.0
#define MAX_DATA 8             /* --data files; each runs plain and gap-filled */
#define MAX_INPUTS 16
#define MAX_CHECKS 512

typedef struct {
    const char *backend;
    double time_s;
    uint64_t cases;          /* > 0: fuzz this many cases instead of for time_s */
    double check_timeout_s;  /* a child check running longer is stopped (0: the default) */
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
} validate_args;

/* ---- one check, run in a child ------------------------------------------- */

typedef enum { V_PASS, V_FAIL, V_ERROR, V_SKIP, V_CRASH } v_status;
static const char *const status_names[] = { "pass", "fail", "error", "skipped", "crash" };

/* What a child reports; lives in shared memory so it survives the child. */
typedef struct {
    v_status status;
    sebt_status err_code;
    char message[512];       /* one line */
    char detail[4096];       /* the divergence, for people */
    char replay[2048];       /* a command that reproduces the failure */
    double seconds;
    uint64_t combos, ties, cases, trades, bars;
    double value[4];         /* speed: candidate s, fast_cpu s, speedup */
    uint64_t at_seed, at_case;   /* fuzz: the case running (for a crash) */
    bool written;            /* the child got as far as an outcome */
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
} v_ctx;

typedef void (*v_fn)(v_ctx *c, const void *arg, v_outcome *out);

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE (arithmetic fault)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort)";
    case SIGKILL: return "SIGKILL (killed, out of memory?)";
    default: return "a signal";
    }
}

/* Waits for child pid at most limit_s seconds; past it, kills it (SIGKILL)
 * and reaps it, returning false. *wst is -1 when waiting failed. */
static bool wait_with_limit(pid_t pid, double limit_s, int *wst)
{
    double t0 = cli_now();
    for (unsigned nap = 1000;; nap = nap < 50000 ? nap * 2 : nap) {
        pid_t got = waitpid(pid, wst, WNOHANG);
        if (got == pid)
            return true;
        if (got < 0 && errno != EINTR) {
            *wst = -1;
            return true;
        }
        if (cli_now() - t0 > limit_s) {
            kill(pid, SIGKILL);
            while (waitpid(pid, wst, 0) < 0 && errno == EINTR)
                ;
            return false;
        }
        usleep(nap);
    }
}

/* A plugin whose constructor or entry point crashes would take sebt down
 * with a bare signal: it is opened once in a child first, under the time
 * limit. Prints and returns an exit code. */
static int probe_plugin(const char *cmd, const char *path, double limit_s)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        const sebt_backend *b = NULL;
        sebt_error err = { 0 };
        _exit(sebt_plugin_open(path, &b, &err) == SEBT_OK ? 0 : 2);
    }
    int wst = 0;
    if (pid < 0)
        return CLI_EXIT_OK;   /* no child: open it here, as before */
    if (!wait_with_limit(pid, limit_s, &wst)) {
        fprintf(stderr, "sebt %s: error: plugin %s did not finish loading within %.0f s (its constructor or "
                "sebt_backend_plugin never returned)\n", cmd, path, limit_s);
        return CLI_EXIT_CHECK_FAILED;
    }
    if (wst != -1 && WIFSIGNALED(wst)) {
        fprintf(stderr, "sebt %s: error: plugin %s crashed with %s while loading (in its constructor or "
                "sebt_backend_plugin); it was never run\n", cmd, path, signal_name(WTERMSIG(wst)));
        return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_OK;
}

/* Runs fn in a child; a crash becomes V_CRASH with the signal named. */
static void run_isolated(v_ctx *c, v_fn fn, const void *arg, v_check *check)
{
    if (!c->isolate) {
        double t0 = cli_now();
        fn(c, arg, &check->out);
        check->out.seconds = cli_now() - t0;
        return;
    }
    v_outcome *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        check->out.status = V_ERROR;
        snprintf(check->out.message, sizeof check->out.message, "cannot map memory for a child process");
        return;
    }
    memset(shared, 0, sizeof *shared);
    fflush(NULL);
    double t0 = cli_now();
    pid_t pid = fork();
    if (pid == 0) {
        fn(c, arg, shared);
        shared->written = true;
        sebt_kernels_close();   /* _exit runs no atexit: end the kernel this check started */
        /* _exit: no atexit handlers of the parent's, no stdio flushed twice. */
        _exit(0);
    }
    int wst = 0;
    bool timed_out = false;
    if (pid > 0)
        timed_out = !wait_with_limit(pid, c->check_timeout_s, &wst);
    if (pid < 0 || (!timed_out && wst == -1)) {
        check->out.status = V_ERROR;
        snprintf(check->out.message, sizeof check->out.message, "cannot start a child process");
        munmap(shared, sizeof *shared);
        return;
    }
    check->out = *shared;
    check->out.seconds = cli_now() - t0;
    munmap(shared, sizeof *shared);
    if (timed_out) {
        check->out.status = V_CRASH;
        snprintf(check->out.message, sizeof check->out.message,
                 "the backend %s ran past the check's time limit of %.0f s and was stopped (a loop that never "
                 "ends? --check-timeout SECONDS sets the limit)", c->cand->name, c->check_timeout_s);
    } else if (WIFSIGNALED(wst)) {
        check->out.status = V_CRASH;
        snprintf(check->out.message, sizeof check->out.message, "the backend %s crashed with %s",
                 c->cand->name, signal_name(WTERMSIG(wst)));
    } else if (!check->out.written) {
        check->out.status = V_CRASH;
        snprintf(check->out.message, sizeof check->out.message,
                 "the backend %s ended the process (exit status %d) instead of returning", c->cand->name,
                 WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    }
}

static v_check *add_check(v_ctx *c, const char *stage, const char *fmt, ...) SEBT_PRINTF(3, 4);
static v_check *add_check(v_ctx *c, const char *stage, const char *fmt, ...)
{
    if (c->n_checks == MAX_CHECKS)
        return NULL;
    v_check *k = &c->checks[c->n_checks++];
    memset(k, 0, sizeof *k);
    k->stage = stage;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->name, sizeof k->name, fmt, ap);
    va_end(ap);
    return k;
}

static void set_error(v_outcome *o, const sebt_error *err)
{
    o->status = V_ERROR;
    o->err_code = err->code;
    snprintf(o->message, sizeof o->message, "%s", err->msg);
}

static void set_divergence(v_outcome *o, const sebt_oracle_report *r)
{
    o->status = V_FAIL;
    if (r->n_details) {
        const sebt_divergence *d = &r->details[0];
        snprintf(o->message, sizeof o->message, "%zu of %zu combos diverge; first: combo %zu, %s at bar %" PRId64,
                 r->combos_diverged, r->combos_checked, d->combo, d->what, d->bar);
        sebt_divergence_text(d, o->detail, sizeof o->detail);
    } else {
        snprintf(o->message, sizeof o->message, "%zu of %zu combos diverge", r->combos_diverged,
                 r->combos_checked);
    }
}

static int cand_threads(const v_ctx *c) { return c->a->threads; }

/* ---- replay ------------------------------------------------------------------ */

static void do_replay(v_ctx *c, const void *arg, v_outcome *o)
{
    const char *dir = arg;
    sebt_fixture f;
    sebt_error err = { 0 };
    /* A batch bug's fixture (combos.csv, batch.txt) runs as it was found. */
    char batch[PATH_MAX + 32];
    struct stat sb;
    snprintf(batch, sizeof batch, "%s/combos.csv", dir);
    if (stat(batch, &sb) == 0) {
        bool diverged = false;
        sebt_divergence d;
        if (sebt_fixture_check(c->cand, dir, &diverged, &d, &err) != SEBT_OK) {
            set_error(o, &err);
        } else if (diverged) {
            o->status = V_FAIL;
            snprintf(o->message, sizeof o->message, "combo %zu of the fixture's batch: %s at bar %" PRId64,
                     d.combo, d.what, d.bar);
            sebt_divergence_text(&d, o->detail, sizeof o->detail);
        } else {
            o->status = V_PASS;
        }
        return;
    }
    if (sebt_fixture_read(dir, &f, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    sebt_oracle_opts opts = { .threads = cand_threads(c) };
    sebt_oracle_report r;
    if (sebt_oracle_check(c->cand, &f.series, &f.params, 1, &opts, &r, &err) != SEBT_OK) {
        set_error(o, &err);
    } else {
        o->combos = r.combos_checked;
        o->ties = r.ties;
        o->bars = f.series.n;
        if (r.combos_diverged)
            set_divergence(o, &r);
        else
            o->status = V_PASS;
    }
    sebt_fixture_free(&f);
}

/* ---- parity ------------------------------------------------------------------ */

/* One series of the oracle's parity set (sebt_parity_input): a bundled
 * file as loaded or gap-filled, or the one-minute files joined and run with
 * a tiny memory budget, as `sebt parity` checks them by default. */
static void do_parity(v_ctx *c, const void *varg, v_outcome *o)
{
    const sebt_parity_input *in = varg;
    sebt_error err = { 0 };
    sebt_parity_opts po = { .threads = cand_threads(c) };
    sebt_parity_result pr;
    memset(&pr, 0, sizeof pr);
    if (sebt_parity_run(c->cand, in, 1, c->combos, c->n_combos, &po, &pr, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    o->bars = pr.bars;
    o->combos = pr.report.combos_checked;
    o->ties = pr.report.ties;
    if (pr.report.combos_diverged) {
        set_divergence(o, &pr.report);
        return;
    }
    /* The trades the candidate made, for the anti-vacuity check: parity on
     * a window where nobody trades would prove little. */
    sebt_series s;
    if (sebt_parity_load(in, &s, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    sebt_result *res = calloc(c->n_combos, sizeof *res);
    sebt_batch_opts bo = { .threads = cand_threads(c), .memory_budget = in->memory_budget };
    if (!res || c->cand->run_batch(c->cand, &s, c->combos, c->n_combos, &bo, res, &err) != SEBT_OK) {
        if (!res)
            sebt_fail(&err, SEBT_ERR_NOMEM, "out of memory");
        set_error(o, &err);
    } else {
        for (size_t i = 0; i < c->n_combos; i++)
            o->trades += res[i].n_trades;
        o->status = V_PASS;
        sebt_results_free(res, c->n_combos);
    }
    free(res);
    sebt_series_free(&s);
}

/* The same on grid-shaped combos (sebt_parity_grid_combos): sweep engines
 * share work between combos with common spans, which the hand-picked
 * combos never have. */
static void do_parity_grid(v_ctx *c, const void *varg, v_outcome *o)
{
    sebt_params grid[SEBT_PARITY_GRID_COMBOS];
    size_t n = sebt_parity_grid_combos(grid, SEBT_PARITY_GRID_COMBOS);
    sebt_params *keep = c->combos;
    size_t keep_n = c->n_combos;
    c->combos = grid;
    c->n_combos = n;
    do_parity(c, varg, o);
    c->combos = keep;
    c->n_combos = keep_n;
}

/* sebt_parity_grid_combos as a grid file under dir, for the replay
 * command of a failing grid parity check; false when it cannot be written. */
static bool write_grid_file(const char *dir, char *path, size_t size)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return false;
    char abs[PATH_MAX];
    snprintf(path, size, "%s/parity-grid-shaped.grid", realpath(dir, abs) ? abs : dir);
    sebt_outfile of;
    sebt_error err = { 0 };
    if (sebt_outfile_open(&of, path, &err) != SEBT_OK)
        return false;
    fputs("# sebt_parity_grid_combos: the grid-shaped combos sebt validate checks parity on\n"
          "ema_fast = 1, 24\nema_slow = 1, 96\nz_window = 2, 96\natr_window = 1\nvol_z = -1.0\ntr_z = -1.0\n"
          "cloc_min = 0.0, 0.5\nuse_stop = true\natr_stop_mult = 0.7\nuse_tp = true\nreward_r = 2.0\n"
          "use_time = true\nmax_hold = 48\nfee_bp = 5\nslippage_bp = 5\n", of.f);
    return sebt_outfile_commit(&of, &err) == SEBT_OK;
}

/* ---- fuzz ---------------------------------------------------------------------- */

typedef struct {
    v_outcome *o;
    uint64_t seed;
} fuzz_progress_ctx;

static void fuzz_progress(void *user, size_t done, size_t total)
{
    (void)total;
    fuzz_progress_ctx *p = user;
    p->o->at_seed = p->seed;
    p->o->at_case = done;
}

static void do_fuzz(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    const validate_args *a = c->a;
    int max_threads = a->threads > 0 ? a->threads : cli_cpu_threads();
    /* Big cases are cut from the bundled 15m series, as `sebt fuzz` cuts
     * them by default, so its --big-case replays them. */
    char base_path[PATH_MAX + 64];
    snprintf(base_path, sizeof base_path, "%s/data/BTCUSDT-15m-2017-2021.csv.gz", c->fixtures);
    sebt_series base;
    sebt_load_opts lo = { 0 };
    bool have_base = access(base_path, R_OK) == 0 && sebt_load_csv(base_path, &lo, &base, NULL) == SEBT_OK;
    bool vary_memory = cli_vary_device_memory(c->cand);
    double start = cli_now();
    for (uint64_t round = 0;; round++) {
        double left = a->time_s - (cli_now() - start);
        if (a->cases ? o->cases >= a->cases : (left <= 0 && round > 0))
            break;
        uint64_t seed = a->seed + round;
        /* Each round its own thread count, so fuzzing reaches the
         * candidate's parallel paths too. */
        int threads = (int)(round % (uint64_t)max_threads) + 1;
        if (threads > o->value[3])
            o->value[3] = threads;
        fuzz_progress_ctx pc = { o, seed };
        /* Each thread count gets its share of a short budget too. */
        double round_s = a->time_s / max_threads;
        if (round_s > left)
            round_s = left;
        sebt_fuzz_opts fo = { .seed = seed, .iterations = FUZZ_ROUND, .time_s = round_s > 0.05 ? round_s : 0.05,
                              .shrink = true, .save_dir = a->save_dir, .progress = fuzz_progress,
                              .progress_user = &pc, .selector = c->sel, .threads = threads,
                              .base = have_base ? &base : NULL, .base_path = have_base ? base_path : NULL };
        if (a->cases) {
            fo.time_s = 0;
            fo.big_every = FUZZ_BIG_EVERY;
            if (a->cases - o->cases < fo.iterations)
                fo.iterations = a->cases - o->cases;
        }
        /* cuda under the CUDA stand-in: each case its own device memory,
         * so batches split as on a small device (docs/validate.md). */
        if (vary_memory)
            fo.before_case = cli_device_memory_hook;
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        if (sebt_fuzz_run(c->cand, &fo, &r, &err) != SEBT_OK) {
            set_error(o, &err);
            goto out;
        }
        o->cases += r.cases_run;
        o->combos += r.combos_checked;
        o->ties += r.ties;
        if (r.found) {
            o->status = V_FAIL;
            o->at_seed = seed;
            o->at_case = r.found_iteration;
            const char *kind = r.found_big ? "big case" : "case";
            if (r.nondeterministic)
                snprintf(o->message, sizeof o->message,
                         "non-deterministic: fuzz %s %" PRIu64 " of seed %" PRIu64 " (%s, %d threads): %s", kind,
                         r.found_iteration, seed, r.shape, threads, r.nondet_detail);
            else
                snprintf(o->message, sizeof o->message,
                         "divergence in fuzz %s %" PRIu64 " of seed %" PRIu64 " (%s): %s at bar %" PRId64
                         " as found, %s at bar %" PRId64 " shrunk from %zu to %zu bars", kind, r.found_iteration,
                         seed, r.shape, r.original.what, r.original.bar, r.divergence.what, r.divergence.bar,
                         r.original_bars, r.repro.n);
            size_t used = 0;
            if (!r.nondeterministic && !(strcmp(r.original.what, r.divergence.what) == 0 &&
                                         r.original.bar == r.divergence.bar)) {
                sebt_divergence_text(&r.original, o->detail, sizeof o->detail);
                used = strlen(o->detail);
                used += (size_t)snprintf(o->detail + used, sizeof o->detail - used, "shrunk:\n");
            }
            if (used < sizeof o->detail)
                sebt_divergence_text(&r.divergence, o->detail + used, sizeof o->detail - used);
            char abs[PATH_MAX], env[64] = "";
            const char *dm = vary_memory ? getenv("SEBT_CUDA_HOST_MEMORY") : NULL;
            if (dm && *dm)
                snprintf(env, sizeof env, "SEBT_CUDA_HOST_MEMORY=%s ", dm);
            if (r.saved_path[0])
                snprintf(o->replay, sizeof o->replay, "%ssebt validate --backend %s --replay %s", env, c->sel,
                         realpath(r.saved_path, abs) ? abs : r.saved_path);
            else
                sebt_fuzz_replay_command(c->cand, &fo, &r, o->replay, sizeof o->replay);
            sebt_fuzz_report_free(&r);
            goto out;
        }
        sebt_fuzz_report_free(&r);
    }
    o->status = V_PASS;
out:
    if (vary_memory)
        unsetenv("SEBT_CUDA_HOST_MEMORY");
    if (have_base)
        sebt_series_free(&base);
}

/* ---- determinism and independence (no reference) ------------------------- */

#define DETERMINISM_CASES 40   /* generated cases with 2+ combos, then one big case */

/* The metamorphic checks (sebt_oracle_metamorphic) on cases of the fuzz
 * generator: a combo's result must not depend on the call made before it,
 * its companions, their order, the threads or the batch split. */
static void do_determinism(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    const validate_args *a = c->a;
    int threads = a->threads > 0 ? a->threads : cli_cpu_threads();
    if (threads < 2)
        threads = 2;
    uint64_t seed = a->seed;
    size_t done = 0;
    for (uint64_t it = 0; done <= DETERMINISM_CASES && it < 4000; it++) {
        bool big = done == DETERMINISM_CASES;
        sebt_fuzz_case fc;
        sebt_error err = { 0 };
        sebt_status st = big ? sebt_fuzz_generate_big(seed, 0, NULL, &fc, &err)
                             : sebt_fuzz_generate(seed, it, &fc, &err);
        if (st) {
            set_error(o, &err);
            return;
        }
        if (fc.n_combos < 2 || fc.series.n < 2) {
            sebt_fuzz_case_free(&fc);
            continue;
        }
        o->at_seed = seed;
        o->at_case = big ? 0 : it;
        sebt_metamorphic_report mr;
        st = sebt_oracle_metamorphic(c->cand, &fc.series, fc.combos, fc.n_combos, threads, fc.memory_budget, &mr, &err);
        done++;
        o->cases++;
        o->combos += fc.n_combos;
        if (st == SEBT_OK && mr.failed) {
            o->status = V_FAIL;
            snprintf(o->message, sizeof o->message, "%s%s in fuzz %s %" PRIu64 " of seed %" PRIu64 " (%s)",
                     mr.nondeterministic ? "non-deterministic: " : "", mr.what, big ? "big case" : "case",
                     big ? (uint64_t)0 : it, seed, fc.shape);
            snprintf(o->detail, sizeof o->detail, "%s\n", mr.detail);
            snprintf(o->replay, sizeof o->replay, "sebt validate --backend %s --seed %" PRIu64 " --threads %d --time 1",
                     c->sel, seed, threads);
        } else if (st == SEBT_ERR_NOMEM || st == SEBT_ERR_NODEVICE || st == SEBT_ERR_UNAVAILABLE) {
            /* Out of memory (or device) says nothing about the kernel: the
             * check could not run, it did not fail. */
            set_error(o, &err);
        } else if (st) {
            /* The candidate refused a valid case: a divergence the fuzz
             * stage names with the reference beside it. */
            o->status = V_FAIL;
            snprintf(o->message, sizeof o->message, "the backend failed on fuzz %s %" PRIu64 " of seed %" PRIu64
                     " (%s): %s", big ? "big case" : "case", big ? (uint64_t)0 : it, seed, fc.shape, err.msg);
        }
        sebt_fuzz_case_free(&fc);
        if (o->status == V_FAIL || o->status == V_ERROR)
            return;
    }
    o->status = V_PASS;
    snprintf(o->message, sizeof o->message, "%" PRIu64 " cases: the same call twice, reversed on 1 thread with a "
             "1-byte budget, each combo alone: the same results", o->cases);
}

/* ---- bad input: a kernel must refuse it ------------------------------------- */

/* The kernel is called directly with one invalid combo among valid ones
 * and with invalid series; it must return an error (SEBT_ERR_PARAM or
 * SEBT_ERR_INPUT), and for a combo name it ("combo K"), never compute. */
static void do_bad_input(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    sebt_series s;
    sebt_error err = { 0 };
    size_t n = 40;
    if (sebt_series_alloc(&s, n, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    for (size_t t = 0; t < n; t++) {
        s.ts[t] = 1600000000000LL + (int64_t)t * 60000;
        s.open[t] = 100 + (double)(t % 7);
        s.close[t] = 100 + (double)((t * 3) % 7);
        s.high[t] = fmax(s.open[t], s.close[t]) + 1;
        s.low[t] = fmin(s.open[t], s.close[t]) - 1;
        s.volume[t] = 10 + (double)(t % 5);
    }
    sebt_series_recount(&s);
    sebt_params ok = sebt_params_default();
    ok.ema_fast = 2;
    ok.ema_slow = 5;
    ok.z_window = 3;
    ok.atr_window = 2;
    static const char *const combos[] = { "ema_fast 0", "z_window 1", "vol_z NaN", "atr_stop_mult -1",
                                          "reward_r 0", "max_hold 0", "fee_bp -1" };
    char failures[2048] = "";
    size_t used = 0, tried = 0;
    for (size_t k = 0; k < sizeof combos / sizeof combos[0]; k++) {
        sebt_params batch[4] = { ok, ok, ok, ok };
        sebt_params *p = &batch[2];
        switch (k) {
        case 0: p->ema_fast = 0; break;
        case 1: p->z_window = 1; break;
        case 2: p->vol_z = NAN; break;
        case 3: p->atr_stop_mult = -1; break;
        case 4: p->reward_r = 0; break;
        case 5: p->max_hold = 0; break;
        default: p->fee_bp = -1; break;
        }
        sebt_result res[4];
        memset(res, 0, sizeof res);
        sebt_batch_opts bo = { .threads = 1, .want_trades = true };
        sebt_error e = { 0 };
        sebt_status st = c->cand->run_batch(c->cand, &s, batch, 4, &bo, res, &e);
        tried++;
        if (st == SEBT_ERR_NOMEM) { /* not a refusal: the check could not run */
            set_error(o, &e);
            sebt_series_free(&s);
            return;
        }
        if (st == SEBT_OK) {
            sebt_results_free(res, 4);
            used += (size_t)snprintf(failures + used, sizeof failures - used,
                                     "run_batch accepted combo 2 with %s; ", combos[k]);
        } else if (!strstr(e.msg, "combo 2")) {
            used += (size_t)snprintf(failures + used, sizeof failures - used,
                                     "run_batch refused combo 2 with %s, but its message does not name it "
                                     "(\"combo 2\"): %s; ", combos[k], e.msg);
        }
        if (used >= sizeof failures)
            break;
    }
    /* Series that break SPEC §1: high below low, time not increasing, a bar half missing. */
    for (int k = 0; k < 3 && used < sizeof failures; k++) {
        sebt_series b;
        if (sebt_series_slice(&s, 0, s.n, &b, &err) != SEBT_OK) {
            set_error(o, &err);
            sebt_series_free(&s);
            return;
        }
        const char *what = k == 0 ? "high < low at bar 7" : k == 1 ? "ts[9] == ts[8]" : "bar 5 with only close NaN";
        if (k == 0)
            b.high[7] = b.low[7] - 1;
        else if (k == 1)
            b.ts[9] = b.ts[8];
        else
            b.close[5] = NAN;
        sebt_result res[1];
        memset(res, 0, sizeof res);
        sebt_batch_opts bo = { .threads = 1, .want_trades = true };
        sebt_error e = { 0 };
        sebt_status st = c->cand->run_batch(c->cand, &b, &ok, 1, &bo, res, &e);
        tried++;
        if (st == SEBT_OK) {
            sebt_results_free(res, 1);
            used += (size_t)snprintf(failures + used, sizeof failures - used, "run_batch accepted a series with %s; ",
                                     what);
        }
        sebt_series_free(&b);
    }
    sebt_series_free(&s);
    o->cases = tried;
    if (failures[0]) {
        o->status = V_FAIL;
        snprintf(o->message, sizeof o->message, "the backend does not refuse bad input (SPEC §1-2, backend.h)");
        snprintf(o->detail, sizeof o->detail, "%s\n", failures);
    } else {
        o->status = V_PASS;
        snprintf(o->message, sizeof o->message, "%zu invalid calls refused, each combo named", tried);
    }
}

/* ---- anti-vacuity: the mutants --------------------------------------------- */

/* A mutant counts as caught when the fuzzer finds it, or else when parity on
 * the bundled data set does (as in `sebt fuzz --self-test`: some planted
 * bugs, a batch restart for one, only show on long series with many
 * batches, which is what the bundled set's joined series is for). */
static void do_mutant(v_ctx *c, const void *arg, v_outcome *o)
{
    const sebt_backend *m = arg;
    sebt_fuzz_opts fo = { .seed = c->a->seed, .iterations = MUTANT_CASES, .shrink = false,
                          .big_every = c->a->cases ? FUZZ_BIG_EVERY : 0 };
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    if (sebt_fuzz_run(m, &fo, &r, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    o->cases = r.cases_run;
    if (r.found) {
        o->status = V_PASS;
        snprintf(o->message, sizeof o->message, "caught by fuzz in case %" PRIu64 ": %s", r.found_iteration,
                 r.divergence.what);
        sebt_fuzz_report_free(&r);
        return;
    }
    sebt_fuzz_report_free(&r);
    char data[PATH_MAX + 16];
    snprintf(data, sizeof data, "%s/data", c->fixtures);
    sebt_parity_input inputs[MAX_INPUTS];
    static char paths[8][SEBT_PARITY_PATH_MAX];
    size_t ni = sebt_parity_default_inputs(data, inputs, MAX_INPUTS, paths, 8);
    sebt_parity_result res[MAX_INPUTS];
    memset(res, 0, sizeof res);
    sebt_parity_opts po = { .threads = 1, .stop_first = true };
    if (sebt_parity_run(m, inputs, ni, c->combos, c->n_combos, &po, res, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    for (size_t i = 0; i < ni; i++)
        if (res[i].ran && res[i].report.combos_diverged) {
            o->status = V_PASS;
            snprintf(o->message, sizeof o->message, "caught by parity on %s: %s", res[i].input.label,
                     res[i].report.details[0].what);
            return;
        }
    o->status = V_FAIL;
    snprintf(o->message, sizeof o->message, "the harness caught %s neither by fuzz (%d cases) nor by parity on "
             "the bundled data: the checks above prove nothing", m->name, MUTANT_CASES);
}

/* ---- speed ---------------------------------------------------------------------- */

/* A fixed sweep, the same every run, so figures compare across releases:
 * 12 combos over the January 2019 1m series (44,640 bars) when bundled. */
static sebt_params *speed_combos(size_t *n)
{
    static const int32_t fast[] = { 24, 48, 96, 192 };
    static const double vz[] = { 1.5, 2.0, 2.5 };
    sebt_params *p = malloc(12 * sizeof *p);
    if (!p)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            p[k] = sebt_params_default();
            p[k].ema_fast = fast[i];
            p[k].vol_z = vz[j];
            k++;
        }
    *n = k;
    return p;
}

static double time_batch(const sebt_backend *b, const sebt_series *s, const sebt_params *p, size_t n,
                         int threads, sebt_error *err, bool *ok)
{
    sebt_result *res = calloc(n, sizeof *res);
    sebt_batch_opts bo = { .threads = threads };
    double t0 = cli_now();
    *ok = res && b->run_batch(b, s, p, n, &bo, res, err) == SEBT_OK;
    double t = cli_now() - t0;
    if (res && *ok)
        sebt_results_free(res, n);
    free(res);
    return t;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void do_speed(v_ctx *c, const void *arg, v_outcome *o)
{
    const char *path = arg;
    sebt_series s;
    sebt_error err = { 0 };
    sebt_load_opts lo = { 0 };
    if (sebt_load_csv(path, &lo, &s, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    size_t n = 0;
    sebt_params *p = speed_combos(&n);
    const sebt_backend *fast = NULL;
    if (!p || sebt_backend_get("fast_cpu", &fast, &err) != SEBT_OK) {
        set_error(o, &err);
        free(p);
        sebt_series_free(&s);
        return;
    }
    /* Alternating runs, medians: what the machine does meanwhile hits both. */
    /* A slow candidate (over SPEED_SLOW_S a run) is timed once: its ratio
     * is far from any gate, and the run stays short. */
    /* Fast backends finish this sweep in milliseconds: more runs (up to
     * SPEED_MAX_REPEATS, until each side has spent SPEED_MIN_TOTAL_S), so
     * the median is not one cold start. */
    double tc[SPEED_MAX_REPEATS], tf[SPEED_MAX_REPEATS], sum_c = 0, sum_f = 0;
    bool ok = true;
    int runs = 0;
    for (; runs < SPEED_MAX_REPEATS && ok; runs++) {
        /* Who goes first alternates: the second of a pair runs on warm caches. */
        if (runs % 2 == 0) {
            tf[runs] = time_batch(fast, &s, p, n, cand_threads(c), &err, &ok);
            if (ok)
                tc[runs] = time_batch(c->cand, &s, p, n, cand_threads(c), &err, &ok);
        } else {
            tc[runs] = time_batch(c->cand, &s, p, n, cand_threads(c), &err, &ok);
            if (ok)
                tf[runs] = time_batch(fast, &s, p, n, cand_threads(c), &err, &ok);
        }
        if (!ok)
            break;
        sum_c += tc[runs];
        sum_f += tf[runs];
        if (tc[runs] > SPEED_SLOW_S) {
            runs++;
            break;
        }
        if (runs + 1 >= SPEED_REPEATS && sum_c >= SPEED_MIN_TOTAL_S && sum_f >= SPEED_MIN_TOTAL_S) {
            runs++;
            break;
        }
    }
    if (!ok) {
        set_error(o, &err);
    } else {
        qsort(tc, (size_t)runs, sizeof tc[0], cmp_double);
        qsort(tf, (size_t)runs, sizeof tf[0], cmp_double);
        o->bars = s.n;
        o->combos = n;
        o->value[0] = tc[runs / 2];
        o->value[1] = tf[runs / 2];
        o->value[2] = o->value[1] / o->value[0];
        o->status = V_PASS;
        snprintf(o->message, sizeof o->message,
                 "%zu combos x %zu bars: %s %.3f s, fast_cpu %.3f s (median of %d): %.3gx fast_cpu's speed",
                 n, s.n, c->cand->name, o->value[0], o->value[1], runs, o->value[2]);
        if (c->a->min_speedup > 0 && o->value[2] < c->a->min_speedup) {
            o->status = V_FAIL;
            size_t len = strlen(o->message);
            snprintf(o->message + len, sizeof o->message - len, ", below --min-speedup %g", c->a->min_speedup);
        }
    }
    free(p);
    sebt_series_free(&s);
}

/* ---- data and fixtures ------------------------------------------------------------ */

void cli_share_paths(char *fixtures, size_t fsize, char *combos, size_t csize)
{
    snprintf(fixtures, fsize, "%s", cli_share("fixtures"));
    snprintf(combos, csize, "%s", cli_share("parity-combos.csv"));
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The entries of dir (files when want_dirs is false, folders when true)
 * whose names end in one of the suffixes, sorted; malloc'd. Out of memory
 * sets *nomem and lists nothing: a partial list would skip entries without
 * a word. */
static size_t list_dir(const char *dir, bool want_dirs, char ***out, bool *nomem)
{
    *out = NULL;
    *nomem = false;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || S_ISDIR(st.st_mode) != want_dirs)
            continue;
        size_t len = strlen(e->d_name);
        if (!want_dirs && !(len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) &&
            !(len > 7 && strcmp(e->d_name + len - 7, ".csv.gz") == 0))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(v, cap * sizeof *v);
            if (!grown) {
                *nomem = true;
                break;
            }
            v = grown;
        }
        if (!(v[n] = strdup(path))) {
            *nomem = true;
            break;
        }
        n++;
    }
    closedir(d);
    if (*nomem) {
        free_list(v, n);
        return 0;
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- options -------------------------------------------------------------------- */

enum { OPT_BACKEND, OPT_TIME, OPT_CASES, OPT_SEED, OPT_THREADS, OPT_DATA, OPT_MIN_SPEEDUP, OPT_NO_SPEED, OPT_SAVE,
       OPT_REPLAY, OPT_NO_ISOLATE, OPT_ISOLATE, OPT_FORMAT, OPT_JUNIT, OPT_MARKDOWN, OPT_CHECK_TIMEOUT };
static const cli_opt validate_opts[] = {
    [OPT_BACKEND] = { "--backend", CLI_TEXT, "X", "fast_cpu, cuda, reference, the path of a plugin, or a kernel\n"
                      "command: 'exec:python3 mine.py' (docs/kernel-protocol.md)",
                      .complete = cli_backend_words },
    [OPT_TIME] = { "--time", CLI_REAL, "SECONDS", "fuzz budget (default 120)", .flags = CLI_ABOVE_MIN, .rmin = 0,
                   .rmax = 1e6 },
    [OPT_CASES] = { "--cases", CLI_UINT, "N", "fuzz N cases instead of for a time: the same cases in every run\n"
                    "(a big case after every 500 small ones; mutants' fuzz too)",
                    .umin = 1, .umax = CLI_UINT_MAX },
    [OPT_SEED] = { "--seed", CLI_UINT, "S", "first fuzz seed (default 1); round k uses seed S+k",
                   .umax = CLI_UINT_MAX },
    [OPT_THREADS] = CLI_OPT_THREADS("most threads given to the backend (default: OMP_NUM_THREADS or\n"
                                    "all cores); fuzz rounds cycle 1, 2, ..., N"),
    [OPT_DATA] = { "--data", CLI_FILE, "FILE", "check parity on FILE instead of the bundled series (repeatable)",
                   .flags = CLI_REPEAT, .max_count = MAX_DATA },
    [OPT_MIN_SPEEDUP] = { "--min-speedup", CLI_REAL, "X", "fail unless the backend is at least X times fast_cpu's speed",
                          .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = INFINITY },
    [OPT_NO_SPEED] = { "--no-speed", CLI_FLAG, NULL, "skip the speed stage" },
    [OPT_SAVE] = { "--save", CLI_DIR, "DIR", "where a fuzz reproducer is written (default ./sebt-validate)" },
    [OPT_REPLAY] = { "--replay", CLI_DIR, "DIR", "only replay this fixture folder (what a failure tells you to run)" },
    [OPT_NO_ISOLATE] = { "--no-isolate", CLI_FLAG, NULL, "run the checks in this process (a crash then ends the run);\n"
                         "the default for cuda, whose CUDA context does not survive fork,\n"
                         "and for a kernel command (exec:), which has its own process" },
    [OPT_ISOLATE] = { "--isolate", CLI_FLAG, NULL, "one child process per check (the default for other backends)" },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "text (default) or json, on stdout", .choices = cli_text_json },
    [OPT_JUNIT] = { "--junit", CLI_FILE, "FILE", "JUnit XML: one testcase per stage and data set" },
    [OPT_CHECK_TIMEOUT] = { "--check-timeout", CLI_REAL, "SECONDS",
                             "stop a check (child process) running longer, reported as a crash\n"
                             "(default: 600, or 3 x --time + 60 when that is more)",
                             .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = 1e7 },
    [OPT_MARKDOWN] = { "--markdown", CLI_FILE, "FILE", "a summary for a CI job page (GitHub's $GITHUB_STEP_SUMMARY)" },
};

const cli_command cli_cmd_validate_spec = {
    .name = "validate",
    .summary = "the release gate for one backend or plugin: replay, parity, fuzz, speed",
    .usage = "--backend NAME|PATH|exec:CMD [--time SECONDS | --cases N] [--seed S] [--threads N] [--data FILE]... [--min-speedup X] [--no-speed] [--save DIR] [--isolate | --no-isolate] [--check-timeout SECONDS] [--format text|json] [--junit FILE] [--markdown FILE]\n"
             "--backend NAME|PATH --replay FIXTURE_DIR\n",
    .about = "The release gate for one backend: a built-in one (fast_cpu, cuda) or a plugin\n"
             "(a path: ./libmine.so). In one run it\n"
             "  replays every fixture of fixtures/regressions against the reference,\n"
             "  checks parity on every bundled real series, plain and gap-filled, with the\n"
             "    parity combos (exact: bit for bit; tolerant: within tol, ties adjudicated),\n"
             "  fuzzes it for --time seconds (or --cases N) with sebt fuzz's cases (0 to\n"
             "    140,000 bars, 1 to 65,600 combos a batch, sweep-shaped grids, spikes then\n"
             "    near-ties, holes and jumps past 2^16, 10^5 and 2^17 bars, memory budgets\n"
             "    that split batches, 1 to N threads; for cuda under host execution, small\n"
             "    device memory sizes),\n"
             "    shrinking a divergence to a small reproducer of the same kind,\n"
             "  checks determinism (the same call twice, reordered, split, alone) and that\n"
             "    invalid combos and series are refused,\n"
             "  proves the harness is not vacuous: every mutant (planted bug) is caught in this\n"
             "    run, and the backend produced trades on real data,\n"
             "  times a fixed sweep against fast_cpu (reported; a gate only with --min-speedup).\n"
             "Each check runs in a child process: a crash is reported as a crash, with the\n"
             "command that reproduces it.\n",
    .opts = CLI_OPTS(validate_opts),
    .epilog = "Environment: SEBT_SHARE_DIR, the folder holding fixtures/ and parity-combos.csv\n"
              "(default: PREFIX/share/sebt beside an installed sebt, or the build folder's share/sebt).\n"
              "\n"
              "Exit codes: 0 every check passed, 1 a check failed (divergence, crash, mutant\n"
              "missed, no trades, too slow), 2 bad usage, bad input or a plugin that does not\n"
              "load, 3 the backend needs a GPU and none is usable.\n",
    .fn = cli_cmd_validate,
};

static int parse_args(int argc, char **argv, validate_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->time_s = 120;
    a->seed = 1;
    a->save_dir = "sebt-validate";
    a->isolate = -1;
    cli_args o;
    int rc = cli_parse(&cli_cmd_validate_spec, argc, argv, &o);
    if (rc >= 0)
        return rc;
    a->no_speed = cli_given(&o, OPT_NO_SPEED);
    if (cli_given(&o, OPT_ISOLATE) && cli_given(&o, OPT_NO_ISOLATE))
        return cli_usage_error(cmd, "--isolate and --no-isolate contradict each other");
    if (cli_given(&o, OPT_ISOLATE))
        a->isolate = 1;
    if (cli_given(&o, OPT_NO_ISOLATE))
        a->isolate = 0;
    a->backend = cli_str(&o, OPT_BACKEND);
    if (cli_given(&o, OPT_TIME) && cli_given(&o, OPT_CASES))
        return cli_usage_error(cmd, "give --time or --cases, not both");
    if (cli_given(&o, OPT_TIME))
        a->time_s = o.v[OPT_TIME].r;
    if (cli_given(&o, OPT_CASES))
        a->cases = o.v[OPT_CASES].u;
    if (cli_given(&o, OPT_SEED))
        a->seed = o.v[OPT_SEED].u;
    a->threads = (int)o.v[OPT_THREADS].u;
    for (int k = 0; k < o.v[OPT_DATA].count; k++)
        a->data[a->n_data++] = o.v[OPT_DATA].values[k];
    a->min_speedup = o.v[OPT_MIN_SPEEDUP].r;
    if (cli_given(&o, OPT_SAVE))
        a->save_dir = cli_str(&o, OPT_SAVE);
    a->replay = cli_str(&o, OPT_REPLAY);
    a->json = cli_given(&o, OPT_FORMAT) && o.v[OPT_FORMAT].choice == 1;
    a->junit = cli_str(&o, OPT_JUNIT);
    a->markdown = cli_str(&o, OPT_MARKDOWN);
    a->check_timeout_s = cli_given(&o, OPT_CHECK_TIMEOUT) ? o.v[OPT_CHECK_TIMEOUT].r
                         : 3 * a->time_s + 60 > 600 ? 3 * a->time_s + 60 : 600;
    if (!a->backend)
        return cli_usage_error(cmd, "--backend NAME|PATH is required");
    return -1;
}

/* ---- reports ---------------------------------------------------------------------- */

static const char *check_summary(const v_check *k, char *buf, size_t size)
{
    const v_outcome *o = &k->out;
    if (o->status != V_PASS || strcmp(k->stage, "speed") == 0 || strcmp(k->stage, "anti-vacuity") == 0 ||
        strcmp(k->stage, "determinism") == 0 || strcmp(k->stage, "bad-input") == 0) {
        snprintf(buf, size, "%s", o->message);
    } else if (strcmp(k->stage, "fuzz") == 0) {
        snprintf(buf, size, "%" PRIu64 " cases, %" PRIu64 " combos, 1-%.0f threads, %" PRIu64 " ties adjudicated",
                 o->cases, o->combos, o->value[3], o->ties);
    } else if (strcmp(k->stage, "parity") == 0) {
        snprintf(buf, size, "%" PRIu64 " bars, %" PRIu64 " combos, %" PRIu64 " trades, %" PRIu64
                 " ties adjudicated", o->bars, o->combos, o->trades, o->ties);
    } else {
        snprintf(buf, size, "%" PRIu64 " bars, %" PRIu64 " ties adjudicated", o->bars, o->ties);
    }
    return buf;
}

static void write_text(const v_ctx *c, int code)
{
    size_t count[5] = { 0 };
    uint64_t ties = 0;
    for (size_t i = 0; i < c->n_checks; i++) {
        count[c->checks[i].out.status]++;
        ties += c->checks[i].out.ties;
    }
    printf("\nvalidate %s: %zu checks, %zu passed, %zu failed, %zu crashed, %zu errors, %zu skipped; "
           "%" PRIu64 " ties adjudicated\n", c->cand->name, c->n_checks, count[V_PASS], count[V_FAIL],
           count[V_CRASH], count[V_ERROR], count[V_SKIP], ties);
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        if (k->out.status == V_PASS || k->out.status == V_SKIP)
            continue;
        printf("\n%s %s: %s: %s\n", k->stage, k->name, status_names[k->out.status], k->out.message);
        if (k->out.detail[0])
            fputs(k->out.detail, stdout);
        if (k->out.replay[0])
            printf("replay: %s\n", k->out.replay);
    }
    printf("\nresult: %s\n", code == 0 ? "PASS" : "FAIL");
}

static void write_json(const v_ctx *c, int code)
{
    cli_json j;
    cli_json_init(&j, stdout, 2);
    cli_json_begin_object(&j, NULL);
    cli_json_schema(&j, "validate");
    cli_json_string(&j, "backend", c->cand->name);
    cli_json_string(&j, "selector", c->sel);
    cli_json_string(&j, "contract", c->cand->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
    cli_json_double(&j, "tol", c->cand->contract.tol);
    cli_json_int(&j, "seed", (int64_t)c->a->seed);
    /* With --cases the fuzz had no time budget: 0 seconds, and its count. */
    cli_json_double(&j, "fuzz_seconds", c->a->cases ? 0.0 : c->a->time_s);
    if (c->a->cases)
        cli_json_int(&j, "fuzz_cases", (int64_t)c->a->cases);
    cli_json_bool(&j, "pass", code == 0);
    cli_json_int(&j, "exit_code", code);
    cli_json_begin_array(&j, "checks");
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        const v_outcome *o = &k->out;
        cli_json_begin_object(&j, NULL);
        cli_json_string(&j, "stage", k->stage);
        cli_json_string(&j, "name", k->name);
        cli_json_string(&j, "status", status_names[o->status]);
        cli_json_double(&j, "seconds", o->seconds);
        cli_json_int(&j, "bars", (int64_t)o->bars);
        cli_json_int(&j, "combos", (int64_t)o->combos);
        cli_json_int(&j, "cases", (int64_t)o->cases);
        cli_json_int(&j, "trades", (int64_t)o->trades);
        cli_json_int(&j, "ties_adjudicated", (int64_t)o->ties);
        if (strcmp(k->stage, "speed") == 0 && o->status != V_SKIP) {
            cli_json_double(&j, "candidate_seconds", o->value[0]);
            cli_json_double(&j, "fast_cpu_seconds", o->value[1]);
            cli_json_double(&j, "speedup", o->value[2]);
        }
        cli_json_string(&j, "message", o->message);
        cli_json_string(&j, "detail", o->detail);
        if (o->replay[0])
            cli_json_string(&j, "replay", o->replay);
        else
            cli_json_null(&j, "replay");
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

static int write_junit(const v_ctx *c)
{
    cli_junit_case *cases = calloc(c->n_checks ? c->n_checks : 1, sizeof *cases);
    char (*classes)[64] = calloc(c->n_checks ? c->n_checks : 1, sizeof *classes);
    char **texts = calloc(c->n_checks ? c->n_checks : 1, sizeof *texts);
    char (*outs)[700] = calloc(c->n_checks ? c->n_checks : 1, sizeof *outs);
    int rc = CLI_EXIT_USAGE;
    if (!cases || !classes || !texts || !outs) {
        fprintf(stderr, "sebt validate: error: out of memory for the JUnit report\n");
        goto done;
    }
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        const v_outcome *o = &k->out;
        snprintf(classes[i], sizeof classes[i], "sebt.validate.%s", k->stage);
        size_t tlen = strlen(o->detail) + strlen(o->replay) + strlen(o->message) + 64;
        texts[i] = malloc(tlen);
        if (texts[i])
            snprintf(texts[i], tlen, "%s\n%s%s%s%s", o->message, o->detail, o->replay[0] ? "replay: " : "",
                     o->replay, o->replay[0] ? "\n" : "");
        static const cli_junit_outcome map[] = { CLI_JUNIT_PASSED, CLI_JUNIT_FAILURE, CLI_JUNIT_ERROR,
                                                 CLI_JUNIT_SKIPPED, CLI_JUNIT_ERROR };
        cases[i] = (cli_junit_case){ .classname = classes[i], .name = k->name, .seconds = o->seconds,
                                     .outcome = map[o->status], .message = o->message, .text = texts[i],
                                     .output = o->status == V_PASS ? check_summary(k, outs[i], sizeof outs[i]) : NULL };
    }
    char suite[300];
    snprintf(suite, sizeof suite, "sebt validate %s", c->cand->name);
    rc = cli_junit_write("validate", c->a->junit, suite, cases, c->n_checks);
done:
    if (texts)
        for (size_t i = 0; i < c->n_checks; i++)
            free(texts[i]);
    free(texts);
    free(outs);
    free(classes);
    free(cases);
    return rc;
}

static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
}

static int write_markdown(const v_ctx *c, int code)
{
    FILE *f = cli_open_output("validate", c->a->markdown);
    if (!f)
        return CLI_EXIT_USAGE;
    char contract[64];
    cli_contract_text(&c->cand->contract, contract, sizeof contract);
    fprintf(f, "## sebt validate `%s` (%s): %s\n\n", c->cand->name, contract, code == 0 ? "PASS" : "FAIL");
    if (c->a->cases)
        fprintf(f, "Backend `%s`, fuzz seed %" PRIu64 " for %" PRIu64 " cases.\n\n", c->sel, c->a->seed, c->a->cases);
    else
        fprintf(f, "Backend `%s`, fuzz seed %" PRIu64 " for %g s.\n\n", c->sel, c->a->seed, c->a->time_s);
    fputs("| stage | check | result | time (s) | notes |\n|---|---|---|---:|---|\n", f);
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        char buf[700];
        fprintf(f, "| %s | ", k->stage);
        md_cell(f, k->name);
        fprintf(f, " | %s | %.2f | ", k->out.status == V_PASS ? "pass" : k->out.status == V_SKIP ? "skipped"
                                                                                                   : status_names[k->out.status],
                k->out.seconds);
        md_cell(f, check_summary(k, buf, sizeof buf));
        fputs(" |\n", f);
    }
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        if (k->out.status == V_PASS || k->out.status == V_SKIP)
            continue;
        fprintf(f, "\n### %s %s: %s\n\n%s\n\n```\n%s%s%s```\n", k->stage, k->name, status_names[k->out.status],
                k->out.message, k->out.detail, k->out.replay[0] ? "replay: " : "", k->out.replay);
        if (k->out.replay[0])
            fputc('\n', f);
    }
    return cli_close_output(f) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* ---- the run ------------------------------------------------------------------------ */

static void announce(const v_ctx *c, const v_check *k)
{
    if (c->a->json)
        return;
    char buf[700];
    printf("%-6s %-13s %-44s %7.1fs  %s\n", k->out.status == V_PASS ? "ok" : status_names[k->out.status],
           k->stage, k->name, k->out.seconds, check_summary(k, buf, sizeof buf));
    fflush(stdout);
}

/* A crash gets the command that reproduces it; filled after the fact
 * because the child that knew the details is gone. */
static void crash_replay(v_check *k, const char *what)
{
    if ((k->out.status == V_CRASH || k->out.status == V_ERROR) && !k->out.replay[0])
        snprintf(k->out.replay, sizeof k->out.replay, "%s", what);
}

static void run_check(v_ctx *c, v_check *k, v_fn fn, const void *arg)
{
    if (!k)
        return;
    run_isolated(c, fn, arg, k);
}

/* ---- the stages, in the order they run ----------------------------------------- */

/* A stage that found nothing to check is an error, not a pass. */
static void nothing_to_check(v_ctx *c, const char *stage, const char *where, const char *what)
{
    v_check *k = add_check(c, stage, "%s", where);
    k->out.status = V_ERROR;
    k->out.err_code = SEBT_ERR_INPUT;
    snprintf(k->out.message, sizeof k->out.message, "no %s under %s", what, where);
    announce(c, k);
}

/* Out of memory before a stage could start its checks: an error (exit 5
 * unless a check failed), not a pass and not a failure. */
static void stage_nomem(v_ctx *c, const char *stage, const char *where, const char *what)
{
    v_check *k = add_check(c, stage, "%s", where);
    if (!k)
        return;
    k->out.status = V_ERROR;
    k->out.err_code = SEBT_ERR_NOMEM;
    snprintf(k->out.message, sizeof k->out.message, "out of memory %s", what);
    announce(c, k);
}

/* --replay DIR: that one fixture and nothing else. */
static void stage_replay_one(v_ctx *c, const char *dir)
{
    char abs[PATH_MAX];
    v_check *k = add_check(c, "replay", "%s", base_name(dir));
    run_check(c, k, do_replay, dir);
    if (k->out.status != V_PASS)
        snprintf(k->out.replay, sizeof k->out.replay, "sebt validate --backend %s --replay %s", c->sel,
                 realpath(dir, abs) ? abs : dir);
    announce(c, k);
}

/* Every fixture of fixtures/regressions against the reference. */
static void stage_replay(v_ctx *c)
{
    char dir[PATH_MAX + 64], **fixtures = NULL;
    snprintf(dir, sizeof dir, "%s/regressions", c->fixtures);
    bool nomem;
    size_t n = list_dir(dir, true, &fixtures, &nomem);
    if (nomem)
        stage_nomem(c, "replay", dir, "listing the regression fixtures");
    else if (n == 0)
        nothing_to_check(c, "replay", dir, "regression fixtures");
    for (size_t i = 0; i < n; i++) {
        v_check *k = add_check(c, "replay", "%s", base_name(fixtures[i]));
        run_check(c, k, do_replay, fixtures[i]);
        if (k->out.status == V_FAIL || k->out.status == V_CRASH || k->out.status == V_ERROR)
            snprintf(k->out.replay, sizeof k->out.replay, "sebt validate --backend %s --replay %s", c->sel,
                     fixtures[i]);
        announce(c, k);
    }
    free_list(fixtures, n);
}

/* The series parity runs on: the oracle's parity set (each file plain and
 * gap-filled, and the one-minute files joined), or each --data file both
 * ways. They live until the process ends (the speed stage reuses them). */
static size_t parity_inputs(v_ctx *c, sebt_parity_input **out, char *dir, size_t dsize)
{
    static sebt_parity_input inputs[MAX_INPUTS];
    static char input_paths[8][SEBT_PARITY_PATH_MAX];
    snprintf(dir, dsize, "%s/data", c->fixtures);
    *out = inputs;
    if (c->a->n_data)
        return sebt_parity_inputs_for_files(c->a->data, c->a->n_data, SEBT_PARITY_BOTH, inputs, MAX_INPUTS);
    return sebt_parity_default_inputs(dir, inputs, MAX_INPUTS, input_paths, 8);
}

/* Parity with the parity combos on every input; adds the trades made. */
static void stage_parity(v_ctx *c, const sebt_parity_input *inputs, size_t n, uint64_t *trades)
{
    char abs[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        const sebt_parity_input *in = &inputs[i];
        v_check *k = add_check(c, "parity", "%s", in->label);
        run_check(c, k, do_parity, in);
        *trades += k->out.trades;
        if (k->out.status == V_FAIL || k->out.status == V_CRASH || k->out.status == V_ERROR) {
            /* A joined series exists only in the bundled set: replay the set. */
            if (in->n_paths == 1)
                snprintf(k->out.replay, sizeof k->out.replay,
                         "sebt parity --backend %s --combos %s --data %s --gaps %s", c->sel, c->combos_path,
                         realpath(in->paths[0], abs) ? abs : in->paths[0], in->fill_gaps ? "filled" : "plain");
            else
                snprintf(k->out.replay, sizeof k->out.replay, "sebt parity --backend %s --combos %s", c->sel,
                         c->combos_path);
        }
        announce(c, k);
    }
}

/* Parity on grid-shaped combos: the longest single bundled file as loaded. */
static void stage_parity_grid(v_ctx *c, const sebt_parity_input *inputs, size_t n, uint64_t *trades)
{
    const sebt_parity_input *in = NULL;
    for (size_t i = 0; i < n; i++)
        if (inputs[i].n_paths == 1 && !inputs[i].fill_gaps && (!in || strstr(inputs[i].paths[0], "15m")))
            in = &inputs[i];
    if (!in)
        return;
    char abs[PATH_MAX], grid[PATH_MAX];
    v_check *k = add_check(c, "parity", "%s, %d grid-shaped combos", in->label, SEBT_PARITY_GRID_COMBOS);
    run_check(c, k, do_parity_grid, in);
    *trades += k->out.trades;
    if ((k->out.status == V_FAIL || k->out.status == V_CRASH) && write_grid_file(c->a->save_dir, grid, sizeof grid))
        snprintf(k->out.replay, sizeof k->out.replay, "sebt parity --backend %s --grid %s --data %s --gaps plain",
                 c->sel, grid, realpath(in->paths[0], abs) ? abs : in->paths[0]);
    announce(c, k);
}

static void stage_fuzz(v_ctx *c)
{
    char buf[PATH_MAX + 64];
    v_check *k = c->a->cases ? add_check(c, "fuzz", "seed %" PRIu64 ", %" PRIu64 " cases", c->a->seed, c->a->cases)
                             : add_check(c, "fuzz", "seed %" PRIu64 ", %g s", c->a->seed, c->a->time_s);
    run_check(c, k, do_fuzz, NULL);
    snprintf(buf, sizeof buf, "sebt fuzz --backend %s --seed %" PRIu64 " --iterations %" PRIu64 " --no-save",
             c->sel, k->out.at_seed, k->out.at_case + 1);
    crash_replay(k, buf);
    if (k->out.status == V_CRASH) {
        size_t len = strlen(k->out.message);
        snprintf(k->out.message + len, sizeof k->out.message - len, " in fuzz case %" PRIu64 " of seed %" PRIu64,
                 k->out.at_case, k->out.at_seed);
    }
    announce(c, k);
}

/* Determinism, independence and refusing bad input: judged without the reference. */
static void stage_own_checks(v_ctx *c)
{
    char buf[PATH_MAX + 64];
    v_check *k = add_check(c, "determinism", "same call, order, threads, split, companions");
    run_check(c, k, do_determinism, NULL);
    snprintf(buf, sizeof buf, "sebt validate --backend %s --seed %" PRIu64 " --time 1", c->sel, c->a->seed);
    crash_replay(k, buf);
    announce(c, k);

    k = add_check(c, "bad-input", "invalid combos and series refused");
    run_check(c, k, do_bad_input, NULL);
    snprintf(buf, sizeof buf, "sebt validate --backend %s --time 1", c->sel);
    crash_replay(k, buf);
    announce(c, k);
}

/* The harness is not vacuous: every mutant is caught, and the backend
 * traded on real data (parity on a backend that never trades proves nothing). */
static void stage_anti_vacuity(v_ctx *c, uint64_t trades)
{
    for (size_t i = 0; i < sebt_mutant_count(); i++) {
        const sebt_backend *m = sebt_mutant_at(i);
        v_check *k = add_check(c, "anti-vacuity", "%s", m->name);
        run_check(c, k, do_mutant, m);
        announce(c, k);
    }
    v_check *k = add_check(c, "anti-vacuity", "trades on real data");
    bool parity_ran = false;
    for (size_t i = 0; i < c->n_checks; i++)
        parity_ran |= strcmp(c->checks[i].stage, "parity") == 0 && c->checks[i].out.status == V_PASS;
    if (!parity_ran) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "no parity check passed to count trades in");
    } else if (trades == 0) {
        k->out.status = V_FAIL;
        snprintf(k->out.message, sizeof k->out.message, "%s made no trade on any bundled series with the "
                 "parity combos: parity there proves nothing", c->cand->name);
    } else {
        k->out.status = V_PASS;
        snprintf(k->out.message, sizeof k->out.message, "%" PRIu64 " trades over the parity checks", trades);
    }
    k->out.trades = trades;
    announce(c, k);
}

/* A fixed sweep timed against fast_cpu, on the January 2019 minutes when
 * they are among the inputs. */
static void stage_speed(v_ctx *c, const sebt_parity_input *inputs, size_t n)
{
    const char *speed_data = NULL;
    for (size_t i = 0; i < n && !speed_data; i++)
        if (inputs[i].n_paths == 1 && strstr(inputs[i].paths[0], "BTCUSDT-1m-2019-01"))
            speed_data = inputs[i].paths[0];
    if (!speed_data && n)
        speed_data = inputs[0].paths[0];
    v_check *k = add_check(c, "speed", "fixed sweep vs fast_cpu");
    if (c->a->no_speed || !speed_data) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "%s", c->a->no_speed ? "--no-speed" : "no data");
    } else {
        run_check(c, k, do_speed, speed_data);
        snprintf(k->name, sizeof k->name, "fixed sweep vs fast_cpu (%s)", base_name(speed_data));
    }
    announce(c, k);
}

/* A broken setup (2) or a missing device (3) says more than the checks it
 * stopped; otherwise any failed check is 1. */
static int exit_code(const v_ctx *c)
{
    bool failed = false, error = false, nodevice = false, nomem = false;
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_outcome *o = &c->checks[i].out;
        failed |= o->status == V_FAIL || o->status == V_CRASH;
        if (o->status == V_ERROR) {
            error = true;
            nodevice |= o->err_code == SEBT_ERR_NODEVICE;
            nomem |= o->err_code == SEBT_ERR_NOMEM;
        }
    }
    /* Out of memory: nothing is known to be wrong, the run could not finish. */
    return nodevice ? CLI_EXIT_NO_DEVICE : failed ? CLI_EXIT_CHECK_FAILED : nomem ? CLI_EXIT_NOMEM
         : error ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* Opens the backend, finds the bundled data and loads the parity combos.
 * Returns -1 to go on, else the exit code (printed). */
static int setup(const char *cmd, const validate_args *a, v_ctx *c)
{
    int rc = cli_select_oracle_backend(cmd, a->backend, &c->cand);
    if (rc != CLI_EXIT_OK)
        return rc;
    c->sel = sebt_backend_selector(c->cand);
    /* The built-in cuda backend holds a CUDA context from the moment it is
     * opened, and a CUDA runtime does not survive fork: it runs in-process
     * unless asked. A plugin should open its device lazily (docs/kernels.md). */
    /* A kernel command (exec:) is isolated already: it runs in its own
     * process, and whatever it does is reported as the kernel's. Run in
     * this process, one kernel serves the whole session instead of being
     * started (and compiled) again for every check. */
    bool kernel = strncmp(c->sel, "exec:", 5) == 0 || strncmp(c->sel, "'exec:", 6) == 0;
    c->isolate = a->isolate >= 0 ? a->isolate == 1 : strcmp(c->sel, "cuda") != 0 && !kernel;
    cli_share_paths(c->fixtures, sizeof c->fixtures, c->combos_path, sizeof c->combos_path);
    /* Absolute, so the commands printed for a failure work from anywhere. */
    char abs[PATH_MAX];
    if (realpath(c->fixtures, abs))
        snprintf(c->fixtures, sizeof c->fixtures, "%s", abs);
    if (realpath(c->combos_path, abs))
        snprintf(c->combos_path, sizeof c->combos_path, "%s", abs);
    sebt_error err = { 0 };
    if (sebt_combos_load(c->combos_path, &c->combos, &c->n_combos, &err) != SEBT_OK) {
        /* Out of memory says nothing about where the share folder is. */
        bool nomem = err.code == SEBT_ERR_NOMEM;
        fprintf(stderr, "sebt %s: error: the parity combos: %s%s\n", cmd, err.msg,
                nomem ? "" : " (set SEBT_SHARE_DIR to the folder holding fixtures/ and parity-combos.csv)");
        return nomem ? CLI_EXIT_NOMEM : CLI_EXIT_USAGE;
    }
    c->checks = calloc(MAX_CHECKS, sizeof *c->checks);
    if (!c->checks) {
        free(c->combos);
        fprintf(stderr, "sebt %s: error: out of memory\n", cmd);
        return CLI_EXIT_NOMEM;
    }
    return -1;
}

int cli_cmd_validate(int argc, char **argv)
{
    const char *cmd = argv[0];
    validate_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    v_ctx c = { .a = &a, .check_timeout_s = a.check_timeout_s };
    if (sebt_backend_is_path(a.backend) && a.isolate != 0 &&
        (rc = probe_plugin(cmd, a.backend, a.check_timeout_s)) != CLI_EXIT_OK)
        return rc;
    rc = setup(cmd, &a, &c);
    if (rc >= 0)
        return rc;
    /* The parent keeps the combos and the list of checks; it never runs a
     * backend, so a crash in one check leaves the others to run. */
    signal(SIGPIPE, SIG_IGN);

    char contract[64];
    cli_contract_text(&c.cand->contract, contract, sizeof contract);
    if (!a.json)
        printf("validate %s (%s)%s%s\n", c.cand->name, contract, strcmp(c.sel, c.cand->name) ? " from " : "",
               strcmp(c.sel, c.cand->name) ? c.sel : "");

    if (a.replay) {
        stage_replay_one(&c, a.replay);
    } else {
        stage_replay(&c);
        sebt_parity_input *inputs;
        char data_dir[PATH_MAX + 64];
        size_t n_inputs = parity_inputs(&c, &inputs, data_dir, sizeof data_dir);
        if (n_inputs == 0)
            nothing_to_check(&c, "parity", data_dir, "bundled series");
        uint64_t trades = 0;
        stage_parity(&c, inputs, n_inputs, &trades);
        stage_parity_grid(&c, inputs, n_inputs, &trades);
        stage_fuzz(&c);
        stage_own_checks(&c);
        stage_anti_vacuity(&c, trades);
        stage_speed(&c, inputs, n_inputs);
    }

    int code = exit_code(&c);
    if (a.json)
        write_json(&c, code);
    else
        write_text(&c, code);
    int wrc = CLI_EXIT_OK;
    if (a.junit && write_junit(&c) != CLI_EXIT_OK)
        wrc = CLI_EXIT_USAGE;
    if (a.markdown && write_markdown(&c, code) != CLI_EXIT_OK)
        wrc = CLI_EXIT_USAGE;
    free(c.checks);
    free(c.combos);
    if (cli_close_output(stdout))
        wrc = CLI_EXIT_USAGE;
    return code != CLI_EXIT_OK ? code : wrc;
}
