/* The cuda backend's host half (gpu/cuda_prepare.c) and its way of calling
 * the shared per-combo code, run on the host: no trade or R buffer on the
 * metrics pass (so the sharpe ratio comes from simulating the combo a second
 * time), then a pass with a buffer sized from the first pass's trade count.
 * Exactly what a device thread does. It must give fast_cpu's bits on every
 * combo: that is the reason cuda's contract is fast_cpu's. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_plan.h"
#include "sweep_fixture.h"

static void expect_same_result(const sebt_result *a, const sebt_result *b, size_t i)
{
    cr_assert_eq(memcmp(&a->metrics, &b->metrics, sizeof a->metrics), 0,
                 "combo %zu: metrics differ: n %lld/%lld pnl %.17g/%.17g sharpe %.17g/%.17g", i,
                 (long long)a->metrics.n, (long long)b->metrics.n, a->metrics.total_pnl, b->metrics.total_pnl,
                 a->metrics.sharpe, b->metrics.sharpe);
    cr_assert_eq(a->n_trades, b->n_trades, "combo %zu", i);
    cr_assert_eq(a->valid_bars, b->valid_bars, "combo %zu", i);
    cr_assert_eq(a->open_at_end.open, b->open_at_end.open, "combo %zu", i);
    if (a->open_at_end.open) {
        cr_assert_eq(a->open_at_end.entry_index, b->open_at_end.entry_index, "combo %zu", i);
        cr_assert_eq(memcmp(&a->open_at_end.stop, &b->open_at_end.stop, sizeof(double)), 0, "combo %zu", i);
        cr_assert_eq(a->open_at_end.bars_held, b->open_at_end.bars_held, "combo %zu", i);
    }
}

static void expect_same_trades(const sebt_trade *a, const sebt_trade *b, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++) {
        cr_assert_eq(a[k].signal_index, b[k].signal_index, "combo %zu trade %zu", i, k);
        cr_assert_eq(a[k].exit_index, b[k].exit_index, "combo %zu trade %zu", i, k);
        cr_assert_eq(a[k].reason, b[k].reason, "combo %zu trade %zu", i, k);
        cr_assert_eq(a[k].bars_held, b[k].bars_held, "combo %zu trade %zu", i, k);
        cr_assert_eq(memcmp(&a[k].entry_price, &b[k].entry_price, 7 * sizeof(double)), 0,
                     "combo %zu trade %zu: prices differ", i, k);
    }
}

/* Keys in batches of `per_batch`, to cover the batch boundaries. */
static void run_host_path(const sebt_series *s, const sebt_params *combos, size_t per_batch, sebt_result *out)
{
    cuda_plan plan;
    sebt_error err = { 0 };
    cr_assert_eq(cuda_plan_build(s, combos, FIXTURE_COMBOS, &plan, &err), SEBT_OK, "%s", err.msg);
    cr_assert_gt(plan.n_groups, 8, "the fixture should span many keys");
    for (size_t g0 = 0; g0 < plan.n_groups; g0 += per_batch) {
        size_t g1 = g0 + per_batch < plan.n_groups ? g0 + per_batch : plan.n_groups;
        cuda_batch b;
        cr_assert_eq(cuda_batch_build(&plan, s, g0, g1, 2, &b, &err), SEBT_OK, "%s", err.msg);
        for (size_t g = g0; g < g1; g++) {
            const cuda_group *gr = &plan.groups[g];
            int a = b.atr_slot[g - g0];
            sebt_k_valid v = { b.valid[a], b.rank[a], b.vbar[a], b.n_valid[a] };
            for (size_t q = gr->first; q < gr->first + gr->count; q++) {
                size_t i = plan.order[q];
                sebt_result *r = &out[i];
                memset(r, 0, sizeof *r);
                sebt_k_run_combo(&plan.fm.m, &v, &b.cands[g - g0], &combos[i], NULL, 0, NULL, 0, r);
                if (r->n_trades) {
                    sebt_result again;
                    memset(&again, 0, sizeof again);
                    r->trades = malloc(r->n_trades * sizeof *r->trades);
                    sebt_k_run_combo(&plan.fm.m, &v, &b.cands[g - g0], &combos[i], r->trades,
                                     (int64_t)r->n_trades, NULL, 0, &again);
                    expect_same_result(r, &again, i);
                }
            }
        }
        cuda_batch_free(&b);
    }
    cuda_plan_free(&plan);
}

Test(host_path, same_bits_as_fast_cpu)
{
    sebt_series s;
    fixture_series(&s);
    sebt_params combos[FIXTURE_COMBOS];
    fixture_combos(combos);

    const sebt_backend *fast;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK);
    sebt_result rf[FIXTURE_COMBOS], rc[FIXTURE_COMBOS];
    memset(rf, 0, sizeof rf);
    sebt_batch_opts opts = { .threads = 2, .want_trades = true };
    cr_assert_eq(fast->run_batch(fast, &s, combos, FIXTURE_COMBOS, &opts, rf, &err), SEBT_OK, "%s", err.msg);

    size_t sizes[] = { 1, 3, 1000 };
    for (size_t k = 0; k < 3; k++) {
        run_host_path(&s, combos, sizes[k], rc);
        size_t with_sharpe = 0, open = 0;
        for (size_t i = 0; i < FIXTURE_COMBOS; i++) {
            expect_same_result(&rf[i], &rc[i], i);
            expect_same_trades(rf[i].trades, rc[i].trades, rf[i].n_trades, i);
            with_sharpe += rc[i].metrics.n >= 2 && rc[i].metrics.sharpe != 0.0;
            open += rc[i].open_at_end.open;
        }
        /* Otherwise the second-pass sharpe would go unchecked. */
        cr_assert_gt(with_sharpe, FIXTURE_COMBOS / 2, "only %zu combos with a sharpe ratio", with_sharpe);
        sebt_results_free(rc, FIXTURE_COMBOS);
        (void)open;
    }
    sebt_results_free(rf, FIXTURE_COMBOS);
    sebt_series_free(&s);
}
