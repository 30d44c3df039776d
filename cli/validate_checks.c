/* `sebt validate`: the checks, each a v_fn run by run_isolated. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "select.h"
#include "sweep.h"
#include "validate.h"

/* Messages and commands are built in fixed buffers that live in shared
 * memory; one that would not fit (a path of thousands of characters) is
 * cut, never overflowed, which is what this warning is about. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include "sebt/grid.h"
#include "sebt/number.h"
#include "sebt/outfile.h"

/* A failure to check: an error (exit 2, 3 or 5 by its code), except a
 * kernel that broke its protocol after shaking hands (a failed check,
 * "protocol") or a backend that hung (a crash, "hung"): both the backend's
 * bug, exit 1. */
static void set_error(v_outcome *o, const sebt_error *err)
{
    o->err_code = err->code;
    o->status = err->code == SEBT_ERR_PROTOCOL ? V_FAIL : err->code == SEBT_ERR_TIMEOUT ? V_CRASH : V_ERROR;
    snprintf(o->message, sizeof o->message, "%s%s", err->code == SEBT_ERR_PROTOCOL ? "protocol: "
                                                  : err->code == SEBT_ERR_TIMEOUT ? "hung: " : "", err->msg);
}

/* What a backend's failure says about the input it was given: nothing, for
 * these (no memory or device; a kernel broken or hung). */
static bool not_a_refusal(sebt_status st)
{
    return st == SEBT_ERR_NOMEM || st == SEBT_ERR_NODEVICE || st == SEBT_ERR_UNAVAILABLE || st == SEBT_ERR_PROTOCOL ||
           st == SEBT_ERR_TIMEOUT;
}

static void set_divergence(v_outcome *o, const sebt_oracle_report *r)
{
    o->status = V_FAIL;
    if (r->n_details) {
        const sebt_divergence *d = &r->details[0];
        snprintf(o->message, sizeof o->message, "%zu of %zu combos diverge; first: combo %zu, %s at bar %" PRId64,
                 r->combos_diverged, r->combos_checked, d->combo, d->what, d->bar);
        sebt_divergence_text(d, o->detail, sizeof o->detail);
    } else {
        snprintf(o->message, sizeof o->message, "%zu of %zu combos diverge", r->combos_diverged,
                 r->combos_checked);
    }
}

static int cand_threads(const v_ctx *c) { return c->a->threads; }

/* ---- replay ------------------------------------------------------------------ */

void do_replay(v_ctx *c, const void *arg, v_outcome *o)
{
    const char *dir = arg;
    sebt_fixture f;
    sebt_error err = { 0 };
    char batch[PATH_MAX + 32];
    struct stat sb;
    /* A kernel's protocol fault: its requests, sent again as they were. */
    snprintf(batch, sizeof batch, "%s/requests.bin", dir);
    if (stat(batch, &sb) == 0) {
        uint64_t replayed = 0;
        if (sebt_kernel_replay(c->cand, batch, &replayed, &err) != SEBT_OK) {
            set_error(o, &err);
        } else {
            o->status = V_PASS;
            snprintf(o->message, sizeof o->message, "%" PRIu64 " recorded requests sent again, every reply "
                     "well-formed: the fault did not come back", replayed);
        }
        o->cases = replayed;
        return;
    }
    /* A batch bug's fixture (combos.csv, batch.txt) runs as it was found. */
    snprintf(batch, sizeof batch, "%s/combos.csv", dir);
    if (stat(batch, &sb) == 0) {
        bool diverged = false;
        sebt_divergence d;
        if (sebt_fixture_check(c->cand, dir, &diverged, &d, &err) != SEBT_OK) {
            set_error(o, &err);
        } else if (diverged) {
            o->status = V_FAIL;
            snprintf(o->message, sizeof o->message, "combo %zu of the fixture's batch: %s at bar %" PRId64,
                     d.combo, d.what, d.bar);
            sebt_divergence_text(&d, o->detail, sizeof o->detail);
        } else {
            o->status = V_PASS;
        }
        return;
    }
    if (sebt_fixture_read(dir, &f, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    sebt_oracle_opts opts = { .threads = cand_threads(c) };
    sebt_oracle_report r;
    if (sebt_oracle_check(c->cand, &f.series, &f.params, 1, &opts, &r, &err) != SEBT_OK) {
        set_error(o, &err);
    } else {
        o->combos = r.combos_checked;
        o->ties = r.ties;
        o->analysis = r.analysis_compared;
        o->analysis_walk = r.analysis_from_walk;
        o->bars = f.series.n;
        if (r.combos_diverged)
            set_divergence(o, &r);
        else
            o->status = V_PASS;
    }
    sebt_fixture_free(&f);
}

/* ---- parity ------------------------------------------------------------------ */

/* One series of the oracle's parity set (sebt_parity_input): a bundled
 * file as loaded or gap-filled, or the one-minute files joined and run with
 * a tiny memory budget, as `sebt parity` checks them by default. */
void do_parity(v_ctx *c, const void *varg, v_outcome *o)
{
    const sebt_parity_input *in = varg;
    sebt_error err = { 0 };
    sebt_parity_opts po = { .threads = cand_threads(c) };
    sebt_parity_result pr;
    memset(&pr, 0, sizeof pr);
    if (sebt_parity_run(c->cand, in, 1, c->combos, c->n_combos, &po, &pr, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    o->bars = pr.bars;
    o->combos = pr.report.combos_checked;
    o->ties = pr.report.ties;
    o->analysis = pr.report.analysis_compared;
    o->analysis_walk = pr.report.analysis_from_walk;
    if (pr.report.combos_diverged) {
        set_divergence(o, &pr.report);
        return;
    }
    /* The trades the candidate made, for the anti-vacuity check: parity on
     * a window where nobody trades would prove little. */
    sebt_series s;
    if (sebt_parity_load(in, &s, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    sebt_result *res = calloc(c->n_combos, sizeof *res);
    sebt_batch_opts bo = { .threads = cand_threads(c), .memory_budget = in->memory_budget };
    if (!res || c->cand->run_batch(c->cand, &s, c->combos, c->n_combos, &bo, res, &err) != SEBT_OK) {
        if (!res)
            sebt_fail(&err, SEBT_ERR_NOMEM, "out of memory");
        set_error(o, &err);
    } else {
        for (size_t i = 0; i < c->n_combos; i++)
            o->trades += res[i].n_trades;
        o->status = V_PASS;
        sebt_results_free(res, c->n_combos);
    }
    free(res);
    sebt_series_free(&s);
}

/* The same on grid-shaped combos (sebt_parity_grid_combos): sweep engines
 * share work between combos with common spans, which the hand-picked
 * combos never have. */
void do_parity_grid(v_ctx *c, const void *varg, v_outcome *o)
{
    sebt_params grid[SEBT_PARITY_GRID_COMBOS];
    size_t n = sebt_parity_grid_combos(grid, SEBT_PARITY_GRID_COMBOS);
    sebt_params *keep = c->combos;
    size_t keep_n = c->n_combos;
    c->combos = grid;
    c->n_combos = n;
    do_parity(c, varg, o);
    c->combos = keep;
    c->n_combos = keep_n;
}

bool write_grid_file(const char *dir, char *path, size_t size)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return false;
    char abs[PATH_MAX];
    snprintf(path, size, "%s/parity-grid-shaped.grid", realpath(dir, abs) ? abs : dir);
    sebt_outfile of;
    sebt_error err = { 0 };
    if (sebt_outfile_open(&of, path, &err) != SEBT_OK)
        return false;
    fputs("# sebt_parity_grid_combos: the grid-shaped combos sebt validate checks parity on\n"
          "ema_fast = 1, 24\nema_slow = 1, 96\nz_window = 2, 96\natr_window = 1\nvol_z = -1.0\ntr_z = -1.0\n"
          "cloc_min = 0.0, 0.5\nuse_stop = true\natr_stop_mult = 0.7\nuse_tp = true\nreward_r = 2.0\n"
          "use_time = true\nmax_hold = 48\nfee_bp = 5\nslippage_bp = 5\nuse_rsi = false, true\nrsi_window = 2\n"
          "rsi_max = 50\n", of.f);
    return sebt_outfile_commit(&of, &err) == SEBT_OK;
}

/* ---- fuzz ---------------------------------------------------------------------- */

typedef struct {
    v_outcome *o;
    uint64_t seed;
    bool vary_memory;
} fuzz_case_ctx;

/* Before each case: which one runs, kind, number and threads, in the
 * outcome the parent reads if the backend takes the process down. */
static void fuzz_case_starts(void *user, const sebt_fuzz_case *fc, bool big, uint64_t index)
{
    fuzz_case_ctx *p = user;
    p->o->at_seed = p->seed;
    p->o->at_case = index;
    p->o->at_big = big;
    p->o->at_threads = fc->threads;
    p->o->at_known = true;
    /* cuda under the CUDA stand-in: each case its own device memory,
     * so batches split as on a small device (docs/validate.md). */
    if (p->vary_memory)
        cli_device_memory_hook(NULL, fc, big, index);
}

/* A fuzz round found a divergence: the message, the divergence (as found
 * and shrunk) and the command that replays it. */
static void fuzz_found(const v_ctx *c, const sebt_fuzz_opts *fo, const sebt_fuzz_report *r, int threads,
                       bool vary_memory, v_outcome *o)
{
    uint64_t seed = fo->seed;
    o->status = V_FAIL;
    o->at_seed = seed;
    o->at_case = r->found_iteration;
    const char *kind = r->found_big ? "big case" : "case";
    if (r->nondeterministic)
        snprintf(o->message, sizeof o->message,
                 "%s: fuzz %s %" PRIu64 " of seed %" PRIu64 " (%s, %d threads): %s",
                 r->after_previous ? "state kept between calls" : "non-deterministic", kind,
                 r->found_iteration, seed, r->shape, r->repro_threads > 0 ? r->repro_threads : threads,
                 r->nondet_detail);
    else
        snprintf(o->message, sizeof o->message,
                 "divergence in fuzz %s %" PRIu64 " of seed %" PRIu64 " (%s): %s at bar %" PRId64
                 " as found, %s at bar %" PRId64 " shrunk from %zu to %zu bars", kind, r->found_iteration,
                 seed, r->shape, r->original.what, r->original.bar, r->divergence.what, r->divergence.bar,
                 r->original_bars, r->repro.n);
    if (!r->nondeterministic && r->repro_n_combos > 1) {
        size_t len = strlen(o->message);
        snprintf(o->message + len, sizeof o->message - len, "; %sin this batch of %zu combos (%d threads, budget "
                 "%zu bytes) it does not", r->alone_agrees ? "alone it agrees; " : "", r->repro_n_combos,
                 r->repro_threads, r->repro_memory_budget);
    }
    size_t used = 0;
    if (!r->nondeterministic && !(strcmp(r->original.what, r->divergence.what) == 0 &&
                                 r->original.bar == r->divergence.bar)) {
        sebt_divergence_text(&r->original, o->detail, sizeof o->detail);
        used = strlen(o->detail);
        used += (size_t)snprintf(o->detail + used, sizeof o->detail - used, "shrunk:\n");
    }
    if (used < sizeof o->detail)
        sebt_divergence_text(&r->divergence, o->detail + used, sizeof o->detail - used);
    char abs[PATH_MAX], env[64] = "";
    const char *dm = vary_memory ? getenv("SEBT_CUDA_HOST_MEMORY") : NULL;
    if (dm && *dm)
        snprintf(env, sizeof env, "SEBT_CUDA_HOST_MEMORY=%s ", dm);
    if (r->saved_path[0])
        snprintf(o->replay, sizeof o->replay, "%ssebt validate --backend %s --replay %s", env, c->sel,
                 realpath(r->saved_path, abs) ? abs : r->saved_path);
    else
        sebt_fuzz_replay_command(c->cand, fo, r, o->replay, sizeof o->replay);
}

void do_fuzz(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    const validate_args *a = c->a;
    int max_threads = a->threads > 0 ? a->threads : cli_cpu_threads();
    /* Big cases are cut from the bundled 15m series, as `sebt fuzz` cuts
     * them by default, so its --big-case replays them. */
    char base_path[PATH_MAX + 64];
    snprintf(base_path, sizeof base_path, "%s/data/BTCUSDT-15m-2017-2021.csv.gz", c->fixtures);
    sebt_series base;
    sebt_load_opts lo = { 0 };
    bool have_base = access(base_path, R_OK) == 0 && sebt_load_csv(base_path, &lo, &base, NULL) == SEBT_OK;
    bool vary_memory = cli_vary_device_memory(c->cand);
    double start = cli_now();
    for (uint64_t round = 0;; round++) {
        double left = a->time_s - (cli_now() - start);
        if (a->cases ? o->cases >= a->cases : (left <= 0 && round > 0))
            break;
        uint64_t seed = a->seed + round;
        /* Each round its own thread count, so fuzzing reaches the
         * candidate's parallel paths too. */
        int threads = (int)(round % (uint64_t)max_threads) + 1;
        if (threads > o->value[3])
            o->value[3] = threads;
        fuzz_case_ctx pc = { o, seed, vary_memory };
        /* Each thread count gets its share of a short budget too. */
        double round_s = a->time_s / max_threads;
        if (round_s > left)
            round_s = left;
        sebt_fuzz_opts fo = { .seed = seed, .iterations = FUZZ_ROUND, .time_s = round_s > 0.05 ? round_s : 0.05,
                              .shrink = true, .save_dir = a->save_dir, .before_case = fuzz_case_starts,
                              .before_case_user = &pc, .selector = c->sel, .threads = threads,
                              .base = have_base ? &base : NULL, .base_path = have_base ? base_path : NULL };
        if (a->cases) {
            fo.time_s = 0;
            fo.big_every = FUZZ_BIG_EVERY;
            if (a->cases - o->cases < fo.iterations)
                fo.iterations = a->cases - o->cases;
        }
        sebt_fuzz_report r;
        sebt_error err = { 0 };
        if (sebt_fuzz_run(c->cand, &fo, &r, &err) != SEBT_OK) {
            set_error(o, &err);
            goto out;
        }
        o->cases += r.cases_run;
        o->combos += r.combos_checked;
        o->ties += r.ties;
        if (r.found) {
            fuzz_found(c, &fo, &r, threads, vary_memory, o);
            sebt_fuzz_report_free(&r);
            goto out;
        }
        sebt_fuzz_report_free(&r);
    }
    o->status = V_PASS;
out:
    if (vary_memory)
        unsetenv("SEBT_CUDA_HOST_MEMORY");
    if (have_base)
        sebt_series_free(&base);
}

/* ---- one big call ----------------------------------------------------------- */

int big_call_threads(const validate_args *a) { return a->threads > 4 ? a->threads : 4; }

void do_big_call(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/data/BTCUSDT-15m-2017-2021.csv.gz", c->fixtures);
    sebt_series s;
    sebt_load_opts lo = { 0 };
    sebt_error err = { 0 };
    if (sebt_load_csv(path, &lo, &s, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    sebt_big_call_report r;
    if (sebt_oracle_big_call(c->cand, &s, c->a->seed, big_call_threads(c->a), &r, &err) != SEBT_OK) {
        set_error(o, &err);
    } else if (r.diverged) {
        o->status = V_FAIL;
        snprintf(o->message, sizeof o->message, "combo %zu of one call of %zu combos x %zu bars on %d threads: %s",
                 r.divergence.combo, r.combos, r.bars, r.threads, r.divergence.what);
        sebt_divergence_text(&r.divergence, o->detail, sizeof o->detail);
    } else {
        o->status = V_PASS;
        snprintf(o->message, sizeof o->message, "%zu combos x %zu bars (%.3g bar-combos), %d threads, metrics only; "
                 "%zu sampled combos agree with the reference", r.combos, r.bars, (double)r.bar_combos, r.threads,
                 r.sampled);
    }
    o->bars = r.bars;
    o->combos = r.sampled;
    sebt_series_free(&s);
}

/* ---- determinism and independence (no reference) ------------------------- */

#define DETERMINISM_CASES 40   /* generated cases with 2+ combos, then one big case */
#define DETERMINISM_MAX_COMBOS 1100   /* past it (a wide call), a case is left to the fuzz stage */

/* The metamorphic checks (sebt_oracle_metamorphic) on cases of the fuzz
 * generator: a combo's result must not depend on the call made before it,
 * its companions, their order, the threads or the batch split. */
void do_determinism(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    const validate_args *a = c->a;
    int threads = a->threads > 0 ? a->threads : cli_cpu_threads();
    if (threads < 2)
        threads = 2;
    uint64_t seed = a->seed;
    size_t done = 0;
    for (uint64_t it = 0; done <= DETERMINISM_CASES && it < 4000; it++) {
        bool big = done == DETERMINISM_CASES;
        sebt_fuzz_case fc;
        sebt_error err = { 0 };
        sebt_status st = big ? sebt_fuzz_generate_big(seed, 0, NULL, &fc, &err)
                             : sebt_fuzz_generate(seed, it, &fc, &err);
        if (st) {
            set_error(o, &err);
            return;
        }
        /* The wide calls (8,192+ combos) are the fuzz stage's: here each
         * would cost three calls of its size, a slow kernel's minutes. */
        if (fc.n_combos < 2 || fc.series.n < 2 || (!big && fc.n_combos > DETERMINISM_MAX_COMBOS)) {
            sebt_fuzz_case_free(&fc);
            continue;
        }
        o->at_seed = seed;
        o->at_case = big ? 0 : it;
        sebt_metamorphic_report mr;
        st = sebt_oracle_metamorphic(c->cand, &fc.series, fc.combos, fc.n_combos, threads, fc.memory_budget, &mr, &err);
        done++;
        o->cases++;
        o->combos += fc.n_combos;
        if (st == SEBT_OK && mr.failed) {
            o->status = V_FAIL;
            snprintf(o->message, sizeof o->message, "%s%s in fuzz %s %" PRIu64 " of seed %" PRIu64 " (%s)",
                     mr.nondeterministic ? "non-deterministic: " : "", mr.what, big ? "big case" : "case",
                     big ? (uint64_t)0 : it, seed, fc.shape);
            snprintf(o->detail, sizeof o->detail, "%s\n", mr.detail);
            snprintf(o->replay, sizeof o->replay, "sebt validate --backend %s --seed %" PRIu64 " --threads %d --time 1",
                     c->sel, seed, threads);
        } else if (not_a_refusal(st)) {
            /* Out of memory (or device) says nothing about the kernel: the
             * check could not run, it did not fail. */
            set_error(o, &err);
        } else if (st) {
            /* The candidate refused a valid case: a divergence the fuzz
             * stage names with the reference beside it. */
            o->status = V_FAIL;
            snprintf(o->message, sizeof o->message, "the backend failed on fuzz %s %" PRIu64 " of seed %" PRIu64
                     " (%s): %s", big ? "big case" : "case", big ? (uint64_t)0 : it, seed, fc.shape, err.msg);
        }
        sebt_fuzz_case_free(&fc);
        if (o->status == V_FAIL || o->status == V_ERROR)
            return;
    }
    o->status = V_PASS;
    snprintf(o->message, sizeof o->message, "%" PRIu64 " cases: the same call twice, reversed on 1 thread with a "
             "1-byte budget, each combo alone: the same results", o->cases);
}

/* ---- bad input: a kernel must refuse it ------------------------------------- */

/* The kernel is called directly with one invalid combo among valid ones
 * and with invalid series; it must return an error (SEBT_ERR_PARAM or
 * SEBT_ERR_INPUT), and for a combo name it ("combo K"), never compute. */

/* One invalid combo at index 2 of 4 valid ones, each way of being invalid
 * in turn; what was accepted or refused without its name is appended to
 * failures. Returns false when the backend ran out of memory (*e says so). */
static bool bad_combos(const v_ctx *c, const sebt_series *s, const sebt_params *ok, char *failures, size_t size,
                       size_t *used, size_t *tried, sebt_error *e)
{
    static const char *const combos[] = { "ema_fast 0", "z_window 1", "vol_z NaN", "atr_stop_mult -1",
                                          "reward_r 0", "max_hold 0", "fee_bp -1" };
    for (size_t k = 0; k < sizeof combos / sizeof combos[0]; k++) {
        sebt_params batch[4] = { *ok, *ok, *ok, *ok };
        sebt_params *p = &batch[2];
        switch (k) {
        case 0: p->ema_fast = 0; break;
        case 1: p->z_window = 1; break;
        case 2: p->vol_z = NAN; break;
        case 3: p->atr_stop_mult = -1; break;
        case 4: p->reward_r = 0; break;
        case 5: p->max_hold = 0; break;
        default: p->fee_bp = -1; break;
        }
        sebt_result res[4];
        memset(res, 0, sizeof res);
        sebt_batch_opts bo = { .threads = 1, .want_trades = true };
        memset(e, 0, sizeof *e);
        sebt_status st = c->cand->run_batch(c->cand, s, batch, 4, &bo, res, e);
        (*tried)++;
        if (not_a_refusal(st)) /* the check could not run, or the kernel broke */
            return false;
        if (st == SEBT_OK) {
            sebt_results_free(res, 4);
            *used += (size_t)snprintf(failures + *used, size - *used, "run_batch accepted combo 2 with %s; ",
                                      combos[k]);
        } else if (!strstr(e->msg, "combo 2")) {
            *used += (size_t)snprintf(failures + *used, size - *used,
                                      "run_batch refused combo 2 with %s, but its message does not name it "
                                      "(\"combo 2\"): %s; ", combos[k], e->msg);
        }
        if (*used >= size)
            break;
    }
    return true;
}

/* Series that break SPEC §1: high below low, time not increasing, a bar
 * half missing. Returns false when a copy of s could not be made or the
 * backend failed without refusing (*err). */
static bool bad_series(const v_ctx *c, const sebt_series *s, const sebt_params *ok, char *failures, size_t size,
                       size_t *used, size_t *tried, sebt_error *err)
{
    for (int k = 0; k < 3 && *used < size; k++) {
        sebt_series b;
        if (sebt_series_slice(s, 0, s->n, &b, err) != SEBT_OK)
            return false;
        const char *what = k == 0 ? "high < low at bar 7" : k == 1 ? "ts[9] == ts[8]" : "bar 5 with only close NaN";
        if (k == 0)
            b.high[7] = b.low[7] - 1;
        else if (k == 1)
            b.ts[9] = b.ts[8];
        else
            b.close[5] = NAN;
        sebt_result res[1];
        memset(res, 0, sizeof res);
        sebt_batch_opts bo = { .threads = 1, .want_trades = true };
        sebt_error e = { 0 };
        sebt_status st = c->cand->run_batch(c->cand, &b, ok, 1, &bo, res, &e);
        (*tried)++;
        if (not_a_refusal(st)) {
            sebt_series_free(&b);
            *err = e;
            return false;
        }
        if (st == SEBT_OK) {
            sebt_results_free(res, 1);
            *used += (size_t)snprintf(failures + *used, size - *used, "run_batch accepted a series with %s; ", what);
        }
        sebt_series_free(&b);
    }
    return true;
}

void do_bad_input(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    sebt_series s;
    sebt_error err = { 0 };
    size_t n = 40;
    if (sebt_series_alloc(&s, n, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    for (size_t t = 0; t < n; t++) {
        s.ts[t] = 1600000000000LL + (int64_t)t * 60000;
        s.open[t] = 100 + (double)(t % 7);
        s.close[t] = 100 + (double)((t * 3) % 7);
        s.high[t] = fmax(s.open[t], s.close[t]) + 1;
        s.low[t] = fmin(s.open[t], s.close[t]) - 1;
        s.volume[t] = 10 + (double)(t % 5);
    }
    sebt_series_recount(&s);
    sebt_params ok = sebt_params_default();
    ok.ema_fast = 2;
    ok.ema_slow = 5;
    ok.z_window = 3;
    ok.atr_window = 2;
    char failures[2048] = "";
    size_t used = 0, tried = 0;
    bool ran = bad_combos(c, &s, &ok, failures, sizeof failures, &used, &tried, &err) &&
               bad_series(c, &s, &ok, failures, sizeof failures, &used, &tried, &err);
    sebt_series_free(&s);
    if (!ran) {
        set_error(o, &err);
        return;
    }
    o->cases = tried;
    if (failures[0]) {
        o->status = V_FAIL;
        snprintf(o->message, sizeof o->message, "the backend does not refuse bad input (SPEC §1-2, backend.h)");
        snprintf(o->detail, sizeof o->detail, "%s\n", failures);
    } else {
        o->status = V_PASS;
        snprintf(o->message, sizeof o->message, "%zu invalid calls refused, each combo named", tried);
    }
}

/* ---- anti-vacuity: the mutants --------------------------------------------- */

/* A mutant counts as caught when the fuzzer finds it, or else when parity on
 * the bundled data set does (as in `sebt fuzz --self-test`: some planted
 * bugs, a batch restart for one, only show on long series with many
 * batches, which is what the bundled set's joined series is for). */
void do_mutant(v_ctx *c, const void *arg, v_outcome *o)
{
    const sebt_backend *m = arg;
    bool big_first = false;
    for (size_t i = 0; i < sebt_mutant_count(); i++)
        big_first |= sebt_mutant_at(i) == m && sebt_mutant_big_first(i);
    /* Big cases by count, never by time: by time, a machine fast enough to
     * run the hunt's small cases before its first big one is due would let
     * the mutants that only big cases show (z_stale, far_hole) survive.
     * Those start with a big case: FUZZ_BIG_EVERY small cases first would
     * cost seconds for nothing (more under a sanitizer). */
    sebt_fuzz_opts fo = { .seed = c->a->seed, .iterations = MUTANT_CASES, .shrink = false,
                          .big_every = FUZZ_BIG_EVERY, .big_first = big_first, .skip_wide = true };
    sebt_fuzz_report r;
    sebt_error err = { 0 };
    if (sebt_fuzz_run(m, &fo, &r, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    o->cases = r.cases_run;
    if (r.found) {
        o->status = V_PASS;
        snprintf(o->message, sizeof o->message, "caught by fuzz in case %" PRIu64 ": %s", r.found_iteration,
                 r.divergence.what);
        sebt_fuzz_report_free(&r);
        return;
    }
    sebt_fuzz_report_free(&r);
    char data[PATH_MAX + 16];
    snprintf(data, sizeof data, "%s/data", c->fixtures);
    sebt_parity_input inputs[MAX_INPUTS];
    static char paths[8][SEBT_PARITY_PATH_MAX];
    size_t ni = sebt_parity_default_inputs(data, inputs, MAX_INPUTS, paths, 8);
    sebt_parity_result res[MAX_INPUTS];
    memset(res, 0, sizeof res);
    sebt_parity_opts po = { .threads = 1, .stop_first = true };
    if (sebt_parity_run(m, inputs, ni, c->combos, c->n_combos, &po, res, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    for (size_t i = 0; i < ni; i++)
        if (res[i].ran && res[i].report.combos_diverged) {
            o->status = V_PASS;
            snprintf(o->message, sizeof o->message, "caught by parity on %s: %s", res[i].input.label,
                     res[i].report.details[0].what);
            return;
        }
    o->status = V_FAIL;
    snprintf(o->message, sizeof o->message, "the harness caught %s neither by fuzz (%d cases) nor by parity on "
             "the bundled data: the checks above prove nothing", m->name, MUTANT_CASES);
}

/* ---- speed ---------------------------------------------------------------------- */

/* A fixed sweep, the same every run, so figures compare across releases:
 * 12 combos over the January 2019 1m series (44,640 bars) when bundled. */
static sebt_params *speed_combos(size_t *n)
{
    static const int32_t fast[] = { 24, 48, 96, 192 };
    static const double vz[] = { 1.5, 2.0, 2.5 };
    sebt_params *p = malloc(12 * sizeof *p);
    if (!p)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            p[k] = sebt_params_default();
            p[k].ema_fast = fast[i];
            p[k].vol_z = vz[j];
            k++;
        }
    *n = k;
    return p;
}

static double time_batch(const sebt_backend *b, const sebt_series *s, const sebt_params *p, size_t n,
                         int threads, sebt_error *err, bool *ok)
{
    sebt_result *res = calloc(n, sizeof *res);
    sebt_batch_opts bo = { .threads = threads };
    double t0 = cli_now();
    *ok = res && b->run_batch(b, s, p, n, &bo, res, err) == SEBT_OK;
    double t = cli_now() - t0;
    if (res && *ok)
        sebt_results_free(res, n);
    free(res);
    return t;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void do_speed(v_ctx *c, const void *arg, v_outcome *o)
{
    const char *path = arg;
    sebt_series s;
    sebt_error err = { 0 };
    sebt_load_opts lo = { 0 };
    if (sebt_load_csv(path, &lo, &s, &err) != SEBT_OK) {
        set_error(o, &err);
        return;
    }
    size_t n = 0;
    sebt_params *p = speed_combos(&n);
    const sebt_backend *fast = NULL;
    if (!p || sebt_backend_get("fast_cpu", &fast, &err) != SEBT_OK) {
        set_error(o, &err);
        free(p);
        sebt_series_free(&s);
        return;
    }
    /* Alternating runs, medians: what the machine does meanwhile hits both. */
    /* Each side is timed until it has SPEED_REPEATS runs and has spent
     * SPEED_MIN_TOTAL_S (at most SPEED_MAX_REPEATS), counted apart: a
     * candidate at half a second a run is done after three, while fast_cpu,
     * milliseconds a run, goes on alone to its second (counted together,
     * the candidate would be timed 101 times). A slow
     * candidate (over SPEED_SLOW_S a run) is timed once: its ratio is far
     * from any gate, and the run stays short. */
    /* fast_cpu is the yardstick: timed alone, never against itself. In a
     * child c->cand is a watching copy of the candidate, so it is told by
     * what --backend chose, not by its address. */
    bool baseline = strcmp(c->sel, fast->name) == 0;
    double tc[SPEED_MAX_REPEATS], tf[SPEED_MAX_REPEATS], sum_c = 0, sum_f = 0;
    bool ok = true, more_c = !baseline, more_f = true;
    int nc = 0, nf = 0;
    for (int round = 0; ok && (more_c || more_f); round++) {
        /* Who goes first alternates: the second of a pair runs on warm caches. */
        for (int turn = 0; turn < 2 && ok; turn++) {
            bool cand = (round % 2 == 0) == (turn == 1);
            if (cand && more_c) {
                tc[nc] = time_batch(c->cand, &s, p, n, cand_threads(c), &err, &ok);
                sum_c += ok ? tc[nc] : 0;
                nc += ok;
                more_c = ok && tc[nc - 1] <= SPEED_SLOW_S && nc < SPEED_MAX_REPEATS &&
                         (nc < SPEED_REPEATS || sum_c < SPEED_MIN_TOTAL_S);
            } else if (!cand && more_f) {
                tf[nf] = time_batch(fast, &s, p, n, cand_threads(c), &err, &ok);
                sum_f += ok ? tf[nf] : 0;
                nf += ok;
                more_f = ok && nf < SPEED_MAX_REPEATS && (nf < SPEED_REPEATS || sum_f < SPEED_MIN_TOTAL_S);
            }
        }
    }
    if (ok && baseline) {
        memcpy(tc, tf, sizeof tf[0] * (size_t)nf);
        nc = nf;
    }
    if (!ok) {
        set_error(o, &err);
    } else {
        qsort(tc, (size_t)nc, sizeof tc[0], cmp_double);
        qsort(tf, (size_t)nf, sizeof tf[0], cmp_double);
        o->bars = s.n;
        o->combos = n;
        o->value[0] = tc[nc / 2];
        o->value[1] = tf[nf / 2];
        o->value[2] = baseline ? NAN : o->value[1] / o->value[0];
        o->status = V_PASS;
        if (baseline) {
            snprintf(o->message, sizeof o->message, "not compared: this is the baseline (%zu combos x %zu bars: "
                     "fast_cpu %.3f s, median of %d)%s", n, s.n, o->value[1], nf,
                     c->a->min_speedup > 0 ? "; --min-speedup does not apply" : "");
        } else {
            snprintf(o->message, sizeof o->message,
                     "%zu combos x %zu bars: %s %.3f s (median of %d), fast_cpu %.3f s (median of %d): %.3gx "
                     "fast_cpu's speed", n, s.n, c->cand->name, o->value[0], nc, o->value[1], nf, o->value[2]);
            if (o->value[2] < SPEED_WARN_BELOW)
                snprintf(o->warning, sizeof o->warning, "%s runs at %.2g%% of fast_cpu's speed (%.0f times "
                         "slower), below %g%%", c->cand->name, 100 * o->value[2], 1 / o->value[2],
                         100 * SPEED_WARN_BELOW);
        }
        if (!baseline && c->a->min_speedup > 0 && o->value[2] < c->a->min_speedup) {
            o->status = V_FAIL;
            size_t len = strlen(o->message);
            snprintf(o->message + len, sizeof o->message - len, ", below --min-speedup %g", c->a->min_speedup);
        }
    }
    free(p);
    sebt_series_free(&s);
}


/* ---- the written sweep ------------------------------------------------------ */

/* 80,640 combos of one indicator key: more than a streamed window (65,536),
 * so the file goes past the page cache and its tail is written at close.
 * Over the first WRITTEN_BARS bars of the bundled minutes, with windows
 * short enough to leave some 100 valid bars and trades in most combos: the
 * writer is what is checked, and a slow backend (a kernel in Python) must
 * get through it twice in each format. */
static const char written_grid[] = "ema_fast = 8\nema_slow = 24\nz_window = 12\natr_window = 12\nvol_z = 1.0:3.5:0.5\ntr_z = 0.6:2.0:0.2\n"
                                   "cloc_min = 0.3:0.9:0.1\natr_stop_mult = 0.3:1.5:0.3\nreward_r = 1.0:4.0:1.0\n"
                                   "max_hold = 8:96:8\n";
#define WRITTEN_COMBOS 80640
#define WRITTEN_BARS 120

static bool write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text, f) >= 0;
    return f && fclose(f) == 0 && ok;
}

/* The first n bars of the file at from, as a CSV at to (the same doubles). */
static bool write_short_series(const char *from, const char *to, size_t n, sebt_error *err)
{
    sebt_series s;
    sebt_load_opts lo = { .fill_gaps = false };
    if (sebt_load_csv(from, &lo, &s, err) != SEBT_OK)
        return false;
    FILE *f = fopen(to, "w");
    bool ok = f && fputs("open_time,open,high,low,close,volume\n", f) >= 0;
    for (size_t t = 0; ok && t < n && t < s.n; t++) {
        const double v[] = { s.open[t], s.high[t], s.low[t], s.close[t], s.volume[t] };
        /* By the C library's printf, 17 digits (every double read back
         * as itself): not by sebt's number writer, which this stage checks,
         * so a slip there fails the sweep it writes, not the input. */
        fprintf(f, "%lld", (long long)s.ts[t]);
        for (int i = 0; i < 5; i++)
            fprintf(f, ",%.17g", v[i]);
        ok = fputc('\n', f) != EOF;
    }
    ok = f && fclose(f) == 0 && ok;
    sebt_series_free(&s);
    if (!ok)
        snprintf(err->msg, sizeof err->msg, "cannot write %s", to);
    return ok;
}
/* The last line of a file (the sweep's verdict), into line. */
static void last_line(const char *path, char *line, size_t size)
{
    FILE *f = fopen(path, "r");
    char buf[1024];
    line[0] = '\0';
    while (f && fgets(buf, sizeof buf, f))
        if (buf[0] != '\n')
            snprintf(line, size, "%.*s", (int)strcspn(buf, "\n"), buf);
    if (f)
        fclose(f);
}

/* Runs `sebt sweep --verify full` in this process, its stderr into err_path. */
static int run_written_sweep(char **argv, int argc, const char *err_path)
{
    fflush(stderr);
    int saved = dup(STDERR_FILENO), fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (saved < 0 || fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
        if (fd >= 0)
            close(fd);
        if (saved >= 0)
            close(saved);
        return -1;
    }
    close(fd);
    int rc = cli_cmd_sweep(argc, argv);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    return rc;
}

/* A real streamed sweep through the writer, in the format arg names, on at
 * least two threads formatting: `sebt sweep --verify full` reads every row
 * back against the sweep run another way, the best combo and a sample
 * against the reference, and the series cache (a fresh one, stored then
 * hit) against a fresh parse. */
void do_written_sweep(v_ctx *c, const void *arg, v_outcome *o)
{
    const char *format = arg;
    char dir[] = "/tmp/sebt_written_XXXXXX", grid[PATH_MAX], out[PATH_MAX], err[PATH_MAX], cache[PATH_MAX];
    char data[PATH_MAX], threads[16], seed[32];
    if (!mkdtemp(dir)) {
        o->status = V_ERROR;
        snprintf(o->message, sizeof o->message, "cannot make a temporary folder: %s", strerror(errno));
        return;
    }
    snprintf(grid, sizeof grid, "%s/written.grid", dir);
    snprintf(out, sizeof out, "%s/out.%s", dir, format);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    char bundled[PATH_MAX];
    snprintf(bundled, sizeof bundled, "%s/data/BTCUSDT-1m-2019-01.csv.gz", c->fixtures);
    snprintf(data, sizeof data, "%s/short.csv", dir);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int t = c->a->threads > 2 ? c->a->threads : 2;
    snprintf(threads, sizeof threads, "%ld", cores > t ? cores : (long)t);   /* every core: the threads format */
    snprintf(seed, sizeof seed, "%" PRIu64, c->a->seed);
    const char *had = getenv("SEBT_CACHE_DIR");
    char *old_cache = had ? strdup(had) : NULL;
    setenv("SEBT_CACHE_DIR", cache, 1);   /* never the user's cache */
    /* The backend as --backend named it: sel is quoted for a shell (the replay lines). */
    char *argv[] = { "sweep", "--backend", (char *)c->a->backend, "--data", data, "--grid", grid, "--format", (char *)format,
                     "--output", out, "--threads", threads, "--verify", "full", "--seed", seed, NULL };
    sebt_error e = { 0 };
    int rc = write_text_file(grid, written_grid) && write_short_series(bundled, data, WRITTEN_BARS, &e)
                 ? run_written_sweep(argv, 17, err) : -1;
    if (old_cache)
        setenv("SEBT_CACHE_DIR", old_cache, 1);
    else
        unsetenv("SEBT_CACHE_DIR");
    free(old_cache);
    char line[600];
    last_line(err, line, sizeof line);
    o->combos = WRITTEN_COMBOS;
    o->status = rc == CLI_EXIT_OK ? V_PASS : rc == CLI_EXIT_CHECK_FAILED ? V_FAIL : V_ERROR;
    /* Out of memory says nothing of the backend: exit 5, and no reproducer to write. */
    bool nomem = rc == CLI_EXIT_NOMEM || (rc < 0 && e.code == SEBT_ERR_NOMEM);
    if (nomem)
        o->err_code = SEBT_ERR_NOMEM;
    if (rc == CLI_EXIT_OK)
        snprintf(o->message, sizeof o->message, "%d combos written as %s on %s threads and read back: %s",
                 WRITTEN_COMBOS, format, threads, strstr(line, "verified: ") ? strstr(line, "verified: ") + 10 : line);
    else
        snprintf(o->message, sizeof o->message, "%s", rc >= 0 ? line : e.msg[0] ? e.msg : "the sweep could not be set up");
    if (rc != CLI_EXIT_OK && !nomem) {
        char saved[PATH_MAX];
        snprintf(saved, sizeof saved, "%s/written.grid", c->a->save_dir);
        bool kept = mkdir(c->a->save_dir, 0777) == 0 || errno == EEXIST;
        kept = kept && write_text_file(saved, written_grid);
        char short_saved[PATH_MAX];
        snprintf(short_saved, sizeof short_saved, "%s/written-bars.csv", c->a->save_dir);
        kept = kept && write_short_series(bundled, short_saved, WRITTEN_BARS, &e);
        snprintf(o->replay, sizeof o->replay, "sebt sweep --backend %s --data %s --grid %s --format %s --output "
                 "written.%s --threads %s --verify full --seed %s", c->sel, kept ? short_saved : "DATA",
                 kept ? saved : "GRID", format, format, threads, seed);
    }
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        unlink(out);
}

/* The series cache: the bundled minutes loaded through a fresh cache
 * (stored, then a hit) against a fresh parse, every bit. */
void do_series_cache(v_ctx *c, const void *arg, v_outcome *o)
{
    (void)arg;
    char dir[] = "/tmp/sebt_cache_check_XXXXXX", data[PATH_MAX], what[700] = "";
    snprintf(data, sizeof data, "%s/data/BTCUSDT-1m-2019-01.csv.gz", c->fixtures);
    if (!mkdtemp(dir)) {
        o->status = V_ERROR;
        snprintf(o->message, sizeof o->message, "cannot make a temporary folder: %s", strerror(errno));
        return;
    }
    sebt_error err = { 0 };
    int rc = sweep_cache_check(data, false, false, dir, what, sizeof what, &err);
    o->status = rc == 0 ? V_PASS : rc == 1 ? V_FAIL : rc == 2 ? V_SKIP : V_ERROR;
    if (o->status == V_ERROR)
        o->err_code = err.code;   /* out of memory: exit 5 */
    snprintf(o->message, sizeof o->message, "%s", rc == 0 ? "a cached load equals a fresh parse, every bit"
                                                  : rc == 1 || (rc == 2 && what[0]) ? what
                                                  : rc == 2 ? "this build has no series cache" : err.msg);
    if (rc == 1)
        snprintf(o->replay, sizeof o->replay, "SEBT_CACHE_DIR=%s.replay sebt sweep --data %s --grid GRID --verify full",
                 dir, data);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        o->warning[0] = '\0';
}
