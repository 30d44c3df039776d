#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sebt/backends.h"
#include "sebt/gpu.h"
#include "sebt/plugin.h"
#include "sebt/sebt.h"

/* sebt_params and sebt_features are part of the plugin ABI: a field or a
 * column more changes their layout, so it is a new SEBT_PLUGIN_ABI_VERSION
 * (plugin.h says what each version holds). */
_Static_assert(SEBT_PLUGIN_ABI_VERSION == 2 && SEBT_N_PARAMS == 18 && SEBT_N_FEATURES == 8,
               "sebt_params or sebt_features changed: bump SEBT_PLUGIN_ABI_VERSION, then this");
#include "kernel_process.h"

/* The cuda backend lives in libsebt_cuda.so, opened only when asked for by
 * name: a process that stays on the CPU never maps libcuda or libcudart. */
static const char *const backend_names[] = { "reference", "fast_cpu", "cuda" };
#define N_BACKENDS (sizeof backend_names / sizeof backend_names[0])

size_t sebt_backend_count(void) { return N_BACKENDS; }

const char *sebt_backend_name_at(size_t i) { return i < N_BACKENDS ? backend_names[i] : NULL; }

static void *cuda_module;
static const sebt_backend *cuda_backend;
static sebt_tally_batch_fn cuda_tallied;

/* dlopen once and keep the handle for the life of the process: the CUDA
 * runtime inside does not survive being unloaded and loaded again. */
static sebt_status open_cuda_module(sebt_error *err)
{
    if (cuda_module)
        return SEBT_OK;
    const char *path = getenv("SEBT_CUDA_LIBRARY");
    char buf[4096];
    if (!path || !*path) {
        /* PREFIX/lib/sebt beside an installed sebt or libsebt.so, or the
         * top of the build folder (core/paths.c). */
        sebt_part_path(SEBT_CUDA_MODULE_NAME, buf, sizeof buf);
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

/* The cuda module's function name into *fn (a function pointer of size
 * bytes), or an error: a module without it is not one this build made. */
static sebt_status cuda_function(const char *name, void *fn, size_t size, sebt_error *err)
{
    void *sym = cuda_symbol(name);
    memcpy(fn, &sym, size);
    if (!sym)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "the cuda module has no symbol %s", name);
    return SEBT_OK;
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
    if ((st = cuda_function(SEBT_CUDA_OPEN_SYMBOL, &open_fn, sizeof open_fn, err)) != SEBT_OK)
        return st;
    const sebt_backend *b = open_fn(err);
    if (!b)
        return err ? err->code : SEBT_ERR_NODEVICE;
    void *sym = cuda_symbol(SEBT_CUDA_TALLIED_SYMBOL);
    memcpy(&cuda_tallied, &sym, sizeof cuda_tallied);
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
    if ((st = cuda_function(SEBT_CUDA_DEVICES_SYMBOL, &devices_fn, sizeof devices_fn, err)) != SEBT_OK)
        return st;
    return devices_fn(info, err);
}

/* ---- plugins ------------------------------------------------------------ */

/* Plugins stay loaded for the life of the process, like the cuda module:
 * their tables are handed out as plain pointers, and a plugin that wraps a
 * CUDA runtime would not survive being unloaded either. */
#define MAX_PLUGINS 16
static struct {
    char path[PATH_MAX];
    const sebt_backend *backend;
} plugins[MAX_PLUGINS];
static size_t n_plugins;

bool sebt_backend_is_kernel(const char *value)
{
    return value && strncmp(value, SEBT_KERNEL_PREFIX, strlen(SEBT_KERNEL_PREFIX)) == 0;
}

bool sebt_backend_is_path(const char *value)
{
    if (!value || sebt_backend_is_kernel(value))
        return false;
    size_t n = strlen(value);
    return strchr(value, '/') != NULL || (n > 3 && strcmp(value + n - 3, ".so") == 0);
}

const char *sebt_backend_selector(const sebt_backend *b)
{
    const char *k = kernel_selector(b);
    if (k)
        return k;
    for (size_t i = 0; i < n_plugins; i++)
        if (plugins[i].backend == b)
            return plugins[i].path;
    return b && b->name ? b->name : "";
}

/* What backend.h promises callers about a table; a plugin that breaks it
 * would crash sebt later, far from the cause. */
static sebt_status check_table(const char *path, const sebt_backend *b, sebt_error *err)
{
    if (!b->name || !b->name[0])
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: its backend table has no name", path);
    if (!b->features || !b->run_batch)
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: backend '%s' has a null %s function", path,
                         b->name, !b->features ? "features" : "run_batch");
    if (b->contract.kind == SEBT_CONTRACT_EXACT) {
        if (b->contract.tol != 0)
            return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: backend '%s' declares an exact contract "
                             "with tol %g (exact means tol 0)", path, b->name, b->contract.tol);
    } else if (b->contract.kind == SEBT_CONTRACT_TOLERANT) {
        if (!(b->contract.tol > 0 && b->contract.tol < 1))
            return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: backend '%s' declares a tolerant contract "
                             "with tol %g (expected 0 < tol < 1)", path, b->name, b->contract.tol);
    } else {
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: backend '%s' declares an unknown contract kind %d",
                         path, b->name, (int)b->contract.kind);
    }
    return SEBT_OK;
}

sebt_status sebt_plugin_open(const char *value, const sebt_backend **out, sebt_error *err)
{
    *out = NULL;
    /* "libmine.so" means the file here, not a search of the loader's path:
     * that is what a person typing it expects, and what a replay needs. */
    char given[PATH_MAX + 2];
    snprintf(given, sizeof given, "%s%s", strchr(value, '/') ? "" : "./", value);
    char path[PATH_MAX];
    struct stat st;
    if (stat(given, &st) != 0 || !realpath(given, path))
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: no such file (a --backend value with '/' or "
                         "ending in .so is the path of a plugin)", value);
    if (!S_ISREG(st.st_mode))
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: not a regular file", value);
    for (size_t i = 0; i < n_plugins; i++)
        if (strcmp(plugins[i].path, path) == 0) {
            *out = plugins[i].backend;
            return SEBT_OK;
        }
    if (n_plugins == MAX_PLUGINS)
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: more than %d plugins in one process", path,
                         MAX_PLUGINS);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: cannot load it: %s", path, dlerror());
    void *sym = dlsym(handle, SEBT_PLUGIN_SYMBOL);
    if (!sym)
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s: it does not export %s(), the entry point of a "
                         "sebt plugin (include/sebt/plugin.h)", path, SEBT_PLUGIN_SYMBOL);
    /* The version it was built for, when it says: a plugin of another one
     * is not called at all (it would read sebt_params of another layout). */
    const int *abi = dlsym(handle, SEBT_PLUGIN_ABI_SYMBOL);
    if (abi && *abi != SEBT_PLUGIN_ABI_VERSION)
        return sebt_fail(err, SEBT_ERR_USAGE, "plugin %s refused to load: plugin ABI mismatch: the plugin was built "
                         "for sebt plugin ABI %d, this sebt speaks ABI %d; rebuild the plugin against this sebt's "
                         "headers", path, *abi, SEBT_PLUGIN_ABI_VERSION);
    sebt_backend_plugin_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    sebt_error perr = { 0 };
    const sebt_backend *b = entry(SEBT_PLUGIN_ABI_VERSION, &perr);
    if (!b) {
        sebt_status code = perr.code == SEBT_OK ? SEBT_ERR_USAGE : perr.code;
        return sebt_fail(err, code, "plugin %s refused to load: %s", path,
                         perr.msg[0] ? perr.msg : "it returned no backend and no reason");
    }
    sebt_status rc = check_table(path, b, err);
    if (rc != SEBT_OK)
        return rc;
    snprintf(plugins[n_plugins].path, sizeof plugins[n_plugins].path, "%s", path);
    plugins[n_plugins].backend = b;
    n_plugins++;
    *out = b;
    return SEBT_OK;
}

/* Wrappers given a tallied batch (sebt_backend_set_tally_batch). */
#define MAX_TALLY_WRAPPERS 4
static struct {
    const sebt_backend *backend;
    sebt_tally_batch_fn fn;
} tally_wrappers[MAX_TALLY_WRAPPERS];

sebt_status sebt_backend_set_tally_batch(const sebt_backend *b, sebt_tally_batch_fn fn, sebt_error *err)
{
    size_t free_slot = MAX_TALLY_WRAPPERS;
    for (size_t i = 0; b && i < MAX_TALLY_WRAPPERS; i++) {
        if (tally_wrappers[i].backend == b) {
            tally_wrappers[i].fn = fn;
            if (!fn)
                tally_wrappers[i].backend = NULL;
            return SEBT_OK;
        }
        if (!tally_wrappers[i].backend && free_slot == MAX_TALLY_WRAPPERS)
            free_slot = i;
    }
    if (!b || b == &sebt_fast_cpu_backend || (cuda_backend && b == cuda_backend))
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_backend_set_tally_batch: %s",
                         b ? "a builtin backend's tallied batch is its own" : "no backend");
    if (!fn)
        return SEBT_OK;
    if (free_slot == MAX_TALLY_WRAPPERS)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_backend_set_tally_batch: %d wrappers already have one",
                         MAX_TALLY_WRAPPERS);
    tally_wrappers[free_slot].backend = b;
    tally_wrappers[free_slot].fn = fn;
    return SEBT_OK;
}

sebt_tally_batch_fn sebt_backend_tally_batch(const sebt_backend *b)
{
    if (b == &sebt_fast_cpu_backend)
        return sebt_fast_cpu_run_tallied;
    if (b && b == cuda_backend)
        return cuda_tallied;
    for (size_t i = 0; b && i < MAX_TALLY_WRAPPERS; i++)
        if (tally_wrappers[i].backend == b)
            return tally_wrappers[i].fn;
    return NULL;
}

sebt_blocks_batch_fn sebt_backend_blocks_batch(const sebt_backend *b)
{
    return b == &sebt_fast_cpu_backend ? sebt_fast_cpu_run_blocked : NULL;
}

sebt_status sebt_backend_get(const char *name, const sebt_backend **out, sebt_error *err)
{
    *out = NULL;
    if (sebt_backend_is_kernel(name))
        return kernel_open(name, out, err);
    if (sebt_backend_is_path(name))
        return sebt_plugin_open(name, out, err);
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
    return sebt_fail(err, SEBT_ERR_USAGE, "unknown backend '%s' (valid: reference, fast_cpu, cuda, "
                     "the path of a plugin: ./libmine.so, or a kernel command: 'exec:python3 mine.py')", name);
}
