/* Internals of the cuda module shared by its .cu files. Nothing here is
 * public: the rest of sebt sees only the exported entry points
 * (sebt_cuda_open, sebt_cuda_devices, sebt_cuda_run_tallied). */
#ifndef SEBT_CUDA_INTERNAL_H
#define SEBT_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include "cuda_launch.h"

#include "sebt/backend.h"
#include "sebt/gpu.h"
#include "sebt/sebt.h" /* sebt_fail: core is linked in, with fast_cpu */

#define SEBT_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

/* Whether this module is the host execution of the CUDA sources (gpu/host/),
 * for what it says about itself only: kernel logic never asks. */
#ifdef SEBT_CUDA_HOST_EXECUTION
#define CUDA_HOST_EXECUTION 1
#else
#define CUDA_HOST_EXECUTION 0
#endif
#define CUDA_HOST_EXECUTION_NOTE                                                                              \
    "host execution, no device: the CUDA sources compiled by the host compiler, run on CPU threads under a " \
    "checking CUDA runtime stand-in (libsebt_cuda_host.so)"

/* The device BACKTEST_GPU_ID names among n visible ones (0 when unset). */
sebt_status cuda_pick_device(int n_devices, int *id, sebt_error *err);

typedef struct {
    int device;
    cudaDeviceProp prop;
} cuda_state;

/* cuda_backend.cu: the backend table, its state filled by sebt_cuda_open. */
extern sebt_backend cuda_backend_table;
extern cuda_state cuda_backend_state;
/* Fails when this build has no kernel image for the opened device. */
sebt_status cuda_check_kernels(sebt_error *err);

#endif
