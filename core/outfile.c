/* Atomic output files: a temporary file beside the target, renamed over it
 * on success (include/sebt/outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sebt/outfile.h"
#include "sebt/sebt.h"

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

void sebt_outfile_remove_temps(void)
{
    for (int i = 0; i < SEBT_OUTFILE_MAX_OPEN; i++)
        if (atomic_load(&slot_state[i]) == SLOT_LIVE) {
            unlink(slot_path[i]);
            atomic_store(&slot_state[i], SLOT_FREE);
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

void sebt_outfile_abort(sebt_outfile *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->atomic && o->tmp)
        unlink(o->tmp);
    release(o);
}

sebt_status sebt_outfile_commit(sebt_outfile *o, sebt_error *err)
{
    if (!o->f) {
        release(o);
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_outfile_commit: no open file");
    }
    errno = 0;
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    /* Durable before it is visible: a crash after the rename must not leave
     * an empty file where a full one was. */
    if (!bad && o->atomic && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS) {
        bad = 1;
        e = errno;
    }
    FILE *f = o->f;
    o->f = NULL;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "writing %s failed: %s%s", o->path,
                                  e ? strerror(e) : "write error",
                                  o->atomic ? "; the previous file is unchanged" : "");
        sebt_outfile_abort(o);
        return s;
    }
    if (o->atomic && rename(o->tmp, o->path) != 0) {
        e = errno;
        sebt_status s = sebt_fail(err, SEBT_ERR_IO, "cannot replace %s: %s; the previous file is unchanged",
                                  o->path, strerror(e));
        sebt_outfile_abort(o);
        return s;
    }
    release(o);
    return SEBT_OK;
}
