/* Numbers as sebt writes them (core/number.c): the shortest decimal that
 * reads back (strtod, correctly rounded) to the same double, laid out as
 * C's %.17g would lay out those digits: 0.6 (not 0.59999999999999998),
 * 100, 1e+17, 1.5e-05, -0. Non-finite values are nan, inf and -inf.
 *
 * The digits come from the C++17 library's std::to_chars where the build
 * has it, else from a portable search over printf's correctly rounded
 * %.*e: the two write the same bytes (checked by core's tests). */
#ifndef SEBT_NUMBER_H
#define SEBT_NUMBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest text sebt_format_double writes, with its terminating NUL
 * ("-2.2250738585072014e-308" is 24 characters). */
#define SEBT_DOUBLE_CHARS 32

/* Writes v into buf (NUL-terminated); returns its length. */
size_t sebt_format_double(double v, char buf[SEBT_DOUBLE_CHARS]);

/* The same through the portable search only (what a build without
 * std::to_chars uses); for tests that compare the two. */
size_t sebt_format_double_portable(double v, char buf[SEBT_DOUBLE_CHARS]);

/* Writes the decimal digits of v into buf (no NUL); returns their count
 * (at most 20). */
size_t sebt_format_u64(unsigned long long v, char *buf);

#ifdef __cplusplus
}
#endif

#endif
