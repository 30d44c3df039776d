/* Internals of the fast_cpu backend (not public). */
#ifndef SEBT_FAST_CPU_INTERNAL_H
#define SEBT_FAST_CPU_INTERNAL_H

#include "combo_kernel.h"
#include "indicators.h"
#include "sebt/backends.h"
#include "sebt/sebt.h"


/* Memory for one batch of indicator keys (series columns and candidate
 * lists), unless SEBT_FAST_CPU_MEMORY_MB says otherwise. */
#define FAST_DEFAULT_BUDGET_MB 1024
/* Keys per batch at most, so the per-batch bookkeeping stays small. */
#define FAST_MAX_KEYS_PER_BATCH 4096
/* Combos handed to a thread at a time (neighbours sharing their signals):
 * the filtered signal list is built once per task, and a task writes its
 * own result slots once each; small enough to balance. */
#define FAST_TASK_COMBOS 32

typedef struct {
    sebt_k_market m;
    double *neg_high;
} fast_market;

void fast_tr_column(const sebt_series *s, double *out);
void fast_cloc_column(const sebt_series *s, double *out);
void fast_atr_range(const double *tr, size_t n, int32_t w, size_t from, size_t to, double *out);
void fast_valid_from_atr(const double *atr, size_t n, uint8_t *valid, int32_t *rank, int32_t *vbar,
                         int64_t *n_valid);
void fast_zscore_exact(const double *x, size_t n, int32_t w, double *out);
void fast_zscore_exact_at(const double *x, int32_t w, const int32_t *bars, size_t count, double *out);
int fast_z_refine(const double *x, size_t n, int32_t w, double *z, double pre, const double *cloc, double cmin,
                  const double *gate, double gate_min);
sebt_status fast_market_build(const sebt_series *s, fast_market *fm, sebt_error *err);
void fast_market_free(fast_market *fm);
size_t fast_memory_budget(void);

sebt_status fast_run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                           size_t n_combos, const sebt_batch_opts *opts, sebt_result *results,
                           sebt_error *err);

#endif
