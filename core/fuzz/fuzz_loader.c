/* libFuzzer harness: the CSV/Binance loader (core/loader.c) with each of
 * its options (strict, lenient, fill-gaps, both) on every input.
 *
 * Invariants of a series that loads: SPEC §1 (sebt_series_check); its
 * counts agree with a recount; lenient alone may reject rows and fill-gaps
 * alone may insert bars, and after fill-gaps every step is the interval; a
 * strict load is also what lenient loading gives. Round trip: written by
 * sebt_write_csv it reloads (strictly) to the same bits, and writing that
 * gives the same bytes. Errors have a message and leave nothing allocated. */
#include "../loader_parse.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Small limits keep each input fast; the limits themselves are what is
     * checked (a refused fill or inflate is an error, never an allocation). */
    setenv("SEBT_MAX_GAP_FILL", "20000", 1);
    setenv("SEBT_MAX_INFLATE_MB", "4", 1);
    return 0;
}

static char *write_series(const sebt_series *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    FUZZ_CHECK(f != NULL, "open_memstream");
    sebt_error e = { 0 };
    sebt_status st = sebt_write_csv(s, f, &e);
    fclose(f);
    FUZZ_CHECK(st == SEBT_OK, "a loaded series cannot be written: %s", e.msg);
    return buf;
}

static void same_series(const sebt_series *a, const sebt_series *b, const char *what)
{
    FUZZ_CHECK(a->n == b->n, "%s: %zu bars, then %zu", what, a->n, b->n);
    for (size_t t = 0; t < a->n; t++) {
        FUZZ_CHECK(a->ts[t] == b->ts[t], "%s: bar %zu ts %lld, then %lld", what, t, (long long)a->ts[t],
                   (long long)b->ts[t]);
        FUZZ_CHECK(fuzz_same_double(a->open[t], b->open[t]) && fuzz_same_double(a->high[t], b->high[t]) &&
                       fuzz_same_double(a->low[t], b->low[t]) && fuzz_same_double(a->close[t], b->close[t]) &&
                       fuzz_same_double(a->volume[t], b->volume[t]),
                   "%s: bar %zu changed", what, t);
    }
    FUZZ_CHECK(a->n_missing == b->n_missing, "%s: %zu missing, then %zu", what, a->n_missing, b->n_missing);
    FUZZ_CHECK(a->interval_ms == b->interval_ms, "%s: interval %lld, then %lld", what, (long long)a->interval_ms,
               (long long)b->interval_ms);
}

static void check_series(const sebt_series *s, sebt_load_opts o)
{
    sebt_error e = { 0 };
    FUZZ_CHECK(sebt_series_check(s, &e) == SEBT_OK, "a loaded series breaks SPEC 1: %s", e.msg);
    sebt_series copy;
    FUZZ_CHECK(sebt_series_slice(s, 0, s->n, &copy, &e) == SEBT_OK, "%s", e.msg);
    FUZZ_CHECK(copy.n_missing == s->n_missing, "n_missing %zu, recount %zu", s->n_missing, copy.n_missing);
    FUZZ_CHECK(copy.interval_ms == s->interval_ms, "interval %lld, recount %lld", (long long)s->interval_ms,
               (long long)copy.interval_ms);
    sebt_series_free(&copy);
    FUZZ_CHECK(o.lenient || s->n_rejected == 0, "strict loading rejected %zu rows", s->n_rejected);
    FUZZ_CHECK(o.fill_gaps || s->n_gap_filled == 0, "filled %zu bars without fill_gaps", s->n_gap_filled);
    FUZZ_CHECK(s->n_rejected + s->n_gap_filled <= s->n_missing, "rejected %zu + filled %zu > missing %zu",
               s->n_rejected, s->n_gap_filled, s->n_missing);
    if (o.fill_gaps)
        for (size_t t = 1; t < s->n; t++)
            FUZZ_CHECK(s->ts[t] - s->ts[t - 1] == s->interval_ms, "after fill-gaps, step %zu is %lld, not %lld",
                       t, (long long)(s->ts[t] - s->ts[t - 1]), (long long)s->interval_ms);
}

static void round_trip(const sebt_series *s)
{
    size_t len = 0;
    char *text = write_series(s, &len);
    sebt_series back;
    sebt_error e = { 0 };
    sebt_load_opts strict = { 0 };
    sebt_status st = sebt_load_csv_buffer("roundtrip.csv", text, len, &strict, &back, &e);
    FUZZ_CHECK(st == SEBT_OK, "the written series does not reload: %s", e.msg);
    same_series(s, &back, "write then reload");
    size_t len2 = 0;
    char *text2 = write_series(&back, &len2);
    FUZZ_CHECK(len == len2 && memcmp(text, text2, len) == 0, "writing the reloaded series changed its bytes");
    free(text2);
    sebt_series_free(&back);
    free(text);
}

/* A big file's rows are parsed in chunks on several threads (core/loader.c):
 * with chunks of a few bytes, every input puts chunk ends in every place a
 * line can end, and the chunked load must give what one thread gives: the
 * same series, or the same error, word for word. */
static void chunked_as_serial(const uint8_t *data, size_t size, sebt_load_opts o, sebt_status st,
                              const sebt_series *s, const sebt_error *e)
{
    size_t keep_min = loader_chunk_min_bytes, keep_threads = loader_chunk_threads;
    loader_chunk_min_bytes = 1 + (size_t)(data[0] % 16);
    loader_chunk_threads = 2 + (size_t)(data[size - 1] % 7);
    sebt_series c;
    sebt_error ce = { 0 };
    sebt_status cst = sebt_load_csv_buffer("fuzz.csv", (const char *)data, size, &o, &c, &ce);
    loader_chunk_min_bytes = keep_min;
    loader_chunk_threads = keep_threads;
    FUZZ_CHECK(cst == st, "chunked load: status %d, one thread: %d (%s / %s)", cst, st, ce.msg, e->msg);
    if (st != SEBT_OK) {
        FUZZ_CHECK(strcmp(ce.msg, e->msg) == 0, "chunked load says '%s', one thread '%s'", ce.msg, e->msg);
        return;
    }
    same_series(s, &c, "one thread vs chunks");
    FUZZ_CHECK(c.n_rejected == s->n_rejected && c.n_gap_filled == s->n_gap_filled, "chunked counts differ");
    sebt_series_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loader_chunk_min_bytes = 0;   /* one thread, unless chunked_as_serial says otherwise */
    sebt_series strict;
    int have_strict = 0;
    for (int mode = 0; mode < 4; mode++) {
        sebt_load_opts o = { .lenient = (mode & 1) != 0, .fill_gaps = (mode & 2) != 0 };
        sebt_series s;
        sebt_error e = { 0 };
        sebt_status st = sebt_load_csv_buffer("fuzz.csv", (const char *)data, size, &o, &s, &e);
        if (size > 0)
            chunked_as_serial(data, size, o, st, &s, &e);
        if (st != SEBT_OK) {
            fuzz_check_error(st, &e);
            FUZZ_CHECK(s.n == 0 && s.ts == NULL, "a failed load left a series");
            FUZZ_CHECK(!(mode == 1 && have_strict), "strict loading worked, lenient failed: %s", e.msg);
            continue;
        }
        check_series(&s, o);
        if (mode == 0) {
            round_trip(&s);
            strict = s;
            have_strict = 1;
            continue;
        }
        if (mode == 1 && have_strict) {
            FUZZ_CHECK(s.n_rejected == 0, "lenient rejected %zu rows of a file strict loading takes", s.n_rejected);
            same_series(&strict, &s, "strict vs lenient");
        }
        sebt_series_free(&s);
    }
    if (have_strict)
        sebt_series_free(&strict);
    return 0;
}
