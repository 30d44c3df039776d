/* The host half of a cuda sweep (gpu/cuda_prepare.c, plain C compiled like
 * fast_cpu): combos grouped by indicator key, the exit-search trees, and per
 * batch of keys the valid bars and candidate signal bars that the device's
 * one-thread-per-combo kernel reads. Everything is computed with fast_cpu's
 * own functions (indicators.h, fast_cpu_internal.h), so the device starts
 * from the very bits fast_cpu starts from. */
#ifndef SEBT_CUDA_PLAN_H
#define SEBT_CUDA_PLAN_H

#include "fast_cpu_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t atr, z, fast, slow;
} cuda_key;

typedef struct {
    cuda_key key;
    size_t first, count;          /* its combos: order[first .. first+count) */
    double vmin, tmin, cmin;      /* loosest thresholds among them */
} cuda_group;

typedef struct {
    size_t n_combos, n_groups;
    size_t *order;                /* combo indices sorted by key */
    cuda_group *groups;
    double *tr, *cloc;            /* series-wide columns */
    fast_market fm;               /* trees over low and -high */
} cuda_plan;

/* The keys [g0, g1) ready for the device: one valid-bar set per distinct
 * atr_window, one candidate list per key. */
typedef struct {
    size_t g0, g1;
    size_t n_atrs;
    int32_t *atrs;
    uint8_t **valid;
    int32_t **rank, **vbar;
    int64_t *n_valid;
    int *atr_slot;                /* per key of the batch */
    sebt_k_cands *cands;          /* per key of the batch, host arrays */
} cuda_batch;

sebt_status cuda_plan_build(const sebt_series *s, const sebt_params *combos, size_t n_combos,
                            cuda_plan *p, sebt_error *err);
void cuda_plan_free(cuda_plan *p);

/* Host memory one batch of keys may take: fast_cpu's budget
 * (SEBT_FAST_CPU_MEMORY_MB). Here because fast_cpu's internal header has
 * no C++ linkage block. */
size_t cuda_host_budget(void);

/* Bytes of host and of device memory keys [g0, g1) may need at most. */
size_t cuda_batch_host_bytes(size_t n_bars, size_t n_keys);
size_t cuda_batch_device_bytes(size_t n_bars, size_t n_keys);

sebt_status cuda_batch_build(const cuda_plan *p, const sebt_series *s, size_t g0, size_t g1, int threads,
                             cuda_batch *b, sebt_error *err);
void cuda_batch_free(cuda_batch *b);

#ifdef __cplusplus
}
#endif

#endif
