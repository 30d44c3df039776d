/* The checks of the CUDA runtime stand-in (gpu/host/) itself: what it must
 * catch (each a death test: the process aborts with a message), what it
 * must let through (no false alarm on padding, NULL, device pointers), the
 * launch model, and fault injection. Kernels here are written as a kernel
 * author would write them for nvcc. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_launch.h"

static void *dev_alloc(size_t bytes)
{
    void *d = NULL;
    cr_assert_eq(cudaMalloc(&d, bytes), cudaSuccess);
    cr_assert_not_null(d);
    return d;
}

/* ---- memory ---- */

Test(host_runtime, fresh_device_memory_is_poisoned)
{
    double *d = (double *)dev_alloc(16 * sizeof(double));
    double h[16];
    cr_assert_eq(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 16; i++) {
        uint64_t bits;
        memcpy(&bits, &h[i], sizeof bits);
        cr_assert_eq(bits, 0x7FF4DEAD7FF4DEADull, "word %d", i);
        cr_assert(h[i] != h[i], "a NaN");
    }
    cr_assert_eq((uintptr_t)d % 256, 0, "device pointers are 256-byte aligned");
    cudaFree(d);
}

Test(host_runtime, copy_past_the_end_is_caught, .signal = SIGABRT)
{
    double *d = (double *)dev_alloc(8 * sizeof(double));
    double h[9] = { 0 };
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
}

Test(host_runtime, copy_starting_inside_running_out_is_caught, .signal = SIGABRT)
{
    double *d = (double *)dev_alloc(8 * sizeof(double));
    double h[8] = { 0 };
    cudaMemcpy(h, d + 1, sizeof h, cudaMemcpyDeviceToHost);
}

Test(host_runtime, wrong_direction_is_caught, .signal = SIGABRT)
{
    double *d = (double *)dev_alloc(8 * sizeof(double));
    double h[8] = { 0 };
    cudaMemcpy(h, d, sizeof h, cudaMemcpyHostToDevice);
}

Test(host_runtime, host_to_host_kind_with_device_memory_is_caught, .signal = SIGABRT)
{
    double *d = (double *)dev_alloc(8 * sizeof(double));
    double h[8] = { 0 };
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToHost);
}

Test(host_runtime, free_of_a_host_pointer_is_caught, .signal = SIGABRT)
{
    static double h[4];
    cudaFree(h);
}

Test(host_runtime, double_free_is_caught, .signal = SIGABRT)
{
    void *d = dev_alloc(64);
    cudaFree(d);
    cudaFree(d);
}

Test(host_runtime, right_copies_pass)
{
    double *d = (double *)dev_alloc(8 * sizeof(double)), *e = (double *)dev_alloc(8 * sizeof(double));
    double h[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, back[8] = { 0 };
    cr_assert_eq(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(e, d, sizeof h, cudaMemcpyDeviceToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(back + 2, e + 2, 6 * sizeof(double), cudaMemcpyDefault), cudaSuccess);
    cr_assert_eq(cudaMemcpy(back, d, 0, cudaMemcpyDeviceToHost), cudaSuccess, "0 bytes is allowed");
    for (int i = 2; i < 8; i++)
        cr_assert_eq(back[i], h[i]);
    cudaFree(d);
    cudaFree(e);
}

/* ---- launches ---- */

__global__ void fill_index(int64_t *out, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i;
}

/* The thread bound off by one: thread n writes past the end. */
__global__ void fill_index_off_by_one(int64_t *out, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = i;
}

Test(host_runtime, every_thread_of_every_block_runs)
{
    const int64_t n = 1000;
    int64_t *d = (int64_t *)dev_alloc(n * sizeof(int64_t));
    SEBT_LAUNCH(fill_index, (n + 127) / 128, 128)(d, n);
    cr_assert_eq(cudaGetLastError(), cudaSuccess);
    int64_t h[1000];
    cr_assert_eq(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(h[i], i);
    cudaFree(d);
}

Test(host_runtime, thread_bound_off_by_one_is_caught, .signal = SIGABRT)
{
    const int64_t n = 256;   /* a whole number of blocks: thread n exists */
    int64_t *d = (int64_t *)dev_alloc(n * sizeof(int64_t));
    SEBT_LAUNCH(fill_index_off_by_one, 3, 128)(d, n);
}

Test(host_runtime, bad_configuration_is_a_launch_error)
{
    int64_t *d = (int64_t *)dev_alloc(8);
    SEBT_LAUNCH(fill_index, 0, 128)(d, 0);
    cr_assert_eq(cudaGetLastError(), cudaErrorInvalidConfiguration);
    SEBT_LAUNCH(fill_index, 1, 2048)(d, 0);
    cr_assert_eq(cudaGetLastError(), cudaErrorInvalidConfiguration);
    cr_assert_eq(cudaGetLastError(), cudaSuccess, "read once");
    cudaFree(d);
}

Test(host_runtime, host_pointer_argument_is_caught, .signal = SIGABRT)
{
    static int64_t h[128];
    SEBT_LAUNCH(fill_index, 1, 128)(h, 128);
}

typedef struct {
    int32_t n;             /* 4 bytes of padding follow */
    const double *col;
    bool flag;             /* 7 bytes of padding follow */
    int64_t m;
} view;

__global__ void read_view(view v, const view *vs, double *out)
{
    if (threadIdx.x == 0)
        out[0] = v.col ? v.col[0] : vs[0].col[0];
}

static view *device_views(const view *h, int n)
{
    view *d = (view *)dev_alloc(n * sizeof(view));
    cr_assert_eq(cudaMemcpy(d, h, n * sizeof(view), cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

Test(host_runtime, struct_by_value_with_a_host_pointer_is_caught, .signal = SIGABRT)
{
    static double h[4];
    double *out = (double *)dev_alloc(8);
    view v;
    memset(&v, 0, sizeof v);
    v.col = h;
    view *vs = device_views(&v, 1);
    SEBT_LAUNCH(read_view, 1, 1)(v, vs, out);
}

Test(host_runtime, device_struct_with_a_host_pointer_is_caught, .signal = SIGABRT)
{
    static double h[4];
    double *out = (double *)dev_alloc(8), *col = (double *)dev_alloc(32);
    view hv[3];
    memset(hv, 0, sizeof hv);
    hv[0].col = col;
    hv[1].col = col;
    hv[2].col = h;   /* the third one was never replaced by its device copy */
    view *vs = device_views(hv, 3);
    view none;
    memset(&none, 0, sizeof none);
    SEBT_LAUNCH(read_view, 1, 1)(none, vs, out);
}

/* Padding full of old pointers, NULLs and device pointers: no alarm. */
Test(host_runtime, padding_and_device_pointers_pass)
{
    double *out = (double *)dev_alloc(8), *col = (double *)dev_alloc(32);
    double one = 1.0;
    cudaMemcpy(col, &one, sizeof one, cudaMemcpyHostToDevice);
    view v;
    void *junk = &v;   /* a host address in every padding byte run */
    unsigned char *b = (unsigned char *)&v;
    for (size_t k = 0; k + sizeof junk <= sizeof v; k += sizeof junk)
        memcpy(b + k, &junk, sizeof junk);
    v.n = 3;
    v.col = col;
    v.flag = true;
    v.m = 7;
    view *vs = device_views(&v, 1);
    SEBT_LAUNCH(read_view, 1, 1)(v, vs, out);
    SEBT_LAUNCH(read_view, 1, 1)(view{ 0, NULL, false, 0 }, vs, out);
    double h = 0;
    cr_assert_eq(cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(h, 1.0);
    cudaFree(out), cudaFree(col), cudaFree(vs);
}

/* ---- __syncthreads ---- */

__global__ void block_sum(const double *in, double *out)
{
    __shared__ double part[64];
    unsigned t = threadIdx.x;
    part[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s)
            part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = part[0];
}
SEBT_SYNC_KERNEL(block_sum)

__global__ void undeclared_sync(double *out)
{
    __syncthreads();
    out[threadIdx.x] = 0;
}

Test(host_runtime, syncthreads_kernels_run_threads_together)
{
    double h[4 * 64], sums[4];
    for (int i = 0; i < 4 * 64; i++)
        h[i] = (double)i;
    double *d = (double *)dev_alloc(sizeof h), *o = (double *)dev_alloc(sizeof sums);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    SEBT_LAUNCH(block_sum, 4, 64)(d, o);
    cr_assert_eq(cudaGetLastError(), cudaSuccess);
    cudaMemcpy(sums, o, sizeof sums, cudaMemcpyDeviceToHost);
    for (int b = 0; b < 4; b++)
        cr_assert_eq(sums[b], 64.0 * 64 * b + 63.0 * 64 / 2, "block %d: %g", b, sums[b]);
    cudaFree(d), cudaFree(o);
}

Test(host_runtime, undeclared_syncthreads_is_caught, .signal = SIGABRT)
{
    double *o = (double *)dev_alloc(64 * sizeof(double));
    SEBT_LAUNCH(undeclared_sync, 1, 64)(o);
}

/* ---- the device it claims to be, and fault injection ---- */

Test(host_runtime, says_it_is_no_device)
{
    cudaDeviceProp p;
    cr_assert_eq(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    cr_assert_not_null(strstr(p.name, "host execution"), "%s", p.name);
    int v = -1;
    cudaRuntimeGetVersion(&v);
    cr_assert_eq(v, 0);
    cudaDriverGetVersion(&v);
    cr_assert_eq(v, 0);
}

Test(host_runtime, memory_size_limits_allocations)
{
    setenv("SEBT_CUDA_HOST_MEMORY", "1M", 1);
    size_t f = 0, t = 0;
    cr_assert_eq(cudaMemGetInfo(&f, &t), cudaSuccess);
    cr_assert_eq(t, (size_t)1 << 20);
    cr_assert_eq(f, (size_t)1 << 20);
    void *a = dev_alloc(600 << 10), *b = NULL;
    cudaMemGetInfo(&f, &t);
    cr_assert_eq(f, (size_t)(424 << 10));
    cr_assert_eq(cudaMalloc(&b, 600 << 10), cudaErrorMemoryAllocation);
    cr_assert_eq(cudaGetLastError(), cudaErrorMemoryAllocation);
    cudaFree(a);
    cr_assert_eq(cudaMalloc(&b, 600 << 10), cudaSuccess, "freed memory is free again");
    cudaFree(b);
}

Test(host_runtime, nth_allocation_fails)
{
    setenv("SEBT_CUDA_HOST_FAIL_NTH", "3", 1);
    void *p[5];
    for (int i = 0; i < 5; i++)
        cr_assert_eq(cudaMalloc(&p[i], 64), i == 2 ? cudaErrorMemoryAllocation : cudaSuccess, "allocation %d", i + 1);
    cr_assert_null(p[2]);
    for (int i = 0; i < 5; i++)
        cudaFree(p[i]);
    setenv("SEBT_CUDA_HOST_FAIL_NTH", "1", 1);   /* a change restarts the count */
    void *q;
    cr_assert_eq(cudaMalloc(&q, 64), cudaErrorMemoryAllocation);
}

static unsigned failures_of(const char *seed, bool *pattern)
{
    setenv("SEBT_CUDA_HOST_FAIL_P", "0.5", 1);
    setenv("SEBT_CUDA_HOST_SEED", seed, 1);
    unsigned fails = 0;
    for (int i = 0; i < 64; i++) {
        void *p;
        pattern[i] = cudaMalloc(&p, 64) != cudaSuccess;
        fails += pattern[i];
        if (!pattern[i])
            cudaFree(p);
    }
    /* Another setting seen by the runtime, so the next call restarts. */
    setenv("SEBT_CUDA_HOST_SEED", "0", 1);
    size_t f, t;
    cudaMemGetInfo(&f, &t);
    return fails;
}

Test(host_runtime, seeded_failures_repeat)
{
    bool a[64], b[64], c[64];
    unsigned fa = failures_of("7", a), fb = failures_of("7", b), fc = failures_of("8", c);
    cr_assert(fa > 10 && fa < 54, "%u of 64 failed at p=0.5", fa);
    cr_assert_eq(fa, fb);
    cr_assert_eq(memcmp(a, b, sizeof a), 0, "the same seed, the same failures");
    cr_assert_neq(memcmp(a, c, sizeof a), 0, "another seed, other failures (%u)", fc);
}

Test(host_runtime, meminfo_can_fail)
{
    setenv("SEBT_CUDA_HOST_FAIL_MEMINFO", "1", 1);
    size_t f, t;
    cr_assert_neq(cudaMemGetInfo(&f, &t), cudaSuccess);
}
