/* `sebt split`: every combo of a grid backtested on the bars before a date
 * (in sample) and on the bars from it on (out of sample), each part a series
 * of its own (docs/decisions.md), the two results side by side: as CSV, or
 * for people the in-sample winners with their out-of-sample numbers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/oos_check.h"
#include "oos_cli.h"
#include "sweep.h"

enum { OPT_SPLIT = OOS_N_SHARED, OPT_TOP, OPT_FORMAT, OPT_OVERFIT, OPT_OVERFIT_BLOCKS };
static const char *const split_formats[] = { "csv", "text", NULL };

static void csv_header(FILE *f)
{
    fputs("combo", f);
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        fprintf(f, ",%s", sebt_param_table[i].name);
    const char *side[] = { "is_", "oos_" };
    for (int k = 0; k < 2; k++) {
        for (int m = 0; m < SEBT_N_METRICS; m++)
            fprintf(f, ",%s%s", side[k], sebt_metric_name(m));
        fprintf(f, ",%sopen_at_end,%svalid_bars", side[k], side[k]);
    }
    fputc('\n', f);
}

static void csv_side(FILE *f, const sebt_result *r)
{
    fprintf(f, ",%" PRId64, r->metrics.n);
    for (int m = SEBT_METRIC_WIN_RATE; m < SEBT_N_METRICS; m++) {
        fputc(',', f);
        cli_print_double(f, sebt_metric_value(&r->metrics, m));
    }
    fprintf(f, ",%d,%zu", r->open_at_end.open ? 1 : 0, r->valid_bars);
}

static void csv_row(FILE *f, uint64_t combo, const sebt_params *p, const sebt_result *is, const sebt_result *oos)
{
    char v[64];
    fprintf(f, "%" PRIu64, combo);
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        sebt_params_format(p, i, v, sizeof v);
        fprintf(f, ",%s", v);
    }
    csv_side(f, is);
    csv_side(f, oos);
    fputc('\n', f);
}

typedef struct {
    FILE *f;
    const sebt_where *where;
    bool header_done;
} csv_writer;

/* The header waits for the first row or the run's success, so that a split
 * the library refuses (no bars on one side) writes nothing to stdout. */
static void csv_header_once(csv_writer *c)
{
    if (!c->header_done)
        csv_header(c->f);
    c->header_done = true;
}

static int on_window(void *user, const sebt_split_window *w)
{
    csv_writer *c = user;
    csv_header_once(c);
    for (size_t i = 0; i < w->count; i++)
        if (!c->where || sebt_sweep_row_passes(c->where, w->first + i, &w->combos[i], &w->in_sample[i]))
            csv_row(c->f, w->first + i, &w->combos[i], &w->in_sample[i], &w->out_sample[i]);
    return 0;
}

/* --format text: every passing combo's Sharpe on both sides, for the
 * summary's medians. */
typedef struct {
    const sebt_where *where;
    double *is, *oos;
    size_t n, cap;
    bool nomem;
} sharpe_collector;

static int collect_window(void *user, const sebt_split_window *w)
{
    sharpe_collector *c = user;
    for (size_t i = 0; i < w->count; i++) {
        if (c->where && !sebt_sweep_row_passes(c->where, w->first + i, &w->combos[i], &w->in_sample[i]))
            continue;
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 4096;
            double *a = realloc(c->is, cap * sizeof *a), *b = a ? realloc(c->oos, cap * sizeof *b) : NULL;
            if (a)
                c->is = a;
            if (!a || !b) {
                c->nomem = true;
                return 1;
            }
            c->oos = b;
            c->cap = cap;
        }
        c->is[c->n] = w->in_sample[i].metrics.sharpe;
        c->oos[c->n++] = w->out_sample[i].metrics.sharpe;
    }
    return 0;
}

/* One summary and a plain verdict: does the in-sample pick hold out of
 * sample, against the median combo. */
static void text_summary(FILE *f, sharpe_collector *c, const sebt_split_result *r)
{
    if (!r->n_top)
        return;
    double med_is = cli_oos_median(c->is, c->n), med_oos = cli_oos_median(c->oos, c->n);
    const sebt_metrics *is = &r->top[0].in_sample.metrics, *oos = &r->top[0].out_sample.metrics;
    fprintf(f, "\nsummary: the %zu combos meeting the condition: median sharpe %.3f in sample, %.3f out of sample; "
               "the first ranked (combo %" PRIu64 "): %.3f in sample, %.3f out of sample (%+.3f)\n",
            c->n, med_is, med_oos, r->top[0].combo, is->sharpe, oos->sharpe, oos->sharpe - is->sharpe);
    const char *v;
    if (is->n < SEBT_FEW_TRADES || oos->n < SEBT_FEW_TRADES)
        v = "too few trades to judge (fewer than 10 on a side)";
    else if (!(oos->sharpe > med_oos))
        v = "the in-sample pick does no better out of sample than the median combo: its in-sample rank does "
            "not carry over (likely overfit)";
    else if (!(oos->sharpe > 0))
        v = "the in-sample pick beats the median combo out of sample but still loses: no edge shown";
    else
        v = "the in-sample pick keeps a positive Sharpe out of sample, above the median combo";
    fprintf(f, "verdict: %s\n", v);
}

static void text_side(FILE *f, const sebt_metrics *m, bool last)
{
    fprintf(f, " %6" PRId64 " %6.3f %7.3f %10.2f %10.2f %7.3f%s", m->n, m->win_rate, m->avg_r, m->total_pnl, m->max_dd,
            m->sharpe, cli_oos_few_mark(m->n, last));
}

/* The listed combos' parameters (those that differ between them first). */
static void text_params(FILE *f, const sebt_split_result *r)
{
    sebt_params *p = malloc((r->n_top ? r->n_top : 1) * sizeof *p);
    char (*label)[48] = malloc((r->n_top ? r->n_top : 1) * sizeof *label);
    const char **labels = malloc((r->n_top ? r->n_top : 1) * sizeof *labels);
    if (p && label && labels && r->n_top) {
        for (size_t i = 0; i < r->n_top; i++) {
            p[i] = r->top[i].params;
            snprintf(label[i], sizeof label[i], "rank %zu (combo %" PRIu64 ")", i + 1, r->top[i].combo);
            labels[i] = label[i];
        }
        fputc('\n', f);
        cli_oos_print_params(f, p, labels, r->n_top);
    }
    free(p);
    free(label);
    free(labels);
}

static void text_report(FILE *f, const cli_oos_job *j, const sebt_split_result *r)
{
    char a[40], b[40], c[40];
    cli_oos_minute(j->s.ts[0], a, sizeof a);
    cli_oos_minute(j->s.ts[r->cut], b, sizeof b);
    cli_oos_minute(j->s.ts[j->s.n - 1], c, sizeof c);
    fprintf(f, "in sample:     %zu bars, %s .. before %s\nout of sample: %zu bars, %s .. %s\n", r->cut, a, b,
            j->s.n - r->cut, b, c);
    fprintf(f, "combos: %zu; %zu meet the condition in sample%s%s\n", r->combos_done, r->passing,
            j->where_text ? ": " : "", j->where_text ? j->where_text : "");
    fprintf(f, "the best %zu by in-sample %s, with their out-of-sample numbers:\n\n", r->n_top,
            sebt_metric_name(j->metric));
    fprintf(f, "%-5s %9s |%53s |%52s\n", "rank", "combo", "in sample", "out of sample");
    fprintf(f, "%-5s %9s |", "", "");
    for (int k = 0; k < 2; k++)
        fprintf(f, " %6s %6s %7s %10s %10s %7s%s", "n", "win", "avg_R", "pnl", "max_dd", "sharpe", k ? "\n" : "  |");
    bool few = false;
    for (size_t i = 0; i < r->n_top; i++) {
        const sebt_metrics *is = &r->top[i].in_sample.metrics, *oos = &r->top[i].out_sample.metrics;
        fprintf(f, "%-5zu %9" PRIu64 " |", i + 1, r->top[i].combo);
        text_side(f, is, false);
        fputs(" |", f);
        text_side(f, oos, true);
        fputc('\n', f);
        few |= is->n < SEBT_FEW_TRADES || oos->n < SEBT_FEW_TRADES;
    }
    cli_oos_few_footnote(f, few);
    text_params(f, r);
}

static void write_top_csv(FILE *f, const sebt_split_result *r)
{
    for (size_t i = 0; i < r->n_top; i++)
        csv_row(f, r->top[i].combo, &r->top[i].params, &r->top[i].in_sample, &r->top[i].out_sample);
}

/* --overfit: the sweep's measures over the in-sample bars, a series of
 * their own as the split backtests them. */
static int split_overfit(cli_oos_job *j, size_t cut, int blocks, FILE *f)
{
    sebt_overfit o;
    int rc = cli_oos_overfit(j, 0, cut, blocks, &o);
    if (rc == CLI_EXIT_OK) {
        sweep_overfit_text(f, &o, " of the in-sample bars");
        sebt_overfit_free(&o);
    }
    return rc;
}

static int run_split(cli_oos_job *j, int64_t at, size_t top, bool text, int overfit_blocks)
{
    FILE *f = cli_open_output(j->cmd, j->output);
    if (!f)
        return CLI_EXIT_USAGE;
    csv_writer cw = { f, j->where, false };
    sharpe_collector col = { .where = j->where };
    cli_progress bar;
    cli_progress_init(&bar, "split");
    cli_progress_units(&bar, "combos", 1);
    sebt_split_opts o = { .grid = j->grid, .combos = j->combos, .n_combos = j->n_combos, .split_ts = at,
                          .threads = j->threads, .top = top, .metric = j->metric, .where = j->where,
                          .on_window = text ? collect_window : top ? NULL : on_window,
                          .user = text ? (void *)&col : (void *)&cw,
                          .progress = cli_progress_update, .progress_user = &bar };
    sebt_split_result r;
    sebt_error err = { 0 };
    sebt_status st = sebt_split_run(j->b, &j->s, &o, &r, &err);
    cli_progress_finish(&bar);
    if (st == SEBT_OK && col.nomem) {
        sebt_split_result_free(&r);
        st = sebt_fail(&err, SEBT_ERR_NOMEM, "out of memory for the Sharpe ratios of %zu combos", col.n);
    }
    if (st) {
        free(col.is);
        free(col.oos);
        cli_abandon_output(f);
        return cli_report_error(j->cmd, &err);
    }
    char what[300];
    if (!sebt_split_cut_agrees(&j->s, at, r.cut, what, sizeof what)) {
        free(col.is);
        free(col.oos);
        sebt_split_result_free(&r);
        cli_abandon_output(f);
        fprintf(stderr, "sebt %s: error: verification failed: %s; the output is not written\n", j->cmd, what);
        return CLI_EXIT_CHECK_FAILED;
    }
    if (!text)
        csv_header_once(&cw);
    if (text) {
        text_report(f, j, &r);
        text_summary(f, &col, &r);
    } else if (top) {
        write_top_csv(f, &r);
    }
    free(col.is);
    free(col.oos);
    size_t cut = r.cut;
    sebt_split_result_free(&r);
    if (overfit_blocks) {
        int orc = split_overfit(j, cut, overfit_blocks, text ? f : stderr);
        if (orc != CLI_EXIT_OK) {
            cli_abandon_output(f);
            return orc;
        }
    }
    if (cli_close_output(f) != 0)
        return CLI_EXIT_USAGE;
    return CLI_EXIT_OK;
}

int cli_cmd_split(int argc, char **argv)
{
    const char *cmd = argv[0];
    cli_args a;
    cli_oos_job j;
    int rc = cli_parse(&cli_cmd_split_spec, argc, argv, &a);
    if (rc >= 0 || (rc = cli_oos_args(cmd, &a, &j)) >= 0)
        return rc;
    if (!cli_given(&a, OPT_SPLIT))
        return cli_usage_error(cmd, "--split DATE is required");
    int64_t at;
    if ((rc = cli_oos_parse_date(cmd, "--split", cli_str(&a, OPT_SPLIT), &at)) != CLI_EXIT_OK)
        return rc;
    bool text = cli_given(&a, OPT_FORMAT) && strcmp(cli_str(&a, OPT_FORMAT), "text") == 0;
    size_t top = cli_given(&a, OPT_TOP) ? (size_t)a.v[OPT_TOP].u : text ? 10 : 0;
    int blocks;
    if ((rc = cli_oos_overfit_blocks(cmd, &a, OPT_OVERFIT, OPT_OVERFIT_BLOCKS, &blocks)) >= 0)
        return rc;
    rc = cli_oos_open(&j);
    if (rc == CLI_EXIT_OK)
        rc = run_split(&j, at, top, text, blocks);
    cli_oos_close(&j);
    return rc;
}

static const cli_opt split_opts[] = {
    OOS_SHARED_OPTS("what --top ranks the in-sample results by: sharpe (default), n,\n"
                    "win_rate, avg_r, total_pnl, max_dd (higher is better)"),
    [OPT_SPLIT] = { "--split", CLI_TEXT, "DATE", "the first out-of-sample open time: YYYY-MM-DD,\n"
                    "YYYY-MM-DDTHH:MM[:SS] (UTC) or epoch milliseconds" },
    [OPT_TOP] = { "--top", CLI_UINT, "K", "only the K best by in-sample --by, best first (text: 10)", .umin = 1,
                  .umax = 100000 },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "csv (default): every combo meeting --where, in input order;\n"
                     "text: for people, the top K as a table", .choices = split_formats },
    [OPT_OVERFIT] = { "--overfit", CLI_FLAG, NULL, "is the in-sample best a fluke? `sebt sweep --overfit`'s DSR and\n"
                      "PBO over every combo on the in-sample bars: a block after the\n"
                      "text table, else on stderr (docs/formats.md, \"Overfitting\")" },
    [OPT_OVERFIT_BLOCKS] = { "--overfit-blocks", CLI_UINT, "S", "PBO's blocks of the in-sample bars: even, 2 to 24\n"
                             "(default 16)", .umin = 2, .umax = SEBT_OVERFIT_MAX_BLOCKS },
};

const cli_command cli_cmd_split_spec = {
    .name = "split",
    .summary = "in-sample and out-of-sample metrics of every combo, side by side",
    .usage = "--data FILE (--grid FILE | --combos FILE) --split DATE [--where COND] [--top K] [options]\n",
    .about = "Cuts the series at --split: bars opening before it are in sample, the rest out\n"
             "of sample. Each part is backtested as a series of its own (indicators warm up\n"
             "again; a position open at the cut is not carried over), so every number is a\n"
             "plain backtest that parity covers. CSV columns: combo, the parameters, then\n"
             "is_n, is_win_rate, is_avg_r, is_total_pnl, is_max_dd, is_sharpe, is_open_at_end,\n"
             "is_valid_bars, and the same with oos_ (docs/formats.md).\n",
    .opts = CLI_OPTS(split_opts),
    .epilog = "Exit codes: 0 ok, 2 bad usage or input (a split with no bars on one side), 3 no usable GPU.\n",
    .fn = cli_cmd_split,
};
