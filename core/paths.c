/* Where sebt's own parts are: relative to the program or library that
 * holds this code, found at run time (dladdr, /proc/self/exe), so an
 * installed prefix works wherever it is moved and never reaches back into
 * the build folder it came from. The build folder has the installed
 * layout's share/sebt (links into the source tree, made by cmake) and
 * keeps its programs and modules at its top, so the same lookup runs
 * there: tests and the README's commands use it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sebt/sebt.h"

/* From one installed folder to another, worked out by cmake from
 * GNUInstallDirs (CMakeLists.txt): BINDIR holds sebt, LIBDIR libsebt.so,
 * PKGLIBDIR (LIBDIR/sebt) the modules and sebt_bench. */
#ifndef SEBT_REL_BINDIR_DATA
#define SEBT_REL_BINDIR_DATA "../share/sebt"
#define SEBT_REL_BINDIR_PKGLIB "../lib/sebt"
#define SEBT_REL_LIBDIR_DATA "../share/sebt"
#define SEBT_REL_LIBDIR_PKGLIB "sebt"
#define SEBT_REL_PKGLIBDIR_DATA "../../share/sebt"
#define SEBT_REL_PKGLIBDIR_PKGLIB "."
#define SEBT_REL_PKGLIBDIR_BIN "../../bin"
#endif

/* A file every installation and build folder has under share/sebt. */
#define DATA_SENTINEL "parity-combos.csv"

static struct {
    char data[PATH_MAX];
    char pkglib[PATH_MAX];
    char bin[PATH_MAX];
    char anchor[PATH_MAX];    /* the folder of the program or library holding this code */
    bool found;
} where;
static pthread_once_t where_once = PTHREAD_ONCE_INIT;

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* out = a/b[/c]; false (out empty) when it does not fit. */
static bool joined(char *out, size_t size, const char *a, const char *b, const char *c)
{
    const char *parts[] = { a, "/", b, c ? "/" : "", c ? c : "" };
    size_t used = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t len = strlen(parts[i]);
        if (used + len >= size) {
            out[0] = '\0';
            return false;
        }
        memcpy(out + used, parts[i], len);
        used += len;
    }
    out[used] = '\0';
    return true;
}

/* The folder of the object holding this function: libsebt.so when a
 * program uses the shared library, else the program itself (sebt,
 * sebt_bench, a test), whose name dladdr only knows as argv[0]. */
static bool anchor_dir(char *dir, size_t size)
{
    char file[PATH_MAX] = "";
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1((void *)&anchor_dir, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name &&
        map->l_name[0] && info.dli_fname && info.dli_fname[0] == '/') {
        if (!realpath(info.dli_fname, file))
            file[0] = '\0';
    }
    if (!file[0]) {
        ssize_t n = readlink("/proc/self/exe", file, sizeof file - 1);
        if (n <= 0)
            return false;
        file[n] = '\0';
    }
    char *slash = strrchr(file, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(dir, size, "%s", file[0] ? file : "/");
    return true;
}

/* prefix/bin/../share/sebt reads better as prefix/share/sebt in messages;
 * a folder that is not there (no module installed) stays as it is. */
static void tidy(char *path, size_t size)
{
    char real[PATH_MAX];
    if (realpath(path, real))
        snprintf(path, size, "%s", real);
}

static void locate(void)
{
    if (!anchor_dir(where.anchor, sizeof where.anchor))
        return;
    const char *a = where.anchor;
    char probe[PATH_MAX];
    /* Installed: the anchor is BINDIR (sebt), LIBDIR (libsebt.so) or
     * PKGLIBDIR (sebt_bench); whichever finds share/sebt says which. */
    static const struct { const char *data, *pkglib; } kinds[] = {
        { SEBT_REL_BINDIR_DATA, SEBT_REL_BINDIR_PKGLIB },
        { SEBT_REL_LIBDIR_DATA, SEBT_REL_LIBDIR_PKGLIB },
        { SEBT_REL_PKGLIBDIR_DATA, SEBT_REL_PKGLIBDIR_PKGLIB },
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!joined(probe, sizeof probe, a, kinds[k].data, DATA_SENTINEL) || !exists(probe))
            continue;
        joined(where.data, sizeof where.data, a, kinds[k].data, NULL);
        joined(where.pkglib, sizeof where.pkglib, a, kinds[k].pkglib, NULL);
        joined(where.bin, sizeof where.bin, where.pkglib, SEBT_REL_PKGLIBDIR_BIN, NULL);
        tidy(where.data, sizeof where.data);
        tidy(where.pkglib, sizeof where.pkglib);
        tidy(where.bin, sizeof where.bin);
        where.found = true;
        return;
    }
    /* A build folder: the anchor or one of its parents holds CMakeCache.txt
     * (tests live a few folders down), everything sebt builds sits at its
     * top, and share/sebt is there. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", a);
    for (int up = 0; up < 4; up++) {
        char cache[PATH_MAX];
        if (joined(cache, sizeof cache, dir, "CMakeCache.txt", NULL) && exists(cache) &&
            joined(probe, sizeof probe, dir, "share/sebt", DATA_SENTINEL) && exists(probe)) {
            joined(where.data, sizeof where.data, dir, "share/sebt", NULL);
            snprintf(where.pkglib, sizeof where.pkglib, "%s", dir);
            snprintf(where.bin, sizeof where.bin, "%s", dir);
            where.found = true;
            return;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = '\0';
    }
}

const char *sebt_data_dir(void)
{
    const char *env = getenv("SEBT_SHARE_DIR");
    if (env && *env)
        return env;
    pthread_once(&where_once, locate);
    return where.found ? where.data : NULL;
}

bool sebt_part_path(const char *name, char *path, size_t size)
{
    pthread_once(&where_once, locate);
    const char *dir = strcmp(name, "sebt") == 0 ? where.bin : where.pkglib;
    if (!where.found) {
        /* Not an installation nor a build folder: name the place an
         * installed sebt would have it, for the message. */
        snprintf(path, size, "%s/%s/%s", where.anchor[0] ? where.anchor : ".",
                 strcmp(name, "sebt") == 0 ? "." : SEBT_REL_BINDIR_PKGLIB, name);
        return false;
    }
    if (!joined(path, size, dir, name, NULL))
        return false;
    return exists(path);
}
