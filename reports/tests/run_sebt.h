/* Runs the built `sebt` through the shell and keeps what it printed, and
 * the file reading the report tests share. */
#ifndef SEBT_REPORTS_TEST_RUN_SEBT_H
#define SEBT_REPORTS_TEST_RUN_SEBT_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sebt/sebt.h"

typedef struct {
    int status;          /* exit code, -1 when it did not exit normally */
    char out[1 << 16];   /* stdout and stderr together */
} sebt_run_result;

/* env: "NAME=value " prefixes for the shell, or "". args are shell words. */
static inline void run_sebt(const char *env, const char *args, sebt_run_result *r)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s'%s' %s 2>&1", env, SEBT_BINARY, args);
    r->out[0] = '\0';
    r->status = -1;
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    size_t n = fread(r->out, 1, sizeof r->out - 1, p);
    r->out[n] = '\0';
    int st = pclose(p);
    if (st != -1 && WIFEXITED(st))
        r->status = WEXITSTATUS(st);
}

/* run_sebt with the arguments that fmt makes, which must exit with want. */
__attribute__((format(printf, 4, 5))) static inline void run_sebt_expect(sebt_run_result *r, const char *env,
                                                                         int want, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    run_sebt(env, args, r);
    cr_assert_eq(r->status, want, "exit %d, not %d:\n%s", r->status, want, r->out);
}

static inline int file_size(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return (int)n;
}

static inline bool have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* Every report draws its figures with gnuplot: without it, a test of one
 * has nothing to look at. */
#define SKIP_WITHOUT_GNUPLOT()                                                                                      \
    do {                                                                                                            \
        if (!have_gnuplot())                                                                                        \
            cr_skip_test("gnuplot is not installed");                                                               \
    } while (0)

/* The whole of dir/name, NUL-terminated; the caller frees it. Not inlined:
 * inlined, GCC 12+ takes the text for a pointer into this frame
 * (-Wdangling-pointer) in every caller that keeps it. */
__attribute__((noinline, unused)) static char *slurp_in(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sebt_error err = { 0 };
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(sebt_read_file(path, &text, &len, &err), SEBT_OK, "%s: %s", path, err.msg);
    return text;
}

#endif
