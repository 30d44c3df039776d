/* The series cache: a parsed series kept as its binary arrays, so that a
 * second load of the same file skips inflating and parsing it
 * (docs/big-sweeps.md, "The series cache").
 *
 * An entry is trusted only when everything that could make it differ from
 * a fresh parse is part of its name: the file's bytes (XXH3-128 over all of
 * them, so a copy hits and an edited file misses, whatever its times say),
 * the load options and limit variables, and the build ID of the code that
 * parsed it (so a rebuilt loader never reads an older loader's answer). Its own bytes carry
 * an XXH3-128 checksum: a damaged or cut entry is parsed again and
 * replaced, never used. Without xxhash or a build ID there is no cache:
 * guessing whether an entry is current is what the cache must never do.
 *
 * Layout (host byte order; the header says which): the header below, then
 * ts, open, high, low, close, volume (n values of 8 bytes each), then the
 * checksum of everything before it. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loader_io.h"
#include "series_map.h"
#include "sebt/outfile.h"
#include "sebt/sebt.h"
#include "test_faults.h"

#ifdef SEBT_HAVE_XXHASH
#include <xxhash.h>
#endif

/* Below this many bytes a file parses in about a millisecond: an entry
 * would cost more to keep than it saves. */
#define CACHE_MIN_SOURCE_BYTES ((size_t)256 << 10)
/* The folder keeps this many entries, the least recently used go first. */
#define CACHE_MAX_ENTRIES 16
/* A temporary file older than this was left by a killed process. */
#define CACHE_STALE_TMP_S 3600
#define CACHE_MAX_BARS (UINT64_C(1) << 28)
#define CACHE_VERSION 1
#define CACHE_ORDER UINT64_C(0x0102030405060708)
#define CACHE_SUFFIX ".series"

typedef struct {
    char magic[8];
    uint32_t version;
    uint32_t header_bytes;
    uint64_t byte_order;
    uint8_t key[16];
    uint64_t source_bytes;
    uint64_t n;
    uint64_t n_missing;
    uint64_t n_rejected;
    uint64_t n_gap_filled;
    int64_t interval_ms;
} cache_header;

#ifdef SEBT_HAVE_XXHASH

static const char cache_magic[8] = { 'S', 'E', 'B', 'T', 'S', 'E', 'R', '\0' };

/* ---- the build ID of the code holding the loader -------------------------- */

typedef struct {
    uintptr_t addr; /* an address inside the loader's code */
    uint8_t id[64];
    size_t len;
} build_id_search;

static bool holds(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
            return true;
    }
    return false;
}

/* The GNU build ID note of the object (executable or shared library) whose
 * code holds b->addr. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    build_id_search *b = data;
    if (!holds(info, b->addr))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            const char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc > end || nh->n_descsz > (size_t)(end - desc))
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz > 0 && nh->n_descsz <= sizeof b->id) {
                memcpy(b->id, desc, nh->n_descsz);
                b->len = nh->n_descsz;
                return 1;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 1;
}

static bool loader_build_id(build_id_search *b)
{
    memset(b, 0, sizeof *b);
    b->addr = (uintptr_t)loader_load_bytes;
    dl_iterate_phdr(find_build_id, b);
    return b->len > 0;
}

/* ---- entries -------------------------------------------------------------- */

static const char *const limit_vars[] = { "SEBT_MAX_GAP_FILL", "SEBT_MAX_INFLATE_MB", "SEBT_MAX_STREAM_MB" };

/* An entry's key: what the loader is (its build ID), how it was asked to
 * load (the options and the limit variables), then the file's bytes and
 * their count. */
static XXH3_state_t *key_begin(const build_id_search *b, const sebt_load_opts *opts)
{
    XXH3_state_t *h = XXH3_createState();
    if (!h)
        return NULL;
    uint8_t flags[2] = { opts && opts->lenient, opts && opts->fill_gaps };
    XXH3_128bits_reset(h);
    XXH3_128bits_update(h, "sebt series cache 1", 19);
    XXH3_128bits_update(h, b->id, b->len);
    XXH3_128bits_update(h, flags, sizeof flags);
    /* The loader's limits decide whether a file loads at all (a gzip bomb,
     * a gap that asks for millions of bars): a load under other limits, or
     * under a value the loader refuses, is another load, never a hit. */
    for (size_t i = 0; i < sizeof limit_vars / sizeof limit_vars[0]; i++) {
        const char *v = getenv(limit_vars[i]);
        uint8_t set = v != NULL;
        XXH3_128bits_update(h, &set, 1);
        if (v)
            XXH3_128bits_update(h, v, strlen(v) + 1);
    }
    return h;
}

static void key_end(XXH3_state_t *h, uint64_t len, uint8_t key[16])
{
    XXH3_128bits_update(h, &len, sizeof len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(h));
    XXH3_freeState(h);
    memcpy(key, c.digest, 16);
}

/* The key of the file's bytes as they are now, read through a small
 * buffer: a hit then never holds the whole file (3 MB of fresh pages for
 * the bundled series). False when the file cannot be read or there is no
 * memory (*nomem): the load then goes on without the cache. */
static bool file_key(const build_id_search *b, const sebt_load_opts *opts, const char *path, uint8_t key[16],
                     uint64_t *len, bool *nomem)
{
    enum { CHUNK = 256 << 10 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char *buf = malloc(CHUNK);
    XXH3_state_t *h = buf ? key_begin(b, opts) : NULL;
    uint64_t n = 0;
    bool ok = h != NULL;
    *nomem = !ok;
    for (ssize_t r; ok && (r = read(fd, buf, CHUNK)) != 0;) {
        if (r < 0) {
            ok = errno == EINTR;
            continue;
        }
        XXH3_128bits_update(h, buf, (size_t)r);
        n += (uint64_t)r;
    }
    close(fd);
    free(buf);
    if (!ok) {
        XXH3_freeState(h);
        return false;
    }
    key_end(h, n, key);
    *len = n;
    return true;
}

/* The key of bytes already in memory; false without memory. */
static bool data_key(const build_id_search *b, const sebt_load_opts *opts, const char *data, size_t len,
                     uint8_t key[16])
{
    XXH3_state_t *h = key_begin(b, opts);
    if (!h)
        return false;
    XXH3_128bits_update(h, data, len);
    key_end(h, len, key);
    return true;
}

static char *entry_path(const char *dir, const uint8_t key[16])
{
    size_t dl = strlen(dir);
    char *p = malloc(dl + 1 + 32 + sizeof CACHE_SUFFIX);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    p[dl] = '/';
    for (int i = 0; i < 16; i++)
        sprintf(p + dl + 1 + 2 * i, "%02x", key[i]);
    strcpy(p + dl + 33, CACHE_SUFFIX);
    return p;
}

/* The six arrays in an entry's order, each n values of 8 bytes. */
#define N_ARRAYS 6
static void arrays(const sebt_series *s, void *a[N_ARRAYS])
{
    a[0] = s->ts;
    a[1] = s->open;
    a[2] = s->high;
    a[3] = s->low;
    a[4] = s->close;
    a[5] = s->volume;
}

/* Maps a fresh buffer's pages in one call before it is filled: reading an
 * entry into the series' new arrays otherwise takes a page fault every
 * 4 KiB (1,800 for the bundled 15m series, a few milliseconds of a
 * 10,240-combo sweep). Where the kernel cannot (before Linux 5.14), the
 * faults come as before. */
static void prefault(void *buf, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)buf + page - 1) & ~(page - 1), hi = ((uintptr_t)buf + len) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)buf;
    (void)len;
#endif
}

static bool read_exact(int fd, void *buf, size_t len, off_t at)
{
    prefault(buf, len);
    char *p = buf;
    while (len) {
        ssize_t r = pread(fd, p, len, at);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return false;
        }
        p += r;
        at += r;
        len -= (size_t)r;
    }
    return true;
}

typedef enum { ENTRY_ABSENT, ENTRY_BAD, ENTRY_UNTRUSTED, ENTRY_OK, ENTRY_NOMEM } entry_read;

/* A hit maps the entry instead of reading it into six new arrays: the
 * page cache's pages become the series' (copied only where written to),
 * where reading would first zero and fault in 7.3 MB of fresh memory for
 * the bundled 15m series (0.7 ms instead of 3.7 here). The checksum is
 * still taken over every byte, and the header compared with the one read.
 * ENTRY_ABSENT when it cannot map: the caller reads instead. sebt writes
 * an entry whole and renames it into place, never in place, so the mapped
 * bytes are those checked (docs/decisions.md, "The series cache"). */
static entry_read map_entry(int fd, const cache_header *h, size_t file_bytes, sebt_series *out)
{
    void *base = mmap(NULL, file_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED)
        return ENTRY_ABSENT;
#ifdef MADV_POPULATE_READ
    /* One call maps every page now (Linux 5.14 and later), not a fault
     * each 4 KiB as the arrays are first read. EINVAL: an older kernel. */
    if (madvise(base, file_bytes, MADV_POPULATE_READ) != 0 && errno != EINVAL) {
        munmap(base, file_bytes);
        return ENTRY_ABSENT;
    }
#endif
    /* Registered before the checksum, so that a full table costs no hash
     * and a bad entry is unmapped by sebt_series_free like any other. */
    const unsigned char *b = base;
    if (!series_map_register(b + sizeof *h, base, file_bytes)) {
        munmap(base, file_bytes);
        return ENTRY_ABSENT;
    }
    double *col = (double *)(void *)(b + sizeof *h + (size_t)h->n * 8);
    memset(out, 0, sizeof *out);
    out->n = (size_t)h->n;
    out->ts = (int64_t *)(void *)(b + sizeof *h);
    out->open = col;
    out->high = col + h->n;
    out->low = col + 2 * h->n;
    out->close = col + 3 * h->n;
    out->volume = col + (SEBT_FAULT("cached_volume_from_close") ? 3 : 4) * h->n;
    size_t body = file_bytes - 16;
    XXH128_canonical_t got;
    XXH128_canonicalFromHash(&got, XXH3_128bits(b, body));
    if (memcmp(b, h, sizeof *h) != 0 || memcmp(b + body, &got, sizeof got) != 0) {
        sebt_series_free(out);
        return ENTRY_BAD;
    }
    return ENTRY_OK;
}

/* Reads the entry into six new arrays: where it cannot be mapped. */
static entry_read copy_entry(int fd, const cache_header *h, sebt_series *out)
{
    if (sebt_series_alloc(out, (size_t)h->n, NULL) != SEBT_OK)
        return ENTRY_NOMEM;
    XXH3_state_t *x = XXH3_createState();
    if (!x) {
        sebt_series_free(out);
        return ENTRY_NOMEM;
    }
    XXH3_128bits_reset(x);
    XXH3_128bits_update(x, h, sizeof *h);
    size_t bytes = (size_t)h->n * 8;
    off_t at = sizeof *h;
    void *a[N_ARRAYS];
    arrays(out, a);
    bool ok = true;
    for (int c = 0; ok && c < N_ARRAYS; c++, at += (off_t)bytes) {
        ok = read_exact(fd, a[c], bytes, at);
        XXH3_128bits_update(x, a[c], bytes);
    }
    XXH128_canonical_t want, got;
    ok = ok && read_exact(fd, &want, sizeof want, at);
    XXH128_canonicalFromHash(&got, XXH3_128bits_digest(x));
    XXH3_freeState(x);
    if (!ok || memcmp(&want, &got, sizeof got) != 0) {
        sebt_series_free(out);
        return ENTRY_BAD;
    }
    return ENTRY_OK;
}

/* Opens the entry only if it is a regular file of this user: a FIFO would
 * block open() and every later load, a device or a link reads what it
 * names, and in a shared folder another user's file is not ours to trust
 * (its checksum proves it whole, not who wrote it). O_NONBLOCK lets a FIFO
 * open without a writer, to be refused by fstat. -1 with *r set
 * otherwise. */
static int open_entry(const char *path, struct stat *st, entry_read *r)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        *r = errno == ENOENT || errno == ENOTDIR ? ENTRY_ABSENT : errno == ELOOP ? ENTRY_UNTRUSTED : ENTRY_BAD;
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, st) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        *r = ENTRY_BAD;
    } else if (!S_ISREG(st->st_mode) || st->st_uid != geteuid()) {
        *r = ENTRY_UNTRUSTED;
    } else {
        return fd;
    }
    close(fd);
    return -1;
}

/* Reads the entry for key; ENTRY_BAD for anything that is not exactly what
 * a store would have written for it, ENTRY_UNTRUSTED for what open_entry
 * refuses. */
static entry_read read_entry(const char *path, const uint8_t key[16], uint64_t source_bytes, sebt_series *out)
{
    struct stat st;
    entry_read r;
    int fd = open_entry(path, &st, &r);
    if (fd < 0)
        return r;
    cache_header h;
    r = ENTRY_BAD;
    if (!read_exact(fd, &h, sizeof h, 0))
        goto done;
    if (memcmp(h.magic, cache_magic, sizeof cache_magic) != 0 || h.version != CACHE_VERSION ||
        h.header_bytes != sizeof h || h.byte_order != CACHE_ORDER || memcmp(h.key, key, 16) != 0 ||
        h.source_bytes != source_bytes || h.n > CACHE_MAX_BARS || h.n_missing > h.n ||
        h.n_rejected > h.n || h.n_gap_filled > h.n ||
        (uint64_t)st.st_size != sizeof h + N_ARRAYS * 8 * h.n + 16)
        goto done;
    r = map_entry(fd, &h, (size_t)st.st_size, out);
    if (r == ENTRY_ABSENT)
        r = copy_entry(fd, &h, out);
    if (r != ENTRY_OK)
        goto done;
    out->n_missing = (size_t)h.n_missing;
    out->n_rejected = (size_t)h.n_rejected;
    out->n_gap_filled = (size_t)h.n_gap_filled;
    out->interval_ms = h.interval_ms;
    /* Used now: the last to be pruned. */
    futimens(fd, NULL);
done:
    close(fd);
    return r;
}

static bool make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return false;
    bool ok = true;
    for (char *s = p + 1; ok; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        ok = mkdir(p, 0700) == 0 || errno == EEXIST;
        *s = c;
        if (!c)
            break;
    }
    free(p);
    struct stat st;
    return ok && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct {
    char name[40];
    struct timespec used;
} cache_entry;

static int newest_first(const void *a, const void *b)
{
    const struct timespec *x = &((const cache_entry *)a)->used, *y = &((const cache_entry *)b)->used;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? 1 : -1;
    return x->tv_nsec < y->tv_nsec ? 1 : x->tv_nsec > y->tv_nsec ? -1 : 0;
}

/* Keeps the CACHE_MAX_ENTRIES most recently used entries and removes what
 * a killed store left behind. The folder is pruned at every store, so it
 * never holds many more; past CACHE_PRUNE_SCAN names the rest wait for the
 * next store. */
#define CACHE_PRUNE_SCAN 256
static void prune(const char *dir)
{
    DIR *d = opendir(dir);
    cache_entry *seen = d ? malloc(CACHE_PRUNE_SCAN * sizeof *seen) : NULL;
    if (!seen) {
        if (d)
            closedir(d);
        return;
    }
    size_t n = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while (n < CACHE_PRUNE_SCAN && (e = readdir(d))) {
        struct stat st;
        size_t nl = strlen(e->d_name);
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp-")) {
            if (now - st.st_mtime > CACHE_STALE_TMP_S)
                unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        if (nl != 32 + strlen(CACHE_SUFFIX) || strcmp(e->d_name + 32, CACHE_SUFFIX) != 0)
            continue;
        memcpy(seen[n].name, e->d_name, nl + 1);
        seen[n++].used = st.st_mtim;
    }
    qsort(seen, n, sizeof *seen, newest_first);
    for (size_t i = CACHE_MAX_ENTRIES; i < n; i++)
        unlinkat(dirfd(d), seen[i].name, 0);
    free(seen);
    closedir(d);
}

static bool store_entry(const char *dir, const char *path, const uint8_t key[16], uint64_t source_bytes,
                        const sebt_series *s)
{
    if (!make_dirs(dir))
        return false;
    /* sebt_outfile replaces what a link points to; an entry is never a
     * link, and a planted one must not aim the store at another file. */
    struct stat lst;
    if (lstat(path, &lst) == 0 && !S_ISREG(lst.st_mode) && unlink(path) != 0)
        return false;
    cache_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, cache_magic, sizeof h.magic);
    h.version = CACHE_VERSION;
    h.header_bytes = sizeof h;
    h.byte_order = CACHE_ORDER;
    memcpy(h.key, key, 16);
    h.source_bytes = source_bytes;
    h.n = s->n;
    h.n_missing = s->n_missing;
    h.n_rejected = s->n_rejected;
    h.n_gap_filled = s->n_gap_filled;
    h.interval_ms = s->interval_ms;
    XXH3_state_t *x = XXH3_createState();
    if (!x)
        return false;
    sebt_outfile o;
    if (sebt_outfile_open(&o, path, NULL) != SEBT_OK) {
        XXH3_freeState(x);
        return false;
    }
    XXH3_128bits_reset(x);
    XXH3_128bits_update(x, &h, sizeof h);
    bool ok = fwrite(&h, sizeof h, 1, o.f) == 1;
    size_t bytes = s->n * 8;
    void *a[N_ARRAYS];
    arrays(s, a);
    for (int c = 0; c < N_ARRAYS; c++) {
        ok = ok && fwrite(a[c], 1, bytes, o.f) == bytes;
        XXH3_128bits_update(x, a[c], bytes);
    }
    XXH128_canonical_t sum;
    XXH128_canonicalFromHash(&sum, XXH3_128bits_digest(x));
    XXH3_freeState(x);
    ok = ok && fwrite(&sum, sizeof sum, 1, o.f) == 1;
    if (!ok || !o.atomic) {
        sebt_outfile_abort(&o);
        return false;
    }
    if (sebt_outfile_commit(&o, NULL) != SEBT_OK)
        return false;
    prune(dir);
    return true;
}

#endif /* SEBT_HAVE_XXHASH */

bool sebt_series_cache_available(void)
{
#ifdef SEBT_HAVE_XXHASH
    build_id_search b;
    return loader_build_id(&b);
#else
    return false;
#endif
}

sebt_status sebt_load_csv_cached(const char *path, const sebt_load_opts *opts, const char *cache_dir,
                                 sebt_series *out, sebt_cache_use *use, sebt_error *err)
{
    sebt_cache_use dummy;
    if (!use)
        use = &dummy;
    *use = SEBT_CACHE_OFF;
    if (!path || !out)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_load_csv_cached: no path or no series to fill");
    memset(out, 0, sizeof *out);
#ifdef SEBT_HAVE_XXHASH
    build_id_search b;
    struct stat st;
    /* Pipes, devices and what cannot be read load as without a cache, with
     * sebt_load_csv's messages; so do files too small to keep. */
    if (!cache_dir || !cache_dir[0] || !loader_build_id(&b) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return sebt_load_csv(path, opts, out, err);
    if ((uint64_t)st.st_size < CACHE_MIN_SOURCE_BYTES) {
        *use = SEBT_CACHE_SMALL;
        return sebt_load_csv(path, opts, out, err);
    }
    uint8_t key[16];
    uint64_t len;
    char *entry = NULL;
    bool nomem = false;
    bool keyed = file_key(&b, opts, path, key, &len, &nomem);
    if (!keyed || !(entry = entry_path(cache_dir, key))) {
        /* Without the entry's name the file is parsed: the load can still
         * work, and a checker of the cache learns why it was not used. */
        if (nomem || keyed)
            *use = SEBT_CACHE_NO_MEMORY;
        return sebt_load_csv(path, opts, out, err);
    }
    entry_read r = read_entry(entry, key, len, out);
    if (r == ENTRY_OK) {
        *use = SEBT_CACHE_HIT;
        free(entry);
        return SEBT_OK;
    }
    if (r == ENTRY_NOMEM) {
        free(entry);
        return sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory reading its cached series", path);
    }
    char *data = NULL;
    size_t got = 0;
    sebt_status rs = sebt_read_file(path, &data, &got, err);
    if (rs) {
        free(entry);
        return rs;
    }
    /* The file may have changed since it was hashed: an entry is kept only
     * under the key of the bytes that were parsed. */
    uint8_t parsed_key[16];
    bool same = data_key(&b, opts, data, got, parsed_key) && memcmp(parsed_key, key, 16) == 0;
    rs = loader_load_bytes(path, data, got, opts, out, err);
    free(data);
    if (rs == SEBT_OK) {
        bool stored = same && store_entry(cache_dir, entry, key, got, out);
        *use = r == ENTRY_BAD         ? (stored ? SEBT_CACHE_REPLACED : SEBT_CACHE_BAD_NOT_STORED)
               : r == ENTRY_UNTRUSTED ? (stored ? SEBT_CACHE_UNTRUSTED_REPLACED : SEBT_CACHE_UNTRUSTED_NOT_STORED)
                                      : (stored ? SEBT_CACHE_STORED : SEBT_CACHE_NOT_STORED);
    }
    free(entry);
    return rs;
#else
    (void)cache_dir;
    return sebt_load_csv(path, opts, out, err);
#endif
}
