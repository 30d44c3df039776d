/* Timestamps for the loader: epoch numbers and ISO-8601, to int64 ms UTC.
 *
 * An epoch number's unit is told by its magnitude. Taking "now-ish" dates
 * (1973..5138) as the range any unit can express:
 *   v < 1e11            seconds       (1e11 s  is the year 5138)
 *   1e11 <= v < 1e14    milliseconds  (1e11 ms is 1973-03-03)
 *   1e14 <= v < 1e17    microseconds  (1e14 us is 1973-03-03)
 *   1e17 <= v           nanoseconds   (1e17 ns is 1973-03-03)
 * So a millisecond timestamp before 1973-03-03 would read as seconds; market
 * data that old is written as dates. Negative epoch numbers are refused.
 * A fraction is allowed ("1609459200.5") but nothing finer than a
 * millisecond may be lost: "1609459200.0005" or a microsecond value that is
 * not a whole millisecond is an error, never a silent rounding.
 *
 * ISO-8601: YYYY-MM-DD, optionally followed by T (or t, or a space) and
 * hh:mm[:ss[.fraction]], optionally followed by Z or an offset +hh[:mm] /
 * -hh[:mm]. No offset means UTC. An offset is applied exactly (10:00+02:00
 * is 08:00Z), so a file written in local time with its offset is read
 * correctly; it is never ignored. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "loader_parse.h"

static const char *const kind_names[] = {
    [LOADER_TS_SECONDS] = "epoch seconds",
    [LOADER_TS_MILLIS] = "epoch milliseconds",
    [LOADER_TS_MICROS] = "epoch microseconds",
    [LOADER_TS_NANOS] = "epoch nanoseconds",
    [LOADER_TS_ISO] = "ISO-8601",
};

const char *loader_ts_kind_name(loader_ts_kind kind)
{
    return kind_names[kind];
}

#define MS_PER_DAY INT64_C(86400000)

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

/* Exactly n digits at *p (advanced past them), or -1. */
static int fixed_digits(const char **p, const char *end, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (*p >= end || **p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

static const char *const EXPECTED =
    "expected a timestamp: epoch seconds, ms, us or ns, or ISO-8601 like 2021-01-01T00:00:00Z";

static const char *parse_iso(const char *s, const char *end, int64_t *ms)
{
    const char *p = s;
    int y = fixed_digits(&p, end, 4);
    if (y < 0 || p >= end || *p != '-')
        return EXPECTED;
    p++;
    int mo = fixed_digits(&p, end, 2);
    if (mo < 0 || p >= end || *p != '-')
        return EXPECTED;
    p++;
    int d = fixed_digits(&p, end, 2);
    if (d < 0)
        return EXPECTED;
    if (mo < 1 || mo > 12)
        return "is not a valid date (month outside 01..12)";
    if (d < 1 || d > days_in_month(y, mo))
        return "is not a valid date (no such day in that month)";
    int64_t t = days_from_civil(y, mo, d) * MS_PER_DAY;
    if (p == end) {
        *ms = t;
        return NULL;
    }
    if (*p != 'T' && *p != 't' && *p != ' ')
        return EXPECTED;
    p++;
    int hh = fixed_digits(&p, end, 2);
    if (hh < 0 || p >= end || *p != ':')
        return EXPECTED;
    p++;
    int mi = fixed_digits(&p, end, 2);
    if (mi < 0)
        return EXPECTED;
    int ss = 0, frac_ms = 0;
    if (p < end && *p == ':') {
        p++;
        ss = fixed_digits(&p, end, 2);
        if (ss < 0)
            return EXPECTED;
        if (p < end && (*p == '.' || *p == ',')) {
            p++;
            const char *f0 = p;
            for (int i = 0; p < end && *p >= '0' && *p <= '9'; p++, i++) {
                if (i < 3)
                    frac_ms = frac_ms * 10 + (*p - '0');
                else if (*p != '0')
                    return "has a fraction of a second finer than a millisecond";
            }
            if (p == f0)
                return EXPECTED;
            for (ptrdiff_t i = p - f0; i < 3; i++)
                frac_ms *= 10;
        }
    }
    if (hh > 23 || mi > 59 || ss > 59)
        return "is not a valid time of day (hh 00..23, mm 00..59, ss 00..59)";
    t += ((int64_t)hh * 3600 + mi * 60 + ss) * 1000 + frac_ms;
    if (p < end && (*p == 'Z' || *p == 'z')) {
        p++;
    } else if (p < end && (*p == '+' || *p == '-')) {
        int sign = *p == '-' ? -1 : 1;
        p++;
        int oh = fixed_digits(&p, end, 2), om = 0;
        if (oh < 0)
            return EXPECTED;
        if (p < end && *p == ':')
            p++;
        if (p < end) {
            om = fixed_digits(&p, end, 2);
            if (om < 0)
                return EXPECTED;
        }
        if (oh > 23 || om > 59)
            return "has a UTC offset outside -23:59..+23:59";
        t -= sign * ((int64_t)oh * 60 + om) * 60000;
    }
    if (p != end)
        return EXPECTED;
    *ms = t;
    return NULL;
}

static const char *parse_epoch(const char *s, const char *end, int64_t *ms, loader_ts_kind *kind)
{
    const char *p = s;
    uint64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_C(9223372036854775807) - (uint64_t)(*p - '0')) / 10)
            return "is too large for any epoch unit";
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == s)
        return EXPECTED;
    const char *frac = end, *frac_end = end;
    if (p < end && *p == '.') {
        frac = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        frac_end = p;
    }
    if (p != end)
        return EXPECTED;

    uint64_t per_ms; /* units per millisecond, or 0 for seconds */
    if (v < UINT64_C(100000000000)) {
        *kind = LOADER_TS_SECONDS;
        per_ms = 0;
    } else if (v < UINT64_C(100000000000000)) {
        *kind = LOADER_TS_MILLIS;
        per_ms = 1;
    } else if (v < UINT64_C(100000000000000000)) {
        *kind = LOADER_TS_MICROS;
        per_ms = 1000;
    } else {
        *kind = LOADER_TS_NANOS;
        per_ms = 1000000;
    }
    /* The digits after the point that still count in ms: 3 for seconds. */
    ptrdiff_t keep = per_ms == 0 ? 3 : 0;
    int64_t frac_ms = 0;
    for (ptrdiff_t i = 0; frac + i < frac_end; i++) {
        if (i < keep)
            frac_ms = frac_ms * 10 + (frac[i] - '0');
        else if (frac[i] != '0')
            return "is finer than a millisecond";
    }
    for (ptrdiff_t i = frac_end - frac; i < keep; i++)
        frac_ms *= 10;
    if (per_ms == 0) {
        *ms = (int64_t)v * 1000 + frac_ms;
    } else {
        if (v % per_ms)
            return "is not a whole millisecond";
        *ms = (int64_t)(v / per_ms);
    }
    return NULL;
}

const char *loader_parse_time(const char *s, size_t len, int64_t *ms, loader_ts_kind *kind)
{
    const char *end = s + len;
    if (len == 0)
        return "is empty";
    if (s[0] == '-' || s[0] == '+')
        return "is signed; epoch timestamps are counted forward from 1970";
    /* "2021-..." has a '-' at index 4; an epoch number never does. */
    if (len >= 10 && s[4] == '-') {
        *kind = LOADER_TS_ISO;
        return parse_iso(s, end, ms);
    }
    return parse_epoch(s, end, ms, kind);
}

bool loader_format_time(int64_t ms, char *buf, size_t bufsize)
{
    int64_t days = ms / MS_PER_DAY, rem = ms % MS_PER_DAY;
    if (rem < 0) {
        rem += MS_PER_DAY;
        days--;
    }
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) {
        snprintf(buf, bufsize, "%lld", (long long)ms);
        return false;
    }
    int h = (int)(rem / 3600000), mi = (int)(rem / 60000 % 60), s = (int)(rem / 1000 % 60);
    int f = (int)(rem % 1000);
    snprintf(buf, bufsize, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)y, m, d, h, mi, s, f);
    return true;
}
