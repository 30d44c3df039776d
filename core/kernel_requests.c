/* The kernel backend's calls (run_batch, features) as RUN and FEATURES
 * requests, their replies checked and decoded; and opening a kernel
 * (docs/kernel-protocol.md). */
#define _GNU_SOURCE
#include "kernel_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Messages are built in fixed buffers; a very long command is cut in them,
 * never overflowed. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ---- requests -------------------------------------------------------------------- */

static bool same_series(const sebt_series *a, const sebt_series *b)
{
    if (a->n != b->n)
        return false;
    size_t n = a->n;
    if (n == 0)
        return true;
    return memcmp(a->ts, b->ts, n * sizeof *a->ts) == 0 && memcmp(a->open, b->open, n * 8) == 0 &&
           memcmp(a->high, b->high, n * 8) == 0 && memcmp(a->low, b->low, n * 8) == 0 &&
           memcmp(a->close, b->close, n * 8) == 0 && memcmp(a->volume, b->volume, n * 8) == 0;
}

/* The SERIES frame when the kernel does not hold s yet (its size in *len),
 * then room for `extra` more bytes. */
static unsigned char *request_buffer(kproc *k, const sebt_series *s, size_t extra, size_t *len, bool *send_series,
                                     sebt_error *err)
{
    *send_series = !k->has_series || !same_series(&k->sent, s);
    size_t slen = *send_series ? KP_HEADER + 8 + s->n * 6 * 8 : 0;
    unsigned char *buf = malloc(slen + extra);
    if (!buf) {
        sebt_fail(err, SEBT_ERR_NOMEM, "kernel %s: out of memory for a request of %zu bytes", k->name, slen + extra);
        return NULL;
    }
    if (*send_series) {
        unsigned char *p = buf;
        put_header(p, KP_SERIES, 8 + (uint64_t)s->n * 48);
        p += KP_HEADER;
        put_u64(p, s->n);
        p += 8;
        for (size_t t = 0; t < s->n; t++, p += 8)
            put_u64(p, (uint64_t)s->ts[t]);
        const double *cols[5] = { s->open, s->high, s->low, s->close, s->volume };
        for (int c = 0; c < 5; c++, p += 8 * s->n)
            put_f64s(p, cols[c], s->n);
    }
    *len = slen;
    return buf;
}

/* After the kernel answered a request carrying the series: it holds it now. */
static void remember_series(kproc *k, const sebt_series *s)
{
    sebt_series_free(&k->sent);
    k->has_series = false;
    if (sebt_series_alloc(&k->sent, s->n, NULL) != SEBT_OK)
        return;
    if (s->n) {
        memcpy(k->sent.ts, s->ts, s->n * sizeof *s->ts);
        memcpy(k->sent.open, s->open, s->n * 8);
        memcpy(k->sent.high, s->high, s->n * 8);
        memcpy(k->sent.low, s->low, s->n * 8);
        memcpy(k->sent.close, s->close, s->n * 8);
        memcpy(k->sent.volume, s->volume, s->n * 8);
    }
    k->has_series = true;
}

static void put_params(unsigned char *p, const sebt_params *c)
{
    for (int j = 0; j < KP_PARAM_FIELDS; j++)
        put_f64(p + 8 * j, sebt_params_get_double(c, j));
}

/* A count or index sent as a double: a whole number in [lo, hi]. */
static bool whole(double v, double lo, double hi) { return v >= lo && v <= hi && v == floor(v); }

/* The feature columns of one combo from a FEATURE_COLUMNS payload. */
static void decode_features(const unsigned char *q, size_t n_series, sebt_features *out)
{
    size_t n = n_series < out->n ? n_series : out->n;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        get_f64s(out->col[c], q + 8 * (c * n_series), n);
    uint8_t *flags[2] = { out->signal, out->valid };
    for (int c = 0; c < 2; c++)
        for (size_t t = 0; t < n; t++)
            flags[c][t] = get_f64(q + 8 * ((SEBT_N_FEATURES + c) * n_series + t)) != 0.0;
}

void kp_forget_features(kproc *k)
{
    k->fcache_count = 0;
}

/* The FEATURES frame for count encoded combos, at p: FEATURES_FRAME bytes. */
#define FEATURES_FRAME(count) (KP_HEADER + 8 + (count) * 8 * KP_PARAM_FIELDS)
static void put_features_frame(unsigned char *p, const unsigned char *enc, size_t count)
{
    put_header(p, KP_FEATURES, FEATURES_FRAME(count) - KP_HEADER);
    put_u64(p + KP_HEADER, count);
    memcpy(p + KP_HEADER + 8, enc, count * 8 * KP_PARAM_FIELDS);
}

/* Sends out (out_len bytes, ending with a FEATURES frame for count combos;
 * 0: that frame went with an earlier request) and reads and checks the
 * reply, which stays in k->in. */
sebt_status kp_features_reply(kproc *k, const sebt_series *s, size_t count, const unsigned char *out,
                                  size_t out_len, sebt_error *err)
{
    char what[96];
    snprintf(what, sizeof what, "FEATURES (%zu combo%s, %zu bars)", count, count == 1 ? "" : "s", s->n);
    unsigned type;
    uint64_t plen;
    uint64_t want = (uint64_t)count * KP_FEATURE_COLUMNS_N * s->n * 8;
    kp_request_work(k, count, s->n);
    sebt_status st = kp_exchange(k, out, out_len, what, want, false, &type, &plen, err);
    if (st)
        return st;
    if (type == KP_ERROR)
        return kp_error_reply(k, plen, what, count, err);
    if (type != KP_FEATURE_COLUMNS)
        return kp_fault(k, err, "answered the %s request with a %s frame, not FEATURE_COLUMNS", what, type_name(type));
    if (plen != want)
        return kp_fault(k, err, "answered the %s request with %llu bytes of features (%d columns of %zu doubles per "
                        "combo: %llu bytes expected)", what, (unsigned long long)plen, KP_FEATURE_COLUMNS_N, s->n,
                        (unsigned long long)want);
    const unsigned char *q = k->in + KP_HEADER;
    for (size_t c = 0; c < count; c++)
        for (int col = SEBT_N_FEATURES; col < KP_FEATURE_COLUMNS_N; col++)
            for (size_t t = 0; t < s->n; t++) {
                double v = get_f64(q + 8 * ((c * KP_FEATURE_COLUMNS_N + (size_t)col) * s->n + t));
                if (v != 0.0 && v != 1.0)
                    return kp_fault(k, err, "sent %s[%zu] = %g for combo %zu of the %s request (0 or 1 expected)",
                                  col == SEBT_N_FEATURES ? "signal" : "valid", t, v, c, what);
            }
    return SEBT_OK;
}

/* One FEATURES request for count encoded combos; the reply stays in k->in. */
static sebt_status request_features(kproc *k, const sebt_series *s, const unsigned char *enc, size_t count,
                                    sebt_error *err)
{
    size_t len;
    bool with_series;
    unsigned char *buf = request_buffer(k, s, FEATURES_FRAME(count), &len, &with_series, err);
    if (!buf)
        return SEBT_ERR_NOMEM;
    put_features_frame(buf + len, enc, count);
    len += FEATURES_FRAME(count);
    sebt_status st = kp_features_reply(k, s, count, buf, len, err);
    free(buf);
    if (with_series && (st == SEBT_OK || !k->broken)) {
        remember_series(k, s);
        kp_forget_features(k);
    }
    return st;
}

/* The FEATURE_COLUMNS reply in k->in becomes the cache of count combos
 * (their encodings at enc): the buffers change places, nothing is copied. */
static void keep_features(kproc *k, const unsigned char *enc, size_t count)
{
    size_t pneed = count * 8 * KP_PARAM_FIELDS;
    if (pneed > k->fcache_pcap) {
        unsigned char *c = realloc(k->fcache_params, pneed);
        if (!c) {
            kp_forget_features(k);
            return;
        }
        k->fcache_params = c;
        k->fcache_pcap = pneed;
    }
    memcpy(k->fcache_params, enc, pneed);
    unsigned char *buf = k->fcache;
    size_t cap = k->fcache_cap;
    k->fcache = k->in;
    k->fcache_cap = k->in_cap;
    k->in = buf;
    k->in_cap = cap;
    k->fcache_count = count;
}

/* The oracle asks for the features of a batch's combos one by one, right
 * after running the batch: they come in one request (up to
 * FEATURES_PREFETCH_BYTES of columns), sent with the RUN once the caller
 * has shown it wants them (kproc.prefetch), so a checked batch costs one
 * round trip instead of one per combo. */
#define FEATURES_PREFETCH_BYTES (64u << 20)

static sebt_status kp_features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                               sebt_features *out, sebt_error *err)
{
    /* What backend.h promises for every backend, checked before the kernel
     * sees anything: a kernel is handed valid input only. */
    sebt_status vst = sebt_series_check(s, err);
    if (vst)
        return vst;
    vst = sebt_params_validate(p, err);
    if (vst)
        return vst;
    kproc *k = self->state;
    pthread_mutex_lock(&k->mu);
    sebt_status st = kp_ensure_running(k, err);
    if (st)
        goto done;
    unsigned char enc[8 * KP_PARAM_FIELDS];
    put_params(enc, p);
    size_t col_bytes = (size_t)KP_FEATURE_COLUMNS_N * s->n * 8;
    if (k->fcache_count && k->has_series && same_series(&k->sent, s))
        for (size_t i = 0; i < k->fcache_count; i++)
            if (memcmp(k->fcache_params + i * sizeof enc, enc, sizeof enc) == 0) {
                decode_features(k->fcache + KP_HEADER + i * col_bytes, s->n, out);
                k->prefetch_used = true;
                goto done;
            }
    /* Not fetched yet: this combo, and the batch's combos after it. */
    const unsigned char *list = enc;
    size_t count = 1;
    for (size_t j = 0; j < k->batch_n; j++)
        if (memcmp(k->batch_params + j * sizeof enc, enc, sizeof enc) == 0) {
            size_t room = col_bytes ? FEATURES_PREFETCH_BYTES / col_bytes : k->batch_n;
            count = k->batch_n - j < room ? k->batch_n - j : room;
            if (count == 0)
                count = 1;
            list = k->batch_params + j * sizeof enc;
            /* the features of a batch just run: from now on they come with the RUN */
            k->prefetch = true;
            k->prefetch_used = true;
            break;
        }
    st = request_features(k, s, list, count, err);
    if (st && count > 1 && !k->broken) {
        /* The kernel refused one of the batch: ask for this combo alone, so
         * the refusal is charged to the combo it is about. */
        sebt_error_clear(err);
        list = enc;
        count = 1;
        st = request_features(k, s, list, count, err);
    }
    if (st)
        goto done;
    keep_features(k, list, count);
    decode_features((k->fcache_count ? k->fcache : k->in) + KP_HEADER, s->n, out);
done:
    pthread_mutex_unlock(&k->mu);
    return st;
}

/* The longest RESULTS a RUN may be answered with: at most one trade per two
 * valid bars, plus slack for a wrong answer to be read and reported by size
 * rather than by a cut frame. */
uint64_t kp_run_reply_max(size_t n_combos, size_t bars, bool want_trades)
{
    return (uint64_t)n_combos * KP_RESULT_FIELDS * 8 +
           (want_trades ? (uint64_t)n_combos * (bars / 2 + 2) * KP_TRADE_FIELDS * 8 : 0) + 4096;
}

/* Checks the reply to a RUN (in k->in) and fills results from it. */
sebt_status kp_run_reply(kproc *k, const sebt_series *s, size_t n_combos, bool want_trades, unsigned type,
                             uint64_t plen, const char *what, sebt_result *results, sebt_error *err)
{
    sebt_status st = SEBT_OK;
    if (type == KP_ERROR)
        return kp_error_reply(k, plen, what, n_combos, err);
    if (type != KP_RESULTS) {
        st = kp_fault(k, err, "answered the %s request with a %s frame, not RESULTS", what, type_name(type));
        return st;
    }
    uint64_t rows_len = (uint64_t)n_combos * KP_RESULT_FIELDS * 8;
    if (plen < rows_len) {
        st = kp_fault(k, err, "answered the %s request with %llu bytes of results (%zu rows of %d doubles: %llu bytes "
                    "expected, then the trades)", what, (unsigned long long)plen, n_combos, KP_RESULT_FIELDS,
                    (unsigned long long)rows_len);
        return st;
    }
    const unsigned char *q = k->in + KP_HEADER;
    double nbars = (double)s->n;
    uint64_t total_trades = 0;
    for (size_t i = 0; i < n_combos; i++) {
        const unsigned char *r = q + i * KP_RESULT_FIELDS * 8;
        double f[KP_RESULT_FIELDS];
        for (int j = 0; j < KP_RESULT_FIELDS; j++)
            f[j] = get_f64(r + 8 * j);
        const char *bad = !whole(f[0], 0, nbars) ? "n" : !whole(f[6], 0, nbars) ? "valid_bars"
                        : !whole(f[7], 0, 1) ? "open" : !whole(f[15], 0, nbars) ? "n_trades" : NULL;
        if (!bad && f[7] == 1.0)
            bad = !whole(f[8], 0, nbars - 1) ? "open signal_index" : !whole(f[9], 0, nbars - 1) ? "open entry_index"
                : !whole(f[14], 0, nbars) ? "open bars_held" : NULL;
        if (bad) {
            st = kp_fault(k, err, "sent a result for combo %zu whose %s is not a count or bar index in range (%s)", i,
                        bad, what);
            return st;
        }
        total_trades += (uint64_t)f[15];
    }
    uint64_t want = rows_len + (want_trades ? total_trades * KP_TRADE_FIELDS * 8 : 0);
    if (plen != want) {
        st = kp_fault(k, err, "answered the %s request with %llu bytes; %zu result rows%s%llu trades make %llu", what,
                    (unsigned long long)plen, n_combos, want_trades ? " and " : " and no trades (not asked for): ",
                    want_trades ? (unsigned long long)total_trades : 0ull, (unsigned long long)want);
        return st;
    }
    const unsigned char *tq = q + rows_len;
    for (size_t i = 0; i < n_combos; i++) {
        const unsigned char *r = q + i * KP_RESULT_FIELDS * 8;
        sebt_result *res = &results[i];
        memset(res, 0, sizeof *res);
        res->metrics.n = (int64_t)get_f64(r);
        res->metrics.win_rate = get_f64(r + 8);
        res->metrics.avg_r = get_f64(r + 16);
        res->metrics.total_pnl = get_f64(r + 24);
        res->metrics.max_dd = get_f64(r + 32);
        res->metrics.sharpe = get_f64(r + 40);
        res->valid_bars = (size_t)get_f64(r + 48);
        res->open_at_end.open = get_f64(r + 56) == 1.0;
        if (res->open_at_end.open) {
            res->open_at_end.signal_index = (int64_t)get_f64(r + 64);
            res->open_at_end.entry_index = (int64_t)get_f64(r + 72);
            res->open_at_end.entry_price = get_f64(r + 80);
            res->open_at_end.stop = get_f64(r + 88);
            res->open_at_end.tp = get_f64(r + 96);
            res->open_at_end.risk = get_f64(r + 104);
            res->open_at_end.bars_held = (int32_t)get_f64(r + 112);
        }
        res->n_trades = (size_t)get_f64(r + 120);
        if (!want_trades || res->n_trades == 0)
            continue;
        res->trades = calloc(res->n_trades, sizeof *res->trades);
        if (!res->trades) {
            sebt_results_free(results, i);
            st = sebt_fail(err, SEBT_ERR_NOMEM, "kernel %s: out of memory for %zu trades", k->name, res->n_trades);
            return st;
        }
        for (size_t t = 0; t < res->n_trades; t++, tq += KP_TRADE_FIELDS * 8) {
            double f[KP_TRADE_FIELDS];
            for (int j = 0; j < KP_TRADE_FIELDS; j++)
                f[j] = get_f64(tq + 8 * j);
            const char *bad = !whole(f[0], 0, nbars - 1) ? "signal_index" : !whole(f[1], 0, nbars - 1) ? "entry_index"
                            : !whole(f[2], 0, nbars - 1) ? "exit_index" : !whole(f[10], 0, 3) ? "reason"
                            : !whole(f[11], 0, nbars) ? "bars_held" : NULL;
            if (bad) {
                sebt_results_free(results, i + 1);
                st = kp_fault(k, err, "sent trade %zu of combo %zu with %s = %g (not a bar index, count or reason "
                            "0-3)", t, i, bad, f[bad[0] == 's' ? 0 : bad[0] == 'e' && bad[1] == 'n' ? 1
                                                      : bad[0] == 'e' ? 2 : bad[0] == 'r' ? 10 : 11]);
                return st;
            }
            sebt_trade *tr = &res->trades[t];
            tr->signal_index = (int64_t)f[0];
            tr->entry_index = (int64_t)f[1];
            tr->exit_index = (int64_t)f[2];
            tr->entry_price = f[3];
            tr->exit_price = f[4];
            tr->stop = f[5];
            tr->tp = f[6];
            tr->risk = f[7];
            tr->pnl = f[8];
            tr->r = f[9];
            tr->reason = (sebt_exit_reason)(int)f[10];
            tr->bars_held = (int32_t)f[11];
        }
    }
    return st;
}

static sebt_status kp_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                                size_t n_combos, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    sebt_status vst = sebt_series_check(s, err);
    if (vst)
        return vst;
    for (size_t i = 0; i < n_combos; i++) {
        sebt_status st = sebt_params_validate(&combos[i], err);
        if (st) {
            char msg[SEBT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            return sebt_fail(err, st, "combo %zu: %s", i, msg);
        }
    }
    if (opts && opts->stats)
        memset(opts->stats, 0, sizeof *opts->stats);
    kproc *k = self->state;
    bool want_trades = opts && opts->want_trades;
    pthread_mutex_lock(&k->mu);
    sebt_status st = kp_ensure_running(k, err);
    unsigned char *buf = NULL;
    if (st)
        goto done;
    /* A prefetch that went unused: the caller no longer asks for features. */
    if (k->prefetch && k->fcache_count && !k->prefetch_used)
        k->prefetch = false;
    size_t fcount = 0;
    if (k->prefetch && want_trades && n_combos) {
        size_t col_bytes = (size_t)KP_FEATURE_COLUMNS_N * s->n * 8;
        size_t room = col_bytes ? FEATURES_PREFETCH_BYTES / col_bytes : n_combos;
        fcount = n_combos < room ? n_combos : room ? room : 1;
    }
    size_t len;
    bool with_series;
    size_t body = 8 + 4 + 4 + n_combos * KP_PARAM_FIELDS * 8;
    buf = request_buffer(k, s, KP_HEADER + body + (fcount ? FEATURES_FRAME(fcount) : 0), &len, &with_series, err);
    if (!buf) {
        st = SEBT_ERR_NOMEM;
        goto done;
    }
    size_t run_at = len + KP_HEADER + 16;   /* where the encoded combos start */
    unsigned char *p = buf + len;
    put_header(p, KP_RUN, body);
    p += KP_HEADER;
    put_u64(p, n_combos);
    put_u32(p + 8, want_trades ? 1u : 0u);
    put_u32(p + 12, opts && opts->threads > 0 ? (uint32_t)opts->threads : 0u);
    p += 16;
    for (size_t i = 0; i < n_combos; i++)
        put_params(p + i * KP_PARAM_FIELDS * 8, &combos[i]);
    len += KP_HEADER + body;
    if (fcount) {
        put_features_frame(buf + len, buf + run_at, fcount);
        len += FEATURES_FRAME(fcount);
    }
    char what[96];
    snprintf(what, sizeof what, "RUN (%zu combo%s, %zu bars)", n_combos, n_combos == 1 ? "" : "s", s->n);
    uint64_t max_len = kp_run_reply_max(n_combos, s->n, want_trades);
    unsigned type;
    uint64_t plen;
    kp_request_work(k, n_combos, s->n);
    st = kp_exchange(k, buf, len, what, max_len, fcount > 0, &type, &plen, err);
    if (st)
        goto done;
    if (with_series)
        remember_series(k, s);
    kp_forget_features(k);
    {
        size_t need = n_combos * 8 * KP_PARAM_FIELDS;
        if (need > k->batch_cap) {
            unsigned char *b = realloc(k->batch_params, need);
            if (b) {
                k->batch_params = b;
                k->batch_cap = need;
            }
        }
        if (need <= k->batch_cap) {
            memcpy(k->batch_params, buf + run_at, need);
            k->batch_n = n_combos;
        } else {
            k->batch_n = 0;
        }
    }
    st = kp_run_reply(k, s, n_combos, want_trades, type, plen, what, results, err);
    if (fcount && !k->broken) {
        /* The reply to the FEATURES sent with the RUN. A refusal keeps
         * nothing: the features call asks again and reports it then. */
        sebt_error ferr = { 0 };
        sebt_status fst = kp_features_reply(k, s, fcount, NULL, 0, &ferr);
        if (fst == SEBT_OK) {
            keep_features(k, buf + run_at, fcount);
            k->prefetch_used = false;
        } else if (k->broken) {
            if (st == SEBT_OK)
                sebt_results_free(results, n_combos);
            st = fst;
            if (err)
                *err = ferr;
        }
    }
done:
    free(buf);
    pthread_mutex_unlock(&k->mu);
    return st;
}

/* ---- opening ---------------------------------------------------------------------- */

static void shell_quote(const char *s, char *out, size_t max)
{
    bool plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                strchr("_-./:=+,@%", *c);
    if (plain) {
        snprintf(out, max, "%s", s);
        return;
    }
    size_t o = 0;
    if (o + 1 < max)
        out[o++] = '\'';
    for (const char *c = s; *c && o + 6 < max; c++) {
        if (*c == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *c;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

static sebt_status parse_timeout(double *out, bool *given, sebt_error *err)
{
    *out = DEFAULT_TIMEOUT_S;
    *given = false;
    const char *v = getenv("SEBT_KERNEL_TIMEOUT");
    if (!v || !*v)
        return SEBT_OK;
    char *end;
    errno = 0;
    double t = strtod(v, &end);
    if (errno || *end || !(t > 0) || !isfinite(t))
        return sebt_fail(err, SEBT_ERR_USAGE, "SEBT_KERNEL_TIMEOUT='%s': expected seconds > 0 (the longest a kernel "
                         "may take to answer one request; default %g)", v, DEFAULT_TIMEOUT_S);
    *out = t;
    *given = true;
    return SEBT_OK;
}

sebt_status kernel_open(const char *value, const sebt_backend **out, sebt_error *err)
{
    *out = NULL;
    const char *cmd = value + strlen(SEBT_KERNEL_PREFIX);
    while (*cmd == ' ')
        cmd++;
    if (!*cmd)
        return sebt_fail(err, SEBT_ERR_USAGE, "'%s': no command after %s (e.g. 'exec:python3 mykernel.py')", value,
                         SEBT_KERNEL_PREFIX);
    if (strlen(value) >= sizeof kp_kernels[0]->value)
        return sebt_fail(err, SEBT_ERR_USAGE, "kernel command of %zu characters is too long", strlen(value));
    double timeout;
    bool timeout_given;
    sebt_status st = parse_timeout(&timeout, &timeout_given, err);
    if (st)
        return st;
    pthread_mutex_lock(&kp_registry_mu);
    for (size_t i = 0; i < kp_n_kernels; i++)
        if (strcmp(kp_kernels[i]->value, value) == 0) {
            kproc *k = kp_kernels[i];
            pthread_mutex_unlock(&kp_registry_mu);
            if (k->broken && k->sticky)
                return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s", k->broken_msg);
            *out = &k->backend;
            return SEBT_OK;
        }
    if (kp_n_kernels == MAX_KERNELS) {
        pthread_mutex_unlock(&kp_registry_mu);
        return sebt_fail(err, SEBT_ERR_USAGE, "more than %d kernel commands in one process", MAX_KERNELS);
    }
    kproc *k = calloc(1, sizeof *k);
    if (!k) {
        pthread_mutex_unlock(&kp_registry_mu);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory");
    }
    snprintf(k->value, sizeof k->value, "%s", value);
    shell_quote(value, k->quoted, sizeof k->quoted);
    k->to_fd = k->from_fd = k->err_fd = -1;
    k->owner = getpid();
    k->timeout_s = timeout;
    k->timeout_given = timeout_given;
    k->slot = (int)kp_n_kernels;
    pthread_mutex_init(&k->mu, NULL);
    st = kp_start_process(k, err);
    if (!st)
        st = kp_handshake(k, err);
    if (st) {
        if (k->pid > 0)
            kp_stop_process(k, false);
        pthread_mutex_unlock(&kp_registry_mu);
        free(k->in);
        pthread_mutex_destroy(&k->mu);
        free(k);
        return st;
    }
    k->backend.name = k->name;
    k->backend.description = k->description[0] ? k->description : "a kernel served over the kernel protocol";
    k->backend.features = kp_features;
    k->backend.run_batch = kp_run_batch;
    k->backend.state = k;
    kp_kernels[kp_n_kernels++] = k;
    pthread_mutex_unlock(&kp_registry_mu);
    *out = &k->backend;
    return SEBT_OK;
}

const char *kernel_selector(const sebt_backend *b)
{
    if (!b)
        return NULL;
    for (size_t i = 0; i < kp_n_kernels; i++)
        if (b == &kp_kernels[i]->backend || (b->state == kp_kernels[i] && b->state))
            return kp_kernels[i]->quoted;
    return NULL;
}
