/* A backend served by a child process over the kernel protocol
 * (docs/kernel-protocol.md has the byte layouts; kernel_hello.c does the
 * handshake). sebt starts the kernel's command once per process, with its
 * stdin and stdout as the protocol's pipes and its stderr captured (the
 * tail goes into error messages).
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
#include "kernel_internal.h"
#include "sebt/spawn.h"

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

kproc *kp_kernels[MAX_KERNELS];
size_t kp_n_kernels;
/* The process group of each running kernel (0: none) and the process that
 * started it, for sebt_kernels_kill in a signal handler. */
static atomic_int kernel_group[MAX_KERNELS], kernel_owner[MAX_KERNELS];
pthread_mutex_t kp_registry_mu = PTHREAD_MUTEX_INITIALIZER;
static bool atexit_done;

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
void kp_stop_process(kproc *k, bool graceful)
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
    for (size_t i = 0; i < kp_n_kernels; i++)
        if (kp_kernels[i]->pid > 0 && kp_kernels[i]->owner == me) {
            kp_stop_process(kp_kernels[i], true);
            write_stats(kp_kernels[i]);
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
        kp_stop_process(k, false);
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

sebt_status kp_fault(kproc *k, sebt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sebt_status st = kfault_v(k, false, err, fmt, ap);
    va_end(ap);
    return st;
}

/* A kernel that did not answer in time: SEBT_ERR_TIMEOUT once it had shaken hands. */
sebt_status kp_hung(kproc *k, sebt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sebt_status st = kfault_v(k, true, err, fmt, ap);
    va_end(ap);
    return st;
}

sebt_status kp_start_process(kproc *k, sebt_error *err)
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
    sebt_ending_signals(&stop);
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
        /* Defaults before the unblocking: a signal in between would run
         * sebt's handler in the child. */
        sebt_ending_signals_default();
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
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

/* ---- one kp_exchange: frames out, one frame back --------------------------------- */

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
        return kp_fault(k, err, "%s in the middle of its reply to the %s request: %s%s", how, what,
                      short_text(k, have_header, plen, cut, sizeof cut), note);
    }
    return kp_fault(k, err, "%s during the %s request, before answering%s", how, what, note);
}

void kp_request_work(kproc *k, size_t combos, size_t bars)
{
    k->req_limit_s = k->limit && !k->timeout_given ? k->limit(k->limit_user, combos, bars) : 0;
}

/* One exchange in progress (kp_exchange). */
typedef struct {
    const unsigned char *out;
    size_t out_len, written;
    const char *what;
    uint64_t max_len;
    bool more;                 /* out holds a second request */
    double limit_s;            /* how long the reply may take */
    const char *limit_why;     /* where that limit comes from, for a hang's message */
    bool have_header;
    unsigned type;
    uint64_t plen;
    sigset_t pipe_set;
} xchg;

/* Checks the reply's first bytes and, once they have come, its header:
 * text instead of a frame is known by its first bytes, so a line shorter
 * than a header is not waited on until the timeout. True on a fault (*rc). */
static bool header_fault(kproc *k, xchg *x, sebt_status *rc, sebt_error *err)
{
    if (x->have_header)
        return false;
    if (k->in_len && memcmp(k->in, "SEBK", k->in_len < 4 ? k->in_len : 4) != 0) {
        char junk[64];
        junk_text(k->in, k->in_len, junk, sizeof junk);
        *rc = kp_fault(k, err, "wrote something that is not a protocol frame on stdout during the %s request "
                       "(\"%s\"; a kernel prints to stderr, never to stdout)", x->what, junk);
        return true;
    }
    if (k->in_len < KP_HEADER)
        return false;
    unsigned version = get_u16(k->in + 4);
    x->type = get_u16(k->in + 6);
    x->plen = get_u64(k->in + 8);
    if (version != KP_VERSION) {
        char text[400];
        kp_version_text(version, text, sizeof text);
        *rc = kp_fault(k, err, "%s", text);
        return true;
    }
    uint64_t cap = x->type == KP_ERROR ? 8 + 4 + KP_MAX_TEXT : x->max_len;
    if (x->plen > cap) {
        *rc = kp_fault(k, err, "answered the %s request with a %s frame of %llu bytes (at most %llu expected)",
                       x->what, type_name(x->type), (unsigned long long)x->plen, (unsigned long long)cap);
        return true;
    }
    x->have_header = true;
    return false;
}

/* Whether the whole reply has come (and the whole request gone, when a
 * second reply is to follow): bytes of that second reply are kept for the
 * next exchange, bytes after a lone reply are a fault. */
static bool reply_done(kproc *k, xchg *x, sebt_status *rc, sebt_error *err)
{
    uint64_t end = KP_HEADER + x->plen;
    if (!x->have_header || k->in_len < end || (x->written < x->out_len && x->more))
        return false;
    if (k->in_len > end && x->more) {
        k->carry_at = (size_t)end;
        k->carry = k->in_len - k->carry_at;
    } else if (k->in_len > end) {
        *rc = kp_fault(k, err, "wrote %zu bytes after its reply to the %s request", k->in_len - (size_t)end, x->what);
        return true;
    }
    k->in_len = 0;   /* consumed by the caller before the next kp_exchange */
    return true;
}

/* The time limit passed: what had come of the reply says how it hung. */
static sebt_status hung_fault(kproc *k, const xchg *x, sebt_error *err)
{
    char cut[160];
    if (k->in_len)
        return kp_hung(k, err, "did not finish its reply to the %s request within %g s (%s): "
                       "%s, then nothing more; sebt ended it", x->what, x->limit_s, x->limit_why,
                       short_text(k, x->have_header, x->plen, cut, sizeof cut));
    return kp_hung(k, err, "did not answer the %s request within %g s (%s; %s); sebt ended it",
                   x->what, x->limit_s, x->limit_why,
                   x->written < x->out_len ? "it stopped reading its stdin" : "it read the whole request");
}

/* Reads what the kernel wrote: 1 when bytes came, 0 for none now, -1 when
 * it ended or failed (*rc). */
static int read_reply(kproc *k, xchg *x, sebt_status *rc, sebt_error *err)
{
    size_t want = x->have_header && k->in_len < KP_HEADER + x->plen ? (size_t)(KP_HEADER + x->plen) - k->in_len
                                                                    : 65536;
    if (want < 65536)
        want = 65536;
    if (want > (1u << 24))
        want = 1u << 24;
    if (!grow_in(k, k->in_len + want)) {
        *rc = sebt_fail(err, SEBT_ERR_NOMEM, "kernel %s: out of memory for its reply", k->quoted);
        return -1;
    }
    ssize_t r = read(k->from_fd, k->in + k->in_len, want);
    if (r > 0) {
        k->in_len += (size_t)r;
        return 1;
    }
    if (r == 0) {
        char how[96];
        exit_text(k, how, sizeof how);
        *rc = ended_fault(k, how, x->what, x->have_header, x->plen, "", err);
        return -1;
    }
    if (errno != EAGAIN && errno != EINTR) {
        *rc = kp_fault(k, err, "could not be read from: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Writes what the pipe takes of the request; true when the kernel ended
 * or the write failed (*rc). */
static bool write_request(kproc *k, xchg *x, sebt_status *rc, sebt_error *err)
{
    ssize_t w = write(k->to_fd, x->out + x->written, x->out_len - x->written);
    if (w > 0) {
        x->written += (size_t)w;
    } else if (w < 0 && errno == EPIPE) {
        struct timespec zero = { 0, 0 };
        sigtimedwait(&x->pipe_set, NULL, &zero);
        char how[96];
        exit_text(k, how, sizeof how);
        *rc = kp_fault(k, err, "%s while sebt was sending the %s request (%zu of %zu bytes sent)", how, x->what,
                       x->written, x->out_len);
        return true;
    } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        *rc = kp_fault(k, err, "could not be written to: %s", strerror(errno));
        return true;
    }
    return false;
}

/* Writes out (out_len bytes) while reading, until one whole frame has come
 * back; its header is then at k->in and its payload right after. max_len is
 * the longest payload this request may be answered with. more: out holds a
 * second request, whose reply the next call (out_len 0) reads; bytes of it
 * that come with the first reply are kept for that call. */
sebt_status kp_exchange(kproc *k, const unsigned char *out, size_t out_len, const char *what, uint64_t max_len,
                        bool more, unsigned *type, uint64_t *len, sebt_error *err)
{
    /* Bytes left over from before, or EOF now: the kernel wrote outside a
     * reply, or ended between requests. */
    if (k->in_len)
        return kp_fault(k, err, "wrote %zu bytes on stdout outside a reply (before the %s request)", k->in_len, what);
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
    xchg x = { .out = out, .out_len = out_len, .what = what, .max_len = max_len, .more = more,
               .limit_s = k->req_limit_s > 0 ? k->req_limit_s : k->timeout_s,
               .limit_why = k->req_limit_s > 0 ? k->limit_why : "SEBT_KERNEL_TIMEOUT" };
    k->req_limit_s = 0;   /* a limit by work is one request's */
    sigset_t old_set;
    sigemptyset(&x.pipe_set);
    sigaddset(&x.pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &x.pipe_set, &old_set);
    double t_start = now_s();
    double deadline = t_start + x.limit_s;
    sebt_status rc = SEBT_OK;
    for (;;) {
        if (header_fault(k, &x, &rc, err) || reply_done(k, &x, &rc, err))
            break;
        double left = deadline - now_s();
        if (left <= 0) {
            rc = hung_fault(k, &x, err);
            break;
        }
        struct pollfd fds[3];
        int nf = 0, i_out = -1, i_in, i_err = -1;
        if (x.written < out_len) {
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
            rc = kp_fault(k, err, "could not be waited for: %s", strerror(errno));
            break;
        }
        if (pr == 0 && process_ended(k)) {
            char how[96];
            exit_text(k, how, sizeof how);
            rc = ended_fault(k, how, what, x.have_header, x.plen, " (a process it started still holds its stdout)",
                             err);
            break;
        }
        if (i_err >= 0 && fds[i_err].revents)
            drain_stderr(k);
        int got = fds[i_in].revents ? read_reply(k, &x, &rc, err) : 0;
        if (got < 0)
            break;
        if (got > 0)
            continue;
        if (i_out >= 0 && fds[i_out].revents && write_request(k, &x, &rc, err))
            break;
    }
    pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    if (rc == SEBT_OK) {
        *type = x.type;
        *len = x.plen;
    }
    double t_end = now_s();
    if (k->requests == 0)
        k->first_s = t_start;
    k->last_s = t_end;
    k->requests++;
    k->round_trips += out_len > 0;
    k->bytes_out += x.written;
    k->bytes_in += rc == SEBT_OK ? KP_HEADER + x.plen : 0;
    k->exchange_s += t_end - t_start;
    return rc;
}

/* ERROR frames: the kernel refused an input of the request (count combos):
 * a combo index it names must be one of them, or -1. */
sebt_status kp_error_reply(kproc *k, uint64_t len, const char *what, size_t count, sebt_error *err)
{
    const unsigned char *p = k->in + KP_HEADER;
    if (len < 12 || get_u32(p + 8) != len - 12)
        return kp_fault(k, err, "sent a malformed ERROR frame (%llu bytes) for the %s request",
                      (unsigned long long)len, what);
    int64_t combo = (int64_t)get_u64(p);
    char text[SEBT_ERROR_MSG_MAX];
    sebt_text_visible(p + 12, (size_t)(len - 12), text, sizeof text);
    if (combo < -1 || (combo >= 0 && (uint64_t)combo >= count))
        return kp_fault(k, err, "sent an ERROR about combo %lld for the %s request, which has combos 0 to %zu "
                      "(or -1 for none): %s", (long long)combo, what, count ? count - 1 : 0, text);
    if (combo >= 0)
        return sebt_fail(err, SEBT_ERR_PARAM, "kernel %s failed on combo %lld: %s", k->name, (long long)combo, text);
    return sebt_fail(err, SEBT_ERR_INPUT, "kernel %s failed: %s", k->name, text);
}

/* The kernel, running in this process's own child: a forked process (sebt
 * validate's checks) starts its own, since the pipes it inherited belong to
 * the parent's conversation. */
sebt_status kp_ensure_running(kproc *k, sebt_error *err)
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
    sebt_status st = kp_start_process(k, err);
    if (st)
        return st;
    return kp_handshake(k, err);
}
