/* Helpers for fast_cpu tests: compare a backend's results with the
 * reference's under its contract (SPEC §8: exact means the same bits), and
 * build small series. */
#ifndef SEBT_FAST_PARITY_UTIL_H
#define SEBT_FAST_PARITY_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/backends.h"
#include "sebt/sebt.h"

static inline int near(double a, double b, double tol)
{
    if (tol == 0.0)   /* an exact contract: the same bits */
        return memcmp(&a, &b, sizeof a) == 0;
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
    return fabs(a - b) <= tol * scale;
}

#define ASSERT_NEAR(a, b, tol, what, ...)                                                        \
    cr_assert(near((a), (b), (tol)), "%s: %.17g vs %.17g (" what ")", #a, (double)(a), (double)(b), \
              __VA_ARGS__)

/* Same trades (indices, reasons, bars exactly; prices within tol), same
 * open position, metrics within tol. */
static inline void assert_same_result(const sebt_result *want, const sebt_result *got, double tol,
                                      size_t combo)
{
    cr_assert_eq(want->valid_bars, got->valid_bars, "combo %zu: valid_bars", combo);
    cr_assert_eq(want->n_trades, got->n_trades, "combo %zu: %zu trades in the reference, %zu here", combo,
                 want->n_trades, got->n_trades);
    for (size_t k = 0; k < want->n_trades && want->trades && got->trades; k++) {
        const sebt_trade *a = &want->trades[k], *b = &got->trades[k];
        cr_assert_eq(a->signal_index, b->signal_index, "combo %zu trade %zu: signal", combo, k);
        cr_assert_eq(a->entry_index, b->entry_index, "combo %zu trade %zu: entry", combo, k);
        cr_assert_eq(a->exit_index, b->exit_index, "combo %zu trade %zu: exit %lld vs %lld", combo, k,
                     (long long)a->exit_index, (long long)b->exit_index);
        cr_assert_eq(a->reason, b->reason, "combo %zu trade %zu: reason", combo, k);
        cr_assert_eq(a->bars_held, b->bars_held, "combo %zu trade %zu: bars", combo, k);
        ASSERT_NEAR(a->entry_price, b->entry_price, tol, "combo %zu trade %zu", combo, k);
        ASSERT_NEAR(a->exit_price, b->exit_price, tol, "combo %zu trade %zu", combo, k);
        ASSERT_NEAR(a->stop, b->stop, tol, "combo %zu trade %zu", combo, k);
        ASSERT_NEAR(a->tp, b->tp, tol, "combo %zu trade %zu", combo, k);
        ASSERT_NEAR(a->risk, b->risk, tol, "combo %zu trade %zu", combo, k);
        ASSERT_NEAR(a->pnl, b->pnl, tol, "combo %zu trade %zu", combo, k);
        ASSERT_NEAR(a->r, b->r, tol, "combo %zu trade %zu", combo, k);
    }
    const sebt_open_position *oa = &want->open_at_end, *ob = &got->open_at_end;
    cr_assert_eq(oa->open, ob->open, "combo %zu: open_at_end", combo);
    if (oa->open) {
        cr_assert_eq(oa->signal_index, ob->signal_index, "combo %zu: open signal", combo);
        cr_assert_eq(oa->entry_index, ob->entry_index, "combo %zu: open entry", combo);
        cr_assert_eq(oa->bars_held, ob->bars_held, "combo %zu: open bars", combo);
        ASSERT_NEAR(oa->stop, ob->stop, tol, "combo %zu open", combo);
    }
    const sebt_metrics *ma = &want->metrics, *mb = &got->metrics;
    cr_assert_eq(ma->n, mb->n, "combo %zu: metrics n", combo);
    ASSERT_NEAR(ma->win_rate, mb->win_rate, tol, "combo %zu", combo);
    ASSERT_NEAR(ma->avg_r, mb->avg_r, tol, "combo %zu", combo);
    ASSERT_NEAR(ma->total_pnl, mb->total_pnl, tol, "combo %zu", combo);
    ASSERT_NEAR(ma->max_dd, mb->max_dd, tol, "combo %zu", combo);
    ASSERT_NEAR(ma->sharpe, mb->sharpe, tol, "combo %zu", combo);
}

/* Runs both backends over the combos, with trades, and compares. Returns
 * the total number of trades seen (so a test can insist it tested some). */
static inline size_t check_against_reference(const sebt_series *s, const sebt_params *combos, size_t n,
                                             int threads)
{
    const sebt_backend *ref = &sebt_reference_backend, *fast = &sebt_fast_cpu_backend;
    sebt_result *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    cr_assert(want && got);
    sebt_batch_opts opts = { .threads = threads, .want_trades = true };
    sebt_error err = { 0 };
    cr_assert_eq(ref->run_batch(ref, s, combos, n, &opts, want, &err), SEBT_OK, "reference: %s", err.msg);
    cr_assert_eq(fast->run_batch(fast, s, combos, n, &opts, got, &err), SEBT_OK, "fast_cpu: %s", err.msg);
    size_t trades = 0;
    for (size_t i = 0; i < n; i++) {
        assert_same_result(&want[i], &got[i], fast->contract.tol, i);
        trades += want[i].n_trades;
    }
    sebt_results_free(want, n);
    sebt_results_free(got, n);
    free(want);
    free(got);
    return trades;
}

/* Bit-for-bit equality of two result sets (thread counts, batch sizes). */
static inline void assert_identical_results(const sebt_result *a, const sebt_result *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(memcmp(&a[i].metrics, &b[i].metrics, sizeof a[i].metrics), 0, "combo %zu: metrics", i);
        cr_assert_eq(memcmp(&a[i].open_at_end, &b[i].open_at_end, sizeof a[i].open_at_end), 0,
                     "combo %zu: open_at_end", i);
        cr_assert_eq(a[i].valid_bars, b[i].valid_bars, "combo %zu", i);
        cr_assert_eq(a[i].n_trades, b[i].n_trades, "combo %zu", i);
        if (a[i].trades && b[i].trades)
            cr_assert_eq(memcmp(a[i].trades, b[i].trades, a[i].n_trades * sizeof *a[i].trades), 0,
                         "combo %zu: trades", i);
    }
}

/* A deterministic random walk (xorshift), holes where hole_every says. */
static inline uint64_t xs_next(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *st = x;
}

static inline double xs_unit(uint64_t *st)
{
    return (double)(xs_next(st) >> 11) * 0x1p-53;
}

static inline sebt_series random_series(size_t n, uint64_t seed, double price, double vol, size_t hole_every)
{
    sebt_series s;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_series_alloc(&s, n, &err), SEBT_OK, "%s", err.msg);
    uint64_t st = seed * 2654435761u + 1;
    double p = price;
    for (size_t t = 0; t < n; t++) {
        s.ts[t] = 1600000000000LL + (int64_t)t * 900000;
        double o = p;
        double c = o * (1.0 + (xs_unit(&st) - 0.5) * 0.02);
        double h = fmax(o, c) * (1.0 + xs_unit(&st) * 0.01);
        double l = fmin(o, c) * (1.0 - xs_unit(&st) * 0.01);
        /* Occasional bars with high == low, and volume spikes. */
        if (xs_unit(&st) < 0.01)
            h = l = o = c;
        double v = vol * (0.2 + xs_unit(&st)) * (xs_unit(&st) < 0.03 ? 20.0 : 1.0);
        if (xs_unit(&st) < 0.05)
            v = vol;   /* runs of equal volume */
        s.open[t] = o;
        s.high[t] = h;
        s.low[t] = l;
        s.close[t] = c;
        s.volume[t] = v;
        p = c;
        if (hole_every && t % hole_every == hole_every / 2)
            sebt_series_set_missing(&s, t);
    }
    sebt_series_recount(&s);
    return s;
}

/* Cost twins: combos of one signal set and exit geometry under each fee
 * and slippage (the innermost axes), exit rules on and off. */
static inline size_t fee_grid(sebt_params *c, const double *fees, size_t n_fees, const double *slips, size_t n_slips)
{
    size_t n = 0;
    for (int a = 0; a < 2; a++)
        for (int v = 0; v < 3; v++)
            for (int t = 0; t < 2; t++)
                for (int x = 0; x < 4; x++)   /* exits: all, no target, no stop, a far stop only */
                    for (int r = 0; r < 2; r++)
                        for (int h = 0; h < 2; h++)
                            for (size_t f = 0; f < n_fees; f++)
                                for (size_t g = 0; g < n_slips; g++) {
                                    sebt_params p = sebt_params_default();
                                    p.ema_fast = 5;
                                    p.ema_slow = 40;
                                    p.atr_window = 5 + 9 * a;
                                    p.z_window = 20;
                                    p.vol_z = 0.25 + 0.5 * v;
                                    p.tr_z = 0.3 * t;
                                    p.cloc_min = 0.35;
                                    p.use_tp = x != 1 && x != 3;
                                    p.use_stop = x != 2;
                                    p.use_time = x != 3;
                                    p.reward_r = 1.0 + 1.5 * r;
                                    p.atr_stop_mult = x == 3 ? 400.0 : 0.7;
                                    p.max_hold = 6 + 30 * h;
                                    p.fee_bp = fees[f];
                                    p.slippage_bp = slips[g];
                                    c[n++] = p;
                                }
    return n;
}

#endif
