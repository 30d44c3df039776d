/* What a sweep's output file may hold, checked the same way by each reader
 * of one (sweep_file.c: a combo's row for `run --combo`; sweep_read.c: the
 * columns a picture needs): every column a name sebt writes, none twice,
 * and an npy header parsed to the letter. A file that breaks any of these
 * is not what `sebt sweep` wrote, and reading it anyway would run or draw
 * something else than it names. Internal to the library. */
#ifndef SEBT_SWEEP_COLUMNS_H
#define SEBT_SWEEP_COLUMNS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sebt/types.h"

#define SWEEP_FILE_MAX_COLUMNS 128
#define SWEEP_COLUMN_NAME_MAX 64

typedef enum { SWEEP_COL_COMBO, SWEEP_COL_PARAM, SWEEP_COL_METRIC, SWEEP_COL_OPEN, SWEEP_COL_VALID,
               SWEEP_COL_ANALYSIS } sweep_col_kind;

/* The kind of a column sebt writes and its parameter, metric or analysis
 * index; false for a name sebt never writes. */
bool sweep_column_kind(const char *name, sweep_col_kind *kind, int *index);

/* Every name one sebt writes, none twice; else SEBT_ERR_INPUT naming
 * where (a file and its line, or its npy header), the column by number
 * and name, and the nearest name sebt writes. */
sebt_status sweep_columns_check(const char *where, const char *const *names, size_t n, sebt_error *err);

/* Opens path for reading through sebt_open_input: a folder, a device or a
 * socket is refused, named (a folder once read as "empty"); a FIFO or pipe
 * only where stream_ok (a reader that keeps one row at a time). */
FILE *sweep_file_open(const char *path, bool stream_ok, sebt_error *err);

/* The header line past a UTF-8 byte order mark (spreadsheets write one;
 * the data, grid and combos readers skip it too). line is NUL-terminated. */
char *sweep_skip_bom(char *line);

typedef struct {
    char name[SWEEP_COLUMN_NAME_MAX];
    char type;             /* 'u', 'i', 'f', 'b' */
    size_t bytes, offset;
} sweep_npy_field;

typedef struct {
    sweep_npy_field field[SWEEP_FILE_MAX_COLUMNS];
    size_t n_fields, row_bytes;
    uint64_t n_rows;
} sweep_npy_layout;

/* Reads the npy preamble and header at f's start and leaves f at the first
 * row. The header must be one dict of exactly 'descr' (a list of
 * ('name', 'dtype') of little-endian numbers), 'fortran_order': False and
 * 'shape': (N,) with N digits, closed by '}' and padded with spaces to its
 * '\n'; each field's name must pass sweep_columns_check. */
sebt_status sweep_npy_read_header(FILE *f, const char *path, sweep_npy_layout *out, sebt_error *err);

#endif
