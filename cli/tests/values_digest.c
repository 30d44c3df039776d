/* values_digest: one line that identifies every VALUE of a sweep's output,
 * whatever its text: the rows, and in each row the combo index, the
 * parameters, the metrics, open_at_end and valid_bars, each read back with
 * strtod and hashed by its bits (NaN and JSON null as one NaN; true/false
 * as 1/0). The parameters SPEC §2 added after the first digests were
 * stored (the RSI filter's use_rsi, rsi_window, rsi_max) are hashed only
 * where a row's value is not the parameter's default: with the filter off
 * every result is what it was before they existed (SPEC §4), and so is the
 * digest; a sweep that sets one gets another. A CSV and a JSON document of the same sweep give the same
 * digest, and so do two formatters that write the same values in other
 * digits, so a digest stored from one build checks another's values bit
 * for bit: every number written reads back to the same bits.
 *
 * A .npy file (`--format npy`) is read by its own header: the structured
 * dtype must hold exactly the 27 columns, in order, each a little-endian
 * int, bool or '<f8'; every field is turned into a double and hashed the
 * same way, so an npy file gives the digest of the CSV of the same sweep.
 * This reader follows the NumPy format document (versions 1.0 to 3.0), not
 * sebt's writer.
 *
 * usage: values_digest FILE   (CSV of `sebt sweep`, its JSON, or its npy)
 * prints: "rows=R values=V fnv=HEX"; exit 2 on a malformed file. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_COLS 27
static const char *const cols[N_COLS] = {
    "combo",    "ema_fast", "ema_slow",      "z_window", "atr_window", "vol_z",   "tr_z",        "cloc_min",
    "use_stop", "atr_stop_mult", "use_tp",   "reward_r", "use_time",   "max_hold", "fee_bp",     "slippage_bp",
    "use_rsi",  "rsi_window", "rsi_max",
    "n",        "win_rate", "avg_r",         "total_pnl", "max_dd",    "sharpe",  "open_at_end", "valid_bars"
};
/* The later parameters' columns and their defaults (SPEC §2). */
#define LATER_FIRST 16
static const double later_default[] = { 0.0, 14.0, 30.0 };

static uint64_t h = 1469598103934665603ull;
static unsigned long long n_values, n_rows;

/* Column c's value (its bits) into the digest. */
static void mix_col(int c, uint64_t v)
{
    if (c >= LATER_FIRST && c < LATER_FIRST + 3) {
        double d;
        memcpy(&d, &v, sizeof d);
        if (d == later_default[c - LATER_FIRST])
            return;
    }
    n_values++;
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ull;
    }
}

static int die(const char *what, const char *at)
{
    fprintf(stderr, "values_digest: %s near '%.40s'\n", what, at ? at : "");
    exit(2);
}

/* Reads one scalar at *p (number, nan, inf, null, true, false); returns its bits. */
static uint64_t scalar(const char **p)
{
    const char *s = *p;
    double v;
    if (strncmp(s, "null", 4) == 0 || strncmp(s, "nan", 3) == 0) {
        v = NAN;
        *p = s + (s[1] == 'u' ? 4 : 3);
    } else if (strncmp(s, "true", 4) == 0) {
        v = 1;
        *p = s + 4;
    } else if (strncmp(s, "false", 5) == 0) {
        v = 0;
        *p = s + 5;
    } else {
        char *end;
        v = strtod(s, &end);
        if (end == s)
            die("not a number", s);
        *p = end;
    }
    if (isnan(v))
        v = NAN;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static int col_index(const char *name, size_t len)
{
    for (int i = 0; i < N_COLS; i++)
        if (strlen(cols[i]) == len && memcmp(cols[i], name, len) == 0)
            return i;
    return -1;
}


/* ---- npy ------------------------------------------------------------------ */

typedef struct {
    char kind;      /* 'b' bool, 'u' unsigned, 'i' signed, 'f' float */
    int bytes;
} npy_field;

static void skip_space(const char **p)
{
    while (**p == ' ')
        (*p)++;
}

/* Reads 'text' at *p into out (at most size-1 chars). */
static void quoted(const char **p, char *out, size_t size)
{
    skip_space(p);
    if (**p != '\'' && **p != '"')
        die("expected a quoted string in the npy header", *p);
    char q = *(*p)++;
    const char *e = strchr(*p, q);
    if (!e || (size_t)(e - *p) >= size)
        die("bad string in the npy header", *p);
    memcpy(out, *p, (size_t)(e - *p));
    out[e - *p] = '\0';
    *p = e + 1;
}

static void expect(const char **p, char c)
{
    skip_space(p);
    if (**p != c) {
        char what[40];
        snprintf(what, sizeof what, "expected '%c' in the npy header", c);
        die(what, *p);
    }
    (*p)++;
}

static npy_field parse_dtype(const char *d)
{
    npy_field f = { 0, 0 };
    if (strcmp(d, "?") == 0 || strcmp(d, "|b1") == 0)
        return (npy_field){ 'b', 1 };
    if (strcmp(d, "|u1") == 0 || strcmp(d, "u1") == 0)
        return (npy_field){ 'u', 1 };
    if (strcmp(d, "|i1") == 0 || strcmp(d, "i1") == 0)
        return (npy_field){ 'i', 1 };
    if (d[0] != '<' || !strchr("uif", d[1]) || (d[2] != '2' && d[2] != '4' && d[2] != '8') || d[3])
        die("a field type this reader does not take (little-endian ints, bools and <f8 only)", d);
    f.kind = d[1];
    f.bytes = d[2] - '0';
    if (f.kind == 'f' && f.bytes != 8)
        die("a float field that is not <f8", d);
    return f;
}

static void digest_npy(const unsigned char *t, size_t len)
{
    if (len < 10 || memcmp(t, "\x93NUMPY", 6) != 0)
        die("not an npy file", (const char *)t);
    size_t hlen, start;
    if (t[6] == 1) {
        hlen = (size_t)t[8] | (size_t)t[9] << 8;
        start = 10;
    } else if (t[6] == 2 || t[6] == 3) {
        if (len < 12)
            die("npy file cut in its preamble", "");
        hlen = (size_t)t[8] | (size_t)t[9] << 8 | (size_t)t[10] << 16 | (size_t)t[11] << 24;
        start = 12;
    } else {
        die("an npy version this reader does not know", "");
    }
    if (start + hlen > len)
        die("npy file cut in its header", "");
    char *hdr = malloc(hlen + 1);
    memcpy(hdr, t + start, hlen);
    hdr[hlen] = '\0';
    const char *p = hdr;
    npy_field fields[N_COLS];
    int n_fields = 0;
    int fortran = -1;
    unsigned long long shape = 0;
    int have_shape = 0;
    expect(&p, '{');
    for (;;) {
        skip_space(&p);
        if (*p == '}')
            break;
        char key[32];
        quoted(&p, key, sizeof key);
        expect(&p, ':');
        skip_space(&p);
        if (strcmp(key, "descr") == 0) {
            expect(&p, '[');
            for (;;) {
                skip_space(&p);
                if (*p == ']') {
                    p++;
                    break;
                }
                char name[64], type[16];
                expect(&p, '(');
                quoted(&p, name, sizeof name);
                expect(&p, ',');
                quoted(&p, type, sizeof type);
                expect(&p, ')');
                if (n_fields >= N_COLS || strcmp(name, cols[n_fields]) != 0)
                    die("the npy fields are not the sweep's columns in order", name);
                fields[n_fields++] = parse_dtype(type);
                skip_space(&p);
                if (*p == ',')
                    p++;
            }
        } else if (strcmp(key, "fortran_order") == 0) {
            fortran = strncmp(p, "True", 4) == 0;
            if (!fortran && strncmp(p, "False", 5) != 0)
                die("fortran_order is neither True nor False", p);
            p += fortran ? 4 : 5;
        } else if (strcmp(key, "shape") == 0) {
            expect(&p, '(');
            char *end;
            shape = strtoull(p, &end, 10);
            if (end == p)
                die("the shape is not one whole number", p);
            p = end;
            expect(&p, ',');
            expect(&p, ')');
            have_shape = 1;
        } else {
            die("an unknown key in the npy header", key);
        }
        skip_space(&p);
        if (*p == ',')
            p++;
    }
    if (n_fields != N_COLS || fortran != 0 || !have_shape)
        die("the npy header lacks the sweep's 27 fields, fortran_order False or a 1-d shape", hdr);
    free(hdr);
    size_t row = 0;
    for (int i = 0; i < N_COLS; i++)
        row += (size_t)fields[i].bytes;
    if ((len - start - hlen) != shape * row)
        die("the npy data is not shape x row bytes long", "");
    const unsigned char *d = t + start + hlen;
    for (unsigned long long r = 0; r < shape; r++) {
        for (int i = 0; i < N_COLS; i++) {
            uint64_t u = 0;
            for (int b = 0; b < fields[i].bytes; b++)
                u |= (uint64_t)d[b] << (8 * b);
            d += fields[i].bytes;
            double v;
            switch (fields[i].kind) {
            case 'f': memcpy(&v, &u, sizeof v); break;
            case 'b':
                if (u > 1)
                    die("a bool byte that is not 0 or 1", "");
                v = (double)u;
                break;
            case 'u': v = (double)u; break;
            default: {
                int sh = 64 - 8 * fields[i].bytes;
                v = (double)((int64_t)(u << sh) >> sh);
                break;
            }
            }
            if (isnan(v))
                v = NAN;
            memcpy(&u, &v, sizeof u);
            mix_col(i, u);
        }
        n_rows++;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fprintf(stderr, "usage: values_digest FILE\n"), 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return perror(argv[1]), 2;
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 2)
            text = realloc(text, cap *= 2);
    }
    fclose(f);
    if (!text)
        return 2;
    text[len] = '\0';
    if (len >= 6 && memcmp(text, "\x93NUMPY", 6) == 0) {
        digest_npy((const unsigned char *)text, len);
        printf("rows=%llu values=%llu fnv=%016llx\n", n_rows, n_values, (unsigned long long)h);
        free(text);
        return 0;
    }
    const char *p = text;
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p == '{') {
        /* JSON: the results array's objects, keys in any order. */
        char *r = strstr(text, "\"results\"");
        if (!r)
            die("no results array", p);
        /* What follows the array (the sweep's "verification") is no result. */
        char *end = strstr(r, "\n  ]");
        if (end)
            *end = '\0';
        p = r + 9;
        uint64_t row[N_COLS];
        int have = 0;
        for (;;) {
            const char *q = strchr(p, '"');
            if (!q)
                break;
            const char *e = strchr(q + 1, '"');
            if (!e)
                die("unterminated key", q);
            int c = col_index(q + 1, (size_t)(e - q - 1));
            p = e + 1;
            if (*p != ':')
                continue;
            p++;
            if (*p == '{')
                continue;
            /* A field of a result this digest does not hash would be a
             * written number nobody reads back. */
            if (c < 0)
                die("a result field values_digest does not know (add it to cols)", q);
            if (c == 0 && have) {
                if (have != N_COLS)
                    die("a result lacks fields", p);
                for (int i = 0; i < N_COLS; i++)
                    mix_col(i, row[i]);
                n_rows++;
                have = 0;
            }
            row[c] = scalar(&p);
            have++;
        }
        if (have) {
            if (have != N_COLS)
                die("a result lacks fields", p);
            for (int i = 0; i < N_COLS; i++)
                mix_col(i, row[i]);
            n_rows++;
        }
    } else {
        /* CSV: skip the header, then every field of every row, in order. */
        const char *nl = strchr(p, '\n');
        if (!nl || strncmp(p, "combo,", 6) != 0)
            die("no sweep CSV header", p);
        p = nl + 1;
        while (*p) {
            for (int i = 0; i < N_COLS; i++) {
                mix_col(i, scalar(&p));
                if (*p != (i == N_COLS - 1 ? '\n' : ','))
                    die("unexpected separator", p);
                p++;
            }
            n_rows++;
        }
    }
    printf("rows=%llu values=%llu fnv=%016llx\n", n_rows, n_values, (unsigned long long)h);
    free(text);
    return 0;
}
