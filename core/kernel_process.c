/* A backend served by a child process over the kernel protocol, version 1
 * (docs/kernel-protocol.md has the byte layouts). sebt starts the kernel's
 * command once per process, with its stdin and stdout as the protocol's
 * pipes and its stderr captured (the tail goes into error messages).
 *
 * Everything the kernel process does wrong is reported as the kernel's:
 * exiting, hanging past the per-request timeout, a frame that is not one,
 * another protocol version, wrong sizes. Those faults end the kernel (its
 * whole process group, reaped) and fail the call. Before its handshake is
 * done that is SEBT_ERR_UNAVAILABLE (the kernel cannot be used: exit 2),
 * and every later call fails the same way; after it, SEBT_ERR_PROTOCOL
 * (SEBT_ERR_TIMEOUT for a hang): the kernel's bug, exit 1, naming the
 * request by its number since the kernel started, and the next call
 * starts the kernel again. The oracle passes both on as errors, never as
 * divergences. An ERROR reply is the kernel refusing an input it was
 * given: that is an ordinary failure of the call, which the oracle counts
 * as a divergence (the reference accepted the input) and can shrink. */
#define _GNU_SOURCE
#include "kernel_process.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Messages are built in fixed buffers; a very long command is cut in them,
 * never overflowed. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define KP_MAGIC 0x4b424553u   /* "SEBK" read as a little-endian u32 */
#define KP_VERSION 1
#define KP_HEADER 16
enum {
    KP_HELLO = 1, KP_HELLO_OK = 2, KP_SERIES = 3, KP_RUN = 4, KP_RESULTS = 5,
    KP_FEATURES = 6, KP_FEATURE_COLUMNS = 7, KP_ERROR = 8, KP_BYE = 9
};
#define KP_PARAM_FIELDS 15
#define KP_RESULT_FIELDS 16
#define KP_TRADE_FIELDS 12
#define KP_FEATURE_COLUMNS_N 9
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

static kproc *kernels[MAX_KERNELS];
static size_t n_kernels;
/* The process group of each running kernel (0: none) and the process that
 * started it, for sebt_kernels_kill in a signal handler. */
static atomic_int kernel_group[MAX_KERNELS], kernel_owner[MAX_KERNELS];
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static bool atexit_done;

/* ---- little-endian bytes ------------------------------------------------ */

static void put_u16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_f64(unsigned char *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(p, v);
}
static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static double get_f64(const unsigned char *p)
{
    uint64_t v = get_u64(p);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

/* n doubles to or from little-endian bytes: a plain copy on a little-endian
 * host (every machine sebt runs on today), byte by byte elsewhere. */
static void put_f64s(unsigned char *p, const double *x, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, x, n * 8);
#else
    for (size_t i = 0; i < n; i++)
        put_f64(p + 8 * i, x[i]);
#endif
}

static void get_f64s(double *x, const unsigned char *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(x, p, n * 8);
#else
    for (size_t i = 0; i < n; i++)
        x[i] = get_f64(p + 8 * i);
#endif
}

static void put_header(unsigned char *p, uint16_t type, uint64_t len)
{
    put_u32(p, KP_MAGIC);
    put_u16(p + 4, KP_VERSION);
    put_u16(p + 6, type);
    put_u64(p + 8, len);
}

static const char *type_name(unsigned t)
{
    static const char *const names[] = { "?", "HELLO", "HELLO_OK", "SERIES", "RUN", "RESULTS",
                                         "FEATURES", "FEATURE_COLUMNS", "ERROR", "BYE" };
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* ---- time ------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the process ---------------------------------------------------------- */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* After its group is ended: no process, no conversation. */
static void forget_process(kproc *k)
{
    atomic_store(&kernel_group[k->slot], 0);
    k->pid = 0;
    close_fd(&k->to_fd);
    close_fd(&k->from_fd);
    close_fd(&k->err_fd);
    k->in_len = 0;
    k->carry = 0;
    k->has_series = false;
    k->fcache_count = 0;
    k->batch_n = 0;
    k->shook = false;
}

/* Ends the kernel's process group and reaps the kernel. */
static void stop_process(kproc *k, bool graceful)
{
    if (k->pid <= 0)
        return;
    int st = 0;
    pid_t r = 0;
    if (graceful && k->to_fd >= 0) {
        unsigned char bye[KP_HEADER];
        put_header(bye, KP_BYE, 0);
        ssize_t w = write(k->to_fd, bye, sizeof bye);
        (void)w;
    }
    close_fd(&k->to_fd);
    if (graceful)
        for (int i = 0; i < 100 && (r = waitpid(k->pid, &st, WNOHANG)) == 0; i++)
            usleep(10000);
    kill(-k->pid, SIGKILL);
    if (r == 0)
        waitpid(k->pid, &st, 0);
    forget_process(k);
}

static void stop_all_at_exit(void)
{
    sebt_kernels_close();
}

/* SEBT_KERNEL_STATS=FILE: one JSON line per kernel appended at close, what
 * its requests cost seen from sebt (the protocol benchmark reads it). */
static void write_stats(const kproc *k)
{
    const char *path = getenv("SEBT_KERNEL_STATS");
    if (!path || !*path || k->requests == 0)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "{\"kernel\": \"%s\", \"requests\": %llu, \"round_trips\": %llu, \"bytes_out\": %llu, "
            "\"bytes_in\": %llu, \"exchange_seconds\": %.6f, \"handshake_seconds\": %.6f, "
            "\"span_seconds\": %.6f}\n", k->name, (unsigned long long)k->requests,
            (unsigned long long)k->round_trips, (unsigned long long)k->bytes_out, (unsigned long long)k->bytes_in,
            k->exchange_s, k->handshake_s, k->last_s - k->first_s);
    fclose(f);
}

void sebt_kernels_kill(void)
{
    int me = (int)getpid();
    for (int i = 0; i < MAX_KERNELS; i++) {
        int g = atomic_load(&kernel_group[i]);
        if (g > 0 && atomic_load(&kernel_owner[i]) == me)
            kill(-g, SIGKILL);
    }
}

void sebt_kernels_close(void)
{
    pid_t me = getpid();
    for (size_t i = 0; i < n_kernels; i++)
        if (kernels[i]->pid > 0 && kernels[i]->owner == me) {
            stop_process(kernels[i], true);
            write_stats(kernels[i]);
        }
}

static void append_tail(kproc *k, const char *buf, size_t n)
{
    if (n >= TAIL_MAX) {
        memcpy(k->tail, buf + n - TAIL_MAX, TAIL_MAX);
        k->tail_len = TAIL_MAX;
        return;
    }
    if (k->tail_len + n > TAIL_MAX) {
        size_t drop = k->tail_len + n - TAIL_MAX;
        memmove(k->tail, k->tail + drop, k->tail_len - drop);
        k->tail_len -= drop;
    }
    memcpy(k->tail + k->tail_len, buf, n);
    k->tail_len += n;
}

static void drain_stderr(kproc *k)
{
    if (k->err_fd < 0)
        return;
    char buf[4096];
    for (;;) {
        ssize_t r = read(k->err_fd, buf, sizeof buf);
        if (r > 0) {
            append_tail(k, buf, (size_t)r);
            continue;
        }
        if (r == 0)
            close_fd(&k->err_fd);
        return;   /* EAGAIN or an error: nothing more now */
    }
}

/* The end of the kernel's stderr on one line, at most max bytes. */
static void tail_text(const kproc *k, char *out, size_t max)
{
    size_t n = k->tail_len;
    while (n && (k->tail[n - 1] == '\n' || k->tail[n - 1] == '\r' || k->tail[n - 1] == ' '))
        n--;
    if (n == 0) {
        snprintf(out, max, "(its stderr is empty)");
        return;
    }
    size_t from = n > max - 24 ? n - (max - 24) : 0;
    size_t o = (size_t)snprintf(out, max, "its stderr ends: %s", from ? "..." : "");
    for (size_t i = from; i < n && o + 1 < max; i++) {
        char c = k->tail[i];
        if (c == '\n') {
            if (o + 4 >= max)
                break;
            memcpy(out + o, " | ", 3);
            o += 3;
            continue;
        }
        out[o++] = (c >= 32 && c < 127) || (unsigned char)c >= 128 ? c : '?';
    }
    out[o] = '\0';
}

/* How the process ended, waiting up to a second for it to end. */
static void exit_text(kproc *k, char *out, size_t max)
{
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 100 && (r = waitpid(k->pid, &st, WNOHANG)) == 0; i++)
        usleep(10000);
    if (r == k->pid) {
        k->pid = -k->pid;   /* reaped: only its group is left to end */
        if (WIFEXITED(st))
            snprintf(out, max, "exited with status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            snprintf(out, max, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
        else
            snprintf(out, max, "ended");
    } else {
        snprintf(out, max, "closed its stdout");
    }
}

/* Records a fault of the kernel, ends it and fills err. */
static sebt_status kfault_v(kproc *k, bool hung, sebt_error *err, const char *fmt, va_list ap)
{
    char what[320];
    vsnprintf(what, sizeof what, fmt, ap);
    drain_stderr(k);
    bool shook = k->shook;
    uint64_t seq = k->seq;
    if (k->pid < 0) {
        /* already reaped by exit_text: end what is left of its group */
        kill(k->pid, SIGKILL);
        forget_process(k);
    } else {
        stop_process(k, false);
    }
    char tail[200];
    tail_text(k, tail, sizeof tail);
    k->broken = true;
    k->sticky = !shook;
    if (!shook) {
        snprintf(k->broken_msg, sizeof k->broken_msg, "kernel %s %s; %s", k->quoted, what, tail);
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s", k->broken_msg);
    }
    /* After the handshake: the kernel's bug, in a request that can be
     * named; the next call starts it again. The requests that led to it
     * are kept for a reproducer. */
    if (k->recording) {
        if (k->fault_rec)
            fclose(k->fault_rec);
        k->fault_rec = k->rec;
        k->fault_cut = k->rec_cut || !k->rec;
        k->rec = NULL;
        k->rec_bytes = 0;
        k->rec_cut = false;
    }
    snprintf(k->broken_msg, sizeof k->broken_msg, "kernel %s, request %llu since it started (%s): %s; %s",
             k->quoted, (unsigned long long)seq, k->cur_what, what, tail);
    return sebt_fail(err, hung ? SEBT_ERR_TIMEOUT : SEBT_ERR_PROTOCOL, "%s", k->broken_msg);
}

static sebt_status kfault(kproc *k, sebt_error *err, const char *fmt, ...) SEBT_PRINTF(3, 4);
static sebt_status kfault(kproc *k, sebt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sebt_status st = kfault_v(k, false, err, fmt, ap);
    va_end(ap);
    return st;
}

/* A kernel that did not answer in time: SEBT_ERR_TIMEOUT once it had shaken hands. */
static sebt_status khung(kproc *k, sebt_error *err, const char *fmt, ...) SEBT_PRINTF(3, 4);
static sebt_status khung(kproc *k, sebt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sebt_status st = kfault_v(k, true, err, fmt, ap);
    va_end(ap);
    return st;
}

static sebt_status start_process(kproc *k, sebt_error *err)
{
    int in_p[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
    if (pipe2(in_p, O_CLOEXEC) || pipe2(out_p, O_CLOEXEC) || pipe2(err_p, O_CLOEXEC)) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (in_p[i] >= 0) close(in_p[i]);
            if (out_p[i] >= 0) close(out_p[i]);
            if (err_p[i] >= 0) close(err_p[i]);
        }
        return sebt_fail(err, SEBT_ERR_IO, "kernel %s: cannot make pipes: %s", k->quoted, strerror(e));
    }
    const char *cmd = k->value + strlen(SEBT_KERNEL_PREFIX);
    pid_t parent = getpid();
    /* No signal between fork and kernel_group naming the kernel: the
     * handler (sebt_kernels_kill) would miss it. */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    fflush(NULL);
    pid_t pid = fork();
    if (pid > 0) {
        setpgid(pid, pid);
        atomic_store(&kernel_owner[k->slot], (int)parent);
        atomic_store(&kernel_group[k->slot], (int)pid);
    }
    if (pid != 0)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        int e = errno;
        close(in_p[0]); close(in_p[1]); close(out_p[0]); close(out_p[1]); close(err_p[0]); close(err_p[1]);
        return sebt_fail(err, SEBT_ERR_IO, "kernel %s: cannot start a process: %s", k->quoted, strerror(e));
    }
    if (pid == 0) {
        /* Its own process group, so ending it ends what it started; and it
         * dies with sebt, whatever way sebt ends. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(in_p[0], 0);
        dup2(out_p[1], 1);
        dup2(err_p[1], 2);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(in_p[0]);
    close(out_p[1]);
    close(err_p[1]);
    k->pid = pid;
    k->owner = parent;
    k->to_fd = in_p[1];
    k->from_fd = out_p[0];
    k->err_fd = err_p[0];
    k->tail_len = 0;
    k->in_len = 0;
    k->carry = 0;
    k->has_series = false;
    k->broken = false;
    k->shook = false;
    k->seq = 0;
    if (k->rec) {
        fflush(k->rec);
        if (ftruncate(fileno(k->rec), 0) == 0)
            rewind(k->rec);
        else
            k->rec_cut = true;
    }
    k->rec_bytes = 0;
    k->rec_cut = false;
    /* 1 MiB pipes (where the system allows): a series or a feature reply
     * crosses in a few writes instead of hundreds of 64 KiB ones. */
    fcntl(k->to_fd, F_SETPIPE_SZ, 1 << 20);
    fcntl(k->from_fd, F_SETPIPE_SZ, 1 << 20);
    fcntl(k->to_fd, F_SETFL, fcntl(k->to_fd, F_GETFL) | O_NONBLOCK);
    fcntl(k->from_fd, F_SETFL, fcntl(k->from_fd, F_GETFL) | O_NONBLOCK);
    fcntl(k->err_fd, F_SETFL, fcntl(k->err_fd, F_GETFL) | O_NONBLOCK);
    if (!atexit_done) {
        atexit(stop_all_at_exit);
        atexit_done = true;
    }
    return SEBT_OK;
}

/* ---- one exchange: frames out, one frame back --------------------------------- */

static bool grow_in(kproc *k, size_t need)
{
    if (need <= k->in_cap)
        return true;
    size_t cap = k->in_cap ? k->in_cap : 65536;
    while (cap < need)
        cap *= 2;
    unsigned char *p = realloc(k->in, cap);
    if (!p)
        return false;
    k->in = p;
    k->in_cap = cap;
    return true;
}

/* What the kernel wrote instead of a frame, for the message. */
static void junk_text(const unsigned char *p, size_t n, char *out, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < 48 && o + 5 < max; i++)
        out[o++] = p[i] >= 32 && p[i] < 127 ? (char)p[i] : '.';
    out[o] = '\0';
}

/* Keeps the bytes of a request for a reproducer (sebt_kernel_record). */
static void record(kproc *k, const unsigned char *out, size_t n)
{
    if (k->rec_cut)
        return;
    if (!k->rec)
        k->rec = tmpfile();
    if (!k->rec || k->rec_bytes + n > RECORD_MAX || fwrite(out, 1, n, k->rec) != n) {
        k->rec_cut = true;
        return;
    }
    k->rec_bytes += n;
}

/* What came of a frame that did not come whole: a cut header, or a short
 * frame (what its header promised, what came). */
static const char *short_text(const kproc *k, bool have_header, uint64_t plen, char *out, size_t max)
{
    if (!have_header)
        snprintf(out, max, "a cut frame header (%zu of %d bytes)", k->in_len, KP_HEADER);
    else
        snprintf(out, max, "a short %s frame: its header promised %llu bytes of payload, %zu came",
                 type_name(get_u16(k->in + 6)), (unsigned long long)plen, k->in_len - KP_HEADER);
    return out;
}

/* Whether the kernel's process has ended (not reaped: exit_text does). */
static bool process_ended(const kproc *k)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (k->pid <= 0 || waitid(P_PID, (id_t)k->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return false;
    return info.si_pid == k->pid;
}

/* The kernel ended (how) or closed its stdout during a request. */
static sebt_status ended_fault(kproc *k, const char *how, const char *what, bool have_header, uint64_t plen,
                               const char *note, sebt_error *err)
{
    if (k->in_len) {
        char cut[160];
        return kfault(k, err, "%s in the middle of its reply to the %s request: %s%s", how, what,
                      short_text(k, have_header, plen, cut, sizeof cut), note);
    }
    return kfault(k, err, "%s during the %s request, before answering%s", how, what, note);
}

/* Writes out (out_len bytes) while reading, until one whole frame has come
 * back; its header is then at k->in and its payload right after. max_len is
 * the longest payload this request may be answered with. more: out holds a
 * second request, whose reply the next call (out_len 0) reads; bytes of it
 * that come with the first reply are kept for that call. */
static sebt_status exchange(kproc *k, const unsigned char *out, size_t out_len, const char *what,
                            uint64_t max_len, bool more, unsigned *type, uint64_t *len, sebt_error *err)
{
    /* Bytes left over from before, or EOF now: the kernel wrote outside a
     * reply, or ended between requests. */
    if (k->in_len)
        return kfault(k, err, "wrote %zu bytes on stdout outside a reply (before the %s request)", k->in_len, what);
    if (k->carry) {
        memmove(k->in, k->in + k->carry_at, k->carry);
        k->in_len = k->carry;
        k->carry = 0;
    }
    if (k->shook)
        k->seq++;
    snprintf(k->cur_what, sizeof k->cur_what, "%s", what);
    if (k->recording && k->shook && out_len)
        record(k, out, out_len);
    sigset_t pipe_set, old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    double t_start = now_s();
    double deadline = t_start + k->timeout_s;
    size_t written = 0;
    sebt_status rc = SEBT_OK;
    bool have_header = false;
    uint64_t plen = 0;
    for (;;) {
        /* Text instead of a frame is known by its first bytes: a line
         * shorter than a header is not waited on until the timeout. */
        if (!have_header && k->in_len && memcmp(k->in, "SEBK", k->in_len < 4 ? k->in_len : 4) != 0) {
            char junk[64];
            junk_text(k->in, k->in_len, junk, sizeof junk);
            rc = kfault(k, err, "wrote something that is not a protocol frame on stdout during the %s request "
                        "(\"%s\"; a kernel prints to stderr, never to stdout)", what, junk);
            break;
        }
        if (k->in_len >= KP_HEADER && !have_header) {
            uint32_t magic = get_u32(k->in);
            unsigned version = get_u16(k->in + 4);
            *type = get_u16(k->in + 6);
            plen = get_u64(k->in + 8);
            if (magic != KP_MAGIC) {
                char junk[64];
                junk_text(k->in, k->in_len, junk, sizeof junk);
                rc = kfault(k, err, "wrote something that is not a protocol frame on stdout during the %s request "
                            "(\"%s\"; a kernel prints to stderr, never to stdout)", what, junk);
                break;
            }
            if (version != KP_VERSION) {
                rc = kfault(k, err, "speaks kernel protocol version %u; this sebt speaks version %d", version,
                            KP_VERSION);
                break;
            }
            uint64_t cap = *type == KP_ERROR ? 8 + 4 + KP_MAX_TEXT : max_len;
            if (plen > cap) {
                rc = kfault(k, err, "answered the %s request with a %s frame of %llu bytes (at most %llu "
                            "expected)", what, type_name(*type), (unsigned long long)plen, (unsigned long long)cap);
                break;
            }
            have_header = true;
        }
        if (have_header && k->in_len >= KP_HEADER + plen && (written == out_len || !more)) {
            if (k->in_len > KP_HEADER + plen && more) {
                k->carry_at = (size_t)(KP_HEADER + plen);
                k->carry = k->in_len - k->carry_at;
            } else if (k->in_len > KP_HEADER + plen) {
                rc = kfault(k, err, "wrote %zu bytes after its reply to the %s request",
                            k->in_len - (size_t)(KP_HEADER + plen), what);
                break;
            }
            *len = plen;
            k->in_len = 0;   /* consumed by the caller before the next exchange */
            break;
        }
        double left = deadline - now_s();
        if (left <= 0) {
            char cut[160];
            if (k->in_len)
                rc = khung(k, err, "did not finish its reply to the %s request within %g s (SEBT_KERNEL_TIMEOUT): "
                           "%s, then nothing more; sebt ended it", what, k->timeout_s,
                           short_text(k, have_header, plen, cut, sizeof cut));
            else
                rc = khung(k, err, "did not answer the %s request within %g s (SEBT_KERNEL_TIMEOUT; %s); "
                           "sebt ended it", what, k->timeout_s,
                           written < out_len ? "it stopped reading its stdin" : "it read the whole request");
            break;
        }
        struct pollfd fds[3];
        int nf = 0, i_out = -1, i_in, i_err = -1;
        if (written < out_len) {
            fds[nf] = (struct pollfd){ .fd = k->to_fd, .events = POLLOUT };
            i_out = nf++;
        }
        fds[nf] = (struct pollfd){ .fd = k->from_fd, .events = POLLIN };
        i_in = nf++;
        if (k->err_fd >= 0) {
            fds[nf] = (struct pollfd){ .fd = k->err_fd, .events = POLLIN };
            i_err = nf++;
        }
        /* Short slices: a kernel that exits while a process it started
         * still holds its stdout sends no EOF; it is seen ending here. */
        int ms = left > 0.1 ? 100 : (int)(left * 1000.0) + 1;
        int pr = poll(fds, (nfds_t)nf, ms);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            rc = kfault(k, err, "could not be waited for: %s", strerror(errno));
            break;
        }
        if (pr == 0 && process_ended(k)) {
            char how[96];
            exit_text(k, how, sizeof how);
            rc = ended_fault(k, how, what, have_header, plen, " (a process it started still holds its stdout)", err);
            break;
        }
        if (i_err >= 0 && fds[i_err].revents)
            drain_stderr(k);
        if (fds[i_in].revents) {
            size_t want = have_header && k->in_len < KP_HEADER + plen ? (size_t)(KP_HEADER + plen) - k->in_len
                                                                      : 65536;
            if (want < 65536)
                want = 65536;
            if (want > (1u << 24))
                want = 1u << 24;
            if (!grow_in(k, k->in_len + want)) {
                rc = sebt_fail(err, SEBT_ERR_NOMEM, "kernel %s: out of memory for its reply", k->quoted);
                break;
            }
            ssize_t r = read(k->from_fd, k->in + k->in_len, want);
            if (r > 0) {
                k->in_len += (size_t)r;
                continue;
            }
            if (r == 0) {
                char how[96];
                exit_text(k, how, sizeof how);
                rc = ended_fault(k, how, what, have_header, plen, "", err);
                break;
            }
            if (errno != EAGAIN && errno != EINTR) {
                rc = kfault(k, err, "could not be read from: %s", strerror(errno));
                break;
            }
        }
        if (i_out >= 0 && fds[i_out].revents) {
            ssize_t w = write(k->to_fd, out + written, out_len - written);
            if (w > 0) {
                written += (size_t)w;
            } else if (w < 0 && errno == EPIPE) {
                struct timespec zero = { 0, 0 };
                sigtimedwait(&pipe_set, NULL, &zero);
                char how[96];
                exit_text(k, how, sizeof how);
                rc = kfault(k, err, "%s while sebt was sending the %s request (%zu of %zu bytes sent)", how, what,
                            written, out_len);
                break;
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                rc = kfault(k, err, "could not be written to: %s", strerror(errno));
                break;
            }
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    double t_end = now_s();
    if (k->requests == 0)
        k->first_s = t_start;
    k->last_s = t_end;
    k->requests++;
    k->round_trips += out_len > 0;
    k->bytes_out += written;
    k->bytes_in += rc == SEBT_OK ? KP_HEADER + *len : 0;
    k->exchange_s += t_end - t_start;
    return rc;
}

/* A kernel's text for a message on one line: control characters (escape
 * sequences, bells, line breaks that would start a fake line) written as
 * \n, \r, \t or \xHH; other bytes, UTF-8 included, as they are. */
static void escape_text(const unsigned char *p, size_t n, char *out, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < max; i++) {
        unsigned char c = p[i];
        if (c >= 32 && c != 127) {
            out[o++] = (char)c;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

/* ERROR frames: the kernel refused an input of the request (count combos):
 * a combo index it names must be one of them, or -1. */
static sebt_status error_reply(kproc *k, uint64_t len, const char *what, size_t count, sebt_error *err)
{
    const unsigned char *p = k->in + KP_HEADER;
    if (len < 12 || get_u32(p + 8) != len - 12)
        return kfault(k, err, "sent a malformed ERROR frame (%llu bytes) for the %s request",
                      (unsigned long long)len, what);
    int64_t combo = (int64_t)get_u64(p);
    char text[SEBT_ERROR_MSG_MAX];
    escape_text(p + 12, (size_t)(len - 12), text, sizeof text);
    if (combo < -1 || (combo >= 0 && (uint64_t)combo >= count))
        return kfault(k, err, "sent an ERROR about combo %lld for the %s request, which has combos 0 to %zu "
                      "(or -1 for none): %s", (long long)combo, what, count ? count - 1 : 0, text);
    if (combo >= 0)
        return sebt_fail(err, SEBT_ERR_PARAM, "kernel %s failed on combo %lld: %s", k->name, (long long)combo, text);
    return sebt_fail(err, SEBT_ERR_INPUT, "kernel %s failed: %s", k->name, text);
}

/* ---- the handshake ------------------------------------------------------------ */

static sebt_status handshake(kproc *k, sebt_error *err)
{
    unsigned char hello[KP_HEADER + 4];
    put_header(hello, KP_HELLO, 4);
    put_u32(hello + KP_HEADER, KP_VERSION);
    unsigned type;
    uint64_t len;
    uint64_t requests = k->requests, round_trips = k->round_trips, bytes_out = k->bytes_out, bytes_in = k->bytes_in;
    double exchange_s = k->exchange_s;
    sebt_status st = exchange(k, hello, sizeof hello, "HELLO", 4 + 8 + 2 * (2 + KP_MAX_TEXT), false, &type, &len,
                              err);
    k->handshake_s += k->exchange_s - exchange_s;
    k->requests = requests;
    k->round_trips = round_trips;
    k->bytes_out = bytes_out;
    k->bytes_in = bytes_in;
    k->exchange_s = exchange_s;
    if (st)
        return st;
    if (type == KP_ERROR) {
        char text[SEBT_ERROR_MSG_MAX / 2];
        escape_text(k->in + KP_HEADER + 12, len > 12 ? (size_t)(len - 12) : 0, text, sizeof text);
        return kfault(k, err, "refused the handshake: %s", text);
    }
    if (type != KP_HELLO_OK)
        return kfault(k, err, "answered HELLO with a %s frame, not HELLO_OK", type_name(type));
    const unsigned char *p = k->in + KP_HEADER;
    if (len < 16)
        return kfault(k, err, "sent a HELLO_OK of %llu bytes (at least 16 expected)", (unsigned long long)len);
    uint32_t kind = get_u32(p);
    double tol = get_f64(p + 4);
    size_t name_len = get_u16(p + 12);
    if (14 + name_len + 2 > len)
        return kfault(k, err, "sent a HELLO_OK whose name runs past its end");
    size_t desc_len = get_u16(p + 14 + name_len);
    if (14 + name_len + 2 + desc_len != len)
        return kfault(k, err, "sent a HELLO_OK of %llu bytes for a name of %zu and a description of %zu bytes "
                      "(%zu expected)", (unsigned long long)len, name_len, desc_len, 16 + name_len + desc_len);
    char name[65];
    if (name_len == 0 || name_len >= sizeof name)
        return kfault(k, err, "gave a name of %zu bytes (1 to 64 expected)", name_len);
    memcpy(name, p + 14, name_len);
    name[name_len] = '\0';
    for (size_t i = 0; i < name_len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return kfault(k, err, "gave the name '%s' (letters, digits, '_', '-' and '.' only)", name);
    }
    if (kind == 0) {
        if (tol != 0)
            return kfault(k, err, "declares an exact contract with tol %g (exact means tol 0)", tol);
    } else if (kind == 1) {
        if (!(tol > 0 && tol < 1))
            return kfault(k, err, "declares a tolerant contract with tol %g (expected 0 < tol < 1)", tol);
    } else {
        return kfault(k, err, "declares an unknown contract kind %u (0 exact, 1 tolerant)", kind);
    }
    if (k->name[0]) {
        /* A restart (in a forked child): the same kernel must come back. */
        if (strcmp(k->name, name) != 0 || (int)k->backend.contract.kind != (int)kind || k->backend.contract.tol != tol)
            return kfault(k, err, "came back as '%s' with another contract than the first time ('%s')", name,
                          k->name);
        k->shook = true;
        return SEBT_OK;
    }
    snprintf(k->name, sizeof k->name, "%s", name);
    size_t dl = desc_len < sizeof k->description ? desc_len : sizeof k->description - 1;
    memcpy(k->description, p + 16 + name_len, dl);
    k->description[dl] = '\0';
    k->backend.contract.kind = kind == 0 ? SEBT_CONTRACT_EXACT : SEBT_CONTRACT_TOLERANT;
    k->backend.contract.tol = tol;
    k->shook = true;
    return SEBT_OK;
}

/* The kernel, running in this process's own child: a forked process (sebt
 * validate's checks) starts its own, since the pipes it inherited belong to
 * the parent's conversation. */
static sebt_status ensure_running(kproc *k, sebt_error *err)
{
    if (k->owner != getpid()) {
        if (k->pid != 0) {
            close_fd(&k->to_fd);
            close_fd(&k->from_fd);
            close_fd(&k->err_fd);
            k->pid = 0;   /* the parent's, not ours to end */
        }
        k->in_len = 0;
        k->carry = 0;
        k->has_series = false;
        k->fcache_count = 0;
        k->batch_n = 0;
        k->broken = false;
        k->owner = getpid();
    }
    if (k->broken && k->sticky)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s", k->broken_msg);
    /* A fault after the handshake ended it: this call starts it again. */
    k->broken = false;
    if (k->pid > 0)
        return SEBT_OK;
    sebt_status st = start_process(k, err);
    if (st)
        return st;
    return handshake(k, err);
}

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

static void forget_features(kproc *k)
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
static sebt_status features_reply(kproc *k, const sebt_series *s, size_t count, const unsigned char *out,
                                  size_t out_len, sebt_error *err)
{
    char what[96];
    snprintf(what, sizeof what, "FEATURES (%zu combo%s, %zu bars)", count, count == 1 ? "" : "s", s->n);
    unsigned type;
    uint64_t plen;
    uint64_t want = (uint64_t)count * KP_FEATURE_COLUMNS_N * s->n * 8;
    sebt_status st = exchange(k, out, out_len, what, want, false, &type, &plen, err);
    if (st)
        return st;
    if (type == KP_ERROR)
        return error_reply(k, plen, what, count, err);
    if (type != KP_FEATURE_COLUMNS)
        return kfault(k, err, "answered the %s request with a %s frame, not FEATURE_COLUMNS", what, type_name(type));
    if (plen != want)
        return kfault(k, err, "answered the %s request with %llu bytes of features (%d columns of %zu doubles per "
                      "combo: %llu bytes expected)", what, (unsigned long long)plen, KP_FEATURE_COLUMNS_N, s->n,
                      (unsigned long long)want);
    const unsigned char *q = k->in + KP_HEADER;
    for (size_t c = 0; c < count; c++)
        for (int col = SEBT_N_FEATURES; col < KP_FEATURE_COLUMNS_N; col++)
            for (size_t t = 0; t < s->n; t++) {
                double v = get_f64(q + 8 * ((c * KP_FEATURE_COLUMNS_N + (size_t)col) * s->n + t));
                if (v != 0.0 && v != 1.0)
                    return kfault(k, err, "sent %s[%zu] = %g for combo %zu of the %s request (0 or 1 expected)",
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
    sebt_status st = features_reply(k, s, count, buf, len, err);
    free(buf);
    if (with_series && (st == SEBT_OK || !k->broken)) {
        remember_series(k, s);
        forget_features(k);
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
            forget_features(k);
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
    sebt_status st = ensure_running(k, err);
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
static uint64_t run_reply_max(size_t n_combos, size_t bars, bool want_trades)
{
    return (uint64_t)n_combos * KP_RESULT_FIELDS * 8 +
           (want_trades ? (uint64_t)n_combos * (bars / 2 + 2) * KP_TRADE_FIELDS * 8 : 0) + 4096;
}

/* Checks the reply to a RUN (in k->in) and fills results from it. */
static sebt_status run_reply(kproc *k, const sebt_series *s, size_t n_combos, bool want_trades, unsigned type,
                             uint64_t plen, const char *what, sebt_result *results, sebt_error *err)
{
    sebt_status st = SEBT_OK;
    if (type == KP_ERROR)
        return error_reply(k, plen, what, n_combos, err);
    if (type != KP_RESULTS) {
        st = kfault(k, err, "answered the %s request with a %s frame, not RESULTS", what, type_name(type));
        return st;
    }
    uint64_t rows_len = (uint64_t)n_combos * KP_RESULT_FIELDS * 8;
    if (plen < rows_len) {
        st = kfault(k, err, "answered the %s request with %llu bytes of results (%zu rows of %d doubles: %llu bytes "
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
            st = kfault(k, err, "sent a result for combo %zu whose %s is not a count or bar index in range (%s)", i,
                        bad, what);
            return st;
        }
        total_trades += (uint64_t)f[15];
    }
    uint64_t want = rows_len + (want_trades ? total_trades * KP_TRADE_FIELDS * 8 : 0);
    if (plen != want) {
        st = kfault(k, err, "answered the %s request with %llu bytes; %zu result rows%s%llu trades make %llu", what,
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
                st = kfault(k, err, "sent trade %zu of combo %zu with %s = %g (not a bar index, count or reason "
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
    sebt_status st = ensure_running(k, err);
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
    uint64_t max_len = run_reply_max(n_combos, s->n, want_trades);
    unsigned type;
    uint64_t plen;
    st = exchange(k, buf, len, what, max_len, fcount > 0, &type, &plen, err);
    if (st)
        goto done;
    if (with_series)
        remember_series(k, s);
    forget_features(k);
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
    st = run_reply(k, s, n_combos, want_trades, type, plen, what, results, err);
    if (fcount && !k->broken) {
        /* The reply to the FEATURES sent with the RUN. A refusal keeps
         * nothing: the features call asks again and reports it then. */
        sebt_error ferr = { 0 };
        sebt_status fst = features_reply(k, s, fcount, NULL, 0, &ferr);
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

static sebt_status parse_timeout(double *out, sebt_error *err)
{
    *out = DEFAULT_TIMEOUT_S;
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
    if (strlen(value) >= sizeof kernels[0]->value)
        return sebt_fail(err, SEBT_ERR_USAGE, "kernel command of %zu characters is too long", strlen(value));
    double timeout;
    sebt_status st = parse_timeout(&timeout, err);
    if (st)
        return st;
    pthread_mutex_lock(&registry_mu);
    for (size_t i = 0; i < n_kernels; i++)
        if (strcmp(kernels[i]->value, value) == 0) {
            kproc *k = kernels[i];
            pthread_mutex_unlock(&registry_mu);
            if (k->broken && k->sticky)
                return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s", k->broken_msg);
            *out = &k->backend;
            return SEBT_OK;
        }
    if (n_kernels == MAX_KERNELS) {
        pthread_mutex_unlock(&registry_mu);
        return sebt_fail(err, SEBT_ERR_USAGE, "more than %d kernel commands in one process", MAX_KERNELS);
    }
    kproc *k = calloc(1, sizeof *k);
    if (!k) {
        pthread_mutex_unlock(&registry_mu);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory");
    }
    snprintf(k->value, sizeof k->value, "%s", value);
    shell_quote(value, k->quoted, sizeof k->quoted);
    k->to_fd = k->from_fd = k->err_fd = -1;
    k->owner = getpid();
    k->timeout_s = timeout;
    k->slot = (int)n_kernels;
    pthread_mutex_init(&k->mu, NULL);
    st = start_process(k, err);
    if (!st)
        st = handshake(k, err);
    if (st) {
        if (k->pid > 0)
            stop_process(k, false);
        pthread_mutex_unlock(&registry_mu);
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
    kernels[n_kernels++] = k;
    pthread_mutex_unlock(&registry_mu);
    *out = &k->backend;
    return SEBT_OK;
}

const char *kernel_selector(const sebt_backend *b)
{
    if (!b)
        return NULL;
    for (size_t i = 0; i < n_kernels; i++)
        if (b == &kernels[i]->backend || (b->state == kernels[i] && b->state))
            return kernels[i]->quoted;
    return NULL;
}

/* ---- reproducers: the requests that led to a fault -------------------------------- */

static kproc *kernel_of(const sebt_backend *b)
{
    for (size_t i = 0; b && i < n_kernels; i++)
        if (b == &kernels[i]->backend)
            return kernels[i];
    return NULL;
}

sebt_status sebt_kernel_record(const sebt_backend *b, sebt_error *err)
{
    kproc *k = kernel_of(b);
    if (!k)
        return sebt_fail(err, SEBT_ERR_USAGE, "sebt_kernel_record: backend %s is not a kernel command",
                         b && b->name ? b->name : "?");
    pthread_mutex_lock(&k->mu);
    k->recording = true;
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
        return features_reply(k, &shape, (size_t)count, buf, len, err);
    }
    if (plen < 16 || count > (plen - 16) / (8 * KP_PARAM_FIELDS))
        return sebt_fail(err, SEBT_ERR_INPUT, "a recorded RUN request that does not hold its combos");
    bool want_trades = get_u32(frame + KP_HEADER + 8) & 1u;
    char what[96];
    snprintf(what, sizeof what, "RUN (%zu combo%s, %zu bars)", (size_t)count, count == 1 ? "" : "s", bars);
    unsigned rtype;
    uint64_t rlen;
    sebt_status st = exchange(k, buf, len, what, run_reply_max((size_t)count, bars, want_trades), false, &rtype,
                              &rlen, err);
    if (st)
        return st;
    sebt_result *res = calloc(count ? (size_t)count : 1, sizeof *res);
    if (!res)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for %llu results", (unsigned long long)count);
    st = run_reply(k, &shape, (size_t)count, want_trades, rtype, rlen, what, res, err);
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return sebt_fail(err, SEBT_ERR_IO, "%s: %s", path, strerror(errno));
    pthread_mutex_lock(&k->mu);
    /* A fresh process, so the requests are its first, as they were. */
    if (k->pid > 0 && k->owner == getpid())
        stop_process(k, true);
    sebt_status st = ensure_running(k, err);
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
    forget_features(k);
    k->batch_n = 0;
    pthread_mutex_unlock(&k->mu);
    return st;
}
