/* Regression tests for hardening defects: each input
 * below once crashed, silently lost data or changed a value. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/grid.h"
#include "sebt/sebt.h"

/* ---- defect 1: the "missing header column" message overflowed ---------- */

/* Two header fields of 40 control bytes each: every byte is shown as \xNN
 * (4 characters), so the list of names found is longer than its buffer.
 * Under ASan the old code wrote past a stack buffer; here the message must
 * be whole and end with the hint. */
Test(hardening, header_of_control_bytes_gives_a_whole_message)
{
    char text[200];
    size_t o = 0;
    for (int f = 0; f < 2; f++) {
        memset(text + o, 0x01, 40);
        o += 40;
        text[o++] = f == 0 ? ',' : '\n';
    }
    memcpy(text + o, "1\n", 2);
    o += 2;
    sebt_series s;
    sebt_error e = { 0 };
    sebt_status st = sebt_load_csv_buffer("bad.csv", text, o, NULL, &s, &e);
    cr_assert_eq(st, SEBT_ERR_INPUT, "%s", e.msg);
    cr_assert(strncmp(e.msg, "bad.csv:1: the header has no column for time", 44) == 0, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "'\\x01\\x01"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "(names match in any case and order)"), "%s", e.msg);
    cr_assert_lt(strlen(e.msg), sizeof e.msg - 1);
}

/* Many long names: the list is cut at a whole name and says so. */
Test(hardening, header_with_many_long_names_is_cut_at_a_name)
{
    char text[4096];
    size_t o = 0;
    for (int f = 0; f < 30; f++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%scolumn_number_%02d_with_a_long_name", f ? "," : "", f);
    o += (size_t)snprintf(text + o, sizeof text - o, "\n1\n");
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv_buffer("wide.csv", text, o, NULL, &s, &e), SEBT_ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "found 'column_number_00_with_a_long_name', "), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, ", ... (names match"), "%s", e.msg);
    cr_assert_null(strstr(e.msg, "column_number_29"), "%s", e.msg);
}

/* ---- defect 2: a NUL byte dropped the rest of a grid or combos file ------ */

static const char COMBOS_NUL[] = "ema_fast,vol_z\n10,1.5\n20,2.0\0\n30,2.5\n40,3.0\n";
static const char GRID_NUL[] = "vol_z = 1.5, 2.0\n\0ema_fast = 10, 20\n";

Test(hardening, nul_byte_in_combos_is_an_error_naming_line_and_column)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_combos_parse("c.csv", COMBOS_NUL, sizeof COMBOS_NUL - 1, &c, &n, &e), SEBT_ERR_INPUT);
    cr_assert_null(c);
    cr_assert_eq(n, 0);
    cr_assert(strncmp(e.msg, "c.csv:3:7: a NUL byte", 21) == 0, "%s", e.msg);
}

Test(hardening, nul_byte_in_grid_is_an_error_naming_line_and_column)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_grid_parse("g.txt", GRID_NUL, sizeof GRID_NUL - 1, &c, &n, &e), SEBT_ERR_INPUT);
    cr_assert_null(c);
    cr_assert(strncmp(e.msg, "g.txt:2:1: a NUL byte", 21) == 0, "%s", e.msg);
}

/* ---- defect 3: long decimals in a range were cut to 64 characters ------- */

Test(hardening, long_decimal_range_keeps_its_value)
{
    /* 1 followed by 63 zeros, then ".5": 10^63 + 0.5, whose nearest double
     * is the double nearest 10^63 (strtod is the independent judge). */
    char big[80] = "1";
    for (int i = 0; i < 63; i++)
        strcat(big, "0");
    strcat(big, ".5");
    char text[300];
    snprintf(text, sizeof text, "vol_z = %s:%s:1\n", big, big);
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_grid_parse("g.txt", text, strlen(text), &c, &n, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(n, 1);
    cr_assert_eq(c[0].vol_z, strtod(big, NULL), "vol_z = %.17g", c[0].vol_z);
    cr_assert_eq(c[0].vol_z, 1e63);
    free(c);
}

/* A range of long decimals with a fractional step keeps every value: the
 * step is the last digit, so each value is the start plus i steps. */
Test(hardening, long_fractional_range_reads_as_written)
{
    const char *text = "cloc_min = 0.12345678901234567:0.32345678901234567:0.1\n";
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_grid_parse("g.txt", text, strlen(text), &c, &n, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_eq(c[0].cloc_min, strtod("0.12345678901234567", NULL));
    cr_assert_eq(c[1].cloc_min, strtod("0.22345678901234567", NULL));
    cr_assert_eq(c[2].cloc_min, strtod("0.32345678901234567", NULL));
    free(c);
}

/* ---- defect 5: small inputs that asked for gigabytes --------------------- */

#define H "open_time,open,high,low,close,volume\n"

/* Four rows, the last 300 million minutes after the third: --fill-gaps
 * would insert 299,999,999 bars (14 GB). */
static const char GAP_TYPO[] = H "1609459200000,1,1,1,1,1\n1609459260000,1,1,1,1,1\n1609459320000,1,1,1,1,1\n"
                                 "19609459320000,1,1,1,1,1\n";

Test(hardening, fill_gaps_refuses_a_gap_far_larger_than_the_file)
{
    sebt_load_opts o = { .fill_gaps = true };
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv_buffer("t.csv", GAP_TYPO, strlen(GAP_TYPO), &o, &s, &e), SEBT_ERR_INPUT);
    cr_assert(strncmp(e.msg, "t.csv:5:1 (open_time): filling the gaps would insert 299999999 missing bars "
                             "into 4 rows, more than the limit of 1000000", 110) == 0, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "set SEBT_MAX_GAP_FILL=N"), "%s", e.msg);
    cr_assert_null(s.ts);
}

Test(hardening, fill_gaps_limit_is_lifted_and_tightened_by_the_environment)
{
    /* Three rows a minute apart, then a gap of 9 missing minutes. */
    const char *text = H "1609459200000,1,1,1,1,1\n1609459260000,1,1,1,1,1\n1609459320000,1,1,1,1,1\n"
                         "1609459920000,1,1,1,1,1\n";
    sebt_load_opts o = { .fill_gaps = true };
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(setenv("SEBT_MAX_GAP_FILL", "8", 1), 0);
    cr_assert_eq(sebt_load_csv_buffer("t.csv", text, strlen(text), &o, &s, &e), SEBT_ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "would insert 9 missing bars, more than SEBT_MAX_GAP_FILL=8"), "%s", e.msg);
    cr_assert_eq(setenv("SEBT_MAX_GAP_FILL", "9", 1), 0);
    cr_assert_eq(sebt_load_csv_buffer("t.csv", text, strlen(text), &o, &s, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(s.n, 13);
    cr_assert_eq(s.n_gap_filled, 9);
    sebt_series_free(&s);
    cr_assert_eq(setenv("SEBT_MAX_GAP_FILL", "lots", 1), 0);
    cr_assert_eq(sebt_load_csv_buffer("t.csv", text, strlen(text), &o, &s, &e), SEBT_ERR_USAGE);
    cr_assert_not_null(strstr(e.msg, "SEBT_MAX_GAP_FILL='lots': expected a whole number"), "%s", e.msg);
}

Test(hardening, gzip_bomb_is_refused_at_the_inflate_limit)
{
    sebt_series s;
    sebt_error e = { 0 };
    sebt_status st = sebt_load_csv(SEBT_FIXTURES_DIR "/loader/bomb.csv.gz", NULL, &s, &e);
    if (st == SEBT_ERR_UNAVAILABLE)
        cr_skip_test("built without zlib");
    cr_assert_eq(st, SEBT_ERR_INPUT, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "inflates past 64 MiB, more than the limit of 20 times its size"), "%s",
                       e.msg);
    cr_assert_not_null(strstr(e.msg, "SEBT_MAX_INFLATE_MB=N"), "%s", e.msg);
    /* Allowed, it inflates to 65 MiB of newlines: an empty file. */
    cr_assert_eq(setenv("SEBT_MAX_INFLATE_MB", "65", 1), 0);
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/loader/bomb.csv.gz", NULL, &s, &e), SEBT_ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "the file is empty"), "%s", e.msg);
    cr_assert_eq(setenv("SEBT_MAX_INFLATE_MB", "64", 1), 0);
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/loader/bomb.csv.gz", NULL, &s, &e), SEBT_ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "inflates past SEBT_MAX_INFLATE_MB=64 MiB"), "%s", e.msg);
}

Test(hardening, grid_range_past_the_combo_limit_is_refused_before_it_is_made)
{
    const char *text = "fee_bp=1:20000000:1\n";
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_grid_parse("g.txt", text, strlen(text), &c, &n, &e), SEBT_ERR_INPUT);
    cr_assert(strncmp(e.msg, "g.txt:1: parameter fee_bp: the range 1:20000000:1 has 20000000 values, more than "
                             "the limit of 1000000 combos", 105) == 0, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "set SEBT_MAX_COMBOS=N"), "%s", e.msg);
    cr_assert_null(c);
}

Test(hardening, grid_product_past_the_limit_names_the_line)
{
    const char *text = "fee_bp=1:1000:1\n# x\nslippage_bp=1:1000:1\nvol_z=1, 2\n";
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_grid_parse("g.txt", text, strlen(text), &c, &n, &e), SEBT_ERR_INPUT);
    cr_assert(strncmp(e.msg, "g.txt:4: with the 2 values of vol_z the grid has 2000000 combos", 62) == 0, "%s",
              e.msg);
    cr_assert_eq(setenv("SEBT_MAX_COMBOS", "2000000", 1), 0);
    cr_assert_eq(sebt_grid_parse("g.txt", text, strlen(text), &c, &n, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(n, 2000000);
    /* The last combo: every axis at its last value. */
    cr_assert_eq(c[n - 1].fee_bp, 1000);
    cr_assert_eq(c[n - 1].slippage_bp, 1000);
    cr_assert_eq(c[n - 1].vol_z, 2);
    free(c);
}

Test(hardening, combos_file_past_the_limit_is_refused)
{
    const char *text = "vol_z\n1\n2\n3\n";
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(setenv("SEBT_MAX_COMBOS", "2", 1), 0);
    cr_assert_eq(sebt_combos_parse("c.csv", text, strlen(text), &c, &n, &e), SEBT_ERR_INPUT);
    cr_assert_str_eq(e.msg, "c.csv:4: the file has another combo, more than SEBT_MAX_COMBOS=2");
    cr_assert_eq(setenv("SEBT_MAX_COMBOS", "3", 1), 0);
    cr_assert_eq(sebt_combos_parse("c.csv", text, strlen(text), &c, &n, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_eq(c[2].vol_z, 3);
    free(c);
}

/* A combos file of many rows grows its array as it reads (it was sized by
 * lines): 200 rows in order. */
Test(hardening, combos_file_of_many_rows_reads_in_order)
{
    char text[4096] = "max_hold\n";
    for (int i = 1; i <= 200; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d\n\n", i);
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_combos_parse("c.csv", text, strlen(text), &c, &n, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(n, 200);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(c[i].max_hold, i + 1);
    free(c);
}
