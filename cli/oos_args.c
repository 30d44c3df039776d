/* What `sebt split` and `sebt walkforward` share: their common options, the
 * job they open, dates and window lengths. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oos_cli.h"

const char *const cli_oos_metrics[] = { "sharpe", "n", "win_rate", "avg_r", "total_pnl", "max_dd", NULL };

int cli_oos_args(const char *cmd, const cli_args *a, cli_oos_job *j)
{
    memset(j, 0, sizeof *j);
    j->cmd = cmd;
    j->data = cli_str(a, OOS_DATA);
    j->grid_path = cli_str(a, OOS_GRID);
    j->combos_path = cli_str(a, OOS_COMBOS);
    j->where_text = cli_str(a, OOS_WHERE);
    j->backend_name = cli_str(a, OOS_BACKEND);
    j->output = cli_str(a, OOS_OUTPUT);
    j->lenient = cli_given(a, OOS_LENIENT);
    j->fill_gaps = cli_given(a, OOS_FILL_GAPS);
    j->threads = cli_given(a, OOS_THREADS) ? (int)a->v[OOS_THREADS].u : 0;
    j->metric = sebt_metric_index(cli_given(a, OOS_BY) ? cli_str(a, OOS_BY) : "sharpe");
    if (!j->data)
        return cli_usage_error(cmd, "--data FILE is required");
    if (!j->grid_path == !j->combos_path)
        return cli_usage_error(cmd, "give exactly one of --grid FILE and --combos FILE");
    return -1;
}

int cli_oos_open(cli_oos_job *j)
{
    sebt_error err = { 0 };
    if (j->where_text && sebt_sweep_where(j->where_text, &j->where, &err) != SEBT_OK)
        return cli_report_error(j->cmd, &err);
    const sebt_path_use paths[] = {
        { "--data", j->data, SEBT_PATH_INPUT, NULL },
        { "--grid", j->grid_path, SEBT_PATH_INPUT, NULL },
        { "--combos", j->combos_path, SEBT_PATH_INPUT, NULL },
        { "--output", j->output, SEBT_PATH_OUTPUT, NULL },
        { "--trades", j->trades, SEBT_PATH_OUTPUT, NULL },
    };
    int rc = cli_check_paths(j->cmd, paths, sizeof paths / sizeof paths[0]);
    if (rc != CLI_EXIT_OK)
        return rc;
    sebt_status st = j->grid_path ? sebt_grid_open(j->grid_path, &j->grid, &j->n_combos, &err)
                                  : sebt_combos_load(j->combos_path, &j->combos, &j->n_combos, &err);
    if (st != SEBT_OK)
        return cli_report_error(j->cmd, &err);
    if ((rc = cli_check_omp_env()) != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_load_series(j->cmd, j->data, j->lenient, j->fill_gaps, &j->s)) != CLI_EXIT_OK)
        return rc;
    if (j->s.n == 0)
        return cli_usage_error(j->cmd, "%s holds no bars", j->data);
    return cli_select_backend(j->cmd, j->backend_name, j->s.n, j->n_combos, &j->b);
}

void cli_oos_close(cli_oos_job *j)
{
    sebt_where_free(j->where);
    sebt_grid_close(j->grid);
    free(j->combos);
    sebt_series_free(&j->s);
    memset(j, 0, sizeof *j);
}

/* n digits at *p into *v; false when they are not there. */
static bool digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return false;
        *v = *v * 10 + (**p - '0');
    }
    return true;
}

int cli_oos_parse_date(const char *cmd, const char *flag, const char *text, int64_t *ms)
{
    const char *p = text;
    if (strspn(text, "0123456789") == strlen(text) && strlen(text) <= 15) {
        *ms = strtoll(text, NULL, 10);
        return CLI_EXIT_OK;
    }
    int y, mo, d, h = 0, mi = 0, sec = 0;
    bool ok = digits(&p, 4, &y) && *p++ == '-' && digits(&p, 2, &mo) && *p++ == '-' && digits(&p, 2, &d);
    if (ok && (*p == 'T' || *p == ' ')) {
        p++;
        ok = digits(&p, 2, &h) && *p++ == ':' && digits(&p, 2, &mi);
        if (ok && *p == ':') {
            p++;
            ok = digits(&p, 2, &sec);
        }
        if (ok && *p == 'Z')
            p++;
    }
    static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (!ok || *p || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 59 ||
        (mo == 2 && d == 29 && (y % 4 || (y % 100 == 0 && y % 400))))
        return cli_usage_error(cmd, "%s %s: expected a date, YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC), or "
                               "milliseconds since the epoch", flag, text);
    struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec };
    *ms = (int64_t)timegm(&tm) * 1000;
    return CLI_EXIT_OK;
}

int cli_oos_parse_span(const char *cmd, const char *flag, const char *text, int64_t *v, bool *by_time)
{
    char *end = NULL;
    errno = 0;
    unsigned long long n = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
    static const char units[] = "mhdw";
    static const int64_t unit_ms[] = { 60000, 3600000, 86400000, 604800000 };
    const char *u = end && *end && !end[1] ? strchr(units, *end) : NULL;
    if (!end || errno || n == 0 || n > 100000000 || (*end && !u))
        return cli_usage_error(cmd, "%s %s: expected a number of bars (2000), or of minutes, hours, days or weeks "
                               "of time (90m, 12h, 30d, 8w), from 1 to 100000000", flag, text);
    *by_time = u != NULL;
    *v = (int64_t)n * (u ? unit_ms[u - units] : 1);
    return CLI_EXIT_OK;
}

void cli_oos_minute(int64_t ms, char *buf, size_t size)
{
    char iso[40];
    cli_format_utc(ms, iso, sizeof iso);   /* 2021-03-04T05:06:07Z */
    snprintf(buf, size, "%.10s %.5s", iso, iso + 11);
}

/* Parameter i of every combo formats the same. */
static bool param_shared(const sebt_params *p, size_t n, int i)
{
    char a[64], b[64];
    sebt_params_format(&p[0], i, a, sizeof a);
    for (size_t k = 1; k < n; k++) {
        sebt_params_format(&p[k], i, b, sizeof b);
        if (strcmp(a, b) != 0)
            return false;
    }
    return true;
}

void cli_oos_print_params(FILE *f, const sebt_params *p, const char *const *labels, size_t n)
{
    if (n == 0)
        return;
    bool shared[SEBT_N_PARAMS];
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        shared[i] = param_shared(p, n, i);
    char v[64];
    for (size_t k = 0; k < n; k++) {
        fprintf(f, "%s:", labels[k]);
        for (int i = 0; i < SEBT_N_PARAMS; i++) {
            sebt_params_format(&p[k], i, v, sizeof v);
            if (!shared[i] || n == 1)
                fprintf(f, " %s=%s", sebt_param_table[i].name, v);
        }
        fputc('\n', f);
    }
    if (n == 1)
        return;
    fputs("same in every one:", f);
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        sebt_params_format(&p[0], i, v, sizeof v);
        if (shared[i])
            fprintf(f, " %s=%s", sebt_param_table[i].name, v);
    }
    fputc('\n', f);
}

const char *cli_oos_few_mark(int64_t n, bool last)
{
    return n < SEBT_FEW_TRADES ? "?" : last ? "" : " ";
}

void cli_oos_few_footnote(FILE *f, bool any)
{
    if (any)
        fprintf(f, "? a Sharpe from fewer than %d trades: too few to tell an edge from noise\n", SEBT_FEW_TRADES);
}

static int cmp_nan_last(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

double cli_oos_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_nan_last);
    while (n && isnan(v[n - 1]))
        n--;
    if (!n)
        return NAN;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}
