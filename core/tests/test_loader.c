/* The CSV loader (core/loader.c): what it reads, every error it reports
 * (with the exact file:line:column), lenient and fill_gaps counts worked
 * out by hand, the bundled real data, and the write/read round trip. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"

#define H "open_time,open,high,low,close,volume\n"
#define T0 1609459200000LL /* 2021-01-01T00:00:00Z */
#define MIN 60000LL

static const sebt_load_opts STRICT = { .lenient = false, .fill_gaps = false };
static const sebt_load_opts LENIENT = { .lenient = true, .fill_gaps = false };
static const sebt_load_opts FILL = { .lenient = false, .fill_gaps = true };
static const sebt_load_opts LENIENT_FILL = { .lenient = true, .fill_gaps = true };

static sebt_series load_ok(const char *text, sebt_load_opts o)
{
    sebt_series s;
    sebt_error e = { 0 };
    sebt_status st = sebt_load_csv_buffer("t.csv", text, strlen(text), &o, &s, &e);
    cr_assert_eq(st, SEBT_OK, "load failed: %s", e.msg);
    return s;
}

/* Loading fails with an input error whose message starts with where and
 * says what; nothing is left allocated. */
static void load_fails(const char *text, sebt_load_opts o, const char *where, const char *what)
{
    sebt_series s;
    sebt_error e = { 0 };
    sebt_status st = sebt_load_csv_buffer("t.csv", text, strlen(text), &o, &s, &e);
    cr_assert_eq(st, SEBT_ERR_INPUT, "expected an input error, got status %d: '%s'", st, e.msg);
    cr_assert(strncmp(e.msg, where, strlen(where)) == 0, "message '%s' does not start with '%s'", e.msg,
              where);
    cr_assert(strstr(e.msg, what) != NULL, "message '%s' does not say '%s'", e.msg, what);
    cr_assert_eq(s.n, 0);
    cr_assert_null(s.ts);
}

static void assert_bar(const sebt_series *s, size_t t, long long ts, double o, double h, double l, double c,
                       double v)
{
    cr_assert_eq(s->ts[t], ts, "bar %zu: ts %lld, expected %lld", t, (long long)s->ts[t], ts);
    cr_assert_eq(s->open[t], o, "bar %zu open", t);
    cr_assert_eq(s->high[t], h, "bar %zu high", t);
    cr_assert_eq(s->low[t], l, "bar %zu low", t);
    cr_assert_eq(s->close[t], c, "bar %zu close", t);
    cr_assert_eq(s->volume[t], v, "bar %zu volume", t);
}

static void assert_missing(const sebt_series *s, size_t t, long long ts)
{
    cr_assert_eq(s->ts[t], ts, "bar %zu: ts %lld, expected %lld", t, (long long)s->ts[t], ts);
    cr_assert(sebt_series_is_missing(s, t), "bar %zu should be missing", t);
}

/* ---- what it reads ------------------------------------------------------- */

Test(loader, header_csv)
{
    sebt_series s = load_ok(H "1609459200000,10,12,9,11,100\n"
                              "1609459260000,11,13,10,12.5,50.25\n", STRICT);
    cr_assert_eq(s.n, 2);
    assert_bar(&s, 0, T0, 10, 12, 9, 11, 100);
    assert_bar(&s, 1, T0 + MIN, 11, 13, 10, 12.5, 50.25);
    cr_assert_eq(s.interval_ms, MIN);
    cr_assert_eq(s.n_missing, 0);
    cr_assert_eq(s.n_rejected, 0);
    cr_assert_eq(s.n_gap_filled, 0);
    sebt_series_free(&s);
}

Test(loader, any_case_any_order_extra_columns)
{
    sebt_series s = load_ok("Volume,trades,CLOSE,Low,hIGH,Open,note,TimeStamp\n"
                            "100,7,11,9,12,10,x,1609459200000\n", STRICT);
    cr_assert_eq(s.n, 1);
    assert_bar(&s, 0, T0, 10, 12, 9, 11, 100);
    sebt_series_free(&s);
}

Test(loader, every_time_column_name)
{
    const char *names[] = { "open_time", "timestamp", "time", "date", "datetime", "DateTime" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, "%s,open,high,low,close,volume\n1609459200000,10,12,9,11,100\n", names[i]);
        sebt_series s = load_ok(text, STRICT);
        cr_assert_eq(s.n, 1, "%s", names[i]);
        cr_assert_eq(s.ts[0], T0, "%s", names[i]);
        sebt_series_free(&s);
    }
}

Test(loader, crlf_bom_blank_lines_quotes_and_spaces)
{
    sebt_series s = load_ok("\xEF\xBB\xBF\"open_time\", \"open\" ,high,low,close,volume\r\n"
                            "\r\n"
                            "1609459200000, 10 ,\t12,9,11,\"100\"\r\n"
                            "\n"
                            "1609459260000,11,13,10,12.5,50.25", STRICT);
    cr_assert_eq(s.n, 2);
    assert_bar(&s, 0, T0, 10, 12, 9, 11, 100);
    assert_bar(&s, 1, T0 + MIN, 11, 13, 10, 12.5, 50.25);
    sebt_series_free(&s);
}

Test(loader, epoch_units_by_magnitude)
{
    const char *stamps[] = { "1609459200", "1609459200000", "1609459200000000", "1609459200000000000",
                             "1609459200.000", "1609459200000.0" };
    for (size_t i = 0; i < sizeof stamps / sizeof stamps[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, H "%s,10,12,9,11,100\n", stamps[i]);
        sebt_series s = load_ok(text, STRICT);
        cr_assert_eq(s.ts[0], T0, "'%s' read as %lld", stamps[i], (long long)s.ts[0]);
        sebt_series_free(&s);
    }
    /* Seconds with a fraction keep it to the millisecond. */
    sebt_series s = load_ok(H "1609459200.25,10,12,9,11,100\n1609459201.5,10,12,9,11,100\n", STRICT);
    cr_assert_eq(s.ts[0], T0 + 250);
    cr_assert_eq(s.ts[1], T0 + 1500);
    sebt_series_free(&s);
    /* 1e11 is the first millisecond value, 99999999999 the last seconds. */
    s = load_ok(H "99999999999,10,12,9,11,100\n", STRICT);
    cr_assert_eq(s.ts[0], 99999999999000LL);
    sebt_series_free(&s);
    s = load_ok(H "100000000000,10,12,9,11,100\n", STRICT);
    cr_assert_eq(s.ts[0], 100000000000LL);
    sebt_series_free(&s);
}

Test(loader, iso_8601)
{
    sebt_series s = load_ok("date,open,high,low,close,volume\n"
                            "2021-01-01T00:00:00Z,10,12,9,11,100\n"
                            "2021-01-01 00:01:00,10,12,9,11,100\n"
                            "2021-01-01T00:02:00.000+00:00,10,12,9,11,100\n"
                            "2021-01-01T02:03:00+02:00,10,12,9,11,100\n"
                            "2020-12-31T23:04:00-0100,10,12,9,11,100\n"
                            "2021-01-01t00:05:00.5z,10,12,9,11,100\n"
                            "2021-01-01T00:06,10,12,9,11,100\n"
                            "2021-01-02,10,12,9,11,100\n", STRICT);
    cr_assert_eq(s.n, 8);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(s.ts[i], T0 + i * MIN, "row %d: %lld", i, (long long)s.ts[i]);
    cr_assert_eq(s.ts[5], T0 + 5 * MIN + 500);
    cr_assert_eq(s.ts[6], T0 + 6 * MIN);
    cr_assert_eq(s.ts[7], 1609545600000LL);
    sebt_series_free(&s);
    s = load_ok("date,open,high,low,close,volume\n2020-02-29,10,12,9,11,100\n", STRICT);
    cr_assert_eq(s.ts[0], 1582934400000LL);
    sebt_series_free(&s);
}

Test(loader, raw_binance_kline_file)
{
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2018-02-08.raw.csv", NULL, &s, &e), SEBT_OK,
                 "%s", e.msg);
    cr_assert_eq(s.n, 29);
    assert_bar(&s, 0, 1518048000000LL, 7599.0, 7600.0, 7572.09, 7587.56, 16.948552);
    assert_bar(&s, 28, 1518049680000LL, 7790.0, 7794.91, 7783.81, 7784.02, 8.153564);
    cr_assert_eq(s.interval_ms, MIN);
    cr_assert_eq(s.n_missing, 0);
    sebt_series_free(&s);
}

Test(loader, raw_binance_microseconds)
{
    /* Binance's spot files from 2025 on count open_time in microseconds. */
    sebt_series s = load_ok("1735689600000000,93576.00,93610.93,93537.50,93610.93,8.21827,"
                            "1735689659999999,768978.2,1317,3.07,287257.8,0\n"
                            "1735689660000000,93610.93,93652.00,93606.88,93649.99,11.58,"
                            "1735689719999999,1084270.1,2186,6.13,574076.3,0\n", STRICT);
    cr_assert_eq(s.n, 2);
    assert_bar(&s, 0, 1735689600000LL, 93576.0, 93610.93, 93537.5, 93610.93, 8.21827);
    cr_assert_eq(s.ts[1], 1735689660000LL);
    sebt_series_free(&s);
}

Test(loader, header_only_is_zero_bars)
{
    sebt_series s = load_ok(H, STRICT);
    cr_assert_eq(s.n, 0);
    cr_assert_eq(s.interval_ms, 0);
    sebt_series_free(&s);
    s = load_ok(H, LENIENT_FILL);
    cr_assert_eq(s.n, 0);
    sebt_series_free(&s);
}

Test(loader, nan_row_is_a_missing_bar)
{
    sebt_series s = load_ok(H "1609459200000,10,12,9,11,100\n"
                              "1609459260000,nan,NaN,nan,nan,NAN\n"
                              "1609459320000,10,12,9,11,100\n", STRICT);
    cr_assert_eq(s.n, 3);
    assert_missing(&s, 1, T0 + MIN);
    cr_assert_eq(s.n_missing, 1);
    cr_assert_eq(s.n_rejected, 0);
    sebt_series_free(&s);
}

/* ---- errors: one per kind, each at its file:line:column ------------------ */

#define ROW2 "1609459200000,10,12,9,11,100\n"

/* Files refused, each with the message's start (where) and what it says:
 * the text, whether loading was lenient, where, what. */
static const struct {
    const char *text;
    bool lenient;
    const char *where, *what;
} refused[] = {
    /* not a number */
    { H ROW2 "1609459260000,10,abc,9,11,100\n", false, "t.csv:3:3 (high): ", "expected a number, got 'abc'" },
    /* empty field */
    { H ROW2 "1609459260000,10,12,,11,100\n", false, "t.csv:3:4 (low): ", "expected a number, got an empty field" },
    /* short row */
    { H ROW2 "1609459260000,10,12,9\n", false, "t.csv:3:5 (close): ",
      "the row ends after 4 field(s); expected 6 as in the header" },
    /* long row */
    { H ROW2 "1609459260000,10,12,9,11,100,7\n", false, "t.csv:3:7 (extra field): ",
      "the row has 7 fields; expected 6 as in the header" },
    /* row without its time */
    { "open,high,low,close,volume,time\n10,12,9,11,100\n", true, "t.csv:2:6 (time): ", "before its time" },
    /* timestamp out of order */
    { H ROW2 "1609459260000,10,12,9,11,100\n1609459140000,10,12,9,11,100\n", false, "t.csv:4:1 (open_time): ",
      "timestamp '1609459140000' (2020-12-31T23:59:00.000Z) is before line 3's "
      "(2021-01-01T00:01:00.000Z)" },
    /* timestamp repeated */
    { H ROW2 ROW2, false, "t.csv:3:1 (open_time): ",
      "timestamp '1609459200000' (2021-01-01T00:00:00.000Z) repeats line 2's" },
    /* timestamp not a time */
    { H ROW2 "yesterday,10,12,9,11,100\n", false, "t.csv:3:1 (open_time): ",
      "expected a timestamp: epoch seconds, ms, us or ns, or ISO-8601 like "
      "2021-01-01T00:00:00Z, got 'yesterday'" },
    { H ROW2 ",10,12,9,11,100\n", false, "t.csv:3:1 (open_time): ", "expected a timestamp, got an empty field" },
    { H "-1609459200000,10,12,9,11,100\n", false, "t.csv:2:1 (open_time): ", "is signed" },
    /* timestamp finer than a millisecond */
    { H "1609459200.0005,10,12,9,11,100\n", false, "t.csv:2:1 (open_time): ", "is finer than a millisecond" },
    { H "1609459200000500,10,12,9,11,100\n", false, "t.csv:2:1 (open_time): ", "is not a whole millisecond" },
    { "date,open,high,low,close,volume\n2021-01-01T00:00:00.0005Z,10,12,9,11,100\n", false, "t.csv:2:1 (date): ",
      "finer than a millisecond" },
    /* iso not a date */
    { "date,open,high,low,close,volume\n2021-02-29,10,12,9,11,100\n", false, "t.csv:2:1 (date): ", "no such day" },
    { "date,open,high,low,close,volume\n2021-13-01,10,12,9,11,100\n", false, "t.csv:2:1 (date): ",
      "month outside 01..12" },
    { "date,open,high,low,close,volume\n2021-01-01T24:00:00Z,10,12,9,11,100\n", false, "t.csv:2:1 (date): ",
      "not a valid time of day" },
    { "date,open,high,low,close,volume\n2021-01-01T00:00:00+25:00,10,12,9,11,100\n", false, "t.csv:2:1 (date): ",
      "UTC offset" },
    { "date,open,high,low,close,volume\n2021-01-01T00:00:00 UTC,10,12,9,11,100\n", false, "t.csv:2:1 (date): ",
      "got '2021-01-01T00:00:00 UTC'" },
    /* mixed timestamp kinds */
    { H ROW2 "1609459260,10,12,9,11,100\n", false, "t.csv:3:1 (open_time): ",
      "'1609459260' reads as epoch seconds, but line 2's time read as epoch milliseconds" },
    { H ROW2 "2021-01-01T00:01:00Z,10,12,9,11,100\n", false, "t.csv:3:1 (open_time): ",
      "reads as ISO-8601, but line 2's time read as epoch milliseconds" },
    /* high below low */
    { H ROW2 "1609459260000,10,8,9,9,100\n", false, "t.csv:3:3 (high): ", "high 8 is below low 9" },
    /* low above open */
    { H ROW2 "1609459260000,10,12,10.5,11,100\n", false, "t.csv:3:4 (low): ", "low 10.5 is above open 10" },
    /* low above close */
    { H ROW2 "1609459260000,10,12,9.5,9,100\n", false, "t.csv:3:4 (low): ", "low 9.5 is above close 9" },
    /* high below open */
    { H ROW2 "1609459260000,13,12,9,11,100\n", false, "t.csv:3:3 (high): ", "high 12 is below open 13" },
    /* high below close */
    { H ROW2 "1609459260000,10,12,9,12.5,100\n", false, "t.csv:3:3 (high): ", "high 12 is below close 12.5" },
    /* negative low */
    { H ROW2 "1609459260000,0,1,-1,0.5,100\n", false, "t.csv:3:4 (low): ", "low -1 is negative" },
    /* negative volume */
    { H ROW2 "1609459260000,10,12,9,11,-5\n", false, "t.csv:3:6 (volume): ", "volume -5 is negative" },
    /* infinite and out of range */
    { H ROW2 "1609459260000,inf,12,9,11,100\n", false, "t.csv:3:2 (open): ", "expected a finite number, got 'inf'" },
    { H ROW2 "1609459260000,10,1e999,9,11,100\n", false, "t.csv:3:3 (high): ", "'1e999' is too large for a double" },
    { H ROW2 "1609459260000,0x10,12,9,11,100\n", false, "t.csv:3:2 (open): ", "expected a number, got '0x10'" },
    /* some nan among numbers */
    { H ROW2 "1609459260000,10,12,nan,11,100\n", false, "t.csv:3:4 (low): ",
      "got 'nan' among numbers; a missing bar has all five" },
    /* header without a column */
    { "ts,open,High,low,close\n" ROW2,
      false, "t.csv:1: the header has no column for time (open_time|timestamp|time|date|datetime), "
      "volume; found 'ts', 'open', 'High', 'low', 'close'",
      "" },
    /* header with two time columns */
    { "date,time,open,high,low,close,volume\n", false, "t.csv:1:2 (time): ",
      "a second time column: 'date' (column 1) and 'time' (column 2)" },
    { "open_time,open,high,low,close,volume,Close\n", false, "t.csv:1:7 (Close): ", "a second close column" },
    /* empty file */
    { "", false, "t.csv: the file is empty", "" },
    { "\n\r\n\n", true, "t.csv: the file is empty", "" },
    /* headerless but not binance */
    { ROW2, false, "t.csv:1: no header", "has 6 field(s), not the 12 of a Binance kline file" },
    { "1518048000000,7599.0,7600.0,7572.09,7587.56,16.948552,1518048059999,1.0,256,1.0,1.0,0\n"
      "1518048060000,7591.34,7630.0,7585.52,7600.0,59.656612\n",
      false, "t.csv:2:7 (close_time): ",
      "the row ends after 6 field(s); expected 12 as in a Binance kline row" },
};

Test(loader_error, each_refused_file_says_where_and_what)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        load_fails(refused[i].text, refused[i].lenient ? LENIENT : STRICT, refused[i].where, refused[i].what);
}

/* Files on disk refused (gzip ones too): the status and what the message says. */
static const struct {
    const char *path;
    sebt_status status;
    const char *says;
} refused_on_disk[] = {
    { SEBT_FIXTURES_DIR "/loader/no_such_file.csv", SEBT_ERR_IO, "no_such_file.csv: cannot open" },
    { SEBT_FIXTURES_DIR "/loader/bad_high_low.csv", SEBT_ERR_INPUT,
      "fixtures/loader/bad_high_low.csv:3:3 (high): high 9 is below low 10" },
    { SEBT_FIXTURES_DIR "/loader/truncated.csv.gz", SEBT_ERR_INPUT, "truncated.csv.gz: the gzip data ends early" },
    { SEBT_FIXTURES_DIR "/loader/not_gzip.csv.gz", SEBT_ERR_INPUT,
      "not_gzip.csv.gz: the name ends in .gz but the file is not gzip data" },
};

Test(loader_error, file_errors)
{
    for (size_t i = 0; i < sizeof refused_on_disk / sizeof refused_on_disk[0]; i++) {
        sebt_series s;
        sebt_error e = { 0 };
        cr_assert_eq(sebt_load_csv(refused_on_disk[i].path, NULL, &s, &e), refused_on_disk[i].status, "%s: %s",
                     refused_on_disk[i].path, e.msg);
        cr_assert(strstr(e.msg, refused_on_disk[i].says) != NULL, "%s", e.msg);
    }
}

/* ---- lenient and fill_gaps ----------------------------------------------- */

Test(loader, lenient_keeps_rejected_rows_as_missing_bars)
{
    const char *text = H "1609459200000,10,12,9,11,100\n"  /* ok */
                         "1609459260000,10,abc,9,11,100\n" /* bad number */
                         "1609459320000,10,12,9,11,100\n"  /* ok */
                         "1609459380000,10,8,9,9,100\n"    /* high < low */
                         "1609459440000,10,12\n"           /* short row */
                         "1609459500000,nan,nan,nan,nan,nan\n" /* missing, not rejected */
                         "1609459560000,10,12,9,11,-1\n";  /* negative volume */
    sebt_series s = load_ok(text, LENIENT);
    cr_assert_eq(s.n, 7);
    cr_assert_eq(s.n_rejected, 4);
    cr_assert_eq(s.n_missing, 5);
    cr_assert_eq(s.n_gap_filled, 0);
    assert_bar(&s, 0, T0, 10, 12, 9, 11, 100);
    assert_missing(&s, 1, T0 + MIN);
    assert_bar(&s, 2, T0 + 2 * MIN, 10, 12, 9, 11, 100);
    assert_missing(&s, 3, T0 + 3 * MIN);
    assert_missing(&s, 4, T0 + 4 * MIN);
    assert_missing(&s, 5, T0 + 5 * MIN);
    assert_missing(&s, 6, T0 + 6 * MIN);
    sebt_series_free(&s);
}

Test(loader, lenient_still_refuses_rows_it_cannot_place)
{
    load_fails(H ROW2 "soon,10,12,9,11,100\n", LENIENT, "t.csv:3:1 (open_time): ",
               "lenient loading keeps bad bars, not rows it cannot place in time");
    load_fails(H ROW2 ROW2, LENIENT, "t.csv:3:1 (open_time): ", "repeats line 2's");
}

Test(loader, fill_gaps_inserts_missing_bars)
{
    /* Minutes 0 1 2 5 6 9: steps 1 1 3 1 3, so the interval is 1 minute
     * and two holes of two bars each get filled. */
    const char *text = H "1609459200000,10,12,9,11,100\n"
                         "1609459260000,10,12,9,11,100\n"
                         "1609459320000,10,12,9,11,100\n"
                         "1609459500000,10,12,9,11,100\n"
                         "1609459560000,10,12,9,11,100\n"
                         "1609459740000,10,12,9,11,100\n";
    sebt_series s = load_ok(text, FILL);
    cr_assert_eq(s.n, 10);
    cr_assert_eq(s.n_gap_filled, 4);
    cr_assert_eq(s.n_missing, 4);
    cr_assert_eq(s.interval_ms, MIN);
    for (size_t t = 0; t < 10; t++) {
        cr_assert_eq(s.ts[t], T0 + (long long)t * MIN);
        bool hole = t == 3 || t == 4 || t == 7 || t == 8;
        cr_assert_eq(sebt_series_is_missing(&s, t), hole, "bar %zu", t);
    }
    sebt_series_free(&s);

    /* Without fill_gaps the holes stay as timestamp skips. */
    s = load_ok(text, STRICT);
    cr_assert_eq(s.n, 6);
    cr_assert_eq(s.n_missing, 0);
    cr_assert_eq(s.ts[3], T0 + 5 * MIN);
    sebt_series_free(&s);
}

Test(loader, lenient_and_fill_gaps_count_apart)
{
    const char *text = H "1609459200000,10,12,9,11,100\n"
                         "1609459260000,10,8,9,9,100\n" /* rejected */
                         "1609459320000,10,12,9,11,100\n"
                         "1609459500000,10,12,9,11,100\n"; /* after a 2-bar hole */
    sebt_series s = load_ok(text, LENIENT_FILL);
    cr_assert_eq(s.n, 6);
    cr_assert_eq(s.n_rejected, 1);
    cr_assert_eq(s.n_gap_filled, 2);
    cr_assert_eq(s.n_missing, 3);
    assert_missing(&s, 1, T0 + MIN);
    assert_missing(&s, 3, T0 + 3 * MIN);
    assert_missing(&s, 4, T0 + 4 * MIN);
    assert_bar(&s, 5, T0 + 5 * MIN, 10, 12, 9, 11, 100);
    sebt_series_free(&s);
}

Test(loader_error, fill_gaps_step_off_the_grid)
{
    /* Steps 60 60 30 s: the interval is 60 s and 30 s is not a multiple. */
    const char *text = H "1609459200000,10,12,9,11,100\n"
                         "1609459260000,10,12,9,11,100\n"
                         "1609459320000,10,12,9,11,100\n"
                         "1609459350000,10,12,9,11,100\n";
    load_fails(text, FILL, "t.csv:5:1 (open_time): ",
               "the step of 30000 ms from line 4 is not a whole number of the series' interval (60000 ms");
    sebt_series s = load_ok(text, STRICT);
    cr_assert_eq(s.n, 4);
    sebt_series_free(&s);
}

Test(loader_error, fill_gaps_too_many_bars)
{
    /* A typo'd timestamp 500 million minutes later (the year ~2971). */
    load_fails(H "1609459200000,10,12,9,11,100\n"
                 "1609459260000,10,12,9,11,100\n"
                 "1609459320000,10,12,9,11,100\n"
                 "31609459200000,10,12,9,11,100\n",
               FILL, "t.csv:5:1 (open_time): ", "filling the gaps would insert 499999997 missing bars");
    /* Past the default limit (test_hardening.c), a series still has at most
     * 2^28 bars. */
    cr_assert_eq(setenv("SEBT_MAX_GAP_FILL", "1000000000", 1), 0);
    load_fails(H "1609459200000,10,12,9,11,100\n"
                 "1609459260000,10,12,9,11,100\n"
                 "1609459320000,10,12,9,11,100\n"
                 "31609459200000,10,12,9,11,100\n",
               FILL, "t.csv:5:1 (open_time): ", "more than the 268435456 bars a series may have");
}

/* ---- gzip ---------------------------------------------------------------- */

static void assert_tiny(const sebt_series *s)
{
    cr_assert_eq(s->n, 3);
    assert_bar(s, 0, T0, 10, 12, 9, 11, 100);
    assert_bar(s, 1, T0 + MIN, 11, 13, 10, 12.5, 50.25);
    assert_bar(s, 2, T0 + 2 * MIN, 12.5, 12.5, 12.5, 12.5, 0);
}

Test(loader, gzip_files)
{
    const char *names[] = { "tiny.csv", "tiny.csv.gz", "multi.csv.gz" };
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/loader/%s", SEBT_FIXTURES_DIR, names[i]);
        sebt_series s;
        sebt_error e = { 0 };
        cr_assert_eq(sebt_load_csv(path, NULL, &s, &e), SEBT_OK, "%s: %s", names[i], e.msg);
        assert_tiny(&s);
        sebt_series_free(&s);
    }
}

/* ---- numbers: the double nearest the text, as strtod gives ------------------ */

Test(loader, numbers_are_correctly_rounded)
{
    enum { N = 4000 };
    char *text = malloc((size_t)N * 200 + 100);
    char (*num)[64] = malloc(N * sizeof *num);
    cr_assert(text && num);
    size_t o = (size_t)sprintf(text, H);
    unsigned long long x = 88172645463325252ULL; /* xorshift64: the same cases every run */
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        switch (i % 4) {
        case 0: /* prices: up to 6 digits . up to 8 digits */
            snprintf(num[i], 64, "%llu.%0*llu", x % 1000000, (int)(x >> 60) % 9, (x >> 20) % 100000000);
            break;
        case 1: /* 17 significant digits, as %.17g writes */
            snprintf(num[i], 64, "%.17g", (double)(x >> 11) / 9007199254740992.0 * 1e5);
            break;
        case 2: /* long mantissas: beyond 19 digits */
            snprintf(num[i], 64, "%llu%llu.%llu", x % 100000, x >> 1, x % 997);
            break;
        default: /* exponents */
            snprintf(num[i], 64, "%llue%d", x % 100000000, (int)(x >> 56) % 40 - 20);
        }
        const char *v = num[i];
        o += (size_t)sprintf(text + o, "%lld,%s,%s,%s,%s,%s\n", T0 + i * MIN, v, v, v, v, v);
    }
    sebt_series s = load_ok(text, STRICT);
    cr_assert_eq(s.n, N);
    for (int i = 0; i < N; i++) {
        double want = strtod(num[i], NULL);
        cr_assert(memcmp(&s.open[i], &want, sizeof want) == 0, "'%s' read as %.17g, strtod gives %.17g", num[i],
                  s.open[i], want);
    }
    sebt_series_free(&s);
    free(text);
    free(num);
}

/* ---- the bundled real data ----------------------------------------------- */

Test(loader, bundled_15m_data, .timeout = 60)
{
    const char *path = SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz";
    sebt_series s, f;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv(path, &STRICT, &s, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(s.n, 152832);
    cr_assert_eq(s.ts[0], 1502942400000LL);
    cr_assert_eq(s.ts[s.n - 1], 1640994300000LL);
    cr_assert_eq(s.interval_ms, 900000);
    cr_assert_eq(s.n_missing, 0);
    cr_assert_eq(sebt_series_check(&s, &e), SEBT_OK, "%s", e.msg);

    /* Count the holes from the timestamps themselves. */
    size_t holes = 0, hole_bars = 0;
    for (size_t t = 1; t < s.n; t++) {
        int64_t d = s.ts[t] - s.ts[t - 1];
        if (d != 900000) {
            cr_assert_eq(d % 900000, 0);
            holes++;
            hole_bars += (size_t)(d / 900000 - 1);
        }
    }
    cr_assert_eq(holes, 32); /* data/README.md; an awk over the CSV gives 32 holes, 560 bars */
    cr_assert_eq(hole_bars, 560);

    cr_assert_eq(sebt_load_csv(path, &FILL, &f, &e), SEBT_OK, "%s", e.msg);
    cr_assert_eq(f.n_gap_filled, hole_bars);
    cr_assert_eq(f.n, s.n + hole_bars);
    cr_assert_eq(f.n_missing, hole_bars);
    cr_assert_eq(f.interval_ms, 900000);
    for (size_t t = 1; t < f.n; t++)
        cr_assert_eq(f.ts[t] - f.ts[t - 1], 900000, "bar %zu", t);
    /* The loaded bars are all there, unchanged, between the holes. */
    size_t j = 0;
    for (size_t t = 0; t < f.n; t++) {
        if (sebt_series_is_missing(&f, t))
            continue;
        cr_assert_eq(f.ts[t], s.ts[j]);
        cr_assert_eq(f.close[t], s.close[j]);
        j++;
    }
    cr_assert_eq(j, s.n);
    sebt_series_free(&s);
    sebt_series_free(&f);
}

Test(loader, bundled_1m_2021, .timeout = 60)
{
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2021.csv.gz", &FILL, &s, &e), SEBT_OK, "%s",
                 e.msg);
    /* 524,607 rows; an awk over the CSV gives 6 holes covering 993 minutes. */
    cr_assert_eq(s.n, 524607 + 993);
    cr_assert_eq(s.n_gap_filled, 993);
    cr_assert_eq(s.ts[0], T0);
    cr_assert_eq(s.ts[s.n - 1], 1640995140000LL);
    sebt_series_free(&s);
}

/* ---- write and read back ------------------------------------------------- */

static void assert_same_bits(const sebt_series *a, const sebt_series *b)
{
    cr_assert_eq(a->n, b->n);
    cr_assert(memcmp(a->ts, b->ts, a->n * sizeof *a->ts) == 0, "timestamps differ");
    const double *ca[] = { a->open, a->high, a->low, a->close, a->volume };
    const double *cb[] = { b->open, b->high, b->low, b->close, b->volume };
    for (int c = 0; c < 5; c++)
        for (size_t t = 0; t < a->n; t++) {
            if (isnan(ca[c][t]))
                cr_assert(isnan(cb[c][t]), "column %d bar %zu", c, t);
            else
                cr_assert(memcmp(&ca[c][t], &cb[c][t], sizeof(double)) == 0, "column %d bar %zu: %.17g vs %.17g",
                          c, t, ca[c][t], cb[c][t]);
        }
}

static sebt_series write_and_read(const sebt_series *s)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    sebt_error e = { 0 };
    cr_assert_eq(sebt_write_csv(s, f, &e), SEBT_OK, "%s", e.msg);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    sebt_series back;
    cr_assert_eq(sebt_load_csv_buffer("written.csv", buf, (size_t)size, NULL, &back, &e), SEBT_OK, "%s", e.msg);
    free(buf);
    return back;
}

Test(loader, write_then_read_is_bit_exact)
{
    const double vals[][5] = {
        { 0.1, 0.30000000000000004, 0.1, 0.2, 1.0 / 3.0 },
        { 28923.630000000001, 28961.66, 28913.12, 28961.66, 27.457032 },
        { 5e-324, 2.2250738585072014e-308, 0.0, 1e-310, -0.0 },
        { 1e300, 1.7976931348623157e308, 1e300, 1e300, 123456789012345678.0 },
        { NAN, NAN, NAN, NAN, NAN },
        { 9007199254740993.0, 9007199254740994.0, 9007199254740992.0, 9007199254740992.0, 0 },
    };
    size_t n = sizeof vals / sizeof vals[0];
    for (int small_ts = 0; small_ts < 2; small_ts++) {
        sebt_series s;
        cr_assert_eq(sebt_series_alloc(&s, n, NULL), SEBT_OK);
        for (size_t t = 0; t < n; t++) {
            /* Small ts (a test series from 0) are not valid ms on their own:
             * the writer falls back to ISO-8601, which reads back exactly. */
            s.ts[t] = small_ts ? (int64_t)t * 5 - 3600000 : T0 + (int64_t)t * MIN;
            s.open[t] = vals[t][0];
            s.high[t] = vals[t][1];
            s.low[t] = vals[t][2];
            s.close[t] = vals[t][3];
            s.volume[t] = vals[t][4];
        }
        sebt_series back = write_and_read(&s);
        assert_same_bits(&s, &back);
        cr_assert_eq(back.n_missing, 1);
        sebt_series_free(&back);
        sebt_series_free(&s);
    }
}

Test(loader, write_format)
{
    sebt_series s;
    cr_assert_eq(sebt_series_alloc(&s, 2, NULL), SEBT_OK);
    s.ts[0] = T0;
    s.open[0] = 10;
    s.high[0] = 12.5;
    s.low[0] = 0.1;
    s.close[0] = 11;
    s.volume[0] = 3;
    s.ts[1] = T0 + MIN;
    sebt_series_set_missing(&s, 1);
    s.open[1] = -s.open[1]; /* a NaN with its sign bit set is still written "nan" */
    char buf[512] = { 0 };
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_eq(sebt_write_csv(&s, f, NULL), SEBT_OK);
    fclose(f);
    cr_assert_str_eq(buf, "open_time,open,high,low,close,volume\n"
                          "1609459200000,10,12.5,0.1,11,3\n"
                          "1609459260000,nan,nan,nan,nan,nan\n");
    sebt_series_free(&s);
}

Test(loader, bundled_data_round_trip, .timeout = 60)
{
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz", &FILL, &s, &e), SEBT_OK,
                 "%s", e.msg);
    /* The first 20,000 bars hold the first seven holes: 27+2+4+7+134+1+1
     * missing bars (an awk over the CSV); %.17g makes the whole file slow. */
    sebt_series head;
    cr_assert_eq(sebt_series_slice(&s, 0, 20000, &head, &e), SEBT_OK, "%s", e.msg);
    sebt_series back = write_and_read(&head);
    assert_same_bits(&head, &back);
    cr_assert_eq(back.n_missing, 176);
    sebt_series_free(&back);
    sebt_series_free(&head);
    sebt_series_free(&s);
}

/* ---- rows parsed in chunks on several threads ------------------------------ */

#include "../loader_parse.h"

static sebt_status load_with_chunks(const char *name, const char *text, size_t len, size_t min_bytes,
                                    size_t threads, sebt_load_opts o, sebt_series *s, sebt_error *e)
{
    size_t keep_min = loader_chunk_min_bytes, keep_threads = loader_chunk_threads;
    loader_chunk_min_bytes = min_bytes;
    loader_chunk_threads = threads;
    sebt_status st = sebt_load_csv_buffer(name, text, len, &o, s, e);
    loader_chunk_min_bytes = keep_min;
    loader_chunk_threads = keep_threads;
    return st;
}

static void same_bits(const sebt_series *a, const sebt_series *b)
{
    cr_assert_eq(a->n, b->n);
    cr_assert(memcmp(a->ts, b->ts, a->n * 8) == 0 && memcmp(a->open, b->open, a->n * 8) == 0 &&
              memcmp(a->high, b->high, a->n * 8) == 0 && memcmp(a->low, b->low, a->n * 8) == 0 &&
              memcmp(a->close, b->close, a->n * 8) == 0 && memcmp(a->volume, b->volume, a->n * 8) == 0);
    cr_assert_eq(a->n_missing, b->n_missing);
    cr_assert_eq(a->n_gap_filled, b->n_gap_filled);
    cr_assert_eq(a->interval_ms, b->interval_ms);
}

/* The bundled 1m month (44,640 rows), in 2 to 8 chunks and with gaps
 * filled: the same bits as one thread. */
Test(loader_chunks, real_data_in_chunks_is_the_same_series)
{
    char *gz, *text = NULL;
    size_t gz_len;
    cr_assert_eq(sebt_read_file(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz", &gz, &gz_len, NULL), SEBT_OK);
    sebt_series one;
    cr_assert_eq(load_with_chunks("a.csv", gz, gz_len, 0, 0, STRICT, &one, NULL), SEBT_OK);
    /* as text, to cut it anywhere */
    FILE *f = open_memstream(&text, &(size_t){ 0 });
    cr_assert_eq(sebt_write_csv(&one, f, NULL), SEBT_OK);
    fclose(f);
    size_t len = strlen(text);
    for (size_t threads = 2; threads <= 8; threads += 3) {
        for (int fill = 0; fill < 2; fill++) {
            sebt_load_opts o = fill ? FILL : STRICT;
            sebt_series a, b;
            cr_assert_eq(load_with_chunks("a.csv", text, len, 0, 0, o, &a, NULL), SEBT_OK);
            size_t before = loader_chunked_loads;
            cr_assert_eq(load_with_chunks("a.csv", text, len, 1000, threads, o, &b, NULL), SEBT_OK);
            cr_assert_eq(loader_chunked_loads, before + 1, "the rows were not parsed in chunks");
            same_bits(&a, &b);
            if (!fill)
                same_bits(&a, &one);
            sebt_series_free(&a);
            sebt_series_free(&b);
        }
    }
    sebt_series_free(&one);
    free(text);
    free(gz);
}

/* A bad row anywhere (first, last, at a chunk's first or last line), a
 * timestamp that goes back across a chunk end, a kind of timestamp that
 * changes in a later chunk: the message one thread gives, word for word. */
Test(loader_chunks, a_bad_file_in_chunks_says_what_one_thread_says)
{
    const int rows = 400;
    char *base = malloc((size_t)rows * 80 + 100);
    size_t o = (size_t)sprintf(base, H);
    for (int i = 0; i < rows; i++)
        o += (size_t)sprintf(base + o, "%lld,10.5,12.25,9.75,11,%d.5\n", T0 + i * MIN, 100 + i);
    size_t len = o;
    const char *edits[][2] = {
        { "10.5,12.25", "10.5,x.25" },           /* a bad number */
        { "12.25,9.75", "9.25,9.75" },           /* high below open */
        { ",11,", ",11,7," },                    /* a field too many */
    };
    for (int at = 0; at < rows; at += 37) {
        for (size_t k = 0; k < 3 + 2; k++) {
            char *t = malloc(len + 100);
            memcpy(t, base, len + 1);
            /* the line of row `at` */
            char *line = t + strlen(H);
            for (int i = 0; i < at; i++)
                line = strchr(line, '\n') + 1;
            size_t tlen = len;
            if (k < 3) {
                char *hit = strstr(line, edits[k][0]);
                size_t a = strlen(edits[k][0]), b = strlen(edits[k][1]);
                memmove(hit + b, hit + a, tlen - (size_t)(hit + a - t) + 1);
                memcpy(hit, edits[k][1], b);
                tlen = tlen - a + b;
            } else if (k == 3) {
                memcpy(line, "1609459100000", 13);   /* before T0: goes back at row `at` */
            } else {
                memcpy(line, "1609459200.00", 13);   /* seconds among milliseconds */
            }
            for (size_t threads = 2; threads <= 8; threads += 2) {
                sebt_series a, b;
                sebt_error ea = { 0 }, eb = { 0 };
                sebt_status sa = load_with_chunks("t.csv", t, tlen, 0, 0, STRICT, &a, &ea);
                size_t before = loader_chunked_loads;
                sebt_status sb = load_with_chunks("t.csv", t, tlen, 512, threads, STRICT, &b, &eb);
                /* a good file goes through the chunks, a bad one through one thread */
                cr_assert_eq(loader_chunked_loads, before + (sb == SEBT_OK), "row %d edit %zu", at, k);
                cr_assert_eq(sa, sb, "row %d edit %zu: status %d vs %d (%s / %s)", at, k, sa, sb, ea.msg, eb.msg);
                cr_assert_str_eq(ea.msg, eb.msg, "row %d edit %zu, %zu threads", at, k, threads);
                if (sa == SEBT_OK) {
                    same_bits(&a, &b);
                    sebt_series_free(&a);
                    sebt_series_free(&b);
                }
            }
            free(t);
        }
    }
    free(base);
}
