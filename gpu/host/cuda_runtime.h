/* Host execution: a stand-in for <cuda_runtime.h> that lets the real gpu/ CUDA
 * sources build with the host C++ compiler and run on CPU threads, as a
 * checker (not a speed simulator). gpu/host is first on the include path
 * of the host-execution module only; nvcc builds never see this file.
 *
 *   memory   every cudaMalloc is a tracked host allocation, filled with a
 *            NaN pattern (SEBT_CUDA_HOST_POISON) so reading what was never
 *            written shows; a canary after it catches writes past the end
 *            (under ASan the allocation is exact and ASan catches reads too)
 *   copies   every cudaMemcpy is checked against the live allocations:
 *            direction, size, bounds
 *   launches SEBT_LAUNCH(kernel, grid, block)(args...) runs the blocks in
 *            parallel on CPU threads and each block's threads in order (or
 *            as real threads with a barrier for kernels declared with
 *            SEBT_SYNC_KERNEL, which may call __syncthreads); arguments and
 *            the device structs they point to are scanned for host pointers
 *   faults   SEBT_CUDA_HOST_MEMORY, SEBT_CUDA_HOST_FAIL_NTH,
 *            SEBT_CUDA_HOST_FAIL_P + SEBT_CUDA_HOST_SEED,
 *            SEBT_CUDA_HOST_FAIL_MEMINFO (gpu/README.md, "Host execution")
 *
 * A finding (bad copy, host pointer in a launch, write past an allocation,
 * freeing what was not allocated) is an error: the process prints what and
 * where on stderr and aborts, like a sanitizer. It is never a warning. */
#ifndef SEBT_CUDA_HOST_RUNTIME_H
#define SEBT_CUDA_HOST_RUNTIME_H

#ifndef __cplusplus
#error "the CUDA host-execution runtime is C++: include it from .cu/.cc files only"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

/* What a source may test to say, in its outputs only, that it runs as host
 * execution. Kernel logic never depends on it. */
#define SEBT_CUDA_HOST_EXECUTION 1

#define __global__
#define __host__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
/* Blocks of a SEBT_SYNC_KERNEL run one at a time, so a function-static
 * array is the block's shared memory. */
#define __shared__ static

typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorLaunchFailure = 719,
} cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
};

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int major, minor;
    int multiProcessorCount;
    int memoryBusWidth;
};

struct cudaFuncAttributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion;
};

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
typedef dim3 uint3;

#define SEBT_CUDA_HOST_API __attribute__((visibility("hidden")))

/* Inline and constant-initialised: every file reads the launching CPU
 * thread's own copy directly (no TLS wrapper call). */
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
constexpr int warpSize = 32;

SEBT_CUDA_HOST_API cudaError_t cudaMalloc(void **ptr, size_t bytes);
template <class T>
static inline cudaError_t cudaMalloc(T **ptr, size_t bytes)
{
    return cudaMalloc(reinterpret_cast<void **>(ptr), bytes);
}
SEBT_CUDA_HOST_API cudaError_t cudaFree(void *ptr);
SEBT_CUDA_HOST_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
SEBT_CUDA_HOST_API cudaError_t cudaMemset(void *dst, int value, size_t bytes);
SEBT_CUDA_HOST_API cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b);
SEBT_CUDA_HOST_API cudaError_t cudaGetLastError(void);
SEBT_CUDA_HOST_API cudaError_t cudaPeekAtLastError(void);
SEBT_CUDA_HOST_API const char *cudaGetErrorString(cudaError_t e);
SEBT_CUDA_HOST_API cudaError_t cudaDeviceSynchronize(void);
SEBT_CUDA_HOST_API cudaError_t cudaSetDevice(int id);
SEBT_CUDA_HOST_API cudaError_t cudaGetDevice(int *id);
SEBT_CUDA_HOST_API cudaError_t cudaGetDeviceCount(int *n);
SEBT_CUDA_HOST_API cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int id);
SEBT_CUDA_HOST_API cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int id);
SEBT_CUDA_HOST_API cudaError_t cudaRuntimeGetVersion(int *v);
SEBT_CUDA_HOST_API cudaError_t cudaDriverGetVersion(int *v);
SEBT_CUDA_HOST_API cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *fn);
template <class F>
static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, F *fn)
{
    return cudaFuncGetAttributes(a, reinterpret_cast<const void *>(fn));
}

/* Atomics for kernels whose threads run at once (SEBT_SYNC_KERNEL blocks,
 * and blocks run in parallel). */
static inline int atomicAdd(int *a, int v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicAdd(unsigned *a, unsigned v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }
static inline unsigned long long atomicAdd(unsigned long long *a, unsigned long long v)
{
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}
static inline double atomicAdd(double *a, double v)
{
    uint64_t *bits = reinterpret_cast<uint64_t *>(a);
    uint64_t old = __atomic_load_n(bits, __ATOMIC_SEQ_CST), next;
    double o;
    do {
        std::memcpy(&o, &old, sizeof o);
        double n = o + v;
        std::memcpy(&next, &n, sizeof next);
    } while (!__atomic_compare_exchange_n(bits, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return o;
}
static inline int atomicMax(int *a, int v)
{
    int old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
    while (old < v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
static inline int atomicMin(int *a, int v)
{
    int old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
    while (old > v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}

namespace sebt_host {

/* ---- the checker's half of a launch (cuda_host_runtime.cc) ---- */

/* A finding: message on stderr, then abort. */
[[noreturn]] SEBT_CUDA_HOST_API void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts the checks of one launch: the configuration, the host map. Returns
 * false (and sets the sticky launch error) when the configuration is one a
 * device would refuse. */
SEBT_CUDA_HOST_API bool launch_begin(const char *kernel, dim3 grid, dim3 block);
SEBT_CUDA_HOST_API void launch_end(const char *kernel);
/* Argument `index` is a pointer: NULL or inside a live device allocation.
 * Returns the bytes from p to the end of that allocation (0 for NULL). */
SEBT_CUDA_HOST_API size_t check_pointer_arg(const char *kernel, int index, const void *p);
/* Scans the words of one struct (its padding cleared) for host pointers:
 * `what` says where it lies, for the message. */
SEBT_CUDA_HOST_API void scan_struct(const char *kernel, int index, const char *what, const void *p, size_t bytes,
                                    size_t offset);

/* Runs body(block) for every block of grid on the worker threads. */
SEBT_CUDA_HOST_API void run_blocks(dim3 grid, dim3 block, bool sync, void (*body)(void *ctx), void *ctx);
/* For SEBT_SYNC_KERNEL kernels: the block barrier. */
SEBT_CUDA_HOST_API void syncthreads(void);

/* Padding bytes hold whatever was on the stack or heap before, often an
 * old pointer: they are cleared on a copy before a struct is scanned, so
 * only its members are judged. */
template <class T>
static inline void scan_one(const char *kernel, int index, const char *what, const T &v, size_t offset)
{
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define SEBT_HOST_CAN_SCAN_STRUCTS 1
    T copy;
    std::memcpy(static_cast<void *>(&copy), static_cast<const void *>(&v), sizeof copy);
    __builtin_clear_padding(&copy);
    scan_struct(kernel, index, what, &copy, sizeof copy, offset);
#endif
#endif
#ifndef SEBT_HOST_CAN_SCAN_STRUCTS
    (void)kernel, (void)index, (void)what, (void)v, (void)offset;   /* no padding knowledge: no struct scan */
#endif
}

template <class T>
static inline void check_arg(const char *kernel, int index, const T &v)
{
    if constexpr (std::is_pointer<T>::value) {
        typedef typename std::remove_cv<typename std::remove_pointer<T>::type>::type E;
        size_t extent = check_pointer_arg(kernel, index, (const void *)v);
        if constexpr (std::is_class<E>::value) {
            /* The device structs it points to, to the end of the allocation. */
            const unsigned char *p = reinterpret_cast<const unsigned char *>(v);
            for (size_t k = 0; (k + 1) * sizeof(E) <= extent; k++)
                scan_one(kernel, index, "(in the device structs it points to)", *reinterpret_cast<const E *>(p + k * sizeof(E)),
                         k * sizeof(E));
        }
    } else if constexpr (std::is_class<T>::value) {
        scan_one(kernel, index, "(a struct passed by value)", v, 0);
    }
}

template <class... P>
struct launch_ctx {
    void (*kernel)(P...);
    std::tuple<typename std::decay<P>::type...> args;
};

/* Per-kernel: whether it calls __syncthreads (declared with SEBT_SYNC_KERNEL). */
template <auto K>
struct kernel_traits {
    static constexpr bool sync = false;
};

template <bool Sync, class... P>
struct launcher {
    void (*kernel)(P...);
    const char *name;
    dim3 grid, block;

    /* The kernel's own parameter types: arguments convert at the call site
     * as they do for kernel<<<...>>>(...) (NULL included), and are copied,
     * as a device launch copies them. */
    void operator()(P... a) const
    {
        if (!launch_begin(name, grid, block))
            return;
        launch_ctx<P...> ctx{ kernel, std::tuple<typename std::decay<P>::type...>(a...) };
        int i = 0;
        std::apply([&](const auto &...v) { (check_arg(name, i++, v), ...); }, ctx.args);
        run_blocks(grid, block, Sync, &body, &ctx);
        launch_end(name);
    }

    static void body(void *p)
    {
        launch_ctx<P...> *c = static_cast<launch_ctx<P...> *>(p);
        std::apply(c->kernel, c->args);
    }
};

template <bool Sync, class... P>
static inline launcher<Sync, P...> make_launcher(void (*k)(P...), const char *name, dim3 grid, dim3 block)
{
    return launcher<Sync, P...>{ k, name, grid, block };
}

} // namespace sebt_host

static inline void __syncthreads(void) { sebt_host::syncthreads(); }

#define SEBT_HOST_LAUNCH(kernel, grid, block) \
    sebt_host::make_launcher<sebt_host::kernel_traits<&kernel>::sync>(&kernel, #kernel, (grid), (block))

/* Declares, after a kernel's definition, that its threads meet at
 * __syncthreads: host execution then runs each block's threads as real
 * threads. (On nvcc: nothing.) */
#define SEBT_HOST_SYNC_KERNEL(kernel)                  \
    namespace sebt_host {                              \
    template <>                                        \
    struct kernel_traits<&kernel> {                    \
        static constexpr bool sync = true;             \
    };                                                 \
    }

#endif
