/* values_digest: one line that identifies every VALUE of a sweep's output,
 * whatever its text: the rows, and in each row the combo index, the 15
 * parameters, the metrics, open_at_end and valid_bars, each read back with
 * strtod and hashed by its bits (NaN and JSON null as one NaN; true/false
 * as 1/0). A CSV and a JSON document of the same sweep give the same
 * digest, and so do two formatters that write the same values in other
 * digits, so a digest stored from one build checks another's values bit
 * for bit (issue 23's "reads back to the same bits").
 *
 * usage: values_digest FILE   (CSV of `sebt sweep`, or its JSON)
 * prints: "rows=R values=V fnv=HEX"; exit 2 on a malformed file. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_COLS 24
static const char *const cols[N_COLS] = {
    "combo",    "ema_fast", "ema_slow",      "z_window", "atr_window", "vol_z",   "tr_z",        "cloc_min",
    "use_stop", "atr_stop_mult", "use_tp",   "reward_r", "use_time",   "max_hold", "fee_bp",     "slippage_bp",
    "n",        "win_rate", "avg_r",         "total_pnl", "max_dd",    "sharpe",  "open_at_end", "valid_bars"
};

static uint64_t h = 1469598103934665603ull;
static unsigned long long n_values, n_rows;

static void mix(uint64_t v)
{
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
    n_values++;
    return b;
}

static int col_index(const char *name, size_t len)
{
    for (int i = 0; i < N_COLS; i++)
        if (strlen(cols[i]) == len && memcmp(cols[i], name, len) == 0)
            return i;
    return -1;
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
    const char *p = text;
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p == '{') {
        /* JSON: the results array's objects, keys in any order. */
        const char *r = strstr(p, "\"results\"");
        if (!r)
            die("no results array", p);
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
            if (c < 0 || *p == '{')
                continue;
            if (c == 0 && have) {
                if (have != N_COLS)
                    die("a result lacks fields", p);
                for (int i = 0; i < N_COLS; i++)
                    mix(row[i]);
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
                mix(row[i]);
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
                mix(scalar(&p));
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
