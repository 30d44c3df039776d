/* The shortest decimal that reads back to the same double (include/sebt/
 * number.h). printf's %.17g reads back too, but writes noise digits
 * (0.59999999999999998) and costs most of a big sweep's time; shortest
 * digits from the C++ library's std::to_chars cost a fraction of it. */
#include "sebt/number.h"
#include "test_faults.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SEBT_HAVE_TO_CHARS
/* core/number_cxx.cc: the shortest digits of v > 0 (std::to_chars). */
int sebt_number_shortest(double v, char *digits, int *point);
#endif

size_t sebt_format_u64(unsigned long long v, char *buf)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* Reads back "d.ddd" digits[0..n) times 10^(point-1) and compares bits. */
static int reads_back(const char *digits, int n, int point, double v)
{
    char s[48];
    int k = 0;
    s[k++] = digits[0];
    s[k++] = '.';
    memcpy(s + k, digits + 1, (size_t)(n - 1));
    k += n - 1;
    snprintf(s + k, sizeof s - (size_t)k, "e%d", point - 1);
    return strtod(s, NULL) == v;
}

/* Adds (+1) or takes (-1) one unit in the last of the n digits; returns
 * the new count (the exponent moves through *point when a 9 carries out
 * or a leading 1 borrows away), or 0 when the result leaves the digits. */
static int step_last(char *d, int n, int *point, int dir)
{
    int i = n - 1;
    if (dir > 0) {
        while (i >= 0 && d[i] == '9')
            d[i--] = '0';
        if (i < 0) {
            d[0] = '1';
            (*point)++;
            return n;   /* 99..9 + 1 = 10..0: same count, next power of ten */
        }
        d[i]++;
        return n;
    }
    while (i >= 0 && d[i] == '0')
        d[i--] = '9';
    if (i < 0)
        return 0;
    d[i]--;
    if (d[0] == '0') {
        if (n == 1)
            return 0;
        memmove(d, d + 1, (size_t)(n - 1));
        (*point)--;
        return n - 1;
    }
    return n;
}

/* The shortest digits of v > 0 that read back to v, closest to v among
 * the shortest: the correctly rounded %.*e at 15, 16, 17 digits, and where
 * the rounded value misses, its neighbour on the other side of v (only
 * possible at a power of two, whose rounding interval is lopsided). 15
 * digits first: any text of 15 digits or fewer that reads back to v is
 * what v prints at 15 digits (DBL_DIG), trailing zeros aside, so the
 * shorter ones need no try of their own (normal doubles; subnormals
 * hold fewer digits and try every count). */
static int portable_shortest(double v, char *digits, int *point)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const int lopsided = (bits & ((1ull << 52) - 1)) == 0;
    /* Subnormals carry fewer digits than DBL_DIG: search them all. */
    for (int prec = v < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        char s[48];
        snprintf(s, sizeof s, "%.*e", prec - 1, v);
        int n = 0;
        for (const char *c = s; *c && *c != 'e'; c++)
            if (*c >= '0' && *c <= '9')
                digits[n++] = *c;
        int p = atoi(strchr(s, 'e') + 1) + 1;
        if (strtod(s, NULL) == v) {
            *point = p;
            while (n > 1 && digits[n - 1] == '0')
                n--;
            return n;
        }
        if (lopsided) {
            char alt[24];
            memcpy(alt, digits, (size_t)n);
            int ap = p;
            int an = step_last(alt, n, &ap, strtod(s, NULL) < v ? 1 : -1);
            if (an > 0 && reads_back(alt, an, ap, v)) {
                memcpy(digits, alt, (size_t)an);
                while (an > 1 && digits[an - 1] == '0')
                    an--;
                *point = ap;
                return an;
            }
        }
    }
    /* Unreachable: 17 significant digits always read back. */
    snprintf(digits, 18, "%s", "0");
    *point = 1;
    return 1;
}

/* %.17g's layout of digits[0..n) x 10^(point-n): fixed notation for
 * decimal exponents -4 to 16, else d.ddde+XX. */
static size_t layout(char *buf, int neg, const char *digits, int n, int point)
{
    size_t k = 0;
    if (neg)
        buf[k++] = '-';
    int x = point - 1;
    if (x < -4 || x >= 17) {
        buf[k++] = digits[0];
        if (n > 1) {
            buf[k++] = '.';
            memcpy(buf + k, digits + 1, (size_t)(n - 1));
            k += (size_t)(n - 1);
        }
        buf[k++] = 'e';
        buf[k++] = x < 0 ? '-' : '+';
        unsigned ax = (unsigned)(x < 0 ? -x : x);
        if (ax < 10)
            buf[k++] = '0';
        k += sebt_format_u64(ax, buf + k);
    } else if (point <= 0) {
        buf[k++] = '0';
        buf[k++] = '.';
        for (int i = 0; i < -point; i++)
            buf[k++] = '0';
        memcpy(buf + k, digits, (size_t)n);
        k += (size_t)n;
    } else if (point >= n) {
        memcpy(buf + k, digits, (size_t)n);
        k += (size_t)n;
        for (int i = n; i < point; i++)
            buf[k++] = '0';
    } else {
        memcpy(buf + k, digits, (size_t)point);
        k += (size_t)point;
        buf[k++] = '.';
        memcpy(buf + k, digits + point, (size_t)(n - point));
        k += (size_t)(n - point);
    }
    buf[k] = '\0';
    return k;
}

static size_t special(double v, char *buf)
{
    const char *s = isnan(v) ? "nan" : isinf(v) ? (v > 0 ? "inf" : "-inf") : signbit(v) ? "-0" : "0";
    size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return n;
}

/* v's shortest digits, by shortest, laid out as sebt writes a double. */
static inline size_t format_by(double v, char buf[SEBT_DOUBLE_CHARS], int (*shortest)(double, char *, int *))
{
    if (!isfinite(v) || v == 0)
        return special(v, buf);
    char digits[24];
    int point = 0;
    int n = shortest(fabs(v), digits, &point);
    if (SEBT_FAULT("last_digit_dropped") && n > 1)
        n--;
    return layout(buf, v < 0, digits, n, point);
}

size_t sebt_format_double_portable(double v, char buf[SEBT_DOUBLE_CHARS])
{
    return format_by(v, buf, portable_shortest);
}

size_t sebt_format_double(double v, char buf[SEBT_DOUBLE_CHARS])
{
#ifdef SEBT_HAVE_TO_CHARS
    return format_by(v, buf, sebt_number_shortest);
#else
    return sebt_format_double_portable(v, buf);
#endif
}
