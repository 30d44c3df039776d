/* Runs the built `sebt` (SEBT_BINARY, or SEBT_TEST_BINARY where the test
 * program was moved away from its build folder, as in the device bundle)
 * with some environment variables set or removed, and captures its exit
 * code, stdout and stderr. */
#ifndef SEBT_TEST_SPAWN_H
#define SEBT_TEST_SPAWN_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    int code;     /* exit status, -1 when the process did not exit normally */
    char *out;
    char *err;
} sebt_proc;

/* Every variable that steers selection: each test starts from none of them. */
static const char *const selection_vars[] = { "BACKTEST_BACKEND", "BACKTEST_GPU_ID", "SEBT_DEBUG_MAPS",
                                              "SEBT_CROSSOVER_FILE", NULL };

static inline char *spawn_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot read %s", path);
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static inline bool env_overridden(const char *entry, const char *const *set)
{
    size_t klen = strcspn(entry, "=");
    for (const char *const *v = selection_vars; *v; v++)
        if (strlen(*v) == klen && strncmp(entry, *v, klen) == 0)
            return true;
    for (const char *const *s = set; s && *s; s++)
        if (strcspn(*s, "=") == klen && strncmp(entry, *s, klen) == 0)
            return true;
    return false;
}

static inline const char *spawn_sebt_binary(void)
{
    const char *moved = getenv("SEBT_TEST_BINARY");
    return moved && *moved ? moved : SEBT_BINARY;
}

/* set: NULL-terminated "KEY=VALUE" entries; args: NULL-terminated, without
 * argv[0]. Output goes through files in dir. */
static inline sebt_proc spawn_sebt(const char *dir, const char *const *set, const char *const *args)
{
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);

    const char *envp[512];
    size_t ne = 0;
    for (char **e = environ; *e && ne < 400; e++)
        if (!env_overridden(*e, set))
            envp[ne++] = *e;
    for (const char *const *s = set; s && *s; s++)
        envp[ne++] = *s;
    envp[ne] = NULL;

    const char *argv[64];
    size_t na = 0;
    const char *binary = spawn_sebt_binary();
    argv[na++] = binary;
    for (const char *const *a = args; *a; a++)
        argv[na++] = *a;
    argv[na] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, binary, &fa, NULL, (char *const *)argv, (char *const *)envp);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot spawn %s", binary);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    sebt_proc p = { WIFEXITED(status) ? WEXITSTATUS(status) : -1, spawn_slurp(out_path), spawn_slurp(err_path) };
    return p;
}

static inline void sebt_proc_free(sebt_proc *p)
{
    free(p->out);
    free(p->err);
}

/* tiny.csv in dir (its path into csv_path) opened with the CSV header
 * written: the caller writes the bars and closes it. */
static inline FILE *fixture_csv_begin(const char *dir, char *csv_path, size_t csv_size)
{
    snprintf(csv_path, csv_size, "%s/tiny.csv", dir);
    FILE *f = fopen(csv_path, "w");
    cr_assert_not_null(f);
    fprintf(f, "open_time,open,high,low,close,volume\n");
    return f;
}

static inline size_t count_lines_with(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *hit = strstr(line, needle);
        if (hit && hit < line + len)
            n++;
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

#endif
