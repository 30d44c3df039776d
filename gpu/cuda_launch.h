/* One way to launch a kernel in gpu/, whatever compiles it:
 *
 *   SEBT_LAUNCH(kernel, grid, block)(args...);
 *
 * is kernel<<<grid, block>>>(args...) under nvcc, and the checking host
 * launcher of gpu/host/cuda_runtime.h under the host compiler (host
 * execution: blocks in parallel on CPU threads, threads in order). A kernel
 * that calls __syncthreads is declared once after its definition with
 * SEBT_SYNC_KERNEL(kernel) so host execution runs its threads as real
 * threads; nvcc ignores the declaration. Kernel bodies never fork on the
 * compiler. */
#ifndef SEBT_CUDA_LAUNCH_H
#define SEBT_CUDA_LAUNCH_H

#include <cuda_runtime.h>

#ifdef SEBT_CUDA_HOST_EXECUTION
#define SEBT_LAUNCH(kernel, grid, block) SEBT_HOST_LAUNCH(kernel, grid, block)
#define SEBT_SYNC_KERNEL(kernel) SEBT_HOST_SYNC_KERNEL(kernel)
#else
#define SEBT_LAUNCH(kernel, grid, block) kernel<<<(grid), (block)>>>
#define SEBT_SYNC_KERNEL(kernel)
#endif

#endif
