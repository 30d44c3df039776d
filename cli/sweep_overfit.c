/* `sebt sweep --overfit`: the deflated Sharpe ratio of the sweep's best
 * combo and the probability of backtest overfitting over all its combos
 * (sebt/overfit.h), as a text block and a JSON section (docs/formats.md,
 * "Overfitting"). */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "sweep.h"

int sweep_overfit_run(const char *cmd, const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                      const sebt_params *combos, size_t n_combos, int blocks, int threads, sebt_overfit *out)
{
    sebt_error err = { 0 };
    if (sebt_overfit_sweep(b, s, grid, combos, n_combos, blocks, threads, out, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

/* A probability as people read it; "undefined" for NaN. */
static void put_share(FILE *f, double v)
{
    if (isnan(v))
        fputs("undefined", f);
    else
        fprintf(f, "%.3f", v);
}

void sweep_overfit_text(FILE *f, const sebt_overfit *o, const char *scope)
{
    const sebt_dsr *d = &o->dsr;
    const sebt_pbo *p = &o->pbo;
    fprintf(f, "\nOverfitting%s (per-trade Sharpe of R; docs/formats.md, \"Overfitting\"):\n", scope);
    fprintf(f, "  best combo %zu: Sharpe %.4f over %llu trades (skew %.3f, kurtosis %.3f)\n", o->best, d->sr,
            (unsigned long long)d->t, d->skew, d->kurt);
    fprintf(f, "  expected best Sharpe of %llu combos of pure noise: %.4f (Sharpe variance %.6f over the %zu "
            "combos with 2+ trades)\n", (unsigned long long)d->n_trials, d->sr0, d->var_sr, o->with_sharpe);
    fprintf(f, "  deflated Sharpe ratio: ");
    put_share(f, d->dsr);
    fprintf(f, " (the probability that the best's true Sharpe beats that)\n");
    fprintf(f, "  PBO: ");
    put_share(f, p->pbo);
    fprintf(f, " over %zu of %zu splits of %d blocks (logit median %.3f): how often the in-sample best\n"
            "       ranks in the lower half out of sample\n", p->n_counted, p->n_splits, p->blocks,
            p->logit_median);
    fprintf(f, "  degradation: out-of-sample Sharpe = %.4f %c %.4f x in-sample Sharpe of the in-sample best;"
            " out-of-sample loss in ", p->intercept, p->slope < 0 ? '-' : '+', fabs(p->slope));
    put_share(f, p->prob_oos_loss);
    fprintf(f, " of splits\n");
    bool fluke = !(d->dsr >= 0.95) || !(p->pbo < 0.5);
    fprintf(f, "  verdict: %s\n", fluke ? "the best combo may well be a fluke (DSR < 0.95 or PBO >= 0.5)"
                                         : "the best combo stands out from luck (DSR >= 0.95 and PBO < 0.5)");
}

void sweep_overfit_json(cli_json *j, const sebt_overfit *o)
{
    const sebt_dsr *d = &o->dsr;
    const sebt_pbo *p = &o->pbo;
    cli_json_begin_object(j, "overfit");
    cli_json_int(j, "version", o->version);
    cli_json_int(j, "best", (int64_t)o->best);
    cli_json_begin_object(j, "dsr");
    cli_json_int(j, "trials", (int64_t)d->n_trials);
    cli_json_int(j, "with_sharpe", (int64_t)o->with_sharpe);
    cli_json_double(j, "sharpe_variance", d->var_sr);
    cli_json_double(j, "sharpe", d->sr);
    cli_json_int(j, "trades", (int64_t)d->t);
    cli_json_double(j, "skew", d->skew);
    cli_json_double(j, "kurtosis", d->kurt);
    cli_json_double(j, "expected_max_sharpe", d->sr0);
    cli_json_double(j, "dsr", d->dsr);
    cli_json_end_object(j);
    cli_json_begin_object(j, "pbo");
    cli_json_int(j, "blocks", p->blocks);
    cli_json_int(j, "splits", (int64_t)p->n_splits);
    cli_json_int(j, "counted", (int64_t)p->n_counted);
    cli_json_double(j, "pbo", p->pbo);
    cli_json_double(j, "logit_median", p->logit_median);
    cli_json_double(j, "slope", p->slope);
    cli_json_double(j, "intercept", p->intercept);
    cli_json_int(j, "fitted", (int64_t)p->n_fit);
    cli_json_double(j, "prob_oos_loss", p->prob_oos_loss);
    cli_json_begin_array(j, "logits");
    for (size_t i = 0; i < p->n_splits; i++)
        cli_json_double(j, NULL, p->logit[i]);
    cli_json_end_array(j);
    cli_json_end_object(j);
    cli_json_double(j, "seconds", o->seconds);
    cli_json_double(j, "pbo_seconds", o->pbo_seconds);
    cli_json_end_object(j);
}
