/* The streamed sweep (core/sweep.c): what sebt_sweep_run hands over equals
 * one whole batch of the same backend (results, order, the rows of
 * sebt_sweep_csv_row and sebt_sweep_npy_row), whatever the window, the
 * thread count or who formats the rows; its top K is the first K of the
 * whole sort; a callback stops it; a result that cannot be written fails it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "../sweep_verify.h"

#define N_COMBOS 40

static sebt_series series;
static sebt_params combos[N_COMBOS];
static sebt_result whole[N_COMBOS];
static const sebt_backend *fast;

static void setup(void)
{
    sebt_error err = { 0 };
    sebt_load_opts o = { .fill_gaps = true };
    cr_assert_eq(sebt_load_csv(SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz", &o, &series, &err), SEBT_OK,
                 "%s", err.msg);
    for (int i = 0; i < N_COMBOS; i++) {
        combos[i] = sebt_params_default();
        combos[i].ema_fast = 8 + 4 * (i % 8);
        combos[i].reward_r = 1.0 + 0.5 * (i / 8);
    }
    cr_assert_eq(sebt_backend_get("fast_cpu", &fast, &err), SEBT_OK, "%s", err.msg);
    sebt_batch_opts bo = { .threads = 1 };
    memset(whole, 0, sizeof whole);
    cr_assert_eq(fast->run_batch(fast, &series, combos, N_COMBOS, &bo, whole, &err), SEBT_OK, "%s", err.msg);
}

static void teardown(void)
{
    sebt_results_free(whole, N_COMBOS);
    sebt_series_free(&series);
}

TestSuite(sweep, .init = setup, .fini = teardown);

typedef struct {
    size_t n_windows, next;
    uint64_t firsts[N_COMBOS];
    size_t counts[N_COMBOS];
    sebt_metrics got[N_COMBOS];
    char rows[N_COMBOS * SEBT_CSV_ROW_MAX];
    size_t rows_len;
    int stop_after;   /* windows; 0: never */
    bool npy;
    bool of_combos;   /* the sweep is of combos[] (its rows then checked in place) */
} seen;

/* Each combo's row is where the window says: in the piece part_first
 * names, row_at bytes in, the whole batch's row of it byte for byte; a
 * combo that fails the condition has none. */
static void rows_where_said(const seen *s, const sebt_sweep_window *w)
{
    if (!w->n_parts || !s->of_combos)
        return;
    cr_assert_not_null(w->row_at);
    cr_assert_eq(w->part_first[0], 0);
    for (int p = 1; p < w->n_parts; p++)
        cr_assert(w->part_first[p] >= w->part_first[p - 1] && w->part_first[p] <= w->count);
    for (size_t k = 0; k < w->count; k++) {
        size_t i = (size_t)w->first + k;
        if (w->passes && !w->passes[k]) {
            cr_assert_eq(w->row_at[k], SIZE_MAX, "combo %zu fails the condition but has a row", i);
            continue;
        }
        int p = 0;
        while (p + 1 < w->n_parts && w->part_first[p + 1] <= k)
            p++;
        unsigned char one[SEBT_CSV_ROW_MAX > SEBT_NPY_ROW_MAX ? SEBT_CSV_ROW_MAX : SEBT_NPY_ROW_MAX];
        size_t n = s->npy ? sebt_sweep_npy_row(one, i, &combos[i], &whole[i])
                          : sebt_sweep_csv_row((char *)one, i, &combos[i], &whole[i]);
        cr_assert(w->row_at[k] != SIZE_MAX && w->row_at[k] + n <= w->part_bytes[p],
                  "combo %zu: its row is said to start at %zu of a piece of %zu bytes", i, w->row_at[k],
                  w->part_bytes[p]);
        cr_assert_eq(memcmp(w->part[p] + w->row_at[k], one, n), 0, "combo %zu: another row where its row is said to be",
                     i);
    }
}

static int record(void *user, const sebt_sweep_window *w)
{
    seen *s = user;
    s->firsts[s->n_windows] = w->first;
    s->counts[s->n_windows++] = w->count;
    cr_assert_eq(w->first, s->next, "window at %llu, expected %zu", (unsigned long long)w->first, s->next);
    for (size_t k = 0; k < w->count; k++)
        s->got[w->first + k] = w->results[k].metrics;
    rows_where_said(s, w);
    for (int p = 0; p < w->n_parts; p++) {
        if (!w->part_bytes[p])
            continue;   /* a thread with no rows has no buffer */
        memcpy(s->rows + s->rows_len, w->part[p], w->part_bytes[p]);
        s->rows_len += w->part_bytes[p];
    }
    s->next += w->count;
    return s->stop_after && (int)s->n_windows == s->stop_after ? 7 : 0;
}

static size_t expected_rows(sebt_rows_format f, char *out)
{
    size_t len = 0;
    for (size_t i = 0; i < N_COMBOS; i++)
        len += f == SEBT_ROWS_NPY ? sebt_sweep_npy_row((unsigned char *)out + len, i, &combos[i], &whole[i])
                                  : sebt_sweep_csv_row(out + len, i, &combos[i], &whole[i]);
    return len;
}

static void sweep_and_compare(size_t window, int threads, sebt_rows_format f)
{
    static seen s;
    memset(&s, 0, sizeof s);
    s.npy = f == SEBT_ROWS_NPY;
    s.of_combos = true;
    sebt_sweep_opts o = { .combos = combos, .n_combos = N_COMBOS, .threads = threads, .window = window,
                          .rows = f, .on_window = record, .user = &s };
    sebt_sweep_result r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
    size_t w = window ? window : N_COMBOS;
    cr_assert_eq(s.n_windows, (N_COMBOS + w - 1) / w, "window %zu: %zu windows", window, s.n_windows);
    cr_assert_eq(r.combos_done, N_COMBOS);
    cr_assert_eq(r.stopped, 0);
    for (size_t i = 0; i < N_COMBOS; i++)
        cr_assert_eq(memcmp(&s.got[i], &whole[i].metrics, sizeof s.got[i]), 0, "combo %zu differs", i);
    static char want[N_COMBOS * SEBT_CSV_ROW_MAX];
    size_t len = expected_rows(f, want);
    cr_assert_eq(s.rows_len, len, "window %zu, %d threads: %zu bytes of rows, expected %zu", window, threads,
                 s.rows_len, len);
    cr_assert_eq(memcmp(s.rows, want, len), 0, "window %zu, %d threads: the rows differ", window, threads);
    sebt_sweep_result_free(&r);
}

Test(sweep, windows_in_order_equal_one_batch_whatever_the_window_and_threads)
{
    const size_t windows[] = { 1, 7, 16, 39, 40, 0 };
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        sweep_and_compare(windows[i], 1, SEBT_ROWS_CSV);   /* rows by the writer thread (two cores or more) */
        sweep_and_compare(windows[i], 0, SEBT_ROWS_CSV);   /* by the backtests' threads */
        sweep_and_compare(windows[i], 3, SEBT_ROWS_NPY);
    }
}

Test(sweep, the_top_k_is_the_first_k_of_the_whole_ranking)
{
    for (int metric = 0; metric < SEBT_N_METRICS; metric++) {
        size_t order[N_COMBOS];
        for (size_t i = 0; i < N_COMBOS; i++)
            order[i] = i;
        for (size_t i = 1; i < N_COMBOS; i++)   /* insertion sort by the ranking */
            for (size_t j = i; j > 0 && sebt_rank_compare(&whole[order[j]].metrics, order[j],
                                                          &whole[order[j - 1]].metrics, order[j - 1], metric) < 0;
                 j--) {
                size_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        sebt_sweep_opts o = { .combos = combos, .n_combos = N_COMBOS, .threads = 2, .window = 6, .top = 5,
                              .metric = metric };
        sebt_sweep_result r;
        sebt_error err = { 0 };
        cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(r.n_top, 5);
        for (size_t k = 0; k < 5; k++)
            cr_assert_eq(r.top[k].combo, order[k], "%s: rank %zu is combo %llu, expected %zu",
                         sebt_metric_name(metric), k, (unsigned long long)r.top[k].combo, order[k]);
        sebt_sweep_result_free(&r);
    }
}

Test(sweep, a_callback_stops_the_sweep)
{
    static seen s;
    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    sebt_sweep_opts o = { .combos = combos, .n_combos = N_COMBOS, .threads = 2, .window = 8, .on_window = record,
                          .user = &s };
    sebt_sweep_result r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(r.stopped, 7);
    cr_assert_eq(s.n_windows, 2, "windows after the stop were handed over: %zu", s.n_windows);
    cr_assert_eq(r.combos_done, 8, "%zu", r.combos_done);
    sebt_sweep_result_free(&r);
}

Test(sweep, a_result_that_does_not_fit_fails_after_the_windows_before_it)
{
    sebt_params c[3] = { sebt_params_default(), sebt_params_default(), sebt_params_default() };
    c[2].fee_bp = 1e308;
    static seen s;
    memset(&s, 0, sizeof s);
    sebt_sweep_opts o = { .combos = c, .n_combos = 3, .threads = 2, .window = 2, .rows = SEBT_ROWS_CSV,
                          .on_window = record, .user = &s };
    sebt_sweep_result r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_ERR_INPUT);
    cr_assert(strncmp(err.msg, "combo 2: ", 9) == 0, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "does not fit a double (from fee_bp=1e+308)"), "%s", err.msg);
    cr_assert_eq(s.n_windows, 1);
    cr_assert_eq(r.combos_done, 2);
    sebt_sweep_result_free(&r);
}

Test(sweep, bad_options_are_refused)
{
    sebt_sweep_opts o = { .n_combos = 3 };
    sebt_sweep_result r;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_ERR_USAGE);
    o.combos = combos;
    o.rows = (sebt_rows_format)9;
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_ERR_USAGE);
    o.rows = SEBT_ROWS_CSV;
    o.top = 1;
    o.metric = SEBT_N_METRICS;
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_ERR_USAGE);
}

Test(sweep, the_csv_header_names_every_column)
{
    char b[4096];
    size_t len = sebt_sweep_csv_header(b, sizeof b);
    cr_assert_gt(len, 0);
    b[len] = '\0';
    cr_assert(strncmp(b, "combo,ema_fast,", 15) == 0, "%s", b);
    cr_assert_not_null(strstr(b, ",n,win_rate,avg_r,total_pnl,max_dd,sharpe,open_at_end,valid_bars\n"), "%s", b);
    cr_assert_eq(sebt_sweep_csv_header(b, len), 0, "a header one byte too big for the buffer was written");
    cr_assert_eq(sebt_metric_index("max_dd"), SEBT_METRIC_MAX_DD);
    cr_assert_eq(sebt_metric_index("nope"), -1);
}

/* Under a condition, the rows are the whole batch's rows of the combos
 * that pass it (decided here from the whole batch's metrics, written out
 * by hand), in input order, whoever formats them; the top K ranks only
 * those; the window says which passed. */
static bool passes_by_hand(size_t i)
{
    const sebt_metrics *m = &whole[i].metrics;
    return m->n >= 20 && (combos[i].ema_fast < 20 || m->sharpe > -0.5) && combos[i].use_stop;
}

typedef struct {
    size_t passed;
    bool mismatch;
} pass_seen;

static int record_passes(void *user, const sebt_sweep_window *w)
{
    pass_seen *s = user;
    for (size_t k = 0; k < w->count; k++) {
        s->passed += w->passes[k];
        s->mismatch |= w->passes[k] != passes_by_hand(w->first + k);
    }
    return 0;
}

Test(sweep, a_condition_keeps_only_the_rows_and_top_combos_that_pass_it)
{
    sebt_where *w = NULL;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_where("n >= 20 and (ema_fast < 20 or sharpe > -0.5) and use_stop", &w, &err), SEBT_OK,
                 "%s", err.msg);
    static char want[N_COMBOS * SEBT_CSV_ROW_MAX], got[N_COMBOS * SEBT_CSV_ROW_MAX];
    size_t len = 0, n_pass = 0;
    for (size_t i = 0; i < N_COMBOS; i++)
        if (passes_by_hand(i)) {
            len += sebt_sweep_csv_row(want + len, i, &combos[i], &whole[i]);
            n_pass++;
        }
    cr_assert(n_pass > 3 && n_pass < N_COMBOS - 3, "the condition should split the combos: %zu pass", n_pass);
    const int threads[] = { 1, 0, 3 };
    for (int t = 0; t < 3; t++) {
        static seen s;
        memset(&s, 0, sizeof s);
        s.of_combos = true;
        sebt_sweep_opts o = { .combos = combos, .n_combos = N_COMBOS, .threads = threads[t], .window = 7,
                              .rows = SEBT_ROWS_CSV, .on_window = record, .user = &s, .where = w };
        sebt_sweep_result r;
        cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
        cr_assert_eq(r.combos_done, N_COMBOS);
        cr_assert_eq(r.combos_passed, n_pass, "%zu passed, expected %zu", r.combos_passed, n_pass);
        cr_assert_eq(s.rows_len, len, "%d threads: %zu bytes of rows, expected %zu", threads[t], s.rows_len, len);
        memcpy(got, s.rows, len);
        cr_assert_eq(memcmp(got, want, len), 0, "%d threads: the rows differ", threads[t]);
        sebt_sweep_result_free(&r);
    }
    pass_seen ps = { 0 };
    sebt_sweep_opts o = { .combos = combos, .n_combos = N_COMBOS, .threads = 2, .window = 6, .top = 100,
                          .metric = SEBT_METRIC_SHARPE, .on_window = record_passes, .user = &ps, .where = w };
    sebt_sweep_result r;
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(ps.passed, n_pass);
    cr_assert_not(ps.mismatch, "a window's passes differ from the hand-written condition");
    cr_assert_eq(r.n_top, n_pass, "the top holds %zu combos, %zu pass", r.n_top, n_pass);
    for (size_t k = 0; k < r.n_top; k++) {
        cr_assert(passes_by_hand((size_t)r.top[k].combo), "combo %llu in the top fails the condition",
                  (unsigned long long)r.top[k].combo);
        if (k)
            cr_assert(sebt_rank_compare(&r.top[k - 1].metrics, r.top[k - 1].combo, &r.top[k].metrics,
                                        r.top[k].combo, SEBT_METRIC_SHARPE) < 0);
    }
    sebt_sweep_result_free(&r);
    sebt_where_free(w);
}

Test(sweep, a_condition_names_the_sweeps_columns)
{
    sebt_where *w = NULL;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_where("valid_bars > 0 and open_at_end == 0 and combo >= 0 and slippage_bp >= 0 and "
                                  "win_rate <= 1 and avg_r < 99 and total_pnl > -1e300 and max_dd <= 0 and "
                                  "use_tp and not use_time == false",
                                  &w, &err),
                 SEBT_OK, "%s", err.msg);
    sebt_where_free(w);
    cr_assert_eq(sebt_sweep_where("n >= 30 and sharp > 1", &w, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "did you mean 'sharpe'?"), "%s", err.msg);
}

/* ---- the analysis columns ----------------------------------------------------- */

typedef struct {
    sebt_trade_stats a[N_COMBOS];
    sebt_metrics m[N_COMBOS];
    char rows[N_COMBOS * SEBT_CSV_ROW_MAX];
    size_t rows_len;
    bool trades_dropped;
} seen_analysis;

static int record_analysis(void *user, const sebt_sweep_window *w)
{
    seen_analysis *s = user;
    cr_assert_not_null(w->analysis, "a sweep with analysis hands over no analysis");
    for (size_t k = 0; k < w->count; k++) {
        s->a[w->first + k] = w->analysis[k];
        s->m[w->first + k] = w->results[k].metrics;
        s->trades_dropped = s->trades_dropped && !w->results[k].trades;
    }
    for (int i = 0; i < w->n_parts; i++) {
        memcpy(s->rows + s->rows_len, w->part[i], w->part_bytes[i]);
        s->rows_len += w->part_bytes[i];
    }
    return 0;
}

/* Each combo's analysis is what the reference's trades of it give (an
 * independent backend, its trades through sebt_trade_stats_of), the rows
 * are the plain rows with the analysis columns appended, and the trades
 * the analysis needed are not handed over unless asked for. */
Test(sweep, the_analysis_columns_are_those_of_each_combos_reference_trades)
{
    const sebt_backend *ref;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("reference", &ref, &err), SEBT_OK, "%s", err.msg);
    static sebt_result mine[N_COMBOS];
    memset(mine, 0, sizeof mine);
    sebt_batch_opts bo = { .threads = 1, .want_trades = true };
    cr_assert_eq(ref->run_batch(ref, &series, combos, N_COMBOS, &bo, mine, &err), SEBT_OK, "%s", err.msg);
    static seen_analysis s;
    memset(&s, 0, sizeof s);
    s.trades_dropped = true;
    sebt_sweep_opts o = { .combos = combos, .n_combos = N_COMBOS, .threads = 2, .window = 7, .rows = SEBT_ROWS_CSV,
                          .analysis = true, .on_window = record_analysis, .user = &s };
    sebt_sweep_result r;
    cr_assert_eq(sebt_sweep_run(fast, &series, &o, &r, &err), SEBT_OK, "%s", err.msg);
    cr_assert(s.trades_dropped, "the trades taken for the analysis were handed over unasked");
    size_t at = 0, nan_pf = 0, time_exits = 0;
    for (size_t i = 0; i < N_COMBOS; i++) {
        sebt_trade_stats want;
        sebt_trade_stats_of(&series, &mine[i], &want);
        const sebt_trade_stats *got = &s.a[i];
        cr_assert(memcmp(&s.m[i], &mine[i].metrics, sizeof s.m[i]) == 0, "combo %zu: metrics", i);
        cr_assert(memcmp(got->exits, want.exits, sizeof want.exits) == 0, "combo %zu: exit counts", i);
        cr_assert_eq(got->exits[0] + got->exits[1] + got->exits[2] + got->exits[3], mine[i].metrics.n);
        cr_assert_eq(got->bars_in_market, want.bars_in_market, "combo %zu", i);
        const double g[] = { got->gross_profit, got->gross_loss, got->profit_factor, got->exposure, got->years,
                             got->sharpe_annual };
        const double wv[] = { want.gross_profit, want.gross_loss, want.profit_factor, want.exposure, want.years,
                              want.sharpe_annual };
        for (int k = 0; k < 6; k++)
            cr_assert(memcmp(&g[k], &wv[k], sizeof g[k]) == 0 || (isnan(g[k]) && isnan(wv[k])),
                      "combo %zu: field %d is %.17g, the reference's trades give %.17g", i, k, g[k], wv[k]);
        nan_pf += isnan(got->profit_factor);
        time_exits += got->exits[SEBT_EXIT_TIME] > 0;
        /* The row: the plain row, then the ten columns. */
        char plain[SEBT_CSV_ROW_MAX], full[SEBT_CSV_ROW_MAX];
        size_t pl = sebt_sweep_csv_row(plain, i, &combos[i], &whole[i]);
        size_t fl = sebt_sweep_csv_row_ex(full, i, &combos[i], &whole[i], &want);
        cr_assert(fl > pl && memcmp(full, plain, pl - 1) == 0 && full[pl - 1] == ',');
        cr_assert(at + fl <= s.rows_len && memcmp(s.rows + at, full, fl) == 0, "combo %zu: its row", i);
        at += fl;
    }
    cr_assert_eq(at, s.rows_len);
    cr_assert(time_exits > 0, "no combo of the test exits on time: the test does not reach that column");
    (void)nan_pf;
    sebt_sweep_result_free(&r);
    sebt_results_free(mine, N_COMBOS);
}

Test(sweep, an_analysis_column_in_a_condition_needs_the_analysis)
{
    sebt_where *w = NULL;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_where("profit_factor > 1.5 and n >= 30", &w, &err), SEBT_ERR_USAGE);
    cr_assert_null(w);
    cr_assert(strstr(err.msg, "profit_factor is an analysis column"), "%s", err.msg);
    cr_assert_eq(sebt_sweep_where_ex("profit_factor > 1.5 and exits_time >= 3 and sharpe_annual > 0 and "
                                     "exposure < 0.5 and bars_in_market > 0 and exits_stop_gap == 0",
                                     true, &w, &err),
                 SEBT_OK, "%s", err.msg);
    sebt_trade_stats a = { .exits = { 0, 5, 2, 3 }, .profit_factor = 2.0, .bars_in_market = 40, .exposure = 0.1,
                           .sharpe_annual = 0.5 };
    cr_assert(sebt_sweep_row_passes_ex(w, 0, &combos[0], &whole[0], &a));
    a.exits[SEBT_EXIT_TIME] = 2;
    cr_assert_not(sebt_sweep_row_passes_ex(w, 0, &combos[0], &whole[0], &a));
    a.exits[SEBT_EXIT_TIME] = 3;
    a.profit_factor = NAN;   /* undefined never passes a bound */
    cr_assert_not(sebt_sweep_row_passes_ex(w, 0, &combos[0], &whole[0], &a));
    sebt_where_free(w);
    cr_assert_eq(sebt_sweep_where_ex("profit_facter > 1", true, &w, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "profit_factor"), "%s", err.msg);
}

Test(sweep, the_npy_analysis_row_reads_back)
{
    sebt_trade_stats a = { .exits = { 1, 2, 3, 4 }, .gross_profit = 10.5, .gross_loss = -3.25, .profit_factor = NAN,
                           .bars_in_market = 77, .exposure = 0.125, .sharpe_annual = -0.75 };
    unsigned char b[SEBT_NPY_ROW_MAX];
    cr_assert_eq(sebt_sweep_npy_row_ex(b, 9, &combos[3], &whole[3], &a), sebt_sweep_npy_row_bytes_ex(true));
    cr_assert_eq(sebt_sweep_npy_row_bytes_ex(true), sebt_sweep_npy_row_bytes() + 80);
    uint64_t combo;
    sebt_params p;
    sebt_sweep_record rec;
    sebt_sweep_npy_row_read_ex(b, true, &combo, &p, &rec);
    cr_assert_eq(combo, 9);
    cr_assert(rec.has_analysis);
    cr_assert(memcmp(rec.analysis.exits, a.exits, sizeof a.exits) == 0);
    cr_assert(rec.analysis.gross_profit == 10.5 && rec.analysis.gross_loss == -3.25 && isnan(rec.analysis.profit_factor));
    cr_assert(rec.analysis.bars_in_market == 77 && rec.analysis.exposure == 0.125 && rec.analysis.sharpe_annual == -0.75);
    char h[SEBT_NPY_HEADER_MAX];
    size_t hl = sebt_sweep_npy_header_ex(h, 1, true);
    h[hl - 1] = '\0';
    cr_assert(strstr(h + 10, "('valid_bars', '<u8'), ('exits_stop_gap', '<i8'), ('exits_stop', '<i8'), ('exits_tp', "
                        "'<i8'), ('exits_time', '<i8'), ('gross_profit', '<f8'), ('gross_loss', '<f8'), "
                        "('profit_factor', '<f8'), ('bars_in_market', '<i8'), ('exposure', '<f8'), "
                        "('sharpe_annual', '<f8')]"), "%s", h + 10);
}

/* The sample's exact path (sebt_sweep_verify_exact) and the best combo's
 * reference walk with its z-scores where read (core/sweep_verify.h): on
 * records the reference itself made they find nothing, whatever the
 * threads, over combos whose windows (shared and per-combo) and filter
 * vary; a record changed in one field is found and named. */
#define N_EXACT 24
static void exact_combos(sebt_params *p)
{
    for (int i = 0; i < N_EXACT; i++) {
        p[i] = sebt_params_default();
        p[i].z_window = i % 2 ? 48 : 96;
        p[i].atr_window = i % 3 ? 24 : 96;
        p[i].ema_fast = 6 + 2 * (i % 5);
        p[i].ema_slow = i % 4 ? 96 : 192;
        p[i].vol_z = 1.0 + 0.25 * (i % 3);
        p[i].use_rsi = i % 5 == 0;
        p[i].rsi_window = i % 2 ? 14 : 28;
        p[i].rsi_max = 45;
        p[i].fee_bp = i % 2 ? 0 : 5;
    }
}

static void recomputed_agrees_with_the_reference(sebt_recompute on)
{
    sebt_params p[N_EXACT];
    exact_combos(p);
    const sebt_backend *ref;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_backend_get("reference", &ref, &err), SEBT_OK);
    sebt_result r[N_EXACT];
    memset(r, 0, sizeof r);
    sebt_batch_opts bo = { .threads = 1, .want_trades = true };
    cr_assert_eq(ref->run_batch(ref, &series, p, N_EXACT, &bo, r, &err), SEBT_OK, "%s", err.msg);
    sebt_sweep_record got[N_EXACT];
    int64_t trades = 0;
    for (int i = 0; i < N_EXACT; i++) {
        got[i] = (sebt_sweep_record){ .combo = (uint64_t)i, .metrics = r[i].metrics, .valid_bars = r[i].valid_bars,
                                      .open_at_end = r[i].open_at_end.open ? 1 : 0, .has_analysis = true };
        sebt_trade_stats_of(&series, &r[i], &got[i].analysis);
        trades += r[i].metrics.n;
    }
    cr_assert_gt(trades, 10 * N_EXACT, "combos that trade: %lld trades", (long long)trades);
    sebt_verify_report rep;
    for (int threads = 1; threads <= 3; threads++) {
        cr_assert_eq(sebt_sweep_verify_on(on, fast, &series, p, got, N_EXACT, threads, NULL, &rep, &err), SEBT_OK,
                     "%s", err.msg);
        cr_assert_eq(rep.checked, N_EXACT);
        cr_assert_eq(rep.differ, 0, "threads %d: %s", threads, rep.what);
        /* One combo on every thread (the best combo's case): its
         * z-scores' bars shared out. */
        cr_assert_eq(sebt_sweep_verify_on(on, fast, &series, &p[7], &got[7], 1, threads, NULL, &rep, &err), SEBT_OK,
                     "%s", err.msg);
        cr_assert_eq(rep.differ, 0, "threads %d, one combo: %s", threads, rep.what);
    }
    got[17].metrics.n += 1;
    got[5].metrics.sharpe = nextafter(got[5].metrics.sharpe, INFINITY);
    got[9].analysis.bars_in_market += 1;
    cr_assert_eq(sebt_sweep_verify_on(on, fast, &series, p, got, N_EXACT, 2, NULL, &rep, &err), SEBT_OK, "%s",
                 err.msg);
    cr_assert_eq(rep.differ, 3);
    cr_assert_eq(rep.first_differ, 5);
    cr_assert(strstr(rep.what, "sharpe is") != NULL, "%s", rep.what);
    sebt_results_free(r, N_EXACT);
}

Test(sweep, the_exact_path_agrees_with_the_reference_and_names_a_changed_field)
{
    recomputed_agrees_with_the_reference(SEBT_RECOMPUTE_EXACT);
}

Test(sweep, the_reference_walk_with_z_where_read_agrees_with_the_reference_and_names_a_changed_field)
{
    recomputed_agrees_with_the_reference(SEBT_RECOMPUTE_REFERENCE_Z_READ);
}

/* The public entries are the internal one's two ways. */
Test(sweep, sebt_sweep_verify_exact_is_the_exact_path)
{
    sebt_params p[N_EXACT];
    exact_combos(p);
    sebt_sweep_record got = { 0 };
    sebt_verify_report rep;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_sweep_verify_exact(fast, &series, p, &got, 1, 1, &rep, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(rep.differ, 1);
    cr_assert_eq(sebt_sweep_verify_exact(NULL, &series, p, &got, 1, 1, &rep, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "sebt_sweep_verify_exact:") == err.msg, "%s", err.msg);
    cr_assert_eq(sebt_sweep_verify(NULL, &series, p, &got, 1, 1, &rep, &err), SEBT_ERR_USAGE);
    cr_assert(strstr(err.msg, "sebt_sweep_verify:") == err.msg, "%s", err.msg);
}
