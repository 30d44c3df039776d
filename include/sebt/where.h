/* Constraints over a sweep's columns: `--where 'n >= 30 and max_dd > -0.2'`
 * (core/where.c; the language is documented in docs/cli.md).
 *
 * A condition is compiled once against the caller's list of column names,
 * each a number or a boolean, and then evaluated per row from the row's
 * values in that list's order. The language is small on purpose: column
 * names, numbers, true/false, the comparisons < <= > >= == !=, and, or,
 * not, parentheses and a leading minus on a number. A comparison with NaN
 * is false (so is `!=`): a row whose metric is undefined never passes a
 * bound on it. */
#ifndef SEBT_WHERE_H
#define SEBT_WHERE_H

#include <stdbool.h>
#include <stddef.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest condition text accepted, and the most terms in one condition:
 * whatever a user types stays far below both, and a hostile one cannot
 * make the compiler allocate more. */
#define SEBT_WHERE_MAX_TEXT 4096
#define SEBT_WHERE_MAX_OPS 512

typedef struct sebt_where sebt_where;

/* Compiles text against n_columns names (is_bool[i]: column i holds 0 or
 * 1 and compares only with true/false; NULL: every column is a number).
 * On SEBT_ERR_USAGE err says where in the text and what is wrong (an
 * unknown name with the nearest known one). */
sebt_status sebt_where_compile(const char *text, const char *const *names, const bool *is_bool, size_t n_columns,
                               sebt_where **out, sebt_error *err);

/* Whether the row passes; values[i] is column i. Only the columns the
 * condition names are read (sebt_where_uses). */
bool sebt_where_eval(const sebt_where *w, const double *values);

/* Whether the condition reads column i. */
bool sebt_where_uses(const sebt_where *w, size_t column);

/* The text it was compiled from. */
const char *sebt_where_text(const sebt_where *w);

void sebt_where_free(sebt_where *w);

#ifdef __cplusplus
}
#endif

#endif
