/* No output replaces an input or another output (include/sebt/outfile.h):
 * every path a command reads or writes, compared before anything is
 * written. Paths that exist are compared as the files they are (device and
 * inode, or the folder they resolve to, links followed, as a writer follows
 * them); a path not there yet by where it will be (its parent resolved, the
 * rest taken lexically), so two outputs that do not exist yet still meet. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sebt/outfile.h"
#include "sebt/sebt.h"

/* out = where path is or will be: absolute, links followed as far as they
 * exist, "." and ".." resolved. False when it does not fit. */
static bool resolve(const char *path, char *out, size_t size)
{
    char abs[PATH_MAX * 2];
    if (path[0] == '/') {
        if (snprintf(abs, sizeof abs, "%s", path) >= (int)sizeof abs)
            return false;
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || snprintf(abs, sizeof abs, "%s/%s", cwd, path) >= (int)sizeof abs)
            return false;
    }
    size_t n = strlen(abs);
    while (n > 1 && abs[n - 1] == '/')
        abs[--n] = '\0';
    char real[PATH_MAX];
    if (realpath(abs, real))
        return snprintf(out, size, "%s", real) < (int)size;
    char *slash = strrchr(abs, '/');
    const char *name = slash + 1;
    char parent[PATH_MAX * 2];
    snprintf(parent, sizeof parent, "%.*s", slash == abs ? 1 : (int)(slash - abs), abs);
    if (strcmp(parent, abs) == 0 || !resolve(parent, out, size))
        return false;
    if (strcmp(name, ".") == 0 || !*name)
        return true;
    if (strcmp(name, "..") == 0) {
        char *up = strrchr(out, '/');
        up[up == out ? 1 : 0] = '\0';
        return true;
    }
    size_t used = strlen(out);
    return snprintf(out + used, size - used, "%s%s", used > 1 ? "/" : "", name) < (int)(size - used);
}

typedef struct {
    const sebt_path_use *use;
    char where[PATH_MAX];
    bool exists;            /* stat succeeded */
    bool special;           /* there and not a regular file or folder (/dev/null, a FIFO): written in place */
    struct stat st;
} place;

static bool is_output(const place *p)
{
    return p->use->role != SEBT_PATH_INPUT;
}

static bool same(const place *a, const place *b)
{
    if (a->exists && b->exists)
        return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
    return strcmp(a->where, b->where) == 0;
}

/* in lies in folder (below it at any depth when deep, else directly). */
static bool inside(const char *folder, const char *in, bool deep)
{
    size_t n = strlen(folder);
    if (strncmp(in, folder, n) != 0 || (n > 1 && in[n] != '/') || (n == 1 && in[0] != '/'))
        return false;
    const char *rest = in + (n > 1 ? n + 1 : 1);
    return *rest && (deep || !strchr(rest, '/'));
}

/* f is a file the folder output d writes or removes: its path below d
 * matches one of d's patterns ("a|b"; a "*" crosses folders), or d is
 * replaced whole. */
static bool folder_takes(const place *d, const place *f)
{
    if (same(d, f))
        return true;
    if (!inside(d->where, f->where, true))
        return false;
    if (!d->use->holds)
        return true;
    const char *rest = f->where + strlen(d->where) + (strlen(d->where) > 1 ? 1 : 0);
    char pattern[256];
    for (const char *h = d->use->holds; *h;) {
        size_t n = strcspn(h, "|");
        snprintf(pattern, sizeof pattern, "%.*s", (int)n, h);
        if (fnmatch(pattern, rest, 0) == 0)
            return true;
        h += n + (h[n] == '|');
    }
    return false;
}

static bool collide(const place *out, const place *other)
{
    if (out->special || other->special)
        return false;
    if (out->use->role == SEBT_PATH_OUTPUT_DIR)
        return folder_takes(out, other) ||
               (other->use->role == SEBT_PATH_OUTPUT_DIR && !other->use->holds && folder_takes(other, out));
    if (other->use->role == SEBT_PATH_OUTPUT_DIR)
        return folder_takes(other, out);
    return same(out, other);
}

/* Names the writer first: the folder output when one of the two is. */
static sebt_status refuse(const place *a, const place *b, sebt_error *err)
{
    const place *w = a, *v = b;
    if (b->use->role == SEBT_PATH_OUTPUT_DIR && folder_takes(b, a)) {
        w = b;
        v = a;
    }
    const char *tail = ": no file sebt writes may be one it reads or another it writes; name another file";
    if (w->use->role == SEBT_PATH_OUTPUT && v->use->role == SEBT_PATH_OUTPUT)
        return sebt_fail(err, SEBT_ERR_USAGE, "%s %s and %s %s are the same file%s", w->use->option, w->use->path,
                         v->use->option, v->use->path, tail);
    return sebt_fail(err, SEBT_ERR_USAGE, "%s %s would %s the %s %s %s%s", w->use->option, w->use->path,
                     w->use->role == SEBT_PATH_OUTPUT_DIR && !w->use->holds ? "replace, with the folder,"
                     : "write over", v->use->role == SEBT_PATH_INPUT ? "input" : "output", v->use->option,
                     v->use->path, tail);
}

sebt_status sebt_paths_check(const sebt_path_use *uses, size_t n, sebt_error *err)
{
    place *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory comparing %zu paths", n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *path = uses[i].path;
        if (!path || !*path || strcmp(path, "-") == 0)
            continue;
        place *q = &p[k];
        q->use = &uses[i];
        q->exists = stat(path, &q->st) == 0;
        q->special = q->exists && !S_ISREG(q->st.st_mode) && !S_ISDIR(q->st.st_mode);
        if (!resolve(path, q->where, sizeof q->where))
            snprintf(q->where, sizeof q->where, "%s", path);
        k++;
    }
    sebt_status st = SEBT_OK;
    for (size_t i = 0; i < k && st == SEBT_OK; i++) {
        if (!is_output(&p[i]))
            continue;
        for (size_t j = 0; j < k; j++) {
            if (j == i || (is_output(&p[j]) && j > i) || !collide(&p[i], &p[j]))
                continue;
            st = refuse(&p[i], &p[j], err);
            break;
        }
    }
    free(p);
    return st;
}
