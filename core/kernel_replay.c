/* Reproducers of a kernel's protocol faults: the requests sent to its
 * process since the handshake, saved after a fault and sent again to a
 * fresh process (docs/kernel-protocol.md). */
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

/* ---- reproducers: the requests that led to a fault -------------------------------- */

static kproc *kernel_of(const sebt_backend *b)
{
    for (size_t i = 0; b && i < kp_n_kernels; i++)
        if (b == &kp_kernels[i]->backend)
            return kp_kernels[i];
    return NULL;
}

static sebt_status not_a_kernel(const char *fn, const sebt_backend *b, sebt_error *err)
{
    return sebt_fail(err, SEBT_ERR_USAGE, "%s: backend %s is not a kernel command", fn, b && b->name ? b->name : "?");
}

sebt_status sebt_kernel_record(const sebt_backend *b, sebt_error *err)
{
    kproc *k = kernel_of(b);
    if (!k)
        return not_a_kernel("sebt_kernel_record", b, err);
    pthread_mutex_lock(&k->mu);
    k->recording = true;
    pthread_mutex_unlock(&k->mu);
    return SEBT_OK;
}

sebt_status sebt_kernel_set_limit(const sebt_backend *b, sebt_kernel_limit_fn limit, void *user, const char *why,
                                  sebt_error *err)
{
    kproc *k = kernel_of(b);
    if (!k)
        return not_a_kernel("sebt_kernel_set_limit", b, err);
    pthread_mutex_lock(&k->mu);
    k->limit = limit;
    k->limit_user = user;
    snprintf(k->limit_why, sizeof k->limit_why, "%s", why ? why : "the caller's limit");
    pthread_mutex_unlock(&k->mu);
    return SEBT_OK;
}

sebt_status sebt_kernel_save_requests(const sebt_backend *b, const char *path, sebt_error *err)
{
    kproc *k = kernel_of(b);
    if (!k || !k->recording)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_kernel_save_requests: not a recorded kernel");
    pthread_mutex_lock(&k->mu);
    sebt_status st = SEBT_OK;
    if (!k->fault_rec || k->fault_cut) {
        st = sebt_fail(err, SEBT_ERR_UNAVAILABLE, "the requests before the kernel's fault were not kept (%s)",
                       k->fault_rec ? "more than 256 MiB" : "no fault after a recorded handshake");
        goto done;
    }
    FILE *out = fopen(path, "wb");
    if (!out) {
        st = sebt_fail(err, SEBT_ERR_IO, "%s: %s", path, strerror(errno));
        goto done;
    }
    fflush(k->fault_rec);
    rewind(k->fault_rec);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, k->fault_rec)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            break;
    bool bad = ferror(k->fault_rec) || ferror(out);
    fseek(k->fault_rec, 0, SEEK_END);
    if (fclose(out) != 0 || bad)
        st = sebt_fail(err, SEBT_ERR_IO, "writing %s failed", path);
done:
    pthread_mutex_unlock(&k->mu);
    return st;
}

/* One recorded frame into *frame (malloc'd, header included); false at the
 * end of the file, or with *err set when it is not a frame. */
static bool next_frame(FILE *f, const char *path, unsigned char **frame, size_t *len, sebt_status *st,
                       sebt_error *err)
{
    unsigned char h[KP_HEADER];
    size_t got = fread(h, 1, sizeof h, f);
    if (got == 0 && feof(f))
        return false;
    uint64_t plen = got == sizeof h ? get_u64(h + 8) : 0;
    long at = ftell(f);
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    fseek(f, at, SEEK_SET);
    if (got != sizeof h || get_u32(h) != KP_MAGIC || at < 0 || plen > (uint64_t)(end - at)) {
        *st = sebt_fail(err, SEBT_ERR_INPUT, "%s: not a recording of kernel requests (a cut or foreign frame at "
                        "byte %ld)", path, at < 0 ? 0L : at - (long)got);
        return false;
    }
    if (get_u16(h + 4) != KP_VERSION) {
        /* Another version's combos have another layout: never sent as these. */
        *st = sebt_fail(err, SEBT_ERR_INPUT, "%s: requests of kernel protocol version %u; this sebt speaks version "
                        "%d (record them again with it)", path, get_u16(h + 4), KP_VERSION);
        return false;
    }
    *frame = malloc(KP_HEADER + (size_t)plen);
    if (!*frame) {
        *st = sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a recorded request of %llu bytes",
                        (unsigned long long)plen);
        return false;
    }
    memcpy(*frame, h, KP_HEADER);
    if (fread(*frame + KP_HEADER, 1, (size_t)plen, f) != plen) {
        free(*frame);
        *st = sebt_fail(err, SEBT_ERR_IO, "%s: read error", path);
        return false;
    }
    *len = KP_HEADER + (size_t)plen;
    return true;
}

/* Sends one recorded RUN or FEATURES frame (at buf + at, after the SERIES
 * frames before it) and checks the reply as the call that sent it would. */
static sebt_status replay_request(kproc *k, const unsigned char *buf, size_t at, size_t len, size_t bars,
                                  sebt_error *err)
{
    const unsigned char *frame = buf + at;
    unsigned type = get_u16(frame + 6);
    uint64_t plen = get_u64(frame + 8);
    sebt_series shape;   /* replies are checked against the series' length only */
    memset(&shape, 0, sizeof shape);
    shape.n = bars;
    if (plen < 8)
        return sebt_fail(err, SEBT_ERR_INPUT, "a recorded %s request of %llu bytes", type_name(type),
                         (unsigned long long)plen);
    uint64_t count = get_u64(frame + KP_HEADER);
    if (type == KP_FEATURES) {
        if (count > (plen - 8) / (8 * KP_PARAM_FIELDS))
            return sebt_fail(err, SEBT_ERR_INPUT, "a recorded FEATURES request that does not hold its combos");
        return kp_features_reply(k, &shape, (size_t)count, buf, len, err);
    }
    if (plen < 16 || count > (plen - 16) / (8 * KP_PARAM_FIELDS))
        return sebt_fail(err, SEBT_ERR_INPUT, "a recorded RUN request that does not hold its combos");
    bool want_trades = get_u32(frame + KP_HEADER + 8) & 1u;
    char what[96];
    snprintf(what, sizeof what, "RUN (%zu combo%s, %zu bars)", (size_t)count, count == 1 ? "" : "s", bars);
    unsigned rtype;
    uint64_t rlen;
    sebt_status st = kp_exchange(k, buf, len, what, kp_run_reply_max((size_t)count, bars, want_trades), false, &rtype,
                              &rlen, err);
    if (st)
        return st;
    sebt_result *res = calloc(count ? (size_t)count : 1, sizeof *res);
    if (!res)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for %llu results", (unsigned long long)count);
    st = kp_run_reply(k, &shape, (size_t)count, want_trades, rtype, rlen, what, res, err);
    if (st == SEBT_OK)
        sebt_results_free(res, (size_t)count);
    free(res);
    return st;
}

sebt_status sebt_kernel_replay(const sebt_backend *b, const char *path, uint64_t *replayed, sebt_error *err)
{
    *replayed = 0;
    kproc *k = kernel_of(b);
    if (!k)
        return sebt_fail(err, SEBT_ERR_USAGE, "%s holds the requests of a kernel command; --backend %s is not one",
                         path, b && b->name ? b->name : "?");
    FILE *f;
    sebt_status ost = sebt_open_input(path, false, &f, err);
    if (ost != SEBT_OK)
        return ost;
    pthread_mutex_lock(&k->mu);
    /* A fresh process, so the requests are its first, as they were. */
    if (k->pid > 0 && k->owner == getpid())
        kp_stop_process(k, true);
    sebt_status st = kp_ensure_running(k, err);
    unsigned char *buf = NULL, *frame = NULL;
    size_t buf_len = 0, frame_len = 0, bars = 0;
    while (st == SEBT_OK && next_frame(f, path, &frame, &frame_len, &st, err)) {
        unsigned type = get_u16(frame + 6);
        unsigned char *grown = realloc(buf, buf_len + frame_len);
        if (!grown) {
            st = sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for the recorded requests");
            break;
        }
        buf = grown;
        memcpy(buf + buf_len, frame, frame_len);
        buf_len += frame_len;
        if (type == KP_SERIES && frame_len >= KP_HEADER + 8)
            bars = (size_t)get_u64(frame + KP_HEADER);
        if (type == KP_RUN || type == KP_FEATURES) {
            st = replay_request(k, buf, buf_len - frame_len, buf_len, bars, err);
            buf_len = 0;
            if (st == SEBT_OK)
                (*replayed)++;
        }
        free(frame);
        frame = NULL;
    }
    free(frame);
    free(buf);
    fclose(f);
    /* What the kernel holds now is not known to the calls: start over. */
    k->has_series = false;
    kp_forget_features(k);
    k->batch_n = 0;
    pthread_mutex_unlock(&k->mu);
    return st;
}
