/* What the process can see of CUDA devices, for `sebt check-gpu` and for
 * the auto backend choice. Asking opens gpu/libsebt_cuda.so (and through it
 * the CUDA driver), so a process that must stay off the GPU never calls
 * anything here. */
#ifndef SEBT_GPU_H
#define SEBT_GPU_H

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEBT_GPU_MAX_DEVICES 16

typedef struct {
    int id;                  /* CUDA runtime ordinal, after CUDA_VISIBLE_DEVICES */
    char name[256];
    int cc_major, cc_minor;  /* compute capability */
    size_t mem_total;        /* bytes */
    size_t mem_free;         /* bytes, when asked */
    int multiprocessors;
    int clock_khz;           /* peak SM clock */
    int mem_clock_khz;       /* peak memory clock */
    int mem_bus_bits;        /* global memory bus width */
    double mem_bandwidth;    /* bytes/s, peak: 2 * mem_clock * bus width / 8 */
} sebt_gpu_device;

typedef struct {
    int driver_version;      /* 1000*major + 10*minor, 0 when there is no driver */
    int runtime_version;     /* the CUDA runtime the module was built with */
    int n_devices;           /* devices visible to this process */
    int selected;            /* the one BACKTEST_GPU_ID picks (0 by default), -1 if none */
    sebt_gpu_device devices[SEBT_GPU_MAX_DEVICES];
} sebt_gpu_info;

/* Fills info with every visible device. With no module built, no driver or
 * no device, info->n_devices is 0 and the call returns SEBT_ERR_UNAVAILABLE
 * (no module) or SEBT_ERR_NODEVICE (no driver, no device, or a bad
 * BACKTEST_GPU_ID) with the reason in err; the versions that could be read
 * are filled all the same. */
sebt_status sebt_gpu_query(sebt_gpu_info *info, sebt_error *err);

/* Entry point that gpu/libsebt_cuda.so exports for sebt_gpu_query. */
typedef sebt_status (*sebt_cuda_devices_fn)(sebt_gpu_info *info, sebt_error *err);
#define SEBT_CUDA_DEVICES_SYMBOL "sebt_cuda_devices"

#ifdef __cplusplus
}
#endif

#endif
