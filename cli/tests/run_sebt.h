/* Spawns the built sebt (SEBT_BINARY) with its stdout and stderr in files
 * of the test's scratch folder (core/tests/scratch_dir.h) and returns what it said and
 * how it ended. One proc is kept: a second run overwrites the first. */
#ifndef SEBT_TEST_RUN_SEBT_H
#define SEBT_TEST_RUN_SEBT_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../core/tests/scratch_dir.h"
#include "spawn_files.h"

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
    int st = spawn_to_files(argv, o, e);
    p.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    slurp_into(o, p.out, sizeof p.out);
    slurp_into(e, p.err, sizeof p.err);
    return &p;
}

/* run("sweep", "--data", DATA, NULL) */
static inline proc *run(const char *arg, ...)
{
    const char *args[64];
    va_list ap;
    va_start(ap, arg);
    gather_args(args, 64, arg, ap);
    va_end(ap);
    return runv(args);
}

#endif
