/* Golden tests: the reference's trades and metrics on the bundled real
 * 15m BTCUSDT series, pinned bit for bit in fixtures/golden/. A change
 * here is a change of the oracle itself, so it must be deliberate:
 * regenerate with  SEBT_GOLDEN_REGENERATE=1 ./reference_test_golden
 * and explain the diff in the commit.
 *
 * The default-parameter trades were checked once against an independent
 * stdlib-Python implementation of SPEC (different window algorithms):
 * same 202 trades, same bars and reasons, prices within 1e-9. */
#include <stdio.h>
#include <stdlib.h>

#include "ref_fixture.h"

#define GOLDEN_DATA SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz"
#define GOLDEN_DIR SEBT_FIXTURES_DIR "/golden"

/* Trades with the columns people diff first, then the rest of the trade. */
static void write_trades(FILE *f, const sebt_result *r)
{
    fprintf(f, "signal_index,entry_index,exit_index,entry_price,exit_price,reason,bars_held,pnl,"
               "stop,tp,risk,r\n");
    for (size_t i = 0; i < r->n_trades; i++) {
        const sebt_trade *t = &r->trades[i];
        fprintf(f, "%lld,%lld,%lld,%.17g,%.17g,%s,%d,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                (long long)t->signal_index, (long long)t->entry_index, (long long)t->exit_index,
                t->entry_price, t->exit_price, sebt_exit_reason_name(t->reason), (int)t->bars_held,
                t->pnl, t->stop, t->tp, t->risk, t->r);
    }
}

static void write_summary(FILE *f, const sebt_series *s, const sebt_params *p, bool fill_gaps,
                          const sebt_result *r)
{
    fprintf(f, "key,value\n");
    fprintf(f, "data,BTCUSDT-15m-2017-2021.csv.gz\n");
    fprintf(f, "fill_gaps,%s\n", fill_gaps ? "true" : "false");
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        char buf[64];
        sebt_params_format(p, i, buf, sizeof buf);
        fprintf(f, "%s,%s\n", sebt_param_table[i].name, buf);
    }
    fprintf(f, "bars,%zu\n", s->n);
    fprintf(f, "valid_bars,%zu\n", r->valid_bars);
    fprintf(f, "n_trades,%zu\n", r->n_trades);
    const sebt_metrics *m = &r->metrics;
    fprintf(f, "n,%lld\n", (long long)m->n);
    fprintf(f, "win_rate,%.17g\n", m->win_rate);
    fprintf(f, "avg_r,%.17g\n", m->avg_r);
    fprintf(f, "total_pnl,%.17g\n", m->total_pnl);
    fprintf(f, "max_dd,%.17g\n", m->max_dd);
    fprintf(f, "sharpe,%.17g\n", m->sharpe);
    const sebt_open_position *o = &r->open_at_end;
    fprintf(f, "open_at_end,%s\n", o->open ? "true" : "false");
    if (o->open)
        fprintf(f, "open_signal_index,%lld\nopen_entry_index,%lld\nopen_entry_price,%.17g\n"
                   "open_stop,%.17g\nopen_tp,%.17g\nopen_risk,%.17g\nopen_bars_held,%d\n",
                (long long)o->signal_index, (long long)o->entry_index, o->entry_price, o->stop,
                o->tp, o->risk, (int)o->bars_held);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s (regenerate with SEBT_GOLDEN_REGENERATE=1)", path);
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 65536 > cap) {
            cap = cap ? cap * 2 : 1 << 20;
            buf = realloc(buf, cap + 1);
            cr_assert_not_null(buf);
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* Line by line, so a failure names the first trade that moved. */
static void compare_text(const char *path, const char *got)
{
    size_t len;
    char *want = read_all(path, &len);
    const char *a = want, *b = got;
    size_t line = 1;
    while (*a || *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        cr_assert(la == lb && memcmp(a, b, la) == 0, "%s:%zu differs:\n  golden: %.*s\n  now:    %.*s",
                  path, line, (int)la, a, (int)lb, b);
        a += la + (ea != NULL);
        b += lb + (eb != NULL);
        line++;
    }
    free(want);
}

static void golden(const char *name, const sebt_params *p, bool fill_gaps)
{
    sebt_series s;
    sebt_error err = { 0 };
    sebt_load_opts lo = { .fill_gaps = fill_gaps };
    cr_assert_eq(sebt_load_csv(GOLDEN_DATA, &lo, &s, &err), SEBT_OK, "%s", err.msg);
    cr_assert_gt(s.n, 150000u);

    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_batch_opts opts = { .want_trades = true };
    cr_assert_eq(sebt_reference_backend.run_batch(&sebt_reference_backend, &s, p, 1, &opts, &r, &err),
                 SEBT_OK, "%s", err.msg);

    /* Whatever the file says, SPEC §6 holds: trades never overlap and
     * every field points at a valid bar in order. */
    for (size_t i = 0; i < r.n_trades; i++) {
        const sebt_trade *t = &r.trades[i];
        cr_assert(t->signal_index < t->entry_index && t->entry_index < t->exit_index, "trade %zu", i);
        if (i > 0)
            cr_assert(r.trades[i - 1].exit_index <= t->signal_index, "trades %zu and %zu overlap", i - 1, i);
    }

    char *trades = NULL, *summary = NULL;
    size_t tlen = 0, slen = 0;
    FILE *tf = open_memstream(&trades, &tlen);
    FILE *sf = open_memstream(&summary, &slen);
    cr_assert(tf && sf);
    write_trades(tf, &r);
    write_summary(sf, &s, p, fill_gaps, &r);
    fclose(tf);
    fclose(sf);

    char tpath[512], spath[512];
    snprintf(tpath, sizeof tpath, "%s/%s.trades.csv", GOLDEN_DIR, name);
    snprintf(spath, sizeof spath, "%s/%s.summary.csv", GOLDEN_DIR, name);
    if (getenv("SEBT_GOLDEN_REGENERATE")) {
        FILE *f = fopen(tpath, "w");
        cr_assert_not_null(f, "cannot write %s", tpath);
        fputs(trades, f);
        fclose(f);
        f = fopen(spath, "w");
        cr_assert_not_null(f, "cannot write %s", spath);
        fputs(summary, f);
        fclose(f);
    }
    compare_text(spath, summary);
    compare_text(tpath, trades);

    free(trades);
    free(summary);
    sebt_result_free(&r);
    sebt_series_free(&s);
}

Test(golden, defaults, .timeout = 120)
{
    sebt_params p = sebt_params_default();
    golden("defaults", &p, false);
}

Test(golden, defaults_gaps_filled, .timeout = 120)
{
    /* The file's 32 timestamp holes become 560 missing bars: every window
     * that touches one is NaN and its warm-up restarts (SPEC §3, §5). */
    sebt_params p = sebt_params_default();
    golden("defaults_gaps_filled", &p, true);
}

Test(golden, fast, .timeout = 120)
{
    sebt_params p = sebt_params_default();
    p.ema_fast = 12;
    p.ema_slow = 48;
    p.z_window = 96;
    p.atr_window = 14;
    p.vol_z = 1.5;
    p.tr_z = 1.0;
    p.cloc_min = 0.5;
    golden("fast", &p, false);
}

Test(golden, no_stop_no_tp, .timeout = 120)
{
    sebt_params p = sebt_params_default();
    p.use_stop = false;
    p.use_tp = false;
    golden("no_stop_no_tp", &p, false);
}

Test(golden, max_hold_1, .timeout = 120)
{
    sebt_params p = sebt_params_default();
    p.max_hold = 1;
    golden("max_hold_1", &p, false);
}
