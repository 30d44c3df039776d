/* Atomic output files (core/outfile.c): what every writer of a file uses, so
 * that an interrupted or failed run never leaves a half-written file and
 * never destroys the previous one.
 *
 *     sebt_outfile o;
 *     if (sebt_outfile_open(&o, "results.csv", &err) != SEBT_OK) ...;
 *     fprintf(o.f, ...);                       // write through o.f
 *     if (sebt_outfile_commit(&o, &err) != SEBT_OK) ...;   // or _abort(&o)
 *
 * open creates a temporary file beside the target, in the same folder (so
 * the rename stays on one file system): DIR/.NAME.tmp-PID-N, with the
 * target's permissions when it exists. commit flushes, fsyncs, closes and
 * rename(2)s it over the target; only then does the target change, all at
 * once. abort (and any failed commit) removes the temporary file; the target
 * stays exactly as it was. A target that exists and is not a regular file
 * (/dev/stdout, /dev/null, a FIFO) cannot be replaced: it is written in
 * place, and o.atomic is false. A symbolic link is followed: the file it
 * points to is replaced, the link stays.
 *
 * Signals: the library never installs handlers. A program that wants
 * SIGINT/SIGTERM to leave no temporary file calls
 * sebt_outfile_remove_temps() from its handler (it is async-signal-safe:
 * unlink(2) only) and atexit; the `sebt` command does both (cli/main.c).
 * A SIGKILL cannot be caught: the target is still intact, and a
 * .NAME.tmp-PID-N file may be left beside it. */
#ifndef SEBT_OUTFILE_H
#define SEBT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    FILE *f;        /* write here */
    char *path;     /* the target (after following a symbolic link) */
    char *tmp;      /* the temporary file; NULL when not atomic */
    bool atomic;    /* false: the target is written in place (not a regular file) */
    int slot;       /* internal: the entry sebt_outfile_remove_temps sees, or -1 */
    void *direct;   /* internal: the writer behind f after sebt_outfile_direct, or NULL */
    int write_errno; /* internal: set by sebt_outfile_write_failed */
    bool synced;    /* sebt_outfile_sync ran: f is closed, the temporary file whole */
} sebt_outfile;

/* At most this many atomic files open at once in a process. */
#define SEBT_OUTFILE_MAX_OPEN 64

sebt_status sebt_outfile_open(sebt_outfile *o, const char *path, sebt_error *err);
/* Flushes and publishes the file; on any failure (including an earlier
 * write error on o->f) the temporary file is removed, the target is left as
 * it was, and the error names the path. o is released either way. */
sebt_status sebt_outfile_commit(sebt_outfile *o, sebt_error *err);
/* Tells o that a write to o->f came back short with errnum (errno then):
 * stdio keeps no errno, and once a failed write has emptied its buffer the
 * commit's flush has nothing left to fail on, so without this the commit
 * could say only "write error". The first call counts; the commit names
 * it where its own flush gives no reason. */
void sebt_outfile_write_failed(sebt_outfile *o, int errnum);
/* Writes out, fsyncs and closes o->f, leaving the temporary file whole and
 * unpublished at o->tmp (the target itself where o->atomic is false), so
 * the caller can read back what reached the disk before it decides:
 * sebt_outfile_commit then only renames; sebt_outfile_abort removes it. On
 * failure it is removed and o released, as by a failed commit. */
sebt_status sebt_outfile_sync(sebt_outfile *o, sebt_error *err);
/* Discards what was written; the target is left as it was. */
void sebt_outfile_abort(sebt_outfile *o);
/* For a big file, before anything is written to it: o->f becomes a stream
 * whose bytes reach the disk without the page cache (O_DIRECT, in aligned
 * blocks of 8 MiB; the last block when it closes), so writing gigabytes
 * costs the writer a copy, not the kernel's copy and writeback on every
 * core. The bytes are the same. Returns false (o->f unchanged, buffered as
 * before) where it cannot: not an atomic file, something written already,
 * a file system without direct I/O, no memory for the block. A file system
 * that refuses a direct write later gets buffered writes from there on. */
bool sebt_outfile_direct(sebt_outfile *o);
/* Unlinks every temporary file not yet committed or aborted, and removes
 * every temporary folder (below). Safe in a signal handler. */
void sebt_outfile_remove_temps(void);

/* Atomic output folders: the same promise for a folder of files (the
 * report), so that a reader sees the previous folder whole or the new one
 * whole, never a mix and never a half-written file.
 *
 *     sebt_outdir d;
 *     if (sebt_outdir_open(&d, "report", &err) != SEBT_OK) ...;
 *     ... write every file under d.tmp ...
 *     if (sebt_outdir_commit(&d, &err) != SEBT_OK) ...;   // or _abort(&d)
 *
 * open creates PARENT/.NAME.tmp-PID-N beside the target (same file system;
 * missing parent folders are created). commit puts it in the target's
 * place: a missing target is one rename(2); an existing folder is swapped
 * with it in one renameat2(RENAME_EXCHANGE), then its old contents are
 * removed. Where the file system cannot swap, the old folder is renamed
 * aside, the new one in, then the old one removed (a signal between the
 * two renames puts the old one back). An existing target is replaced
 * whatever it holds: the caller decides whether it may be. A symbolic link
 * is followed. abort, a failed commit and sebt_outfile_remove_temps remove
 * the temporary folder and everything in it; the target is left as it was. */
typedef struct {
    char *path;     /* the target (after following a symbolic link) */
    char *tmp;      /* the temporary folder: write here */
    int slot;       /* internal */
} sebt_outdir;

#define SEBT_OUTDIR_MAX_OPEN 4

sebt_status sebt_outdir_open(sebt_outdir *d, const char *path, sebt_error *err);
sebt_status sebt_outdir_commit(sebt_outdir *d, sebt_error *err);
void sebt_outdir_abort(sebt_outdir *d);

/* No output replaces an input or another output: each path a command reads
 * or writes, by the option that names it, compared before anything is
 * written (core/outpaths.c). Paths that exist are compared by device and
 * inode (links followed, as the writers follow them); a path not there yet
 * by where it will be (its folder resolved). A folder output holds the
 * files whose path below it matches one of its patterns (fnmatch(3) with
 * no flags, so a "*" crosses folders; several joined by "|"), or with no
 * pattern everything under it (it is replaced whole). A path that is NULL,
 * "" or "-" (stdout) is passed over, as is one that exists and is neither
 * a regular file nor a folder (/dev/null, a FIFO: written in place, never
 * replaced). Returns SEBT_ERR_USAGE naming both options and paths at the
 * first collision. */
typedef enum {
    SEBT_PATH_INPUT,        /* a file or folder read */
    SEBT_PATH_OUTPUT,       /* a file written or appended to */
    SEBT_PATH_OUTPUT_DIR,   /* a folder written */
} sebt_path_role;

typedef struct {
    const char *option;     /* "--output", or a positional's name ("SHARD") */
    const char *path;
    sebt_path_role role;
    const char *holds;      /* SEBT_PATH_OUTPUT_DIR: the pattern of the files written in it; NULL: all of it */
} sebt_path_use;

sebt_status sebt_paths_check(const sebt_path_use *uses, size_t n, sebt_error *err);

/* Scratch folders: a private folder for a run's working files (gnuplot's
 * script, log and picture), $TMPDIR/PREFIX-XXXXXX (/tmp without TMPDIR),
 * made by mkdtemp. sebt_scratch_remove removes it and all it holds; so
 * does sebt_outfile_remove_temps, which a signal handler calls, so an
 * interrupted run leaves none. dir receives the folder's path. */
#define SEBT_SCRATCH_MAX_OPEN 4
sebt_status sebt_scratch_open(char *dir, size_t size, const char *prefix, sebt_error *err);
void sebt_scratch_remove(const char *dir);

#ifdef __cplusplus
}
#endif

#endif
