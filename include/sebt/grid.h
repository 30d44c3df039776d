/* Parameter grids and combo lists: what `sebt sweep`, `sebt parity` and the
 * benchmarks read (core/grid.c).
 *
 * A grid file names, one per line, a parameter and its values:
 *     # comments and blank lines are ignored
 *     vol_z    = 1.5, 2.0, 2.5        a list
 *     ema_fast = 24:192:24            a range start:stop:step, stop included
 *                                     when it lands on the step
 *     use_stop = true, false
 * Parameters not named keep their SPEC §2 defaults. The combos are the
 * cartesian product in file order: the first parameter of the file varies
 * slowest, the last fastest.
 *
 * A combos file is CSV: a header of parameter names (any subset, in any
 * order; the others keep their defaults), then one combo per row.
 *
 * Errors name file:line and the parameter. Every value is checked against
 * its SPEC §2 rule while parsing: an impossible combo is an error, never a
 * skipped row. */
#ifndef SEBT_GRID_H
#define SEBT_GRID_H

#include <stddef.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* More combos than this in one grid or combos file is an error, refused
 * before they are made (each combo costs about 300 bytes of parameters and
 * results, and its backtest, before a sweep prints anything). The
 * environment variable SEBT_MAX_COMBOS=N replaces it (docs/cli.md "Limits"). */
#define SEBT_GRID_MAX_COMBOS ((size_t)1000000)

/* On success *out is malloc'd (free it) and holds *n_out combos (>= 1). */
sebt_status sebt_grid_parse(const char *name, const char *text, size_t len, sebt_params **out,
                            size_t *n_out, sebt_error *err);
sebt_status sebt_grid_load(const char *path, sebt_params **out, size_t *n_out, sebt_error *err);

/* A grid read without making its combos (what a streamed `sebt sweep`
 * uses): memory is its axes' values, whatever the product. The combos are
 * made on demand, combo first..first+n-1 of sebt_grid_load's order into
 * out. No SEBT_MAX_COMBOS cap (it guards memory): a product above
 * SEBT_GRID_MAX_STREAMED is refused. */
#define SEBT_GRID_MAX_STREAMED ((size_t)1 << 40)
typedef struct sebt_grid sebt_grid;
sebt_status sebt_grid_open(const char *path, sebt_grid **out, size_t *n_out, sebt_error *err);
void sebt_grid_combos(const sebt_grid *g, size_t first, size_t n, sebt_params *out);
void sebt_grid_close(sebt_grid *g);

sebt_status sebt_combos_parse(const char *name, const char *text, size_t len, sebt_params **out,
                              size_t *n_out, sebt_error *err);
sebt_status sebt_combos_load(const char *path, sebt_params **out, size_t *n_out, sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
