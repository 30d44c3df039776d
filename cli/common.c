#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sebt/sweep.h"
#include "sebt/outfile.h"
#include "sebt/number.h"

/* Every error message goes out through here: what it quotes of the user's
 * text (an option's value, a file's bytes, a --where) cannot end the line
 * or send the terminal an escape sequence, so it never forges another line
 * ("sebt sweep: ..."). */
#define CLI_MESSAGE_MAX 4096

static void print_error(const char *cmd, const char *msg)
{
    char shown[4 * CLI_MESSAGE_MAX + 1];
    fprintf(stderr, "sebt %s: error: %s\n", cmd, sebt_text_visible(msg, strlen(msg), shown, sizeof shown));
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[CLI_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error(cmd, msg);
    fprintf(stderr, "Try 'sebt help %s'.\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_exit_code_for(sebt_status st)
{
    switch (st) {
    case SEBT_OK: return CLI_EXIT_OK;
    case SEBT_ERR_NODEVICE: return CLI_EXIT_NO_DEVICE;
    case SEBT_ERR_USAGE:
    case SEBT_ERR_INPUT:
    case SEBT_ERR_PARAM:
    case SEBT_ERR_IO:
    case SEBT_ERR_UNAVAILABLE: return CLI_EXIT_USAGE;
    case SEBT_ERR_NOMEM: return CLI_EXIT_NOMEM;
    case SEBT_ERR_INTERNAL:
    case SEBT_ERR_PROTOCOL:
    case SEBT_ERR_TIMEOUT:
    case SEBT_ERR_VERIFY: return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_USAGE;
}

int cli_report_error(const char *cmd, const sebt_error *err)
{
    print_error(cmd, err->msg[0] ? err->msg : sebt_status_name(err->code));
    return cli_exit_code_for(err->code);
}

/* HOME as set when it names no folder: sebt never creates a home (as root
 * it could be any path), so there is no cache, and one warning says why. */
static const char *missing_home;

bool cli_cache_switched_off(const char *value)
{
    /* The words a user types for "off" in any case (OFF once made a
     * folder of that name); a folder so named is ./off. */
    static const char *const off[] = { "", "off", "0", "false", "no", "none" };
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcasecmp(value, off[i]) == 0)
            return true;
    return false;
}

const char *cli_series_cache_dir(char *buf, size_t size)
{
    const char *set = getenv("SEBT_CACHE_DIR");
    if (set)
        return !cli_cache_switched_off(set) && snprintf(buf, size, "%s", set) < (int)size ? buf : NULL;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    struct stat st;
    if (xdg && xdg[0] == '/') {
        n = snprintf(buf, size, "%s/sebt/series", xdg);
    } else if (home && home[0] == '/') {
        if (stat(home, &st) != 0 || !S_ISDIR(st.st_mode)) {
            missing_home = home;
            return NULL;
        }
        n = snprintf(buf, size, "%s/.cache/sebt/series", home);
    } else {
        return NULL;
    }
    return n > 0 && (size_t)n < size ? buf : NULL;
}

const char *cli_cache_use_name(sebt_cache_use use)
{
    switch (use) {
    case SEBT_CACHE_OFF: return "off";
    case SEBT_CACHE_SMALL: return "not kept (file under 256 KiB)";
    case SEBT_CACHE_HIT: return "hit";
    case SEBT_CACHE_STORED: return "miss, stored";
    case SEBT_CACHE_NOT_STORED: return "miss, could not store";
    case SEBT_CACHE_REPLACED: return "damaged entry, replaced";
    case SEBT_CACHE_BAD_NOT_STORED: return "damaged entry, could not replace";
    case SEBT_CACHE_UNTRUSTED_REPLACED: return "untrusted entry, replaced";
    case SEBT_CACHE_UNTRUSTED_NOT_STORED: return "untrusted entry, could not replace";
    case SEBT_CACHE_NO_MEMORY: return "not used (out of memory looking the file up)";
    }
    return "?";
}

int cli_load_series(const char *cmd, const char *path, bool lenient, bool fill_gaps, sebt_series *out)
{
    return cli_load_series_use(cmd, path, lenient, fill_gaps, out, NULL);
}

int cli_load_series_use(const char *cmd, const char *path, bool lenient, bool fill_gaps, sebt_series *out,
                        sebt_cache_use *cache_use)
{
    if (!path)
        return cli_usage_error(cmd, "--data FILE is required");
    sebt_load_opts opts = { .lenient = lenient, .fill_gaps = fill_gaps };
    sebt_error err = { 0 };
    char dir[4096];
    sebt_cache_use use;
    const char *cache_dir = cli_series_cache_dir(dir, sizeof dir);
    static bool warned_home;
    if (missing_home && !warned_home && sebt_series_cache_available()) {
        warned_home = true;
        fprintf(stderr, "sebt %s: warning: HOME=%s is not a folder: no series cache (set SEBT_CACHE_DIR, or "
                "SEBT_CACHE_DIR=off to say so)\n", cmd, missing_home);
    }
    if (sebt_load_csv_cached(path, &opts, cache_dir, out, &use, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    if (cache_use)
        *cache_use = use;
    /* A damaged entry changes no result (it was parsed again), but a cache
     * that keeps getting damaged is worth knowing about. */
    if (use == SEBT_CACHE_REPLACED || use == SEBT_CACHE_BAD_NOT_STORED)
        fprintf(stderr, "sebt %s: warning: the cached series of %s in %s was damaged; the file was parsed "
                "again%s\n", cmd, path, dir, use == SEBT_CACHE_REPLACED ? " and the entry replaced" : "");
    if (use == SEBT_CACHE_UNTRUSTED_REPLACED || use == SEBT_CACHE_UNTRUSTED_NOT_STORED)
        fprintf(stderr, "sebt %s: warning: the cached series of %s in %s is not a regular file of this user (a "
                "FIFO, a device, a link or another user's file); it was not read, the file was parsed%s\n", cmd,
                path, dir, use == SEBT_CACHE_UNTRUSTED_REPLACED ? " and the entry replaced" : " (the entry could "
                "not be replaced: the cache is skipped for it)");
    if (getenv("SEBT_CACHE_STATS"))
        fprintf(stderr, "sebt %s: series cache: %s\n", cmd, cli_cache_use_name(use));
    if (lenient && out->n_rejected)
        fprintf(stderr, "sebt %s: --lenient: %zu rejected row(s) of %s kept as missing bars\n",
                cmd, out->n_rejected, path);
    if (fill_gaps && out->n_gap_filled)
        fprintf(stderr, "sebt %s: --fill-gaps: %zu missing bar(s) inserted in %s at its %lld ms interval\n",
                cmd, out->n_gap_filled, path, (long long)out->interval_ms);
    return CLI_EXIT_OK;
}

/* The atomic files open through cli_open_output, found again by their FILE
 * in cli_close_output: the callers keep a plain FILE *. */
static struct {
    FILE *f;
    const char *cmd;
    sebt_outfile o;
    bool is_stdout;
    int stdout_errno;
} outputs[16];

FILE *cli_open_output(const char *cmd, const char *path)
{
    bool to_stdout = !path || strcmp(path, "-") == 0;
    size_t k = 0;
    while (k < sizeof outputs / sizeof outputs[0] && outputs[k].f)
        k++;
    if (k == sizeof outputs / sizeof outputs[0]) {
        fprintf(stderr, "sebt %s: error: cannot write %s: too many output files open at once\n", cmd, path);
        return NULL;
    }
    outputs[k].cmd = cmd;
    outputs[k].is_stdout = to_stdout;
    if (to_stdout) {
        outputs[k].f = cli_stdout_open(&outputs[k].stdout_errno);
        if (!outputs[k].f)
            fprintf(stderr, "sebt %s: error: cannot write stdout: %s\n", cmd, strerror(errno));
        return outputs[k].f;
    }
    sebt_error err = { 0 };
    if (sebt_outfile_open(&outputs[k].o, path, &err) != SEBT_OK) {
        cli_report_error(cmd, &err);
        return NULL;
    }
    outputs[k].f = outputs[k].o.f;
    outputs[k].cmd = cmd;
    return outputs[k].f;
}

static int find_output(FILE *f)
{
    for (size_t k = 0; k < sizeof outputs / sizeof outputs[0]; k++)
        if (f && outputs[k].f == f)
            return (int)k;
    return -1;
}

static atomic_bool outputs_landing;

void cli_outputs_landing(void)
{
    atomic_store(&outputs_landing, true);
}

bool cli_outputs_are_landing(void)
{
    return atomic_load(&outputs_landing);
}

int cli_close_output(FILE *f)
{
    if (!f)
        return 0;
    int k = find_output(f);
    if (k < 0) {
        int bad = ferror(f);
        if (f != stdout)
            bad |= fclose(f);
        else
            bad |= fflush(f);
        return bad;
    }
    if (outputs[k].is_stdout) {
        int bad = ferror(f);
        bad |= fclose(f);
        outputs[k].f = NULL;
        int e = outputs[k].stdout_errno;
        if (bad)
            fprintf(stderr, "sebt %s: error: writing stdout failed%s%s\n", outputs[k].cmd, e ? ": " : "",
                    e ? strerror(e) : "");
        return bad;
    }
    sebt_error err = { 0 };
    cli_outputs_landing();
    sebt_status st = sebt_outfile_commit(&outputs[k].o, &err);
    outputs[k].f = NULL;
    if (st != SEBT_OK) {
        fprintf(stderr, "sebt %s: error: %s\n", outputs[k].cmd, err.msg);
        return 1;
    }
    return 0;
}

int cli_close_stdout(const char *cmd)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    bad |= ferror(stdout);
    if (bad)
        fprintf(stderr, "sebt %s: error: writing stdout failed%s%s\n", cmd, e ? ": " : "", e ? strerror(e) : "");
    return bad;
}

void cli_abandon_output(FILE *f)
{
    int k = find_output(f);
    if (k < 0)
        return;
    if (outputs[k].is_stdout)
        fclose(f);   /* what was written has gone out: nothing to take back */
    else
        sebt_outfile_abort(&outputs[k].o);
    outputs[k].f = NULL;
}

const char *cli_share(const char *rel)
{
    /* A handful of distinct names per run (data, regressions, combos). */
    static struct {
        const char *rel;
        char path[PATH_MAX];
    } known[16];
    static size_t n_known;
    for (size_t i = 0; i < n_known; i++)
        if (strcmp(known[i].rel, rel) == 0)
            return known[i].path;
    static char spill[PATH_MAX];
    char *out = n_known < sizeof known / sizeof known[0] ? known[n_known].path : spill;
    const char *dir = sebt_data_dir();
    if (dir) {
        snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    } else {
        char sebt[PATH_MAX];
        sebt_part_path("sebt", sebt, sizeof sebt);
        char *slash = strrchr(sebt, '/');
        snprintf(out, PATH_MAX, "%.*s/../share/sebt/%s (sebt's shared files were not found; set "
                 "SEBT_SHARE_DIR)", slash ? (int)(slash - sebt) : 1, slash ? sebt : ".", rel);
    }
    if (out != spill)
        known[n_known++].rel = rel;
    return out;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *label)
{
    p->label = label;
    p->unit = "";
    p->scale = 1.0;
    p->start = cli_now();
    p->last_draw = 0.0;
    p->tty = isatty(STDERR_FILENO) && !getenv("CI");
    p->drawn = false;
}

void cli_progress_units(cli_progress *p, const char *unit, double scale)
{
    p->unit = unit ? unit : "";
    p->scale = scale > 0 ? scale : 1.0;
}

/* At most this many redraws a second: a terminal is not a log. */
#define PROGRESS_HZ 10.0

void cli_progress_update(void *user, size_t done, size_t total)
{
    cli_progress *p = user;
    if (!p->tty || total == 0)
        return;
    double now = cli_now(), el = now - p->start;
    if (el < 1.0 && !p->drawn)
        return;
    if (p->drawn && now - p->last_draw < 1.0 / PROGRESS_HZ && done < total)
        return;
    p->last_draw = now;
    if (done > total)
        done = total;
    int width = 30, filled = (int)((double)width * (double)done / (double)total);
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    char count[80];
    if (p->scale == 1.0)
        snprintf(count, sizeof count, "%zu/%zu%s%s", done, total, *p->unit ? " " : "", p->unit);
    else
        snprintf(count, sizeof count, "%.1f/%.1f%s%s", (double)done * p->scale, (double)total * p->scale,
                 *p->unit ? " " : "", p->unit);
    double eta = done ? el * (double)(total - done) / (double)done : 0.0;
    fprintf(stderr, "\r%s [%s] %s  %.0fs elapsed, ~%.0fs left\033[K", p->label, bar, count, el, eta);
    p->drawn = true;
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn)
        fprintf(stderr, "\r\033[K");
    p->drawn = false;
}

void cli_print_double(FILE *f, double v)
{
    char buf[SEBT_DOUBLE_CHARS];
    size_t n = sebt_format_double(v, buf);
    fwrite(buf, 1, n, f);
}

void cli_format_utc(int64_t ms, char *buf, size_t bufsize)
{
    /* Floor division so that times before 1970 still read correctly. */
    int64_t sec = ms / 1000, rem = ms % 1000;
    if (rem < 0) {
        rem += 1000;
        sec -= 1;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, bufsize, "%lld", (long long)ms);
        return;
    }
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    if (rem)
        snprintf(buf, bufsize, "%s.%03dZ", date, (int)rem);
    else
        snprintf(buf, bufsize, "%sZ", date);
}

void cli_format_duration(int64_t ms, char *buf, size_t bufsize)
{
    static const struct { int64_t ms; const char *unit; } units[] = {
        { 86400000, "d" }, { 3600000, "h" }, { 60000, "min" }, { 1000, "s" },
    };
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (ms >= units[k].ms) {
            double v = (double)ms / (double)units[k].ms;
            if (ms % units[k].ms == 0)
                snprintf(buf, bufsize, "%lld %s", (long long)(ms / units[k].ms), units[k].unit);
            else
                snprintf(buf, bufsize, "%.3g %s", v, units[k].unit);
            return;
        }
    }
    snprintf(buf, bufsize, "%lld ms", (long long)ms);
}

void cli_find_gaps(const sebt_series *s, cli_gaps *g)
{
    memset(g, 0, sizeof *g);
    if (s->n < 2 || s->interval_ms <= 0)
        return;
    for (size_t t = 1; t < s->n; t++) {
        int64_t d = s->ts[t] - s->ts[t - 1];
        if (d <= s->interval_ms)
            continue;
        g->gaps++;
        g->bars += (uint64_t)(d / s->interval_ms) - 1;
        if (d > g->longest_ms) {
            g->longest_ms = d;
            g->longest_after = s->ts[t - 1];
        }
    }
}

void cli_warn_gaps(const char *cmd, const char *path, const sebt_series *s)
{
    cli_gaps g;
    cli_find_gaps(s, &g);
    if (!g.gaps)
        return;
    char every[32], hole[32], after[40];
    cli_format_duration(s->interval_ms, every, sizeof every);
    cli_format_duration(g.longest_ms - s->interval_ms, hole, sizeof hole);
    cli_format_utc(g.longest_after, after, sizeof after);
    fprintf(stderr,
            "sebt %s: warning: %s has %zu timestamp gap%s (%llu bar%s missing at its %s interval; "
            "the longest %llu bar%s, %s, after %s), not filled: indicators and trades run across "
            "them as if the bars were adjacent; --fill-gaps inserts missing bars there\n",
            cmd, path, g.gaps, g.gaps == 1 ? "" : "s", (unsigned long long)g.bars, g.bars == 1 ? "" : "s",
            every, (unsigned long long)(g.longest_ms / s->interval_ms - 1),
            g.longest_ms / s->interval_ms - 1 == 1 ? "" : "s", hole, after);
}

int cli_apply_set(const char *cmd, sebt_params *p, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return cli_usage_error(cmd, "--set expects NAME=VALUE, got '%s'", assignment);
    char name[64];
    size_t len = (size_t)(eq - assignment);
    if (len >= sizeof name)
        return cli_usage_error(cmd, "--set %s: unknown parameter", assignment);
    memcpy(name, assignment, len);
    name[len] = '\0';
    sebt_error err = { 0 };
    if (sebt_params_set(p, name, eq + 1, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

int cli_validate_params(const char *cmd, const sebt_params *p)
{
    sebt_error err = { 0 };
    if (sebt_params_validate(p, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

/* ---- results that are not finite (docs/decisions.md) --------------------- */

bool cli_result_fits(const sebt_result *r)
{
    return sebt_result_fits(NULL, 0, r, NULL) == SEBT_OK;
}

int cli_check_result(const char *cmd, size_t combo, const sebt_params *p, const sebt_result *r)
{
    sebt_error err = { 0 };
    if (sebt_result_fits(p, combo, r, &err) == SEBT_OK)
        return CLI_EXIT_OK;
    fprintf(stderr, "sebt %s: error: %s\n", cmd, err.msg);
    return CLI_EXIT_USAGE;
}

int cli_check_paths(const char *cmd, const sebt_path_use *uses, size_t n)
{
    sebt_error err = { 0 };
    if (sebt_paths_check(uses, n, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

int cli_check_omp_env(void)
{
    const char *v = getenv("OMP_NUM_THREADS");
    if (!v || !*v)
        return CLI_EXIT_OK;
    /* OpenMP's syntax: a list "N[,N...]" (one per nesting level), blanks
     * allowed. Each level is a team size, so each is held to --threads' rule. */
    for (const char *p = v; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *end = NULL;
        errno = 0;
        long n = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
        if (n < 1 || errno || n > CLI_MAX_THREADS) {
            fprintf(stderr, "sebt: error: OMP_NUM_THREADS='%s': expected whole numbers from 1 to %d (the limit of "
                    "--threads)\n", v, CLI_MAX_THREADS);
            return CLI_EXIT_USAGE;
        }
        p = end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',')
            p++;
        else if (*p) {
            fprintf(stderr, "sebt: error: OMP_NUM_THREADS='%s': expected whole numbers from 1 to %d (the limit of "
                    "--threads)\n", v, CLI_MAX_THREADS);
            return CLI_EXIT_USAGE;
        }
    }
    return CLI_EXIT_OK;
}

bool cli_executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* A program name without a slash is looked up on PATH, as exec would. */
bool cli_find_program(const char *name, char *out, size_t size)
{
    /* Said out loud for gcc, which otherwise warns under UBSan that out may be null. */
    if (!out || size == 0)
        return false;
    if (strchr(name, '/')) {
        snprintf(out, size, "%s", name);
        return cli_executable(name);
    }
    const char *path = getenv("PATH");
    if (!path)
        return false;
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, size, "%.*s/%s", (int)len, len ? path : ".", name);
        if (cli_executable(out))
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

#ifndef SEBT_GNUPLOT_PATH
#define SEBT_GNUPLOT_PATH ""
#endif

int cli_find_gnuplot(const char *cmd, const char *purpose, char *out, size_t size)
{
    const char *env = getenv("SEBT_GNUPLOT");
    const char *want = env && *env ? env : SEBT_GNUPLOT_PATH[0] ? SEBT_GNUPLOT_PATH : "gnuplot";
    if (cli_find_program(want, out, size))
        return CLI_EXIT_OK;
    fprintf(stderr, "sebt %s: error: gnuplot is needed to %s and '%s' %s; install it "
                    "(apt-get install gnuplot-nox) or set SEBT_GNUPLOT\n",
            cmd, purpose, want, strchr(want, '/') ? "is not an executable file" : "is not on PATH");
    return CLI_EXIT_USAGE;
}
