/* `sebt plot equity|heatmap`: pictures through gnuplot. The library
 * computes what is drawn and writes the gnuplot script (core/plot.c); this
 * runs gnuplot on it in a private folder and publishes the picture
 * atomically at --output. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "sebt/number.h"
#include "sebt/outfile.h"
#include "sebt/plot.h"
#include "sebt/spawn.h"
#include "sebt/sweep.h"

enum { P_DATA, P_COMBO, P_SET, P_BACKEND, P_LENIENT, P_FILL_GAPS, P_SWEEP, P_X, P_Y, P_METRIC, P_AGG, P_WHERE, P_FIX,
       P_OUTPUT, P_FORMAT, P_SIZE, P_TITLE, P_SCRIPT };

static const char *const plot_formats[] = { "png", "svg", NULL };
/* In sebt_heatmap_agg's order. */
static const char *const plot_aggs[] = { "best", "median", "mean", "q25", "q75", NULL };

static const cli_opt plot_opts[] = {
    [P_DATA] = { "--data", CLI_FILE, "FILE", "the data file (as for sebt run)", .section = "sebt plot equity" },
    [P_COMBO] = { "--combo", CLI_TEXT, "FILE:ID", "the parameters of combo ID of a sweep's CSV or npy\n"
                  "output (as for sebt run); --set then changes some" },
    [P_SET] = { "--set", CLI_ASSIGN, "NAME=VALUE", "a parameter of the combo (repeatable)", .flags = CLI_REPEAT },
    [P_BACKEND] = { "--backend", CLI_TEXT, "NAME", "the backend (as for sebt run)",
                    .complete = cli_backend_words },
    [P_LENIENT] = { "--lenient", CLI_FLAG, NULL, "keep a bad row as a missing bar" },
    [P_FILL_GAPS] = { "--fill-gaps", CLI_FLAG, NULL, "insert missing bars where timestamps skip" },
    [P_SWEEP] = { "--sweep", CLI_FILE, "FILE", "a sweep's output, CSV or npy (sebt sweep)", .section = "sebt plot heatmap" },
    [P_X] = { "--x", CLI_TEXT, "PARAM", "the parameter across" },
    [P_Y] = { "--y", CLI_TEXT, "PARAM", "the parameter up" },
    [P_METRIC] = { "--metric", CLI_TEXT, "COLUMN", "the column coloured (default sharpe), higher is better" },
    [P_AGG] = { "--agg", CLI_CHOICE, "AGG", "what a cell shows of its rows' metric: median (the\n"
                "default), mean, q25, q75 (quantiles, NaN rows left out)\n"
                "or best (the highest: flatters, as the best of many)", .choices = plot_aggs },
    [P_WHERE] = { "--where", CLI_TEXT, "COND", "only the rows meeting a condition (as sweep --where),\n"
                  "before the cells are aggregated" },
    [P_FIX] = { "--fix", CLI_ASSIGN, "NAME=VALUE", "keep only the rows where a column has this value\n"
                "(repeatable)", .flags = CLI_REPEAT },
    [P_OUTPUT] = { "--output", CLI_FILE, "FILE", "the picture: FILE.png or FILE.svg (required)", .section = "both pictures" },
    [P_FORMAT] = { "--format", CLI_CHOICE, "FMT", "png or svg (default: from --output's extension)",
                   .choices = plot_formats },
    [P_SIZE] = { "--size", CLI_TEXT, "WxH", "pixels (default 1200x800)" },
    [P_TITLE] = { "--title", CLI_TEXT, "TEXT", "the title (default: what is drawn, with its figures)" },
    [P_SCRIPT] = { "--script", CLI_FILE, "FILE", "also write the gnuplot script (its data inline) to FILE" },
};

typedef struct {
    const char *cmd;
    char gnuplot[4096];
    sebt_plot_opts o;
    const char *output, *script_out;
    char dir[4096], picture[4200];
} plot_job;

static int parse_common(plot_job *j, const cli_args *a)
{
    const char *cmd = j->cmd;
    j->output = cli_str(a, P_OUTPUT);
    j->script_out = cli_str(a, P_SCRIPT);
    if (!j->output)
        return cli_usage_error(cmd, "--output FILE.png|FILE.svg is required");
    const char *dot = strrchr(j->output, '.');
    if (cli_given(a, P_FORMAT))
        j->o.format = a->v[P_FORMAT].choice == 1 ? SEBT_PLOT_SVG : SEBT_PLOT_PNG;
    else if (dot && strcmp(dot, ".svg") == 0)
        j->o.format = SEBT_PLOT_SVG;
    else if (dot && strcmp(dot, ".png") == 0)
        j->o.format = SEBT_PLOT_PNG;
    else
        return cli_usage_error(cmd, "--output %s: name a .png or .svg file, or give --format png|svg", j->output);
    const char *size = cli_str(a, P_SIZE);
    if (size) {
        char *end;
        long w = strtol(size, &end, 10), h = *end == 'x' ? strtol(end + 1, &end, 10) : 0;
        if (*end || w < 100 || h < 100 || w > 20000 || h > 20000)
            return cli_usage_error(cmd, "--size %s: expected WIDTHxHEIGHT in pixels, 100 to 20000 each", size);
        j->o.width = (int)w;
        j->o.height = (int)h;
    }
    j->o.title = cli_str(a, P_TITLE);
    return cli_find_gnuplot(cmd, "draw pictures", j->gnuplot, sizeof j->gnuplot);
}

static int write_file(const char *cmd, const char *path, const char *bytes, size_t len)
{
    FILE *f = cli_open_output(cmd, path);
    if (!f)
        return CLI_EXIT_USAGE;
    fwrite(bytes, 1, len, f);
    return cli_close_output(f) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* Runs gnuplot on the script in a private folder, then publishes the
 * picture at --output (atomically, as every file sebt writes). */
static int draw(plot_job *j, sebt_status (*make)(void *ctx, const sebt_plot_opts *o, char **s, size_t *len,
                                                 sebt_error *err), void *ctx)
{
    const char *cmd = j->cmd;
    sebt_error err = { 0 };
    /* Removed by the signal handler too (cli/main.c): an interrupted plot
     * leaves no folder. */
    if (sebt_scratch_open(j->dir, sizeof j->dir, "sebt-plot", &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    snprintf(j->picture, sizeof j->picture, "%s/picture", j->dir);
    char gp[4200], log[4200];
    snprintf(gp, sizeof gp, "%s/plot.gp", j->dir);
    snprintf(log, sizeof log, "%s/gnuplot.log", j->dir);
    j->o.output = j->picture;
    char *script = NULL, *pic = NULL;
    size_t len = 0, pic_len = 0;
    int rc = CLI_EXIT_OK;
    if (make(ctx, &j->o, &script, &len, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }
    FILE *f = fopen(gp, "w");
    if (!f || fwrite(script, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "sebt %s: error: writing %s failed\n", cmd, gp);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    sebt_child c;
    char *argv[] = { j->gnuplot, gp, NULL };
    int status = 0;
    if (sebt_child_start(&c, j->gnuplot, argv, NULL, log, &err) != SEBT_OK ||
        sebt_child_wait(&c, &status, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }
    if (sebt_read_file(j->picture, &pic, &pic_len, &err) != SEBT_OK || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || pic_len == 0) {
        char *said = NULL;
        size_t said_len = 0;
        sebt_read_file(log, &said, &said_len, &err);
        fprintf(stderr, "sebt %s: error: gnuplot (%s) drew nothing; it said:\n%s\n", cmd, j->gnuplot,
                said && said_len ? said : "(nothing)");
        free(said);
        rc = CLI_EXIT_CHECK_FAILED;
        goto done;
    }
    if (j->script_out) {
        /* The script as a user would run it: drawing at --output. */
        free(script);
        script = NULL;
        j->o.output = j->output;
        if (make(ctx, &j->o, &script, &len, &err) != SEBT_OK) {
            rc = cli_report_error(cmd, &err);
            goto done;
        }
        if ((rc = write_file(cmd, j->script_out, script, len)) != CLI_EXIT_OK)
            goto done;
    }
    rc = write_file(cmd, j->output, pic, pic_len);
done:
    free(script);
    free(pic);
    sebt_scratch_remove(j->dir);
    return rc;
}

/* ---- equity ------------------------------------------------------------------ */

typedef struct {
    const sebt_series *s;
    const sebt_params *p;
    const sebt_result *r;
} equity_ctx;

static sebt_status make_equity(void *ctx, const sebt_plot_opts *o, char **s, size_t *len, sebt_error *err)
{
    equity_ctx *e = ctx;
    return sebt_plot_equity_script(e->s, e->p, e->r, o, s, len, err);
}

static int plot_equity(plot_job *j, const cli_args *a)
{
    const char *cmd = j->cmd;
    if (cli_given(a, P_SWEEP) || cli_given(a, P_X) || cli_given(a, P_Y) || cli_given(a, P_METRIC) ||
        cli_given(a, P_FIX) || cli_given(a, P_AGG) || cli_given(a, P_WHERE))
        return cli_usage_error(cmd, "--sweep, --x, --y, --metric, --agg, --where and --fix are heatmap options");
    cli_combo_args ca = { .data = cli_str(a, P_DATA), .backend = cli_str(a, P_BACKEND), .output = j->output,
                          .script = j->script_out, .lenient = cli_given(a, P_LENIENT), .fill_gaps = cli_given(a, P_FILL_GAPS) };
    ca.params = sebt_params_default();
    int rc;
    if (cli_given(a, P_COMBO) && (rc = cli_pick_combo(cmd, cli_str(a, P_COMBO), &ca)) != CLI_EXIT_OK)
        return rc;
    for (int k = 0; k < a->v[P_SET].count; k++)
        if ((rc = cli_apply_set(cmd, &ca.params, a->v[P_SET].values[k])) != CLI_EXIT_OK)
            return rc;
    if (!ca.data)
        return cli_usage_error(cmd, "plot equity needs --data FILE");
    if ((rc = cli_validate_params(cmd, &ca.params)) != CLI_EXIT_OK)
        return rc;
    sebt_series s = { 0 };
    const sebt_backend *b;
    if ((rc = cli_combo_open(cmd, &ca, &s, &b)) != CLI_EXIT_OK)
        return rc;
    sebt_result r;
    memset(&r, 0, sizeof r);
    sebt_batch_opts opts = { .want_trades = true };
    sebt_error err = { 0 };
    if (sebt_backend_run(b, &s, &ca.params, 1, &opts, &r, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
        goto done;
    }
    if ((rc = cli_check_result(cmd, 0, &ca.params, &r)) != CLI_EXIT_OK)
        goto done;
    equity_ctx e = { &s, &ca.params, &r };
    rc = draw(j, make_equity, &e);
done:
    sebt_result_free(&r);
    sebt_series_free(&s);
    return rc;
}

/* ---- heatmap ------------------------------------------------------------------- */

typedef struct {
    const sebt_heatmap *h;
    const char *x, *y, *metric, *fixed, *where;
} heatmap_ctx;

static sebt_status make_heatmap(void *ctx, const sebt_plot_opts *o, char **s, size_t *len, sebt_error *err)
{
    heatmap_ctx *c = ctx;
    return sebt_plot_heatmap_script_ex(c->h, c->x, c->y, c->metric, c->fixed, c->where, o, s, len, err);
}

#define MAX_FIX 12
/* The columns read: x, y, the metric, combo, then one per --fix, then the
 * ones --where reads. */
#define HM_FIRST_FIX 4
#define HM_MAX_NAMES (HM_FIRST_FIX + MAX_FIX + SEBT_SWEEP_MAX_COLUMNS)

typedef struct {
    const char *names[HM_MAX_NAMES];
    double *cols[HM_MAX_NAMES];
    size_t n_names, n_rows;
    int n_fix;
    char fix_names[MAX_FIX][64], fixed[1024];
    double fix_value[MAX_FIX];
    sebt_where *where;
    const char *sweep_names[SEBT_SWEEP_MAX_COLUMNS];
    size_t where_slot[SEBT_SWEEP_MAX_COLUMNS];   /* sweep column i is names[where_slot[i]] */
    size_t n_sweep_names;
} heatmap_rows;

/* An axis is a parameter of SPEC §2; a name that is not one is named, with
 * the parameter it was likely meant to be. */
static int check_axis(const char *cmd, const char *opt, const char *name)
{
    if (sebt_param_index(name) >= 0)
        return CLI_EXIT_OK;
    const char *names[SEBT_N_PARAMS];
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        names[i] = sebt_param_table[i].name;
    int near = sebt_nearest_name(name, names, SEBT_N_PARAMS);
    if (near >= 0)
        return cli_usage_error(cmd, "%s %s: no parameter named '%s'; did you mean %s?", opt, name, name, names[near]);
    char all[1024];
    size_t used = 0;
    for (int i = 0; i < SEBT_N_PARAMS && used < sizeof all; i++)
        used += (size_t)snprintf(all + used, sizeof all - used, "%s%s", i ? ", " : "", names[i]);
    return cli_usage_error(cmd, "%s %s: no parameter named '%s'; an axis is a parameter (SPEC.md section 2): %s", opt,
                           name, name, all);
}

static int parse_fixes(const char *cmd, const cli_args *a, heatmap_rows *hr)
{
    hr->n_fix = a->v[P_FIX].count;
    if (hr->n_fix > MAX_FIX)
        return cli_usage_error(cmd, "--fix: at most %d", MAX_FIX);
    size_t used = 0;
    for (int k = 0; k < hr->n_fix; k++) {
        const char *v = a->v[P_FIX].values[k], *eq = strchr(v, '=');
        char *end = NULL;
        size_t nlen = (size_t)(eq - v);
        if (nlen >= sizeof hr->fix_names[k])
            return cli_usage_error(cmd, "--fix %s: the name is too long", v);
        memcpy(hr->fix_names[k], v, nlen);
        hr->fix_names[k][nlen] = '\0';
        if (strcmp(eq + 1, "true") == 0)
            hr->fix_value[k] = 1;
        else if (strcmp(eq + 1, "false") == 0)
            hr->fix_value[k] = 0;
        else if (!(hr->fix_value[k] = strtod(eq + 1, &end), end && end != eq + 1 && !*end))
            return cli_usage_error(cmd, "--fix %s: expected NAME=NUMBER or NAME=true|false", v);
        hr->names[hr->n_names++] = hr->fix_names[k];
        int n = snprintf(hr->fixed + used, sizeof hr->fixed - used, "%s%s", used ? " " : "", v);
        used += n > 0 && (size_t)n < sizeof hr->fixed - used ? (size_t)n : 0;
    }
    return CLI_EXIT_OK;
}

/* --where compiled over every column a sweep may have (an analysis column
 * the file lacks is then named when it is read); the columns it reads
 * join the names to read. */
static int parse_where(const char *cmd, const char *text, heatmap_rows *hr)
{
    if (!text)
        return CLI_EXIT_OK;
    sebt_error err = { 0 };
    if (sebt_sweep_where_ex(text, SEBT_COLS_RELATIVE, &hr->where, &err) != SEBT_OK)
        return cli_usage_error(cmd, "--where: %s", err.msg);
    bool is_bool[SEBT_SWEEP_MAX_COLUMNS];
    hr->n_sweep_names = sebt_sweep_columns_ex(hr->sweep_names, is_bool, SEBT_COLS_RELATIVE);
    for (size_t i = 0; i < hr->n_sweep_names; i++)
        if (sebt_where_uses(hr->where, i)) {
            hr->where_slot[i] = hr->n_names;
            hr->names[hr->n_names++] = hr->sweep_names[i];
        }
    return CLI_EXIT_OK;
}

/* A parameter the sweep did not vary makes a picture of one column, or of
 * none: refused, naming the one value every row has. */
static int check_varied(const char *cmd, const char *path, const char *opt, const char *name, const double *col,
                        size_t n)
{
    for (size_t r = 1; r < n; r++)
        if (col[r] != col[0] && !(isnan(col[r]) && isnan(col[0])))
            return CLI_EXIT_OK;
    char v[SEBT_DOUBLE_CHARS];
    int i = sebt_param_index(name);
    if (i >= 0 && sebt_param_table[i].type == SEBT_PARAM_BOOL)
        snprintf(v, sizeof v, "%s", n && col[0] != 0 ? "true" : "false");
    else
        sebt_format_double(n ? col[0] : NAN, v);
    fprintf(stderr, "sebt %s: error: %s %s: the sweep %s did not vary %s: all its %zu rows have %s=%s; choose a "
                    "parameter its grid varies\n", cmd, opt, name, path, name, n, name, v);
    return CLI_EXIT_USAGE;
}

/* Packs the rows every --fix and --where keep to the front of x, y and
 * the metric, their combos into combo; returns how many. */
static size_t keep_rows(heatmap_rows *hr, uint64_t *combo)
{
    size_t kept = 0;
    double vals[SEBT_SWEEP_MAX_COLUMNS] = { 0 };
    for (size_t r = 0; r < hr->n_rows; r++) {
        bool keep = true;
        for (int k = 0; k < hr->n_fix && keep; k++)
            keep = hr->cols[HM_FIRST_FIX + k][r] == hr->fix_value[k];
        if (keep && hr->where) {
            for (size_t i = 0; i < hr->n_sweep_names; i++)
                if (sebt_where_uses(hr->where, i))
                    vals[i] = hr->cols[hr->where_slot[i]][r];
            keep = sebt_where_eval(hr->where, vals);
        }
        if (!keep)
            continue;
        for (int c = 0; c < 3; c++)
            hr->cols[c][kept] = hr->cols[c][r];
        combo[kept++] = (uint64_t)hr->cols[3][r];
    }
    return kept;
}

static int draw_heatmap(plot_job *j, heatmap_rows *hr, const char *path, int agg, const char *where_text)
{
    const char *cmd = j->cmd;
    int rc = check_varied(cmd, path, "--x", hr->names[0], hr->cols[0], hr->n_rows);
    if (rc == CLI_EXIT_OK)
        rc = check_varied(cmd, path, "--y", hr->names[1], hr->cols[1], hr->n_rows);
    if (rc != CLI_EXIT_OK)
        return rc;
    uint64_t *combo = malloc((hr->n_rows ? hr->n_rows : 1) * sizeof *combo);
    if (!combo) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu rows\n", cmd, hr->n_rows);
        return CLI_EXIT_NOMEM;
    }
    size_t kept = keep_rows(hr, combo);
    sebt_heatmap h;
    memset(&h, 0, sizeof h);
    sebt_error err = { 0 };
    if (kept == 0) {
        fprintf(stderr, "sebt %s: error: no row of %s %s%s%s%s%s\n", cmd, path, hr->n_fix ? "has " : "",
                hr->n_fix ? hr->fixed : "", hr->n_fix && where_text ? " and " : "", where_text ? "meets --where " : "",
                where_text ? where_text : "");
        rc = CLI_EXIT_USAGE;
    } else if (sebt_heatmap_make_agg(hr->cols[0], hr->cols[1], hr->cols[2], combo, kept, agg, &h, &err) != SEBT_OK) {
        rc = cli_report_error(cmd, &err);
    } else {
        heatmap_ctx c = { &h, hr->names[0], hr->names[1], hr->names[2], hr->n_fix ? hr->fixed : NULL, where_text };
        rc = draw(j, make_heatmap, &c);
    }
    sebt_heatmap_free(&h);
    free(combo);
    return rc;
}

static int plot_heatmap(plot_job *j, const cli_args *a)
{
    const char *cmd = j->cmd;
    if (cli_given(a, P_DATA) || cli_given(a, P_COMBO) || cli_given(a, P_SET) || cli_given(a, P_BACKEND) ||
        cli_given(a, P_LENIENT) || cli_given(a, P_FILL_GAPS))
        return cli_usage_error(cmd, "--data, --combo, --set, --backend, --lenient and --fill-gaps are equity options");
    const char *path = cli_str(a, P_SWEEP), *x = cli_str(a, P_X), *y = cli_str(a, P_Y);
    const char *metric = cli_given(a, P_METRIC) ? cli_str(a, P_METRIC) : "sharpe";
    const char *where_text = cli_str(a, P_WHERE);
    int agg = cli_given(a, P_AGG) ? a->v[P_AGG].choice : SEBT_HEATMAP_MEDIAN;
    if (!path || !x || !y)
        return cli_usage_error(cmd, "plot heatmap needs --sweep FILE, --x PARAM and --y PARAM");
    int rc = check_axis(cmd, "--x", x);
    if (rc == CLI_EXIT_OK)
        rc = check_axis(cmd, "--y", y);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (strcmp(x, y) == 0)
        return cli_usage_error(cmd, "--x and --y are both %s: a heatmap needs two different parameters", x);
    const sebt_path_use paths[] = {
        { "--sweep", path, SEBT_PATH_INPUT, NULL },
        { "--output", j->output, SEBT_PATH_OUTPUT, NULL },
        { "--script", j->script_out, SEBT_PATH_OUTPUT, NULL },
    };
    if ((rc = cli_check_paths(cmd, paths, sizeof paths / sizeof paths[0])) != CLI_EXIT_OK)
        return rc;
    heatmap_rows *hr = calloc(1, sizeof *hr);
    if (!hr) {
        fprintf(stderr, "sebt %s: error: out of memory\n", cmd);
        return CLI_EXIT_NOMEM;
    }
    hr->names[0] = x;
    hr->names[1] = y;
    hr->names[2] = metric;
    hr->names[3] = "combo";
    hr->n_names = HM_FIRST_FIX;
    sebt_error err = { 0 };
    if ((rc = parse_fixes(cmd, a, hr)) == CLI_EXIT_OK && (rc = parse_where(cmd, where_text, hr)) == CLI_EXIT_OK) {
        if (sebt_sweep_columns_read(path, hr->names, hr->n_names, hr->cols, &hr->n_rows, &err) != SEBT_OK)
            rc = cli_report_error(cmd, &err);
        else
            rc = draw_heatmap(j, hr, path, agg, where_text);
    }
    for (size_t k = 0; k < hr->n_names; k++)
        free(hr->cols[k]);
    sebt_where_free(hr->where);
    free(hr);
    return rc;
}

int cli_cmd_plot(int argc, char **argv)
{
    plot_job j;
    memset(&j, 0, sizeof j);
    j.cmd = argv[0];
    cli_args a;
    int rc = cli_parse(&cli_cmd_plot_spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.n_pos != 1 || (strcmp(a.pos[0], "equity") != 0 && strcmp(a.pos[0], "heatmap") != 0))
        return cli_usage_error(j.cmd, "expected one picture: equity or heatmap");
    if ((rc = parse_common(&j, &a)) != CLI_EXIT_OK)
        return rc;
    return strcmp(a.pos[0], "equity") == 0 ? plot_equity(&j, &a) : plot_heatmap(&j, &a);
}

const cli_command cli_cmd_plot_spec = {
    .name = "plot",
    .summary = "pictures: one combo's equity and drawdown, a sweep's metric over two parameters",
    .usage = "equity --data FILE [--combo FILE:ID] [--set NAME=VALUE]... [--backend NAME] [--lenient] [--fill-gaps] --output FILE.png|FILE.svg "
             "[--size WxH] [--title TEXT] [--script FILE]\n"
             "heatmap --sweep FILE --x PARAM --y PARAM [--metric COLUMN] [--agg best|median|mean|q25|q75] [--where COND] "
             "[--fix NAME=VALUE]... --output FILE.png|FILE.svg "
             "[--size WxH] [--title TEXT] [--script FILE]\n",
    .about = "Pictures through gnuplot, PNG or SVG.\n"
             "  equity   one combo's cumulative pnl at each trade's exit, the trades marked\n"
             "           by exit reason, over its drawdown (SPEC section 7: its lowest point\n"
             "           is the combo's max_dd)\n"
             "  heatmap  a metric of a sweep (its CSV or npy) over two parameters: each\n"
             "           cell aggregates the rows with that pair (--agg, default median:\n"
             "           the typical combo there; best, the highest of many noisy rows,\n"
             "           flatters every cell), after --where and --fix keep the rows\n"
             "           they name; the highest cell is outlined, the aggregate named in\n"
             "           the title and colour bar. A parameter the sweep did not vary is\n"
             "           refused (exit 2), naming its one value\n",
    .opts = CLI_OPTS(plot_opts),
    .positional = "equity|heatmap",
    .epilog = "Exit codes: 0 ok; 1 gnuplot drew nothing (its messages are printed);\n"
              "2 bad usage or input, or gnuplot is missing (apt-get install gnuplot-nox,\n"
              "or SEBT_GNUPLOT names it); 3 no usable GPU.\n",
    .fn = cli_cmd_plot,
};
