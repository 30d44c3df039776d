/* Series whose six arrays lie in one file mapping instead of six
 * allocations (core/series.c): the series cache maps an entry rather than
 * copying it (core/series_cache.c), and sebt_series_free unmaps it. Internal
 * to the library. */
#ifndef SEBT_CORE_SERIES_MAP_H
#define SEBT_CORE_SERIES_MAP_H

#include <stdbool.h>
#include <stddef.h>

/* Records that the series whose ts array is ts lives in the mapping
 * [base, base+len). False when too many are mapped at once: the caller
 * then unmaps and copies instead. */
bool series_map_register(const void *ts, void *base, size_t len);

#endif
