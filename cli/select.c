/* Backend selection: --backend NAME, else BACKTEST_BACKEND, else cpu.
 *
 *   cpu   fast_cpu; CUDA is never touched (no dlopen, nothing mapped)
 *   gpu   cuda; no usable device is an error with exit code 3, never a
 *         silent fallback
 *   auto  cuda when a device is usable and bars x combos reaches the
 *         crossover, else fast_cpu; one line on stderr says which and why
 *
 * and any registered backend by name (reference, fast_cpu, cuda), or the
 * path of a plugin (include/sebt/plugin.h): a value with '/' or ending in .so. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/trim.h"
#include "cli.h"
#include "select.h"

/* The auto model (gpu/README.md "auto"), used until check-gpu --benchmark
 * saves a measured crossover. fast_cpu's per-thread rate is its own
 * measured one: gpu/CMakeLists.txt reads it from the committed benchmark
 * (bench/results/bench_sweep.json) into SEBT_MODEL_CPU_RATE; without one,
 * the value that benchmark measured on 2026-11-22 (10,000 combos of the 15m
 * series on one thread). The GPU's rate per SM and clock is the one cuda
 * reached on a real grid on an H200 (bench/results/gpu-h200-2026-11-29:
 * bench/grids/big-967680.grid over the 15m series, 1.48e11 bar-combos in
 * 7.76 s, the median of three, with 132 SMs at 1.98 GHz: 0.073); the fixed
 * cost is creating the CUDA context and copying the series. */
#ifdef SEBT_MODEL_CPU_RATE
#define MODEL_CPU_BAR_COMBOS_PER_THREAD ((double)SEBT_MODEL_CPU_RATE)
#else
#define MODEL_CPU_BAR_COMBOS_PER_THREAD 8.56793e9
#endif
#define MODEL_GPU_BAR_COMBOS_PER_SM_CYCLE 0.073
#define MODEL_GPU_FIXED_SECONDS 0.25

int cli_cpu_threads(void)
{
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && *env) {
        long v = strtol(env, NULL, 10);
        if (v > 0)
            return (int)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void cli_crossover_path(char *buf, size_t bufsize)
{
    const char *env = getenv("SEBT_CROSSOVER_FILE");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, bufsize, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, bufsize, "%s/sebt/crossover", xdg);
    else
        snprintf(buf, bufsize, "%s/.config/sebt/crossover", home && *home ? home : ".");
}

/* Reads "key = value" lines (# comments). Returns 1 when the file holds a
 * crossover for this device, 0 when there is none or it is for another
 * device, 2 after printing an error about a malformed file. */
static int read_crossover_file(const char *cmd, const char *path, const sebt_gpu_device *d,
                               double *bar_combos, int *threads, char *device, size_t devsize)
{
    FILE *f;
    sebt_error err = { 0 };
    if (sebt_open_input(path, false, &f, &err) != SEBT_OK) {
        if (err.code != SEBT_ERR_INPUT)
            return 0; /* none saved */
        fprintf(stderr, "sebt %s: error: %s\n", cmd, err.msg);
        return CLI_EXIT_USAGE;
    }
    char line[512];
    int lineno = 0;
    bool have_value = false;
    device[0] = '\0';
    *threads = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fclose(f);
            fprintf(stderr, "sebt %s: error: %s:%d: expected 'key = value', got '%s'\n", cmd, path, lineno, s);
            return CLI_EXIT_USAGE;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        char *end;
        errno = 0;
        if (strcmp(key, "crossover_bar_combos") == 0) {
            *bar_combos = strtod(value, &end);
            if (*end || end == value || errno || !(*bar_combos >= 0)) {
                fclose(f);
                fprintf(stderr, "sebt %s: error: %s:%d: crossover_bar_combos: expected a number >= 0 or inf, "
                        "got '%s'\n", cmd, path, lineno, value);
                return CLI_EXIT_USAGE;
            }
            have_value = true;
        } else if (strcmp(key, "threads") == 0) {
            long v = strtol(value, &end, 10);
            if (*end || end == value || v < 1) {
                fclose(f);
                fprintf(stderr, "sebt %s: error: %s:%d: threads: expected a count >= 1, got '%s'\n",
                        cmd, path, lineno, value);
                return CLI_EXIT_USAGE;
            }
            *threads = (int)v;
        } else if (strcmp(key, "device") == 0) {
            snprintf(device, devsize, "%s", value);
        }
        /* Other keys (date, runtime, ...) are notes for people. */
    }
    fclose(f);
    if (!have_value) {
        fprintf(stderr, "sebt %s: error: %s: no 'crossover_bar_combos = ...' line\n", cmd, path);
        return CLI_EXIT_USAGE;
    }
    return strcmp(device, d->name) == 0 ? 1 : 0;
}

int cli_crossover_for(const char *cmd, const sebt_gpu_device *d, int cpu_threads, cli_crossover *out)
{
    char path[512], device[256];
    double saved = 0;
    int saved_threads = 0;
    cli_crossover_path(path, sizeof path);
    int rc = read_crossover_file(cmd, path, d, &saved, &saved_threads, device, sizeof device);
    if (rc == CLI_EXIT_USAGE)
        return rc;
    if (rc == 1) {
        /* Past the crossover the GPU's fixed cost dominates, and fast_cpu's
         * share of it grows with its threads: scale by the thread ratio. */
        double scale = saved_threads > 0 ? (double)cpu_threads / saved_threads : 1.0;
        out->bar_combos = saved * scale;
        out->measured = true;
        snprintf(out->source, sizeof out->source, "measured by check-gpu --benchmark (%s, %d threads%s)",
                 path, saved_threads, scale != 1.0 ? ", scaled to this thread count" : "");
        return CLI_EXIT_OK;
    }
    double cpu_rate = MODEL_CPU_BAR_COMBOS_PER_THREAD * cpu_threads;
    double gpu_rate = MODEL_GPU_BAR_COMBOS_PER_SM_CYCLE * d->multiprocessors * (d->clock_khz * 1e3);
    out->measured = false;
    out->bar_combos = gpu_rate > cpu_rate
                          ? MODEL_GPU_FIXED_SECONDS / (1.0 / cpu_rate - 1.0 / gpu_rate)
                          : INFINITY;
    snprintf(out->source, sizeof out->source,
             "model: %d SMs x %.2f GHz vs %d CPU threads at %.3g bar-combos/s each (fast_cpu's measured rate)%s%s%s",
             d->multiprocessors, d->clock_khz * 1e-6, cpu_threads, MODEL_CPU_BAR_COMBOS_PER_THREAD, device[0] && rc == 0 ? "; the saved crossover is for " : "",
             device[0] && rc == 0 ? device : "", "; run 'sebt check-gpu --benchmark --save' to measure");
    return CLI_EXIT_OK;
}

int cli_auto_choose(const char *cmd, size_t bars, size_t combos, cli_auto_choice *out)
{
    sebt_gpu_info info;
    sebt_error err = { 0 };
    out->backend = "fast_cpu";
    if (sebt_gpu_query(&info, &err) != SEBT_OK || info.selected < 0) {
        snprintf(out->why, sizeof out->why, "no usable GPU: %s", err.msg);
        return CLI_EXIT_OK;
    }
    const sebt_gpu_device *d = &info.devices[info.selected];
    cli_crossover x;
    int rc = cli_crossover_for(cmd, d, cli_cpu_threads(), &x);
    if (rc != CLI_EXIT_OK)
        return rc;
    double work = (double)bars * (double)combos;
    bool gpu = work >= x.bar_combos;
    out->backend = gpu ? "cuda" : "fast_cpu";
    if (isinf(x.bar_combos))
        snprintf(out->why, sizeof out->why, "cuda is not faster at any size on GPU %d (%s; %s)", d->id, d->name,
                 x.source);
    else
        snprintf(out->why, sizeof out->why,
                 "%zu bars x %zu combos = %.3g bar-combos %s the crossover %.3g on GPU %d (%s; %s)", bars, combos,
                 work, gpu ? "reaches" : "is below", x.bar_combos, d->id, d->name, x.source);
    return CLI_EXIT_OK;
}

/* SEBT_DEBUG_MAPS=1: the process's memory map on stderr at exit, so a test
 * can prove that cpu mode never mapped a CUDA library. */
static void dump_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f))
        fprintf(stderr, "maps: %s", line);
    fclose(f);
}

/* A plugin is outside code: when it crashes, say so and name it before the
 * process dies, so the crash is not taken for a fault of sebt or for a
 * divergence. Only async-signal-safe calls (write, sigaction, raise). */
static char crash_note[1024];
static size_t crash_note_len;

static void on_fatal_signal(int sig)
{
    static const char *const names[] = { [SIGSEGV] = "SIGSEGV", [SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE",
                                         [SIGILL] = "SIGILL", [SIGABRT] = "SIGABRT" };
    const char *name = sig >= 0 && sig < (int)(sizeof names / sizeof names[0]) && names[sig] ? names[sig] : "a signal";
    ssize_t w = write(2, crash_note, crash_note_len);
    w = write(2, name, strlen(name));
    w = write(2, "\n", 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* From here on, a crash prints crash_note (set) then the signal's name. */
static void note_crashes(void)
{
    crash_note_len = strlen(crash_note);
    /* An alternate stack, so a stack overflow in the plugin is reported too. */
    static char altstack[64 * 1024];
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

void cli_note_plugin_crashes(const char *cmd, const sebt_backend *b)
{
    snprintf(crash_note, sizeof crash_note, "sebt %s: error: the plugin backend '%s' (%s) crashed: ", cmd,
             b->name, sebt_backend_selector(b));
    note_crashes();
}

/* Opening a plugin runs its code too (its constructors, then its entry
 * point, in this process): a crash there names the file. */
static void note_plugin_load_crashes(const char *cmd, const char *path)
{
    snprintf(crash_note, sizeof crash_note, "sebt %s: error: plugin %s crashed while loading (in its constructor "
             "or sebt_backend_plugin; 'sebt validate --backend %s' loads it in a child process): ", cmd, path, path);
    note_crashes();
}

void cli_contract_text(const sebt_contract *c, char *buf, size_t n)
{
    if (c->kind == SEBT_CONTRACT_EXACT)
        snprintf(buf, n, "exact");
    else
        snprintf(buf, n, "tolerant(%g)", c->tol);
}

static bool is_mode(const char *s)
{
    return strcmp(s, "cpu") == 0 || strcmp(s, "gpu") == 0 || strcmp(s, "auto") == 0;
}

static bool is_backend_name(const char *s)
{
    for (size_t i = 0; i < sebt_backend_count(); i++)
        if (strcmp(s, sebt_backend_name_at(i)) == 0)
            return true;
    return false;
}

/* A plugin's path or a kernel's command, named on stderr once loaded. */
static int select_external(const char *cmd, const char *choice, const char *source, const sebt_backend **out)
{
    bool kernel = sebt_backend_is_kernel(choice);
    sebt_error err = { 0 };
    if (!kernel)
        note_plugin_load_crashes(cmd, choice);
    if (sebt_backend_get(choice, out, &err) != SEBT_OK) {
        fprintf(stderr, "sebt %s: error: %s%s%s: %s\n", cmd, source, strcmp(source, "--backend") == 0 ? " " : "=",
                choice, err.msg);
        return cli_exit_code_for(err.code);
    }
    char contract[64];
    cli_contract_text(&(*out)->contract, contract, sizeof contract);
    fprintf(stderr, "sebt %s: backend %s (%s) from %s %s\n", cmd, (*out)->name, contract,
            kernel ? "kernel" : "plugin", sebt_backend_selector(*out));
    if (kernel)
        return CLI_EXIT_OK;   /* its crashes are its own process's */
    cli_note_plugin_crashes(cmd, *out);
    return CLI_EXIT_OK;
}

static int unknown_backend(const char *cmd, const char *choice, const char *source)
{
    char names[256] = "";
    for (size_t i = 0; i < sebt_backend_count(); i++) {
        strncat(names, ", ", sizeof names - strlen(names) - 1);
        strncat(names, sebt_backend_name_at(i), sizeof names - strlen(names) - 1);
    }
    return cli_usage_error(cmd, "%s%s'%s': unknown backend (valid: cpu, gpu, auto%s, or the path "
                           "of a plugin such as ./libmine.so, or a kernel command: 'exec:python3 mine.py')",
                           source, strcmp(source, "--backend") == 0 ? " " : "=", choice, names);
}

int cli_select_backend(const char *cmd, const char *flag_value, size_t bars, size_t combos,
                       const sebt_backend **out)
{
    static bool maps_registered;
    const char *dbg = getenv("SEBT_DEBUG_MAPS");
    if (dbg && *dbg && strcmp(dbg, "0") != 0 && !maps_registered) {
        atexit(dump_maps);
        maps_registered = true;
    }

    const char *choice = flag_value, *source = "--backend";
    if (!choice || !*choice) {
        choice = getenv("BACKTEST_BACKEND");
        source = "BACKTEST_BACKEND";
    }
    if (!choice || !*choice) {
        choice = "cpu";
        source = "default";
    }
    if (sebt_backend_is_path(choice) || sebt_backend_is_kernel(choice))
        return select_external(cmd, choice, source, out);
    if (!is_mode(choice) && !is_backend_name(choice))
        return unknown_backend(cmd, choice, source);

    const char *name = choice;
    if (strcmp(choice, "cpu") == 0) {
        name = "fast_cpu";
    } else if (strcmp(choice, "gpu") == 0) {
        name = "cuda";
    } else if (strcmp(choice, "auto") == 0) {
        cli_auto_choice pick;
        int rc = cli_auto_choose(cmd, bars, combos, &pick);
        if (rc != CLI_EXIT_OK)
            return rc;
        if (strcmp(pick.backend, "cuda") == 0) {
            sebt_error err = { 0 };
            if (sebt_backend_get("cuda", out, &err) == SEBT_OK) {
                fprintf(stderr, "sebt %s: auto: cuda, because %s\n", cmd, pick.why);
                return CLI_EXIT_OK;
            }
            snprintf(pick.why, sizeof pick.why, "the GPU could not be opened: %s", err.msg);
        }
        fprintf(stderr, "sebt %s: auto: fast_cpu, because %s\n", cmd, pick.why);
        name = "fast_cpu";
    }

    sebt_error err = { 0 };
    if (sebt_backend_get(name, out, &err) == SEBT_OK) {
        if (strcmp(name, "cuda") != 0)
            return CLI_EXIT_OK;
        /* A cuda module that opens but lists no device is host execution
         * (gpu/host/): run by name it says so; it is never a GPU. */
        sebt_gpu_info info;
        sebt_error qerr = { 0 };
        if (sebt_gpu_query(&info, &qerr) == SEBT_OK && info.selected >= 0)
            return CLI_EXIT_OK;
        if (strcmp(choice, "gpu") == 0) {
            *out = NULL;
            fprintf(stderr, "sebt %s: error: %s%s%s: no usable GPU: %s\n", cmd, source,
                    strcmp(source, "--backend") == 0 ? " " : "=", choice, qerr.msg);
            return CLI_EXIT_NO_DEVICE;
        }
        fprintf(stderr, "sebt %s: cuda: %s\n", cmd, qerr.msg);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "cuda") == 0) {
        /* A module that was never built means no usable GPU too: exit 3.
         * A malformed BACKTEST_GPU_ID stays a usage error: exit 2. */
        if (err.code == SEBT_ERR_USAGE)
            return cli_report_error(cmd, &err);
        if (err.code == SEBT_ERR_UNAVAILABLE)
            err.code = SEBT_ERR_NODEVICE;
        fprintf(stderr, "sebt %s: error: %s%s%s: no usable GPU: %s\n", cmd, source,
                strcmp(source, "--backend") == 0 ? " " : "=", choice, err.msg);
        return cli_exit_code_for(err.code);
    }
    return cli_report_error(cmd, &err);
}

/* ---- device memory for fuzz cases under the CUDA stand-in ----------------- */

bool cli_vary_device_memory(const sebt_backend *b)
{
    const char *v = getenv("SEBT_CUDA_HOST_MEMORY");
    return b && strcmp(b->name, "cuda") == 0 && !(v && *v);
}

/* Under the stand-in a batch of n bars needs about 170 device bytes a bar
 * before its first combo runs (series, features, candidates, trees and
 * trades: 20 MB for 116,373 bars), each more combo less. A case gets the
 * default one time in four, else 192, 256 or 384 bytes a bar past 256K:
 * room for the batch's base and a few combos, so batches split into
 * chunks and halves (and a partial last one), yet a single combo fits: a
 * size below that is the device's limit, not a bug (SEBT_ERR_NOMEM). */
size_t cli_case_device_memory(const sebt_fuzz_case *c, bool big, uint64_t index)
{
    static const size_t per_bar[] = { 0, 192, 256, 384 };
    uint64_t h = (index + 1) * 0x9E3779B97F4A7C15ull ^ (big ? 0xB16CA5E5ull : 0);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    size_t b = per_bar[h % 4];
    return b ? (size_t)256 * 1024 + c->series.n * b : 0;
}

void cli_device_memory_hook(void *user, const sebt_fuzz_case *c, bool big, uint64_t index)
{
    (void)user;
    size_t bytes = cli_case_device_memory(c, big, index);
    if (bytes) {
        char v[32];
        snprintf(v, sizeof v, "%zu", bytes);
        setenv("SEBT_CUDA_HOST_MEMORY", v, 1);
    } else {
        unsetenv("SEBT_CUDA_HOST_MEMORY");
    }
}

double cli_crossover_measured(const double *w, const double *diff, size_t n)
{
    if (n == 0 || !(diff[n - 1] <= 0))
        return INFINITY;
    size_t k = n - 1;
    while (k > 0 && diff[k - 1] <= 0)
        k--;
    if (k == 0)
        return w[0];
    /* Both times grow about linearly with the work between two sizes. */
    return w[k - 1] + diff[k - 1] * (w[k] - w[k - 1]) / (diff[k - 1] - diff[k]);
}
