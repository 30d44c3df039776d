/* Decimal numbers for the loader, correctly rounded.
 *
 * Price files are short decimals ("28923.63", "16.94855200"). For those the
 * digits fit in an integer m <= 2^53 with f <= 22 digits after the point, so
 * m and 10^f are both exact doubles and one IEEE division m / 10^f is the
 * correctly rounded value (Clinger's fast path). Everything else (more
 * digits, an exponent, the %.17g output of sebt_write_csv) goes to strtod,
 * which glibc rounds correctly too. Either way the result is the double
 * nearest the decimal text, so a file loads the same on every machine. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "loader_parse.h"

static const double pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static bool word_is(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != word[i])
            return false;
    return true;
}

static loader_num_status parse_special(const char *s, size_t len)
{
    const char *p = s;
    size_t n = len;
    if (n && (*p == '+' || *p == '-')) {
        p++;
        n--;
    }
    if (word_is(p, n, "nan"))
        return LOADER_NUM_NAN;
    if (word_is(p, n, "inf") || word_is(p, n, "infinity"))
        return LOADER_NUM_INF;
    return LOADER_NUM_SYNTAX;
}

/* strtod needs a NUL-terminated string; fields are slices of the file. */
static loader_num_status slow_path(const char *s, size_t len, double *out)
{
    char small[128];
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf)
        return LOADER_NUM_RANGE;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    bool whole = end == buf + len;
    if (buf != small)
        free(buf);
    if (!whole)
        return LOADER_NUM_SYNTAX; /* cannot happen: the syntax was checked */
    if (isinf(v))
        return LOADER_NUM_RANGE;
    /* ERANGE on underflow still gives the correctly rounded tiny value. */
    *out = v;
    return LOADER_NUM_OK;
}

/* One digit of the mantissa, before or after the point: leading zeros are
 * skipped and up to 19 significant digits kept exactly; one more sends the
 * number to the slow path (*fast false). */
static inline void take_digit(char c, uint64_t *mant, int *sig, bool *fast)
{
    if (!*mant && c == '0')
        return;
    if (*sig < 19) {
        *mant = *mant * 10 + (uint64_t)(c - '0');
        (*sig)++;
    } else {
        *fast = false;
    }
}

loader_num_status loader_parse_double(const char *s, size_t len, double *out)
{
    if (len == 0)
        return LOADER_NUM_EMPTY;
    const char *p = s, *end = s + len;
    bool neg = false;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    uint64_t mant = 0;
    int sig = 0;     /* significant digits in mant (leading zeros skipped) */
    int frac = 0;    /* digits after the point */
    int ndigits = 0; /* all digits of the mantissa */
    bool fast = true;
    for (; p < end && *p >= '0' && *p <= '9'; p++, ndigits++)
        take_digit(*p, &mant, &sig, &fast);
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, ndigits++, frac++)
            take_digit(*p, &mant, &sig, &fast);
    }
    if (ndigits == 0)
        return parse_special(s, len);
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const char *exp_digits = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == exp_digits)
            return LOADER_NUM_SYNTAX;
        fast = false;
    }
    if (p != end)
        return LOADER_NUM_SYNTAX;
    if (fast && mant <= (UINT64_C(1) << 53) && frac <= 22) {
        double v = (double)mant;
        if (frac)
            v /= pow10_exact[frac];
        *out = neg ? -v : v;
        return LOADER_NUM_OK;
    }
    return slow_path(s, len, out);
}
