/* Pictures of a backtest and of a sweep (core/plot.c): what is drawn is
 * computed here and written as one self-contained gnuplot script (the data
 * inline), which the caller runs with gnuplot (`sebt plot`, the Python
 * package's sebt.plot_equity and sebt.plot_heatmap).
 *
 * The equity curve is the cumulative pnl of the trades at their exits, its
 * drawdown SPEC §7's (cumulative pnl less its running maximum, the first
 * trade's value the first peak), so the deepest point of the drawn
 * drawdown is the combo's max_dd. The heatmap shows one metric over two
 * parameters of a sweep: each cell holds the best row (higher is better,
 * NaN last, ties by combo) among the rows with that pair of values, so the
 * parameters not on the axes are at their best unless the caller kept
 * only the rows where they are fixed. */
#ifndef SEBT_PLOT_H
#define SEBT_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SEBT_PLOT_PNG = 0, SEBT_PLOT_SVG = 1 } sebt_plot_format;

typedef struct {
    sebt_plot_format format;
    int width, height;       /* pixels; 0: 1200 x 800 */
    const char *output;      /* the file gnuplot writes */
    const char *title;       /* NULL: one made from what is drawn */
} sebt_plot_opts;

/* The equity (cumulative pnl) and drawdown after each of r's n_trades
 * trades, into equity[] and drawdown[] (n_trades each); the drawdown's
 * minimum is sebt_trades_metrics's max_dd (core/metrics.c). */
void sebt_equity_curve(const sebt_result *r, double *equity, double *drawdown);

/* The gnuplot script of one combo's equity curve (its trades marked at
 * their exits by exit reason) over its drawdown. r must hold its trades.
 * *script is malloc'd (free it), NUL-terminated, *len bytes. */
sebt_status sebt_plot_equity_script(const sebt_series *s, const sebt_params *p, const sebt_result *r,
                                    const sebt_plot_opts *o, char **script, size_t *len, sebt_error *err);

/* What a cell shows of its rows' metric. best: the highest (NaN last, ties
 * by combo). The others leave out the rows whose metric is NaN (a metric
 * undefined for that combo, as sharpe with fewer than 2 trades) and are
 * NaN when none is left; of the m values v sorted increasing (v[0] ..
 * v[m-1]), the quantile p is at h = (m - 1) * p, lo = floor(h):
 * v[lo] + (h - lo) * (v[lo + 1] - v[lo]), or v[lo] when h is whole
 * (linear interpolation between order statistics, numpy's default
 * "linear"); median is p = 0.5, q25 p = 0.25, q75 p = 0.75; mean is the
 * sum in row order divided by m. */
typedef enum {
    SEBT_HEATMAP_BEST = 0,
    SEBT_HEATMAP_MEDIAN = 1,
    SEBT_HEATMAP_MEAN = 2,
    SEBT_HEATMAP_Q25 = 3,
    SEBT_HEATMAP_Q75 = 4,
} sebt_heatmap_agg;
#define SEBT_HEATMAP_AGGS 5

/* "best", "median", "mean", "q25", "q75"; NULL out of range. */
const char *sebt_heatmap_agg_name(int agg);

/* A metric over two axes. Cell (i, j) is x[i], y[j]: value[j * nx + i]
 * (the aggregate agg of its rows), NaN where no row has that pair or none
 * has a value; combo the cell's best row's combo whatever the aggregate
 * (UINT64_MAX where none), rows how many rows the cell had, counted how
 * many of them had a metric that is not NaN. */
typedef struct {
    size_t nx, ny;
    double *x, *y;           /* the distinct values, increasing */
    double *value;
    uint64_t *combo;
    size_t *rows;
    size_t best;             /* the cell of the highest value, nx * ny when every cell is empty or NaN */
    int agg;                 /* a sebt_heatmap_agg */
    size_t *counted;
} sebt_heatmap;

/* Most distinct values on an axis: a heatmap over a continuous column is
 * not a picture anyone can read. */
#define SEBT_HEATMAP_MAX_AXIS 400

/* From n rows: x[k], y[k], metric[k], combo[k] (NULL: k). Errors:
 * SEBT_ERR_USAGE (no rows, an axis with a NaN or too many values),
 * SEBT_ERR_NOMEM. Free with sebt_heatmap_free. */
sebt_status sebt_heatmap_make(const double *x, const double *y, const double *metric, const uint64_t *combo,
                              size_t n, sebt_heatmap *out, sebt_error *err);
/* The same with each cell's aggregate agg (sebt_heatmap_make: best). */
sebt_status sebt_heatmap_make_agg(const double *x, const double *y, const double *metric, const uint64_t *combo,
                                  size_t n, int agg, sebt_heatmap *out, sebt_error *err);
void sebt_heatmap_free(sebt_heatmap *h);

/* The gnuplot script of a heatmap; the names label the axes and the
 * colour bar; fixed (may be NULL) says in the subtitle what the other
 * parameters are ("vol_z=2 use_stop=true", or NULL: "at their best"). */
sebt_status sebt_plot_heatmap_script(const sebt_heatmap *h, const char *x_name, const char *y_name,
                                     const char *metric_name, const char *fixed, const sebt_plot_opts *o,
                                     char **script, size_t *len, sebt_error *err);
/* The same, where (may be NULL) the condition the rows met before they
 * were aggregated, said in the title beside fixed. The title and the
 * colour bar name the aggregate (h->agg). */
sebt_status sebt_plot_heatmap_script_ex(const sebt_heatmap *h, const char *x_name, const char *y_name,
                                        const char *metric_name, const char *fixed, const char *where,
                                        const sebt_plot_opts *o, char **script, size_t *len, sebt_error *err);

/* Reads columns of a sweep's output (`sebt sweep` CSV or npy) by name:
 * cols[k] (malloc'd, *n_rows values; booleans as 0/1) for names[k], 1 to
 * SEBT_SWEEP_READ_MAX_NAMES of them.
 * Errors name the file, the line or the column. */
#define SEBT_SWEEP_READ_MAX_NAMES 64
sebt_status sebt_sweep_columns_read(const char *path, const char *const *names, size_t n_names, double **cols,
                                    size_t *n_rows, sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
