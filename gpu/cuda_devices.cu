/* Finding and opening a device: the module's two entry points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "sebt/backends.h"

/* BACKTEST_GPU_ID as a number (0 when unset); a malformed value is bad
 * input whether or not a device exists, so it is checked first. */
static sebt_status parse_gpu_id(long *id, sebt_error *err)
{
    const char *env = getenv("BACKTEST_GPU_ID");
    *id = 0;
    if (!env || !*env)
        return SEBT_OK;
    char *end;
    *id = strtol(env, &end, 10);
    if (*end || *id < 0 || end == env)
        return sebt_fail(err, SEBT_ERR_USAGE, "BACKTEST_GPU_ID='%s': expected a device number (0, 1, ...)", env);
    return SEBT_OK;
}

sebt_status cuda_pick_device(int n_devices, int *id, sebt_error *err)
{
    long v;
    sebt_status st = parse_gpu_id(&v, err);
    if (st != SEBT_OK)
        return st;
    if (v >= n_devices)
        return sebt_fail(err, SEBT_ERR_NODEVICE,
                         "BACKTEST_GPU_ID=%ld: this process sees %d CUDA device(s), numbered from 0%s", v,
                         n_devices, getenv("CUDA_VISIBLE_DEVICES") ? " after CUDA_VISIBLE_DEVICES" : "");
    *id = (int)v;
    return SEBT_OK;
}

/* Why no device is usable, in words a person can act on. */
static sebt_status no_device(sebt_error *err, cudaError_t e, int driver)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (driver == 0 || e == cudaErrorInsufficientDriver)
        return sebt_fail(err, SEBT_ERR_NODEVICE,
                         "no usable CUDA driver (%s): is the NVIDIA driver installed and libcuda.so.1 on the library path?",
                         cudaGetErrorString(e));
    if (e == cudaSuccess || e == cudaErrorNoDevice)
        return sebt_fail(err, SEBT_ERR_NODEVICE, "no CUDA device visible to this process%s%s%s",
                         cvd ? " (CUDA_VISIBLE_DEVICES='" : "", cvd ? cvd : "", cvd ? "')" : "");
    return sebt_fail(err, SEBT_ERR_NODEVICE, "cannot list CUDA devices: %s", cudaGetErrorString(e));
}

/* What the runtime knows of a device without a context on it: listing
 * devices must not create a context on every GPU of the machine. */
static void fill_device(int id, sebt_gpu_device *d)
{
    cudaDeviceProp p;
    memset(d, 0, sizeof *d);
    d->id = id;
    if (cudaGetDeviceProperties(&p, id) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    snprintf(d->name, sizeof d->name, "%s", p.name);
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->mem_total = p.totalGlobalMem;
    d->multiprocessors = p.multiProcessorCount;
    d->mem_bus_bits = p.memoryBusWidth;
    cudaDeviceGetAttribute(&d->clock_khz, cudaDevAttrClockRate, id);
    cudaDeviceGetAttribute(&d->mem_clock_khz, cudaDevAttrMemoryClockRate, id);
    /* Double data rate: two transfers per memory clock. */
    d->mem_bandwidth = 2.0 * (double)d->mem_clock_khz * 1e3 * (double)d->mem_bus_bits / 8.0;
}

SEBT_CUDA_EXPORT sebt_status sebt_cuda_devices(sebt_gpu_info *info, sebt_error *err)
{
    memset(info, 0, sizeof *info);
    info->selected = -1;
    /* Host execution lists no device: it must never pass for a GPU (auto
     * never picks it, gpu mode refuses it); `--backend cuda` still runs it. */
    if (CUDA_HOST_EXECUTION)
        return sebt_fail(err, SEBT_ERR_NODEVICE, "the cuda module is %s", CUDA_HOST_EXECUTION_NOTE);
    cudaRuntimeGetVersion(&info->runtime_version);
    cudaDriverGetVersion(&info->driver_version);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        cudaGetLastError(); /* a failed count must not poison later calls */
        return no_device(err, e, info->driver_version);
    }
    if (n > SEBT_GPU_MAX_DEVICES)
        n = SEBT_GPU_MAX_DEVICES;
    info->n_devices = n;
    for (int i = 0; i < n; i++)
        fill_device(i, &info->devices[i]);
    int id;
    sebt_status st = cuda_pick_device(n, &id, err);
    if (st != SEBT_OK)
        return st;
    /* Only the selected device gets a context: its free memory needs one. */
    if ((e = cudaSetDevice(id)) != cudaSuccess) {
        cudaGetLastError();
        return sebt_fail(err, SEBT_ERR_NODEVICE, "CUDA device %d cannot be used: %s", id, cudaGetErrorString(e));
    }
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        info->devices[id].mem_free = free_b;
    else
        cudaGetLastError();
    info->selected = id;
    return SEBT_OK;
}

SEBT_CUDA_EXPORT const sebt_backend *sebt_cuda_open(sebt_error *err)
{
    int driver = 0, n = 0;
    long unused;
    if (parse_gpu_id(&unused, err) != SEBT_OK)
        return NULL;
    cudaDriverGetVersion(&driver);
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        cudaGetLastError();
        no_device(err, e, driver);
        return NULL;
    }
    int id;
    if (cuda_pick_device(n, &id, err) != SEBT_OK)
        return NULL;
    cuda_state *st = &cuda_backend_state;
    st->device = id;
    if ((e = cudaSetDevice(id)) != cudaSuccess || (e = cudaGetDeviceProperties(&st->prop, id)) != cudaSuccess
        || (e = cudaFree(0)) != cudaSuccess) {
        sebt_fail(err, SEBT_ERR_NODEVICE, "CUDA device %d cannot be used: %s", id, cudaGetErrorString(e));
        return NULL;
    }
    if (cuda_check_kernels(err) != SEBT_OK)
        return NULL;
    cuda_backend_table.state = st;
    if (CUDA_HOST_EXECUTION)
        cuda_backend_table.description = "CUDA sources under " CUDA_HOST_EXECUTION_NOTE;
    return &cuda_backend_table;
}
