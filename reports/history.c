/* The report's history: one CSV line per report, appended to a file kept in
 * the repository (bench/results/history.csv), and the within-run ratios it
 * records. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "report_internal.h"
#include "sebt/sebt.h"

void sebt_headline_of(const sebt_bench_set *set, sebt_headline *h)
{
    memset(h, 0, sizeof *h);
    h->vs_reference = h->vs_reference_min = h->vs_reference_max = NAN;
    h->vs_numba = h->vs_numba_min = h->vs_numba_max = NAN;
    /* fast_cpu over the reference: the gated pair, CPU time of one thread,
     * repetition by repetition. */
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *f = &set->runs[i];
        if (strcmp(f->group, "pair") != 0 || strcmp(f->backend, "fast_cpu") != 0 || f->status != SEBT_RUN_OK)
            continue;
        const sebt_bench_run *s = sebt_bench_find(set, "pair", "reference", f->bars, f->combos, f->threads);
        if (!s || s->status != SEBT_RUN_OK)
            continue;
        double r[SEBT_BENCH_MAX_REPS];
        size_t n = 0, m = f->n_reps < s->n_reps ? f->n_reps : s->n_reps;
        for (size_t k = 0; k < m; k++) {
            double a = s->rep_cpu_seconds[k], b = f->rep_cpu_seconds[k];
            if (isfinite(a) && isfinite(b) && a > 0 && b > 0)
                r[n++] = a / b;
        }
        if (n == 0 && s->cpu_seconds > 0 && f->cpu_seconds > 0)
            r[n++] = s->cpu_seconds / f->cpu_seconds;
        if (n == 0)
            continue;
        h->vs_reference_min = h->vs_reference_max = r[0];
        for (size_t k = 1; k < n; k++) {
            h->vs_reference_min = fmin(h->vs_reference_min, r[k]);
            h->vs_reference_max = fmax(h->vs_reference_max, r[k]);
        }
        h->vs_reference = sebt_report_median(r, n);
        break;
    }
    /* fast_cpu over numba: the same combos over the same series, wall
     * time; the largest sweep both ran, on every core and on one thread. */
    h->vs_numba_1t = h->vs_numba_1t_min = h->vs_numba_1t_max = NAN;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *p = &set->runs[i];
        if (strcmp(p->group, "peer") != 0 || strcmp(p->backend, "numba") != 0 || p->status != SEBT_RUN_OK)
            continue;
        const sebt_bench_run *f = sebt_bench_find(set, "sweep_combos", "fast_cpu", p->bars, p->combos, p->threads);
        if (!f || f->status != SEBT_RUN_OK || !(f->seconds > 0))
            continue;
        bool one = p->threads == 1;
        double *v = one ? &h->vs_numba_1t : &h->vs_numba, *lo = one ? &h->vs_numba_1t_min : &h->vs_numba_min,
               *hi = one ? &h->vs_numba_1t_max : &h->vs_numba_max;
        long long *combos = one ? &h->numba_1t_combos : &h->numba_combos;
        if (isfinite(*v) && p->combos < *combos)
            continue;
        *v = p->seconds / f->seconds;
        *lo = p->seconds_min / f->seconds_max;
        *hi = p->seconds_max / f->seconds_min;
        *combos = p->combos;
        h->numba_bars = p->bars;
    }
}

bool sebt_run_loaded(const sebt_bench_set *set, char *why, size_t size)
{
    double busy[4096];
    size_t n = 0;
    double load = NAN;
    for (size_t i = 0; i < set->n_runs && n < 4096; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (r->status != SEBT_RUN_OK)
            continue;
        if (isfinite(r->others_busy))
            busy[n++] = r->others_busy;
        if (isfinite(r->load_avg) && !(r->load_avg <= load))
            load = r->load_avg;
    }
    const char *cores_s = sebt_bench_context(set, "sebt_cpu_cores");
    double cores = cores_s ? strtod(cores_s, NULL) : NAN;
    double med = n ? sebt_report_median(busy, n) : NAN;
    bool loaded = sebt_machine_loaded(med, load, cores);
    if (why) {
        if (isfinite(med))
            snprintf(why, size, "other processes used %.0f%% of the CPUs while it measured (median), "
                     "load average up to %.2f on %s cores", 100 * med, load, cores_s ? cores_s : "?");
        else if (isfinite(load))
            snprintf(why, size, "load average up to %.2f on %s cores", load, cores_s ? cores_s : "?");
        else
            snprintf(why, size, "the run recorded no machine load");
    }
    return loaded;
}

/* The backend's speed as the report states it (sebt_bench_speed_run). */
static double best_rate(const sebt_bench_set *set, const char *backend)
{
    const sebt_bench_run *r = sebt_bench_speed_run(set, backend);
    return r ? r->combos_per_s : NAN;
}

/* A field without commas or line ends. */
static void field(char *dst, size_t size, const char *src)
{
    size_t k = 0;
    for (; src && *src && k + 1 < size; src++)
        dst[k++] = (*src == ',' || *src == '\n' || *src == '\r' || *src == '"') ? ';' : *src;
    dst[k] = '\0';
}

#define HISTORY_HEADER                                                                                    \
    "date,commit,mode,machine,cpus,load_avg,others_busy,fast_cpu_x_reference,fast_cpu_x_reference_min,"   \
    "fast_cpu_x_reference_max,fast_cpu_x_numba,fast_cpu_x_numba_1thread,numba_combos,fast_cpu_backtests_per_s,"                    \
    "numba_backtests_per_s,reference_backtests_per_s\n"

sebt_status sebt_history_append(const char *path, const sebt_bench_set *set, sebt_error *err)
{
    sebt_headline h;
    sebt_headline_of(set, &h);
    char date[64], commit[64], machine[256], cpus[32];
    field(date, sizeof date, sebt_bench_context(set, "date"));
    const char *c = sebt_bench_context(set, "sebt_git_commit");
    snprintf(commit, sizeof commit, "%.12s%s", c ? c : "unknown", c && strstr(c, "uncommitted") ? "+" : "");
    field(machine, sizeof machine, sebt_bench_context(set, "sebt_cpu_model"));
    field(cpus, sizeof cpus, sebt_bench_context(set, "sebt_cpu_cores"));
    const char *quick = sebt_bench_context(set, "sebt_quick");
    double busy[4096], load = NAN;
    size_t n = 0;
    for (size_t i = 0; i < set->n_runs && n < 4096; i++) {
        if (set->runs[i].status == SEBT_RUN_OK && isfinite(set->runs[i].others_busy))
            busy[n++] = set->runs[i].others_busy;
        if (isfinite(set->runs[i].load_avg) && !(set->runs[i].load_avg <= load))
            load = set->runs[i].load_avg;
    }
    char line[2048];
    int len = snprintf(line, sizeof line, "%s,%s,%s,%s,%s,%.2f,%.3f,%.6g,%.6g,%.6g,%.6g,%.6g,%lld,%.6g,%.6g,%.6g\n",
                       date, commit, quick && strcmp(quick, "true") == 0 ? "quick" : "full", machine, cpus,
                       load, n ? sebt_report_median(busy, n) : NAN, h.vs_reference, h.vs_reference_min,
                       h.vs_reference_max, h.vs_numba, h.vs_numba_1t, h.numba_combos, best_rate(set, "fast_cpu"),
                       best_rate(set, "numba"), best_rate(set, "reference"));
    if (len < 0 || (size_t)len >= sizeof line)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "history: the line is too long");
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return sebt_fail(err, SEBT_ERR_IO, "cannot open the history file %s: %s", path, strerror(errno));
    struct stat sb;
    char buf[4096];
    size_t total = 0;
    if (fstat(fd, &sb) == 0 && sb.st_size == 0) {
        memcpy(buf, HISTORY_HEADER, sizeof HISTORY_HEADER - 1);
        total = sizeof HISTORY_HEADER - 1;
    }
    memcpy(buf + total, line, (size_t)len);
    total += (size_t)len;
    /* One write with O_APPEND: a reader never sees half a line. */
    ssize_t w = write(fd, buf, total);
    int saved = errno;
    if (close(fd) != 0 && w == (ssize_t)total)
        saved = errno, w = -1;
    if (w != (ssize_t)total)
        return sebt_fail(err, SEBT_ERR_IO, "cannot append to the history file %s: %s", path,
                         w < 0 ? strerror(saved) : "short write");
    return SEBT_OK;
}

/* ---- reading it back ------------------------------------------------------ */

/* Field n (0-based) of a comma-separated line, copied; "" when absent. */
static void nth(const char *line, int n, char *out, size_t size)
{
    out[0] = '\0';
    if (n < 0)
        return;
    for (int k = 0; k < n && line; k++) {
        line = strpbrk(line, ",\n");
        if (line && *line == ',')
            line++;
        else
            line = NULL;
    }
    if (!line)
        return;
    size_t len = strcspn(line, ",\n\r");
    snprintf(out, size, "%.*s", (int)len, line);
}

static double nth_num(const char *line, int n)
{
    char buf[64], *end;
    nth(line, n, buf, sizeof buf);
    double v = strtod(buf, &end);
    return end == buf ? NAN : v;
}

static int column_of(const char *header, const char *name)
{
    char f[64];
    for (int k = 0; k < 64; k++) {
        nth(header, k, f, sizeof f);
        if (strcmp(f, name) == 0)
            return k;
    }
    return -1;
}

bool sebt_history_previous(const char *path, const sebt_bench_set *set, sebt_history_row *row)
{
    memset(row, 0, sizeof *row);
    if (!path)
        return false;
    char *text;
    size_t len;
    sebt_error err = { 0 };
    if (sebt_read_file(path, &text, &len, &err) != SEBT_OK)
        return false;
    const char *quick = sebt_bench_context(set, "sebt_quick");
    const char *mode = quick && strcmp(quick, "true") == 0 ? "quick" : "full";
    char machine[256], cpus[32];
    field(machine, sizeof machine, sebt_bench_context(set, "sebt_cpu_model"));
    field(cpus, sizeof cpus, sebt_bench_context(set, "sebt_cpu_cores"));
    int c_date = column_of(text, "date"), c_commit = column_of(text, "commit"), c_mode = column_of(text, "mode"),
        c_machine = column_of(text, "machine"), c_cpus = column_of(text, "cpus"),
        c_load = column_of(text, "load_avg"), c_busy = column_of(text, "others_busy"),
        c_ref = column_of(text, "fast_cpu_x_reference"), c_lo = column_of(text, "fast_cpu_x_reference_min"),
        c_hi = column_of(text, "fast_cpu_x_reference_max");
    bool found = false;
    for (const char *ln = strchr(text, '\n'); ln && ln[1]; ln = strchr(ln, '\n')) {
        ln++;
        sebt_history_row r;
        nth(ln, c_mode, r.mode, sizeof r.mode);
        nth(ln, c_machine, r.machine, sizeof r.machine);
        nth(ln, c_cpus, r.cpus, sizeof r.cpus);
        if (strcmp(r.mode, mode) != 0 || strcmp(r.machine, machine) != 0 || strcmp(r.cpus, cpus) != 0)
            continue;
        r.vs_reference = nth_num(ln, c_ref);
        if (!(r.vs_reference > 0))
            continue;
        r.vs_reference_min = nth_num(ln, c_lo);
        r.vs_reference_max = nth_num(ln, c_hi);
        if (!(r.vs_reference_min > 0))
            r.vs_reference_min = r.vs_reference;
        if (!(r.vs_reference_max > 0))
            r.vs_reference_max = r.vs_reference;
        nth(ln, c_date, r.date, sizeof r.date);
        nth(ln, c_commit, r.commit, sizeof r.commit);
        r.load_avg = nth_num(ln, c_load);
        r.others_busy = nth_num(ln, c_busy);
        *row = r;
        found = true;
    }
    free(text);
    return found;
}

bool sebt_history_row_loaded(const sebt_history_row *row)
{
    return sebt_machine_loaded(row->others_busy, row->load_avg, strtod(row->cpus, NULL));
}

/* The share of the CPUs other processes used while the benchmark measured
 * is the direct reading and decides when it exists. The load average is
 * only the fallback: it counts the benchmark's own threads and lags by a
 * minute, so on 2 cores a quiet machine running a 2-thread benchmark shows
 * a load of 2 to 3. */
bool sebt_machine_loaded(double others_busy, double load_avg, double cores)
{
    if (isfinite(others_busy))
        return others_busy > 0.25;
    return isfinite(load_avg) && isfinite(cores) && cores > 0 && load_avg > cores;
}
