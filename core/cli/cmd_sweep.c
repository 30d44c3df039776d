/* `sebt sweep`: backtest a grid or a list of combos over one series. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sebt/grid.h"

static const char usage[] =
    "usage: sebt sweep --data FILE (--grid FILE | --combos FILE) [options]\n"
    "\n"
    "Backtests every combo of a grid (or of a combos CSV) over one series and\n"
    "prints one row per combo, in input order whatever the thread count.\n"
    "\n"
    "  --data FILE        the bars (CSV or Binance klines, .gz read as is)\n"
    "  --grid FILE        one parameter per line: a list 'vol_z = 1.5, 2.0' or a\n"
    "                     range 'ema_fast = 24:192:24' (stop included when it lands);\n"
    "                     # comments; unnamed parameters keep their defaults; the\n"
    "                     combos are the product, the file's first parameter slowest\n"
    "  --combos FILE      CSV: a header of parameter names, then one combo per row\n"
    "  --backend NAME     fast_cpu (default), reference, cuda, or cpu|gpu|auto\n"
    "  --threads N        CPU threads (default: OMP_NUM_THREADS or every core)\n"
    "  --top K            keep the K best combos, best first\n"
    "  --by METRIC        what --top ranks by: sharpe (default), n, win_rate, avg_r,\n"
    "                     total_pnl, max_dd (higher is better; ties keep input order)\n"
    "  --trades DIR       also write each listed combo's trades to DIR/combo_<index>.csv\n"
    "  --format csv|json  csv (default) or json\n"
    "  --output FILE      write there instead of stdout\n"
    "  --lenient          turn rejected rows into missing bars (counted on stderr)\n"
    "  --fill-gaps        insert missing bars where timestamps skip\n"
    "\n"
    "Columns: combo (0-based input index), the 15 parameters, n, win_rate, avg_r,\n"
    "total_pnl, max_dd, sharpe, open_at_end (0|1), valid_bars.\n";

static const char *const metric_names[] = { "n", "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe" };
#define N_METRICS 6

static double metric_value(const sebt_metrics *m, int which)
{
    switch (which) {
    case 0: return (double)m->n;
    case 1: return m->win_rate;
    case 2: return m->avg_r;
    case 3: return m->total_pnl;
    case 4: return m->max_dd;
    default: return m->sharpe;
    }
}

typedef struct {
    const sebt_result *results;
    int metric;
} rank_ctx;

static rank_ctx g_rank;   /* qsort has no context argument in C11 */

/* Best first; NaN last; ties by input order, so the ranking is total. */
static int rank_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    double va = metric_value(&g_rank.results[a].metrics, g_rank.metric);
    double vb = metric_value(&g_rank.results[b].metrics, g_rank.metric);
    int na = isnan(va), nb = isnan(vb);
    if (na != nb)
        return na - nb;
    if (!na && va != vb)
        return va > vb ? -1 : 1;
    return a < b ? -1 : a > b;
}

static void write_csv_header(FILE *f)
{
    fputs("combo", f);
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        fprintf(f, ",%s", sebt_param_table[i].name);
    for (int i = 0; i < N_METRICS; i++)
        fprintf(f, ",%s", metric_names[i]);
    fputs(",open_at_end,valid_bars\n", f);
}

static void write_csv_row(FILE *f, size_t idx, const sebt_params *p, const sebt_result *r)
{
    char buf[64];
    fprintf(f, "%zu", idx);
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        sebt_params_format(p, i, buf, sizeof buf);
        fprintf(f, ",%s", buf);
    }
    fprintf(f, ",%" PRId64, r->metrics.n);
    const double v[] = { r->metrics.win_rate, r->metrics.avg_r, r->metrics.total_pnl, r->metrics.max_dd,
                         r->metrics.sharpe };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        fputc(',', f);
        cli_print_double(f, v[i]);
    }
    fprintf(f, ",%d,%zu\n", r->open_at_end.open ? 1 : 0, r->valid_bars);
}

static void write_json_doc(FILE *f, const char *backend, const sebt_series *s, size_t n_combos,
                           const size_t *rows, size_t n_rows, const sebt_params *combos,
                           const sebt_result *results, const char *top_by)
{
    cli_json j;
    cli_json_init(&j, f, 2);
    cli_json_begin_object(&j, NULL);
    cli_json_string(&j, "backend", backend);
    cli_json_int(&j, "bars", (int64_t)s->n);
    cli_json_int(&j, "combos", (int64_t)n_combos);
    if (top_by)
        cli_json_string(&j, "ranked_by", top_by);
    else
        cli_json_null(&j, "ranked_by");
    cli_json_begin_array(&j, "results");
    for (size_t k = 0; k < n_rows; k++) {
        size_t i = rows[k];
        cli_json_begin_object(&j, NULL);
        cli_json_int(&j, "combo", (int64_t)i);
        cli_json_params(&j, "params", &combos[i]);
        cli_json_metrics(&j, "metrics", &results[i].metrics);
        cli_json_bool(&j, "open_at_end", results[i].open_at_end.open);
        cli_json_int(&j, "valid_bars", (int64_t)results[i].valid_bars);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

static int write_trades(const char *cmd, const char *dir, size_t idx, const sebt_series *s,
                        const sebt_result *r)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/combo_%zu.csv", dir, idx);
    FILE *f = cli_open_output(cmd, path);
    if (!f)
        return CLI_EXIT_USAGE;
    fputs("signal_index,entry_index,exit_index,signal_ts,entry_ts,exit_ts,entry_price,exit_price,"
          "stop,tp,risk,pnl,r,reason,bars_held\n", f);
    for (size_t k = 0; k < r->n_trades && r->trades; k++) {
        const sebt_trade *t = &r->trades[k];
        fprintf(f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",",
                t->signal_index, t->entry_index, t->exit_index, s->ts[t->signal_index], s->ts[t->entry_index],
                s->ts[t->exit_index]);
        const double v[] = { t->entry_price, t->exit_price, t->stop, t->tp, t->risk, t->pnl, t->r };
        for (size_t c = 0; c < sizeof v / sizeof v[0]; c++) {
            cli_print_double(f, v[c]);
            fputc(',', f);
        }
        fprintf(f, "%s,%d\n", sebt_exit_reason_name(t->reason), (int)t->bars_held);
    }
    if (cli_close_output(f) != 0)
        return CLI_EXIT_USAGE;
    return CLI_EXIT_OK;
}

typedef struct {
    const char *data, *grid, *combos, *backend, *trades, *format, *output, *by;
    long threads;
    long top;
    bool have_top, lenient, fill_gaps;
} sweep_args;

static bool parse_count(const char *v, long *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end || errno || n < 1 || n > 1000000000L)
        return false;
    *out = n;
    return true;
}

/* Returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, sweep_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        bool missing = false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--lenient") == 0) {
            a->lenient = true;
        } else if (strcmp(argv[i], "--fill-gaps") == 0) {
            a->fill_gaps = true;
        } else if (cli_opt_value(argc, argv, &i, "--data", &v, &missing)) {
            a->data = v;
        } else if (cli_opt_value(argc, argv, &i, "--grid", &v, &missing)) {
            a->grid = v;
        } else if (cli_opt_value(argc, argv, &i, "--combos", &v, &missing)) {
            a->combos = v;
        } else if (cli_opt_value(argc, argv, &i, "--backend", &v, &missing)) {
            a->backend = v;
        } else if (cli_opt_value(argc, argv, &i, "--trades", &v, &missing)) {
            a->trades = v;
        } else if (cli_opt_value(argc, argv, &i, "--format", &v, &missing)) {
            a->format = v;
        } else if (cli_opt_value(argc, argv, &i, "--output", &v, &missing)) {
            a->output = v;
        } else if (cli_opt_value(argc, argv, &i, "--by", &v, &missing)) {
            a->by = v;
        } else if (cli_opt_value(argc, argv, &i, "--threads", &v, &missing)) {
            if (!missing && !parse_count(v, &a->threads))
                return cli_usage_error(cmd, "--threads %s: expected a whole number >= 1", v);
        } else if (cli_opt_value(argc, argv, &i, "--top", &v, &missing)) {
            if (!missing && !parse_count(v, &a->top))
                return cli_usage_error(cmd, "--top %s: expected a whole number >= 1", v);
            a->have_top = true;
        } else {
            return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
        }
        if (missing)
            return cli_usage_error(cmd, "%s needs a value", argv[i]);
    }
    if (!a->data)
        return cli_usage_error(cmd, "--data FILE is required");
    if (!a->grid == !a->combos)
        return cli_usage_error(cmd, "give exactly one of --grid FILE and --combos FILE");
    if (a->format && strcmp(a->format, "csv") != 0 && strcmp(a->format, "json") != 0)
        return cli_usage_error(cmd, "--format %s: expected csv or json", a->format);
    if (a->by && !a->have_top)
        return cli_usage_error(cmd, "--by ranks the combos kept by --top K: give --top too");
    return -1;
}

int cli_cmd_sweep(int argc, char **argv)
{
    const char *cmd = argv[0];
    sweep_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    int metric = N_METRICS - 1;
    if (a.by) {
        metric = -1;
        for (int i = 0; i < N_METRICS; i++)
            if (strcmp(a.by, metric_names[i]) == 0)
                metric = i;
        if (metric < 0)
            return cli_usage_error(cmd, "--by %s: expected one of n, win_rate, avg_r, total_pnl, max_dd, sharpe",
                                   a.by);
    }

    sebt_params *combos = NULL;
    size_t n_combos = 0;
    sebt_error err = { 0 };
    sebt_status st = a.grid ? sebt_grid_load(a.grid, &combos, &n_combos, &err)
                            : sebt_combos_load(a.combos, &combos, &n_combos, &err);
    if (st != SEBT_OK)
        return cli_report_error(cmd, &err);

    sebt_series s = { 0 };
    sebt_result *results = NULL;
    size_t *rows = NULL;
    rc = cli_load_series(cmd, a.data, a.lenient, a.fill_gaps, &s);
    if (rc != CLI_EXIT_OK)
        goto done;
    const sebt_backend *b = NULL;
    rc = cli_select_backend(cmd, a.backend, s.n, n_combos, &b);
    if (rc != CLI_EXIT_OK)
        goto done;
    if (a.trades && mkdir(a.trades, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "sebt %s: error: cannot create --trades directory %s: %s\n", cmd, a.trades,
                strerror(errno));
        rc = CLI_EXIT_USAGE;
        goto done;
    }

    results = calloc(n_combos, sizeof *results);
    rows = malloc(n_combos * sizeof *rows);
    if (!results || !rows) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, n_combos);
        rc = CLI_EXIT_CHECK_FAILED;
        goto done;
    }
    /* With --top, trades are fetched afterwards for the kept combos only. */
    cli_progress prog;
    cli_progress_init(&prog, "sweep");
    sebt_batch_opts opts = { .threads = (int)a.threads, .want_trades = a.trades && !a.have_top,
                             .progress = cli_progress_update, .progress_user = &prog };
    st = b->run_batch(b, &s, combos, n_combos, &opts, results, &err);
    cli_progress_finish(&prog);
    if (st != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }

    for (size_t i = 0; i < n_combos; i++)
        rows[i] = i;
    size_t n_rows = n_combos;
    if (a.have_top) {
        g_rank.results = results;
        g_rank.metric = metric;
        qsort(rows, n_combos, sizeof *rows, rank_cmp);
        if ((size_t)a.top < n_rows)
            n_rows = (size_t)a.top;
    }

    if (a.trades) {
        for (size_t k = 0; k < n_rows && rc == CLI_EXIT_OK; k++) {
            size_t i = rows[k];
            sebt_result one;
            const sebt_result *r = &results[i];
            memset(&one, 0, sizeof one);
            if (a.have_top) {
                sebt_batch_opts o1 = { .threads = (int)a.threads, .want_trades = true };
                if (b->run_batch(b, &s, &combos[i], 1, &o1, &one, &err) != SEBT_OK) {
                    rc = cli_report_error(cmd, &err);
                    break;
                }
                r = &one;
            }
            rc = write_trades(cmd, a.trades, i, &s, r);
            sebt_result_free(&one);
        }
        if (rc != CLI_EXIT_OK)
            goto done;
    }

    FILE *f = cli_open_output(cmd, a.output);
    if (!f) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    if (a.format && strcmp(a.format, "json") == 0) {
        write_json_doc(f, b->name, &s, n_combos, rows, n_rows, combos, results,
                       a.have_top ? metric_names[metric] : NULL);
    } else {
        write_csv_header(f);
        for (size_t k = 0; k < n_rows; k++)
            write_csv_row(f, rows[k], &combos[rows[k]], &results[rows[k]]);
    }
    if (cli_close_output(f) != 0) {
        fprintf(stderr, "sebt %s: error: writing %s failed\n", cmd, a.output ? a.output : "stdout");
        rc = CLI_EXIT_USAGE;
    }

done:
    if (results)
        sebt_results_free(results, n_combos);
    free(results);
    free(rows);
    free(combos);
    sebt_series_free(&s);
    return rc;
}
