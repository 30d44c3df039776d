/* Atomic output files (include/sebt/outfile.h, cli/common.c): a run
 * that fails or is killed never leaves a half-written file and never
 * destroys the previous one. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sebt/outfile.h"
#include "sebt/sebt.h"

#include "../../core/tests/scratch_dir.h"

extern char **environ;

SEBT_SCRATCH_SUITE(atomic, "atomic");

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* The whole file, in a static buffer (files here are small). */
static const char *get(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Files in dir other than . and .. */
static int count_entries(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

Test(atomic, commit_replaces_and_abort_keeps_the_old_file)
{
    const char *p = in_scratch("out.csv");
    put(p, "old\n");
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, p, &e), SEBT_OK, "%s", e.msg);
    cr_assert(o.atomic);
    fputs("new, half written", o.f);
    fflush(o.f);
    /* Until the commit, the target is the old file and the new text lies in
     * a second file beside it. */
    cr_assert_str_eq(get(p), "old\n");
    cr_assert_eq(count_entries(), 2);
    sebt_outfile_abort(&o);
    cr_assert_str_eq(get(p), "old\n");
    cr_assert_eq(count_entries(), 1);

    cr_assert_eq(sebt_outfile_open(&o, p, &e), SEBT_OK, "%s", e.msg);
    fputs("new\n", o.f);
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_OK, "%s", e.msg);
    cr_assert_str_eq(get(p), "new\n");
    cr_assert_eq(count_entries(), 1);
}

Test(atomic, a_new_file_appears_only_on_commit)
{
    const char *p = in_scratch("fresh.json");
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, p, &e), SEBT_OK, "%s", e.msg);
    fputs("{}\n", o.f);
    cr_assert_null(get(p));
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_OK);
    cr_assert_str_eq(get(p), "{}\n");
}

Test(atomic, a_write_error_fails_the_commit_and_keeps_the_old_file)
{
    const char *p = in_scratch("out.csv");
    put(p, "old\n");
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, p, &e), SEBT_OK);
    fputs("new\n", o.f);
    /* A write error on the stream (as a full disk gives). */
    int fd = fileno(o.f);
    close(fd);
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_ERR_IO);
    cr_assert_not_null(strstr(e.msg, "out.csv"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "the previous file is unchanged"), "%s", e.msg);
    cr_assert_str_eq(get(p), "old\n");
    cr_assert_eq(count_entries(), 1);
}

/* sebt_outfile_direct: a big file written past the page cache has the
 * bytes written, whatever the sizes of the writes (smaller than the
 * alignment, the block exactly, across blocks, an unaligned tail). */
static unsigned char pattern_byte(size_t i) { return (unsigned char)((i * 2654435761u) >> 13); }

static size_t write_pattern(FILE *f, size_t total, bool must_fit)
{
    static const size_t sizes[] = { 1, 4095, 4096, 8u << 20, (8u << 20) - 1, 100003, (8u << 20) + 1, 7 };
    static unsigned char chunk[(8u << 20) + 1];
    size_t at = 0;
    for (size_t k = 0; at < total; k++) {
        size_t n = sizes[k % 8] < total - at ? sizes[k % 8] : total - at;
        for (size_t i = 0; i < n; i++)
            chunk[i] = pattern_byte(at + i);
        size_t w = fwrite(chunk, 1, n, f);
        if (must_fit)
            cr_assert_eq(w, n, "a write of %zu bytes at %zu", n, at);
        at += n;
    }
    return at;
}

static void assert_pattern(const char *path, size_t total)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static unsigned char got[1 << 20];
    size_t at = 0, n;
    while ((n = fread(got, 1, sizeof got, f)) > 0) {
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(got[i], pattern_byte(at + i), "byte %zu", at + i);
        at += n;
    }
    fclose(f);
    cr_assert_eq(at, total, "%zu bytes, %zu written", at, total);
}

/* A file "old\n" at name, and an atomic file over it made direct;
 * returns whether the file system took direct I/O. */
static bool open_direct_over_old(const char *p, sebt_outfile *o)
{
    put(p, "old\n");
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(o, p, &e), SEBT_OK, "%s", e.msg);
    return sebt_outfile_direct(o);
}

Test(atomic, a_direct_file_has_the_bytes_written)
{
    const char *p = in_scratch("big.csv");
    sebt_outfile o;
    sebt_error e = { 0 };
    bool direct = open_direct_over_old(p, &o);
    size_t total = write_pattern(o.f, 3 * (8u << 20) + 12345, true);
    cr_assert_str_eq(get(p), "old\n");
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_OK, "%s", e.msg);
    assert_pattern(p, total);
    cr_assert_eq(count_entries(), 1);
    if (!direct)
        cr_skip_test("this file system takes no direct I/O: the bytes were checked written the usual way");
}

Test(atomic, direct_only_before_the_first_byte_and_for_an_atomic_file)
{
    const char *p = in_scratch("late.csv");
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, p, &e), SEBT_OK, "%s", e.msg);
    fputs("header\n", o.f);
    cr_assert_not(sebt_outfile_direct(&o), "something was written already");
    fputs("row\n", o.f);
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_OK, "%s", e.msg);
    cr_assert_str_eq(get(p), "header\nrow\n");
    cr_assert_eq(sebt_outfile_open(&o, "/dev/null", &e), SEBT_OK, "%s", e.msg);
    cr_assert_not(o.atomic);
    cr_assert_not(sebt_outfile_direct(&o), "a device is written in place");
    sebt_outfile_abort(&o);
}

Test(atomic, an_aborted_direct_file_leaves_the_old_one)
{
    const char *p = in_scratch("big.csv");
    sebt_outfile o;
    bool direct = open_direct_over_old(p, &o);
    write_pattern(o.f, (8u << 20) + 777, true);
    cr_assert_eq(count_entries(), 2);
    sebt_outfile_abort(&o);
    cr_assert_str_eq(get(p), "old\n");
    cr_assert_eq(count_entries(), 1);
    if (!direct)
        cr_skip_test("this file system takes no direct I/O");
}

/* A file that may grow no further (RLIMIT_FSIZE, as a full disk would
 * stop it) fails the commit, names the file, keeps the old one. */
Test(atomic, a_direct_file_that_cannot_grow_fails_the_commit)
{
    const char *p = in_scratch("big.csv");
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = { 4u << 20, 4u << 20 };
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    sebt_outfile o;
    sebt_error e = { 0 };
    bool direct = open_direct_over_old(p, &o);
    for (int i = 0; i < 24; i++)   /* 24 MiB: past the limit in the first block */
        write_pattern(o.f, 1u << 20, false);
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_ERR_IO);
    cr_assert_not_null(strstr(e.msg, "big.csv"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "the previous file is unchanged"), "%s", e.msg);
    cr_assert_str_eq(get(p), "old\n");
    cr_assert_eq(count_entries(), 1);
    if (!direct)
        cr_skip_test("this file system takes no direct I/O");
    cr_assert_not_null(strstr(e.msg, strerror(EFBIG)), "the error says why: %s", e.msg);
}

Test(atomic, permissions_are_kept_and_a_symlink_stays_a_symlink)
{
    const char *p = in_scratch("real.csv"), *l = in_scratch("link.csv");
    put(p, "old\n");
    cr_assert_eq(chmod(p, 0640), 0);
    cr_assert_eq(symlink(p, l), 0);
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, l, &e), SEBT_OK, "%s", e.msg);
    fputs("new\n", o.f);
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_OK, "%s", e.msg);
    struct stat st;
    cr_assert_eq(lstat(l, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link was replaced by a file");
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0640, "mode %o", st.st_mode & 0777);
    cr_assert_str_eq(get(p), "new\n");
}

Test(atomic, a_device_is_written_in_place)
{
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, "/dev/null", &e), SEBT_OK, "%s", e.msg);
    cr_assert_not(o.atomic);
    fputs("x\n", o.f);
    cr_assert_eq(sebt_outfile_commit(&o, &e), SEBT_OK, "%s", e.msg);
    struct stat st;
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode));
}

Test(atomic, a_missing_folder_is_an_io_error_naming_the_path)
{
    sebt_outfile o;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_outfile_open(&o, in_scratch("no/such/out.csv"), &e), SEBT_ERR_IO);
    cr_assert_not_null(strstr(e.msg, "no/such/out.csv"), "%s", e.msg);
    cr_assert_null(o.f);
}

/* ---- the sweep killed mid-write ------------------------------------------ */

/* The temporary file of target name in dir, with its size, or false. */
static bool find_temp(const char *name, off_t *size)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    char prefix[64];
    snprintf(prefix, sizeof prefix, ".%s.tmp-", name);
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) && !found) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0) {
            *size = st.st_size;
            found = true;
        }
    }
    closedir(d);
    return found;
}

/* Starts a sweep of 50 000 combos (a 7 MB CSV) into out.csv that stops
 * itself once its first window's rows are in the temporary file
 * (SEBT_TEST_STOP_AFTER_WINDOWS, cmd_sweep.c's stop_here) and says so
 * through a FIFO: certain, not a race against the sweep's speed. Returns
 * the stopped sweep's pid. */
static pid_t sweep_stopped_mid_write(const char *old, int default_sig)
{
    const char *grid = in_scratch("grid.txt"), *out = in_scratch("out.csv"), *fifo = in_scratch("stopped.fifo");
    put(grid, "ema_fast = 1:50000:1\n");
    put(out, old);
    unlink(fifo);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int fd = open(fifo, O_RDWR);   /* read and write: opening never blocks */
    cr_assert_geq(fd, 0);
    const char *argv[] = { SEBT_BINARY, "sweep", "--data", SEBT_FIXTURES_DIR "/loader/tiny.csv", "--grid", grid,
                           "--output", out, "--threads", "1", NULL };
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t dfl;
    sigemptyset(&dfl);
    if (default_sig)
        sigaddset(&dfl, default_sig); /* not ignored, whatever the test runner inherited */
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
    setenv("SEBT_TEST_STOP_AFTER_WINDOWS", "1", 1);
    setenv("SEBT_TEST_STOPPED_FIFO", fifo, 1);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, SEBT_BINARY, NULL, &at, (char *const *)argv, environ), 0);
    unsetenv("SEBT_TEST_STOP_AFTER_WINDOWS");
    unsetenv("SEBT_TEST_STOPPED_FIFO");
    posix_spawnattr_destroy(&at);
    char line[32] = { 0 };
    ssize_t got = read(fd, line, sizeof line - 1);
    close(fd);
    cr_assert_gt(got, 0, "the sweep never said it stopped");
    cr_assert_eq(atol(line), (long)pid, "the FIFO names %s, the sweep is %ld", line, (long)pid);
    /* It writes the FIFO before it stops: a SIGCONT sent in between would
     * be spent before the stop. */
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, WUNTRACED), pid);
    cr_assert(WIFSTOPPED(status), "status %d", status);
    off_t size = 0;
    cr_assert(find_temp("out.csv", &size) && size > 0, "the stopped sweep has no rows in a temporary file");
    return pid;
}

/* sig sent to a sweep stopped mid-write, then SIGCONT: it dies of sig,
 * the previous output is whole and no temporary file stays. */
static void killed_mid_write(int sig)
{
    const char *old = "combo,previous\n0,run\n";
    pid_t pid = sweep_stopped_mid_write(old, sig);
    int status = 0;
    kill(pid, sig);
    kill(pid, SIGCONT);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status), "status %d", status);
    cr_assert_eq(WTERMSIG(status), sig);
    cr_assert_str_eq(get(in_scratch("out.csv")), old, "the previous output changed");
    off_t size = 0;
    cr_assert_not(find_temp("out.csv", &size), "a temporary file was left behind");
}

Test(atomic, sweep_killed_by_sigterm_mid_write_leaves_the_previous_output, .timeout = 120)
{
    killed_mid_write(SIGTERM);
}

Test(atomic, sweep_killed_by_sigint_mid_write_leaves_the_previous_output, .timeout = 120)
{
    killed_mid_write(SIGINT);
}

/* SIGBUS is what a mapped series cache entry cut short while in use
 * raises (core/series_cache.c maps entries): the same clean-up, and the
 * process still dies of it. */
Test(atomic, sweep_killed_by_sigbus_mid_write_leaves_the_previous_output, .timeout = 120)
{
    killed_mid_write(SIGBUS);
}

/* SIGKILL cannot be caught: the old file is still whole; a temporary file
 * may stay beside it. */
Test(atomic, sweep_killed_by_sigkill_mid_write_leaves_the_previous_output, .timeout = 120)
{
    pid_t pid = sweep_stopped_mid_write("previous\n", 0);
    int status = 0;
    kill(pid, SIGKILL);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
    cr_assert_str_eq(get(in_scratch("out.csv")), "previous\n");
}
