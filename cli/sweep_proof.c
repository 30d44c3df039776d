/* A sweep's own proof (sweep.h, docs/cli.md "Verification"): the best
 * combos and a seeded sample re-run on the reference and compared with
 * what the sweep wrote, read back from its file; with --verify full, every
 * written row against the same sweep run another way, and the series
 * cache against a fresh parse. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/sweep_verify.h"
#include "sweep.h"

void sweep_proof_free(sweep_proof *p)
{
    free(p->cand);
    free(p->asc);
    free(p->asc_pos);
    free(p->mem);
    free(p->offset);
    free(p->kept);
    p->cand = p->asc = p->offset = NULL;
    p->asc_pos = NULL;
    p->mem = NULL;
    p->kept = NULL;
}

typedef struct {
    uint64_t combo;
    size_t pos;
} placed;

static int cmp_placed(const void *a, const void *b)
{
    uint64_t x = ((const placed *)a)->combo, y = ((const placed *)b)->combo;
    return x < y ? -1 : x > y;
}

/* asc and asc_pos: the candidates ascending, each with its place in cand. */
static bool order_candidates(sweep_proof *p)
{
    placed *t = malloc((p->n_cand ? p->n_cand : 1) * sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < p->n_cand; i++)
        t[i] = (placed){ p->cand[i], i };
    qsort(t, p->n_cand, sizeof *t, cmp_placed);
    for (size_t i = 0; i < p->n_cand; i++) {
        p->asc[i] = t[i].combo;
        p->asc_pos[i] = t[i].pos;
    }
    free(t);
    return true;
}

/* The rows a writer is likeliest to get wrong are always among the
 * candidates: the last (the tail of the file), the last of the first
 * window (the last formatting thread's slice) and the first. */
#define PROOF_EDGES 3
static size_t edges(size_t n, size_t window, uint64_t *out)
{
    size_t k = 0;
    if (n)
        out[k++] = n - 1;
    if (n && window && window < n)
        out[k++] = window - 1;
    if (n > 1 && (!window || window - 1 != 0))
        out[k++] = 0;
    return k;
}

static bool is_edge(const uint64_t *e, size_t ne, uint64_t v)
{
    for (size_t i = 0; i < ne; i++)
        if (e[i] == v)
            return true;
    return false;
}

int sweep_proof_plan(const char *cmd, sweep_proof *p, size_t n, size_t window)
{
    uint64_t e[PROOF_EDGES];
    size_t ne = edges(n, window, e);
    if (p->fixed && p->fixed < ne)
        ne = p->fixed;
    size_t want = p->fixed ? p->fixed - ne : SWEEP_PROOF_MAX;
    size_t draws = want + ne < n ? want + ne : n;
    p->cand = malloc((draws + ne + 1) * sizeof *p->cand);
    uint64_t *drawn = malloc((draws + 1) * sizeof *drawn);
    sebt_error err = { 0 };
    if (!p->cand || !drawn || sebt_sweep_sample(p->seed, n, draws, drawn, &err) != SEBT_OK) {
        free(drawn);
        fprintf(stderr, "sebt %s: error: out of memory for a verification sample of %zu combos\n", cmd, draws);
        return CLI_EXIT_NOMEM;
    }
    memcpy(p->cand, e, ne * sizeof *e);
    p->n_cand = p->n_edges = ne;
    for (size_t i = 0; i < draws && p->n_cand - ne < want; i++)
        if (!is_edge(e, ne, drawn[i]))
            p->cand[p->n_cand++] = drawn[i];
    free(drawn);
    size_t m = p->n_cand ? p->n_cand : 1;
    p->asc = malloc(m * sizeof *p->asc);
    p->asc_pos = malloc(m * sizeof *p->asc_pos);
    p->mem = calloc(m, sizeof *p->mem);
    p->offset = malloc(m * sizeof *p->offset);
    p->kept = malloc(m * sizeof *p->kept);
    if (!p->asc || !p->asc_pos || !p->mem || !p->offset || !p->kept) {
        fprintf(stderr, "sebt %s: error: out of memory for a verification sample of %zu combos\n", cmd, m);
        return CLI_EXIT_NOMEM;
    }
    memset(p->offset, 0xff, m * sizeof *p->offset);
    memset(p->kept, true, m * sizeof *p->kept);
    if (!order_candidates(p)) {
        fprintf(stderr, "sebt %s: error: out of memory for a verification sample of %zu combos\n", cmd, m);
        return CLI_EXIT_NOMEM;
    }
    return CLI_EXIT_OK;
}

/* ---- during the sweep: what was handed over for each candidate ------------- */

/* The piece holding combo `target`'s row: the last whose first combo is
 * not after it. */
static int piece_of(const sebt_sweep_window *w, uint64_t target)
{
    int i = 0;
    while (i + 1 < w->n_parts && w->first + w->part_first[i + 1] <= target)
        i++;
    return i;
}

/* Each candidate's place in the file, from where the driver says its row
 * starts in its piece: a scan of every row up to the last candidate, on
 * the writer's thread, cost a CSV sweep a few percent. What is at that
 * place is read back and checked after the sweep. */
void sweep_proof_window(sweep_proof *p, const sebt_sweep_window *w, bool rows_in_file)
{
    uint64_t base = p->written;
    for (int i = 0; i < w->n_parts; i++)
        p->written += w->part_bytes[i];
    int piece = 0;
    uint64_t before = 0;   /* the bytes of the pieces before `piece` */
    for (; p->cursor < p->n_cand && p->asc[p->cursor] < w->first + w->count; p->cursor++) {
        uint64_t target = p->asc[p->cursor];
        size_t pos = p->asc_pos[p->cursor];
        const sebt_result *r = &w->results[target - w->first];
        p->mem[pos] = (sebt_sweep_record){ .combo = target, .metrics = r->metrics, .valid_bars = r->valid_bars,
                                           .open_at_end = r->open_at_end.open ? 1 : 0,
                                           .has_analysis = w->analysis != NULL };
        if (w->analysis)
            p->mem[pos].analysis = w->analysis[target - w->first];
        p->kept[pos] = !w->passes || w->passes[target - w->first];
        if (!rows_in_file || !w->n_parts || !w->row_at || w->row_at[target - w->first] == SIZE_MAX)
            continue;   /* no row of it in the file */
        for (int to = piece_of(w, target); piece < to; piece++)
            before += w->part_bytes[piece];
        p->offset[pos] = base + before + w->row_at[target - w->first];
    }
}

/* ---- after the sweep --------------------------------------------------------- */

static void combo_params(const sweep_proof_ctx *c, uint64_t idx, sebt_params *p)
{
    if (c->grid)
        sebt_grid_combos(c->grid, (size_t)idx, 1, p);
    else
        *p = c->combos[idx];
}

static bool same_params(const sebt_params *a, const sebt_params *b)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        double x = sebt_params_get_double(a, i), y = sebt_params_get_double(b, i);
        if (memcmp(&x, &y, sizeof x) != 0)
            return false;
    }
    return true;
}

/* Reads combo idx's row back from the file at fd; false with why set when
 * it is not there, does not parse, or is another combo's row. */
static bool read_row(const sweep_proof_ctx *c, int fd, uint64_t idx, uint64_t offset, sebt_sweep_record *rec,
                     char *why, size_t why_size)
{
    unsigned char buf[SEBT_CSV_ROW_MAX + 1];
    size_t want = c->npy ? sebt_sweep_npy_row_bytes_ex(c->analysis) : SEBT_CSV_ROW_MAX;
    ssize_t got = pread(fd, buf, want, (off_t)offset);
    uint64_t row_idx = 0;
    sebt_params p, mine;
    if (got <= 0 || (c->npy && (size_t)got != want)) {
        snprintf(why, why_size, "the row of combo %" PRIu64 " is not in the file%s", idx, got < 0 ? "" : " (cut short)");
        return false;
    }
    if (c->npy) {
        sebt_sweep_npy_row_read_ex(buf, c->analysis, &row_idx, &p, rec);
    } else {
        buf[got] = '\0';
        char *nl = strchr((char *)buf, '\n');
        sebt_result r;
        sebt_trade_stats a;
        size_t i = 0;
        if (nl)
            *nl = '\0';
        char perr[200];
        if (!nl || !sweep_parse_csv_row((char *)buf, &i, &p, &r, c->analysis ? &a : NULL, perr, sizeof perr)) {
            snprintf(why, why_size, "the row of combo %" PRIu64 " does not read back: %s", idx, nl ? perr : "no end of line");
            return false;
        }
        row_idx = i;
        *rec = (sebt_sweep_record){ .combo = i, .metrics = r.metrics, .valid_bars = r.valid_bars,
                                    .open_at_end = r.open_at_end.open ? 1 : 0, .has_analysis = c->analysis };
        if (c->analysis)
            rec->analysis = a;
    }
    combo_params(c, idx, &mine);
    if (row_idx != idx || !same_params(&p, &mine)) {
        snprintf(why, why_size, "the row written for combo %" PRIu64 " reads back as combo %" PRIu64 "%s", idx, row_idx,
                 row_idx == idx ? " with other parameters" : "");
        return false;
    }
    rec->combo = idx;
    return true;
}

/* How many more candidates fit the budget after `done` of them took
 * done_s: a tenth of the sweep's time (SWEEP_PROOF_SHARE), less what the
 * proof spent so far, at the rate the first ones ran. */
static size_t sample_more(const sweep_proof *p, const sweep_proof_ctx *c, size_t done, double done_s)
{
    double budget = SWEEP_PROOF_SHARE * c->sweep_seconds - p->seconds;
    if (budget <= 0 || done == 0 || done >= p->n_cand)
        return 0;
    double per_combo = done_s / (double)done;
    double k = per_combo > 0 ? budget / per_combo : (double)(p->n_cand - done);
    return k >= (double)(p->n_cand - done) ? p->n_cand - done : (size_t)k;
}

/* Runs the reference on n combos and compares; fills p's outcome. Returns
 * an exit code, 1 (printed) on a difference. */
static int check_records(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c, const sebt_params *pp,
                         const sebt_sweep_record *rr, const bool *kept, size_t n, const char *which, bool exact_path)
{
    sebt_verify_report rep;
    sebt_error err = { 0 };
    /* With --where, each combo's kept or dropped re-decided on the
     * reference's row by the reference's literal reading of the condition. */
    sebt_sweep_where_decisions wd = { c->where ? sebt_where_text(c->where) : NULL, kept };
    const sebt_sweep_where_decisions *w = c->where ? &wd : NULL;
    sebt_status st = exact_path ? sebt_sweep_verify_exact_where(c->b, c->s, pp, rr, n, c->threads, w, &rep, &err)
                                : sebt_sweep_verify_where(c->b, c->s, pp, rr, n, c->threads, w, &rep, &err);
    if (st != SEBT_OK)
        return cli_report_error(cmd, &err);
    p->last_seconds = rep.seconds;
    p->seconds += rep.seconds;
    if (!rep.differ)
        return CLI_EXIT_OK;
    p->differ += rep.differ;
    snprintf(p->what, sizeof p->what, "combo %" PRIu64 ": %s (%s: %zu of %zu differ)", rep.first_differ, rep.what,
             which, rep.differ, n);
    return CLI_EXIT_CHECK_FAILED;
}

/* The sampled candidates' records: read back from the file, or as handed over. */
static int gather_sample(sweep_proof *p, const sweep_proof_ctx *c, size_t from, size_t k, sebt_params *pp,
                         sebt_sweep_record *rr)
{
    int fd = c->read_back && c->file && !c->json ? open(c->file, O_RDONLY | O_CLOEXEC) : -1;
    p->read_back = fd >= 0;
    for (size_t i = from; i < k; i++) {
        combo_params(c, p->cand[i], &pp[i]);
        rr[i] = p->mem[i];
        if (fd >= 0 && p->offset[i] == UINT64_MAX && !c->where) {   /* every row is in the file */
            snprintf(p->what, sizeof p->what, "the row of combo %" PRIu64 " was not found in the rows written", p->cand[i]);
            close(fd);
            p->differ++;
            return CLI_EXIT_CHECK_FAILED;
        }
        if (fd >= 0 && p->offset[i] != UINT64_MAX &&
            !read_row(c, fd, p->cand[i], p->offset[i], &rr[i], p->what, sizeof p->what)) {
            close(fd);
            p->differ++;
            return CLI_EXIT_CHECK_FAILED;
        }
    }
    if (fd >= 0)
        close(fd);
    return CLI_EXIT_OK;
}

static int failed(const char *cmd, const sweep_proof *p, int rc)
{
    if (rc == CLI_EXIT_CHECK_FAILED)
        fprintf(stderr, "sebt %s: error: verification failed: %s; seed %#" PRIx64 "; the output is not written "
                "(the previous file, if any, is unchanged)\n", cmd, p->what, p->seed);
    return rc;
}

/* Working arrays for n combos. calloc: gcc without OpenMP warns
 * (maybe-uninitialized) that they reach check_records unwritten when n is 0. */
static bool arrays(const char *cmd, size_t n, sebt_params **pp, sebt_sweep_record **rr)
{
    *pp = calloc(n + 1, sizeof **pp);
    *rr = calloc(n + 1, sizeof **rr);
    if (*pp && *rr)
        return true;
    fprintf(stderr, "sebt %s: error: out of memory for the verification\n", cmd);
    free(*pp);
    free(*rr);
    return false;
}

/* A series read from the cache is what the sweep and the reference both
 * ran on, so a wrong entry would agree with itself: it must equal a fresh
 * parse of its file. */
static int check_series(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c)
{
    if (!c->series_cached || !c->data)
        return CLI_EXIT_OK;
    sebt_error err = { 0 };
    double t0 = cli_now();
    int rc = sweep_series_fresh_check(c->data, c->lenient, c->fill_gaps, c->s, p->what, sizeof p->what, &err);
    p->seconds += cli_now() - t0;
    if (rc < 0)
        return cli_report_error(cmd, &err);
    p->series_fresh_checked = true;
    if (rc == 0)
        return CLI_EXIT_OK;
    p->differ++;
    return CLI_EXIT_CHECK_FAILED;
}

int sweep_proof_best(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c, const sebt_sweep_record *best,
                     size_t n_best)
{
    int series_rc = check_series(cmd, p, c);
    if (series_rc != CLI_EXIT_OK)
        return failed(cmd, p, series_rc);
    sebt_params *pp;
    sebt_sweep_record *rr;
    if (!arrays(cmd, n_best, &pp, &rr))
        return CLI_EXIT_NOMEM;
    for (size_t i = 0; i < n_best; i++) {
        combo_params(c, best[i].combo, &pp[i]);
        rr[i] = best[i];
    }
    int rc = check_records(cmd, p, c, pp, rr, NULL, n_best, "the best combos", false);
    p->best = n_best;
    free(pp);
    free(rr);
    return failed(cmd, p, rc);
}

int sweep_proof_rest(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c)
{
    sebt_params *pp;
    sebt_sweep_record *rr;
    if (!arrays(cmd, p->n_cand, &pp, &rr))
        return CLI_EXIT_NOMEM;
    p->sweep_seconds = c->sweep_seconds;
    /* At least SWEEP_PROOF_MIN (or --verify N), then as many more as the
     * budget buys at the rate those ran. */
    size_t k = p->fixed || p->n_cand < SWEEP_PROOF_MIN ? p->n_cand : SWEEP_PROOF_MIN;
    int rc = gather_sample(p, c, 0, k, pp, rr);
    if (rc == CLI_EXIT_OK)
        rc = check_records(cmd, p, c, pp, rr, p->kept, k, "the sampled combos", true);
    p->sampled = rc == CLI_EXIT_OK ? k : 0;
    size_t more = rc == CLI_EXIT_OK && !p->fixed ? sample_more(p, c, k, p->last_seconds) : 0;
    if (more) {
        rc = gather_sample(p, c, k, k + more, pp, rr);
        if (rc == CLI_EXIT_OK)
            rc = check_records(cmd, p, c, pp + k, rr + k, p->kept + k, more, "the sampled combos", true);
        p->sampled = k + more;
    }
    if (rc == CLI_EXIT_OK && p->mode == PROOF_FULL)
        rc = sweep_proof_full(cmd, p, c);
    free(pp);
    free(rr);
    return failed(cmd, p, rc);
}

int sweep_proof_check(const char *cmd, sweep_proof *p, const sweep_proof_ctx *c, const sebt_sweep_record *best,
                      size_t n_best)
{
    int rc = sweep_proof_best(cmd, p, c, best, n_best);
    return rc == CLI_EXIT_OK ? sweep_proof_rest(cmd, p, c) : rc;
}

void sweep_proof_say(const char *cmd, const sweep_proof *p, const char *shown)
{
    fprintf(stderr, "sebt %s: verified: the best combo%s and %zu sampled (seed %#" PRIx64 "%s%s) equal the reference",
            cmd, p->best == 1 ? "" : "s", p->sampled, p->seed, p->read_back ? ", rows read back from " : "",
            p->read_back ? shown : "");
    if (p->series_fresh_checked)
        fprintf(stderr, "; the cached series equals a fresh parse of the file");
    if (p->mode == PROOF_FULL)
        fprintf(stderr, "; all %zu rows equal the sweep run another way%s", p->rows_compared,
                p->cache_checked ? "; the cached series equals a fresh parse" : "");
    fprintf(stderr, " (%.2f s, %.0f%% of the sweep)\n", p->seconds,
            p->sweep_seconds > 0 ? 100.0 * p->seconds / p->sweep_seconds : 0.0);
}

/* What the series the proof ran on was checked against. */
static const char *series_of(const sweep_proof *p)
{
    return p->series_fresh_checked ? "cache-equals-fresh-parse" : "parsed";
}

void sweep_proof_json(cli_json *j, const sweep_proof *p)
{
    char seed[24];
    snprintf(seed, sizeof seed, "%#" PRIx64, p->seed);
    cli_json_begin_object(j, "verification");
    cli_json_int(j, "version", SWEEP_PROOF_VERSION);
    cli_json_string(j, "against", "reference");
    cli_json_int(j, "best", (int64_t)p->best);
    cli_json_int(j, "sampled", (int64_t)p->sampled);
    cli_json_string(j, "sampled_on", "exact-path");
    cli_json_string(j, "series", series_of(p));
    cli_json_string(j, "seed", seed);
    cli_json_bool(j, "rows_read_back", p->read_back);
    cli_json_bool(j, "full", p->mode == PROOF_FULL);
    cli_json_int(j, "differ", (int64_t)p->differ);
    cli_json_end_object(j);
}

size_t sweep_proof_note(const sweep_proof *p, char *b, size_t size)
{
    int n = snprintf(b, size, "# sebt-verification {\"version\": %d, \"against\": \"reference\", \"best\": %zu, "
                     "\"sampled\": %zu, \"sampled_on\": \"exact-path\", \"series\": \"%s\", \"seed\": \"%#" PRIx64 "\", "
                     "\"rows_read_back\": %s, \"full\": %s, \"differ\": %zu}", SWEEP_PROOF_VERSION, p->best, p->sampled,
                     series_of(p), p->seed, p->read_back ? "true" : "false", p->mode == PROOF_FULL ? "true" : "false",
                     p->differ);
    return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}
