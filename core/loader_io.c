/* Bytes for the loader: a whole file into memory, and gzip inflated with
 * zlib (when built with it; libdeflate first where it is found). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef SEBT_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef SEBT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#include <stdbool.h>
#endif

#include "limits.h"
#include "loader_io.h"

sebt_status sebt_open_input(const char *path, bool stream_ok, FILE **out, sebt_error *err)
{
    *out = NULL;
    /* Where a FIFO is refused, O_NONBLOCK opens it without a writer, so
     * that fstat can refuse it instead of open() blocking for ever; where
     * it is read, open() waits for its writer, as a reader of a pipe should. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (stream_ok ? 0 : O_NONBLOCK));
    if (fd < 0)
        return sebt_fail(err, SEBT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return sebt_fail(err, SEBT_ERR_IO, "%s: cannot read: %s", path, strerror(e));
    }
    /* A device (/dev/zero, /dev/urandom, a disk) never ends or is not a
     * file of ours; a socket is not a file either. */
    const char *what = S_ISCHR(st.st_mode) ? "a character device" : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket" : S_ISDIR(st.st_mode) ? "a folder"
                       : S_ISFIFO(st.st_mode) && !stream_ok ? "a FIFO or pipe" : NULL;
    if (what) {
        close(fd);
        if (S_ISFIFO(st.st_mode))
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: not a regular file (%s); this input is read as a file, not "
                             "a stream: save it to a file first", path, what);
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: not a regular file (%s); sebt reads its inputs from files%s",
                         path, what, stream_ok ? " or pipes" : "");
    }
    *out = fdopen(fd, "rb");
    if (!*out) {
        int e = errno;
        close(fd);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: cannot open: %s", path, strerror(e));
    }
    return SEBT_OK;
}

sebt_status sebt_read_file(const char *path, char **data, size_t *len, sebt_error *err)
{
    FILE *f;
    sebt_status ost = sebt_open_input(path, true, &f, err);
    if (ost != SEBT_OK)
        return ost;
    /* One read of the right size for a regular file; pipes grow as they go,
     * up to a bound. */
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        memset(&st, 0, sizeof st);
    bool regular = S_ISREG(st.st_mode);
    size_t stream_mb = 0;
    sebt_status lst = sebt_env_limit("SEBT_MAX_STREAM_MB", SEBT_MAX_STREAM_MB_DEFAULT, &stream_mb, NULL, err);
    if (lst != SEBT_OK) {
        fclose(f);
        return lst;
    }
    size_t cap = regular && st.st_size > 0 ? (size_t)st.st_size + 1 : (size_t)1 << 20;
    size_t used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, cap);
        }
        used += fread(buf + used, 1, cap - used, f);
        if (used < cap)
            break;
        if (!regular && used / ((size_t)1 << 20) >= stream_mb) {
            free(buf);
            fclose(f);
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: not a regular file, and more than %zu MiB came out of it "
                             "(set SEBT_MAX_STREAM_MB=N to allow more)", path, stream_mb);
        }
        char *bigger = realloc(buf, cap * 2);
        if (!bigger)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return sebt_fail(err, SEBT_ERR_IO, "%s: cannot read: %s", path, strerror(e));
    }
    fclose(f);
    buf[used] = '\0';
    *data = buf;
    *len = used;
    return SEBT_OK;
}

bool loader_is_gzip(const char *data, size_t len)
{
    return len >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
}

#ifdef SEBT_HAVE_ZLIB
#ifdef SEBT_HAVE_LIBDEFLATE
/* One gzip member inflated whole by libdeflate, about twice as fast as
 * zlib's stream (docs/big-sweeps.md, "gzip"): the trailer's size (ISIZE,
 * modulo 2^32) sizes the buffer. Anything it does not take whole (several
 * members, 4 GiB or more, past the limit, damaged, out of memory) returns
 * false and goes through zlib, which says what is wrong. */
static bool gunzip_whole(const char *in, size_t in_len, size_t limit, char **out, size_t *out_len)
{
    if (in_len < 18)
        return false;
    const unsigned char *t = (const unsigned char *)in + in_len - 4;
    size_t want = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
    if (want > limit)
        return false;
    char *buf = malloc(want ? want : 1);
    struct libdeflate_decompressor *d = buf ? libdeflate_alloc_decompressor() : NULL;
    size_t used_in = 0, got = 0;
    bool ok = d && libdeflate_gzip_decompress_ex(d, in, in_len, buf, want, &used_in, &got) == LIBDEFLATE_SUCCESS &&
              used_in == in_len && got == want;
    if (d)
        libdeflate_free_decompressor(d);
    if (!ok) {
        free(buf);
        return false;
    }
    *out = buf;
    *out_len = got;
    return true;
}
#endif

sebt_status loader_gunzip(const char *name, const char *in, size_t in_len, size_t limit, char **out,
                          size_t *out_len, sebt_error *err)
{
#ifdef SEBT_HAVE_LIBDEFLATE
    if (gunzip_whole(in, in_len, limit, out, out_len))
        return SEBT_OK;
#endif
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: cannot start zlib", name);
    size_t cap = in_len < ((size_t)1 << 40) ? in_len * 4 + 4096 : in_len, used = 0, in_left = in_len;
    /* Never more than limit + 1 bytes: one past the limit proves it is passed. */
    if (limit < SIZE_MAX && cap > limit + 1)
        cap = limit + 1;
    *out_len = 0;
    char *buf = malloc(cap);
    sebt_status st = SEBT_OK;
    if (!buf) {
        st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory inflating", name);
        goto done;
    }
    zs.next_in = (Bytef *)(uintptr_t)in;
    for (;;) {
        if (zs.avail_in == 0 && in_left > 0) {
            zs.avail_in = in_left < UINT32_MAX ? (uInt)in_left : UINT32_MAX;
            in_left -= zs.avail_in;
        }
        if (used == cap) {
            if (used > limit) {
                *out_len = used;
                st = sebt_fail(err, SEBT_ERR_INPUT, "%s: the gzip data inflates past %zu bytes", name, limit);
                goto done;
            }
            size_t grown = cap * 2;
            if (limit < SIZE_MAX && grown > limit + 1)
                grown = limit + 1;
            char *bigger = realloc(buf, grown);
            if (!bigger) {
                st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory inflating past %zu bytes", name, cap);
                goto done;
            }
            buf = bigger;
            cap = grown;
        }
        size_t room = cap - used < UINT32_MAX ? cap - used : UINT32_MAX;
        zs.next_out = (Bytef *)buf + used;
        zs.avail_out = (uInt)room;
        int rc = inflate(&zs, Z_NO_FLUSH);
        used += room - zs.avail_out;
        if (rc == Z_STREAM_END) {
            if (zs.avail_in == 0 && in_left == 0)
                break;
            /* gzip allows several members back to back (cat a.gz b.gz). */
            if (inflateReset(&zs) != Z_OK) {
                st = sebt_fail(err, SEBT_ERR_INPUT, "%s: bad gzip data after byte %lu", name, zs.total_in);
                goto done;
            }
            continue;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s: not valid gzip data: %s", name,
                           zs.msg ? zs.msg : "inflate failed");
            goto done;
        }
        if (zs.avail_in == 0 && in_left == 0 && zs.avail_out > 0) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s: the gzip data ends early (truncated file?)", name);
            goto done;
        }
    }
    if (used > limit) {
        *out_len = used;
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: the gzip data inflates past %zu bytes", name, limit);
    }
done:
    inflateEnd(&zs);
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_len = used;
    return SEBT_OK;
}
#endif

