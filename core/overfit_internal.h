/* PBO's walk with its chunk of combos chosen by the caller (core/overfit.c). */
#ifndef SEBT_OVERFIT_INTERNAL_H
#define SEBT_OVERFIT_INTERNAL_H

#include <stddef.h>

#include "sebt/overfit.h"

/* The float filter's widths: plain C, 8 lanes (AVX2), 16 (AVX-512). */
enum { PBO_PLAIN, PBO_AVX2, PBO_AVX512 };

/* sebt_pbo_compute with chunk combos to a chunk (0: its own choice) and
 * the float filter no wider than widest (sebt_pbo_compute: PBO_AVX512, the
 * widest the machine runs): the same bits whatever the chunk and the
 * width. Tests cut the combos finely, so that bests change late in the
 * walk and counts are redone, and run each width. */
sebt_status pbo_compute_chunked(const double *stats, size_t n_combos, int s, int threads, size_t chunk, int widest,
                                sebt_pbo *out, sebt_error *err);

#endif
