#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/gpu.h"
#include "sebt/sebt.h"

/* The cuda backend lives in libsebt_cuda.so, opened only when asked for by
 * name: a process that stays on the CPU never maps libcuda or libcudart. */
static const char *const backend_names[] = { "reference", "fast_cpu", "cuda" };
#define N_BACKENDS (sizeof backend_names / sizeof backend_names[0])

size_t sebt_backend_count(void) { return N_BACKENDS; }

const char *sebt_backend_name_at(size_t i) { return i < N_BACKENDS ? backend_names[i] : NULL; }

static void *cuda_module;
static const sebt_backend *cuda_backend;

/* dlopen once and keep the handle for the life of the process: the CUDA
 * runtime inside does not survive being unloaded and loaded again. */
static sebt_status open_cuda_module(sebt_error *err)
{
    if (cuda_module)
        return SEBT_OK;
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
    cuda_module = handle;
    return SEBT_OK;
}

/* ISO C forbids casting void* to a function pointer; memcpy is the portable way. */
static void *cuda_symbol(const char *name)
{
    return dlsym(cuda_module, name);
}

static sebt_status open_cuda(const sebt_backend **out, sebt_error *err)
{
    if (cuda_backend) {
        *out = cuda_backend;
        return SEBT_OK;
    }
    sebt_status st = open_cuda_module(err);
    if (st != SEBT_OK)
        return st;
    sebt_cuda_open_fn open_fn;
    void *sym = cuda_symbol(SEBT_CUDA_OPEN_SYMBOL);
    memcpy(&open_fn, &sym, sizeof open_fn);
    if (!open_fn)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "the cuda module has no symbol %s",
                         SEBT_CUDA_OPEN_SYMBOL);
    const sebt_backend *b = open_fn(err);
    if (!b)
        return err ? err->code : SEBT_ERR_NODEVICE;
    cuda_backend = b;
    *out = b;
    return SEBT_OK;
}

sebt_status sebt_gpu_query(sebt_gpu_info *info, sebt_error *err)
{
    memset(info, 0, sizeof *info);
    info->selected = -1;
    sebt_status st = open_cuda_module(err);
    if (st != SEBT_OK)
        return st;
    sebt_cuda_devices_fn devices_fn;
    void *sym = cuda_symbol(SEBT_CUDA_DEVICES_SYMBOL);
    memcpy(&devices_fn, &sym, sizeof devices_fn);
    if (!devices_fn)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "the cuda module has no symbol %s",
                         SEBT_CUDA_DEVICES_SYMBOL);
    return devices_fn(info, err);
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
