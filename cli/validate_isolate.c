/* `sebt validate`: running one check, in a child process that writes its
 * outcome into shared memory (or in this process with --no-isolate), under
 * the check's time limit; and, in the child, every call of the backend
 * under a limit that scales with its work (CALL_TIMEOUT_SCALE times the
 * reference's time for it, at least --call-timeout), so a backend that
 * hangs is stopped in about a minute, named with the check it hung in. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sebt/backends.h"
#include "validate.h"

/* Messages and commands are built in fixed buffers that live in shared
 * memory; one that would not fit (a path of thousands of characters) is
 * cut, never overflowed, which is what this warning is about. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

const char *signal_name(int sig)
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

/* ---- the watch on each call, in the child ----------------------------------- */

static v_outcome *watch;               /* the child's outcome, in shared memory */
static const sebt_backend *watched;    /* the candidate itself */
static sebt_backend watcher;           /* the candidate, each call watched */
static double ref_s_per_unit;          /* the reference's seconds per bar x combo */
static double call_floor_s;

/* The reference's speed, measured once in the child on a small made-up
 * series (a few milliseconds), so a call's limit follows its work. */
static void measure_reference(void)
{
    const sebt_backend *ref = NULL;
    sebt_series s;
    enum { BARS = 4000, COMBOS = 4 };
    if (sebt_backend_get("reference", &ref, NULL) != SEBT_OK || sebt_series_alloc(&s, BARS, NULL) != SEBT_OK)
        return;
    for (size_t t = 0; t < BARS; t++) {
        s.ts[t] = 1600000000000LL + (int64_t)t * 60000;
        s.open[t] = 100 + (double)(t % 7);
        s.close[t] = 100 + (double)((t * 3) % 11) * 0.5;
        s.high[t] = (s.open[t] > s.close[t] ? s.open[t] : s.close[t]) + 1;
        s.low[t] = (s.open[t] < s.close[t] ? s.open[t] : s.close[t]) - 1;
        s.volume[t] = 10 + (double)(t % 5);
    }
    sebt_series_recount(&s);
    sebt_params p[COMBOS];
    for (int i = 0; i < COMBOS; i++) {
        p[i] = sebt_params_default();
        p[i].ema_fast = 5 + i;
    }
    sebt_result res[COMBOS];
    sebt_batch_opts bo = { .threads = 1, .want_trades = true };
    double t0 = cli_now();
    if (ref->run_batch(ref, &s, p, COMBOS, &bo, res, NULL) == SEBT_OK) {
        ref_s_per_unit = (cli_now() - t0) / ((double)BARS * COMBOS);
        sebt_results_free(res, COMBOS);
    }
    sebt_series_free(&s);
}

static double reference_s(size_t combos, size_t bars)
{
    return ref_s_per_unit * (double)(combos ? combos : 1) * (double)(bars ? bars : 1);
}

static double call_limit(double ref_s)
{
    double limit = CALL_TIMEOUT_SCALE * ref_s;
    return limit > call_floor_s ? limit : call_floor_s;
}

static void begin_call(const char *fn, size_t combos, size_t bars)
{
    double ref_s = reference_s(combos, bars);
    watch->call_limit = call_limit(ref_s);
    watch->call_ref_s = ref_s;
    snprintf(watch->call_what, sizeof watch->call_what, "%s (%zu combo%s x %zu bars)", fn, combos,
             combos == 1 ? "" : "s", bars);
    double t0 = cli_now();
    __atomic_store(&watch->call_t0, &t0, __ATOMIC_RELEASE);
}

static void end_call(void)
{
    double zero = 0;
    __atomic_store(&watch->call_t0, &zero, __ATOMIC_RELEASE);
}

static sebt_status watched_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                     size_t n, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    (void)self;
    begin_call("run_batch", n, s ? s->n : 0);
    double t0 = cli_now();
    sebt_status st = watched->run_batch(watched, s, combos, n, opts, results, err);
    if (st == SEBT_OK) {
        watch->cand_call_s += cli_now() - t0;
        watch->cand_units += (double)n * (double)(s ? s->n : 0);
    }
    end_call();
    return st;
}

static sebt_status watched_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                                    sebt_features *out, sebt_error *err)
{
    (void)self;
    begin_call("features", 1, s ? s->n : 0);
    sebt_status st = watched->features(watched, s, p, out, err);
    end_call();
    return st;
}

static sebt_status watched_tallied(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                   size_t n, const sebt_batch_opts *opts, sebt_result *results,
                                   sebt_trade_tally *tallies, sebt_error *err)
{
    (void)self;
    begin_call("tallied run_batch", n, s ? s->n : 0);
    sebt_status st = sebt_backend_tally_batch(watched)(watched, s, combos, n, opts, results, tallies, err);
    end_call();
    return st;
}

/* From here on in the child, c->cand's calls are watched: a copy of its
 * table whose functions tell the parent what runs, then call the backend.
 * Replay commands name the backend by c->sel, never by this copy. */
static void watch_calls(v_ctx *c, v_outcome *shared)
{
    watch = shared;
    watched = c->cand;
    call_floor_s = c->a->call_timeout_s > 0 ? c->a->call_timeout_s : CALL_TIMEOUT_DEFAULT_S;
    measure_reference();
    watcher = *c->cand;
    watcher.run_batch = watched_run_batch;
    watcher.features = watched_features;
    /* A walk that keeps the analysis tally keeps it watched too, and the
     * oracle compares the columns it gives. */
    if (sebt_backend_tally_batch(watched))
        sebt_backend_set_tally_batch(&watcher, watched_tallied, NULL);
    c->cand = &watcher;
}

/* A kernel (exec:) runs in this process: its requests get the same limit,
 * as the kernel's own time limit for each (sebt_kernel_set_limit), instead
 * of the fixed SEBT_KERNEL_TIMEOUT (which, set in the environment, wins). */
static double kernel_limit(void *user, size_t combos, size_t bars)
{
    (void)user;
    return call_limit(reference_s(combos, bars));
}

void watch_kernel(v_ctx *c)
{
    static char why[160];
    call_floor_s = c->a->call_timeout_s > 0 ? c->a->call_timeout_s : CALL_TIMEOUT_DEFAULT_S;
    measure_reference();
    snprintf(why, sizeof why, "%d x the reference's time for this work, at least --call-timeout %g s",
             CALL_TIMEOUT_SCALE, call_floor_s);
    sebt_kernel_set_limit(c->cand, kernel_limit, NULL, why, NULL);
}

/* ---- the parent's wait ------------------------------------------------------ */

enum { ENDED, CHECK_TIMEOUT, CALL_HUNG };

/* Waits for child pid at most limit_s seconds, and while a watched call
 * runs (shared != NULL) at most its limit; past either, kills the child
 * (SIGKILL) and reaps it. *wst is -1 when waiting failed. */
static int wait_with_limit(pid_t pid, double limit_s, const v_outcome *shared, int *wst)
{
    double t0 = cli_now();
    for (unsigned nap = 1000;; nap = nap < 50000 ? nap * 2 : nap) {
        pid_t got = waitpid(pid, wst, WNOHANG);
        if (got == pid)
            return ENDED;
        if (got < 0 && errno != EINTR) {
            *wst = -1;
            return ENDED;
        }
        double now = cli_now(), call_t0 = 0;
        if (shared)
            __atomic_load(&shared->call_t0, &call_t0, __ATOMIC_ACQUIRE);
        bool hung = call_t0 > 0 && now - call_t0 > shared->call_limit;
        if (hung || now - t0 > limit_s) {
            kill(pid, SIGKILL);
            while (waitpid(pid, wst, 0) < 0 && errno == EINTR)
                ;
            return hung ? CALL_HUNG : CHECK_TIMEOUT;
        }
        usleep(nap);
    }
}

int probe_plugin(const char *cmd, const char *path, double limit_s)
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
    if (wait_with_limit(pid, limit_s, NULL, &wst) != ENDED) {
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

void run_isolated(v_ctx *c, v_fn fn, const void *arg, v_check *check)
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
        watch_calls(c, shared);
        fn(c, arg, shared);
        shared->written = true;
        sebt_kernels_close();   /* _exit runs no atexit: end the kernel this check started */
        /* _exit: no atexit handlers of the parent's, no stdio flushed twice. */
        _exit(0);
    }
    int wst = 0;
    int how = ENDED;
    if (pid > 0)
        how = wait_with_limit(pid, c->check_timeout_s, shared, &wst);
    if (pid < 0 || (how == ENDED && wst == -1)) {
        check->out.status = V_ERROR;
        snprintf(check->out.message, sizeof check->out.message, "cannot start a child process");
        munmap(shared, sizeof *shared);
        return;
    }
    check->out = *shared;
    check->out.seconds = cli_now() - t0;
    munmap(shared, sizeof *shared);
    if (how == CALL_HUNG) {
        check->out.status = V_CRASH;
        check->out.err_code = SEBT_ERR_TIMEOUT;
        snprintf(check->out.message, sizeof check->out.message,
                 "hung: the backend %s did not return from %s within %.0f s (%d x the reference's %.2g s for the "
                 "same work, at least --call-timeout %g s) and was stopped", c->cand->name, check->out.call_what,
                 check->out.call_limit, CALL_TIMEOUT_SCALE, check->out.call_ref_s,
                 c->a->call_timeout_s > 0 ? c->a->call_timeout_s : CALL_TIMEOUT_DEFAULT_S);
    } else if (how == CHECK_TIMEOUT) {
        check->out.status = V_CRASH;
        check->out.err_code = SEBT_ERR_TIMEOUT;
        snprintf(check->out.message, sizeof check->out.message,
                 "hung: the backend %s ran past the check's time limit of %.0f s and was stopped (a loop that never "
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
