/* Allocation fault injection for the whole of sebt (core, backends,
 * oracle, CLI): linked into the test-only binary sebt_faultsim with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup, so every
 * allocation our own code makes goes through here (libc's and libgomp's
 * internal ones do not). SQLite's faultsim practice: the Nth allocation
 * fails (SEBT_FAULT_NTH=N, counted from 1 over the whole process), the run
 * must end cleanly (cli/tests/faultsim_test.sh).
 *
 * SEBT_FAULT_LOG=FILE receives, at exit, "allocs=T failed_site=MODULE+0xOFF"
 * (T: allocations made; the site: where the failed call was made, as an
 * offset in its module, so it is the same in every run whatever ASLR does). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../core/tests/alloc_wrap.h"

static atomic_long n_allocs;
static atomic_long nth = -1;          /* -1: not read yet */
static void *_Atomic failed_at;

static int fail_now(void *caller)
{
    long t = atomic_load(&nth);
    if (t < 0) {
        const char *v = getenv("SEBT_FAULT_NTH");
        t = v ? atol(v) : 0;
        atomic_store(&nth, t);
    }
    long k = atomic_fetch_add(&n_allocs, 1) + 1;
    if (t > 0 && k == t) {
        atomic_store(&failed_at, caller);
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __real_strdup(s);
}

__attribute__((destructor)) static void faultsim_report(void)
{
    const char *path = getenv("SEBT_FAULT_LOG");
    if (!path)
        return;
    char line[600];
    void *at = atomic_load(&failed_at);
    Dl_info info;
    int len;
    if (at && dladdr(at, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        len = snprintf(line, sizeof line, "allocs=%ld failed_site=%s+0x%lx\n", atomic_load(&n_allocs),
                       base ? base + 1 : info.dli_fname,
                       (unsigned long)((char *)at - (char *)info.dli_fbase));
    } else {
        len = snprintf(line, sizeof line, "allocs=%ld failed_site=%s\n", atomic_load(&n_allocs), at ? "?" : "none");
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, line, (size_t)len);
        (void)w;
        close(fd);
    }
}
