/* Parity runs over whole data files: the bundled data set, each file as
 * loaded and gap-filled, and a long series joined from several files.
 *
 * Holes are where backends go wrong (an EMA that keeps its value at a
 * missing bar, a TR across a hole), and the exchange's files have holes
 * only as timestamp skips: a run that does not fill them never shows one.
 * So every file runs both ways unless the caller says otherwise. The
 * joined series is long enough (10^5+ bars) to cross the bars x combos
 * point where a sweep engine takes its threads, and runs with a 1-byte
 * memory budget so it splits its combos over as many batches as it can. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oracle_internal.h"
#include "sebt/grid.h"

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static bool readable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

size_t sebt_parity_inputs_for_files(const char *const *paths, size_t n_paths, sebt_parity_gaps gaps,
                                    sebt_parity_input *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < n_paths; i++) {
        for (int filled = 0; filled < 2; filled++) {
            if ((filled && gaps == SEBT_PARITY_PLAIN) || (!filled && gaps == SEBT_PARITY_FILLED))
                continue;
            if (n >= max)
                return n;
            sebt_parity_input *in = &out[n++];
            memset(in, 0, sizeof *in);
            in->paths[0] = paths[i];
            in->n_paths = 1;
            in->fill_gaps = filled;
            snprintf(in->label, sizeof in->label, "%s, %s", base_name(paths[i]),
                     filled ? "gap-filled" : "as loaded");
        }
    }
    return n;
}

/* The bundled files, smallest first so a broken backend fails fast. */
static const char *const bundled[] = {
    "BTCUSDT-1m-2018-02-08.raw.csv",   /* 29 bars, a day with an exchange outage */
    "BTCUSDT-1m-2019-01.csv.gz",       /* 44,640 bars */
    "BTCUSDT-15m-2017-2021.csv.gz",    /* 152,832 bars, 32 holes */
};
/* Joined in time order: 569,276 one-minute bars, 2018 to 2021. */
static const char *const joined[] = {
    "BTCUSDT-1m-2018-02-08.raw.csv",
    "BTCUSDT-1m-2019-01.csv.gz",
    "BTCUSDT-1m-2021.csv.gz",
};

size_t sebt_parity_default_inputs(const char *data_dir, sebt_parity_input *out, size_t max,
                                  char paths[][SEBT_PARITY_PATH_MAX], size_t n_paths_buf)
{
    size_t np = 0, n = 0;
    for (size_t i = 0; i < sizeof bundled / sizeof bundled[0] && np < n_paths_buf; i++) {
        snprintf(paths[np], SEBT_PARITY_PATH_MAX, "%s/%s", data_dir, bundled[i]);
        if (!readable(paths[np]))
            continue;
        const char *p = paths[np++];
        size_t k = sebt_parity_inputs_for_files(&p, 1, SEBT_PARITY_BOTH, out + n, max - n);
        /* The first long file as loaded also runs in as many batches as the
         * backend makes: a batch bug shows there, before the joined series. */
        if (i == 1 && k) {
            out[n].memory_budget = 1;
            size_t used = strlen(out[n].label);
            snprintf(out[n].label + used, sizeof out[n].label - used, ", 1-byte memory budget");
        }
        n += k;
    }
    if (n < max && np + 3 <= n_paths_buf) {
        sebt_parity_input *in = &out[n];
        memset(in, 0, sizeof *in);
        bool all = true;
        for (size_t i = 0; i < 3; i++) {
            snprintf(paths[np], SEBT_PARITY_PATH_MAX, "%s/%s", data_dir, joined[i]);
            all = all && readable(paths[np]);
            in->paths[in->n_paths++] = paths[np++];
        }
        if (all) {
            in->memory_budget = 1;
            snprintf(in->label, sizeof in->label,
                     "1m files joined (2018-02-08, 2019-01, 2021), as loaded, 1-byte memory budget");
            n++;
        }
    }
    return n;
}

sebt_status sebt_parity_load(const sebt_parity_input *in, sebt_series *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    if (in->n_paths == 0 || in->n_paths > SEBT_PARITY_MAX_JOIN)
        return sebt_fail(err, SEBT_ERR_USAGE, "parity: an input joins 1 to %d files, not %zu",
                         SEBT_PARITY_MAX_JOIN, in->n_paths);
    sebt_load_opts lo = { .lenient = in->lenient, .fill_gaps = in->fill_gaps };
    if (in->n_paths == 1)
        return sebt_load_csv(in->paths[0], &lo, out, err);
    sebt_series part[SEBT_PARITY_MAX_JOIN];
    size_t total = 0, loaded = 0;
    sebt_status st = SEBT_OK;
    for (; loaded < in->n_paths; loaded++) {
        st = sebt_load_csv(in->paths[loaded], &lo, &part[loaded], err);
        if (st)
            break;
        total += part[loaded].n;
        if (loaded && part[loaded].n && part[loaded - 1].n &&
            part[loaded].ts[0] <= part[loaded - 1].ts[part[loaded - 1].n - 1]) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "parity: %s starts before %s ends: files are joined "
                           "in time order", in->paths[loaded], in->paths[loaded - 1]);
            loaded++;
            break;
        }
    }
    if (st == SEBT_OK)
        st = sebt_series_alloc(out, total, err);
    if (st == SEBT_OK) {
        size_t at = 0;
        for (size_t i = 0; i < in->n_paths; i++) {
            const sebt_series *p = &part[i];
            memcpy(out->ts + at, p->ts, p->n * sizeof *p->ts);
            memcpy(out->open + at, p->open, p->n * sizeof(double));
            memcpy(out->high + at, p->high, p->n * sizeof(double));
            memcpy(out->low + at, p->low, p->n * sizeof(double));
            memcpy(out->close + at, p->close, p->n * sizeof(double));
            memcpy(out->volume + at, p->volume, p->n * sizeof(double));
            out->n_rejected += p->n_rejected;
            out->n_gap_filled += p->n_gap_filled;
            at += p->n;
        }
        sebt_series_recount(out);
    }
    for (size_t i = 0; i < loaded; i++)
        sebt_series_free(&part[i]);
    return st;
}

sebt_status sebt_parity_run(const sebt_backend *candidate, const sebt_parity_input *inputs,
                            size_t n_inputs, const sebt_params *combos, size_t n_combos,
                            const sebt_parity_opts *opts, sebt_parity_result *results,
                            sebt_error *err)
{
    sebt_parity_opts none = { 0 };
    if (!opts)
        opts = &none;
    for (size_t i = 0; i < n_inputs; i++)
        memset(&results[i], 0, sizeof results[i]);
    for (size_t i = 0; i < n_inputs; i++) {
        sebt_parity_result *r = &results[i];
        r->input = inputs[i];
        if (opts->on_input)
            opts->on_input(opts->user, i, n_inputs, &inputs[i]);
        double t0 = oracle_now();
        sebt_series s;
        sebt_status st = sebt_parity_load(&inputs[i], &s, err);
        if (st)
            return st;
        r->bars = s.n;
        r->missing = s.n_missing;
        r->gap_filled = s.n_gap_filled;
        sebt_oracle_opts o = { .threads = opts->threads,
                               .memory_budget = inputs[i].memory_budget ? inputs[i].memory_budget
                                                                        : opts->memory_budget,
                               .stop_first = opts->stop_first, .progress = opts->progress,
                               .progress_user = opts->user };
        st = sebt_oracle_check(candidate, &s, combos, n_combos, &o, &r->report, err);
        sebt_series_free(&s);
        r->seconds = oracle_now() - t0;
        r->ran = true;
        if (st) {
            char msg[SEBT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            return sebt_fail(err, st, "%s: %s", inputs[i].label, msg);
        }
        if (opts->stop_first && r->report.combos_diverged)
            break;
    }
    return SEBT_OK;
}

size_t sebt_parity_grid_combos(sebt_params *out, size_t max)
{
    /* The axes of bench/grids/parity-planted.grid that share spans: one
     * fast span with both slow spans adjacent in the plan, the same
     * windows with two cloc_min values; small windows, so signals fire;
     * each combo with SPEC §4's RSI filter off and on (RSI(2) swings
     * across 50 every few bars, so the filter bites often). */
    static const int32_t fast[] = { 1, 24 }, slow[] = { 1, 96 }, zw[] = { 2, 96 };
    static const double cloc[] = { 0.0, 0.5 };
    size_t n = 0;
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < 2; b++)
            for (size_t c = 0; c < 2; c++)
                for (size_t d = 0; d < 4; d++) {
                    if (n == max)
                        return n;
                    sebt_params p = sebt_params_default();
                    p.ema_fast = fast[a];
                    p.ema_slow = slow[b];
                    p.z_window = zw[c];
                    p.atr_window = 1;
                    p.vol_z = -1.0;
                    p.tr_z = -1.0;
                    p.cloc_min = cloc[d / 2];
                    p.use_rsi = d % 2;
                    p.rsi_window = 2;
                    p.rsi_max = 50;
                    p.use_stop = p.use_tp = p.use_time = true;
                    p.atr_stop_mult = 0.7;
                    p.reward_r = 2.0;
                    p.max_hold = 48;
                    p.fee_bp = p.slippage_bp = 5;
                    out[n++] = p;
                }
    return n;
}
