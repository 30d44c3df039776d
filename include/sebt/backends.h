/* The backends compiled into libsebt. Each lives in its own folder and
 * depends only on the public types; the registry (core/registry.c) lists
 * them. The cuda backend is not here: it is a separate shared library that
 * the registry opens with dlopen, so a CPU-only process never maps CUDA. */
#ifndef SEBT_BACKENDS_H
#define SEBT_BACKENDS_H

#include "sebt/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const sebt_backend sebt_reference_backend;   /* reference/ */
extern const sebt_backend sebt_fast_cpu_backend;    /* fast_cpu/  */

/* Entry point that gpu/libsebt_cuda.so exports; the registry looks it up
 * with dlsym. Returns NULL and fills err when no device is usable. */
typedef const sebt_backend *(*sebt_cuda_open_fn)(sebt_error *err);
#define SEBT_CUDA_OPEN_SYMBOL "sebt_cuda_open"

#ifdef __cplusplus
}
#endif

#endif
