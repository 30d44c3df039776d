/* Runs a program with its stdout and stderr in files, so that no pipe can
 * fill up and stall it: for the CLI tests' ways of running sebt
 * (run_sebt.h, test_cli.c). */
#ifndef SEBT_TEST_SPAWN_FILES_H
#define SEBT_TEST_SPAWN_FILES_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>

extern char **environ;

/* argv: NULL-terminated, argv[0] the program's path. Returns its wait
 * status. */
static inline int spawn_to_files(const char *const *argv, const char *out_path, const char *err_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot spawn %s", argv[0]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* first and the rest of ap up to its NULL into out (room for max entries,
 * the NULL that ends them included); returns how many. */
static inline size_t gather_args(const char **out, size_t max, const char *first, va_list ap)
{
    size_t n = 0;
    for (const char *a = first; a && n + 1 < max; a = va_arg(ap, const char *))
        out[n++] = a;
    out[n] = NULL;
    return n;
}

#endif
