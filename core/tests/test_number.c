/* Numbers as sebt writes them (core/number.c): shortest, exact, and laid
 * out as %.17g lays out digits. The expected texts below are worked out by
 * hand; the random parts check the two defining properties on their own
 * terms (strtod reads the text back to the same bits; no correctly rounded
 * text with fewer digits does) and that both digit finders agree. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/number.h"

static const char *fmt(double v)
{
    static char buf[SEBT_DOUBLE_CHARS];
    size_t n = sebt_format_double(v, buf);
    cr_assert_eq(n, strlen(buf));
    return buf;
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

Test(number, hand_worked_texts)
{
    const struct { double v; const char *text; } cases[] = {
        { 0.6, "0.6" },                          /* %.17g: 0.59999999999999998 */
        { 0.1 + 0.2, "0.30000000000000004" },    /* not 0.3: a different double */
        { 0.8, "0.8" },
        { 1.0, "1" },
        { 100.0, "100" },
        { -2.5, "-2.5" },
        { 152737.0, "152737" },
        { 1e16, "10000000000000000" },           /* exponent 16: still fixed, as %.17g */
        { 1e17, "1e+17" },
        { 1.5e17, "1.5e+17" },
        { 123456789012345680.0, "1.2345678901234568e+17" },
        { 0.0001, "0.0001" },                    /* exponent -4: fixed, as %.17g */
        { 1.5e-5, "1.5e-05" },
        { 1e-100, "1e-100" },
        { DBL_MAX, "1.7976931348623157e+308" },
        { DBL_MIN, "2.2250738585072014e-308" },
        { 4.9406564584124654e-324, "5e-324" },   /* the least subnormal */
        { 9007199254740993.0, "9007199254740992" },
        { 0.0, "0" },
        { -0.0, "-0" },
        { INFINITY, "inf" },
        { -INFINITY, "-inf" },
        { NAN, "nan" },
        { 5e-324 * 3, "1.5e-323" },
        { 2.0 / 3.0, "0.6666666666666666" },     /* 16 digits suffice */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_str_eq(fmt(cases[i].v), cases[i].text, "case %zu", i);
        char p[SEBT_DOUBLE_CHARS];
        sebt_format_double_portable(cases[i].v, p);
        cr_expect_str_eq(p, cases[i].text, "portable, case %zu", i);
    }
}

Test(number, u64)
{
    char b[24];
    b[sebt_format_u64(0, b)] = '\0';
    cr_assert_str_eq(b, "0");
    b[sebt_format_u64(18446744073709551615ull, b)] = '\0';
    cr_assert_str_eq(b, "18446744073709551615");
    b[sebt_format_u64(1000, b)] = '\0';
    cr_assert_str_eq(b, "1000");
}

/* Significant digits of a text as written (no sign, point or exponent). */
static int sig_digits(const char *s)
{
    int n = 0, lead = 1, trail = 0;
    for (; *s && *s != 'e'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (lead && *s == '0')
            continue;
        lead = 0;
        n++;
        trail = *s == '0' ? trail + 1 : 0;
    }
    /* Trailing zeros of an integer written in full are not digits of the
     * decimal mantissa (100 is 1e2: one digit). */
    return n - trail;
}

static void check_one(double v)
{
    char a[SEBT_DOUBLE_CHARS], p[SEBT_DOUBLE_CHARS];
    sebt_format_double(v, a);
    sebt_format_double_portable(v, p);
    cr_assert_str_eq(a, p, "bits %016llx: the two digit finders differ", (unsigned long long)bits(v));
    if (isnan(v))
        return;
    double back = strtod(a, NULL);
    cr_assert_eq(bits(back), bits(v), "bits %016llx: '%s' reads back as %016llx", (unsigned long long)bits(v), a,
                 (unsigned long long)bits(back));
    int d = sig_digits(a);
    cr_assert(v == 0 || (d >= 1 && d <= 17), "'%s': %d digits", a, d);
    if (d > 1 && isfinite(v) && v != 0) {
        char s[48];
        snprintf(s, sizeof s, "%.*e", d - 2, v);
        cr_assert_neq(bits(strtod(s, NULL)), bits(v), "bits %016llx: '%s' is shorter than '%s' and reads back",
                      (unsigned long long)bits(v), s, a);
    }
}

Test(number, random_bits_read_back_shortest_and_agree, .timeout = 120)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        check_one(from_bits(x));
    }
    /* Prices and ratios as a backtest makes them: few digits, then noise. */
    for (int i = 0; i < 50000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v = (double)(x % 10000000) / 100.0;
        check_one(v);
        check_one(v * 1.0000001);
        check_one(v / 3.0);
    }
}

Test(number, powers_of_two_lopsided_intervals)
{
    /* Every power of two (normal and subnormal): below them the doubles
     * are twice as dense, so the shortest text may lie on the far side. */
    for (int e = -1074; e <= 1023; e++) {
        check_one(ldexp(1.0, e));
        check_one(-ldexp(1.0, e));
        check_one(nextafter(ldexp(1.0, e), 0));
        check_one(nextafter(ldexp(1.0, e), INFINITY));
    }
}
