/* `sebt run`: one backtest of one combo, as JSON (the stable machine
 * format, described field by field in docs/formats.md "JSON of sebt run"), CSV (one
 * row per trade) or text for people. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "sebt/analysis.h"
#include "sebt/sweep.h"

typedef enum { FORMAT_JSON, FORMAT_CSV, FORMAT_TEXT } run_format;

/* Beside SPEC §7's metrics, what a backtest tool shows (sebt/analysis.h;
 * docs/formats.md "JSON of sebt run"). */
static void write_json_stats(cli_json *j, const sebt_series *s, const sebt_result *r,
                             const sebt_relative_stats *rel)
{
    sebt_trade_stats st;
    sebt_trade_stats_of(s, r, &st);
    cli_json_analysis(j, "analysis", &st);
    cli_json_relative(j, "relative", rel);
}

static void write_json(FILE *f, const char *backend, const sebt_params *p, const sebt_series *s,
                       const sebt_result *r, const sebt_relative_stats *rel)
{
    cli_json j;
    cli_json_init(&j, f, 2);
    cli_json_begin_object(&j, NULL);
    cli_json_schema(&j, "run");
    cli_json_string(&j, "backend", backend);
    cli_json_params(&j, "params", p);
    cli_json_int(&j, "bars", (int64_t)s->n);
    cli_json_int(&j, "valid_bars", (int64_t)r->valid_bars);
    cli_json_begin_array(&j, "trades");
    for (size_t k = 0; k < r->n_trades; k++) {
        const sebt_trade *t = &r->trades[k];
        cli_json_begin_object(&j, NULL);
        cli_json_int(&j, "signal_index", t->signal_index);
        cli_json_int(&j, "entry_index", t->entry_index);
        cli_json_int(&j, "exit_index", t->exit_index);
        cli_json_int(&j, "signal_ts", s->ts[t->signal_index]);
        cli_json_int(&j, "entry_ts", s->ts[t->entry_index]);
        cli_json_int(&j, "exit_ts", s->ts[t->exit_index]);
        cli_json_double(&j, "entry_price", t->entry_price);
        cli_json_double(&j, "exit_price", t->exit_price);
        cli_json_double(&j, "stop", t->stop);
        cli_json_double(&j, "tp", t->tp);
        cli_json_double(&j, "risk", t->risk);
        cli_json_double(&j, "pnl", t->pnl);
        cli_json_double(&j, "r", t->r);
        cli_json_string(&j, "reason", sebt_exit_reason_name(t->reason));
        cli_json_int(&j, "bars_held", t->bars_held);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    const sebt_open_position *o = &r->open_at_end;
    if (o->open) {
        /* One line like a trade: wrap depth 2 would split it field by field. */
        j.wrap_depth = 1;
        cli_json_begin_object(&j, "open_at_end");
        cli_json_int(&j, "signal_index", o->signal_index);
        cli_json_int(&j, "entry_index", o->entry_index);
        cli_json_int(&j, "signal_ts", s->ts[o->signal_index]);
        cli_json_int(&j, "entry_ts", s->ts[o->entry_index]);
        cli_json_double(&j, "entry_price", o->entry_price);
        cli_json_double(&j, "stop", o->stop);
        cli_json_double(&j, "tp", o->tp);
        cli_json_double(&j, "risk", o->risk);
        cli_json_int(&j, "bars_held", o->bars_held);
        cli_json_end_object(&j);
        j.wrap_depth = 2;
    } else {
        cli_json_null(&j, "open_at_end");
    }
    cli_json_metrics(&j, "metrics", &r->metrics);
    write_json_stats(&j, s, r, rel);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

/* How the trades closed explains a win rate against an average R (a 2R
 * target hit 40% of the time loses when time exits and fees eat the rest);
 * the other figures are the ones every backtest tool shows. */
static void write_summary_stats(FILE *f, const sebt_series *s, const sebt_result *r)
{
    sebt_trade_stats st;
    sebt_trade_stats_of(s, r, &st);
    fprintf(f, "  %-11s", "exits");
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        fprintf(f, "%s %s %" PRId64, k ? "," : "", sebt_exit_reason_name((sebt_exit_reason)k), st.exits[k]);
    fputs("   trades by how they closed: opened through the stop, stop, target, max_hold\n", f);
    if (isnan(st.profit_factor))
        fprintf(f, "  %-11s %12s   gross profit / gross loss: undefined, no trade lost\n", "profit f.", "-");
    else
        fprintf(f, "  %-11s %12.4f   gross profit / gross loss (%.6g / %.6g)\n", "profit f.", st.profit_factor,
                st.gross_profit, -st.gross_loss);
    fprintf(f, "  %-11s %11.1f%%   of the valid bars with a position held (%" PRId64 " of %zu)\n", "exposure",
            100.0 * st.exposure, st.bars_in_market, r->valid_bars);
    fprintf(f, "  %-11s %12.4f   the per-trade Sharpe x sqrt(trades per year) over the series' %.2f "
               "years\n", "sharpe/yr", st.sharpe_annual, st.years);
}

/* The summary says what each figure means, one line each, because the
 * figures disagree in ways that look like bugs: pnl adds price units (a
 * trade at 60,000 weighs fifteen times one at 4,000) while R and the
 * Sharpe weigh every trade alike, so their signs can differ. */
/* The relative measures, one a line: a percent, a count of bars (with
 * its days), or a ratio; "-" where undefined. */
static void write_relative(FILE *f, const sebt_series *s, const sebt_relative_stats *rel)
{
    fprintf(f, "relative: trade returns (pnl / entry price) compounded from a capital of %.10g at %.4g of the "
               "equity a trade, marked at exits\n", rel->capital, rel->fraction);
    for (int i = 2; i < SEBT_N_RELATIVE; i++) {
        const sebt_relative_field *fd = &sebt_relative_fields[i];
        double v = sebt_relative_value(rel, i);
        size_t len = strlen(fd->name);
        bool pct = len > 4 && strcmp(fd->name + len - 4, "_pct") == 0;
        char value[48];
        if (isnan(v) || (fd->count && v < 0))
            snprintf(value, sizeof value, "%12s ", "-");
        else if (pct)
            snprintf(value, sizeof value, "%11.2f%%", v);
        else if (fd->count)
            snprintf(value, sizeof value, "%12.0f ", v);
        else
            snprintf(value, sizeof value, "%12.4f ", v);
        fprintf(f, "  %-18s %s  %s", fd->name, value, fd->what);
        if (fd->count && v >= 0 && s->interval_ms > 0)
            fprintf(f, " (%.1f days)", v * (double)s->interval_ms / 86400000.0);
        fputc('\n', f);
    }
}

static void write_summary(FILE *f, const char *backend, const sebt_series *s, const sebt_result *r,
                          const sebt_relative_stats *rel)
{
    const sebt_metrics *m = &r->metrics;
    char first[40] = "-", last[40] = "-";
    if (s->n) {
        cli_format_utc(s->ts[0], first, sizeof first);
        cli_format_utc(s->ts[s->n - 1], last, sizeof last);
    }
    cli_gaps g;
    cli_find_gaps(s, &g);
    fprintf(f, "summary: %" PRId64 " trade%s, backend %s, %zu bars %s .. %s (%zu valid, %zu missing",
            m->n, m->n == 1 ? "" : "s", backend, s->n, first, last, r->valid_bars, s->n_missing);
    if (g.gaps)
        fprintf(f, "; %zu timestamp gap%s of %llu bars not filled", g.gaps, g.gaps == 1 ? "" : "s",
                (unsigned long long)g.bars);
    fputs(")\n", f);
    /* Return per trade on the money put in: pnl over the entry price. */
    double ret = 0.0;
    size_t n_ret = 0;
    for (size_t k = 0; k < r->n_trades; k++) {
        if (r->trades[k].entry_price > 0) {   /* a price of 0 is allowed (SPEC §1) */
            ret += r->trades[k].pnl / r->trades[k].entry_price;
            n_ret++;
        }
    }
    if (n_ret)
        ret = 100.0 * ret / (double)n_ret;
    fprintf(f, "  %-11s %12.6g   price units (quote currency per 1 unit of the asset), summed over the "
               "trades, after fees and slippage\n", "total pnl", m->total_pnl);
    fprintf(f, "  %-11s %11.1f%%   of trades closed with pnl > 0\n", "win rate", 100.0 * m->win_rate);
    fprintf(f, "  %-11s %+11.3f%%   mean of pnl / entry price: the return of one trade on the money "
               "put in\n", "avg return", ret);
    fprintf(f, "  %-11s %12.4f   mean R, R = pnl / risk (risk = entry - stop: R -1 is a full "
               "stop-out, R 2 a target at reward_r 2)\n", "avg R", m->avg_r);
    fprintf(f, "  %-11s %12.6g   the deepest fall of cumulative pnl from its running peak, price "
               "units\n", "max dd", m->max_dd);
    fprintf(f, "  %-11s %12.4f   mean R / sample std of R over the %" PRId64 " trade%s: per trade, "
               "not annualised, no risk-free rate\n", "sharpe", m->sharpe, m->n, m->n == 1 ? "" : "s");
    write_summary_stats(f, s, r);
    write_relative(f, s, rel);
    if ((m->total_pnl > 0 && (m->avg_r < 0 || m->sharpe < 0)) ||
        (m->total_pnl < 0 && (m->avg_r > 0 || m->sharpe > 0)))
        fprintf(f, "  total pnl and R disagree in sign: pnl weighs each trade by its price level and "
                   "stop distance, R and the Sharpe weigh every trade alike\n");
}

static bool same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* --combo FILE:ID without --set: the run must give what the sweep wrote,
 * or one of the two is not what the user thinks (other data, other
 * loading options, a backend that disagrees). */
/* The first analysis column of r (over s) that differs from the sweep's
 * row, into *name, *got, *wrote; false when none does. */
static bool analysis_differs(const sebt_series *s, const sebt_result *r, const sebt_trade_stats *w, const char **name,
                             double *got, double *wrote)
{
    sebt_trade_stats mine;
    sebt_trade_stats_of(s, r, &mine);
    sebt_error e = { 0 };
    /* The sweep's relative columns are at the default capital and fraction. */
    mine.has_relative = w->has_relative && sebt_relative_stats_of(s, r, NULL, &mine.relative, &e) == SEBT_OK;
    for (int i = 0; i < sebt_sweep_extra_count(sebt_sweep_row_cols(w)); i++)
        if (!same_bits(*got = sebt_sweep_analysis_value(&mine, i), *wrote = sebt_sweep_analysis_value(w, i))) {
            *name = sebt_sweep_analysis_name(i);
            return true;
        }
    return false;
}

static int check_against_sweep(const char *cmd, const cli_combo_args *a, const char *backend, const sebt_series *s,
                               const sebt_result *r)
{
    const sebt_metrics *m = &r->metrics, *w = &a->sweep_row.metrics;
    const char *name = NULL;
    double got = 0, wrote = 0;
    if (m->n != w->n) {
        name = "n";
        got = (double)m->n;
        wrote = (double)w->n;
    }
    for (int k = 1; k < SEBT_N_METRICS && !name; k++)
        if (!same_bits(got = sebt_metric_value(m, k), wrote = sebt_metric_value(w, k)))
            name = sebt_metric_name(k);
    if (!name && r->valid_bars != a->sweep_row.valid_bars) {
        name = "valid_bars";
        got = (double)r->valid_bars;
        wrote = (double)a->sweep_row.valid_bars;
    }
    if (!name && (uint64_t)r->open_at_end.open != a->sweep_row.open_at_end) {
        name = "open_at_end";
        got = r->open_at_end.open;
        wrote = (double)a->sweep_row.open_at_end;
    }
    bool analysis = a->sweep_row.has_analysis;
    if (!name && analysis)
        analysis_differs(s, r, &a->sweep_row.analysis, &name, &got, &wrote);
    if (!name) {
        fprintf(stderr, "sebt %s: combo %" PRIu64 " of %s: this run's metrics%s equal the sweep's row, bit for bit\n",
                cmd, a->sweep_combo, a->sweep_file,
                !analysis ? "" : a->sweep_row.analysis.has_relative ? ", analysis and relative columns"
                                                                    : " and analysis columns");
        return CLI_EXIT_OK;
    }
    /* A file without a parameter's column gave it its default: when the
     * sweep ran it otherwise, that is the cause, not the data. */
    char missing[SEBT_N_PARAMS * 24] = "";
    size_t k = 0;
    for (int i = 0; i < SEBT_N_PARAMS && k < sizeof missing; i++)
        if (!a->sweep_param_column[i])
            k += (size_t)snprintf(missing + k, sizeof missing - k, "%s%s", k ? ", " : "", sebt_param_table[i].name);
    fprintf(stderr, "sebt %s: error: combo %" PRIu64 " of %s: this run (backend %s) gives %s = %.17g where the "
            "sweep wrote %.17g: ", cmd, a->sweep_combo, a->sweep_file, backend, name, got, wrote);
    if (*missing)
        fprintf(stderr, "the file has no column for %s, which this run took at %s SPEC default; or ", missing,
                strchr(missing, ',') ? "their" : "its");
    fprintf(stderr, "other data or loading options (--data, --fill-gaps, --lenient) than the sweep's, or backends "
            "that disagree (sebt parity)\n");
    return CLI_EXIT_CHECK_FAILED;
}

static void write_text(FILE *f, const char *backend, const sebt_series *s, const sebt_result *r,
                       const sebt_relative_stats *rel)
{
    char sig[40], ent[40], ex[40];
    if (r->n_trades) {
        fprintf(f, "%5s  %-20s  %-20s  %-20s  %14s  %14s  %14s  %14s  %12s  %8s  %-8s  %4s\n", "#",
                "signal (UTC)", "entry (UTC)", "exit (UTC)", "entry", "exit", "stop", "tp", "pnl",
                "R", "reason", "bars");
    }
    for (size_t k = 0; k < r->n_trades; k++) {
        const sebt_trade *t = &r->trades[k];
        cli_format_utc(s->ts[t->signal_index], sig, sizeof sig);
        cli_format_utc(s->ts[t->entry_index], ent, sizeof ent);
        cli_format_utc(s->ts[t->exit_index], ex, sizeof ex);
        fprintf(f, "%5zu  %-20s  %-20s  %-20s  %14.8g  %14.8g  %14.8g  %14.8g  %12.6g  %8.4f  %-8s  %4d\n",
                k + 1, sig, ent, ex, t->entry_price, t->exit_price, t->stop, t->tp, t->pnl, t->r,
                sebt_exit_reason_name(t->reason), (int)t->bars_held);
    }
    const sebt_open_position *o = &r->open_at_end;
    if (o->open) {
        cli_format_utc(s->ts[o->signal_index], sig, sizeof sig);
        cli_format_utc(s->ts[o->entry_index], ent, sizeof ent);
        fprintf(f, "open at end (not a trade): signal %s, entry %s at %.8g, stop %.8g, tp %.8g, %d bars held\n",
                sig, ent, o->entry_price, o->stop, o->tp, (int)o->bars_held);
    }
    write_summary(f, backend, s, r, rel);
}

int cli_cmd_run(int argc, char **argv)
{
    const char *cmd = argv[0];
    cli_combo_args a;
    int rc = cli_parse_combo_args(&cli_cmd_run_spec, argc, argv, &a);
    if (rc >= 0)
        return rc;

    run_format format = FORMAT_JSON;
    if (a.format) {
        if (strcmp(a.format, "json") == 0)
            format = FORMAT_JSON;
        else if (strcmp(a.format, "csv") == 0)
            format = FORMAT_CSV;
        else if (strcmp(a.format, "text") == 0)
            format = FORMAT_TEXT;
        else
            return cli_usage_error(cmd, "--format %s: expected json, csv or text", a.format);
    }

    sebt_series s = { 0 };
    const sebt_backend *b;
    if ((rc = cli_combo_open(cmd, &a, &s, &b)) != CLI_EXIT_OK)
        return rc;

    sebt_batch_opts opts = { .threads = 0, .want_trades = true };
    sebt_result result;
    memset(&result, 0, sizeof result);
    sebt_error err = { 0 };
    if (sebt_backend_run(b, &s, &a.params, 1, &opts, &result, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }
    if (result.n_trades && !result.trades) {
        fprintf(stderr, "sebt run: error: backend %s reported %zu trades but returned none "
                        "(a bug in the backend)\n", b->name, result.n_trades);
        rc = CLI_EXIT_CHECK_FAILED;
        goto done;
    }
    rc = cli_check_result(cmd, 0, &a.params, &result);
    if (rc == CLI_EXIT_OK && a.sweep_file[0] && !a.sets)
        rc = check_against_sweep(cmd, &a, b->name, &s, &result);
    if (rc != CLI_EXIT_OK)
        goto done;

    sebt_relative_stats rel;
    if (sebt_relative_stats_of(&s, &result, &a.relative, &rel, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }
    FILE *f = cli_open_output(cmd, a.output);
    if (!f) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    switch (format) {
    case FORMAT_JSON: write_json(f, b->name, &a.params, &s, &result, &rel); break;
    case FORMAT_CSV: cli_write_trades_csv(f, &s, &result); break;
    case FORMAT_TEXT: write_text(f, b->name, &s, &result, &rel); break;
    }
    if (cli_close_output(f) != 0)
        rc = CLI_EXIT_USAGE;

done:
    sebt_result_free(&result);
    sebt_series_free(&s);
    return rc;
}

static const char *const run_formats[] = { "json", "csv", "text", NULL };

static const cli_opt run_opts[] = {
    [COMBO_DATA] = { "--data", CLI_FILE, "FILE", "CSV with a header, or a Binance kline file; .gz is read as gzip" },
    [COMBO_SET] = { "--set", CLI_ASSIGN, "NAME=VALUE",
                    "a parameter of the strategy (repeatable); booleans true|false;\n"
                    "the names, defaults and rules are listed below", .flags = CLI_REPEAT },
    [COMBO_PICK] = { "--combo", CLI_TEXT, "FILE:ID", "the parameters of combo ID (the 'combo' column) of a sweep's\n"
                     "CSV or npy output; --set then changes some. Without --set\n"
                     "the run must give the sweep's metrics (else exit 1)" },
    [COMBO_BACKEND] = { "--backend", CLI_TEXT, "NAME", "reference, fast_cpu, cuda, cpu|gpu|auto, a plugin's path, or\n"
                        "exec:CMD, a kernel command ('exec:python3 mine.py',\n"
                        "docs/kernel-protocol.md) (default: BACKTEST_BACKEND, else cpu)", .complete = cli_backend_words },
    [COMBO_OUTPUT] = { "--output", CLI_FILE, "FILE", "write there instead of stdout" },
    [COMBO_LENIENT] = { "--lenient", CLI_FLAG, NULL,
                        "keep a bad row as a missing bar (counted on stderr) instead of failing" },
    [COMBO_FILL_GAPS] = { "--fill-gaps", CLI_FLAG, NULL, "insert missing bars where timestamps skip (without it, gaps are\n"
                          "counted in a warning on stderr)" },
    [COMBO_FORMAT] = { "--format", CLI_CHOICE, "FMT", "json (default; the stable machine format), csv (one row per\n"
                       "trade) or text (aligned columns, then a summary that says what\n"
                       "each figure means)", .choices = run_formats },
    [COMBO_CAPITAL] = { "--capital", CLI_REAL, "X", "the equity before the first trade, for the relative measures\n"
                        "(default 10000)", .rmin = 0, .rmax = 1e15, .flags = CLI_ABOVE_MIN },
    [COMBO_FRACTION] = { "--fraction", CLI_REAL, "F", "the share of the equity put in each trade, in (0, 1]\n"
                         "(default 1: all of it, no leverage)", .rmin = 0, .rmax = 1, .flags = CLI_ABOVE_MIN },
};

const cli_command cli_cmd_run_spec = {
    .name = "run",
    .summary = "one backtest of one combo over a data file",
    .usage = "--data FILE [--combo FILE:ID] [--set NAME=VALUE]... [--backend NAME] [--format json|csv|text] [--output FILE] [--lenient] [--fill-gaps] [--capital X] [--fraction F]\n",
    .about = "One backtest of one parameter combo over a data file.\n",
    .opts = CLI_OPTS(run_opts),
    .epilog = "Exit codes: 0 ok, 1 --combo's run differs from its sweep's row, 2 bad usage,\n"
              "parameter or input, 3 no usable GPU.\n",
    .epilog_fn = cli_print_param_table,
    .fn = cli_cmd_run,
};
