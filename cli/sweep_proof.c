/* A sweep's own proof as `sebt sweep` runs it: the library's
 * (core/sweep_proof.c, sebt/sweep_proof.h) on the file it wrote, its
 * failures and its record printed here; with --verify full, every written
 * row against the same sweep run another way, and the series cache
 * against a fresh parse (sweep_proof_full.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

void sweep_proof_free(sweep_proof *p)
{
    sebt_sweep_proof_free(&p->core);
}

int sweep_proof_plan(const char *cmd, sweep_proof *p, size_t n, size_t window)
{
    sebt_error err = { 0 };
    p->core.best_whole_reference = p->mode == PROOF_FULL;   /* a gate's: every bar's z-scores too */
    if (sebt_sweep_proof_plan(&p->core, n, window, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    return CLI_EXIT_OK;
}

void sweep_proof_window(sweep_proof *p, const sebt_sweep_window *w, bool rows_in_file)
{
    sebt_sweep_proof_window(&p->core, w, rows_in_file);
}

/* What the library's proof checks, from what the command knows. */
static sebt_sweep_proof_ctx library_ctx(const sweep_proof_ctx *c)
{
    return (sebt_sweep_proof_ctx){ .b = c->b, .s = c->s, .grid = c->grid, .combos = c->combos,
                                   .n_combos = c->n_combos, .threads = c->threads,
                                   .file = c->read_back && c->file && !c->json ? c->file : NULL, .npy = c->npy,
                                   .cols = c->relative   ? SEBT_COLS_RELATIVE
                                           : c->analysis ? SEBT_COLS_ANALYSIS
                                                         : SEBT_COLS_PLAIN,
                                   .where = c->where, .sweep_seconds = c->sweep_seconds,
                                   .series_file = c->series_cached ? c->data : NULL,
                                   .series_load = { .lenient = c->lenient, .fill_gaps = c->fill_gaps } };
}

/* A difference (exit 1) or another failure, printed. */
static int failed(const char *cmd, const sweep_proof *p, const sebt_error *err)
{
    if (err->code != SEBT_ERR_VERIFY)
        return cli_report_error(cmd, err);
    fprintf(stderr, "sebt %s: error: verification failed: %s; seed %#" PRIx64 "; the output is not written "
            "(the previous file, if any, is unchanged)\n", cmd, p->core.what, p->core.seed);
    return CLI_EXIT_CHECK_FAILED;
}

int sweep_proof_check(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c, const sebt_sweep_record *best,
                      size_t n_best)
{
    sebt_sweep_proof_ctx lc = library_ctx(c);
    sebt_error err = { 0 };
    if (sebt_sweep_proof_check(&p->core, &lc, best, n_best, &err) != SEBT_OK)
        return failed(cmd, p, &err);
    if (p->mode != PROOF_FULL)
        return CLI_EXIT_OK;
    int rc = sweep_proof_full(cmd, p, c);
    if (rc == CLI_EXIT_CHECK_FAILED) {
        err.code = SEBT_ERR_VERIFY;
        return failed(cmd, p, &err);
    }
    return rc;
}

void sweep_proof_say(const char *cmd, const sweep_proof *p, const char *shown)
{
    fprintf(stderr, "sebt %s: verified: the best combo%s and %zu sampled (seed %#" PRIx64 "%s%s) equal the reference",
            cmd, p->core.best == 1 ? "" : "s", p->core.sampled, p->core.seed, p->core.read_back ? ", rows read back from " : "",
            p->core.read_back ? shown : "");
    if (p->core.series_fresh_checked)
        fprintf(stderr, "; the cached series equals a fresh parse of the file");
    if (p->mode == PROOF_FULL)
        fprintf(stderr, "; all %zu rows equal the sweep run another way%s", p->rows_compared,
                p->cache_checked ? "; the cached series equals a fresh parse" : "");
    fprintf(stderr, " (%.2f s, %.0f%% of the sweep)\n", p->core.seconds,
            p->core.sweep_seconds > 0 ? 100.0 * p->core.seconds / p->core.sweep_seconds : 0.0);
}

void sweep_proof_say_skipped(const char *cmd)
{
    fprintf(stderr, "sebt %s: not verified (--no-verify): no best combo or sample recomputed on the reference, "
            "no cached series compared with a fresh parse, no row read back\n", cmd);
}

/* What the series the proof ran on was checked against. */
static const char *series_of(const sweep_proof *p)
{
    return p->core.series_fresh_checked ? "cache-equals-fresh-parse" : "parsed";
}

/* What the best combos were recomputed on. */
static const char *best_on(const sweep_proof *p)
{
    return p->core.best_whole_reference ? "reference" : "reference-z-where-read";
}

void sweep_proof_json(cli_json *j, const sweep_proof *p)
{
    char seed[24];
    snprintf(seed, sizeof seed, "%#" PRIx64, p->core.seed);
    cli_json_begin_object(j, "verification");
    cli_json_int(j, "version", SEBT_VERIFICATION_VERSION);
    cli_json_string(j, "against", "reference");
    cli_json_int(j, "best", (int64_t)p->core.best);
    cli_json_string(j, "best_on", best_on(p));
    cli_json_int(j, "sampled", (int64_t)p->core.sampled);
    cli_json_string(j, "sampled_on", "exact-path");
    cli_json_string(j, "series", series_of(p));
    cli_json_string(j, "seed", seed);
    cli_json_bool(j, "rows_read_back", p->core.read_back);
    cli_json_bool(j, "full", p->mode == PROOF_FULL);
    cli_json_int(j, "differ", (int64_t)p->core.differ);
    cli_json_end_object(j);
}

size_t sweep_proof_note(const sweep_proof *p, char *b, size_t size)
{
    int n = snprintf(b, size, "# sebt-verification {\"version\": %d, \"against\": \"reference\", \"best\": %zu, "
                     "\"best_on\": \"%s\", \"sampled\": %zu, \"sampled_on\": \"exact-path\", \"series\": \"%s\", "
                     "\"seed\": \"%#" PRIx64 "\", \"rows_read_back\": %s, \"full\": %s, \"differ\": %zu}",
                     SEBT_VERIFICATION_VERSION, p->core.best, best_on(p), p->core.sampled, series_of(p), p->core.seed,
                     p->core.read_back ? "true" : "false", p->mode == PROOF_FULL ? "true" : "false", p->core.differ);
    return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}
