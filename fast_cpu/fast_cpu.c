/* PLACEHOLDER: replaced by the reference implementation. */
#include <stdio.h>
#include "sebt/backends.h"
static sebt_status todo_features(const sebt_backend *b, const sebt_series *s, const sebt_params *p,
                                 sebt_features *out, sebt_error *err)
{ (void)b; (void)s; (void)p; (void)out; err->code = SEBT_ERR_UNAVAILABLE; snprintf(err->msg, sizeof err->msg, "todo"); return err->code; }
static sebt_status todo_batch(const sebt_backend *b, const sebt_series *s, const sebt_params *c, size_t n,
                              const sebt_batch_opts *o, sebt_result *r, sebt_error *err)
{ (void)b; (void)s; (void)c; (void)n; (void)o; (void)r; err->code = SEBT_ERR_UNAVAILABLE; snprintf(err->msg, sizeof err->msg, "todo"); return err->code; }
const sebt_backend sebt_fast_cpu_backend = { "fast_cpu", "todo", { SEBT_CONTRACT_EXACT, 0 }, todo_features, todo_batch, NULL };
