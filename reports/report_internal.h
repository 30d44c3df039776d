/* Shared between the report's own files; not used outside reports/. */
#ifndef SEBT_REPORTS_INTERNAL_H
#define SEBT_REPORTS_INTERNAL_H

#include "report.h"
#include "sebt/outfile.h"

/* Draws every figure into dir (SVG and PNG) through gnuplot. */
sebt_status sebt_report_figures_write(const sebt_bench_set *set, const char *dir, const char *gnuplot,
                                      const char *history, const sebt_big_sweeps *bs, sebt_error *err);
/* The backends that appear in the runs (the loader excluded), reference
 * first, then fast_cpu, cuda, then any other in order of appearance. */
size_t sebt_report_backends(const sebt_bench_set *set, const char **names, size_t max);

/* Whether a figure (0 .. SEBT_REPORT_N_FIGURES-1) shows points measured
 * under load, and *why (how many, how busy); the history figure rings its
 * loaded points instead and is never flagged whole. */
bool sebt_report_figure_loaded(const sebt_bench_set *set, int fig, char *why, size_t size);

/* Ascending order of doubles, for qsort. */
int sebt_report_cmp_double(const void *a, const void *b);
/* The median of v[0..n-1], n >= 1; sorts v. */
double sebt_report_median(double *v, size_t n);

/* Opens dir/name, atomically as every file sebt writes (sebt/outfile.h). */
sebt_status sebt_report_open_in(sebt_outfile *o, const char *dir, const char *name, sebt_error *err);

#endif
