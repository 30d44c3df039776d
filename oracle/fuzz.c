/* Differential fuzzing: series and combos meant to break backends.
 *
 * Case i of seed S is a pure function of (S, i) through our own PRNG
 * (splitmix64 seeding xoshiro256**), so a case found on one machine is the
 * same case on every other. Early cases are small: most planted bugs show
 * within a few dozen bars, and small cases shrink fast. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"

/* ---- PRNG -------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void sebt_rng_seed(sebt_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sebt_rng_next(sebt_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sebt_rng_unit(sebt_rng *r) { return (double)(sebt_rng_next(r) >> 11) * 0x1.0p-53; }

int64_t sebt_rng_range(sebt_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(sebt_rng_next(r) % span);
}

static double uniform(sebt_rng *r, double lo, double hi) { return lo + (hi - lo) * sebt_rng_unit(r); }

static bool chance(sebt_rng *r, double p) { return sebt_rng_unit(r) < p; }

/* A standard normal from two uniforms (Box-Muller); libm's log/cos/sqrt
 * are correctly rounded enough for a generator: exactness is not needed
 * here, only the same sequence from the same seed on one platform's libm.
 * Cross-platform sameness is kept by quantizing every generated value to a
 * tick or to 12 significant digits below. */
static double normal(sebt_rng *r)
{
    double u1 = 1.0 - sebt_rng_unit(r), u2 = sebt_rng_unit(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static double round_sig(double x, int digits)
{
    if (x == 0 || !isfinite(x))
        return x;
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", digits - 1, x);
    return strtod(buf, NULL);
}

/* ---- series ------------------------------------------------------------ */

static void make_bar(sebt_series *s, size_t t, double o, double h, double l, double c, double v,
                     double tick)
{
    if (tick > 0) {
        o = round(o / tick) * tick;
        h = round(h / tick) * tick;
        l = round(l / tick) * tick;
        c = round(c / tick) * tick;
    } else {
        o = round_sig(o, 12);
        h = round_sig(h, 12);
        l = round_sig(l, 12);
        c = round_sig(c, 12);
    }
    v = round_sig(v, 10);
    h = fmax(h, fmax(o, c));
    l = fmax(0.0, fmin(l, fmin(o, c)));
    s->open[t] = o;
    s->high[t] = h;
    s->low[t] = l;
    s->close[t] = c;
    s->volume[t] = fmin(fmax(v, 0.0), 1e12);
}

static void gen_series(sebt_rng *r, size_t n, sebt_series *s, char *shape, size_t shape_size)
{
    static const int64_t intervals[] = { 60000, 900000, 3600000 };
    int64_t step = intervals[sebt_rng_range(r, 0, 2)];
    int64_t t0 = sebt_rng_range(r, 1500000000, 1700000000) * 1000 / step * step;
    double scale = pow(10.0, uniform(r, -6, 6));
    double vscale = pow(10.0, uniform(r, 0, 11));
    double sigma = pow(10.0, uniform(r, -3.5, -1.2));
    double tick = chance(r, 0.5) ? scale * pow(10.0, -(double)sebt_rng_range(r, 1, 4)) : 0.0;
    double drift = chance(r, 0.5) ? -sigma * 0.3 : 0.0; /* downtrends make ema_f < ema_s */
    double c = scale, v = vscale;
    size_t used = (size_t)snprintf(shape, shape_size, "%zu bars, price ~%.0e%s", n, scale,
                                   tick > 0 ? " on a tick" : "");
    for (size_t t = 0; t < n; t++) {
        s->ts[t] = t0 + (int64_t)t * step;
        double o = c;
        int what = (int)sebt_rng_range(r, 0, 99);
        if (t > 0 && what < 4) {
            /* A run of identical bars: flat volume and flat ATR windows. */
            size_t k = (size_t)sebt_rng_range(r, 2, 12);
            for (size_t j = 0; j < k && t < n; j++, t++) {
                s->ts[t] = t0 + (int64_t)t * step;
                make_bar(s, t, s->open[t - 1], s->high[t - 1], s->low[t - 1], s->close[t - 1],
                         s->volume[t - 1], 0.0);
            }
            t--;
            continue;
        }
        if (what < 8) {                       /* high == low */
            make_bar(s, t, o, o, o, o, v * uniform(r, 0, 2), tick);
            continue;
        }
        if (what < 12)                        /* a gap that opens through any stop */
            o = c * uniform(r, 0.2, 0.9);
        c = o * exp(sigma * normal(r) + drift);
        double h = fmax(o, c) * (1 + fabs(normal(r)) * sigma);
        double l = fmin(o, c) * (1 - fabs(normal(r)) * sigma);
        if (what >= 12 && what < 16) {        /* one bar through both stop and target */
            l = fmin(o, c) * uniform(r, 0.0, 0.7);
            h = fmax(o, c) * uniform(r, 1.3, 3.0);
        }
        double vol = v * exp(normal(r));
        if (what >= 16 && what < 24)
            vol *= uniform(r, 5, 50);           /* volume spikes trigger vol_z */
        if (what >= 24 && what < 26)
            vol = 0.0;
        make_bar(s, t, o, h, l, c, vol, tick);
        c = s->close[t];
        if (c <= 0)
            c = scale;
    }
    /* Holes: at the start, single bars, and runs longer than every window. */
    if (n && chance(r, 0.25)) {
        size_t k = (size_t)sebt_rng_range(r, 1, (int64_t)(n < 6 ? n : 6));
        for (size_t t = 0; t < k; t++)
            sebt_series_set_missing(s, t);
        used += (size_t)snprintf(shape + used, shape_size - used, ", %zu missing first", k);
    }
    if (n && chance(r, 0.4)) {
        double rate = uniform(r, 0.01, 0.15);
        for (size_t t = 0; t < n; t++)
            if (chance(r, rate))
                sebt_series_set_missing(s, t);
        if (used < shape_size)
            used += (size_t)snprintf(shape + used, shape_size - used, ", holes");
    }
    if (n > 4 && chance(r, 0.15)) {
        size_t len = (size_t)sebt_rng_range(r, 2, (int64_t)n / 2);
        size_t at = (size_t)sebt_rng_range(r, 0, (int64_t)(n - len));
        for (size_t t = at; t < at + len; t++)
            sebt_series_set_missing(s, t);
        if (used < shape_size)
            snprintf(shape + used, shape_size - used, ", a run of %zu missing", len);
    }
    sebt_series_recount(s);
}

/* ---- combos ------------------------------------------------------------ */

static int32_t gen_window(sebt_rng *r, size_t n, int32_t min)
{
    int64_t w;
    switch (sebt_rng_range(r, 0, 9)) {
    case 0: w = 1; break;
    case 1: w = 2; break;
    case 2: w = 3; break;
    case 3: w = (int64_t)n + sebt_rng_range(r, 1, 5); break;   /* longer than the series */
    case 4: w = sebt_rng_range(r, 1, (int64_t)n + 1); break;
    default: w = sebt_rng_range(r, 1, 8); break;
    }
    return (int32_t)(w < min ? min : w);
}

static double gen_threshold(sebt_rng *r, double always, double never, double lo, double hi)
{
    switch (sebt_rng_range(r, 0, 7)) {
    case 0: case 1: case 2: return always;    /* every bar passes */
    case 3: return never;                     /* no bar passes */
    case 4: return 0.0;
    default: return round_sig(uniform(r, lo, hi), 3);
    }
}

static void gen_combo(sebt_rng *r, size_t n, sebt_params *p)
{
    *p = sebt_params_default();
    p->ema_fast = gen_window(r, n, 1);
    p->ema_slow = gen_window(r, n, 1);
    if (chance(r, 0.5) && p->ema_slow <= p->ema_fast)
        p->ema_slow = p->ema_fast + (int32_t)sebt_rng_range(r, 1, 6);
    p->z_window = gen_window(r, n, 2);
    p->atr_window = gen_window(r, n, 1);
    p->vol_z = gen_threshold(r, -100.0, 100.0, -1.5, 2.5);
    p->tr_z = gen_threshold(r, -100.0, 100.0, -1.5, 2.5);
    p->cloc_min = gen_threshold(r, -1.0, 1.0, 0.0, 1.0);
    p->use_stop = chance(r, 0.85);
    p->atr_stop_mult = chance(r, 0.2) ? 0.0 : round_sig(uniform(r, 0, 3), 2);
    p->use_tp = chance(r, 0.85);
    static const double rewards[] = { 0.5, 1.0, 2.0 };
    p->reward_r = chance(r, 0.5) ? rewards[sebt_rng_range(r, 0, 2)] : round_sig(uniform(r, 0.1, 5), 2);
    p->use_time = chance(r, 0.85);
    switch (sebt_rng_range(r, 0, 4)) {
    case 0: p->max_hold = 1; break;
    case 1: p->max_hold = 2; break;
    case 2: p->max_hold = 1000; break;
    default: p->max_hold = (int32_t)sebt_rng_range(r, 1, 20); break;
    }
    p->fee_bp = chance(r, 0.3) ? 0.0 : round_sig(uniform(r, 0, 30), 2);
    p->slippage_bp = chance(r, 0.3) ? 0.0 : round_sig(uniform(r, 0, 30), 2);
}

sebt_status sebt_fuzz_generate(uint64_t seed, uint64_t iteration, sebt_fuzz_case *out,
                               sebt_error *err)
{
    memset(out, 0, sizeof *out);
    sebt_rng r;
    sebt_rng_seed(&r, seed ^ (iteration * 0xD1B54A32D192ED03ull));
    double small = iteration < 300 ? 0.9 : 0.6;
    size_t n;
    double u = sebt_rng_unit(&r);
    if (u < 0.04)
        n = (size_t)sebt_rng_range(&r, 0, 2);           /* 0, 1 and 2 bars */
    else if (u < small)
        n = (size_t)sebt_rng_range(&r, 3, 60);
    else if (u < small + (1 - small) * 0.75)
        n = (size_t)sebt_rng_range(&r, 60, 400);
    else
        n = (size_t)sebt_rng_range(&r, 400, 2500);
    sebt_status st = sebt_series_alloc(&out->series, n, err);
    if (st)
        return st;
    gen_series(&r, n, &out->series, out->shape, sizeof out->shape);
    out->n_combos = (size_t)sebt_rng_range(&r, 1, SEBT_FUZZ_MAX_COMBOS);
    for (size_t i = 0; i < out->n_combos; i++)
        gen_combo(&r, n, &out->combos[i]);
    st = sebt_series_check(&out->series, err);
    if (st) {
        char msg[SEBT_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        sebt_fuzz_case_free(out);
        return sebt_fail(err, SEBT_ERR_INTERNAL, "fuzz: generated a bar that breaks SPEC §1 "
                         "(seed %llu, case %llu): %s", (unsigned long long)seed,
                         (unsigned long long)iteration, msg);
    }
    return SEBT_OK;
}

void sebt_fuzz_case_free(sebt_fuzz_case *c)
{
    if (c)
        sebt_series_free(&c->series);
}

/* ---- the loop ---------------------------------------------------------- */

static void fixture_name(const sebt_backend *b, uint64_t seed, uint64_t it, char *buf, size_t size)
{
    snprintf(buf, size, "%s-seed%llu-case%llu", b->name, (unsigned long long)seed,
             (unsigned long long)it);
    for (char *c = buf; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            *c = '-';
}

sebt_status sebt_fuzz_run(const sebt_backend *cand, const sebt_fuzz_opts *opts,
                          sebt_fuzz_report *rep, sebt_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (opts->iterations == 0 && !(opts->time_s > 0))
        return sebt_fail(err, SEBT_ERR_USAGE, "fuzz: give a number of cases or a time limit");
    double start = oracle_now();
    for (uint64_t it = 0;; it++) {
        double el = oracle_now() - start;
        if (opts->iterations && it >= opts->iterations)
            break;
        if (opts->time_s > 0 && el >= opts->time_s)
            break;
        if (opts->progress) {
            if (opts->iterations)
                opts->progress(opts->progress_user, (size_t)it, (size_t)opts->iterations);
            else
                opts->progress(opts->progress_user, (size_t)(el * 10), (size_t)(opts->time_s * 10));
        }
        sebt_fuzz_case c;
        sebt_status st = sebt_fuzz_generate(opts->seed, it, &c, err);
        if (st)
            return st;
        bool diverged = false;
        size_t which = 0;
        sebt_divergence div;
        st = oracle_check_case(cand, &c.series, c.combos, c.n_combos, &diverged, &div, &rep->ties,
                               &which, err);
        rep->cases_run++;
        rep->combos_checked += diverged ? which + 1 : c.n_combos;
        if (st) {
            char msg[SEBT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            sebt_fuzz_case_free(&c);
            return sebt_fail(err, st, "fuzz case %llu of seed %llu: %s", (unsigned long long)it,
                             (unsigned long long)opts->seed, msg);
        }
        if (!diverged) {
            sebt_fuzz_case_free(&c);
            continue;
        }
        rep->found = true;
        rep->found_iteration = it;
        rep->seconds_to_find = oracle_now() - start;
        snprintf(rep->shape, sizeof rep->shape, "%s", c.shape);
        rep->original_bars = c.series.n;
        rep->repro = c.series;               /* ownership moves to the report */
        rep->repro_params = c.combos[which];
        div.combo = 0;
        rep->divergence = div;
        if (opts->shrink) {
            st = sebt_oracle_shrink(cand, &rep->repro, &rep->repro_params, &rep->divergence, err);
            if (st)
                return st;
        }
        if (opts->save_dir) {
            char name[256], note[1200];
            fixture_name(cand, opts->seed, it, name, sizeof name);
            snprintf(note, sizeof note,
                     "Found by `sebt fuzz --backend %s --seed %llu` at case %llu (%s), shrunk from "
                     "%zu to %zu bars.\nDivergence: %s at bar %lld: %s\n", cand->name,
                     (unsigned long long)opts->seed, (unsigned long long)it, rep->shape,
                     rep->original_bars, rep->repro.n, rep->divergence.what,
                     (long long)rep->divergence.bar, rep->divergence.detail);
            st = sebt_fixture_write(opts->save_dir, name, &rep->repro, &rep->repro_params, note,
                                    rep->saved_path, sizeof rep->saved_path, err);
            if (st)
                return st;
        }
        break;
    }
    rep->seconds = oracle_now() - start;
    return SEBT_OK;
}

void sebt_fuzz_report_free(sebt_fuzz_report *r)
{
    if (r)
        sebt_series_free(&r->repro);
}
