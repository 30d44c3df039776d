/* Atomic output files: a temporary file beside the target, renamed over it
 * on success (include/sebt/outfile.h). */
#define _GNU_SOURCE   /* O_DIRECT, fopencookie */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sebt/outfile.h"
#include "sebt/sebt.h"
#include "sebt/spawn.h"
#include "test_faults.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The temporary files a signal handler must remove. A slot is claimed
 * (1) while its path is written and live (2) once the file exists; the
 * handler only reads live slots, whose paths no longer change. Fixed
 * buffers, because a handler may not follow pointers that free() could
 * invalidate under it. */
enum { SLOT_FREE = 0, SLOT_CLAIMED = 1, SLOT_LIVE = 2 };
static atomic_int slot_state[SEBT_OUTFILE_MAX_OPEN];
static char slot_path[SEBT_OUTFILE_MAX_OPEN][PATH_MAX];
static atomic_uint temp_counter;

/* The temporary folders, as the files: LIVE (dir_tmp is to be removed),
 * or ASIDE (the target was renamed to dir_old and dir_tmp not yet renamed
 * in: the old one goes back first). */
enum { DIR_ASIDE = 3 };
static atomic_int dir_state[SEBT_OUTDIR_MAX_OPEN];
static char dir_tmp[SEBT_OUTDIR_MAX_OPEN][PATH_MAX];
static char dir_target[SEBT_OUTDIR_MAX_OPEN][PATH_MAX];
static char dir_old[SEBT_OUTDIR_MAX_OPEN][PATH_MAX];

/* The scratch folders (sebt_scratch_open): LIVE while scratch_dir is to be
 * removed. */
static atomic_int scratch_state[SEBT_SCRATCH_MAX_OPEN];
static char scratch_dir[SEBT_SCRATCH_MAX_OPEN][PATH_MAX];

/* rm -r of dirfd/name without malloc or stdio (getdents64, unlinkat), so
 * that a signal handler can call it. Entries are removed while the folder
 * is read, so it is read again until a pass finds nothing. */
struct sebt_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static void remove_tree_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM))
        return;
    int fd = depth < 16 ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd >= 0) {
        _Alignas(8) char buf[2048];
        for (int pass = 0, removed = 1; removed && pass < 64; pass++) {
            removed = 0;
            lseek(fd, 0, SEEK_SET);
            long n;
            while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
                for (long off = 0; off < n;) {
                    const struct sebt_dirent64 *e = (const struct sebt_dirent64 *)(buf + off);
                    off += e->d_reclen;
                    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
                        continue;
                    remove_tree_at(fd, e->d_name, depth + 1);
                    removed = 1;
                }
            }
        }
        close(fd);
    }
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

static void remove_tree(const char *path) { remove_tree_at(AT_FDCWD, path, 0); }

void sebt_outfile_remove_temps(void)
{
    for (int i = 0; i < SEBT_OUTFILE_MAX_OPEN; i++)
        if (atomic_load(&slot_state[i]) == SLOT_LIVE) {
            unlink(slot_path[i]);
            atomic_store(&slot_state[i], SLOT_FREE);
        }
    for (int i = 0; i < SEBT_SCRATCH_MAX_OPEN; i++)
        if (atomic_load(&scratch_state[i]) == SLOT_LIVE) {
            remove_tree(scratch_dir[i]);
            atomic_store(&scratch_state[i], SLOT_FREE);
        }
    for (int i = 0; i < SEBT_OUTDIR_MAX_OPEN; i++) {
        int s = atomic_load(&dir_state[i]);
        if (s == DIR_ASIDE && rename(dir_old[i], dir_target[i]) != 0)
            remove_tree(dir_old[i]); /* the new folder was already in place */
        if (s == SLOT_LIVE || s == DIR_ASIDE) {
            remove_tree(dir_tmp[i]);
            atomic_store(&dir_state[i], SLOT_FREE);
        }
    }
}

sebt_status sebt_scratch_open(char *dir, size_t size, const char *prefix, sebt_error *err)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int slot = -1;
    for (int i = 0; i < SEBT_SCRATCH_MAX_OPEN && slot < 0; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&scratch_state[i], &expect, SLOT_CLAIMED))
            slot = i;
    }
    if (slot < 0)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "more than %d scratch folders at once", SEBT_SCRATCH_MAX_OPEN);
    int n = snprintf(scratch_dir[slot], PATH_MAX, "%s/%s-XXXXXX", tmp, prefix);
    if (n < 0 || (size_t)n >= size || n >= PATH_MAX) {
        atomic_store(&scratch_state[slot], SLOT_FREE);
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot make a temporary folder in %s: the path is too long", tmp);
    }
    /* No signal between the folder's making and its slot going live: the
     * handler would leave it. */
    sigset_t ending, old;
    sebt_ending_signals(&ending);
    pthread_sigmask(SIG_BLOCK, &ending, &old);
    bool made = mkdtemp(scratch_dir[slot]) != NULL;
    int e = errno;
    atomic_store(&scratch_state[slot], made ? SLOT_LIVE : SLOT_FREE);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!made)
        return sebt_fail(err, SEBT_ERR_IO, "cannot make a temporary folder in %s: %s", tmp, strerror(e));
    memcpy(dir, scratch_dir[slot], (size_t)n + 1);
    return SEBT_OK;
}

void sebt_scratch_remove(const char *dir)
{
    for (int i = 0; i < SEBT_SCRATCH_MAX_OPEN; i++)
        if (atomic_load(&scratch_state[i]) == SLOT_LIVE && strcmp(scratch_dir[i], dir) == 0) {
            remove_tree(scratch_dir[i]);
            atomic_store(&scratch_state[i], SLOT_FREE);
            return;
        }
}

static int claim_slot(void)
{
    for (int i = 0; i < SEBT_OUTFILE_MAX_OPEN; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&slot_state[i], &expect, SLOT_CLAIMED))
            return i;
    }
    return -1;
}

static void release(sebt_outfile *o)
{
    if (o->slot >= 0)
        atomic_store(&slot_state[o->slot], SLOT_FREE);
    free(o->path);
    free(o->tmp);
    o->f = NULL;
    o->path = o->tmp = NULL;
    o->slot = -1;
    o->synced = false;
}

/* Writes in place: for targets that are not regular files, which rename()
 * would replace (a device) or cannot reach (a FIFO). */
static sebt_status open_in_place(sebt_outfile *o, const char *path, sebt_error *err)
{
    o->path = strdup(path);
    if (!o->path)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
    o->f = fopen(path, "w");
    if (!o->f) {
        int e = errno;
        release(o);
        return sebt_fail(err, SEBT_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    o->atomic = false;
    return SEBT_OK;
}

sebt_status sebt_outfile_open(sebt_outfile *o, const char *path, sebt_error *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (!path || !*path)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_outfile_open: no path");

    /* Follow a symbolic link, so that the link keeps pointing at the file. */
    struct stat st;
    char *target = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        target = realpath(path, NULL);
        if (!target) /* a dangling link: written through, as fopen would */
            return open_in_place(o, path, err);
    }
    const char *tp = target ? target : path;
    bool exists = stat(tp, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        free(target);
        return sebt_fail(err, SEBT_ERR_IO, "cannot write %s: it is a directory", path);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        sebt_status s = open_in_place(o, tp, err);
        free(target);
        return s;
    }

    size_t len = strlen(tp);
    const char *slash = strrchr(tp, '/');
    size_t dir_len = slash ? (size_t)(slash - tp) + 1 : 0;
    o->path = target ? target : strdup(path);
    o->tmp = malloc(len + 64);
    if (!o->path || !o->tmp) {
        release(o);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
    }
    snprintf(o->tmp, len + 64, "%.*s.%s.tmp-%ld-%u", (int)dir_len, o->path, o->path + dir_len, (long)getpid(),
             atomic_fetch_add(&temp_counter, 1));
    if (strlen(o->tmp) >= PATH_MAX) {
        release(o);
        return sebt_fail(err, SEBT_ERR_IO, "cannot write %s: the path is too long", path);
    }
    o->slot = claim_slot();
    if (o->slot < 0) {
        release(o);
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot write %s: more than %d output files open at once", path,
                         SEBT_OUTFILE_MAX_OPEN);
    }
    memcpy(slot_path[o->slot], o->tmp, strlen(o->tmp) + 1);

    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? (st.st_mode & 0777) : 0666);
    if (fd < 0) {
        int e = errno;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", dir_len ? (int)dir_len : 1, dir_len ? o->path : ".");
        release(o);
        return sebt_fail(err, SEBT_ERR_IO, "cannot write %s: cannot create a temporary file in %s: %s", path,
                         dir, strerror(e));
    }
    atomic_store(&slot_state[o->slot], SLOT_LIVE);
    o->atomic = true;
    /* The same permissions as the file it replaces, whatever the umask. */
    if (exists)
        (void)fchmod(fd, st.st_mode & 07777);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        sebt_outfile_abort(o);
        return sebt_fail(err, SEBT_ERR_NOMEM, "cannot write %s: %s", path, strerror(e));
    }
    return SEBT_OK;
}

/* ---- direct writes (sebt_outfile_direct) ---------------------------------- */

#define DIRECT_ALIGN 4096u          /* every device's logical block divides it */
#define DIRECT_BLOCK (8u << 20)

typedef struct {
    int fd;
    char *mem, *buf;                /* buf: mem aligned to DIRECT_ALIGN */
    size_t len;                     /* bytes in buf */
    bool direct;                    /* O_DIRECT still set */
    bool discard;                   /* aborted: the close writes nothing */
    int first_errno;                /* of the first failed write, which stdio forgets */
} direct_sink;

/* Direct I/O off for the rest of the file (it is a flag of the open file). */
static void direct_off(direct_sink *s)
{
    int fl = fcntl(s->fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(s->fd, F_SETFL, fl & ~O_DIRECT);
    s->direct = false;
}

/* Writes all n bytes; false with errno set when the file takes no more. */
static bool sink_put(direct_sink *s, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EINVAL && s->direct) {   /* refused here: buffered from now on */
            direct_off(s);
            continue;
        }
        if (w == 0)
            errno = EIO;
        if (w <= 0) {
            if (!s->first_errno)
                s->first_errno = errno;
            return false;
        }
        if (s->direct && (size_t)w % DIRECT_ALIGN)   /* the offset is no longer aligned */
            direct_off(s);
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static ssize_t sink_write(void *c, const char *data, size_t size)
{
    direct_sink *s = c;
    for (size_t left = size; left;) {
        size_t n = DIRECT_BLOCK - s->len < left ? DIRECT_BLOCK - s->len : left;
        memcpy(s->buf + s->len, data, n);
        s->len += n;
        data += n;
        left -= n;
        if (s->len == DIRECT_BLOCK) {
            if (!sink_put(s, s->buf, s->len))
                return -1;
            s->len = 0;
        }
    }
    return (ssize_t)size;
}

/* Writes what is left (the aligned part directly, the tail buffered); the
 * descriptor stays open for the commit's fsync. */
static int sink_close(void *c)
{
    direct_sink *s = c;
    bool ok = true;
    if (!s->discard) {
        size_t whole = s->direct ? s->len / DIRECT_ALIGN * DIRECT_ALIGN : s->len;
        ok = sink_put(s, s->buf, whole);
        if (ok && whole < s->len) {
            direct_off(s);
            ok = sink_put(s, SEBT_FAULT("direct_tail_from_buffer_start") ? s->buf : s->buf + whole, s->len - whole);
        }
    }
    int e = errno;
    free(s->mem);
    s->mem = s->buf = NULL;
    s->len = 0;
    if (!ok) {
        errno = e;
        return -1;
    }
    return 0;
}

bool sebt_outfile_direct(sebt_outfile *o)
{
#if defined(O_DIRECT) && defined(__GLIBC__)
    if (!o->f || !o->atomic || o->direct || ftell(o->f) != 0)
        return false;
    direct_sink *s = calloc(1, sizeof *s);
    char *mem = malloc(DIRECT_BLOCK + DIRECT_ALIGN);
    int fd = s && mem ? dup(fileno(o->f)) : -1;
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    FILE *f = NULL;
    if (fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0) {
        *s = (direct_sink){ .fd = fd, .mem = mem, .direct = true,
                            .buf = mem + (DIRECT_ALIGN - (uintptr_t)mem % DIRECT_ALIGN) % DIRECT_ALIGN };
        f = fopencookie(s, "w", (cookie_io_functions_t){ .write = sink_write, .close = sink_close });
    }
    if (!f) {
        if (fd >= 0)
            close(fd);
        free(mem);
        free(s);
        return false;
    }
    fclose(o->f);   /* its descriptor; fd, a copy, stays */
    o->f = f;
    o->direct = s;
    return true;
#else
    (void)o;
    return false;
#endif
}

/* Closes f (a direct file's last block goes out here), after an fsync of
 * its file when sync is set. False with errno set when something was not
 * written. */
static bool close_file(sebt_outfile *o, bool sync)
{
    FILE *f = o->f;
    direct_sink *s = o->direct;
    int fd = s ? s->fd : fileno(f);
    o->f = NULL;
    o->direct = NULL;
    bool ok = true;
    int e = 0;
    if (s) {
        s->discard = !sync;
        if (fclose(f) != 0) {
            ok = false;
            e = errno;
        }
    }
    if (ok && sync && fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
        ok = false;
        e = errno;
    }
    if ((s ? close(fd) : fclose(f)) != 0 && ok) {
        ok = false;
        e = errno;
    }
    free(s);
    errno = e;
    return ok;
}

void sebt_outfile_abort(sebt_outfile *o)
{
    if (o->f)
        close_file(o, false);
    o->f = NULL;
    if (o->atomic && o->tmp)
        unlink(o->tmp);
    release(o);
}

void sebt_outfile_write_failed(sebt_outfile *o, int errnum)
{
    if (!o->write_errno)
        o->write_errno = errnum;
}

/* Writes out, fsyncs (atomic files) and closes o->f; on failure removes
 * the temporary file and releases o. */
static sebt_status finish_file(sebt_outfile *o, sebt_error *err)
{
    errno = 0;
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (bad && o->direct && ((direct_sink *)o->direct)->first_errno)   /* say why, not only that */
        e = ((direct_sink *)o->direct)->first_errno;
    if (bad && !e)
        e = o->write_errno;
    /* Durable before it is visible: a crash after the rename must not leave
     * an empty file where a full one was. */
    if (bad)
        close_file(o, false);
    else if (!close_file(o, o->atomic)) {
        bad = 1;
        e = errno;
    }
    if (!bad)
        return SEBT_OK;
    sebt_status s = sebt_fail(err, SEBT_ERR_IO, "writing %s failed: %s%s", o->path, e ? strerror(e) : "write error",
                              o->atomic ? "; the previous file is unchanged" : "");
    sebt_outfile_abort(o);
    return s;
}

sebt_status sebt_outfile_sync(sebt_outfile *o, sebt_error *err)
{
    if (!o->f) {
        release(o);
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_outfile_sync: no open file");
    }
    sebt_status st = finish_file(o, err);
    if (st == SEBT_OK)
        o->synced = true;
    return st;
}

sebt_status sebt_outfile_commit(sebt_outfile *o, sebt_error *err)
{
    if (!o->f && !o->synced) {
        release(o);
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_outfile_commit: no open file");
    }
    if (!o->synced) {
        sebt_status st = finish_file(o, err);
        if (st != SEBT_OK)
            return st;
    }
    if (o->atomic && rename(o->tmp, o->path) != 0) {
        int e = errno;
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "cannot replace %s: %s; the previous file is unchanged",
                                  o->path, strerror(e));
        sebt_outfile_abort(o);
        return s;
    }
    release(o);
    /* A signal just after the rename, made certain for the tests (only in
     * the test-only SEBT_TEST_FAULTS build). */
    if (o->atomic && SEBT_FAULT("sigterm_after_rename"))
        raise(SIGTERM);
    if (o->atomic && SEBT_FAULT("sigint_after_rename"))
        raise(SIGINT);
    return SEBT_OK;
}

/* ---- atomic output folders --------------------------------------------- */

static void dir_release(sebt_outdir *d)
{
    if (d->slot >= 0)
        atomic_store(&dir_state[d->slot], SLOT_FREE);
    free(d->path);
    free(d->tmp);
    d->path = d->tmp = NULL;
    d->slot = -1;
}

static int make_parents(const char *dir)
{
    char p[PATH_MAX];
    size_t n = strlen(dir);
    if (n >= sizeof p)
        return -1;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -1;
        p[i] = c;
    }
    return 0;
}

static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

sebt_status sebt_outdir_open(sebt_outdir *d, const char *path, sebt_error *err)
{
    memset(d, 0, sizeof *d);
    d->slot = -1;
    if (!path || !*path)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_outdir_open: no path");
    char target[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof target)
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot write %s: the path is too long", path);
    memcpy(target, path, n + 1);
    while (n > 1 && target[n - 1] == '/')
        target[--n] = '\0';
    struct stat st;
    if (lstat(target, &st) == 0) {
        /* ".", "..", a link: the folder they name. */
        char real[PATH_MAX];
        if (!realpath(target, real))
            return sebt_fail(err, SEBT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        memcpy(target, real, strlen(real) + 1);
        if (stat(target, &st) != 0 || !S_ISDIR(st.st_mode))
            return sebt_fail(err, SEBT_ERR_USAGE, "cannot write the folder %s: it exists and is not a folder", path);
    }
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot write the folder %s: it cannot be replaced", path);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", slash ? (slash == target ? 1 : (int)(slash - target)) : 1,
             slash ? target : ".");
    if (make_parents(parent) != 0)
        return sebt_fail(err, SEBT_ERR_IO, "cannot create the folder %s: %s", parent, strerror(errno));
    size_t tlen = strlen(target) + 64;
    d->path = strdup(target);
    d->tmp = malloc(tlen);
    if (!d->path || !d->tmp) {
        dir_release(d);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory", path);
    }
    snprintf(d->tmp, tlen, "%.*s.%s.tmp-%ld-%u", (int)(base - target), target, base, (long)getpid(),
             atomic_fetch_add(&temp_counter, 1));
    if (strlen(d->tmp) + 16 >= PATH_MAX) {
        dir_release(d);
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot write %s: the path is too long", path);
    }
    for (int i = 0; i < SEBT_OUTDIR_MAX_OPEN && d->slot < 0; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&dir_state[i], &expect, SLOT_CLAIMED))
            d->slot = i;
    }
    if (d->slot < 0) {
        dir_release(d);
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot write %s: more than %d output folders open at once", path,
                         SEBT_OUTDIR_MAX_OPEN);
    }
    memcpy(dir_tmp[d->slot], d->tmp, strlen(d->tmp) + 1);
    memcpy(dir_target[d->slot], d->path, strlen(d->path) + 1);
    /* The name the old folder is set aside under; like the temporary
     * folder's, it must fit, or the swap could not put it back. */
    int old_len = snprintf(dir_old[d->slot], PATH_MAX, "%.*s.%s.old-%ld-%u", (int)(base - target), target, base,
                           (long)getpid(), atomic_fetch_add(&temp_counter, 1));
    if (old_len < 0 || old_len >= PATH_MAX) {
        dir_release(d);
        return sebt_fail(err, SEBT_ERR_USAGE, "cannot write %s: the path is too long", path);
    }
    if (mkdir(d->tmp, 0755) != 0) {
        int e = errno;
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "cannot write %s: cannot create a temporary folder in %s: %s",
                                  path, parent, strerror(e));
        dir_release(d);
        return s;
    }
    atomic_store(&dir_state[d->slot], SLOT_LIVE);
    return SEBT_OK;
}

void sebt_outdir_abort(sebt_outdir *d)
{
    if (d->slot >= 0 && atomic_load(&dir_state[d->slot]) == SLOT_LIVE)
        remove_tree(d->tmp);
    dir_release(d);
}

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

sebt_status sebt_outdir_commit(sebt_outdir *d, sebt_error *err)
{
    if (d->slot < 0 || !d->tmp) {
        dir_release(d);
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_outdir_commit: no open folder");
    }
    sync_dir(d->tmp);
    const char *slash = strrchr(d->path, '/');
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", slash ? (slash == d->path ? 1 : (int)(slash - d->path)) : 1,
             slash ? d->path : ".");
    struct stat st;
    if (stat(d->path, &st) != 0 && rename(d->tmp, d->path) == 0) {
        sync_dir(parent);
        dir_release(d);
        return SEBT_OK;
    }
    if (syscall(SYS_renameat2, AT_FDCWD, d->tmp, AT_FDCWD, d->path, RENAME_EXCHANGE) == 0) {
        /* d->tmp holds the previous folder now; a signal removes it too. */
        sync_dir(parent);
        remove_tree(d->tmp);
        dir_release(d);
        return SEBT_OK;
    }
    int e = errno;
    if (e != EINVAL && e != ENOSYS && e != EOPNOTSUPP) {
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "cannot replace %s: %s; the previous folder is unchanged",
                                  d->path, strerror(e));
        sebt_outdir_abort(d);
        return s;
    }
    /* No swap on this file system: the old one aside, the new one in. */
    atomic_store(&dir_state[d->slot], DIR_ASIDE);
    if (rename(d->path, dir_old[d->slot]) != 0) {
        e = errno;
        atomic_store(&dir_state[d->slot], SLOT_LIVE);
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "cannot replace %s: %s; the previous folder is unchanged",
                                  d->path, strerror(e));
        sebt_outdir_abort(d);
        return s;
    }
    if (rename(d->tmp, d->path) != 0) {
        e = errno;
        (void)rename(dir_old[d->slot], d->path);
        atomic_store(&dir_state[d->slot], SLOT_LIVE);
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "cannot replace %s: %s; the previous folder is unchanged",
                                  d->path, strerror(e));
        sebt_outdir_abort(d);
        return s;
    }
    /* The old one is now the one to remove, by us or by a signal. */
    atomic_store(&dir_state[d->slot], SLOT_CLAIMED);
    memcpy(dir_tmp[d->slot], dir_old[d->slot], strlen(dir_old[d->slot]) + 1);
    atomic_store(&dir_state[d->slot], SLOT_LIVE);
    sync_dir(parent);
    remove_tree(dir_tmp[d->slot]);
    dir_release(d);
    return SEBT_OK;
}
