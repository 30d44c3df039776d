/* The CUDA runtime stand-in behind gpu/host/cuda_runtime.h: device memory
 * as tracked host allocations, checked copies and launches, blocks on CPU
 * threads, and fault injection. Why each check exists is in the header;
 * how to drive it is in gpu/README.md, "Host execution". */
#include "cuda_runtime.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SEBT_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEBT_HOST_ASAN 1
#endif
#endif

#ifdef SEBT_HOST_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace sebt_host {

/* Uninitialised device memory reads as this: a NaN as a double, a huge
 * positive number as an int32 or int64, an impossible address. */
static const uint64_t POISON = 0x7FF4DEAD7FF4DEADull;
/* Bytes after each allocation, checked after every launch and at free:
 * a write past the end shows even without ASan. Under ASan the allocation
 * is exact instead, so ASan sees reads past the end as well. */
#ifdef SEBT_HOST_ASAN
static const size_t CANARY = 0;
#else
static const size_t CANARY = 64;
#endif
static const unsigned char CANARY_BYTE = 0xA5;

struct allocation {
    size_t bytes;
    unsigned long long serial;   /* 1 for the first cudaMalloc of the process */
};

/* What a process did to the device, for the roofline (gpu/README.md):
 * written as one JSON line to the file SEBT_CUDA_HOST_COUNTERS names when
 * the process exits. Guarded by mu. */
struct kernel_count {
    unsigned long long launches = 0, threads = 0;
};
struct counters {
    unsigned long long allocs = 0, h2d = 0, d2h = 0, d2d = 0;
    size_t peak = 0;
    std::map<std::string, kernel_count> kernels;
    ~counters();
};

struct config {
    std::string env_memory, env_nth, env_p, env_seed, env_meminfo;
    size_t memory = (size_t)16 << 30;
    unsigned long long fail_nth = 0;
    double fail_p = 0.0;
    uint64_t rng = 0;
    bool fail_meminfo = false;
    unsigned long long allocs = 0;   /* since the configuration last changed */
};

static std::mutex mu;                       /* guards everything below */
static std::map<uintptr_t, allocation> live;
static size_t used;
static counters counted;

counters::~counters()
{
    const char *path = getenv("SEBT_CUDA_HOST_COUNTERS");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "{\"allocations\": %llu, \"peak_device_bytes\": %zu, \"h2d_bytes\": %llu, \"d2h_bytes\": %llu, "
               "\"d2d_bytes\": %llu, \"kernels\": {", allocs, peak, h2d, d2h, d2d);
    const char *sep = "";
    for (const auto &k : kernels) {
        fprintf(f, "%s\"%s\": {\"launches\": %llu, \"threads\": %llu}", sep, k.first.c_str(), k.second.launches,
                k.second.threads);
        sep = ", ";
    }
    fprintf(f, "}}\n");
    fclose(f);
}
static unsigned long long serial;
static config cfg;
static bool cfg_read;

static thread_local cudaError_t last_error = cudaSuccess;
static thread_local const char *running_kernel;
static thread_local bool running_sync;

void fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sebt cuda host execution: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    abort();
}

static const char *env_or_empty(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

static size_t parse_bytes(const char *name, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double unit = 1;
    if (*end == 'k' || *end == 'K') unit = 1024.0, end++;
    else if (*end == 'm' || *end == 'M') unit = 1048576.0, end++;
    else if (*end == 'g' || *end == 'G') unit = 1073741824.0, end++;
    if (end == s || *end || !(v >= 0) || errno)
        fatal("%s='%s': expected a size in bytes (suffix K, M or G allowed)", name, s);
    return (size_t)(v * unit);
}

/* Reads the fault-injection settings again whenever one of them changed,
 * so a test can set them between sweeps in one process; counters restart
 * with the new settings. Called with mu held. */
static void refresh_config(void)
{
    const char *m = env_or_empty("SEBT_CUDA_HOST_MEMORY"), *n = env_or_empty("SEBT_CUDA_HOST_FAIL_NTH"),
               *p = env_or_empty("SEBT_CUDA_HOST_FAIL_P"), *s = env_or_empty("SEBT_CUDA_HOST_SEED"),
               *mi = env_or_empty("SEBT_CUDA_HOST_FAIL_MEMINFO");
    if (cfg_read && cfg.env_memory == m && cfg.env_nth == n && cfg.env_p == p && cfg.env_seed == s
        && cfg.env_meminfo == mi)
        return;
    config c;
    c.env_memory = m, c.env_nth = n, c.env_p = p, c.env_seed = s, c.env_meminfo = mi;
    if (*m)
        c.memory = parse_bytes("SEBT_CUDA_HOST_MEMORY", m);
    char *end;
    if (*n) {
        c.fail_nth = strtoull(n, &end, 10);
        if (*end || end == n)
            fatal("SEBT_CUDA_HOST_FAIL_NTH='%s': expected a positive allocation number", n);
    }
    if (*p) {
        c.fail_p = strtod(p, &end);
        if (*end || end == p || !(c.fail_p >= 0 && c.fail_p <= 1))
            fatal("SEBT_CUDA_HOST_FAIL_P='%s': expected a probability in [0, 1]", p);
    }
    c.rng = 0x9E3779B97F4A7C15ull;
    if (*s) {
        c.rng = strtoull(s, &end, 10);
        if (*end || end == s)
            fatal("SEBT_CUDA_HOST_SEED='%s': expected a number", s);
    }
    c.fail_meminfo = *mi && strcmp(mi, "0") != 0;
    cfg = c;
    cfg_read = true;
}

/* splitmix64: a seeded, reproducible sequence for SEBT_CUDA_HOST_FAIL_P. */
static double next_uniform(void)
{
    uint64_t z = (cfg.rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* The live allocation holding address a, or live.end(). Called with mu held. */
static std::map<uintptr_t, allocation>::iterator find_alloc(uintptr_t a)
{
    auto it = live.upper_bound(a);
    if (it == live.begin())
        return live.end();
    --it;
    return a < it->first + it->second.bytes ? it : live.end();
}

static void check_canary(uintptr_t base, const allocation &al, const char *when)
{
    const unsigned char *c = (const unsigned char *)base + al.bytes;
    for (size_t i = 0; i < CANARY; i++)
        if (c[i] != CANARY_BYTE)
            fatal("%s: device allocation #%llu (%zu bytes at %p) was written past its end (byte +%zu)", when,
                  al.serial, al.bytes, (void *)base, i);
}

} // namespace sebt_host

using namespace sebt_host;

cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    if (!ptr)
        return last_error = cudaErrorInvalidValue;
    *ptr = nullptr;
    std::lock_guard<std::mutex> lock(mu);
    refresh_config();
    cfg.allocs++;
    bool fail = (cfg.fail_nth && cfg.allocs == cfg.fail_nth) || (cfg.fail_p > 0 && next_uniform() < cfg.fail_p)
                || bytes > cfg.memory - used;
    if (fail)
        return last_error = cudaErrorMemoryAllocation;
    if (bytes == 0)
        return cudaSuccess;
    void *p = nullptr;
    if (posix_memalign(&p, 256, bytes + CANARY) != 0)
        return last_error = cudaErrorMemoryAllocation;
    unsigned char *b = (unsigned char *)p;
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)(POISON >> (8 * (i % 8)));
    memset(b + bytes, CANARY_BYTE, CANARY);
    live[(uintptr_t)p] = allocation{ bytes, ++serial };
    used += bytes;
    counted.allocs++;
    if (used > counted.peak)
        counted.peak = used;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> lock(mu);
    auto it = live.find((uintptr_t)ptr);
    if (it == live.end())
        fatal("cudaFree(%p): not the start of a live device allocation (a host pointer, a pointer inside an "
              "allocation, or freed twice)", ptr);
    check_canary(it->first, it->second, "cudaFree");
    used -= it->second.bytes;
    live.erase(it);
    free(ptr);
    return cudaSuccess;
}

static const char *kind_name(cudaMemcpyKind k)
{
    switch (k) {
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault: return "cudaMemcpyDefault";
    }
    return "an unknown cudaMemcpyKind";
}

/* One side of a copy: device memory wholly inside one live allocation, or
 * host memory touching none. Called with mu held. Returns true for device. */
static bool classify(const char *kind, const char *side, const void *p, size_t bytes)
{
    uintptr_t a = (uintptr_t)p;
    auto it = find_alloc(a);
    if (it != live.end()) {
        if (bytes > it->first + it->second.bytes - a)
            fatal("%s of %zu bytes: the %s %p is %zu bytes into device allocation #%llu of %zu bytes: the copy "
                  "runs %zu bytes past its end", kind, bytes, side, p, (size_t)(a - it->first), it->second.serial,
                  it->second.bytes, bytes - (size_t)(it->first + it->second.bytes - a));
        return true;
    }
    /* A host range that overlaps an allocation is a copy gone astray. */
    auto next = live.upper_bound(a);
    if (next != live.end() && next->first < a + bytes)
        fatal("%s of %zu bytes: the host %s %p runs into device allocation #%llu at %p", kind, bytes, side, p,
              next->second.serial, (void *)next->first);
    return false;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    const char *kn = kind_name(kind);
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        fatal("cudaMemcpy with kind %d: not a cudaMemcpyKind", (int)kind);
    if (bytes == 0)
        return cudaSuccess;
    if (!dst || !src)
        fatal("%s of %zu bytes with a NULL %s", kn, bytes, dst ? "source" : "destination");
    {
        std::lock_guard<std::mutex> lock(mu);
        bool ddev = classify(kn, "destination", dst, bytes), sdev = classify(kn, "source", src, bytes);
        bool want_d = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
        bool want_s = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
        if (kind != cudaMemcpyDefault && (ddev != want_d || sdev != want_s))
            fatal("%s of %zu bytes from %p (%s memory) to %p (%s memory): wrong direction", kn, bytes, src,
                  sdev ? "device" : "host", dst, ddev ? "device" : "host");
        if (ddev && !sdev)
            counted.h2d += bytes;
        else if (sdev && !ddev)
            counted.d2h += bytes;
        else if (sdev && ddev)
            counted.d2d += bytes;
    }
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(mu);
        if (!classify("cudaMemset", "destination", dst, bytes))
            fatal("cudaMemset of %zu bytes at %p: not device memory", bytes, dst);
    }
    memset(dst, value, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    std::lock_guard<std::mutex> lock(mu);
    refresh_config();
    if (cfg.fail_meminfo)
        return last_error = cudaErrorInitializationError;
    if (free_b)
        *free_b = cfg.memory > used ? cfg.memory - used : 0;
    if (total_b)
        *total_b = cfg.memory;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory (host execution)";
    case cudaErrorInitializationError: return "initialization error (host execution: SEBT_CUDA_HOST_FAIL_MEMINFO)";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unknown error";
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaSetDevice(int id) { return id == 0 ? cudaSuccess : (last_error = cudaErrorInvalidDevice); }

cudaError_t cudaGetDevice(int *id)
{
    *id = 0;
    return cudaSuccess;
}

/* One "device": the host. Its name says so wherever it is printed. */
cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

static unsigned worker_threads(void)
{
    const char *e = getenv("SEBT_CUDA_HOST_THREADS");
    long v = e && *e ? strtol(e, nullptr, 10) : 0;
    if (v > 0)
        return (unsigned)(v < 256 ? v : 256);
    unsigned h = std::thread::hardware_concurrency();
    return h ? h : 1;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int id)
{
    if (id != 0)
        return last_error = cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "host execution (no device)");
    {
        std::lock_guard<std::mutex> lock(mu);
        refresh_config();
        p->totalGlobalMem = cfg.memory;
    }
    p->sharedMemPerBlock = 48 << 10;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->multiProcessorCount = (int)worker_threads();
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int id)
{
    if (id != 0)
        return last_error = cudaErrorInvalidDevice;
    switch (a) {
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrMultiProcessorCount: *v = (int)worker_threads(); break;
    default: *v = 0; break;   /* no clock, no memory bus: there is no device */
    }
    return cudaSuccess;
}

/* No CUDA runtime or driver is involved: versions 0, which every output
 * prints as "none". */
cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 0;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 0;
    return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *fn)
{
    if (!a || !fn)
        return last_error = cudaErrorInvalidValue;
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

namespace sebt_host {

/* ---- launches ---- */

struct region {
    uintptr_t lo, hi;
};

/* The readable host mappings of the process at this launch, minus ASan's
 * shadow (which would make any large integer look like an address): a
 * word pointing into one of them and into no device allocation is a host
 * pointer. Guarded by mu, rebuilt per launch. */
static std::vector<region> host_regions;
static const char *scan_kernel;

static void read_host_regions(void)
{
    host_regions.clear();
    uintptr_t shadow_lo = 0, shadow_hi = 0;
#ifdef SEBT_HOST_ASAN
    size_t scale = 0, offset = 0;
    __asan_get_shadow_mapping(&scale, &offset);
    shadow_lo = offset;
    shadow_hi = offset + ((uintptr_t)1 << 47 >> scale);
#endif
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        fatal("launch of %s: cannot read /proc/self/maps to check its arguments for host pointers", scan_kernel);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r')
            continue;
        if (shadow_hi && lo >= shadow_lo && hi <= shadow_hi)
            continue;
        host_regions.push_back(region{ lo, hi });
    }
    fclose(f);
}

static bool in_host_region(uintptr_t v)
{
    for (const region &r : host_regions)
        if (v >= r.lo && v < r.hi)
            return true;
    return false;
}

static void scan_words(int index, const char *what, const unsigned char *p, size_t bytes, size_t base_off)
{
    for (size_t off = 0; off + sizeof(uint64_t) <= bytes; off += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, p + off, sizeof w);
        if (w == 0 || find_alloc((uintptr_t)w) != live.end())
            continue;
        if (in_host_region((uintptr_t)w))
            fatal("launch of %s: argument %d %s holds %p at byte %zu, which is host memory (or freed device "
                  "memory), not a live device allocation: the kernel would dereference a host pointer",
                  scan_kernel, index, what, (void *)w, base_off + off);
    }
}

bool launch_begin(const char *kernel, dim3 grid, dim3 block)
{
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || grid.x > 0x7fffffffu
        || grid.y > 65535 || grid.z > 65535 || block.z > 64) {
        last_error = cudaErrorInvalidConfiguration;
        return false;
    }
    mu.lock();   /* held while the arguments are checked */
    kernel_count &kc = counted.kernels[kernel];
    kc.launches++;
    kc.threads += threads * grid.x * grid.y * grid.z;
    scan_kernel = kernel;
    read_host_regions();
    return true;
}

size_t check_pointer_arg(const char *kernel, int index, const void *p)
{
    if (!p)
        return 0;
    auto it = find_alloc((uintptr_t)p);
    if (it == live.end())
        fatal("launch of %s: argument %d is %p, %s, not a live device allocation", kernel, index, p,
              in_host_region((uintptr_t)p) ? "host memory (or freed device memory)" : "no memory at all");
    return it->second.bytes - (size_t)((uintptr_t)p - it->first);
}

void scan_struct(const char *kernel, int index, const char *what, const void *p, size_t bytes, size_t offset)
{
    (void)kernel;
    scan_words(index, what, (const unsigned char *)p, bytes, offset);
}

void launch_end(const char *kernel)
{
    std::lock_guard<std::mutex> lock(mu);
    char when[160];
    snprintf(when, sizeof when, "after the launch of %s", kernel);
    for (const auto &a : live)
        check_canary(a.first, a.second, when);
}

/* A block barrier whose count shrinks as threads finish, so threads that
 * returned early do not hang the rest. */
struct barrier {
    std::mutex m;
    std::condition_variable cv;
    unsigned expected = 0, arrived = 0;
    unsigned long long generation = 0;

    void release_locked()
    {
        arrived = 0;
        generation++;
        cv.notify_all();
    }
    void wait()
    {
        std::unique_lock<std::mutex> l(m);
        unsigned long long g = generation;
        if (++arrived == expected)
            release_locked();
        else
            cv.wait(l, [&] { return generation != g; });
    }
    void leave()
    {
        std::lock_guard<std::mutex> l(m);
        expected--;
        if (expected && arrived == expected)
            release_locked();
    }
};

static thread_local barrier *block_barrier;

void syncthreads(void)
{
    if (!running_sync || !block_barrier)
        fatal("kernel %s calls __syncthreads but is not declared with SEBT_SYNC_KERNEL(%s) after its "
              "definition: host execution runs its threads one after another", running_kernel ? running_kernel : "?",
              running_kernel ? running_kernel : "kernel");
    block_barrier->wait();
}

static void set_block(unsigned long long b, dim3 grid)
{
    blockIdx = dim3((unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y), (unsigned)(b / grid.x / grid.y));
}

void run_blocks(dim3 grid, dim3 block, bool sync, void (*body)(void *), void *ctx)
{
    const char *kernel = scan_kernel;
    mu.unlock();   /* from launch_begin: the checks are done */
    unsigned long long n_blocks = (unsigned long long)grid.x * grid.y * grid.z;
    if (sync) {
        /* One block at a time (its __shared__ arrays are function statics),
         * its threads as real threads meeting at the barrier. */
        for (unsigned long long b = 0; b < n_blocks; b++) {
            barrier bar;
            bar.expected = block.x * block.y * block.z;
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < bar.expected; t++)
                ts.emplace_back([&, t] {
                    gridDim = grid, blockDim = block;
                    set_block(b, grid);
                    threadIdx = dim3(t % block.x, t / block.x % block.y, t / block.x / block.y);
                    running_kernel = kernel, running_sync = true, block_barrier = &bar;
                    body(ctx);
                    bar.leave();
                    running_kernel = nullptr, running_sync = false, block_barrier = nullptr;
                });
            for (auto &t : ts)
                t.join();
        }
        return;
    }
    std::atomic<unsigned long long> next(0);
    auto worker = [&] {
        gridDim = grid, blockDim = block;
        running_kernel = kernel, running_sync = false;
        for (unsigned long long b; (b = next.fetch_add(1)) < n_blocks;) {
            set_block(b, grid);
            for (unsigned z = 0; z < block.z; z++)
                for (unsigned y = 0; y < block.y; y++)
                    for (unsigned x = 0; x < block.x; x++) {
                        threadIdx = dim3(x, y, z);
                        body(ctx);
                    }
        }
        running_kernel = nullptr;
    };
    unsigned long long want = worker_threads();
    unsigned n_workers = (unsigned)(n_blocks < want ? n_blocks : want);
    std::vector<std::thread> ts;
    for (unsigned i = 1; i < n_workers; i++)
        ts.emplace_back(worker);
    worker();
    for (auto &t : ts)
        t.join();
}

} // namespace sebt_host
