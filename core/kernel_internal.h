/* What the files of the kernel backend share: kernel_process.c starts the
 * kernel's process and holds the conversation (frames out, one frame back,
 * the handshake, faults), kernel_requests.c turns calls into RUN and
 * FEATURES requests and opens kernels, kernel_replay.c keeps and replays
 * the requests that led to a fault. Internal to core. */
#ifndef SEBT_KERNEL_INTERNAL_H
#define SEBT_KERNEL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel_process.h"
#include "le_bytes.h"

#define KP_MAGIC 0x4b424553u   /* "SEBK" read as a little-endian u32 */
/* 2: HELLO carries the strategy's declaration; RUN and FEATURES carry
 * every parameter of sebt/strategy.def, FEATURE_COLUMNS every column. */
#define KP_VERSION SEBT_KERNEL_PROTOCOL_VERSION
#define KP_HEADER 16
enum {
    KP_HELLO = 1, KP_HELLO_OK = 2, KP_SERIES = 3, KP_RUN = 4, KP_RESULTS = 5,
    KP_FEATURES = 6, KP_FEATURE_COLUMNS = 7, KP_ERROR = 8, KP_BYE = 9
};
#define KP_PARAM_FIELDS 18
#define KP_RESULT_FIELDS 16
#define KP_TRADE_FIELDS 12
#define KP_FEATURE_COLUMNS_N 10
/* The frames of a version carry every parameter and feature column of
 * sebt/strategy.def, in its order: one more is a new KP_VERSION
 * (docs/kernel-protocol.md). */
_Static_assert(KP_PARAM_FIELDS == SEBT_N_PARAMS, "RUN and FEATURES carry sebt_params: bump KP_VERSION");
_Static_assert(KP_FEATURE_COLUMNS_N == SEBT_N_FEATURES + 2,
               "FEATURE_COLUMNS carries sebt_features' columns, signal and valid: bump KP_VERSION");
#define KP_MAX_TEXT 65536      /* longest name, description or error text accepted */

#define DEFAULT_TIMEOUT_S 120.0
#define RECORD_MAX (256ull << 20)   /* the most request bytes kept for a reproducer */
#define MAX_KERNELS 16
#define TAIL_MAX 2048

typedef struct {
    char value[1024];          /* "exec:CMD" as given */
    char quoted[1200];         /* value quoted for a shell */
    pid_t owner;               /* the process that started pid */
    pid_t pid;                 /* 0: not running */
    int to_fd, from_fd, err_fd;
    double timeout_s;
    bool timeout_given;        /* SEBT_KERNEL_TIMEOUT was set: it wins over a caller's limit */
    /* A caller's limit on a RUN or FEATURES request by its work
     * (sebt_kernel_set_limit), named in a hang's message; req_limit_s is
     * the one for the request about to be exchanged (0: timeout_s). */
    sebt_kernel_limit_fn limit;
    void *limit_user;
    char limit_why[200];
    double req_limit_s;
    int slot;                  /* its entry in kernel_group */
    bool broken;               /* the last call ended it for a fault */
    bool sticky;               /* ... before its handshake: it is not started again */
    bool shook;                /* the running process has answered HELLO */
    uint64_t seq;              /* requests the running process has been sent */
    char cur_what[96];         /* the request being exchanged, for messages */
    /* With sebt_kernel_record: every byte sent to the running process since
     * its handshake (rec), and, after a fault, the bytes that led to it. */
    bool recording, rec_cut, fault_cut;
    FILE *rec, *fault_rec;
    uint64_t rec_bytes;
    char broken_msg[SEBT_ERROR_MSG_MAX];
    char name[65];
    char description[256];
    sebt_backend backend;
    char tail[TAIL_MAX];       /* the last bytes of its stderr */
    size_t tail_len;
    unsigned char *in;
    size_t in_len, in_cap;
    /* Bytes of a second reply that came with the first (a RUN and its
     * FEATURES sent in one write): at in + carry_at, carry bytes. */
    size_t carry, carry_at;
    /* The series the kernel holds now, so it is sent only when it changes. */
    bool has_series;
    sebt_series sent;
    pthread_mutex_t mu;
    /* The last RUN's combos (encoded as sent), and the feature columns
     * fetched ahead for them (see kp_features): a whole reply frame, the
     * columns at fcache + KP_HEADER. */
    unsigned char *batch_params;
    size_t batch_n, batch_cap;
    unsigned char *fcache, *fcache_params;
    size_t fcache_count, fcache_cap, fcache_pcap;
    /* The caller asks for the features of the combos it has just run (the
     * oracle does): from then on a RUN with trades carries the FEATURES
     * request of its batch in the same write, so a checked batch costs
     * one round trip. Learned, and unlearned when a prefetch goes unused. */
    bool prefetch, prefetch_used;
    /* What the conversation cost, for SEBT_KERNEL_STATS (bench); the
     * handshake apart (it is the kernel's start-up, not a request). */
    uint64_t requests, round_trips, bytes_out, bytes_in;
    double exchange_s, handshake_s, first_s, last_s;
} kproc;

/* The kernels this process opened, and the lock that guards the list. */
extern kproc *kp_kernels[MAX_KERNELS];
extern size_t kp_n_kernels;
extern pthread_mutex_t kp_registry_mu;

/* n doubles to or from little-endian bytes: a plain copy on a little-endian
 * host (every machine sebt runs on today), byte by byte elsewhere. */
static inline void put_f64s(unsigned char *p, const double *x, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, x, n * 8);
#else
    for (size_t i = 0; i < n; i++)
        put_f64(p + 8 * i, x[i]);
#endif
}

static inline void get_f64s(double *x, const unsigned char *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(x, p, n * 8);
#else
    for (size_t i = 0; i < n; i++)
        x[i] = get_f64(p + 8 * i);
#endif
}

static inline void put_header(unsigned char *p, uint16_t type, uint64_t len)
{
    put_u32(p, KP_MAGIC);
    put_u16(p + 4, KP_VERSION);
    put_u16(p + 6, type);
    put_u64(p + 8, len);
}

static inline const char *type_name(unsigned t)
{
    static const char *const names[] = { "?", "HELLO", "HELLO_OK", "SERIES", "RUN", "RESULTS",
                                         "FEATURES", "FEATURE_COLUMNS", "ERROR", "BYE" };
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* ---- time ------------------------------------------------------------------ */

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- kernel_process.c: the process and the conversation ------------------- */

/* Starts the kernel's command in its own process group. */
sebt_status kp_start_process(kproc *k, sebt_error *err);
/* Ends the kernel's process group and reaps the kernel (after a BYE when graceful). */
void kp_stop_process(kproc *k, bool graceful);
/* HELLO (the version and the declaration) and HELLO_OK; the first time,
 * the kernel's name and contract (kernel_hello.c). */
sebt_status kp_handshake(kproc *k, sebt_error *err);
/* "speaks kernel protocol version V; this sebt speaks version N", and for a
 * past version what its frames carried. */
void kp_version_text(unsigned version, char *out, size_t max);
/* The kernel, running in this process's own child, started when needed. */
sebt_status kp_ensure_running(kproc *k, sebt_error *err);
/* Records a fault of the kernel, ends it and fills err (kp_hung: it did
 * not answer in time). */
sebt_status kp_fault(kproc *k, sebt_error *err, const char *fmt, ...) SEBT_PRINTF(3, 4);
sebt_status kp_hung(kproc *k, sebt_error *err, const char *fmt, ...) SEBT_PRINTF(3, 4);
/* Writes out (out_len bytes) while reading, until one whole frame has come
 * back; its header is then at k->in and its payload right after. max_len is
 * the longest payload this request may be answered with. more: out holds a
 * second request, whose reply the next call (out_len 0) reads. */
/* The next kp_exchange is a request of `combos` combos over `bars` bars:
 * its limit is the caller's for that work, if one was set. */
void kp_request_work(kproc *k, size_t combos, size_t bars);
sebt_status kp_exchange(kproc *k, const unsigned char *out, size_t out_len, const char *what, uint64_t max_len,
                        bool more, unsigned *type, uint64_t *len, sebt_error *err);
/* An ERROR frame (in k->in) for a request of count combos. */
sebt_status kp_error_reply(kproc *k, uint64_t len, const char *what, size_t count, sebt_error *err);

/* ---- kernel_requests.c: RUN and FEATURES ---------------------------------- */

/* Checks the FEATURE_COLUMNS reply to a FEATURES request of count combos
 * (sent from out, out_len bytes; 0: sent already). */
sebt_status kp_features_reply(kproc *k, const sebt_series *s, size_t count, const unsigned char *out,
                              size_t out_len, sebt_error *err);
/* The longest RESULTS a RUN may be answered with. */
uint64_t kp_run_reply_max(size_t n_combos, size_t bars, bool want_trades);
/* Checks the reply to a RUN (in k->in) and fills results from it. */
sebt_status kp_run_reply(kproc *k, const sebt_series *s, size_t n_combos, bool want_trades, unsigned type,
                         uint64_t plen, const char *what, sebt_result *results, sebt_error *err);
/* Forgets the feature columns fetched ahead. */
void kp_forget_features(kproc *k);

#endif
