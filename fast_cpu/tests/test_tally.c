/* The analysis tally fast_cpu keeps in its metrics-only walks
 * (sebt_fast_cpu_run_tallied): each combo's analysis figures from it must
 * be, bit for bit, what sebt_trade_stats_of gives from the reference's
 * trades, over combos that take every walk (cost twins sharing one walk,
 * two combos hopped at once, a combo alone), with none, one or many
 * trades, positions open at the end, every exit kind, and whatever the
 * threads and batches. */
#include "parity_util.h"

#include "sebt/analysis.h"
#include "sebt/backends.h"
#include "sebt/overfit.h"

/* Scattered combos (tasks of one or two: a combo alone, the pair hop),
 * a share of them with thresholds so strict they trade once or never. */
static size_t scattered(sebt_params *c, size_t n)
{
    uint64_t st = 29;
    for (size_t i = 0; i < n; i++) {
        sebt_params p = sebt_params_default();
        p.ema_fast = 2 + (int32_t)(xs_next(&st) % 20);
        p.ema_slow = 25 + (int32_t)(xs_next(&st) % 60);
        p.z_window = 5 + (int32_t)(xs_next(&st) % 40);
        p.atr_window = 1 + (int32_t)(xs_next(&st) % 20);
        bool strict = i % 3 == 0;
        p.vol_z = strict ? 3.0 + xs_unit(&st) * 3.0 : xs_unit(&st) * 1.5;
        p.tr_z = strict ? 2.0 + xs_unit(&st) * 2.0 : xs_unit(&st);
        p.cloc_min = strict ? 0.8 : xs_unit(&st) * 0.6;
        p.use_tp = xs_unit(&st) < 0.8;
        p.use_stop = xs_unit(&st) < 0.8;
        p.use_time = xs_unit(&st) < 0.7;
        p.max_hold = 1 + (int32_t)(xs_next(&st) % 60);
        p.reward_r = 0.5 + xs_unit(&st) * 3.0;
        p.fee_bp = (double)(xs_next(&st) % 4) * 2.5;
        c[i] = p;
    }
    return n;
}

/* random_series with a bar every 37 opening 4 % lower (and the bar after
 * it higher): gaps, so stops fire on a gap too. */
static sebt_series gapped_series(size_t n, uint64_t seed, size_t hole_every)
{
    sebt_series s = random_series(n, seed, 300.0, 1e6, hole_every);
    for (size_t t = 36; t < n; t += 37)
        if (!isnan(s.open[t])) {
            s.open[t] *= 0.96;
            s.high[t] *= 0.96;
            s.low[t] *= 0.96;
            s.close[t] *= 0.96;
        }
    return s;
}

/* The analysis of each combo by the trade path: the reference's trades. */
static sebt_trade_stats *reference_stats(const sebt_series *s, const sebt_params *c, size_t n)
{
    sebt_result *r = calloc(n, sizeof *r);
    sebt_trade_stats *a = calloc(n, sizeof *a);
    sebt_batch_opts o = { .threads = 1, .want_trades = true };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, s, c, n, &o, r, &err), SEBT_OK, "%s",
                 err.msg);
    for (size_t i = 0; i < n; i++)
        sebt_trade_stats_of(s, &r[i], &a[i]);
    sebt_results_free(r, n);
    free(r);
    return a;
}

/* The overfit block sums of each combo from the reference's trades
 * (sebt_overfit_add_trades), blocks blocks. */
static double *reference_blocks(const sebt_series *s, const sebt_params *c, size_t n, int blocks)
{
    sebt_result *r = calloc(n, sizeof *r);
    size_t row = (size_t)(SEBT_OVERFIT_STATS * blocks);
    double *b = calloc(n * row + 1, sizeof *b);
    sebt_batch_opts o = { .threads = 1, .want_trades = true };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, s, c, n, &o, r, &err), SEBT_OK, "%s",
                 err.msg);
    for (size_t i = 0; i < n; i++)
        sebt_overfit_add_trades(b + i * row, blocks, s->n, &r[i]);
    sebt_results_free(r, n);
    free(r);
    return b;
}

/* fast_cpu's blocked batch (sebt_fast_cpu_run_blocked): each combo's block
 * sums bit for bit the reference's; with want (tallies kept too) its
 * analysis figures as well. Every trade is in some block. */
static void assert_blocked_as_reference(const sebt_series *s, const sebt_params *c, size_t n, const double *want_b,
                                        const sebt_trade_stats *want, int blocks, int threads, size_t budget)
{
    size_t row = (size_t)(SEBT_OVERFIT_STATS * blocks);
    sebt_result *r = calloc(n, sizeof *r);
    sebt_trade_tally *t = want ? calloc(n, sizeof *t) : NULL;
    double *got = calloc(n * row + 1, sizeof *got);
    sebt_batch_opts o = { .threads = threads, .memory_budget = budget };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_blocks_batch(&sebt_fast_cpu_backend), sebt_fast_cpu_run_blocked);
    cr_assert_eq(sebt_fast_cpu_run_blocked(&sebt_fast_cpu_backend, s, c, n, &o, r, t, got, blocks, &err), SEBT_OK,
                 "%s", err.msg);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_null(r[i].trades, "combo %zu: trades recorded on a blocked batch", i);
        double count = 0.0;
        for (int k = 0; k < blocks; k++) {
            const double *x = got + i * row + SEBT_OVERFIT_STATS * k, *y = want_b + i * row + SEBT_OVERFIT_STATS * k;
            cr_assert_eq(memcmp(x, y, SEBT_OVERFIT_STATS * sizeof *x), 0,
                         "combo %zu block %d of %d (%d threads): %.17g %.17g %.17g, the reference's %.17g %.17g %.17g",
                         i, k, blocks, threads, x[0], x[1], x[2], y[0], y[1], y[2]);
            count += x[0];
            used += x[0] > 0;
        }
        cr_assert_eq(count, (double)r[i].n_trades, "combo %zu: %g trades in its blocks, %zu closed", i, count,
                     r[i].n_trades);
        if (want) {
            sebt_trade_stats st;
            sebt_trade_stats_of_tally(s, &r[i], &t[i], &st);
            cr_assert_eq(memcmp(&st, &want[i], sizeof st), 0, "combo %zu: the analysis differs beside the blocks", i);
        }
    }
    cr_assert_gt(used, n, "only %zu blocks with trades over %zu combos", used, n);
    free(got);
    free(t);
    free(r);
}

typedef struct {
    size_t none, one, open;
    int64_t exits[SEBT_EXIT_KINDS];
} coverage;

static void assert_tallied_as_reference(const sebt_series *s, const sebt_params *c, size_t n,
                                        const sebt_trade_stats *want, int threads, size_t budget,
                                        sebt_batch_stats *st, coverage *cov)
{
    sebt_result *r = calloc(n, sizeof *r);
    sebt_trade_tally *t = calloc(n, sizeof *t);
    sebt_batch_opts o = { .threads = threads, .memory_budget = budget, .stats = st };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_tally_batch(&sebt_fast_cpu_backend), sebt_fast_cpu_run_tallied);
    cr_assert_eq(sebt_fast_cpu_run_tallied(&sebt_fast_cpu_backend, s, c, n, &o, r, t, &err), SEBT_OK, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        cr_assert_null(r[i].trades, "combo %zu: trades recorded on a tallied batch", i);
        sebt_trade_stats got;
        sebt_trade_stats_of_tally(s, &r[i], &t[i], &got);
        cr_assert_eq(memcmp(&got, &want[i], sizeof got), 0,
                     "combo %zu (%zu trades, %d threads): exits %lld %lld %lld %lld, gross %.17g %.17g, "
                     "bars %lld, sharpe_annual %.17g; the reference's exits %lld %lld %lld %lld, gross %.17g "
                     "%.17g, bars %lld, sharpe_annual %.17g",
                     i, r[i].n_trades, threads, (long long)got.exits[0], (long long)got.exits[1],
                     (long long)got.exits[2], (long long)got.exits[3], got.gross_profit, got.gross_loss,
                     (long long)got.bars_in_market, got.sharpe_annual, (long long)want[i].exits[0],
                     (long long)want[i].exits[1], (long long)want[i].exits[2], (long long)want[i].exits[3],
                     want[i].gross_profit, want[i].gross_loss, (long long)want[i].bars_in_market,
                     want[i].sharpe_annual);
        cov->none += r[i].n_trades == 0;
        cov->one += r[i].n_trades == 1;
        cov->open += r[i].open_at_end.open;
        for (int k = 0; k < SEBT_EXIT_KINDS; k++)
            cov->exits[k] += got.exits[k];
    }
    free(t);
    free(r);
}

static void assert_covered(const coverage *cov, bool sparse)
{
    if (sparse) {
        cr_assert_gt(cov->none, 5, "only %zu combos without a trade", cov->none);
        cr_assert_gt(cov->one, 5, "only %zu combos with one trade", cov->one);
    }
    cr_assert_gt(cov->open, 10, "only %zu positions open at the end", cov->open);
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        cr_assert_gt(cov->exits[k], 50, "only %lld exits of kind %d", (long long)cov->exits[k], k);
}

Test(tally, cost_twins_share_a_walk_and_give_the_reference_figures)
{
    sebt_series s = gapped_series(4000, 41, 0);
    static const double one_fee[] = { 5.0 }, no_slip[] = { 0.0 };
    static const double fees[] = { 7.5, 0.0, 2.5 }, slips[] = { 0.0, 1.75 };   /* not ascending */
    enum { BASE = 2 * 3 * 2 * 4 * 2 * 2 };
    sebt_params *c = malloc(BASE * 6 * sizeof *c);
    size_t n0 = fee_grid(c, one_fee, 1, no_slip, 1);
    sebt_trade_stats *want0 = reference_stats(&s, c, n0);
    sebt_batch_stats st0 = { 0 }, st1 = { 0 };
    coverage cov = { 0 };
    assert_tallied_as_reference(&s, c, n0, want0, 1, 0, &st0, &cov);
    size_t n = fee_grid(c, fees, 3, slips, 2);
    cr_assert_eq(n, (size_t)BASE * 6);
    sebt_trade_stats *want = reference_stats(&s, c, n);
    assert_tallied_as_reference(&s, c, n, want, 1, 0, &st1, &cov);
    /* Six costs add no work unit: the twins shared their walks. */
    cr_assert_eq(st1.chunks, st0.chunks, "%zu work units for 6 costs, %zu for one", st1.chunks, st0.chunks);
    assert_tallied_as_reference(&s, c, n, want, 3, 0, &st1, &cov);
    assert_tallied_as_reference(&s, c, n, want, 2, 64, &st1, &cov);   /* a batch per z window */
    assert_covered(&cov, false);
    double *blocks16 = reference_blocks(&s, c, n, 16), *blocks6 = reference_blocks(&s, c, n, 6);
    assert_blocked_as_reference(&s, c, n, blocks16, NULL, 16, 1, 0);
    assert_blocked_as_reference(&s, c, n, blocks16, want, 16, 3, 0);
    assert_blocked_as_reference(&s, c, n, blocks6, NULL, 6, 2, 64);
    free(blocks16);
    free(blocks6);
    free(want0);
    free(want);
    free(c);
    sebt_series_free(&s);
}

Test(tally, scattered_combos_with_none_one_or_many_trades_and_holes)
{
    sebt_series s = gapped_series(6000, 7, 997);
    enum { N = 600 };
    sebt_params *c = malloc(N * sizeof *c);
    size_t n = scattered(c, N);
    sebt_trade_stats *want = reference_stats(&s, c, n);
    coverage cov = { 0 };
    sebt_batch_stats st = { 0 };
    assert_tallied_as_reference(&s, c, n, want, 1, 0, &st, &cov);
    assert_tallied_as_reference(&s, c, n, want, 3, 0, &st, &cov);
    assert_tallied_as_reference(&s, c, n, want, 2, 64, &st, &cov);
    cr_assert_gt(st.batches, 1, "one batch: the budget split nothing");
    assert_covered(&cov, true);
    double *blocks16 = reference_blocks(&s, c, n, 16), *blocks24 = reference_blocks(&s, c, n, 24);
    assert_blocked_as_reference(&s, c, n, blocks16, want, 16, 1, 0);
    assert_blocked_as_reference(&s, c, n, blocks16, NULL, 16, 3, 0);
    assert_blocked_as_reference(&s, c, n, blocks24, NULL, 24, 2, 64);
    free(blocks16);
    free(blocks24);
    /* One combo, and none. */
    assert_tallied_as_reference(&s, c + 1, 1, want + 1, 1, 0, &st, &cov);
    sebt_result r0;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fast_cpu_run_tallied(&sebt_fast_cpu_backend, &s, c, 0, NULL, &r0, NULL, &err), SEBT_OK, "%s",
                 err.msg);
    free(want);
    free(c);
    sebt_series_free(&s);
}

/* A tallied batch is metrics only: asked for trades too, it says so. */
Test(tally, refuses_trades)
{
    sebt_series s = random_series(200, 3, 300.0, 1e6, 0);
    sebt_params c = sebt_params_default();
    sebt_result r = { 0 };
    sebt_trade_tally t;
    sebt_batch_opts o = { .want_trades = true };
    sebt_error err = { 0 };
    cr_assert_eq(sebt_fast_cpu_run_tallied(&sebt_fast_cpu_backend, &s, &c, 1, &o, &r, &t, &err), SEBT_ERR_USAGE);
    cr_assert_null(r.trades);
    cr_assert_null(sebt_backend_tally_batch(&sebt_reference_backend));
    double b[SEBT_OVERFIT_STATS * 4] = { 0 };
    cr_assert_eq(sebt_fast_cpu_run_blocked(&sebt_fast_cpu_backend, &s, &c, 1, &o, &r, NULL, b, 4, &err), SEBT_ERR_USAGE);
    cr_assert_null(r.trades);
    cr_assert_null(sebt_backend_blocks_batch(&sebt_reference_backend));
    sebt_series_free(&s);
}
