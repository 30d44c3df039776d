/* `sebt validate`: running one check, in a child process that writes its
 * outcome into shared memory (or in this process with --no-isolate), under
 * the check's time limit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

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
