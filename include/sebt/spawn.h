/* Programs sebt starts and waits for (core/spawn.c): gnuplot and sebt_bench
 * for `sebt report`. Each runs in its own process group, so that sebt, not
 * the terminal, decides when it stops, and stopping it stops everything it
 * started too:
 *
 *     sebt_child c;
 *     if (sebt_child_start(&c, path, argv, NULL, "x.log", &err) != SEBT_OK) ...;
 *     int status;
 *     if (sebt_child_wait(&c, &status, &err) != SEBT_OK) ...;
 *
 * A program that must leave no child behind when it is interrupted calls
 * sebt_children_stop() from its handler of every sebt_ending_signals() and atexit
 * (cli/main.c does both): each group still running gets SIGTERM, then
 * SIGKILL after a grace period, and its leader is reaped. A SIGKILL of sebt
 * itself cannot be caught: the direct child is then killed by the kernel
 * (PR_SET_PDEATHSIG); what it started may outlive it. */
#ifndef SEBT_SPAWN_H
#define SEBT_SPAWN_H

#include <signal.h>
#include <sys/types.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    pid_t pid;      /* also its process group; 0 once reaped */
    int slot;       /* internal: the entry sebt_children_stop sees, or -1 */
} sebt_child;

/* At most this many children at once in a process. */
#define SEBT_CHILD_MAX 16
/* How long a stopped group has between SIGTERM and SIGKILL. */
#define SEBT_CHILD_GRACE_MS 2000

/* Starts path (a file name, not looked up on PATH) with argv, in its own
 * process group, stdin from /dev/null, stdout and stderr into log (created
 * or truncated; NULL: sebt's own), in folder dir (NULL: here). A program
 * that cannot be run is an error here (SEBT_ERR_UNAVAILABLE), not an exit
 * status later. */
sebt_status sebt_child_start(sebt_child *c, const char *path, char *const argv[], const char *dir,
                             const char *log, sebt_error *err);
/* Waits for the child to end (*status as waitpid gives it), then kills
 * whatever it left running in its group: nothing it started outlives it. */
sebt_status sebt_child_wait(sebt_child *c, int *status, sebt_error *err);
/* SIGTERM to its group, SIGKILL after SEBT_CHILD_GRACE_MS, reaped. */
void sebt_child_stop(sebt_child *c);
/* The signals whose default action ends a process and that a program can
 * catch: SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
 * SIGUSR2, SIGPOLL, SIGPROF, SIGVTALRM, SIGXCPU, SIGSTKFLT, SIGPWR and the
 * real-time signals. One list for every place that must act on any of
 * them: a handler that stops children and removes temporary files
 * (cli/main.c catches each), a fork that must name its child before a
 * handler runs (each is blocked across it), and a child that gets each
 * one's default action back. Not in it: SIGKILL and SIGSTOP (cannot be
 * caught), the crash signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
 * SIGTRAP, SIGSYS: a sanitizer or a debugger owns them), SIGXFSZ (a write
 * past the file-size limit, turned into EFBIG by cli/main.c). */
void sebt_ending_signals(sigset_t *set);
/* In a child between fork and exec: each of sebt_ending_signals() back to
 * its default action, an inherited "ignore" included, so that stopping
 * the child's group stops it. Async-signal-safe. */
void sebt_ending_signals_default(void);
/* sebt_child_stop of every child not yet waited for. Safe in a signal
 * handler (kill, waitpid and nanosleep only). */
void sebt_children_stop(void);

#ifdef __cplusplus
}
#endif

#endif
