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

/* SEBT_FAULT_SITES=FILE (a run without a fault): the first allocation made
 * at each call site, "N MODULE+0xOFF" a line at exit, so a test can fail
 * each site once, at its first call, rather than allocations picked blindly.
 * An open-addressed table of the sites seen, keyed by return address. */
#define SITE_SLOTS 8192
static void *site_at[SITE_SLOTS];
static long site_first[SITE_SLOTS];
static atomic_flag sites_lock = ATOMIC_FLAG_INIT;
static int record_sites = -1;   /* -1: not read yet */

static void note_site(void *caller, long k)
{
    if (record_sites < 0)
        record_sites = getenv("SEBT_FAULT_SITES") != NULL;
    if (!record_sites)
        return;
    while (atomic_flag_test_and_set(&sites_lock))
        ;
    size_t i = ((size_t)caller >> 2) * 0x9E3779B97F4A7C15u % SITE_SLOTS;
    for (size_t probes = 0; probes < SITE_SLOTS && site_at[i] && site_at[i] != caller; probes++)
        i = (i + 1) % SITE_SLOTS;
    if (!site_at[i]) {
        site_at[i] = caller;
        site_first[i] = k;
    }
    atomic_flag_clear(&sites_lock);
}

/* SEBT_FAULT_SITE=MODULE+0xOFF (as SEBT_FAULT_SITES writes it): the first
 * allocation made at that site fails, whichever number it is (threads may
 * move it by a few from one run to the next). */
static char *site_target;          /* its address in this process; NULL: none */
static atomic_int site_failed;
/* SEBT_FAULT_STICKY=1: every allocation after it fails too, as when memory
 * has run out: a run cannot work around the failure and go on. */
static int site_sticky;

static char *site_address(const char *text)
{
    Dl_info info;
    const char *plus = strrchr(text, '+');
    if (!plus || !dladdr((void *)&n_allocs, &info) || !info.dli_fname)
        return NULL;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (strlen(base) != (size_t)(plus - text) || strncmp(base, text, (size_t)(plus - text)) != 0)
        return NULL;
    return (char *)info.dli_fbase + strtoul(plus + 1, NULL, 16);
}

static int fail_now(void *caller)
{
    long t = atomic_load(&nth);
    if (t < 0) {
        const char *v = getenv("SEBT_FAULT_NTH"), *site = getenv("SEBT_FAULT_SITE");
        site_target = site ? site_address(site) : NULL;
        site_sticky = getenv("SEBT_FAULT_STICKY") != NULL;
        t = v ? atol(v) : 0;
        atomic_store(&nth, t);
    }
    long k = atomic_fetch_add(&n_allocs, 1) + 1;
    note_site(caller, k);
    if ((t > 0 && k == t) || (site_target && caller == site_target && atomic_exchange(&site_failed, 1) == 0) ||
        (site_sticky && atomic_load(&site_failed))) {
        void *none = NULL;
        atomic_compare_exchange_strong(&failed_at, &none, caller);   /* the first failure names the site */
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

/* Where a call was made, as an offset in its module: the same in every
 * run whatever ASLR does. */
static void site_text(void *at, char *buf, size_t size)
{
    Dl_info info;
    if (at && dladdr(at, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(buf, size, "%s+0x%lx", base ? base + 1 : info.dli_fname,
                 (unsigned long)((char *)at - (char *)info.dli_fbase));
    } else {
        snprintf(buf, size, "%s", at ? "?" : "none");
    }
}

static void append_line(const char *path, const char *line, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, line, len);
        (void)w;
        close(fd);
    }
}

__attribute__((destructor)) static void faultsim_report(void)
{
    char line[600], site[512];
    const char *sites = getenv("SEBT_FAULT_SITES");
    for (size_t i = 0; sites && i < SITE_SLOTS; i++)
        if (site_at[i]) {
            site_text(site_at[i], site, sizeof site);
            int len = snprintf(line, sizeof line, "%ld %s\n", site_first[i], site);
            append_line(sites, line, (size_t)len);
        }
    const char *path = getenv("SEBT_FAULT_LOG");
    if (!path)
        return;
    site_text(atomic_load(&failed_at), site, sizeof site);
    int len = snprintf(line, sizeof line, "allocs=%ld failed_site=%s\n", atomic_load(&n_allocs), site);
    append_line(path, line, (size_t)len);
}
