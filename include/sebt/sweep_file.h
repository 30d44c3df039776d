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
 * years is 0). The file must name its combo exactly: a column sebt never
 * writes (a misspelt parameter would run at its default), a column twice,
 * the combo on two rows, an npy header not to the letter of the format
 * (docs/reliability.md) are refused, naming the column (and the nearest
 * name sebt writes), the rows or what in the header. A UTF-8 byte order
 * mark before a CSV's header is skipped. Errors: SEBT_ERR_IO (cannot read),
 * SEBT_ERR_INPUT (a folder or device, not a sweep's output, a malformed
 * row, or no row of that combo: err names the file, the line or row, and
 * what). */
sebt_status sebt_sweep_file_combo(const char *path, uint64_t combo, sebt_params *p, sebt_sweep_record *rec,
                                  sebt_error *err);
/* The same, and param_column[i] (when not NULL) says whether the file has
 * a column for parameter i (one it lacks is at its default), so that a run
 * that disagrees with the row can name the columns it lacked. */
sebt_status sebt_sweep_file_combo_columns(const char *path, uint64_t combo, sebt_params *p, sebt_sweep_record *rec,
                                          bool param_column[SEBT_N_PARAMS], sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
