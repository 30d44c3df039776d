/* Children in their own process groups, stopped with sebt
 * (include/sebt/spawn.h). */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sebt/sebt.h"
#include "sebt/spawn.h"

/* The groups a signal handler must stop: 0 free, -1 claimed, else the
 * pid (= the process group) of a child not yet reaped. */
static atomic_int child_pid[SEBT_CHILD_MAX];

void sebt_ending_signals(sigset_t *set)
{
    static const int ending[] = { SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
                                  SIGPOLL, SIGPROF, SIGVTALRM, SIGXCPU, SIGSTKFLT, SIGPWR };
    sigemptyset(set);
    for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++)
        sigaddset(set, ending[i]);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
        sigaddset(set, s);
}

void sebt_ending_signals_default(void)
{
    sigset_t set;
    sebt_ending_signals(&set);
    for (int s = 1; s < NSIG; s++)
        if (sigismember(&set, s) == 1)
            signal(s, SIG_DFL);
}

static int claim(void)
{
    for (int i = 0; i < SEBT_CHILD_MAX; i++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&child_pid[i], &expect, -1))
            return i;
    }
    return -1;
}

static void release(sebt_child *c)
{
    if (c->slot >= 0)
        atomic_store(&child_pid[c->slot], 0);
    c->slot = -1;
    c->pid = 0;
}

/* Whether the child has ended, without reaping it: while it is a zombie its
 * process group id cannot be reused, so the group can still be killed. */
static bool ended(pid_t pid)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return info.si_pid == pid;
}

static void reap(pid_t pid, int *status)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (status)
        *status = st;
}

/* SIGTERM to every group, SIGKILL to every group once its leader ended or
 * the grace period is over, then each leader reaped. Async-signal-safe. */
static void stop_pids(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        kill(-pids[i], SIGTERM);
    const struct timespec step = { 0, 10 * 1000 * 1000 };
    for (int t = 0; t < SEBT_CHILD_GRACE_MS / 10; t++) {
        bool all = true;
        for (int i = 0; i < n; i++)
            all &= ended(pids[i]);
        if (all)
            break;
        nanosleep(&step, NULL);
    }
    for (int i = 0; i < n; i++) {
        kill(-pids[i], SIGKILL);
        reap(pids[i], NULL);
    }
}

void sebt_children_stop(void)
{
    pid_t pids[SEBT_CHILD_MAX];
    int idx[SEBT_CHILD_MAX], n = 0;
    for (int i = 0; i < SEBT_CHILD_MAX; i++) {
        int p = atomic_load(&child_pid[i]);
        if (p > 0) {
            idx[n] = i;
            pids[n++] = (pid_t)p;
        }
    }
    stop_pids(pids, n);
    for (int i = 0; i < n; i++)
        atomic_store(&child_pid[idx[i]], 0);
}

void sebt_child_stop(sebt_child *c)
{
    if (c->pid > 0)
        stop_pids(&c->pid, 1);
    release(c);
}

sebt_status sebt_child_start(sebt_child *c, const char *path, char *const argv[], const char *dir,
                             const char *log, sebt_error *err)
{
    c->pid = 0;
    c->slot = claim();
    if (c->slot < 0)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "cannot start %s: more than %d programs running at once", path,
                         SEBT_CHILD_MAX);
    /* The exec's failure comes back through this pipe; a successful exec
     * closes it (O_CLOEXEC) with nothing written. */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        int e = errno;
        release(c);
        return sebt_fail(err, SEBT_ERR_IO, "cannot start %s: %s", path, strerror(e));
    }
    /* No signal between fork and the slot naming the child: the handler
     * would miss it. */
    sigset_t stop, old;
    sebt_ending_signals(&stop);
    sigprocmask(SIG_BLOCK, &stop, &old);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sebt_ending_signals_default();
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int e[2] = { 0, 0 }; /* what failed, errno */
        if (getppid() != parent)
            _exit(127);
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, STDIN_FILENO) < 0)
            e[0] = 1, e[1] = errno;
        if (!e[0] && log) {
            int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                e[0] = 2, e[1] = errno;
        }
        if (!e[0] && dir && chdir(dir) != 0)
            e[0] = 3, e[1] = errno;
        if (!e[0]) {
            execv(path, argv);
            e[0] = 4, e[1] = errno;
        }
        ssize_t w = write(report[1], e, sizeof e);
        (void)w;
        _exit(127);
    }
    int fork_errno = errno;
    if (pid > 0) {
        setpgid(pid, pid);
        atomic_store(&child_pid[c->slot], (int)pid);
        c->pid = pid;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        release(c);
        return sebt_fail(err, SEBT_ERR_IO, "cannot start %s: %s", path, strerror(fork_errno));
    }
    int e[2] = { 0, 0 };
    ssize_t n;
    while ((n = read(report[0], e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n == (ssize_t)sizeof e) {
        reap(pid, NULL);
        release(c);
        if (e[0] == 2)
            return sebt_fail(err, SEBT_ERR_IO, "cannot start %s: cannot write its log %s: %s", path, log,
                             strerror(e[1]));
        if (e[0] == 3)
            return sebt_fail(err, SEBT_ERR_IO, "cannot start %s in %s: %s", path, dir, strerror(e[1]));
        return sebt_fail(err, e[0] == 4 ? SEBT_ERR_UNAVAILABLE : SEBT_ERR_IO, "cannot run %s: %s", path,
                         strerror(e[1]));
    }
    return SEBT_OK;
}

sebt_status sebt_child_wait(sebt_child *c, int *status, sebt_error *err)
{
    if (c->pid <= 0)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "sebt_child_wait: no child");
    siginfo_t info;
    for (;;) {
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOWAIT) == 0)
            break;
        if (errno != EINTR) {
            int e = errno;
            sebt_child_stop(c);
            return sebt_fail(err, SEBT_ERR_IO, "waiting for a program sebt started: %s", strerror(e));
        }
    }
    /* What it started in the background ends with it. */
    kill(-c->pid, SIGKILL);
    reap(c->pid, status);
    release(c);
    return SEBT_OK;
}
