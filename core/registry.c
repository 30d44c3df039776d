#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/sebt.h"

/* The cuda backend lives in libsebt_cuda.so, opened only when asked for by
 * name: a process that stays on the CPU never maps libcuda or libcudart. */
static const char *const backend_names[] = { "reference", "fast_cpu", "cuda" };
#define N_BACKENDS (sizeof backend_names / sizeof backend_names[0])

size_t sebt_backend_count(void) { return N_BACKENDS; }

const char *sebt_backend_name_at(size_t i) { return i < N_BACKENDS ? backend_names[i] : NULL; }

static const sebt_backend *cuda_backend;

static sebt_status open_cuda(const sebt_backend **out, sebt_error *err)
{
    if (cuda_backend) {
        *out = cuda_backend;
        return SEBT_OK;
    }
    const char *path = getenv("SEBT_CUDA_LIBRARY");
    char buf[4096];
    if (!path || !*path) {
        snprintf(buf, sizeof buf, "%s/%s", SEBT_CUDA_MODULE_DIR, SEBT_CUDA_MODULE_NAME);
        path = buf;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE,
                         "the cuda backend is not available: cannot open %s (%s); "
                         "build with a CUDA compiler or set SEBT_CUDA_LIBRARY", path, dlerror());
    sebt_cuda_open_fn open_fn;
    void *sym = dlsym(handle, SEBT_CUDA_OPEN_SYMBOL);
    memcpy(&open_fn, &sym, sizeof open_fn); /* ISO C forbids casting void* to a function pointer */
    if (!open_fn) {
        dlclose(handle);
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s has no symbol %s", path, SEBT_CUDA_OPEN_SYMBOL);
    }
    const sebt_backend *b = open_fn(err);
    if (!b)
        return err ? err->code : SEBT_ERR_NODEVICE;
    cuda_backend = b;
    *out = b;
    return SEBT_OK;
}

sebt_status sebt_backend_get(const char *name, const sebt_backend **out, sebt_error *err)
{
    *out = NULL;
    if (strcmp(name, "reference") == 0) {
        *out = &sebt_reference_backend;
        return SEBT_OK;
    }
    if (strcmp(name, "fast_cpu") == 0) {
        *out = &sebt_fast_cpu_backend;
        return SEBT_OK;
    }
    if (strcmp(name, "cuda") == 0)
        return open_cuda(out, err);
    return sebt_fail(err, SEBT_ERR_USAGE, "unknown backend '%s' (valid: reference, fast_cpu, cuda)", name);
}
