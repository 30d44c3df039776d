/* Internals of the reference backend: SPEC §1-7 written literally, one
 * small file per rule. Nothing here is public; the only thing the rest of
 * sebt sees is sebt_reference_backend (include/sebt/backends.h).
 *
 * The reference depends on the public types alone: it calls no core
 * function, so an error is filled in here with snprintf (sebt_ref_fail). */
#ifndef SEBT_REF_H
#define SEBT_REF_H

#include "sebt/backend.h"
#include "sebt/types.h"

/* SPEC §3 indicator columns, n bars each, NaN where undefined. */
void sebt_ref_ema(const double *close, size_t n, int32_t span, double *out);
void sebt_ref_tr(const sebt_series *s, double *out);
void sebt_ref_atr(const double *tr, size_t n, int32_t w, double *out);
void sebt_ref_zscore(const double *x, size_t n, int32_t w, double *out);
void sebt_ref_cloc(const sebt_series *s, double *out);

/* SPEC §3-5 for one combo into caller-owned columns of s->n entries. */
void sebt_ref_compute(const sebt_series *s, const sebt_params *p, sebt_features *f);

/* SPEC §6 over the valid bars; trades are malloc'd into r (NULL if none). */
sebt_status sebt_ref_simulate(const sebt_series *s, const sebt_features *f,
                              const sebt_params *p, sebt_result *r, sebt_error *err);

/* SPEC §7 over r->trades[0 .. r->n_trades). */
void sebt_ref_metrics(const sebt_trade *trades, size_t n, sebt_metrics *m);

/* SPEC §2, the message prefixed with "combo <index>: ". */
sebt_status sebt_ref_check_params(const sebt_params *p, size_t index, sebt_error *err);
/* SPEC §1: increasing ts; each bar present or missing. */
sebt_status sebt_ref_check_series(const sebt_series *s, sebt_error *err);

sebt_status sebt_ref_fail(sebt_error *err, sebt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
