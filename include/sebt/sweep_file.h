/* Reading a sweep's output back (core/sweep_file.c): the row of one combo
 * of a CSV or npy file that `sebt sweep` wrote, so that a chosen combo can
 * be run again with its trades (`sebt run --combo FILE:ID`) and its
 * metrics compared with what the sweep wrote. */
#ifndef SEBT_SWEEP_FILE_H
#define SEBT_SWEEP_FILE_H

#include <stdint.h>

#include "sebt/shard.h"
#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest CSV line read: a sweep's rows are a few hundred bytes, and a
 * file with longer lines is not one (its reading never grows a buffer). */
#define SEBT_SWEEP_FILE_LINE_MAX 8192

/* Finds combo (its 0-based input index, the `combo` column) in path, a
 * sweep's CSV or npy (told apart by content), and fills p with its
 * parameters (a parameter the file has no column for keeps its SPEC §2
 * default: files written before it existed) and rec with its metrics,
 * valid_bars and open_at_end, and, where the file has every analysis
 * column (`sebt sweep --analysis`), its analysis (rec->has_analysis; its
 * years is 0). Columns the reader does not know are
 * skipped. Errors: SEBT_ERR_IO (cannot read), SEBT_ERR_INPUT (not a
 * sweep's output, a malformed row, or no row of that combo: err names the
 * file, the line or row, and what). */
sebt_status sebt_sweep_file_combo(const char *path, uint64_t combo, sebt_params *p, sebt_sweep_record *rec,
                                  sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
