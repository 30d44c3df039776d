/* A FILE* that hashes what passes through it (FNV-1a 64, as
 * sebt_fnv1a) and writes it on to another stream: the shard checksum is
 * computed from the exact bytes written, whether the rows go to a file or
 * stdout, all at once or streamed. */
#define _GNU_SOURCE   /* fopencookie */
#include <stdio.h>

#include "sweep.h"

static ssize_t hw_write(void *cookie, const char *buf, size_t size)
{
    hash_writer *w = cookie;
    size_t put = fwrite(buf, 1, size, w->under);
    w->h = sebt_fnv1a(w->h, buf, put);
    return put == size ? (ssize_t)size : -1;
}

bool hash_writer_open(hash_writer *w, FILE *under)
{
    w->under = under;
    w->h = sebt_fnv1a(0, "", 0);
    cookie_io_functions_t io = { .read = NULL, .write = hw_write, .seek = NULL, .close = NULL };
    w->f = fopencookie(w, "w", io);
    return w->f != NULL;
}

bool hash_writer_close(hash_writer *w, uint64_t *hash)
{
    bool ok = !ferror(w->f);
    ok = fclose(w->f) == 0 && ok;
    w->f = NULL;
    *hash = w->h;
    return ok;
}
