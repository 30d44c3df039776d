/* The CSV loader: a file of bars in, a SPEC §1 series out, or an error that
 * names file:line:column and what was expected.
 *
 * What it reads
 *   - A CSV whose first line is a header. Columns are found by name, in any
 *     case and any order: the time column is one of open_time, timestamp,
 *     time, date, datetime; then open, high, low, close, volume. Other
 *     columns are ignored. Two columns for one role (say "date" and "time")
 *     is an error: picking one would be a guess.
 *   - Binance's raw kline files: no header, 12 columns (open_time, open,
 *     high, low, close, volume, close_time, quote_volume, trades,
 *     taker_base, taker_quote, ignore). A file is taken as headerless when
 *     its first field reads as a timestamp; it must then have 12 fields.
 *   - gzip: a file starting with the gzip magic bytes is inflated with zlib
 *     whatever its name; a name ending in .gz that is not gzip is an error.
 *   Fields may be padded with spaces or tabs and wrapped in double quotes;
 *   quoted commas are not supported (no price file has them). Lines end in
 *   \n or \r\n; empty lines are skipped; a UTF-8 byte order mark is skipped.
 *
 * What it accepts as a bar (SPEC §1)
 *   - present: five finite numbers with low <= min(open, close),
 *     high >= max(open, close), low >= 0, volume >= 0;
 *   - missing: all five written as nan (any case), as sebt_write_csv writes
 *     them. A row with some nan and some numbers is an error.
 *   Every row has exactly as many fields as the header (12 when headerless).
 *
 * Edge cases, decided
 *   - An empty file (no line with anything on it) is an error; a header with
 *     no rows is a valid series of 0 bars.
 *   - Timestamps must strictly increase; a repeat or a step back is an error
 *     naming both lines. All rows use one kind of timestamp (one epoch unit,
 *     or ISO-8601), the kind of the first row; see loader_time.c.
 *   - lenient: a row whose time is fine but whose bar is not (a bad or empty
 *     number, a bar rule, a wrong field count) becomes a missing bar at its
 *     timestamp and is counted in n_rejected. A row whose time is unusable,
 *     repeated or out of order is still an error: it cannot be placed in
 *     the series, and dropping it quietly would hide it.
 *   - fill_gaps: the interval is the most common step, the smallest on a
 *     tie (as sebt_series_recount).
 *     Each larger step that is a whole number k of intervals gets k-1
 *     missing bars; a step that is not a whole multiple is an error naming
 *     its line, since the bars on either side do not share one grid. A fill
 *     that would grow the series past LOADER_MAX_BARS (2^28) is an error (a
 *     typo in a year would otherwise ask for billions of bars).
 *   - Reading the file (and gzip) is in loader_io.c; numbers and
 *     timestamps in loader_number.c and loader_time.c. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "limits.h"
#include "loader_io.h"
#include "loader_parse.h"
#include "sebt/sebt.h"
#include "sebt/number.h"

#define LOADER_MAX_BARS (UINT64_C(1) << 28)
/* --fill-gaps inserts at most this many missing bars per row of the file,
 * and at least LOADER_FILL_MIN whatever the file (SEBT_MAX_GAP_FILL
 * replaces the rule). */
#define LOADER_FILL_PER_ROW 4
#define LOADER_FILL_MIN 1000000
/* A gzip file may inflate to LOADER_INFLATE_RATIO times its size, and to
 * LOADER_INFLATE_MIN_MB MiB whatever its size (SEBT_MAX_INFLATE_MB
 * replaces the rule). Price CSV compresses 2-5 times. */
#define LOADER_INFLATE_RATIO 20
#define LOADER_INFLATE_MIN_MB 64

enum { COL_TIME, COL_OPEN, COL_HIGH, COL_LOW, COL_CLOSE, COL_VOLUME, N_COLS };

static const char *const role_names[N_COLS] = { "time", "open", "high", "low", "close", "volume" };
static const char *const time_names[] = { "open_time", "timestamp", "time", "date", "datetime" };
#define N_TIME_NAMES (sizeof time_names / sizeof time_names[0])
#define BINANCE_FIELDS 12
static const char *const binance_names[BINANCE_FIELDS] = {
    "open_time", "open", "high", "low", "close", "volume",
    "close_time", "quote_volume", "trades", "taker_base", "taker_quote", "ignore",
};

typedef struct {
    const char *s;
    size_t len;
} slice;

typedef struct {
    const char *name;       /* the file as named in messages */
    sebt_load_opts opts;
    sebt_error *err;
    size_t line;            /* the line being read, 1-based */
    bool raw;               /* headerless Binance kline file */
    size_t n_fields;        /* fields in every row */
    size_t col[N_COLS];     /* 0-based field of each role */
    signed char *role_of;   /* n_fields entries: the role of a field, or -1 */
    slice *header;          /* the header's fields (NULL when raw) */
    loader_ts_kind ts_kind; /* the first row's kind of timestamp */
    size_t first_line;      /* line of the first row */
} loader;

/* ---- messages ------------------------------------------------------------ */

/* Appends to buf as snprintf would, but keeps *o within the buffer when
 * the text is cut: a summed snprintf return runs past the end of a buffer
 * it was cut to fit. */
static void SEBT_PRINTF(4, 5) appendf(char *buf, size_t bufsize, size_t *o, const char *fmt, ...)
{
    if (*o + 1 >= bufsize)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *o, bufsize - *o, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[*o] = '\0';
    else
        *o = (size_t)n < bufsize - *o ? *o + (size_t)n : bufsize - 1;
}

/* A field as the file has it, for a message: at most 40 bytes, with control
 * bytes escaped so that a binary file cannot garble the message. */
static const char *show(char *buf, size_t bufsize, slice f)
{
    size_t o = 0, shown = f.len < 40 ? f.len : 40;
    buf[0] = '\0';
    for (size_t i = 0; i < shown && o + 8 < bufsize; i++) {
        unsigned char c = (unsigned char)f.s[i];
        if (c < 0x20 || c == 0x7f)
            appendf(buf, bufsize, &o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    if (shown < f.len && o + 4 < bufsize) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

static const char *column_name(const loader *L, size_t field, char *buf, size_t bufsize)
{
    if (L->raw)
        return field < BINANCE_FIELDS ? binance_names[field] : "extra field";
    if (L->header && field < L->n_fields && L->header[field].len)
        return show(buf, bufsize, L->header[field]);
    if (L->header && field < L->n_fields)
        return "unnamed column";
    return "extra field";
}

/* Fails with "name:line:field (column): what". field is 0-based. */
static sebt_status SEBT_PRINTF(3, 4) row_fail(loader *L, size_t field, const char *fmt, ...)
{
    char what[SEBT_ERROR_MSG_MAX], cname[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sebt_fail(L->err, SEBT_ERR_INPUT, "%s:%zu:%zu (%s): %s", L->name, L->line, field + 1,
                     column_name(L, field, cname, sizeof cname), what);
}

/* ---- lines and fields ---------------------------------------------------- */

static slice trim(const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (e - s >= 2 && *s == '"' && e[-1] == '"') {
        s++;
        e--;
    }
    return (slice){ s, (size_t)(e - s) };
}

/* The next line from *pos without its \n or \r\n; false at the end. */
static bool next_line(const char **pos, const char *end, slice *line)
{
    const char *p = *pos;
    if (p >= end)
        return false;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    *pos = nl ? nl + 1 : end;
    if (e > p && e[-1] == '\r')
        e--;
    *line = (slice){ p, (size_t)(e - p) };
    return true;
}

/* Splits a row, keeping the fields that have a role; returns the number of
 * fields in the row. */
static size_t split_row(const loader *L, slice line, slice f[N_COLS])
{
    const char *p = line.s, *end = line.s + line.len;
    size_t i = 0;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *fe = comma ? comma : end;
        if (i < L->n_fields && L->role_of[i] >= 0)
            f[L->role_of[i]] = trim(p, fe);
        i++;
        if (!comma)
            return i;
        p = comma + 1;
    }
}

/* Splits a whole line (the first one) into a malloc'd array. */
static sebt_status split_all(loader *L, slice line, slice **out, size_t *n)
{
    size_t cap = 1;
    for (size_t i = 0; i < line.len; i++)
        cap += line.s[i] == ',';
    slice *a = malloc(cap * sizeof *a);
    if (!a)
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "%s: out of memory reading line %zu", L->name, L->line);
    const char *p = line.s, *end = line.s + line.len;
    size_t i = 0;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *fe = comma ? comma : end;
        a[i++] = trim(p, fe);
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = a;
    *n = i;
    return SEBT_OK;
}

static bool name_is(slice f, const char *name)
{
    size_t n = strlen(name);
    if (f.len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = f.s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != name[i])
            return false;
    }
    return true;
}

static int role_of_name(slice f)
{
    for (size_t i = 0; i < N_TIME_NAMES; i++)
        if (name_is(f, time_names[i]))
            return COL_TIME;
    for (int r = COL_OPEN; r < N_COLS; r++)
        if (name_is(f, role_names[r]))
            return r;
    return -1;
}

/* ---- the layout: header or Binance ------------------------------------- */

static sebt_status read_layout(loader *L, slice first)
{
    slice *fields = NULL;
    size_t n = 0;
    sebt_status st = split_all(L, first, &fields, &n);
    if (st)
        return st;
    L->role_of = malloc((n > BINANCE_FIELDS ? n : BINANCE_FIELDS) * sizeof *L->role_of);
    if (!L->role_of) {
        free(fields);
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "%s: out of memory reading line %zu", L->name, L->line);
    }

    int64_t ms;
    loader_ts_kind kind;
    if (loader_parse_time(fields[0].s, fields[0].len, &ms, &kind) == NULL) {
        free(fields);
        L->raw = true;
        if (n != BINANCE_FIELDS)
            return sebt_fail(L->err, SEBT_ERR_INPUT,
                             "%s:%zu: no header: the first field reads as a timestamp, but the line has "
                             "%zu field(s), not the %d of a Binance kline file; add a header line naming "
                             "open_time, open, high, low, close, volume",
                             L->name, L->line, n, BINANCE_FIELDS);
        L->n_fields = BINANCE_FIELDS;
        for (size_t i = 0; i < BINANCE_FIELDS; i++)
            L->role_of[i] = i < N_COLS ? (signed char)i : -1;
        for (int r = 0; r < N_COLS; r++)
            L->col[r] = (size_t)r;
        return SEBT_OK;
    }

    L->header = fields;
    L->n_fields = n;
    bool found[N_COLS] = { false };
    for (size_t i = 0; i < n; i++) {
        int r = role_of_name(fields[i]);
        L->role_of[i] = (signed char)r;
        if (r < 0)
            continue;
        if (found[r]) {
            char a[200], b[200];
            return row_fail(L, i, "a second %s column: '%s' (column %zu) and '%s' (column %zu); keep one",
                            role_names[r], show(a, sizeof a, fields[L->col[r]]), L->col[r] + 1,
                            show(b, sizeof b, fields[i]), i + 1);
        }
        found[r] = true;
        L->col[r] = i;
    }
    char missing[160] = "", seen[300] = "";
    size_t mo = 0, so = 0;
    for (int r = 0; r < N_COLS; r++)
        if (!found[r])
            appendf(missing, sizeof missing, &mo, "%s%s", mo ? ", " : "",
                    r == COL_TIME ? "time (open_time|timestamp|time|date|datetime)" : role_names[r]);
    if (!mo)
        return SEBT_OK;
    /* Whole names only: one that does not fit is replaced by ", ...". */
    size_t i = 0;
    for (; i < n; i++) {
        char b[200], one[220];
        size_t len = (size_t)snprintf(one, sizeof one, "%s'%s'", i ? ", " : "", show(b, sizeof b, fields[i]));
        if (so + len + 6 >= sizeof seen)
            break;
        appendf(seen, sizeof seen, &so, "%s", one);
    }
    if (i < n)
        appendf(seen, sizeof seen, &so, "%s...", i ? ", " : "");
    return sebt_fail(L->err, SEBT_ERR_INPUT,
                     "%s:%zu: the header has no column for %s; found %s (names match in any case "
                     "and order)", L->name, L->line, missing, seen);
}

/* ---- one row ------------------------------------------------------------- */

/* Reads the five values of a row whose time is already taken. Returns
 * SEBT_OK with *missing set for an all-nan row, or fails naming the first
 * rule the row breaks. */
static sebt_status read_bar(loader *L, const slice f[N_COLS], size_t nf, double v[N_COLS],
                            bool *missing)
{
    char a[200], b[200];
    if (nf != L->n_fields) {
        const char *layout = L->raw ? "a Binance kline row" : "the header";
        if (nf < L->n_fields)
            return row_fail(L, nf, "the row ends after %zu field(s); expected %zu as in %s", nf,
                            L->n_fields, layout);
        return row_fail(L, L->n_fields, "the row has %zu fields; expected %zu as in %s", nf,
                        L->n_fields, layout);
    }
    int n_nan = 0, first_nan = -1;
    for (int r = COL_OPEN; r < N_COLS; r++) {
        size_t at = L->col[r];
        switch (loader_parse_double(f[r].s, f[r].len, &v[r])) {
        case LOADER_NUM_OK:
            break;
        case LOADER_NUM_NAN:
            v[r] = NAN;
            n_nan++;
            if (first_nan < 0)
                first_nan = r;
            break;
        case LOADER_NUM_EMPTY:
            return row_fail(L, at, "expected a number, got an empty field");
        case LOADER_NUM_SYNTAX:
            return row_fail(L, at, "expected a number, got '%s'", show(a, sizeof a, f[r]));
        case LOADER_NUM_INF:
            return row_fail(L, at, "expected a finite number, got '%s'", show(a, sizeof a, f[r]));
        case LOADER_NUM_RANGE:
            return row_fail(L, at, "'%s' is too large for a double", show(a, sizeof a, f[r]));
        }
    }
    *missing = n_nan == N_COLS - 1;
    if (*missing)
        return SEBT_OK;
    if (n_nan)
        return row_fail(L, L->col[first_nan],
                        "got '%s' among numbers; a missing bar has all five of open, high, low, "
                        "close, volume as nan", show(a, sizeof a, f[first_nan]));

    double o = v[COL_OPEN], h = v[COL_HIGH], l = v[COL_LOW], c = v[COL_CLOSE], vol = v[COL_VOLUME];
#define TXT(buf, r) show(buf, sizeof buf, f[r])
    if (h < l)
        return row_fail(L, L->col[COL_HIGH], "high %s is below low %s", TXT(a, COL_HIGH), TXT(b, COL_LOW));
    if (l < 0)
        return row_fail(L, L->col[COL_LOW], "low %s is negative", TXT(a, COL_LOW));
    if (l > o)
        return row_fail(L, L->col[COL_LOW], "low %s is above open %s", TXT(a, COL_LOW), TXT(b, COL_OPEN));
    if (l > c)
        return row_fail(L, L->col[COL_LOW], "low %s is above close %s", TXT(a, COL_LOW), TXT(b, COL_CLOSE));
    if (h < o)
        return row_fail(L, L->col[COL_HIGH], "high %s is below open %s", TXT(a, COL_HIGH), TXT(b, COL_OPEN));
    if (h < c)
        return row_fail(L, L->col[COL_HIGH], "high %s is below close %s", TXT(a, COL_HIGH), TXT(b, COL_CLOSE));
    if (vol < 0)
        return row_fail(L, L->col[COL_VOLUME], "volume %s is negative", TXT(a, COL_VOLUME));
#undef TXT
    return SEBT_OK;
}

/* The time of a row: parsed, of the file's kind, after the previous row's. */
static sebt_status read_time(loader *L, slice f, size_t rows, int64_t prev, size_t prev_line,
                             int64_t *ms)
{
    char a[200], t1[40], t2[40];
    size_t at = L->col[COL_TIME];
    const char *hint = L->opts.lenient ? " (lenient loading keeps bad bars, not rows it cannot place in time)" : "";
    loader_ts_kind kind;
    const char *why = loader_parse_time(f.s, f.len, ms, &kind);
    if (why && f.len == 0)
        return row_fail(L, at, "expected a timestamp, got an empty field%s", hint);
    if (why && strncmp(why, "expected", 8) == 0)
        return row_fail(L, at, "%s, got '%s'%s", why, show(a, sizeof a, f), hint);
    if (why)
        return row_fail(L, at, "'%s' %s%s", show(a, sizeof a, f), why, hint);
    if (rows == 0) {
        L->ts_kind = kind;
        L->first_line = L->line;
        return SEBT_OK;
    }
    if (kind != L->ts_kind)
        return row_fail(L, at, "'%s' reads as %s, but line %zu's time read as %s; a file uses one kind "
                        "of timestamp%s", show(a, sizeof a, f), loader_ts_kind_name(kind),
                        L->first_line, loader_ts_kind_name(L->ts_kind), hint);
    if (*ms == prev)
        return row_fail(L, at, "timestamp '%s' (%s) repeats line %zu's%s", show(a, sizeof a, f),
                        (loader_format_time(*ms, t1, sizeof t1), t1), prev_line, hint);
    if (*ms < prev)
        return row_fail(L, at, "timestamp '%s' (%s) is before line %zu's (%s); rows must be in "
                        "increasing time order%s", show(a, sizeof a, f),
                        (loader_format_time(*ms, t1, sizeof t1), t1), prev_line,
                        (loader_format_time(prev, t2, sizeof t2), t2), hint);
    return SEBT_OK;
}

/* ---- the whole text ------------------------------------------------------ */

/* Counts, over [p, end): the lines a row can be on (something on them; a
 * lone \r is nothing) and every line end. Rows are at most the former:
 * counting empty lines too would let a file of newlines ask for 48 bytes a
 * byte. */
static void count_lines(const char *p, const char *end, size_t *rows, size_t *newlines)
{
    size_t r = 0, n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        r += e - p > 1 || (e - p == 1 && *p != '\r');
        n += nl != NULL;
        p = e + 1;
    }
    *rows = r;
    *newlines = n;
}

/* The rows of [pos, end) into s from index row0 on (L->line is the line
 * before pos). *first_ts and *last_ts are the times of the first and last
 * row read, when there was one. */
static sebt_status parse_rows(loader *L, const char *pos, const char *end, sebt_series *s, size_t *lines,
                              size_t row0, size_t *n_rows, int64_t *first_ts, int64_t *last_ts)
{
    size_t rows = 0, prev_line = 0;
    int64_t prev = 0;
    slice line;
    sebt_status st;
    while (next_line(&pos, end, &line)) {
        L->line++;
        if (line.len == 0)
            continue;
        slice f[N_COLS] = { { NULL, 0 } };
        size_t nf = split_row(L, line, f);
        if (nf <= L->col[COL_TIME])
            return row_fail(L, nf, "the row ends after %zu field(s), before its time; expected %zu fields",
                            nf, L->n_fields);
        int64_t ms;
        st = read_time(L, f[COL_TIME], rows, prev, prev_line, &ms);
        if (st)
            return st;
        double v[N_COLS];
        bool missing = false;
        st = read_bar(L, f, nf, v, &missing);
        if (st && !L->opts.lenient)
            return st;
        size_t t = row0 + rows;
        s->ts[t] = ms;
        if (st || missing) {
            sebt_error_clear(L->err);
            s->n_rejected += st != SEBT_OK;
            sebt_series_set_missing(s, t);
        } else {
            s->open[t] = v[COL_OPEN];
            s->high[t] = v[COL_HIGH];
            s->low[t] = v[COL_LOW];
            s->close[t] = v[COL_CLOSE];
            s->volume[t] = v[COL_VOLUME];
        }
        if (lines)
            lines[t] = L->line;
        if (rows == 0)
            *first_ts = ms;
        prev = ms;
        prev_line = L->line;
        rows++;
    }
    *last_ts = prev;
    *n_rows = rows;
    return SEBT_OK;
}

/* ---- the rows on every core ----------------------------------------------- */

/* A big file's rows are parsed in chunks, one a thread, straight into the
 * series (each chunk's first row index is the rows counted before it). Any
 * doubt (a chunk that fails, two chunks whose times do not follow on or are
 * of two kinds) and the whole file is parsed again on one thread, whose
 * error is the one the file has always given: chunks make a good file fast
 * and never change what a bad one is told. */
#define LOADER_MAX_CHUNKS 8
size_t loader_chunk_min_bytes = (size_t)1 << 20;
size_t loader_chunk_threads = 0;
_Atomic size_t loader_chunked_loads = 0;

typedef struct {
    loader L;             /* a copy with its own line and error */
    sebt_error err;
    const char *pos, *end;
    sebt_series *s;
    size_t *lines;
    size_t row0, cap, newlines, rows;
    int64_t first_ts, last_ts;
    sebt_status st;
} chunk;

static void *count_chunk(void *arg)
{
    chunk *c = arg;
    count_lines(c->pos, c->end, &c->cap, &c->newlines);
    return NULL;
}

static void *parse_chunk(void *arg)
{
    chunk *c = arg;
    c->st = parse_rows(&c->L, c->pos, c->end, c->s, c->lines, c->row0, &c->rows, &c->first_ts, &c->last_ts);
    return NULL;
}

/* Runs fn on every chunk, the first on this thread; a thread that cannot
 * be started leaves its chunk to this one. */
static void run_chunks(chunk *c, size_t k, void *(*fn)(void *))
{
    pthread_t t[LOADER_MAX_CHUNKS];
    bool started[LOADER_MAX_CHUNKS] = { false };
    for (size_t i = 1; i < k; i++)
        started[i] = pthread_create(&t[i], NULL, fn, &c[i]) == 0;
    fn(&c[0]);
    for (size_t i = 1; i < k; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        else
            fn(&c[i]);
    }
}

static size_t chunk_count(const loader *L, size_t len)
{
    if (L->opts.lenient || loader_chunk_min_bytes == 0)
        return 1;
    size_t k = len / loader_chunk_min_bytes;
    long cpus = loader_chunk_threads ? (long)loader_chunk_threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && k > (size_t)cpus)
        k = (size_t)cpus;
    return k < 1 ? 1 : k > LOADER_MAX_CHUNKS ? LOADER_MAX_CHUNKS : k;
}

/* Cuts [body, end) into k chunks at line ends. */
static void cut_chunks(chunk *c, size_t k, const char *body, const char *end)
{
    size_t len = (size_t)(end - body);
    const char *from = body;
    for (size_t i = 0; i < k; i++) {
        const char *to = end;
        if (i + 1 < k) {
            to = body + len / k * (i + 1);
            if (to < from)
                to = from;
            const char *nl = memchr(to, '\n', (size_t)(end - to));
            to = nl ? nl + 1 : end;
        }
        c[i].pos = from;
        c[i].end = to;
        from = to;
    }
}

/* True when the chunks parsed every row they counted and their rows
 * follow on in time, one kind of timestamp throughout. */
static bool chunks_agree(const chunk *c, size_t k)
{
    const chunk *prev = NULL;
    for (size_t i = 0; i < k; i++) {
        if (c[i].st != SEBT_OK || c[i].rows != c[i].cap)
            return false;
        if (c[i].rows == 0)
            continue;
        if (prev && (c[i].L.ts_kind != prev->L.ts_kind || c[i].first_ts <= prev->last_ts))
            return false;
        prev = &c[i];
    }
    return true;
}

/* ---- the whole text ------------------------------------------------------ */

static sebt_status parse_text(loader *L, const char *data, size_t len, sebt_series *s, size_t **lines_out)
{
    const char *pos = data, *end = data + len;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        pos += 3;

    slice line;
    L->line = 0;
    bool have_first = false;
    while (!have_first && next_line(&pos, end, &line)) {
        L->line++;
        have_first = line.len > 0;
    }
    if (!have_first)
        return sebt_fail(L->err, SEBT_ERR_INPUT,
                         "%s: the file is empty; expected a header line (open_time,open,high,low,close,"
                         "volume) or Binance kline rows", L->name);
    sebt_status st = read_layout(L, line);
    if (st)
        return st;
    /* A headerless file's first line is already its first row. */
    const char *body = pos;
    size_t body_line = L->line;
    if (L->raw) {
        body = line.s;
        body_line--;
    }

    chunk c[LOADER_MAX_CHUNKS];
    size_t k = chunk_count(L, (size_t)(end - body)), cap = 1, nl_before = 0;
    if (k > 1) {
        memset(c, 0, k * sizeof *c);
        cut_chunks(c, k, body, end);
        run_chunks(c, k, count_chunk);
        for (size_t i = 0; i < k; i++) {
            c[i].row0 = cap - 1;
            cap += c[i].cap;
        }
    } else {
        size_t rows, newlines;
        count_lines(body, end, &rows, &newlines);
        cap += rows;
    }

    st = sebt_series_alloc(s, cap, L->err);
    if (st)
        return st;
    size_t *lines = NULL;
    if (L->opts.fill_gaps && !(lines = malloc(cap * sizeof *lines)))
        return sebt_fail(L->err, SEBT_ERR_NOMEM, "%s: out of memory for %zu line numbers", L->name, cap);
    *lines_out = lines;

    if (k > 1) {
        for (size_t i = 0; i < k; i++) {
            c[i].L = *L;
            c[i].L.err = &c[i].err;
            c[i].L.line = body_line + nl_before;
            nl_before += c[i].newlines;
            c[i].s = s;
            c[i].lines = lines;
        }
        run_chunks(c, k, parse_chunk);
        if (chunks_agree(c, k)) {
            size_t rows = 0;
            for (size_t i = 0; i < k; i++)
                rows += c[i].rows;
            loader_chunked_loads++;
            L->ts_kind = c[0].L.ts_kind;
            L->first_line = c[0].L.first_line;
            s->n = rows;
            return SEBT_OK;
        }
    }
    L->line = body_line;
    size_t rows = 0;
    int64_t first_ts = 0, last_ts = 0;
    st = parse_rows(L, body, end, s, lines, 0, &rows, &first_ts, &last_ts);
    if (st)
        return st;
    s->n = rows;
    return SEBT_OK;
}

/* Inserts missing bars where the step between rows is k > 1 intervals. */
static sebt_status fill_gaps(loader *L, sebt_series *s, const size_t *lines)
{
    int64_t step = s->interval_ms;
    if (s->n < 2)
        return SEBT_OK;
    uint64_t extra = 0, widest = 0;
    size_t widest_at = 0;
    for (size_t t = 1; t < s->n; t++) {
        int64_t d = s->ts[t] - s->ts[t - 1];
        if (d % step) {
            L->line = lines[t];
            return row_fail(L, L->col[COL_TIME],
                            "the step of %lld ms from line %zu is not a whole number of the series' "
                            "interval (%lld ms, its most common step), so the gap cannot be filled",
                            (long long)d, lines[t - 1], (long long)step);
        }
        uint64_t k = (uint64_t)(d / step) - 1;
        extra += k;
        if (k > widest) {
            widest = k;
            widest_at = t;
        }
    }
    if (extra == 0)
        return SEBT_OK;
    /* A typo in one timestamp (a year off) asks for millions of bars from a
     * file of a few: refuse before allocating anything.
     * Real gaps (exchange outages, a missing month) stay far below the
     * default. */
    size_t limit;
    int set;
    uint64_t rule = (uint64_t)s->n * LOADER_FILL_PER_ROW;
    if (rule < LOADER_FILL_MIN)
        rule = LOADER_FILL_MIN;
    sebt_status st = sebt_env_limit("SEBT_MAX_GAP_FILL", (size_t)rule, &limit, &set, L->err);
    if (st)
        return st;
    if (extra > limit) {
        L->line = lines[widest_at];
        if (set)
            return row_fail(L, L->col[COL_TIME],
                            "filling the gaps would insert %llu missing bars, more than "
                            "SEBT_MAX_GAP_FILL=%zu; the widest gap (%llu bars) ends here",
                            (unsigned long long)extra, limit, (unsigned long long)widest);
        return row_fail(L, L->col[COL_TIME],
                        "filling the gaps would insert %llu missing bars into %zu rows, more than the "
                        "limit of %llu (%d per row, at least %d); the widest gap (%llu bars) ends here: "
                        "check its timestamp, or set SEBT_MAX_GAP_FILL=N to allow N missing bars",
                        (unsigned long long)extra, s->n, (unsigned long long)rule, LOADER_FILL_PER_ROW,
                        LOADER_FILL_MIN, (unsigned long long)widest);
    }
    if (extra > LOADER_MAX_BARS - s->n) {
        L->line = lines[widest_at];
        return row_fail(L, L->col[COL_TIME],
                        "filling the gaps would make %llu missing bars, more than the %llu bars a "
                        "series may have; the widest gap (%llu bars) ends here",
                        (unsigned long long)extra, (unsigned long long)LOADER_MAX_BARS,
                        (unsigned long long)widest);
    }
    sebt_series g;
    st = sebt_series_alloc(&g, s->n + (size_t)extra, L->err);
    if (st)
        return st;
    size_t o = 0;
    for (size_t t = 0; t < s->n; t++) {
        if (t > 0) {
            for (int64_t ts = s->ts[t - 1] + step; ts < s->ts[t]; ts += step) {
                g.ts[o] = ts;
                sebt_series_set_missing(&g, o++);
            }
        }
        g.ts[o] = s->ts[t];
        g.open[o] = s->open[t];
        g.high[o] = s->high[t];
        g.low[o] = s->low[t];
        g.close[o] = s->close[t];
        g.volume[o] = s->volume[t];
        o++;
    }
    g.n_rejected = s->n_rejected;
    g.n_gap_filled = (size_t)extra;
    g.n_missing = s->n_missing + (size_t)extra;
    g.interval_ms = step; /* every step is now one interval */
    sebt_series_free(s);
    *s = g;
    return SEBT_OK;
}

/* n_missing and interval_ms, as sebt_series_recount defines them. Sorting
 * every step is a fifth of the load time, and in real data one step is
 * nearly always more than half of them: a majority vote finds that step in
 * one pass, and a majority is the unique most common step. */
static void count_series(sebt_series *s)
{
    size_t steps = s->n ? s->n - 1 : 0, votes = 0, agree = 0;
    int64_t cand = 0;
    for (size_t t = 1; t < s->n; t++) {
        int64_t d = s->ts[t] - s->ts[t - 1];
        if (votes == 0)
            cand = d;
        votes += d == cand ? 1 : (size_t)-1;
    }
    for (size_t t = 1; t < s->n; t++)
        agree += s->ts[t] - s->ts[t - 1] == cand;
    if (steps == 0 || agree * 2 <= steps) {
        sebt_series_recount(s);
        return;
    }
    s->interval_ms = cand;
    s->n_missing = 0;
    for (size_t t = 0; t < s->n; t++)
        s->n_missing += isnan(s->open[t]);
}

static sebt_status load_text(const char *name, const char *data, size_t len, const sebt_load_opts *opts,
                             sebt_series *out, sebt_error *err)
{
    loader L = { .name = name, .err = err };
    if (opts)
        L.opts = *opts;
    sebt_series s;
    memset(&s, 0, sizeof s);
    size_t *lines = NULL;
    sebt_status st = parse_text(&L, data, len, &s, &lines);
    if (!st) {
        count_series(&s);
        if (s.n >= 2 && s.interval_ms == 0)
            st = sebt_fail(err, SEBT_ERR_NOMEM, "%s: out of memory finding the bar interval", name);
    }
    if (!st && L.opts.fill_gaps)
        st = fill_gaps(&L, &s, lines);
    free(lines);
    free(L.role_of);
    free(L.header);
    if (st) {
        sebt_series_free(&s);
        return st;
    }
    *out = s;
    return SEBT_OK;
}

/* ---- bytes to text -------------------------------------------------------- */

static sebt_status load_bytes(const char *name, const char *data, size_t len, bool named_gz,
                              const sebt_load_opts *opts, sebt_series *out, sebt_error *err)
{
    if (!loader_is_gzip(data, len)) {
        if (named_gz)
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: the name ends in .gz but the file is not gzip data",
                             name);
        return load_text(name, data, len, opts, out, err);
    }
#ifdef SEBT_HAVE_ZLIB
    char *text = NULL;
    size_t text_len = 0, limit_mb;
    int set;
    size_t rule_mb = len / ((size_t)1 << 20) * LOADER_INFLATE_RATIO;
    if (rule_mb < LOADER_INFLATE_MIN_MB)
        rule_mb = LOADER_INFLATE_MIN_MB;
    sebt_status st = sebt_env_limit("SEBT_MAX_INFLATE_MB", rule_mb, &limit_mb, &set, err);
    if (st)
        return st;
    size_t limit = limit_mb > SIZE_MAX / ((size_t)1 << 20) ? SIZE_MAX : limit_mb << 20;
    st = loader_gunzip(name, data, len, limit, &text, &text_len, err);
    if (st == SEBT_ERR_INPUT && text_len > limit) {
        /* The stream was cut at the limit: say which limit and how to lift it. */
        if (set)
            return sebt_fail(err, SEBT_ERR_INPUT, "%s: the gzip data inflates past SEBT_MAX_INFLATE_MB=%zu MiB",
                             name, limit_mb);
        return sebt_fail(err, SEBT_ERR_INPUT,
                         "%s: the gzip data (%zu bytes) inflates past %zu MiB, more than the limit of "
                         "%d times its size (at least %d MiB): a gzip bomb or not a price file? Set "
                         "SEBT_MAX_INFLATE_MB=N to allow N MiB", name, len, limit_mb, LOADER_INFLATE_RATIO,
                         LOADER_INFLATE_MIN_MB);
    }
    if (st)
        return st;
    st = load_text(name, text, text_len, opts, out, err);
    free(text);
    return st;
#else
    (void)opts;
    (void)out;
    return sebt_fail(err, SEBT_ERR_UNAVAILABLE,
                     "%s: the file is gzip-compressed, but this sebt was built without zlib; "
                     "gunzip it first or rebuild with zlib", name);
#endif
}

/* ---- public API ---------------------------------------------------------- */

sebt_status sebt_load_csv_buffer(const char *name, const char *data, size_t len, const sebt_load_opts *opts,
                                 sebt_series *out, sebt_error *err)
{
    if (!out || (!data && len))
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_load_csv_buffer: no data or no series to fill");
    memset(out, 0, sizeof *out);
    return load_bytes(name ? name : "(buffer)", data ? data : "", len, false, opts, out, err);
}

sebt_status sebt_load_csv(const char *path, const sebt_load_opts *opts, sebt_series *out, sebt_error *err)
{
    if (!path || !out)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_load_csv: no path or no series to fill");
    memset(out, 0, sizeof *out);
    char *data = NULL;
    size_t len = 0;
    sebt_status st = sebt_read_file(path, &data, &len, err);
    if (st)
        return st;
    st = loader_load_bytes(path, data, len, opts, out, err);
    free(data);
    return st;
}

sebt_status loader_load_bytes(const char *path, const char *data, size_t len, const sebt_load_opts *opts,
                              sebt_series *out, sebt_error *err)
{
    size_t pl = strlen(path);
    bool named_gz = pl >= 3 && strcmp(path + pl - 3, ".gz") == 0;
    return load_bytes(path, data, len, named_gz, opts, out, err);
}

/* ---- writing ------------------------------------------------------------- */

/* Epoch ms are written as numbers when every one of them reads back as ms
 * (1973-03-03 .. 5138, see loader_time.c); otherwise (a test series that
 * starts at 0, say) all are written as ISO-8601 with milliseconds, so the
 * file always reads back to the same ts. */
static bool ms_reads_back(const sebt_series *s)
{
    for (size_t t = 0; t < s->n; t++)
        if (s->ts[t] < INT64_C(100000000000) || s->ts[t] >= INT64_C(100000000000000))
            return false;
    return true;
}

static void put_double(FILE *f, double v)
{
    /* never "-nan": the sign of a NaN means nothing here */
    char buf[SEBT_DOUBLE_CHARS + 1];
    buf[0] = ',';
    size_t n = 1 + sebt_format_double(isnan(v) ? NAN : v, buf + 1);
    fwrite(buf, 1, n, f);
}

sebt_status sebt_write_csv(const sebt_series *s, FILE *f, sebt_error *err)
{
    if (!s || !f)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_write_csv: no series or no file");
    bool as_ms = ms_reads_back(s);
    errno = 0;
    fputs("open_time,open,high,low,close,volume\n", f);
    for (size_t t = 0; t < s->n; t++) {
        if (as_ms) {
            fprintf(f, "%lld", (long long)s->ts[t]);
        } else {
            char iso[40];
            if (!loader_format_time(s->ts[t], iso, sizeof iso))
                return sebt_fail(err, SEBT_ERR_USAGE,
                                 "sebt_write_csv: bar %zu: timestamp %lld ms is outside the years 0000..9999",
                                 t, (long long)s->ts[t]);
            fputs(iso, f);
        }
        put_double(f, s->open[t]);
        put_double(f, s->high[t]);
        put_double(f, s->low[t]);
        put_double(f, s->close[t]);
        put_double(f, s->volume[t]);
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f))
        return sebt_fail(err, SEBT_ERR_IO, "writing CSV: %s", errno ? strerror(errno) : "write error");
    return SEBT_OK;
}
