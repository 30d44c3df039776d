/* Reading a data file's bytes (core/loader_io.c). Internal to core. */
#ifndef SEBT_LOADER_IO_H
#define SEBT_LOADER_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "sebt/sebt.h"

/* True when the bytes start with the gzip magic 1f 8b. */
bool loader_is_gzip(const char *data, size_t len);

/* Loads a file's bytes, already read, as sebt_load_csv would (path names
 * it in messages and says whether it should be gzip). */
sebt_status loader_load_bytes(const char *path, const char *data, size_t len, const sebt_load_opts *opts,
                              sebt_series *out, sebt_error *err);

#ifdef SEBT_HAVE_ZLIB
/* Inflates every gzip member of in (cat a.gz b.gz is one stream) into a
 * malloc'd buffer; a truncated or corrupt stream is an input error naming
 * name. Output past limit bytes is an input error with *out_len > limit
 * (and nothing allocated past limit + 1 bytes). */
sebt_status loader_gunzip(const char *name, const char *in, size_t in_len, size_t limit, char **out,
                          size_t *out_len, sebt_error *err);
#endif

#endif
