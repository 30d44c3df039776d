/* `sebt walkforward`: rolling train and test windows; on each train window
 * the grid is swept and the best combo under --where by --by is picked, then
 * run on the test window after it; the test windows' trades, chained, are
 * one out-of-sample result. The picks and a sample of the grid are run again
 * on the reference and must agree bit for bit. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/oos_check.h"
#include "oos_cli.h"
#include "sweep.h"

enum { OPT_TRAIN = OOS_N_SHARED, OPT_TEST, OPT_CHECK, OPT_TRADES, OPT_FORMAT, OPT_OVERFIT, OPT_OVERFIT_BLOCKS };

typedef struct {
    const char *train_text, *test_text, *trades;
    bool json;
    size_t sample;
    int64_t train, test;          /* the windows' lengths in ms: a skipped window's times */
    /* The reference check: not run on the reference itself. */
    bool checked, agreed;
    size_t compared;
    sebt_error check_err;
    /* --overfit: a record per window with train bars (done[k]), 0 blocks without. */
    int blocks;
    sebt_overfit *overfit;
    bool *done;
    cli_wf_overfit_summary overfit_sum;
} wf_cli;

/* Why window w is skipped, or NULL. */
static const char *skip_reason(const sebt_wf_window *w)
{
    if (!sebt_wf_window_skipped(w))
        return NULL;
    return w->train_to == w->train_from ? "no bars in its train span" : "no bars in its test span";
}

static void json_window(cli_json *j, const sebt_series *s, const wf_cli *c, const sebt_wf_window *w, size_t k)
{
    cli_json_begin_object(j, NULL);
    cli_json_int(j, "window", (int64_t)k + 1);
    cli_json_int(j, "train_from", (int64_t)w->train_from);
    cli_json_int(j, "train_to", (int64_t)w->train_to);
    cli_json_int(j, "test_from", (int64_t)w->test_from);
    cli_json_int(j, "test_to", (int64_t)w->test_to);
    cli_json_int(j, "test_start_ts", w->test_from < s->n ? s->ts[w->test_from] : 0);
    cli_json_int(j, "passing", (int64_t)w->passing);
    cli_json_bool(j, "picked", w->picked);
    if (skip_reason(w))
        cli_json_string(j, "skipped", skip_reason(w));
    if (w->picked) {
        cli_json_int(j, "combo", (int64_t)w->combo);
        cli_json_params(j, "params", &w->params);
        cli_json_metrics(j, "train", &w->train.metrics);
        cli_json_metrics(j, "test", &w->test.metrics);
        cli_json_bool(j, "train_few_trades", w->train.metrics.n < SEBT_FEW_TRADES);
        cli_json_bool(j, "test_few_trades", w->test.metrics.n < SEBT_FEW_TRADES);
        cli_json_bool(j, "test_open_at_end", w->test.open_at_end.open);
    }
    if (c->blocks && c->done[k])
        sweep_overfit_json(j, &c->overfit[k]);
    else if (c->blocks)
        cli_json_null(j, "overfit");
    cli_json_end_object(j);
}

static void json_report(FILE *f, const cli_oos_job *jb, const wf_cli *c, const sebt_wf_result *r)
{
    cli_json j;
    cli_json_init(&j, f, 2);
    cli_json_begin_object(&j, NULL);
    cli_json_schema(&j, "walkforward");
    cli_json_string(&j, "data", jb->data);
    cli_json_int(&j, "bars", (int64_t)jb->s.n);
    cli_json_string(&j, "backend", jb->b->name);
    cli_json_string(&j, "train", c->train_text);
    cli_json_string(&j, "test", c->test_text);
    cli_json_string(&j, "by", sebt_metric_name(jb->metric));
    if (jb->where_text)
        cli_json_string(&j, "where", jb->where_text);
    else
        cli_json_null(&j, "where");
    cli_json_int(&j, "combos", (int64_t)jb->n_combos);
    cli_json_begin_array(&j, "windows");
    for (size_t k = 0; k < r->n_windows; k++)
        json_window(&j, &jb->s, c, &r->windows[k], k);
    cli_json_end_array(&j);
    cli_json_metrics(&j, "chained", &r->metrics);
    cli_json_bool(&j, "chained_few_trades", r->metrics.n < SEBT_FEW_TRADES);
    if (c->blocks)
        cli_wf_overfit_json(&j, &c->overfit_sum, c->blocks);
    cli_json_begin_object(&j, "check");
    cli_json_bool(&j, "run", c->checked);
    cli_json_int(&j, "compared", (int64_t)c->compared);
    cli_json_bool(&j, "agreed", c->agreed);
    cli_json_end_object(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

static void text_window(FILE *f, const sebt_series *s, const wf_cli *c, const sebt_wf_window *w, size_t k)
{
    char a[40], b[40];
    if (skip_reason(w)) {   /* only windows in time have spans without bars: their nominal start */
        int64_t t0 = s->ts[0] + (int64_t)k * c->test;
        cli_oos_minute(t0, a, sizeof a);
        cli_oos_minute(t0 + c->train, b, sizeof b);
        fprintf(f, "%4zu  %s  %s  %8s  window %zu: %s: skipped\n", k + 1, a, b, "-", k + 1, skip_reason(w));
        return;
    }
    cli_oos_minute(s->ts[w->train_from], a, sizeof a);
    cli_oos_minute(w->test_from < s->n ? s->ts[w->test_from] : 0, b, sizeof b);
    fprintf(f, "%4zu  %s  %s  %8zu", k + 1, a, b, w->passing);
    if (!w->picked) {
        fputs("  (none meets the condition: no trades)\n", f);
        return;
    }
    const sebt_metrics *m = &w->test.metrics;
    fprintf(f, " %9" PRIu64 " %6" PRId64 " %7.3f%s | %6" PRId64 " %6.3f %7.3f %10.2f %10.2f %7.3f%s\n", w->combo,
            w->train.metrics.n, sebt_metric_value(&w->train.metrics, SEBT_METRIC_SHARPE),
            cli_oos_few_mark(w->train.metrics.n, false), m->n, m->win_rate, m->avg_r, m->total_pnl, m->max_dd,
            m->sharpe, cli_oos_few_mark(m->n, true));
}

/* The picks' parameters (those that differ between picks first). */
static void text_picks(FILE *f, const sebt_wf_result *r)
{
    size_t n = 0, cap = r->n_windows;
    sebt_params *p = malloc(cap * sizeof *p);
    char (*label)[48] = malloc(cap * sizeof *label);
    const char **labels = malloc(cap * sizeof *labels);
    for (size_t k = 0; p && label && labels && k < r->n_windows; k++) {
        if (!r->windows[k].picked)
            continue;
        p[n] = r->windows[k].params;
        snprintf(label[n], sizeof label[n], "window %zu (combo %" PRIu64 ")", k + 1, r->windows[k].combo);
        labels[n] = label[n];
        n++;
    }
    if (n) {
        fputs("\nthe picks' parameters:\n", f);
        cli_oos_print_params(f, p, labels, n);
    }
    free(p);
    free(label);
    free(labels);
}

/* One summary of the picks and a plain verdict on the chained result
 * (with --overfit, on the train windows' selections too). */
static void text_summary(FILE *f, const wf_cli *c, const sebt_wf_result *r)
{
    double *train = malloc((r->n_windows + 1) * sizeof *train), *test = malloc((r->n_windows + 1) * sizeof *test);
    size_t n = 0, above = 0;
    for (size_t k = 0; train && test && k < r->n_windows; k++) {
        if (!r->windows[k].picked)
            continue;
        train[n] = r->windows[k].train.metrics.sharpe;
        test[n] = r->windows[k].test.metrics.sharpe;
        above += test[n] > 0;
        n++;
    }
    if (train && test && n) {
        double mtr = cli_oos_median(train, n), mte = cli_oos_median(test, n);
        fprintf(f, "\nsummary: %zu windows with a pick: median sharpe %.3f on their train windows, %.3f on their "
                   "test windows (%+.3f); %zu of %zu tests above 0\n", n, mtr, mte, mte - mtr, above, n);
    }
    free(train);
    free(test);
    const cli_wf_overfit_summary *o = &c->overfit_sum;
    if (c->blocks)
        fprintf(f, "overfitting: %zu train windows: median DSR %.3f, median PBO %.3f; %zu of %zu windows' best "
                   "stand out from luck\n", o->windows, o->median_dsr, o->median_pbo, o->stand_out, o->windows);
    const sebt_metrics *m = &r->metrics;
    const char *v = m->n < SEBT_FEW_TRADES ? "too few trades out of sample to judge (fewer than 10 chained)"
                    : !(m->sharpe > 0)     ? "the walk-forward picks lose out of sample: no edge shown"
                                           : "the walk-forward picks keep a positive Sharpe out of sample";
    fprintf(f, "verdict: %s", v);
    if (c->blocks)
        fprintf(f, "; %s", o->median_dsr >= 0.95 && o->median_pbo < 0.5
                               ? "the train windows' best combos stand out from luck (median DSR >= 0.95, "
                                 "median PBO < 0.5)"
                               : "the train windows' best combos may well be flukes (median DSR < 0.95 or "
                                 "median PBO >= 0.5)");
    fputc('\n', f);
}

static void text_report(FILE *f, const cli_oos_job *jb, const wf_cli *c, const sebt_wf_result *r)
{
    const sebt_wf_window *last = &r->windows[r->n_windows - 1];
    fprintf(f, "walk-forward on %s (%zu bars), %zu combos: train %s, test %s, rolling;\n", jb->data, jb->s.n,
            jb->n_combos, c->train_text, c->test_text);
    fprintf(f, "each window picks the best train %s%s%s\n", sebt_metric_name(jb->metric),
            jb->where_text ? " among combos meeting: " : "", jb->where_text ? jb->where_text : "");
    fprintf(f, "%zu windows; bars %zu .. %zu tested, %zu after the last whole test window not tested\n\n",
            r->n_windows, r->windows[0].test_from, last->test_to - 1, jb->s.n - last->test_to);
    fprintf(f, "%4s  %-16s  %-16s  %8s %9s %6s %7s  | %6s %6s %7s %10s %10s %7s\n", "win", "train from", "test from",
            "passing", "combo", "n", "sharpe", "n", "win", "avg_R", "pnl", "max_dd", "sharpe");
    bool few = false;
    for (size_t k = 0; k < r->n_windows; k++) {
        const sebt_wf_window *w = &r->windows[k];
        text_window(f, &jb->s, c, w, k);
        few |= w->picked && (w->train.metrics.n < SEBT_FEW_TRADES || w->test.metrics.n < SEBT_FEW_TRADES);
    }
    cli_oos_few_footnote(f, few);
    text_picks(f, r);
    const sebt_metrics *m = &r->metrics;
    fprintf(f, "\nchained out of sample: %" PRId64 " trades, win_rate %.4f, avg_R %.4f, total_pnl %.2f, "
            "max_dd %.2f, sharpe %.4f%s\n", m->n, m->win_rate, m->avg_r, m->total_pnl, m->max_dd, m->sharpe,
            cli_oos_few_mark(m->n, true));
    cli_oos_few_footnote(f, m->n < SEBT_FEW_TRADES);
    if (c->checked)
        fprintf(f, "reference check: %zu runs (each pick on its train and test window, %zu sampled combos on "
                "each train window) %s\n", c->compared, r->n_sample,
                c->agreed ? "agree bit for bit" : "DISAGREE");
    else
        fputs("reference check: not run (the backend is the reference)\n", f);
    if (c->blocks)
        cli_wf_overfit_text(f, c->overfit, c->done, r->n_windows);
    text_summary(f, c, r);
}

static int write_trades(const cli_oos_job *jb, const char *path, const sebt_wf_result *r)
{
    FILE *f = cli_open_output(jb->cmd, path);
    if (!f)
        return CLI_EXIT_USAGE;
    sebt_result chained = { .metrics = r->metrics, .n_trades = r->n_trades, .trades = r->trades };
    cli_write_trades_csv(f, &jb->s, &chained);
    return cli_close_output(f) != 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

static int report(cli_oos_job *jb, wf_cli *c, const sebt_wf_result *r)
{
    if (c->trades) {
        int rc = write_trades(jb, c->trades, r);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    FILE *f = cli_open_output(jb->cmd, jb->output);
    if (!f)
        return CLI_EXIT_USAGE;
    if (c->json)
        json_report(f, jb, c, r);
    else
        text_report(f, jb, c, r);
    if (cli_close_output(f) != 0)
        return CLI_EXIT_USAGE;
    if (c->checked && !c->agreed) {
        fprintf(stderr, "sebt %s: the reference disagrees: %s\n", jb->cmd, c->check_err.msg);
        return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_OK;
}

/* --overfit: each train window's selection measured over every combo on
 * its train bars, a series of their own as the window backtests them. */
static int window_overfit(cli_oos_job *jb, wf_cli *c, const sebt_wf_result *r)
{
    c->overfit = calloc(r->n_windows + 1, sizeof *c->overfit);
    c->done = calloc(r->n_windows + 1, sizeof *c->done);
    if (!c->overfit || !c->done) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu windows' overfitting records\n", jb->cmd,
                r->n_windows);
        return CLI_EXIT_NOMEM;
    }
    for (size_t k = 0; k < r->n_windows; k++) {
        const sebt_wf_window *w = &r->windows[k];
        if (w->train_to == w->train_from)
            continue;
        int rc = cli_oos_overfit(jb, w->train_from, w->train_to - w->train_from, c->blocks, &c->overfit[k]);
        if (rc != CLI_EXIT_OK)
            return rc;
        c->done[k] = true;
    }
    cli_wf_overfit_medians(c->overfit, c->done, r->n_windows, &c->overfit_sum);
    return CLI_EXIT_OK;
}

static void wf_cli_free(wf_cli *c, size_t n_windows)
{
    for (size_t k = 0; c->done && k < n_windows; k++)
        if (c->done[k])
            sebt_overfit_free(&c->overfit[k]);
    free(c->overfit);
    free(c->done);
}

static int run_walkforward(cli_oos_job *jb, wf_cli *c, const sebt_wf_opts *base)
{
    cli_progress bar;
    cli_progress_init(&bar, "walkforward");
    cli_progress_units(&bar, "windows", 1);
    sebt_wf_opts o = *base;
    o.grid = jb->grid;
    o.combos = jb->combos;
    o.n_combos = jb->n_combos;
    o.metric = jb->metric;
    o.where = jb->where;
    o.threads = jb->threads;
    o.sample = c->sample;
    o.progress = cli_progress_update;
    o.progress_user = &bar;
    sebt_wf_result r;
    sebt_error err = { 0 };
    sebt_status st = sebt_walkforward_run(jb->b, &jb->s, &o, &r, &err);
    cli_progress_finish(&bar);
    if (st)
        return cli_report_error(jb->cmd, &err);
    char what[300];
    int edges = sebt_wf_edges_agree(&jb->s, &o, &r, what, sizeof what);
    if (edges != 1) {
        sebt_walkforward_free(&r);
        fprintf(stderr, "sebt %s: error: %s%s; nothing is written\n", jb->cmd,
                edges < 0 ? "" : "verification failed: ", what);
        return edges < 0 ? CLI_EXIT_NOMEM : CLI_EXIT_CHECK_FAILED;
    }
    const sebt_backend *ref = NULL;
    if (sebt_backend_get("reference", &ref, &err) != SEBT_OK) {
        sebt_walkforward_free(&r);
        return cli_report_error(jb->cmd, &err);
    }
    c->checked = strcmp(jb->b->name, ref->name) != 0;
    if (c->checked) {
        st = sebt_walkforward_check(ref, &jb->s, &r, &c->compared, &c->check_err);
        if (st && st != SEBT_ERR_INTERNAL) {
            sebt_walkforward_free(&r);
            return cli_report_error(jb->cmd, &c->check_err);
        }
        c->agreed = st == SEBT_OK;
    }
    int rc = c->blocks ? window_overfit(jb, c, &r) : CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK)
        rc = report(jb, c, &r);
    wf_cli_free(c, r.n_windows);
    sebt_walkforward_free(&r);
    return rc;
}

int cli_cmd_walkforward(int argc, char **argv)
{
    const char *cmd = argv[0];
    cli_args a;
    cli_oos_job jb;
    int rc = cli_parse(&cli_cmd_walkforward_spec, argc, argv, &a);
    if (rc >= 0 || (rc = cli_oos_args(cmd, &a, &jb)) >= 0)
        return rc;
    wf_cli c = { .train_text = cli_str(&a, OPT_TRAIN), .test_text = cli_str(&a, OPT_TEST),
                 .trades = cli_str(&a, OPT_TRADES), .sample = cli_given(&a, OPT_CHECK) ? a.v[OPT_CHECK].u : 16,
                 .json = cli_given(&a, OPT_FORMAT) && strcmp(cli_str(&a, OPT_FORMAT), "json") == 0 };
    if (!c.train_text || !c.test_text)
        return cli_usage_error(cmd, "--train LEN and --test LEN are required");
    sebt_wf_opts o = { 0 };
    bool train_time, test_time;
    if ((rc = cli_oos_parse_span(cmd, "--train", c.train_text, &o.train, &train_time)) != CLI_EXIT_OK ||
        (rc = cli_oos_parse_span(cmd, "--test", c.test_text, &o.test, &test_time)) != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_oos_overfit_blocks(cmd, &a, OPT_OVERFIT, OPT_OVERFIT_BLOCKS, &c.blocks)) >= 0)
        return rc;
    if (train_time != test_time)
        return cli_usage_error(cmd, "--train %s and --test %s: give both in bars or both in time", c.train_text,
                               c.test_text);
    o.by_time = train_time;
    c.train = o.train;
    c.test = o.test;
    jb.trades = c.trades;
    rc = cli_oos_open(&jb);
    if (rc == CLI_EXIT_OK)
        rc = run_walkforward(&jb, &c, &o);
    cli_oos_close(&jb);
    return rc;
}

static const cli_opt walkforward_opts[] = {
    OOS_SHARED_OPTS("what picks each train window's best: sharpe (default), n,\n"
                    "win_rate, avg_r, total_pnl, max_dd (higher is better; ties to\n"
                    "the lower combo index)"),
    [OPT_TRAIN] = { "--train", CLI_TEXT, "LEN", "train window: N bars, or N with m, h, d or w of time (365d)" },
    [OPT_TEST] = { "--test", CLI_TEXT, "LEN", "test window after it, and the step between windows (90d)" },
    [OPT_CHECK] = { "--check", CLI_UINT, "N", "combos of the grid, evenly spaced, run again on the reference\n"
                    "on every train window beside each pick (default 16; 0: the picks\n"
                    "only); any difference exits 1", .umin = 0, .umax = 100000 },
    [OPT_TRADES] = { "--trades", CLI_FILE, "FILE", "write the chained out-of-sample trades there as CSV" },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "text (default) or json", .choices = cli_text_json },
    [OPT_OVERFIT] = { "--overfit", CLI_FLAG, NULL, "is each train window's best a fluke? `sebt sweep --overfit`'s\n"
                      "DSR and PBO over every combo on each train window's bars: a\n"
                      "table, their medians in the summary and the verdict, JSON\n"
                      "\"overfit\" per window (docs/formats.md, \"Overfitting\")" },
    [OPT_OVERFIT_BLOCKS] = { "--overfit-blocks", CLI_UINT, "S", "PBO's blocks of each train window: even, 2 to 24\n"
                             "(default 16)", .umin = 2, .umax = SEBT_OVERFIT_MAX_BLOCKS },
};

const cli_command cli_cmd_walkforward_spec = {
    .name = "walkforward",
    .summary = "walk-forward: pick on each train window, trade the next test window",
    .usage = "--data FILE (--grid FILE | --combos FILE) --train LEN --test LEN [--where COND] [options]\n",
    .about = "Rolling windows: window k trains on LEN bars (or time) from k x test after the\n"
             "start and tests on the test span after it; only whole test spans are run. On\n"
             "each train window the grid is swept (each window a series of its own) and the\n"
             "best combo by --by among those meeting --where is picked; it is run on its test\n"
             "window with its trades. The test windows' trades, chained, are one result with\n"
             "SPEC section 7 metrics. Every pick, and --check N combos of the grid on every\n"
             "train window, are run again on the reference and must agree bit for bit.\n",
    .opts = CLI_OPTS(walkforward_opts),
    .epilog = "Exit codes: 0 ok, 1 the reference disagrees, 2 bad usage or input, 3 no usable GPU.\n",
    .fn = cli_cmd_walkforward,
};
