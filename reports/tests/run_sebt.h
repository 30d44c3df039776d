/* Runs the built `sebt` through the shell and keeps what it printed, for
 * the report tests. */
#ifndef SEBT_REPORTS_TEST_RUN_SEBT_H
#define SEBT_REPORTS_TEST_RUN_SEBT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

#endif
