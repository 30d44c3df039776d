/* Limits on what a small input may make sebt allocate (core/limits.c).
 * Internal to core.
 *
 * Each limit has a default rule, stated in the message that refuses an
 * input, and an environment variable that replaces it for a run that
 * really needs more (docs/cli.md "Limits"):
 *   SEBT_MAX_GAP_FILL   missing bars --fill-gaps may insert
 *   SEBT_MAX_INFLATE_MB MiB a gzip data file may inflate to
 *   SEBT_MAX_COMBOS     combos a grid or combos file may make
 *   SEBT_MAX_STREAM_MB  MiB read from a file that is not regular (a pipe, a FIFO)
 * The library reads them itself (as the registry reads SEBT_CUDA_LIBRARY),
 * so the hint in a message holds for every caller. */
#ifndef SEBT_CORE_LIMITS_H
#define SEBT_CORE_LIMITS_H

#include <stddef.h>

#include "sebt/types.h"

/* Sets *out to the value of environment variable name (a whole number
 * >= 1), or to dflt when it is unset or empty. *set tells which. A value
 * that is not a whole number >= 1 is a usage error naming the variable. */
#define SEBT_MAX_STREAM_MB_DEFAULT 4096u

sebt_status sebt_env_limit(const char *name, size_t dflt, size_t *out, int *set, sebt_error *err);

#endif
