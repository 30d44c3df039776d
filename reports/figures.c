/* The report's figures: data files and one gnuplot script, written under
 * DIR/gnuplot/ so that anyone can re-run `gnuplot gnuplot/figures.gp` in DIR,
 * then gnuplot run once to draw every figure as SVG and PNG. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report_internal.h"
#include "sebt/outfile.h"
#include "sebt/sebt.h"
#include "sebt/spawn.h"

const char *const sebt_report_figures[SEBT_REPORT_N_FIGURES] = {
    "throughput_vs_combos",
    "throughput_vs_bars",
    "ratios_within_run",
    "thread_scaling",
    "history",
};

/* A point: the median and the range over repetitions. */
typedef struct {
    double x, y, lo, hi;
    char tic[32];          /* history: the commit under the point */
} point;

typedef struct {
    char title[160];
    point *pts;
    size_t n;
    bool marker;           /* drawn as rings around other points, not a line */
} line;

static int cmp_point(const void *a, const void *b)
{
    double x = ((const point *)a)->x, y = ((const point *)b)->x;
    return (x > y) - (x < y);
}

static bool ok(const sebt_bench_run *r) { return r && r->status == SEBT_RUN_OK && r->seconds > 0; }

static void add(line *l, double x, double y, double lo, double hi)
{
    if (!(isfinite(x) && isfinite(y) && x > 0 && y > 0))
        return;
    for (size_t k = 0; k < l->n; k++)
        if (l->pts[k].x == x)
            return;
    if (!(lo > 0) || !isfinite(lo))
        lo = y;
    if (!(hi > 0) || !isfinite(hi))
        hi = y;
    l->pts[l->n++] = (point){ x, y, lo, hi, "" };
}

/* A rate's range follows its time: rate = work / time. */
static void add_rate(line *l, const sebt_bench_run *r, double x, double rate)
{
    add(l, x, rate, rate * r->seconds / r->seconds_max, rate * r->seconds / r->seconds_min);
}

/* slow/fast on the same work, with the range of the two ranges. */
static void add_ratio(line *l, double x, const sebt_bench_run *slow, const sebt_bench_run *fast)
{
    if (!ok(slow) || !ok(fast))
        return;
    add(l, x, slow->seconds / fast->seconds, slow->seconds_min / fast->seconds_max,
        slow->seconds_max / fast->seconds_min);
}

static const char *const backend_order[] = { "reference", "fast_cpu", "cuda" };

static void fmt_count(long long v, char *buf, size_t size)
{
    if (v >= 1000000 && v % 1000000 == 0)
        snprintf(buf, size, "%lldM", v / 1000000);
    else if (v >= 1000 && v % 1000 == 0)
        snprintf(buf, size, "%lldk", v / 1000);
    else
        snprintf(buf, size, "%lld", v);
}

/* Lines being filled from one pool of points. */
typedef struct {
    line *lines;
    size_t max, nl, used;
    point *pool;
} collector;

/* A new line titled by the format, its points from the pool's free end;
 * NULL when max lines are taken. */
static line *new_line(collector *c, const char *title_fmt, ...) SEBT_PRINTF(2, 3);
static line *new_line(collector *c, const char *title_fmt, ...)
{
    if (c->nl >= c->max)
        return NULL;
    line *l = &c->lines[c->nl];
    l->pts = c->pool + c->used;
    l->n = 0;
    va_list ap;
    va_start(ap, title_fmt);
    vsnprintf(l->title, sizeof l->title, title_fmt, ap);
    va_end(ap);
    return l;
}

/* A line with points is kept; an empty one gives its place back. */
static void line_done(collector *c, line *l)
{
    if (l && l->n) {
        c->used += l->n;
        c->nl++;
    }
}

/* Figures 0 and 1: rate against combos or bars. */
static void collect_rates(collector *c, const sebt_bench_set *set, int fig)
{
    char a[32];
    /* One line per backend and thread setting: "all" is the backend's
     * default (every core), 1 is one thread. */
    const char *group = fig == 0 ? "sweep_combos" : "sweep_bars";
    for (size_t k = 0; k < 4; k++) {
        const char *be = k < 3 ? backend_order[k] : "numba";
        const char *grp = k < 3 ? group : "peer";
        if (k == 3 && fig == 1)
            break;
        for (int th = 0; th <= 1; th++) {
            line *l = NULL;
            for (size_t i = 0; i < set->n_runs; i++) {
                const sebt_bench_run *r = &set->runs[i];
                if (!ok(r) || strcmp(r->group, grp) != 0 || strcmp(r->backend, be) != 0 ||
                    (th == 0 ? r->threads > 1 || (r->threads == 1 && strcmp(be, "reference") != 0)
                             : r->threads != 1 || strcmp(be, "reference") == 0))
                    continue;
                if (!l) {
                    fmt_count(fig == 0 ? r->bars : r->combos, a, sizeof a);
                    const char *who = k == 3 ? "numba peer" : be;
                    const char *how = strcmp(be, "reference") == 0 ? "" : th ? ", 1 thread" : ", every core";
                    if (fig == 0)
                        l = new_line(c, "%s (%s bars%s)", who, a, how);
                    else
                        l = new_line(c, "%s (%s combos per sweep%s)", who, a, how);
                    if (!l)
                        break;
                }
                if (fig == 0)
                    add_rate(l, r, (double)r->combos, r->combos_per_s);
                else
                    add_rate(l, r, (double)r->bars, r->bar_combos_per_s);
            }
            line_done(c, l);
        }
    }
}

/* Figure 2: how many times faster, pair by pair. */
static void collect_ratios(collector *c, const sebt_bench_set *set)
{
    char a[32], b[32];
    static const struct {
        const char *group, *fast, *slow, *slow_group;
    } fam[] = {
        { "sweep_combos", "fast_cpu", "reference", "sweep_combos" },
        { "sweep_bars", "fast_cpu", "reference", "sweep_bars" },
        { "sweep_combos", "fast_cpu", "numba", "peer" },
        { "sweep_combos", "cuda", "fast_cpu", "sweep_combos" },
        { "sweep_bars", "cuda", "fast_cpu", "sweep_bars" },
    };
    for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++) {
        /* every core (threads 0), then one thread each (the peer's pair) */
        for (int th = 0; th <= 1; th++) {
            if (th == 1 && strcmp(fam[k].slow, "numba") != 0)
                break;
            line *l = NULL;
            for (size_t i = 0; i < set->n_runs; i++) {
                const sebt_bench_run *f = &set->runs[i];
                if (!ok(f) || strcmp(f->group, fam[k].group) != 0 || strcmp(f->backend, fam[k].fast) != 0 ||
                    (f->threads == 1) != (th == 1))
                    continue;
                const sebt_bench_run *s = sebt_bench_find(set, fam[k].slow_group, fam[k].slow, f->bars,
                                                          f->combos, f->threads);
                if (!ok(s))
                    continue;
                if (!l) {
                    fmt_count(f->bars, a, sizeof a);
                    fmt_count(f->combos, b, sizeof b);
                    if (strcmp(fam[k].slow, "numba") == 0)
                        l = new_line(c, "%s / numba (%s bars, %s)", fam[k].fast, a,
                                     th ? "1 thread each" : "every core each");
                    else if (strcmp(fam[k].group, "sweep_combos") == 0)
                        l = new_line(c, "%s / %s, more combos (%s bars)", fam[k].fast, fam[k].slow, a);
                    else
                        l = new_line(c, "%s / %s, more bars (%s combos)", fam[k].fast, fam[k].slow, b);
                    if (!l)
                        break;
                }
                add_ratio(l, (double)f->bars * (double)f->combos, s, f);
            }
            line_done(c, l);
        }
    }
    /* The gated pair: one thread each, CPU time. */
    line *l = NULL;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *f = &set->runs[i];
        if (!ok(f) || strcmp(f->group, "pair") != 0 || strcmp(f->backend, "fast_cpu") != 0)
            continue;
        const sebt_bench_run *s = sebt_bench_find(set, "pair", "reference", f->bars, f->combos, f->threads);
        if (!ok(s) || !(f->cpu_seconds > 0) || !(s->cpu_seconds > 0))
            continue;
        if (!l && !(l = new_line(c, "fast_cpu / reference, 1 thread each, CPU time (the gated pair)")))
            break;
        double lo = INFINITY, hi = 0;
        size_t m = f->n_reps < s->n_reps ? f->n_reps : s->n_reps;
        for (size_t q = 0; q < m; q++) {
            double v = s->rep_cpu_seconds[q] / f->rep_cpu_seconds[q];
            if (isfinite(v)) {
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            }
        }
        add(l, (double)f->bars * (double)f->combos, s->cpu_seconds / f->cpu_seconds, lo, hi);
    }
    line_done(c, l);
}

/* Figure 3: speed-up against threads. */
static void collect_threads(collector *c, const sebt_bench_set *set)
{
    char b[32];
    line *l = NULL;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (!ok(r) || strcmp(r->group, "threads") != 0)
            continue;
        const sebt_bench_run *one = sebt_bench_find(set, "threads", r->backend, r->bars, r->combos, 1);
        if (!ok(one))
            continue;
        if (!l) {
            fmt_count(r->combos, b, sizeof b);
            if (!(l = new_line(c, "%s (%s combos)", r->backend, b)))
                break;
        }
        add_ratio(l, (double)r->threads, one, r);
    }
    line_done(c, l);
}

/* The lines of one figure. Each line is one family of runs (one group and
 * backend, or one pair of them), sorted by x: points of different families
 * are never joined. */
static size_t collect(const sebt_bench_set *set, int fig, line *lines, size_t max, point *pool)
{
    collector c = { lines, max, 0, 0, pool };
    if (fig == 0 || fig == 1)
        collect_rates(&c, set, fig);
    else if (fig == 2)
        collect_ratios(&c, set);
    else if (fig == 3)
        collect_threads(&c, set);
    for (size_t k = 0; k < c.nl; k++)
        qsort(lines[k].pts, lines[k].n, sizeof *lines[k].pts, cmp_point);
    return c.nl;
}

/* ---- the history file ------------------------------------------------------ */

/* Column index of name in a CSV header line, or -1. */
static int column(const char *header, const char *name)
{
    int k = 0;
    size_t len = strlen(name);
    for (const char *p = header; *p; k++) {
        size_t w = strcspn(p, ",\n\r");
        if (w == len && strncmp(p, name, len) == 0)
            return k;
        p += w;
        if (*p != ',')
            break;
        p++;
    }
    return -1;
}

static const char *nth_field(const char *line, int n, size_t *len)
{
    for (int k = 0; k < n; k++) {
        line += strcspn(line, ",\n\r");
        if (*line != ',')
            return NULL;
        line++;
    }
    *len = strcspn(line, ",\n\r");
    return line;
}

static double num_field(const char *line, int n)
{
    size_t len;
    const char *f = n >= 0 ? nth_field(line, n, &len) : NULL;
    if (!f || len == 0)
        return NAN;
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), f);
    char *end;
    double v = strtod(buf, &end);
    return end == buf ? NAN : v;
}

/* Two lines from the history: fast_cpu over the reference and over numba,
 * one point per report in file order. A missing or unreadable file is an
 * empty history, not an error: the figure says so. */
static size_t collect_history(const char *path, line *lines, point *pool, size_t pool_max)
{
    if (!path)
        return 0;
    char *text;
    size_t len;
    sebt_error err = { 0 };
    if (sebt_read_file(path, &text, &len, &err) != SEBT_OK)
        return 0;
    int c_ref = column(text, "fast_cpu_x_reference"), c_lo = column(text, "fast_cpu_x_reference_min"),
        c_hi = column(text, "fast_cpu_x_reference_max"), c_numba = column(text, "fast_cpu_x_numba"),
        c_numba1 = column(text, "fast_cpu_x_numba_1thread"), c_commit = column(text, "commit"),
        c_mode = column(text, "mode");
    int c_load = column(text, "load_avg"), c_busy = column(text, "others_busy"), c_cpus = column(text, "cpus");
    size_t third = pool_max / 4;
    for (size_t k = 0; k < 4; k++) {
        lines[k].pts = pool + k * third;
        lines[k].n = 0;
        lines[k].marker = k == 3;
    }
    snprintf(lines[0].title, sizeof lines[0].title, "fast_cpu / reference (the gated pair, CPU time)");
    snprintf(lines[1].title, sizeof lines[1].title, "fast_cpu / numba, every core each (largest common sweep)");
    snprintf(lines[2].title, sizeof lines[2].title, "fast_cpu / numba, one thread each");
    snprintf(lines[3].title, sizeof lines[3].title, "machine loaded (others used > 25%% of the CPUs, or load > cores)");
    size_t row = 0;
    const char *p = strchr(text, '\n');
    while (p && p[1] && row < third) {
        const char *ln = p + 1;
        p = strchr(ln, '\n');
        if (*ln == '\n' || *ln == '\r')
            continue;
        row++;
        char tic[32] = "?";
        size_t fl;
        const char *cm = c_commit >= 0 ? nth_field(ln, c_commit, &fl) : NULL;
        const char *md = c_mode >= 0 ? nth_field(ln, c_mode, &fl) : NULL;
        if (cm)
            snprintf(tic, sizeof tic, "%.7s%s", cm, md && strncmp(md, "full", 4) == 0 ? " full" : "");
        const int cols[3] = { c_ref, c_numba, c_numba1 };
        for (size_t k = 0; k < 3; k++) {
            double v = num_field(ln, cols[k]);
            if (!(isfinite(v) && v > 0))
                continue;
            point *q = &lines[k].pts[lines[k].n++];
            *q = (point){ (double)row, v, k == 0 ? num_field(ln, c_lo) : v, k == 0 ? num_field(ln, c_hi) : v, "" };
            snprintf(q->tic, sizeof q->tic, "%s", tic);
            if (!(q->lo > 0))
                q->lo = v;
            if (!(q->hi > 0))
                q->hi = v;
        }
        /* A dip on a loaded machine is not a regression: ring its points. */
        double busy = num_field(ln, c_busy), load = num_field(ln, c_load), cpus = num_field(ln, c_cpus);
        bool loaded = sebt_machine_loaded(busy, load, cpus);
        for (size_t k = 0; k < 3 && loaded; k++) {
            if (lines[k].n && lines[k].pts[lines[k].n - 1].x == (double)row) {
                point *q = &lines[3].pts[lines[3].n++];
                *q = lines[k].pts[lines[k].n - 1];
                q->lo = q->hi = q->y;
            }
        }
    }
    free(text);
    size_t nl = 0;
    for (size_t k = 0; k < 4; k++)
        if (lines[k].n)
            lines[nl++] = lines[k];
    return nl;
}

typedef struct {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    bool logx, logy;
    bool ideal_line;       /* y = x, for thread scaling */
} figure_style;

static const figure_style styles[SEBT_REPORT_N_FIGURES] = {
    { "Backtests per second vs combos in one sweep (median; bars: min-max of the repetitions)",
      "combos in the sweep (log scale)", "backtests (combos) per second (log scale)", true, true, false },
    { "Bar-combos per second vs bars in the series (median; bars: min-max)",
      "bars in the series (log scale)", "bar-combos per second (log scale)", true, true, false },
    { "How many times faster, measured side by side in this run (one line per family)",
      "work per sweep, bars x combos (log scale)", "times faster (x, log scale)", true, true, false },
    { "Thread scaling of one sweep (median; bars: min-max)",
      "threads", "speed-up over 1 thread (x)", false, false, true },
    { "History: within-run ratios, one point per report (oldest first)",
      "report (oldest first; commit)", "times faster (x, log scale)", false, true, false },
};

static sebt_status io_fail(sebt_error *err, const char *what, const char *path)
{
    return sebt_fail(err, SEBT_ERR_IO, "cannot %s %s: %s", what, path, strerror(errno));
}

/* The backends that appear in the runs, reference first. */
size_t sebt_report_backends(const sebt_bench_set *set, const char **names, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < 3 && n < max; k++)
        for (size_t i = 0; i < set->n_runs; i++)
            if (strcmp(set->runs[i].backend, backend_order[k]) == 0) {
                names[n++] = backend_order[k];
                break;
            }
    for (size_t i = 0; i < set->n_runs && n < max; i++) {
        const char *b = set->runs[i].backend;
        if (strcmp(b, "loader") == 0 || !b[0])
            continue;
        bool seen = false;
        for (size_t k = 0; k < n; k++)
            seen |= strcmp(names[k], b) == 0;
        if (!seen)
            names[n++] = b;
    }
    return n;
}

/* Text reaches the script inside single quotes: keep it tame. */
static void gp_quote(const char *s, char *out, size_t size)
{
    size_t k = 0;
    for (; *s && k + 1 < size; s++)
        out[k++] = *s == '\'' ? '"' : *s;
    out[k] = '\0';
}

/* One colour per line of a figure: 16 that tell apart, never reused
 * within a figure (a figure has at most 16 lines). */
static const char *const colors[] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                                      "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8",
                                      "#98df8a", "#ff9896", "#c5b0d5", "#c49c94" };
#define N_COLORS (sizeof colors / sizeof colors[0])

/* The groups of runs each figure draws. */
static bool figure_uses(int fig, const char *group)
{
    switch (fig) {
    case 0: return strcmp(group, "sweep_combos") == 0 || strcmp(group, "peer") == 0;
    case 1: return strcmp(group, "sweep_bars") == 0;
    case 2: return strcmp(group, "sweep_combos") == 0 || strcmp(group, "sweep_bars") == 0 ||
                   strcmp(group, "peer") == 0 || strcmp(group, "pair") == 0;
    case 3: return strcmp(group, "threads") == 0;
    default: return false;
    }
}

/* How many of a figure's points were measured under load, of how many,
 * and the most the others used then (NaN: not recorded). */
static size_t figure_load(const sebt_bench_set *set, int fig, size_t *points, double *most_busy)
{
    size_t n = 0, loaded = 0;
    double most = NAN;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (!ok(r) || !figure_uses(fig, r->group))
            continue;
        n++;
        if (sebt_bench_run_loaded(set, r)) {
            loaded++;
            if (isfinite(r->others_busy) && !(r->others_busy <= most))
                most = r->others_busy;
        }
    }
    *points = n;
    *most_busy = most;
    return loaded;
}

bool sebt_report_figure_loaded(const sebt_bench_set *set, int fig, char *why, size_t size)
{
    size_t n, loaded;
    double most;
    loaded = figure_load(set, fig, &n, &most);
    if (why && loaded) {
        if (isfinite(most))
            snprintf(why, size, "%zu of its %zu points measured under load (other processes used up to %.0f%% of "
                     "the CPUs)", loaded, n, 100 * most);
        else
            snprintf(why, size, "%zu of its %zu points measured under load (load average above the cores)", loaded, n);
    }
    return loaded > 0;
}


/* The figure's frame: title, axes, key, and the load flag above the plot;
 * returns the picture's height, which grows with the key. */
static int write_figure_frame(FILE *gp, const sebt_bench_set *set, int fig, size_t nl)
{
    const figure_style *st = &styles[fig];
    char title[512];
    snprintf(title, sizeof title, "%s", st->title);
    /* Short enough to fit above the plot; the caption says it in full. */
    char why[256] = "";
    size_t points = 0;
    double most = NAN;
    size_t n_loaded = fig < 4 ? figure_load(set, fig, &points, &most) : 0;
    bool loaded = n_loaded > 0;
    if (loaded && isfinite(most))
        snprintf(why, sizeof why, "%zu of %zu points, others used up to %.0f%% of the CPUs", n_loaded, points,
                 100 * most);
    else if (loaded)
        snprintf(why, sizeof why, "%zu of %zu points, load average above the cores", n_loaded, points);
    fprintf(gp, "\n# ---- %s\nreset\n", sebt_report_figures[fig]);
    fprintf(gp, "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\n", title, st->xlabel, st->ylabel);
    /* The key goes under the plot, one entry a line (inside, it hides
     * points), with a bottom margin and a canvas that grow with it, so it
     * neither covers the axis label nor runs off the picture. */
    size_t keys = nl + (st->ideal_line && nl > 0);
    fprintf(gp, "set grid\nset key outside below center Left reverse box maxcols 1\nset bmargin %zu\n"
                "set border 3\nset tics nomirror\n", keys + 6);
    int height = 560 + 24 * (int)keys;
    if (loaded) {
        /* Above the plot, under the title: never over a point. */
        char q[300];
        gp_quote(why, q, sizeof q);
        fprintf(gp, "set label 2 'MEASURED UNDER LOAD: %s' at graph 0,1.02 left textcolor rgb '#c00000'\n"
                    "set tmargin 5\n", q);
    }
    if (st->logx)
        fprintf(gp, "set logscale x\nset format x '%%.0s%%c'\n");
    if (st->logy)
        fprintf(gp, "set logscale y\nset format y '%%.0s%%c'\n");
    if (fig == 2 || fig == 4)
        fprintf(gp, "set format y '%%g'\n");
    if (fig == 3)
        fprintf(gp, "set xtics 1\n");
    return height;
}

/* Each line's data file (atomic) and its clause of the plot command in
 * plot, from *used on; *max_x gets the largest x drawn. */
static sebt_status write_figure_lines(const line *lines, size_t nl, int fig, const char *dir, char *plot,
                                      size_t plot_size, size_t *used_io, double *max_x, sebt_error *err)
{
    const figure_style *st = &styles[fig];
    size_t used = *used_io;
    sebt_status rc = SEBT_OK;
    for (size_t k = 0; k < nl; k++) {
        char rel[256], path[4096], t[200];
        snprintf(rel, sizeof rel, "gnuplot/%s.%zu.dat", sebt_report_figures[fig], k);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        sebt_outfile of; /* atomic, as every file sebt writes */
        if (sebt_outfile_open(&of, path, err) != SEBT_OK) {
            rc = err->code;
            break;
        }
        FILE *f = of.f;
        fprintf(f, "# %s: %s\n# x: %s\n# y (median), low, high: %s\n", sebt_report_figures[fig], lines[k].title,
                st->xlabel, st->ylabel);
        for (size_t i = 0; i < lines[k].n; i++) {
            const point *q = &lines[k].pts[i];
            fprintf(f, "%.17g %.17g %.17g %.17g \"%s\"\n", q->x, q->y, q->lo, q->hi, q->tic[0] ? q->tic : "-");
            if (q->x > *max_x)
                *max_x = q->x;
        }
        if (sebt_outfile_commit(&of, err) != SEBT_OK) {
            rc = err->code;
            break;
        }
        gp_quote(lines[k].title, t, sizeof t);
        /* History: red is the rings' (loaded points), so its lines start
         * at the second colour. */
        const char *color = colors[(fig == 4 ? k + 1 : k) % N_COLORS];
        const char *xtic = fig == 4 && k == 0 ? ":xtic(5)" : "";
        if (used < plot_size && lines[k].marker)
            used += (size_t)snprintf(plot + used, plot_size - used,
                                     "%s'%s' using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#c00000' title '%s'",
                                     k ? ", \\\n     " : "", rel, t);
        else if (used < plot_size)
            used += (size_t)snprintf(plot + used, plot_size - used,
                                     "%s'%s' using 1:2:3:4%s with yerrorlines lw 2 pt %zu ps 1.2 lc rgb '%s' title '%s'",
                                     k ? ", \\\n     " : "", rel, xtic, 5 + 2 * (k % 4), color, t);
    }
    *used_io = used;
    return rc;
}

static sebt_status write_figure(FILE *gp, const sebt_bench_set *set, int fig, const char *dir,
                                const char *history, sebt_error *err)
{
    const figure_style *st = &styles[fig];
    size_t pool_max = 2 * set->n_runs + 4096;
    point *pool = malloc(pool_max * sizeof *pool);
    line lines[16];
    memset(lines, 0, sizeof lines);
    if (!pool)
        return sebt_fail(err, SEBT_ERR_NOMEM, "report: out of memory");
    size_t nl = fig == 4 ? collect_history(history, lines, pool, pool_max) : collect(set, fig, lines, 16, pool);

    int height = write_figure_frame(gp, set, fig, nl);

    char plot[16384];
    size_t used = (size_t)snprintf(plot, sizeof plot, "plot ");
    double max_x = 1;
    sebt_status rc = write_figure_lines(lines, nl, fig, dir, plot, sizeof plot, &used, &max_x, err);
    free(pool);
    if (rc != SEBT_OK)
        return rc;
    if (nl > 0 && st->ideal_line && used < sizeof plot) {
        fprintf(gp, "set xrange [0.8:%g]\nset yrange [0:*]\n", max_x * 1.1);
        used += (size_t)snprintf(plot + used, sizeof plot - used,
                                 ", \\\n     x with lines dt 2 lc rgb 'gray40' title 'ideal (linear)'");
    }
    if (nl > 0 && fig == 4)
        fprintf(gp, "set xrange [0.5:%g]\nset xtics rotate by -30 font ',10'\n", max_x + 0.5);
    if (used >= sizeof plot)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "report: the plot command of %s is too long",
                         sebt_report_figures[fig]);
    if (nl == 0) {
        /* An empty figure says why rather than vanishing from the report. */
        fprintf(gp, "unset logscale\nset xrange [0:1]\nset yrange [0:1]\nunset key\n"
                    "set label 1 '%s' at graph 0.5,0.5 center\n",
                fig == 4 ? "no history yet: each new report appends one point"
                         : "no timed run answers this question (see the tables)");
        snprintf(plot, sizeof plot, "plot 2 notitle");
    }
    fprintf(gp, "set terminal svg size 900,%d dynamic noenhanced font 'sans,13' background rgb 'white'\n"
                "set output '%s.svg'\n%s\nset output\n", height, sebt_report_figures[fig], plot);
    fprintf(gp, "set terminal @pngterm size 900,%d noenhanced\nset output '%s.png'\nreplot\nset output\n",
            height, sebt_report_figures[fig]);
    return SEBT_OK;
}

/* The last lines of a log, for an error message: the report folder that
 * held it is removed when the report fails. */
void sebt_report_log_tail(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    char *text;
    size_t len;
    sebt_error e = { 0 };
    if (sebt_read_file(path, &text, &len, &e) != SEBT_OK)
        return;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    size_t from = len, lines = 0, min = len > size - 1 ? len - (size - 1) : 0;
    while (from > min && !(text[from - 1] == '\n' && ++lines == 4))
        from--;
    snprintf(out, size, "%.*s", (int)(len - from), text + from);
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    free(text);
}

/* gnuplot in its own process group (include/sebt/spawn.h): a signal to
 * sebt stops it before sebt removes the unfinished report. */
static sebt_status run_gnuplot(const char *gnuplot, const char *dir, sebt_error *err)
{
    char log_path[4096];
    snprintf(log_path, sizeof log_path, "%s/gnuplot/gnuplot.log", dir);
    char *argv[] = { (char *)gnuplot, (char *)"gnuplot/figures.gp", NULL };
    sebt_child c;
    sebt_status st = sebt_child_start(&c, gnuplot, argv, dir, log_path, err);
    if (st == SEBT_ERR_UNAVAILABLE)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE,
                         "gnuplot is needed for the figures and '%s' cannot be run "
                         "(apt-get install gnuplot-nox, or set SEBT_GNUPLOT): %s", gnuplot, err->msg);
    if (st != SEBT_OK)
        return st;
    int status;
    if (sebt_child_wait(&c, &status, err) != SEBT_OK)
        return err->code;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[600];
        sebt_report_log_tail(log_path, tail, sizeof tail);
        return sebt_fail(err, SEBT_ERR_INTERNAL, "gnuplot %s %d on the report's figures.gp; it said: %s",
                         WIFEXITED(status) ? "exited with status" : "was killed by signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail[0] ? tail : "nothing");
    }
    return SEBT_OK;
}

/* The big sweeps: end-to-end seconds against combos, one line per engine
 * and output format, at the most threads that pair ran on. */
static sebt_status write_big_figure(FILE *gp, const sebt_big_sweeps *bs, const char *dir, sebt_error *err)
{
    fprintf(gp, "\n# ---- %s\nreset\n", SEBT_REPORT_BIG_FIGURE);
    fprintf(gp, "set title 'Big sweeps: end-to-end seconds vs combos (median of the repetitions; %s)'\n"
                "set xlabel 'combos in the sweep (log scale)'\nset ylabel 'end-to-end seconds (log scale)'\n"
                "set grid\nset key outside below center Left reverse box maxcols 1\nset border 3\n"
                "set tics nomirror\nset logscale xy\nset format x '%%.0s%%c'\nset format y '%%g'\n",
            "bench/run_big_sweeps.sh");
    if (sebt_big_sweeps_loaded(bs))
        fprintf(gp, "set label 2 'MEASURED UNDER LOAD: 1-minute load average up to %.1f' at graph 0,1.02 left "
                    "textcolor rgb '#c00000'\nset tmargin 5\n", bs->load_max);
    char plot[8192];
    size_t used = (size_t)snprintf(plot, sizeof plot, "plot ");
    size_t nl = 0;
    for (size_t i = 0; i < bs->n_rows; i++) {
        const sebt_big_row *a = &bs->rows[i];
        bool first = true; /* the first row of its engine and format */
        int most = a->threads;
        for (size_t j = 0; j < bs->n_rows; j++) {
            const sebt_big_row *b = &bs->rows[j];
            if (strcmp(a->engine, b->engine) == 0 && strcmp(a->format, b->format) == 0) {
                first &= j >= i;
                if (b->threads > most)
                    most = b->threads;
            }
        }
        if (!first)
            continue;
        char rel[256], path[4096], title[128];
        snprintf(rel, sizeof rel, "gnuplot/%s.%zu.dat", SEBT_REPORT_BIG_FIGURE, nl);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        char engine[64];
        sebt_big_engine_label(a, engine, sizeof engine);
        snprintf(title, sizeof title, "%s%s%s, %d thread%s", engine, strcmp(a->format, "-") ? " " : "",
                 strcmp(a->format, "-") ? a->format : "", most, most == 1 ? "" : "s");
        sebt_outfile of;
        if (sebt_outfile_open(&of, path, err) != SEBT_OK)
            return err->code;
        fprintf(of.f, "# %s: %s\n# combos, end-to-end seconds (median)\n", SEBT_REPORT_BIG_FIGURE, title);
        size_t pts = 0;
        for (size_t j = 0; j < bs->n_rows; j++) { /* sorted by combos within an engine */
            const sebt_big_row *b = &bs->rows[j];
            if (strcmp(a->engine, b->engine) == 0 && strcmp(a->format, b->format) == 0 && b->threads == most &&
                b->end_to_end_s > 0) {
                fprintf(of.f, "%lld %.17g\n", b->combos, b->end_to_end_s);
                pts++;
            }
        }
        if (sebt_outfile_commit(&of, err) != SEBT_OK)
            return err->code;
        if (pts == 0)
            continue;
        if (used < sizeof plot)
            used += (size_t)snprintf(plot + used, sizeof plot - used,
                                     "%s'%s' using 1:2 with linespoints lw 2 pt %zu ps 1.2 lc rgb '%s' title '%s'",
                                     nl ? ", \\\n     " : "", rel, 5 + 2 * (nl % 4), colors[nl % N_COLORS],
                                     title);
        nl++;
    }
    if (used >= sizeof plot)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "report: the plot command of %s is too long", SEBT_REPORT_BIG_FIGURE);
    if (nl == 0) {
        fprintf(gp, "unset logscale\nset xrange [0:1]\nset yrange [0:1]\nunset key\n"
                    "set label 1 'no timed run in %s' at graph 0.5,0.5 center\n", bs->path);
        snprintf(plot, sizeof plot, "plot 2 notitle");
    }
    int height = 560 + 24 * (int)nl;
    fprintf(gp, "set bmargin %zu\n", nl + 6);
    fprintf(gp, "set terminal svg size 900,%d dynamic noenhanced font 'sans,13' background rgb 'white'\n"
                "set output '%s.svg'\n%s\nset output\n", height, SEBT_REPORT_BIG_FIGURE, plot);
    fprintf(gp, "set terminal @pngterm size 900,%d noenhanced\nset output '%s.png'\nreplot\nset output\n",
            height, SEBT_REPORT_BIG_FIGURE);
    return SEBT_OK;
}

bool sebt_report_has_big_figure(const sebt_big_sweeps *bs)
{
    return bs && bs->found && bs->n_rows > 0;
}

sebt_status sebt_report_figures_write(const sebt_bench_set *set, const char *dir, const char *gnuplot,
                                      const char *history, const sebt_big_sweeps *bs, sebt_error *err)
{
    bool big = sebt_report_has_big_figure(bs);
    char path[4096];
    snprintf(path, sizeof path, "%s/gnuplot", dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return io_fail(err, "create", path);
    sebt_outfile ogp;
    if (sebt_report_open_in(&ogp, dir, "gnuplot/figures.gp", err) != SEBT_OK)
        return err->code;
    FILE *gp = ogp.f;
    fprintf(gp, "# The report's figures. Run from the report folder: gnuplot gnuplot/figures.gp\n"
                "# pngcairo draws smoother PNGs; gnuplot-nox may only have libgd's png.\n"
                "pngterm = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'\n");
    sebt_status st = SEBT_OK;
    for (int fig = 0; fig < SEBT_REPORT_N_FIGURES && st == SEBT_OK; fig++)
        st = write_figure(gp, set, fig, dir, history, err);
    if (st == SEBT_OK && big)
        st = write_big_figure(gp, bs, dir, err);
    if (st != SEBT_OK) {
        sebt_outfile_abort(&ogp);
        return st;
    }
    if (sebt_outfile_commit(&ogp, err) != SEBT_OK)
        return err->code;
    st = run_gnuplot(gnuplot, dir, err);
    if (st != SEBT_OK)
        return st;
    for (int fig = 0; fig < SEBT_REPORT_N_FIGURES + big; fig++) {
        const char *ext[2] = { "svg", "png" };
        const char *name = fig < SEBT_REPORT_N_FIGURES ? sebt_report_figures[fig] : SEBT_REPORT_BIG_FIGURE;
        for (int e = 0; e < 2; e++) {
            struct stat sb;
            snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[e]);
            if (stat(path, &sb) != 0 || sb.st_size == 0) {
                char tail[600];
                snprintf(path, sizeof path, "%s/gnuplot/gnuplot.log", dir);
                sebt_report_log_tail(path, tail, sizeof tail);
                return sebt_fail(err, SEBT_ERR_INTERNAL, "gnuplot did not draw %s.%s; it said: %s", name, ext[e],
                                 tail[0] ? tail : "nothing");
            }
        }
    }
    return SEBT_OK;
}
