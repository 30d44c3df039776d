/* The sweep's output (CSV/JSON, --top), shard rows, and atomic files: one
 * writer for `sebt sweep` and `sebt merge`, so both give the same bytes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sebt/number.h"
#include "sweep.h"
#include "sebt/sweep_proof.h"

typedef struct {
    const sebt_result *results;
    int metric;
} rank_ctx;

static rank_ctx g_rank;   /* qsort has no context argument in C11 */

static int rank_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return sebt_rank_compare(&g_rank.results[a].metrics, a, &g_rank.results[b].metrics, b, g_rank.metric);
}

void sweep_rank(size_t *rows, size_t n, const sebt_result *results, int metric)
{
    g_rank.results = results;
    g_rank.metric = metric;
    qsort(rows, n, sizeof *rows, rank_cmp);
}

size_t sweep_passing(size_t *rows, size_t n, const sebt_where *where, const sebt_params *combos,
                     const sebt_result *results)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!where || sebt_sweep_row_passes(where, i, &combos[i], &results[i]))
            rows[k++] = i;
    return k;
}

void sweep_write_csv_header(FILE *f)
{
    char b[4096];
    fwrite(b, 1, sebt_sweep_csv_header(b, sizeof b), f);
}

void sweep_write_csv_row(FILE *f, size_t idx, const sebt_params *p, const sebt_result *r)
{
    char buf[SEBT_CSV_ROW_MAX];
    fwrite(buf, 1, sebt_sweep_csv_row(buf, idx, p, r), f);
}

void sweep_write_npy_header(FILE *f, uint64_t n_rows)
{
    char b[SEBT_NPY_HEADER_MAX];
    fwrite(b, 1, sebt_sweep_npy_header(b, n_rows), f);
}

void sweep_write_npy_row(FILE *f, size_t idx, const sebt_params *p, const sebt_result *r)
{
    unsigned char buf[SEBT_NPY_ROW_MAX];
    fwrite(buf, 1, sebt_sweep_npy_row(buf, idx, p, r), f);
}

bool sweep_parse_csv_row(char *line, size_t *idx, sebt_params *p, sebt_result *r, sebt_trade_stats *a, char *why,
                         size_t why_size)
{
    uint64_t combo = 0;
    sebt_sweep_record rec;
    if (!sebt_sweep_csv_row_read(line, a ? SEBT_COLS_ANALYSIS : SEBT_COLS_PLAIN, &combo, p, &rec, why, why_size))
        return false;
    *idx = (size_t)combo;
    memset(r, 0, sizeof *r);
    r->metrics = rec.metrics;
    r->valid_bars = (size_t)rec.valid_bars;
    r->open_at_end.open = rec.open_at_end != 0;
    if (a)
        *a = rec.analysis;
    return true;
}

void sweep_json_begin(cli_json *j, FILE *f, const sweep_output_spec *spec)
{
    cli_json_init(j, f, 2);
    cli_json_begin_object(j, NULL);
    cli_json_schema(j, "sweep");
    cli_json_string(j, "backend", spec->backend);
    cli_json_int(j, "bars", (int64_t)spec->bars);
    cli_json_int(j, "combos", (int64_t)spec->n_combos);
    if (spec->have_top)
        cli_json_string(j, "ranked_by", sebt_sweep_rank_name(spec->metric));
    else
        cli_json_null(j, "ranked_by");
    cli_json_begin_array(j, "results");
}

void sweep_json_row(cli_json *j, size_t i, const sebt_params *p, const sebt_result *r, const sebt_trade_stats *a)
{
    cli_json_begin_object(j, NULL);
    cli_json_int(j, "combo", (int64_t)i);
    cli_json_params(j, "params", p);
    cli_json_metrics(j, "metrics", &r->metrics);
    cli_json_bool(j, "open_at_end", r->open_at_end.open);
    cli_json_int(j, "valid_bars", (int64_t)r->valid_bars);
    if (a)
        cli_json_analysis(j, "analysis", a);
    if (a && a->has_relative)
        cli_json_relative(j, "relative", &a->relative);
    cli_json_end_object(j);
}

void sweep_json_end(cli_json *j)
{
    cli_json_end_array(j);
    cli_json_end_object(j);
    cli_json_finish(j);
}

static void write_json_doc(FILE *f, const sweep_output_spec *spec, const size_t *rows, size_t n_rows,
                           const sebt_params *combos, const sebt_result *results)
{
    cli_json j;
    sweep_json_begin(&j, f, spec);
    for (size_t k = 0; k < n_rows; k++)
        sweep_json_row(&j, rows[k], &combos[rows[k]], &results[rows[k]], NULL);
    sweep_json_end(&j);
}

/* ---- text: the best combos for people ----------------------------------- */

#define TEXT_MAX_COLS (2 + SEBT_N_PARAMS + SWEEP_N_METRICS)

static void param_text(const sebt_params *p, int idx, char *buf, size_t size)
{
    if (sebt_param_table[idx].type == SEBT_PARAM_DOUBLE)
        snprintf(buf, size, "%.6g", sebt_params_get_double(p, idx));
    else
        sebt_params_format(p, idx, buf, size);
}

static void metric_text(const sebt_metrics *m, int which, char *buf, size_t size)
{
    switch (which) {
    case 0: snprintf(buf, size, "%" PRId64, m->n); break;
    case 1: snprintf(buf, size, "%.1f%%", 100.0 * m->win_rate); break;
    case 2: snprintf(buf, size, "%.4f", m->avg_r); break;
    case 3: snprintf(buf, size, "%.6g", m->total_pnl); break;
    case 4: snprintf(buf, size, "%.6g", m->max_dd); break;
    default: snprintf(buf, size, "%.4f", m->sharpe); break;
    }
}

/* An aligned table of the kept rows, best first: rank, combo, the
 * parameters that differ between combos (the others are listed once
 * below), then the metrics, the ranking one marked. Numbers are rounded
 * for reading; the CSV and JSON carry every bit. */
static void write_text_doc(FILE *f, const sweep_output_spec *spec, const size_t *rows, size_t n_rows, size_t n_pass,
                           const sebt_params *combos, const sebt_result *results)
{
    static const char *const metric_heads[SWEEP_N_METRICS] = { "trades", "win rate", "avg R", "total pnl",
                                                                "max dd", "sharpe" };
    bool varies[SEBT_N_PARAMS] = { false };
    char a[64], b[64];
    for (int k = 0; k < SEBT_N_PARAMS; k++) {
        sebt_params_format(&combos[0], k, a, sizeof a);
        for (size_t i = 1; i < spec->n_combos && !varies[k]; i++) {
            sebt_params_format(&combos[i], k, b, sizeof b);
            varies[k] = strcmp(a, b) != 0;
        }
    }
    const char *head[TEXT_MAX_COLS];
    int width[TEXT_MAX_COLS];
    size_t nc = 0;
    char marked[32];
    snprintf(marked, sizeof marked, "%s*", metric_heads[spec->metric]);
    head[nc++] = "rank";
    head[nc++] = "combo";
    for (int k = 0; k < SEBT_N_PARAMS; k++)
        if (varies[k])
            head[nc++] = sebt_param_table[k].name;
    for (int m = 0; m < SWEEP_N_METRICS; m++)
        head[nc++] = m == spec->metric ? marked : metric_heads[m];
    /* Cells: every kept row formatted once to size the columns. */
    char(*cells)[TEXT_MAX_COLS][32] = calloc(n_rows ? n_rows : 1, sizeof *cells);
    if (!cells) {
        fputs("(out of memory for the table)\n", f);
        return;
    }
    for (size_t c = 0; c < nc; c++)
        width[c] = (int)strlen(head[c]);
    for (size_t r = 0; r < n_rows; r++) {
        size_t i = rows[r], c = 0;
        snprintf(cells[r][c++], 32, "%zu", r + 1);
        snprintf(cells[r][c++], 32, "%zu", i);
        for (int k = 0; k < SEBT_N_PARAMS; k++)
            if (varies[k])
                param_text(&combos[i], k, cells[r][c++], 32);
        for (int m = 0; m < SWEEP_N_METRICS; m++)
            metric_text(&results[i].metrics, m, cells[r][c++], 32);
        for (c = 0; c < nc; c++)
            if ((int)strlen(cells[r][c]) > width[c])
                width[c] = (int)strlen(cells[r][c]);
    }
    for (size_t c = 0; c < nc; c++)
        fprintf(f, "%s%*s", c ? "  " : "", width[c], head[c]);
    fputc('\n', f);
    for (size_t r = 0; r < n_rows; r++) {
        for (size_t c = 0; c < nc; c++)
            fprintf(f, "%s%*s", c ? "  " : "", width[c], cells[r][c]);
        fputc('\n', f);
    }
    free(cells);
    fprintf(f, "top %zu of %zu combo%s by %s (* higher is better; max dd is <= 0), backend %s, %zu bars\n", n_rows,
            spec->n_combos, spec->n_combos == 1 ? "" : "s", sebt_metric_name(spec->metric), spec->backend,
            spec->bars);
    if (spec->where)
        fprintf(f, "ranked among the %zu that pass --where '%s'\n", n_pass, sebt_where_text(spec->where));
    bool any_fixed = false;
    for (int k = 0; k < SEBT_N_PARAMS; k++) {
        if (varies[k] || !spec->n_combos)
            continue;
        param_text(&combos[0], k, a, sizeof a);
        fprintf(f, "%s%s=%s", any_fixed ? " " : "same in every combo: ", sebt_param_table[k].name, a);
        any_fixed = true;
    }
    if (any_fixed)
        fputc('\n', f);
    fputs("every combo, every digit: --format csv or json\n", f);
}

int sweep_write_output(const char *cmd, const char *path, const sweep_output_spec *spec,
                       const sebt_params *combos, const sebt_result *results, size_t **rows_out,
                       size_t *n_rows_out)
{
    size_t n = spec->n_combos;
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, n);
        return CLI_EXIT_NOMEM;
    }
    size_t n_rows = sweep_passing(rows, n, spec->where, combos, results), n_pass = n_rows;
    if (spec->have_top || spec->text) {
        size_t top = spec->have_top ? (size_t)spec->top : SWEEP_TEXT_TOP;
        sweep_rank(rows, n_rows, results, spec->metric);
        if (top < n_rows)
            n_rows = top;
    }
    if (spec->npy && (!path || strcmp(path, "-") == 0) && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "sebt %s: error: npy is binary: give --output FILE.npy or redirect stdout\n", cmd);
        free(rows);
        return CLI_EXIT_USAGE;
    }
    atomic_file af;
    char why[600];
    int open_rc = atomic_open(&af, path, why, sizeof why);
    if (open_rc != CLI_EXIT_OK) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        free(rows);
        return open_rc;
    }
    if (spec->json) {
        write_json_doc(af.f, spec, rows, n_rows, combos, results);
    } else if (spec->text) {
        write_text_doc(af.f, spec, rows, n_rows, n_pass, combos, results);
    } else if (spec->npy) {
        sweep_write_npy_header(af.f, n_rows);
        for (size_t k = 0; k < n_rows; k++)
            sweep_write_npy_row(af.f, rows[k], &combos[rows[k]], &results[rows[k]]);
    } else {
        sweep_write_csv_header(af.f);
        for (size_t k = 0; k < n_rows; k++)
            sweep_write_csv_row(af.f, rows[k], &combos[rows[k]], &results[rows[k]]);
    }
    if (spec->check_written && !af.is_stdout && af.o.atomic) {
        bool flushed = fflush(af.f) == 0;
        if (!flushed || !spec->check_written(spec->check_ctx, af.o.tmp, rows, n_rows, why, sizeof why)) {
            atomic_discard(&af);
            fprintf(stderr, "sebt %s: error: %s; the output is not written (the previous file, if any, is "
                    "unchanged)\n", cmd, flushed ? why : "writing the output failed");
            free(rows);
            return flushed ? CLI_EXIT_CHECK_FAILED : CLI_EXIT_USAGE;
        }
    }
    cli_outputs_landing();
    if (!atomic_commit(&af, why, sizeof why)) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        free(rows);
        return CLI_EXIT_USAGE;
    }
    if (rows_out) {
        *rows_out = rows;
        *n_rows_out = n_rows;
    } else {
        free(rows);
    }
    return CLI_EXIT_OK;
}

/* ---- atomic files -----------------------------------------------------------
 * A thin layer over sebt_outfile (core/outfile.c) that also syncs the
 * folder after the rename, so a finished checkpoint chunk survives a power
 * cut, not only a kill. */

int atomic_open(atomic_file *a, const char *path, char *why, size_t why_size)
{
    memset(a, 0, sizeof *a);
    if (!path || strcmp(path, "-") == 0) {
        a->f = stdout;
        a->is_stdout = true;
        return CLI_EXIT_OK;
    }
    snprintf(a->path, sizeof a->path, "%s", path);
    sebt_error err = { 0 };
    sebt_status st = sebt_outfile_open(&a->o, path, &err);
    if (st != SEBT_OK) {
        snprintf(why, why_size, "%s", err.msg);
        return st == SEBT_ERR_NOMEM ? CLI_EXIT_NOMEM : CLI_EXIT_USAGE;
    }
    a->f = a->o.f;
    return CLI_EXIT_OK;
}

bool atomic_direct(atomic_file *a)
{
    if (a->is_stdout || !a->f || !sebt_outfile_direct(&a->o))
        return false;
    a->f = a->o.f;
    return true;
}

void atomic_discard(atomic_file *a)
{
    if (a->is_stdout || (!a->f && !a->o.synced))
        return;
    sebt_outfile_abort(&a->o);
    a->f = NULL;
}

void atomic_write_failed(atomic_file *a, int errnum)
{
    if (errnum && !a->is_stdout && a->f)
        sebt_outfile_write_failed(&a->o, errnum);
    else if (errnum && a->is_stdout && !a->stdout_errno)
        a->stdout_errno = errnum;
}

bool atomic_sync(atomic_file *a, char *why, size_t why_size)
{
    if (a->is_stdout)
        return true;
    sebt_error err = { 0 };
    a->f = NULL;
    if (sebt_outfile_sync(&a->o, &err) != SEBT_OK) {
        snprintf(why, why_size, "%s", err.msg);
        return false;
    }
    return true;
}

bool atomic_commit(atomic_file *a, char *why, size_t why_size)
{
    if (a->is_stdout) {
        errno = 0;
        bool bad = fflush(stdout) != 0 || ferror(stdout);
        int e = errno ? errno : a->stdout_errno;
        if (bad)
            snprintf(why, why_size, "writing stdout failed%s%s", e ? ": " : "", e ? strerror(e) : "");
        return !bad;
    }
    sebt_error err = { 0 };
    a->f = NULL;
    if (sebt_outfile_commit(&a->o, &err) != SEBT_OK) {
        snprintf(why, why_size, "%s", err.msg);
        return false;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", a->path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return true;
}
