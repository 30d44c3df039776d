/* One scratch folder per test under /tmp, made before and removed after it
 * (Criterion runs each test in its own process, so `dir` is per test).
 * Use: SEBT_SCRATCH_SUITE(suite, "tag") in place of TestSuite(suite). */
#ifndef SEBT_TEST_SCRATCH_DIR_H
#define SEBT_TEST_SCRATCH_DIR_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[256];
/* The folder made, kept apart from `dir`, which a test may point deeper. */
static char scratch_root[256];

static void scratch_make(const char *tag)
{
    snprintf(dir, sizeof dir, "/tmp/sebt_test_%s_XXXXXX", tag);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(scratch_root, sizeof scratch_root, "%s", dir);
}

static void scratch_remove(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_root);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", scratch_root);
}

/* dir/name, from a small pool of paths: a test holds at most a few at once. */
static inline const char *in_scratch(const char *name)
{
    static char buf[16][512];
    static int next;
    char *p = buf[next++ % 16];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

#define SEBT_SCRATCH_SUITE(suite, tag)                      \
    static void suite##_scratch_make(void) { scratch_make(tag); } \
    TestSuite(suite, .init = suite##_scratch_make, .fini = scratch_remove)

#endif
