/* --overfit of `sebt split` and `sebt walkforward`: `sebt sweep --overfit`'s
 * measures (sebt/overfit.h) over the bars a selection was made on, those
 * bars a series of their own as the command backtests them; for
 * walkforward one record per train window, a table and their medians. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oos_cli.h"
#include "sweep.h"

int cli_oos_overfit_blocks(const char *cmd, const cli_args *a, int opt_overfit, int opt_blocks, int *blocks)
{
    *blocks = 0;
    if (cli_given(a, opt_blocks) && !cli_given(a, opt_overfit))
        return cli_usage_error(cmd, "--overfit-blocks sizes --overfit's blocks: give --overfit too");
    if (cli_given(a, opt_overfit))
        *blocks = cli_given(a, opt_blocks) ? (int)a->v[opt_blocks].u : SEBT_OVERFIT_BLOCKS;
    if (*blocks % 2)
        return cli_usage_error(cmd, "--overfit-blocks %d: expected an even number (each split takes half the "
                               "blocks)", *blocks);
    return -1;
}

int cli_oos_overfit(const cli_oos_job *j, size_t from, size_t count, int blocks, sebt_overfit *o)
{
    sebt_series part;
    sebt_error err = { 0 };
    memset(o, 0, sizeof *o);
    if (sebt_series_slice(&j->s, from, count, &part, &err) != SEBT_OK)
        return cli_report_error(j->cmd, &err);
    int rc = sweep_overfit_run(j->cmd, j->b, &part, j->grid, j->combos, j->n_combos, blocks, j->threads, o);
    sebt_series_free(&part);
    if (rc != CLI_EXIT_OK)
        sebt_overfit_free(o);
    return rc;
}

static bool stands_out(double dsr, double pbo)
{
    return dsr >= 0.95 && pbo < 0.5;
}

void cli_wf_overfit_medians(const sebt_overfit *of, const bool *done, size_t n_windows, cli_wf_overfit_summary *sum)
{
    sum->windows = sum->stand_out = 0;
    sum->median_dsr = sum->median_pbo = NAN;
    double *d = malloc((n_windows + 1) * sizeof *d), *p = malloc((n_windows + 1) * sizeof *p);
    for (size_t k = 0; d && p && k < n_windows; k++) {
        if (!done[k])
            continue;
        d[sum->windows] = of[k].dsr.dsr;
        p[sum->windows++] = of[k].pbo.pbo;
        sum->stand_out += stands_out(of[k].dsr.dsr, of[k].pbo.pbo);
    }
    if (d && p && sum->windows) {
        sum->median_dsr = cli_oos_median(d, sum->windows);
        sum->median_pbo = cli_oos_median(p, sum->windows);
    }
    free(d);
    free(p);
}

/* A probability in a column six wide; "-" when undefined (NaN). */
static void put_share(FILE *f, double v)
{
    if (isnan(v))
        fprintf(f, "%6s", "-");
    else
        fprintf(f, "%6.3f", v);
}

void cli_wf_overfit_text(FILE *f, const sebt_overfit *of, const bool *done, size_t n_windows)
{
    int blocks = 0;
    for (size_t k = 0; k < n_windows && !blocks; k++)
        blocks = done[k] ? of[k].pbo.blocks : 0;
    fprintf(f, "\nOverfitting of each train window's selection (every combo on its train bars, the best by "
               "per-trade Sharpe;\nPBO over %d blocks of those bars; docs/formats.md, \"Overfitting\"):\n", blocks);
    fprintf(f, "%4s %9s %8s %6s %11s %6s %6s  %s\n", "win", "best", "sharpe", "n", "noise best", "DSR", "PBO",
            "verdict");
    for (size_t k = 0; k < n_windows; k++) {
        if (!done[k])
            continue;
        const sebt_dsr *d = &of[k].dsr;
        fprintf(f, "%4zu %9zu %8.4f %6" PRIu64 "%s%11.4f ", k + 1, of[k].best, d->sr, d->t,
                cli_oos_few_mark((int64_t)d->t, false), d->sr0);
        put_share(f, d->dsr);
        fputc(' ', f);
        put_share(f, of[k].pbo.pbo);
        fprintf(f, "  %s\n", stands_out(d->dsr, of[k].pbo.pbo) ? "stands out" : "may be a fluke");
    }
    bool few = false;
    for (size_t k = 0; k < n_windows; k++)
        few |= done[k] && of[k].dsr.t < SEBT_FEW_TRADES;
    cli_oos_few_footnote(f, few);
    fputs("(stands out: DSR >= 0.95 and PBO < 0.5; noise best: the best Sharpe as many combos of pure noise\n"
          "would be expected to show)\n", f);
}

void cli_wf_overfit_json(cli_json *j, const cli_wf_overfit_summary *sum, int blocks)
{
    cli_json_begin_object(j, "overfit_summary");
    cli_json_int(j, "blocks", blocks);
    cli_json_int(j, "windows", (int64_t)sum->windows);
    cli_json_double(j, "median_dsr", sum->median_dsr);
    cli_json_double(j, "median_pbo", sum->median_pbo);
    cli_json_int(j, "stand_out", (int64_t)sum->stand_out);
    cli_json_end_object(j);
}
