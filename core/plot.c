/* Pictures (include/sebt/plot.h): the equity curve and drawdown of one
 * combo, the heatmap of a sweep's metric over two parameters, each as one
 * gnuplot script with its data inline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/number.h"
#include "sebt/plot.h"
#include "sebt/sebt.h"

/* ---- the script ---------------------------------------------------------- */

/* Every text that reaches gnuplot (titles, labels, names, file names) goes
 * through here, so none of it is ever read as gnuplot syntax: inside a
 * single-quoted string gnuplot runs no backquote and reads no escape; a
 * quote is written twice. A line break cannot end the command: it is
 * written as the fixed string "\n" joined to the quoted parts ('a'."\n".'b'),
 * so it still breaks the line in the picture (docs/decisions.md). Other
 * control characters are drawn as a space. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\r' && s[1] == '\n')
            continue;
        if (c == '\n' || c == '\r')
            fputs("'.\"\\n\".'", f);
        else if (c == '\'')
            fputs("''", f);
        else
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('\'', f);
}

static void put_terminal(FILE *f, const sebt_plot_opts *o)
{
    int w = o->width > 0 ? o->width : 1200, h = o->height > 0 ? o->height : 800;
    /* noenhanced: parameter names have underscores, which enhanced text
     * would read as subscripts. pngcairo draws smoother PNGs; gnuplot-nox
     * may only have libgd's png. A browser draws the svg terminal's font
     * sizes as pixels, smaller than pngcairo's text of the same number:
     * the SVG's sizes are larger in number to look alike. */
    if (o->format == SEBT_PLOT_SVG)
        fprintf(f, "set terminal svg size %d,%d dynamic noenhanced font 'sans,13' background '#ffffff'\n", w, h);
    else
        fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                   "  set terminal pngcairo size %d,%d noenhanced font 'sans,10' background '#ffffff'\n"
                   "} else {\n"
                   "  set terminal png size %d,%d noenhanced background '#ffffff'\n"
                   "}\n", w, h, w, h);
    fputs("set output ", f);
    put_quoted(f, o->output);
    fputc('\n', f);
}

typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} script;

static sebt_status script_open(script *s, sebt_error *err)
{
    s->buf = NULL;
    s->len = 0;
    s->f = open_memstream(&s->buf, &s->len);
    return s->f ? SEBT_OK : sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a plot script");
}

static sebt_status script_close(script *s, char **out, size_t *len, sebt_error *err)
{
    bool bad = ferror(s->f) != 0;
    if (fclose(s->f) != 0 || bad) {
        free(s->buf);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a plot script");
    }
    *out = s->buf;
    *len = s->len;
    return SEBT_OK;
}

static sebt_status check_opts(const sebt_plot_opts *o, char **script_out, size_t *len, sebt_error *err)
{
    if (!o || !o->output || !o->output[0] || !script_out || !len)
        return sebt_fail(err, SEBT_ERR_USAGE, "a plot needs options with an output file and somewhere for the script");
    if (o->format != SEBT_PLOT_PNG && o->format != SEBT_PLOT_SVG)
        return sebt_fail(err, SEBT_ERR_USAGE, "plot format %d: expected png or svg", (int)o->format);
    if (o->width < 0 || o->height < 0 || o->width > 20000 || o->height > 20000)
        return sebt_fail(err, SEBT_ERR_USAGE, "plot size %dx%d: expected 1 to 20000 pixels a side", o->width,
                         o->height);
    return SEBT_OK;
}

/* Trades by exit reason: colour and point type, in sebt_exit_reason order. */
static const struct {
    const char *colour;
    int point;
} reason_style[SEBT_EXIT_KINDS] = {
    { "#8b0000", 11 },   /* stop_gap: dark red, down triangle */
    { "#d62728", 7 },    /* stop: red circle */
    { "#2ca02c", 9 },    /* tp: green up triangle */
    { "#7f7f7f", 5 },    /* time: grey square */
};

static void put_equity_title(FILE *f, const sebt_series *s, const sebt_params *p, const sebt_result *r,
                             const sebt_plot_opts *o)
{
    fputs("set multiplot layout 2,1 title ", f);
    if (o->title) {
        put_quoted(f, o->title);
    } else {
        char t[1024], v[64];
        size_t k = 0;
        const sebt_params def = sebt_params_default();
        for (int i = 0; i < SEBT_N_PARAMS; i++) {
            /* The parameters that differ from SPEC §2's defaults name the combo. */
            size_t off = sebt_param_table[i].offset, size = sebt_param_table[i].type == SEBT_PARAM_INT ? 4
                                                           : sebt_param_table[i].type == SEBT_PARAM_BOOL ? 1 : 8;
            if (memcmp((const char *)p + off, (const char *)&def + off, size) == 0)
                continue;
            sebt_params_format(p, i, v, sizeof v);
            int n = snprintf(t + k, sizeof t - k, "%s%s=%s", k ? " " : "", sebt_param_table[i].name, v);
            if (n < 0 || (size_t)n >= sizeof t - k)
                break;
            k += (size_t)n;
        }
        const sebt_metrics *m = &r->metrics;
        char head[1400];
        snprintf(head, sizeof head, "equity of %s (%zu bars): %lld trades, total pnl %.6g, max dd %.6g, sharpe %.4f",
                 k ? t : "the default combo", s->n, (long long)m->n, m->total_pnl, m->max_dd, m->sharpe);
        put_quoted(f, head);
    }
    fputc('\n', f);
}

sebt_status sebt_plot_equity_script(const sebt_series *s, const sebt_params *p, const sebt_result *r,
                                    const sebt_plot_opts *o, char **out, size_t *len, sebt_error *err)
{
    sebt_status st = check_opts(o, out, len, err);
    if (st != SEBT_OK)
        return st;
    if (!s || !p || !r || !s->n || (r->n_trades && !r->trades))
        return sebt_fail(err, SEBT_ERR_USAGE, "an equity plot needs the series and a result with its trades");
    double *eq = malloc((r->n_trades + 1) * sizeof *eq), *dd = malloc((r->n_trades + 1) * sizeof *dd);
    script sc;
    if (!eq || !dd || script_open(&sc, err) != SEBT_OK) {
        free(eq);
        free(dd);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for an equity plot of %zu trades", r->n_trades);
    }
    sebt_equity_curve(r, eq, dd);
    FILE *f = sc.f;
    fputs("# sebt plot equity: one combo's cumulative pnl at each trade's exit, and its drawdown (SPEC §7)\n", f);
    put_terminal(f, o);
    /* Times as epoch seconds (gnuplot's time axis); the curve starts flat
     * at the first bar and ends at the last. */
    /* Each exit as a step: the level before it, then after it, so the
     * line and the filled drawdown both change at the exit, not between. */
    fputs("$equity << EOD\n", f);
    fprintf(f, "%.3f 0 0\n", (double)s->ts[0] / 1000.0);
    for (size_t i = 0; i < r->n_trades; i++) {
        double t = (double)s->ts[r->trades[i].exit_index] / 1000.0;
        fprintf(f, "%.3f %.17g %.17g\n%.3f %.17g %.17g\n", t, i ? eq[i - 1] : 0.0, i ? dd[i - 1] : 0.0, t, eq[i],
                dd[i]);
    }
    fprintf(f, "%.3f %.17g %.17g\nEOD\n", (double)s->ts[s->n - 1] / 1000.0, r->n_trades ? eq[r->n_trades - 1] : 0.0,
            r->n_trades ? dd[r->n_trades - 1] : 0.0);
    size_t counts[SEBT_EXIT_KINDS] = { 0 };
    fputs("$trades << EOD\n", f);
    for (size_t i = 0; i < r->n_trades; i++) {
        unsigned reason = (unsigned)r->trades[i].reason;
        if (reason < SEBT_EXIT_KINDS)
            counts[reason]++;
        fprintf(f, "%.3f %.17g %u\n", (double)s->ts[r->trades[i].exit_index] / 1000.0, eq[i], reason);
    }
    fputs("EOD\n", f);
    free(eq);
    free(dd);

    put_equity_title(f, s, p, r, o);
    fputs("set xdata time\nset timefmt '%s'\nset format x '%Y-%m-%d'\nset grid lc rgb '#dddddd'\n"
          "set key top left opaque box lc rgb '#cccccc'\nset lmargin at screen 0.09\nset rmargin at screen 0.95\n"
          "set tmargin at screen 0.92\nset bmargin at screen 0.40\nset format x ''\n"
          "set ylabel 'cumulative pnl (price units)'\n", f);
    fputs("plot $equity using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'equity'", f);
    for (unsigned k = 0; k < SEBT_EXIT_KINDS; k++) {
        if (!counts[k])
            continue;
        fprintf(f, ", \\\n     $trades using 1:($3 == %u ? $2 : 1/0) with points pt %d ps 0.9 lc rgb '%s' "
                   "title '%s exit (%zu)'", k, reason_style[k].point, reason_style[k].colour,
                sebt_exit_reason_name((sebt_exit_reason)k), counts[k]);
    }
    fputs("\nset tmargin at screen 0.36\nset bmargin at screen 0.08\nset format x '%Y-%m-%d'\nset xlabel 'time (UTC)'\n"
          "set ylabel 'drawdown'\nset key bottom left\n", f);
    fprintf(f, "plot $equity using 1:3 with filledcurves y=0 lc rgb '#d62728' fs transparent solid 0.35 "
               "title 'drawdown (max %.6g)', $equity using 1:3 with lines lw 1 lc rgb '#d62728' notitle\n",
            r->metrics.max_dd);
    fputs("unset multiplot\nset output\n", f);
    return script_close(&sc, out, len, err);
}

/* ---- the heatmap ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The distinct values of v[0..n), increasing, into *out (*m of them). */
static sebt_status distinct(const double *v, size_t n, const char *axis, double **out, size_t *m, sebt_error *err)
{
    double *d = malloc(n * sizeof *d);
    if (!d)
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for the heatmap's %s axis", axis);
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i])) {
            free(d);
            return sebt_fail(err, SEBT_ERR_USAGE, "the heatmap's %s axis has a NaN in row %zu", axis, i);
        }
        d[i] = v[i] == 0 ? 0.0 : v[i];   /* -0 and 0 are one column */
    }
    qsort(d, n, sizeof *d, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || d[i] != d[k - 1])
            d[k++] = d[i];
    if (k > SEBT_HEATMAP_MAX_AXIS) {
        free(d);
        return sebt_fail(err, SEBT_ERR_USAGE, "the heatmap's %s axis has %zu distinct values, more than %d: "
                         "choose a parameter of the grid", axis, k, SEBT_HEATMAP_MAX_AXIS);
    }
    *out = d;
    *m = k;
    return SEBT_OK;
}

static size_t find(const double *d, size_t m, double v)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether value a of combo ca ranks before b of cb: higher first, NaN
 * last, ties by combo (sebt_rank_compare's order). */
static bool ranks_before(double a, uint64_t ca, double b, uint64_t cb)
{
    if (isnan(a) != isnan(b))
        return !isnan(a);
    if (!isnan(a) && a != b)
        return a > b;
    return ca < cb;
}

static const char *const agg_names[SEBT_HEATMAP_AGGS] = { "best", "median", "mean", "q25", "q75" };

const char *sebt_heatmap_agg_name(int agg)
{
    return agg >= 0 && agg < SEBT_HEATMAP_AGGS ? agg_names[agg] : NULL;
}

/* The quantile p of v[0..m) sorted increasing (sebt/plot.h). */
static double quantile(const double *v, size_t m, double p)
{
    double h = (double)(m - 1) * p;
    size_t lo = (size_t)h;
    double frac = h - (double)lo;
    return frac == 0 ? v[lo] : v[lo] + frac * (v[lo + 1] - v[lo]);
}

/* Each cell's aggregate over its rows with a value: the values gathered
 * cell by cell in row order (a counting sort), then summed or sorted. */
static sebt_status aggregate(sebt_heatmap *h, const size_t *cell_of, const double *metric, size_t n, sebt_error *err)
{
    size_t cells = h->nx * h->ny;
    size_t *start = calloc(cells + 1, sizeof *start);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!start || !v) {
        free(start);
        free(v);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a heatmap's aggregates over %zu rows", n);
    }
    for (size_t k = 0; k < n; k++)
        if (!isnan(metric[k]))
            start[cell_of[k] + 1]++;
    for (size_t c = 0; c < cells; c++) {
        h->counted[c] = start[c + 1];
        start[c + 1] += start[c];
    }
    for (size_t k = 0; k < n; k++)
        if (!isnan(metric[k]))
            v[start[cell_of[k]]++] = metric[k];
    /* start[c] is now the end of cell c's values; they begin at its
     * predecessor's end. */
    for (size_t c = 0; c < cells; c++) {
        size_t m = h->counted[c];
        double *cv = v + start[c] - m;
        if (m == 0) {
            h->value[c] = NAN;
            continue;
        }
        if (h->agg == SEBT_HEATMAP_MEAN) {
            double sum = 0;
            for (size_t i = 0; i < m; i++)
                sum += cv[i];
            h->value[c] = sum / (double)m;
            continue;
        }
        qsort(cv, m, sizeof *cv, cmp_double);
        double p = h->agg == SEBT_HEATMAP_MEDIAN ? 0.5 : h->agg == SEBT_HEATMAP_Q25 ? 0.25 : 0.75;
        h->value[c] = quantile(cv, m, p);
    }
    free(start);
    free(v);
    return SEBT_OK;
}

sebt_status sebt_heatmap_make(const double *x, const double *y, const double *metric, const uint64_t *combo,
                              size_t n, sebt_heatmap *h, sebt_error *err)
{
    return sebt_heatmap_make_agg(x, y, metric, combo, n, SEBT_HEATMAP_BEST, h, err);
}

sebt_status sebt_heatmap_make_agg(const double *x, const double *y, const double *metric, const uint64_t *combo,
                                  size_t n, int agg, sebt_heatmap *h, sebt_error *err)
{
    memset(h, 0, sizeof *h);
    if (!x || !y || !metric || n == 0)
        return sebt_fail(err, SEBT_ERR_USAGE, "a heatmap needs at least one row");
    if (!sebt_heatmap_agg_name(agg))
        return sebt_fail(err, SEBT_ERR_USAGE, "heatmap aggregate %d: expected best, median, mean, q25 or q75", agg);
    h->agg = agg;
    sebt_status st = distinct(x, n, "x", &h->x, &h->nx, err);
    if (st == SEBT_OK)
        st = distinct(y, n, "y", &h->y, &h->ny, err);
    if (st != SEBT_OK) {
        sebt_heatmap_free(h);
        return st;
    }
    size_t cells = h->nx * h->ny;
    h->value = malloc(cells * sizeof *h->value);
    h->combo = malloc(cells * sizeof *h->combo);
    h->rows = calloc(cells, sizeof *h->rows);
    h->counted = calloc(cells, sizeof *h->counted);
    size_t *cell_of = malloc(n * sizeof *cell_of);
    if (!h->value || !h->combo || !h->rows || !h->counted || !cell_of) {
        free(cell_of);
        sebt_heatmap_free(h);
        return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a heatmap of %zu cells", cells);
    }
    for (size_t c = 0; c < cells; c++) {
        h->value[c] = NAN;
        h->combo[c] = UINT64_MAX;
    }
    for (size_t k = 0; k < n; k++) {
        size_t c = cell_of[k] = find(h->y, h->ny, y[k]) * h->nx + find(h->x, h->nx, x[k]);
        uint64_t id = combo ? combo[k] : (uint64_t)k;
        h->counted[c] += !isnan(metric[k]);
        if (h->rows[c]++ == 0 || ranks_before(metric[k], id, h->value[c], h->combo[c])) {
            h->value[c] = metric[k];
            h->combo[c] = id;
        }
    }
    if (agg != SEBT_HEATMAP_BEST && (st = aggregate(h, cell_of, metric, n, err)) != SEBT_OK) {
        free(cell_of);
        sebt_heatmap_free(h);
        return st;
    }
    free(cell_of);
    h->best = cells;
    for (size_t c = 0; c < cells; c++)
        if (h->rows[c] && !isnan(h->value[c]) &&
            (h->best == cells || ranks_before(h->value[c], h->combo[c], h->value[h->best], h->combo[h->best])))
            h->best = c;
    return SEBT_OK;
}

void sebt_heatmap_free(sebt_heatmap *h)
{
    if (!h)
        return;
    free(h->x);
    free(h->y);
    free(h->value);
    free(h->combo);
    free(h->rows);
    free(h->counted);
    memset(h, 0, sizeof *h);
}

static void put_tics(FILE *f, const char *axis, const double *v, size_t m)
{
    /* At most ~25 labels, evenly spaced, so a long axis stays readable. */
    size_t step = m > 25 ? (m + 24) / 25 : 1;
    fprintf(f, "set %stics (", axis);
    for (size_t i = 0; i < m; i += step) {
        char t[SEBT_DOUBLE_CHARS];
        sebt_format_double(v[i], t);
        fprintf(f, "%s'%s' %zu", i ? ", " : "", t, i);
    }
    fputs(")\n", f);
}

sebt_status sebt_plot_heatmap_script(const sebt_heatmap *h, const char *x_name, const char *y_name,
                                     const char *metric_name, const char *fixed, const sebt_plot_opts *o,
                                     char **out, size_t *len, sebt_error *err)
{
    return sebt_plot_heatmap_script_ex(h, x_name, y_name, metric_name, fixed, NULL, o, out, len, err);
}

/* The default title: what each cell is, what chose the rows, and the
 * highest cell. A cell's best row flatters it (the highest of many noisy
 * figures); the title says which aggregate is drawn so no picture of a
 * median passes for one of the best, or the reverse. */
static void heatmap_title(const sebt_heatmap *h, const char *x_name, const char *y_name, const char *metric_name,
                          const char *fixed, const char *where, char *t, size_t size)
{
    const char *agg = sebt_heatmap_agg_name(h->agg);
    char chosen[1200] = "";
    size_t k = 0;
    if (fixed) {
        int n = snprintf(chosen, sizeof chosen, "%s fixed; ", fixed);
        k = n > 0 && (size_t)n < sizeof chosen ? (size_t)n : 0;
    }
    if (where)
        snprintf(chosen + k, sizeof chosen - k, "rows where %s; ", where);
    char cell[200];
    if (h->agg == SEBT_HEATMAP_BEST)
        snprintf(cell, sizeof cell, "each cell its best row: the other parameters at their best");
    else
        snprintf(cell, sizeof cell, "each cell the %s of its rows over the other parameters, NaN rows left out", agg);
    if (h->best >= h->nx * h->ny) {
        snprintf(t, size, "%s of %s over %s and %s (%s%s): no cell has a value", agg, metric_name, x_name, y_name,
                 chosen, cell);
        return;
    }
    char bx[SEBT_DOUBLE_CHARS], by[SEBT_DOUBLE_CHARS];
    sebt_format_double(h->x[h->best % h->nx], bx);
    sebt_format_double(h->y[h->best / h->nx], by);
    if (h->agg == SEBT_HEATMAP_BEST)
        snprintf(t, size, "best %s over %s and %s (%s%s)\nbest: %s %.6g at %s=%s %s=%s (combo %llu)", metric_name,
                 x_name, y_name, chosen, cell, metric_name, h->value[h->best], x_name, bx, y_name, by,
                 (unsigned long long)h->combo[h->best]);
    else
    {
        size_t m = h->counted ? h->counted[h->best] : h->rows[h->best];
        snprintf(t, size, "%s %s over %s and %s (%s%s)\nhighest %s: %.6g at %s=%s %s=%s (of %zu row%s)", agg,
                 metric_name, x_name, y_name, chosen, cell, agg, h->value[h->best], x_name, bx, y_name, by, m,
                 m == 1 ? "" : "s");
    }
}

sebt_status sebt_plot_heatmap_script_ex(const sebt_heatmap *h, const char *x_name, const char *y_name,
                                        const char *metric_name, const char *fixed, const char *where,
                                        const sebt_plot_opts *o, char **out, size_t *len, sebt_error *err)
{
    sebt_status st = check_opts(o, out, len, err);
    if (st != SEBT_OK)
        return st;
    if (!h || !h->nx || !h->ny || !x_name || !y_name || !metric_name || !sebt_heatmap_agg_name(h->agg))
        return sebt_fail(err, SEBT_ERR_USAGE, "a heatmap plot needs a heatmap and the names of its axes and metric");
    script sc;
    if (script_open(&sc, err) != SEBT_OK)
        return err->code;
    FILE *f = sc.f;
    fputs("# sebt plot heatmap: ", f);
    put_quoted(f, metric_name);
    fputs(" over ", f);
    put_quoted(f, x_name);
    fputs(" and ", f);
    put_quoted(f, y_name);
    fprintf(f, ", each cell's %s\n", sebt_heatmap_agg_name(h->agg));
    put_terminal(f, o);
    fputs("$map << EOD\n", f);
    for (size_t j = 0; j < h->ny; j++) {
        for (size_t i = 0; i < h->nx; i++) {
            double v = h->value[j * h->nx + i];
            if (isnan(v))
                fprintf(f, "%zu %zu NaN\n", i, j);
            else
                fprintf(f, "%zu %zu %.17g\n", i, j, v);
        }
        fputc('\n', f);
    }
    fputs("EOD\n", f);
    fputs("set title ", f);
    char t[2400];
    if (o->title)
        snprintf(t, sizeof t, "%s", o->title);
    else
        heatmap_title(h, x_name, y_name, metric_name, fixed, where, t, sizeof t);
    put_quoted(f, t);
    fputc('\n', f);
    fprintf(f, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", h->nx - 1, h->ny - 1);
    put_tics(f, "x", h->x, h->nx);
    put_tics(f, "y", h->y, h->ny);
    if (h->nx > 12)
        fputs("set xtics rotate by 45 right\n", f);
    fputs("set xlabel ", f);
    put_quoted(f, x_name);
    fputs("\nset ylabel ", f);
    put_quoted(f, y_name);
    fputs("\nset cblabel ", f);
    char cb[300];
    snprintf(cb, sizeof cb, "%s %s of the cell's rows", sebt_heatmap_agg_name(h->agg), metric_name);
    put_quoted(f, cb);
    /* A perceptually even palette (viridis' ends and middle). */
    fputs("\nset palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
          "set tics out nomirror\nset border lw 1\nunset key\n"
          "set style textbox opaque fillcolor rgb '#ffffff' noborder margins 1,1\n", f);
    if (h->best < h->nx * h->ny) {
        /* The best cell outlined, in front of the image. */
        double bi = (double)(h->best % h->nx), bj = (double)(h->best / h->nx);
        fprintf(f, "set object 1 rect from %.1f,%.1f to %.1f,%.1f front fillstyle empty border lc rgb '#ff0000' lw 3\n",
                bi - 0.5, bj - 0.5, bi + 0.5, bj + 0.5);
    }
    /* SVG: each cell a rectangle (an embedded bitmap would be smoothed
     * when scaled); PNG: one bitmap (rectangles leave seams between cells). */
    if (h->nx == 1 || h->ny == 1)   /* gnuplot's image draws nothing one cell wide or high */
        fputs("plot $map using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette", f);
    else
        fprintf(f, "plot $map using 1:2:3 with image%s", o->format == SEBT_PLOT_SVG ? " pixels" : "");
    if (h->nx * h->ny <= 400)
        fprintf(f, ", \\\n     $map using 1:2:(sprintf('%%.3g', $3)) with labels boxed font ',%d' tc rgb '#000000'",
                o->format == SEBT_PLOT_SVG ? 12 : 9);
    fputs("\nset output\n", f);
    return script_close(&sc, out, len, err);
}
