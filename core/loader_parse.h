/* Field parsers of the CSV loader (core/loader.c): numbers and timestamps.
 * Internal to core; they work on (pointer, length) slices of the file, which
 * is not NUL-terminated between fields. */
#ifndef SEBT_LOADER_PARSE_H
#define SEBT_LOADER_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LOADER_NUM_OK = 0,
    LOADER_NUM_EMPTY,   /* nothing in the field */
    LOADER_NUM_SYNTAX,  /* not a decimal number */
    LOADER_NUM_NAN,     /* "nan" in any case: a missing value */
    LOADER_NUM_INF,     /* "inf"/"infinity", either sign */
    LOADER_NUM_RANGE    /* a decimal number too large for a double */
} loader_num_status;

/* Parses [+-]digits[.digits][(e|E)[+-]digits] into the correctly rounded
 * double, as strtod does in the C locale. Hex floats are not numbers here. */
loader_num_status loader_parse_double(const char *s, size_t len, double *out);

/* How a timestamp was written. A file uses one kind throughout. */
typedef enum {
    LOADER_TS_SECONDS = 0,
    LOADER_TS_MILLIS,
    LOADER_TS_MICROS,
    LOADER_TS_NANOS,
    LOADER_TS_ISO
} loader_ts_kind;

/* Parses an epoch number (unit told by magnitude) or an ISO-8601 date-time
 * into ms since the epoch. Returns NULL on success, else a static phrase
 * saying what was wrong ("is not a valid date ..."). */
const char *loader_parse_time(const char *s, size_t len, int64_t *ms, loader_ts_kind *kind);
const char *loader_ts_kind_name(loader_ts_kind kind);

/* ms since the epoch as ISO-8601 UTC with milliseconds
 * ("2021-01-01T00:00:00.000Z"); buf needs 32 bytes. Returns false when the
 * year falls outside 0000..9999 (buf then holds the plain number). */
bool loader_format_time(int64_t ms, char *buf, size_t bufsize);

/* Files whose rows span at least twice this many bytes are parsed in
 * chunks on several threads (core/loader.c); 0 parses on one. Tests and the
 * fuzz harness lower it to put chunk ends everywhere. */
extern size_t loader_chunk_min_bytes;
/* At most this many chunks (up to 8); 0: the online CPUs. */
extern size_t loader_chunk_threads;
/* Loads whose chunks all agreed (the tests' proof that chunks ran). */
extern _Atomic size_t loader_chunked_loads;

#endif
