/* The report's figures: data files and one gnuplot script, written under
 * DIR/gnuplot/ so that anyone can re-run `gnuplot gnuplot/figures.gp` in DIR,
 * then gnuplot run once to draw every figure as SVG and PNG. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report_internal.h"
#include "sebt/sebt.h"

const char *const sebt_report_figures[SEBT_REPORT_N_FIGURES] = {
    "throughput_vs_bars",
    "throughput_vs_combos",
    "speedup_over_reference",
    "thread_scaling",
};

typedef struct {
    double x, y;
} point;

static int cmp_point(const void *a, const void *b)
{
    double x = ((const point *)a)->x, y = ((const point *)b)->x;
    return (x > y) - (x < y);
}

/* Points of one line of one figure, for one backend. */
static size_t collect(const sebt_bench_set *set, int figure, const char *backend, point *pts)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n_runs; i++) {
        const sebt_bench_run *r = &set->runs[i];
        if (r->status != SEBT_RUN_OK || strcmp(r->backend, backend) != 0)
            continue;
        double x = NAN, y = NAN;
        if (figure == 0 && strcmp(r->group, "sweep_bars") == 0) {
            x = (double)r->bars;
            y = r->bar_combos_per_s;
        } else if (figure == 1 && strcmp(r->group, "sweep_combos") == 0) {
            x = (double)r->combos;
            y = r->combos_per_s;
        } else if (figure == 2 && (strcmp(r->group, "sweep_bars") == 0 || strcmp(r->group, "sweep_combos") == 0) &&
                   strcmp(backend, "reference") != 0) {
            const sebt_bench_run *ref = sebt_bench_find(set, r->group, "reference", r->bars, r->combos, r->threads);
            if (ref && ref->status == SEBT_RUN_OK && r->seconds > 0) {
                x = (double)r->bars * (double)r->combos;
                y = ref->seconds / r->seconds;
            }
        } else if (figure == 3 && strcmp(r->group, "threads") == 0) {
            const sebt_bench_run *one = sebt_bench_find(set, "threads", backend, r->bars, r->combos, 1);
            if (one && one->status == SEBT_RUN_OK && r->seconds > 0) {
                x = r->threads;
                y = one->seconds / r->seconds;
            }
        }
        if (isfinite(x) && isfinite(y) && x > 0 && y > 0) {
            /* The same x from both sweeps (figure 2): keep the first. */
            bool dup = false;
            for (size_t k = 0; k < n; k++)
                dup |= pts[k].x == x;
            if (!dup)
                pts[n++] = (point){ x, y };
        }
    }
    qsort(pts, n, sizeof *pts, cmp_point);
    return n;
}

typedef struct {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    bool logx, logy;
    bool ideal_line;       /* y = x, for thread scaling */
} figure_style;

static const figure_style styles[SEBT_REPORT_N_FIGURES] = {
    { "Throughput vs series length (one sweep of a fixed combo count per backend)",
      "bars in the series (log scale)", "bar-combos per second (log scale)", true, true, false },
    { "Throughput vs sweep size (the bundled 15m series)",
      "combos in the sweep (log scale)", "backtests (combos) per second (log scale)", true, true, false },
    { "Speed-up over the reference on the same sweep",
      "work per sweep, bars x combos (log scale)", "speed-up over reference (x, log scale)", true, true, false },
    { "Thread scaling of one sweep",
      "threads", "speed-up over 1 thread (x)", false, false, true },
};

static sebt_status io_fail(sebt_error *err, const char *what, const char *path)
{
    return sebt_fail(err, SEBT_ERR_IO, "cannot %s %s: %s", what, path, strerror(errno));
}

/* The backends that appear in the runs, reference first. */
size_t sebt_report_backends(const sebt_bench_set *set, const char **names, size_t max)
{
    static const char *const order[] = { "reference", "fast_cpu", "cuda" };
    size_t n = 0;
    for (size_t k = 0; k < 3 && n < max; k++)
        for (size_t i = 0; i < set->n_runs; i++)
            if (strcmp(set->runs[i].backend, order[k]) == 0) {
                names[n++] = order[k];
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

/* Backend names reach the script inside single quotes: keep them tame. */
static bool tame(const char *s)
{
    for (; *s; s++)
        if (!(( *s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == ':'))
            return false;
    return true;
}

static void file_safe(const char *s, char *out, size_t size)
{
    size_t k = 0;
    for (; *s && k + 1 < size; s++)
        out[k++] = (*s == ':' ) ? '-' : *s;
    out[k] = '\0';
}

static sebt_status write_figure(FILE *gp, const sebt_bench_set *set, int fig, const char *dir,
                                sebt_error *err)
{
    const figure_style *st = &styles[fig];
    const char *backends[16];
    size_t nb = sebt_report_backends(set, backends, 16);
    point *pts = malloc((set->n_runs + 1) * sizeof *pts);
    if (!pts)
        return sebt_fail(err, SEBT_ERR_NOMEM, "report: out of memory");

    fprintf(gp, "\n# ---- %s\nreset\n", sebt_report_figures[fig]);
    fprintf(gp, "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\n", st->title, st->xlabel, st->ylabel);
    fprintf(gp, "set grid\nset key top left box opaque\nset border 3\nset tics nomirror\n");
    if (st->logx)
        fprintf(gp, "set logscale x\nset format x '%%.0s%%c'\n");
    if (st->logy)
        fprintf(gp, "set logscale y\nset format y '%%.0s%%c'\n");
    if (fig == 2)
        fprintf(gp, "set format y '%%g'\n");

    char plot[8192];
    size_t used = (size_t)snprintf(plot, sizeof plot, "plot ");
    size_t lines = 0;
    double max_x = 1;
    for (size_t b = 0; b < nb; b++) {
        if (!tame(backends[b]))
            continue;
        size_t n = collect(set, fig, backends[b], pts);
        if (n == 0)
            continue;
        char safe[64], rel[256], path[4096];
        file_safe(backends[b], safe, sizeof safe);
        snprintf(rel, sizeof rel, "gnuplot/%s.%s.dat", sebt_report_figures[fig], safe);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        FILE *f = fopen(path, "w");
        if (!f) {
            free(pts);
            return io_fail(err, "write", path);
        }
        fprintf(f, "# %s: %s\n# x: %s\n# y: %s\n", sebt_report_figures[fig], backends[b], st->xlabel, st->ylabel);
        for (size_t k = 0; k < n; k++) {
            fprintf(f, "%.17g %.17g\n", pts[k].x, pts[k].y);
            if (pts[k].x > max_x)
                max_x = pts[k].x;
        }
        if (fclose(f) != 0) {
            free(pts);
            return io_fail(err, "write", path);
        }
        if (used < sizeof plot)
            used += (size_t)snprintf(plot + used, sizeof plot - used,
                                     "%s'%s' using 1:2 with linespoints lw 2 pt %zu ps 1.2 title '%s'",
                                     lines ? ", \\\n     " : "", rel, 5 + 2 * (b % 4), backends[b]);
        lines++;
    }
    free(pts);
    if (lines > 0 && st->ideal_line && used < sizeof plot) {
        fprintf(gp, "set xrange [0.8:%g]\nset yrange [0:*]\n", max_x * 1.1);
        used += (size_t)snprintf(plot + used, sizeof plot - used,
                                 ", \\\n     x with lines dt 2 lc rgb 'gray40' title 'ideal (linear)'");
    }
    if (used >= sizeof plot)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "report: the plot command of %s is too long",
                         sebt_report_figures[fig]);
    if (lines == 0) {
        /* An empty figure says why rather than vanishing from the report. */
        fprintf(gp, "unset logscale\nset xrange [0:1]\nset yrange [0:1]\nunset key\n"
                    "set label 1 'no timed run answers this question (see the table)' at graph 0.5,0.5 center\n");
        snprintf(plot, sizeof plot, "plot 2 notitle");
    }
    fprintf(gp, "set terminal svg size 900,540 dynamic noenhanced font 'sans,13' background rgb 'white'\n"
                "set output '%s.svg'\n%s\nset output\n", sebt_report_figures[fig], plot);
    fprintf(gp, "set terminal @pngterm size 900,540 noenhanced\nset output '%s.png'\nreplot\nset output\n",
            sebt_report_figures[fig]);
    return SEBT_OK;
}

static sebt_status run_gnuplot(const char *gnuplot, const char *dir, sebt_error *err)
{
    char log_path[4096];
    snprintf(log_path, sizeof log_path, "%s/gnuplot/gnuplot.log", dir);
    pid_t pid = fork();
    if (pid < 0)
        return sebt_fail(err, SEBT_ERR_IO, "cannot start %s: %s", gnuplot, strerror(errno));
    if (pid == 0) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        if (chdir(dir) != 0)
            _exit(126);
        execlp(gnuplot, gnuplot, "gnuplot/figures.gp", (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return sebt_fail(err, SEBT_ERR_IO, "waiting for %s: %s", gnuplot, strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return sebt_fail(err, SEBT_ERR_UNAVAILABLE,
                         "gnuplot is needed for the figures and '%s' cannot be run "
                         "(apt-get install gnuplot-nox, or set SEBT_GNUPLOT)", gnuplot);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return sebt_fail(err, SEBT_ERR_INTERNAL, "gnuplot failed on %s/gnuplot/figures.gp: see %s", dir,
                         log_path);
    return SEBT_OK;
}

sebt_status sebt_report_figures_write(const sebt_bench_set *set, const char *dir, const char *gnuplot,
                                      sebt_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gnuplot", dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return io_fail(err, "create", path);
    snprintf(path, sizeof path, "%s/gnuplot/figures.gp", dir);
    FILE *gp = fopen(path, "w");
    if (!gp)
        return io_fail(err, "write", path);
    fprintf(gp, "# The report's figures. Run from the report folder: gnuplot gnuplot/figures.gp\n"
                "# pngcairo draws smoother PNGs; gnuplot-nox may only have libgd's png.\n"
                "pngterm = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'\n");
    sebt_status st = SEBT_OK;
    for (int fig = 0; fig < SEBT_REPORT_N_FIGURES && st == SEBT_OK; fig++)
        st = write_figure(gp, set, fig, dir, err);
    if (fclose(gp) != 0 && st == SEBT_OK)
        st = io_fail(err, "write", path);
    if (st != SEBT_OK)
        return st;
    st = run_gnuplot(gnuplot, dir, err);
    if (st != SEBT_OK)
        return st;
    for (int fig = 0; fig < SEBT_REPORT_N_FIGURES; fig++) {
        const char *ext[2] = { "svg", "png" };
        for (int e = 0; e < 2; e++) {
            struct stat sb;
            snprintf(path, sizeof path, "%s/%s.%s", dir, sebt_report_figures[fig], ext[e]);
            if (stat(path, &sb) != 0 || sb.st_size == 0)
                return sebt_fail(err, SEBT_ERR_INTERNAL, "gnuplot did not draw %s: see %s/gnuplot/gnuplot.log",
                                 path, dir);
        }
    }
    return SEBT_OK;
}
