/* A sweep's own proof (include/sebt/sweep_proof.h, docs/cli.md
 * "Verification"): the candidates drawn before the sweep, what the driver
 * handed over for each (and where its row went) noted as windows pass,
 * then the series, the best combos on the reference's walk (with its
 * z-scores where read; the whole reference when asked) and the sample on
 * the exact path, its rows read back from the file as written. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sebt/sebt.h"
#include "sebt/sweep_proof.h"
#include "sweep_verify.h"
#include "test_faults.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void sebt_sweep_proof_free(sebt_sweep_proof *p)
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

/* ---- before the sweep: the candidates ---------------------------------------- */

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
static bool order_candidates(sebt_sweep_proof *p)
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

/* The rows a writer is likeliest to get wrong come first: the last (the
 * tail of the file), the last of the first window (the last formatting
 * thread's slice) and the first. */
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

static sebt_status no_memory(sebt_error *err, size_t n)
{
    return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for a verification sample of %zu combos", n);
}

sebt_status sebt_sweep_proof_plan(sebt_sweep_proof *p, size_t n, size_t window, sebt_error *err)
{
    uint64_t e[PROOF_EDGES];
    size_t ne = edges(n, window, e);
    if (p->fixed && p->fixed < ne)
        ne = p->fixed;
    size_t want = p->fixed ? p->fixed - ne : SEBT_VERIFY_MAX;
    size_t draws = want + ne < n ? want + ne : n;
    p->cand = malloc((draws + ne + 1) * sizeof *p->cand);
    uint64_t *drawn = malloc((draws + 1) * sizeof *drawn);
    if (!p->cand || !drawn || sebt_sweep_sample(p->seed, n, draws, drawn, err) != SEBT_OK) {
        free(drawn);
        return no_memory(err, draws);
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
    if (!p->asc || !p->asc_pos || !p->mem || !p->offset || !p->kept || !order_candidates(p))
        return no_memory(err, m);
    memset(p->offset, 0xff, m * sizeof *p->offset);
    memset(p->kept, true, m * sizeof *p->kept);
    return SEBT_OK;
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
 * the writer's thread, cost a CSV sweep a few percent. */
void sebt_sweep_proof_window(sebt_sweep_proof *p, const sebt_sweep_window *w, bool rows_in_file)
{
    uint64_t base = p->written;
    p->windows++;
    p->windows_with_analysis += w->analysis != NULL;
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

static void combo_params(const sebt_sweep_proof_ctx *c, uint64_t idx, sebt_params *p)
{
    if (c->grid)
        sebt_grid_combos(c->grid, (size_t)idx, 1, p);
    else
        *p = c->combos[idx];
}

/* Reads combo idx's row back from the file at fd; false with why set when
 * it is not there, does not parse, or is another combo's row. */
static bool read_row(const sebt_sweep_proof_ctx *c, int fd, uint64_t idx, uint64_t offset, sebt_sweep_record *rec,
                     char *why, size_t why_size)
{
    unsigned char buf[SEBT_CSV_ROW_MAX + 1];
    size_t want = c->npy ? sebt_sweep_npy_row_bytes_ex(c->cols) : SEBT_CSV_ROW_MAX;
    ssize_t got = pread(fd, buf, want, (off_t)offset);
    uint64_t row_idx = 0;
    sebt_params p, mine;
    if (got <= 0 || (c->npy && (size_t)got != want)) {
        snprintf(why, why_size, "the row of combo %" PRIu64 " is not in the file%s", idx, got < 0 ? "" : " (cut short)");
        return false;
    }
    if (c->npy) {
        sebt_sweep_npy_row_read_ex(buf, c->cols, &row_idx, &p, rec);
    } else {
        buf[got] = '\0';
        char *nl = strchr((char *)buf, '\n');
        if (nl)
            *nl = '\0';
        char perr[200];
        if (!nl || !sebt_sweep_csv_row_read((char *)buf, c->cols, &row_idx, &p, rec, perr, sizeof perr)) {
            snprintf(why, why_size, "the row of combo %" PRIu64 " does not read back: %s", idx, nl ? perr : "no end of line");
            return false;
        }
    }
    combo_params(c, idx, &mine);
    if (row_idx != idx || !sebt_params_same(&p, &mine)) {
        snprintf(why, why_size, "the row written for combo %" PRIu64 " reads back as combo %" PRIu64 "%s", idx, row_idx,
                 row_idx == idx ? " with other parameters" : "");
        return false;
    }
    rec->combo = idx;
    return true;
}

/* How many more candidates fit the budget after `done` of them took
 * done_s: SEBT_VERIFY_SHARE of the sweep's time, less the `spent` seconds
 * the proof has run so far, at the rate the first ones ran. */
static size_t sample_more(const sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, size_t done, double done_s,
                          double spent)
{
    double budget = SEBT_VERIFY_SHARE * c->sweep_seconds - spent;
    if (budget <= 0 || done == 0 || done >= p->n_cand)
        return 0;
    double per_combo = done_s / (double)done;
    double k = per_combo > 0 ? budget / per_combo : (double)(p->n_cand - done);
    return k >= (double)(p->n_cand - done) ? p->n_cand - done : (size_t)k;
}

/* A difference found: p->what and err say it. */
static sebt_status differs(sebt_sweep_proof *p, sebt_error *err)
{
    p->differ++;
    return sebt_fail(err, SEBT_ERR_VERIFY, "%s", p->what);
}

/* n records against their recomputation (on the reference, or the exact path). */
static sebt_status check_records(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, const sebt_params *pp,
                                 const sebt_sweep_record *rr, const bool *kept, size_t n, const char *which,
                                 sebt_recompute on, sebt_error *err)
{
    sebt_verify_report rep;
    /* With a condition, each combo's kept or dropped re-decided on the
     * reference's row by the reference's literal reading of it. */
    sebt_sweep_where_decisions wd = { c->where ? sebt_where_text(c->where) : NULL, kept };
    const sebt_sweep_where_decisions *w = c->where ? &wd : NULL;
    sebt_status st = sebt_sweep_verify_on(on, c->b, c->s, pp, rr, n, c->threads, w, &rep, err);
    if (st != SEBT_OK)
        return st;
    p->last_seconds = rep.seconds;
    p->seconds += rep.seconds;
    if (!rep.differ)
        return SEBT_OK;
    p->differ += rep.differ - 1;
    snprintf(p->what, sizeof p->what, "combo %" PRIu64 ": %s (%s: %zu of %zu differ)", rep.first_differ, rep.what,
             which, rep.differ, n);
    return differs(p, err);
}

/* Candidates [from, k): their records read back from the file, or as
 * handed over. */
static sebt_status gather_sample(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, size_t from, size_t k,
                                 sebt_params *pp, sebt_sweep_record *rr, sebt_error *err)
{
    int fd = c->file ? open(c->file, O_RDONLY | O_CLOEXEC) : -1;
    if (c->file && fd < 0)
        return sebt_fail(err, SEBT_ERR_IO, "cannot read %s back for its verification", c->file);
    p->read_back = fd >= 0;
    sebt_status st = SEBT_OK;
    for (size_t i = from; i < k && st == SEBT_OK; i++) {
        combo_params(c, p->cand[i], &pp[i]);
        rr[i] = p->mem[i];
        if (fd < 0)
            continue;
        if (p->offset[i] == UINT64_MAX && !c->where) {   /* every row is in the file */
            snprintf(p->what, sizeof p->what, "the row of combo %" PRIu64 " was not found in the rows written", p->cand[i]);
            st = differs(p, err);
        } else if (p->offset[i] != UINT64_MAX &&
                   !read_row(c, fd, p->cand[i], p->offset[i], &rr[i], p->what, sizeof p->what)) {
            st = differs(p, err);
        }
    }
    if (fd >= 0)
        close(fd);
    return st;
}

/* Working arrays for n combos. calloc: gcc without OpenMP warns
 * (maybe-uninitialized) that they reach the check unwritten when n is 0. */
static sebt_status arrays(size_t n, sebt_params **pp, sebt_sweep_record **rr, sebt_error *err)
{
    *pp = calloc(n + 1, sizeof **pp);
    *rr = calloc(n + 1, sizeof **rr);
    if (*pp && *rr)
        return SEBT_OK;
    free(*pp);
    free(*rr);
    return sebt_fail(err, SEBT_ERR_NOMEM, "out of memory for the verification of %zu combos", n);
}

/* fn(arg) on a thread of its own (*t; true), or here when none starts. */
static bool run_apart(pthread_t *t, void *(*fn)(void *), void *arg)
{
    if (pthread_create(t, NULL, fn, arg) == 0)
        return true;
    fn(arg);
    return false;
}

/* A series read from the cache is what the sweep and every check ran on,
 * so a wrong entry would agree with itself: it must equal a fresh parse.
 * The parse runs on a thread of its own beside the other checks. */
typedef struct {
    const sebt_sweep_proof_ctx *c;
    sebt_status st;
    sebt_error err;
    pthread_t thread;
    bool apart;
} series_check;

static void *parse_again(void *arg)
{
    series_check *j = arg;
    j->st = sebt_series_check_fresh(j->c->series_file, &j->c->series_load, j->c->s, &j->err);
    return NULL;
}

static void series_start(series_check *j, const sebt_sweep_proof_ctx *c)
{
    *j = (series_check){ .c = c, .st = SEBT_OK };
    if (!c->series_file)
        return;
    j->apart = run_apart(&j->thread, parse_again, j);
}

/* The parse's outcome, once it is done; a difference there is the
 * proof's (p->what), before any the best combos' check found. */
static sebt_status series_finish(sebt_sweep_proof *p, series_check *j, sebt_error *err)
{
    if (j->apart)
        pthread_join(j->thread, NULL);
    p->series_fresh_checked = j->c->series_file && j->st == SEBT_OK;
    if (j->st == SEBT_OK)
        return SEBT_OK;
    if (j->st == SEBT_ERR_VERIFY) {
        snprintf(p->what, sizeof p->what, "%s", j->err.msg);
        p->differ++;
    }
    if (err)
        *err = j->err;
    return j->st;
}

/* The context as the check takes it: with SEBT_TEST_FAULTS, a proof that
 * asks for the analysis columns (each combo's trades) whatever the sweep
 * made, or leaves them out (core/test_faults.h; cli/tests/mutants). */
static sebt_sweep_proof_ctx as_asked(const sebt_sweep_proof_ctx *c)
{
    sebt_sweep_proof_ctx k = *c;
    if (SEBT_FAULT("proof_asks_trades_without") && k.cols == SEBT_COLS_PLAIN)
        k.cols = SEBT_COLS_ANALYSIS;
    if (SEBT_FAULT("proof_leaves_trades_out"))
        k.cols = SEBT_COLS_PLAIN;
    return k;
}

/* The check compares what the sweep made: the analysis columns come from
 * each combo's trades, so a check that asks for them of a sweep that ran
 * without trades compares nothing the sweep wrote (or misreads its rows),
 * and one that leaves them out of a sweep that made them vouches for
 * columns it never read. */
static sebt_status same_columns(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, const sebt_sweep_record *rec,
                                size_t n, sebt_error *err)
{
    /* What the sweep made: said by the windows handed over, else (a
     * whole-sweep path) by the records themselves. */
    bool asked = c->cols != SEBT_COLS_PLAIN, relative = c->cols == SEBT_COLS_RELATIVE;
    bool made = p->windows ? p->windows_with_analysis > 0 : n ? rec[0].has_analysis : asked;
    bool mixed = p->windows_with_analysis > 0 && p->windows_with_analysis < p->windows, rel_differs = false;
    for (size_t i = 0; i < n; i++) {
        mixed = mixed || rec[i].has_analysis != made;
        rel_differs = rel_differs || (rec[i].has_analysis && rec[i].analysis.has_relative != relative);
    }
    if (!mixed && made == asked && !rel_differs)
        return SEBT_OK;
    snprintf(p->what, sizeof p->what, "%s",
             mixed ? "the records handed over mix rows with and without the analysis columns"
             : made != asked ? (asked ? "the check asks for the analysis columns (each combo's trades) of a sweep "
                                        "that ran without them"
                                      : "the sweep made the analysis columns (from each combo's trades) and the "
                                        "check leaves them out")
             : relative ? "the check asks for the relative columns of a sweep that ran without them"
                        : "the sweep made the relative columns and the check leaves them out");
    return differs(p, err);
}

/* The best combos' records against their recomputation, into p. */
static sebt_status check_best(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, const sebt_sweep_record *best,
                              size_t n_best, sebt_error *err)
{
    sebt_params *pp;
    sebt_sweep_record *rr;
    sebt_status st = arrays(n_best, &pp, &rr, err);
    if (st != SEBT_OK)
        return st;
    for (size_t i = 0; i < n_best; i++) {
        combo_params(c, best[i].combo, &pp[i]);
        rr[i] = best[i];
    }
    /* On the reference's own signal and walk over every bar, the exact
     * path's guard; its z-scores only where the signal reads them: the
     * whole reference sums every bar's window afresh, about 0.4 s of CPU
     * with z_window 672, most of the proof below a million combos
     * (docs/decisions.md). */
    st = check_records(p, c, pp, rr, NULL, n_best, "the best combos",
                       p->best_whole_reference ? SEBT_RECOMPUTE_REFERENCE : SEBT_RECOMPUTE_REFERENCE_Z_READ, err);
    p->best = n_best;
    free(pp);
    free(rr);
    return st;
}

/* The best combos' check on a thread of its own, into a proof of its
 * own (merged after it): the sample runs beside it. */
typedef struct {
    sebt_sweep_proof bp;
    const sebt_sweep_proof_ctx *c;
    const sebt_sweep_record *best;
    size_t n_best;
    sebt_status st;
    sebt_error err;
    pthread_t thread;
    bool apart;
} best_check;

static void *best_thread(void *arg)
{
    best_check *j = arg;
    j->st = check_best(&j->bp, j->c, j->best, j->n_best, &j->err);
    return NULL;
}

/* The sample: at least SEBT_VERIFY_MIN (or the fixed number), then as many
 * more as the budget buys at the rate those ran; t0 is when the proof
 * began. */
static sebt_status check_sample(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *c, double t0, sebt_error *err)
{
    sebt_params *pp;
    sebt_sweep_record *rr;
    sebt_status st = arrays(p->n_cand, &pp, &rr, err);
    if (st != SEBT_OK)
        return st;
    size_t k = p->fixed || p->n_cand < SEBT_VERIFY_MIN ? p->n_cand : SEBT_VERIFY_MIN;
    st = gather_sample(p, c, 0, k, pp, rr, err);
    if (st == SEBT_OK)
        st = check_records(p, c, pp, rr, p->kept, k, "the sampled combos", SEBT_RECOMPUTE_EXACT, err);
    p->sampled = st == SEBT_OK ? k : 0;
    size_t more = st == SEBT_OK && !p->fixed ? sample_more(p, c, k, p->last_seconds, now_s() - t0) : 0;
    if (more) {
        st = gather_sample(p, c, k, k + more, pp, rr, err);
        if (st == SEBT_OK)
            st = check_records(p, c, pp + k, rr + k, p->kept + k, more, "the sampled combos", SEBT_RECOMPUTE_EXACT, err);
        p->sampled = k + more;
    }
    free(pp);
    free(rr);
    return st;
}

sebt_status sebt_sweep_proof_check(sebt_sweep_proof *p, const sebt_sweep_proof_ctx *ctx, const sebt_sweep_record *best,
                                   size_t n_best, sebt_error *err)
{
    sebt_sweep_proof_ctx asked = as_asked(ctx);
    const sebt_sweep_proof_ctx *c = &asked;
    sebt_status st = same_columns(p, c, best, n_best, err);
    if (st != SEBT_OK)
        return st;
    p->sweep_seconds = c->sweep_seconds;
    /* The series' parse, the best combos' check and the sample side by
     * side: none waits for another, and the proof's time is their wall
     * time together. A difference is told in that order of precedence,
     * whichever was found first. */
    double t0 = now_s();
    series_check sc;
    series_start(&sc, c);
    best_check bc = { .bp = { .best_whole_reference = p->best_whole_reference }, .c = c, .best = best,
                      .n_best = n_best, .st = SEBT_OK };
    bc.apart = run_apart(&bc.thread, best_thread, &bc);
    sebt_error sample_err = { 0 };
    sebt_status sample_st = check_sample(p, c, t0, &sample_err);
    if (bc.apart)
        pthread_join(bc.thread, NULL);
    p->best = bc.bp.best;
    p->differ += bc.bp.differ;
    st = series_finish(p, &sc, err);
    p->seconds = now_s() - t0;
    if (st != SEBT_OK)
        return st;
    if (bc.st != SEBT_OK) {
        snprintf(p->what, sizeof p->what, "%s", bc.bp.what);
        p->sampled = 0;
        if (err)
            *err = bc.err;
        return bc.st;
    }
    if (sample_st != SEBT_OK && err)
        *err = sample_err;
    return sample_st;
}

/* ---- the series ------------------------------------------------------------------ */

static const char *series_differs(const sebt_series *a, const sebt_series *b)
{
    if (a->n != b->n || a->n_missing != b->n_missing || a->n_rejected != b->n_rejected ||
        a->n_gap_filled != b->n_gap_filled || a->interval_ms != b->interval_ms)
        return "its size or what the loader did";
    if (memcmp(a->ts, b->ts, a->n * sizeof *a->ts) != 0)
        return "ts";
    const double *const x[] = { a->open, a->high, a->low, a->close, a->volume };
    const double *const y[] = { b->open, b->high, b->low, b->close, b->volume };
    static const char *const names[] = { "open", "high", "low", "close", "volume" };
    for (int col = 0; col < 5; col++)
        if (memcmp(x[col], y[col], a->n * sizeof *x[col]) != 0)
            return names[col];
    return NULL;
}

sebt_status sebt_series_check_fresh(const char *file, const sebt_load_opts *o, const sebt_series *s, sebt_error *err)
{
    sebt_series fresh;
    sebt_status st = sebt_load_csv(file, o, &fresh, err);
    if (st != SEBT_OK)
        return st;
    const char *bad = series_differs(s, &fresh);
    sebt_series_free(&fresh);
    if (bad)
        return sebt_fail(err, SEBT_ERR_VERIFY, "the series read from the cache differs from a fresh parse of %s in %s",
                         file, bad);
    return SEBT_OK;
}
