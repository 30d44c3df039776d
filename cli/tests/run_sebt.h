/* Spawns the built sebt (SEBT_BINARY) with its stdout and stderr in files
 * of the test's scratch folder (core/tests/scratch_dir.h) and returns what it said and
 * how it ended. One proc is kept: a second run overwrites the first. */
#ifndef SEBT_TEST_RUN_SEBT_H
#define SEBT_TEST_RUN_SEBT_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "../../core/tests/scratch_dir.h"

extern char **environ;

typedef struct {
    int code; /* exit status, or 128 + signal */
    char out[1 << 16];
    char err[1 << 14];
} proc;

static inline void slurp_into(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* args: sebt's arguments, NULL-terminated. */
static inline proc *runv(const char *const *args)
{
    static proc p;
    const char *argv[64];
    int n = 0;
    argv[n++] = SEBT_BINARY;
    for (int i = 0; args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char o[300], e[300];
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, o, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, SEBT_BINARY, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    p.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    slurp_into(o, p.out, sizeof p.out);
    slurp_into(e, p.err, sizeof p.err);
    return &p;
}

/* run("sweep", "--data", DATA, NULL) */
static inline proc *run(const char *arg, ...)
{
    const char *args[64];
    int n = 0;
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a && n < 63; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return runv(args);
}

#endif
