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
#include "sebt/backends.h"
#include "sebt/outfile.h"

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
        /* Bars that touch a stop or target exactly (atr_stop_mult 0 puts
         * the stop on the signal bar's low; reward_r 1 puts the target at
         * 2*entry - stop): a strict and a non-strict test part there. */
        if (t >= 2 && what >= 26 && what < 32) {
            double stop = s->low[t - 2], entry = s->open[t - 1];
            if (what < 28 && stop > 0)
                s->open[t] = stop;
            else if (what < 30)
                s->low[t] = stop;
            else if (entry > stop)
                s->high[t] = entry + 1.0 * (entry - stop);
            s->high[t] = fmax(s->high[t], fmax(s->open[t], s->close[t]));
            s->low[t] = fmin(s->low[t], fmin(s->open[t], s->close[t]));
        }
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

static double gen_threshold(sebt_rng *r, double always, double never, double lo, double hi,
                            double exact)
{
    switch (sebt_rng_range(r, 0, 8)) {
    case 0: case 1: case 2: return always;    /* every bar passes */
    case 3: return never;                     /* no bar passes */
    case 4: return 0.0;
    case 5: return exact;  /* a value bars hit exactly: a z over 2 bars is +-1, cloc 0.5 on a tick */
    default: return round_sig(uniform(r, lo, hi), 3);
    }
}

/* SPEC §4's RSI filter for a combo drawn otherwise: on for about one in
 * four, a short, the default or a long window, thresholds RSI readings hit
 * exactly (0, 50, 100) or cross often. Drawn from a stream of its own,
 * seeded by the combo's other fields, so every seed's cases are the ones
 * it made before the filter existed but for the filter. */
static void gen_rsi(sebt_params *p)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        double v = sebt_params_get_double(p, i);
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
    sebt_rng q;
    sebt_rng_seed(&q, h);
    p->use_rsi = chance(&q, 0.25);
    static const int32_t windows[] = { 1, 2, 3, 5, 14, 30 };
    p->rsi_window = windows[sebt_rng_range(&q, 0, 5)];
    static const double maxes[] = { 0.0, 50.0, 100.0, 30.0, 70.0 };
    p->rsi_max = chance(&q, 0.5) ? maxes[sebt_rng_range(&q, 0, 4)] : round_sig(uniform(&q, 0, 100), 3);
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
    p->vol_z = gen_threshold(r, -100.0, 100.0, -1.5, 2.5, 1.0);
    p->tr_z = gen_threshold(r, -100.0, 100.0, -1.5, 2.5, 1.0);
    p->cloc_min = gen_threshold(r, -1.0, 1.0, 0.0, 1.0, 0.5);
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
    gen_rsi(p);
}

static sebt_status case_alloc(sebt_fuzz_case *out, size_t n, size_t n_combos, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    out->combos = calloc(n_combos ? n_combos : 1, sizeof *out->combos);
    if (!out->combos)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory for %zu combos", n_combos);
    out->n_combos = n_combos;
    sebt_status st = sebt_series_alloc(&out->series, n, err);
    if (st) {
        free(out->combos);
        out->combos = NULL;
    }
    return st;
}

static sebt_status case_check(uint64_t seed, uint64_t iteration, sebt_fuzz_case *out, sebt_error *err)
{
    sebt_status st = sebt_series_check(&out->series, err);
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

uint64_t sebt_fuzz_stream_seed(uint64_t seed, uint64_t stream)
{
    if (stream == 0)
        return seed;
    uint64_t x = stream;
    return seed ^ splitmix64(&x);
}

/* ---- sweep-shaped combos and extreme series --------------------- */

/* Distinct window values for one axis of a sweep. */
static void axis_windows(sebt_rng *r, size_t n_bars, int32_t min, size_t k, int32_t *out)
{
    int32_t hi = (int32_t)(n_bars + 5 < 200 ? n_bars + 5 : 200);
    if (hi < min + (int32_t)k)
        hi = min + (int32_t)k;
    int32_t start = (int32_t)sebt_rng_range(r, min, hi - (int32_t)k);
    int32_t step = (int32_t)sebt_rng_range(r, 1, 3);
    for (size_t i = 0; i < k; i++)
        out[i] = start + (int32_t)i * step;
}

/* Combos shaped like a sweep: a grid whose axes share spans (one fast
 * span with several slow spans, the same windows with many exit keys),
 * in grid order, reversed or shuffled; sizes on both sides of 256 and
 * 1,024 (65,536 in big cases), what an engine counts in a small integer
 * (memo stamps, shared-work lists, batch slots) goes past. */
static sebt_status gen_sweep(sebt_rng *r, size_t n_bars, size_t target, sebt_fuzz_case *out, sebt_error *err)
{
    sebt_params *combos = calloc(target, sizeof *combos);
    if (!combos)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory for %zu combos", target);
    sebt_params base;
    gen_combo(r, n_bars, &base);
    bool exits = chance(r, 0.5);   /* the same windows with many exit keys */
    /* Four axes; radices whose product reaches target. */
    size_t rad[4] = { 1, 1, 1, 1 };
    for (size_t i = 0, prod = 1; prod < target; i = (i + 1) % 4) {
        prod = prod / rad[i] * (rad[i] + 1);
        rad[i]++;
    }
    int32_t win[4][64];
    double ex[4][64];
    for (size_t a = 0; a < 4; a++) {
        if (rad[a] > 64)
            rad[a] = 64;
        axis_windows(r, n_bars, a == 2 ? 2 : 1, rad[a], win[a]);
        for (size_t i = 0; i < rad[a]; i++)
            ex[a][i] = a == 0 ? 0.25 * (double)i : a == 1 ? 0.5 + 0.5 * (double)i : a == 2 ? (double)(i + 1) : (double)i;
    }
    for (size_t i = 0; i < target; i++) {
        size_t d[4], x = i;
        for (int a = 3; a >= 0; a--) {
            d[a] = x % rad[a];
            x /= rad[a];
        }
        sebt_params p = base;
        if (exits) {
            p.atr_stop_mult = ex[0][d[0]];
            p.reward_r = ex[1][d[1]];
            p.max_hold = (int32_t)ex[2][d[2]];
            p.fee_bp = ex[3][d[3]];
            p.use_stop = p.use_tp = p.use_time = true;
        } else {
            p.ema_fast = win[0][d[0]];
            p.ema_slow = win[1][d[1]];
            p.z_window = win[2][d[2]];
            p.atr_window = win[3][d[3]];
        }
        combos[i] = p;
    }
    int order = (int)sebt_rng_range(r, 0, 2);
    if (order == 1) {
        for (size_t i = 0; i < target / 2; i++) {
            sebt_params t = combos[i];
            combos[i] = combos[target - 1 - i];
            combos[target - 1 - i] = t;
        }
    } else if (order == 2) {
        for (size_t i = target; i > 1; i--) {
            size_t j = (size_t)sebt_rng_range(r, 0, (int64_t)i - 1);
            sebt_params t = combos[i - 1];
            combos[i - 1] = combos[j];
            combos[j] = t;
        }
    }
    free(out->combos);
    out->combos = combos;
    out->n_combos = target;
    /* Budgets that split the batch with a partial tail, and a few threads. */
    /* A combo's share of a budget is a column or a few (eight for the
     * mutants' engine): k of them and a part of one more. */
    size_t col = (n_bars ? n_bars : 1) * 8 * (chance(r, 0.5) ? 8 : 1);
    switch (sebt_rng_range(r, 0, 3)) {
    case 0: out->memory_budget = 1; break;
    case 1: out->memory_budget = col * (size_t)sebt_rng_range(r, 2, 12) + (size_t)sebt_rng_range(r, 1, (int64_t)col - 1); break;
    default: out->memory_budget = 0; break;
    }
    out->threads = chance(r, 0.4) ? (int)sebt_rng_range(r, 2, 4) : 1;
    size_t used = strlen(out->shape);
    if (used < sizeof out->shape)
        snprintf(out->shape + used, sizeof out->shape - used, ", %s sweep of %zu combos (%s)",
                 exits ? "an exit-key" : "a window", target, order == 0 ? "grid order" : order == 1 ? "reversed" : "shuffled");
    return SEBT_OK;
}

static size_t sweep_size(sebt_rng *r, size_t n_bars)
{
    double u = sebt_rng_unit(r);
    if (u < 0.6 || n_bars > 600)
        return (size_t)sebt_rng_range(r, 2, 40);
    if (u < 0.85 || n_bars > 300)
        return (size_t)sebt_rng_range(r, 250, 300);     /* past 256 */
    return (size_t)sebt_rng_range(r, 1020, 1100);        /* past 1,024 */
}

/* Extreme values, then thresholds that tie with them: a volume spike of
 * 10^12 to 10^15 that leaves the z window later, subnormal or huge prices,
 * a long flat run (variance 0: z is NaN, SPEC §3). */
static void gen_extreme(sebt_rng *r, sebt_fuzz_case *c)
{
    sebt_series *s = &c->series;
    if (s->n < 3)
        return;
    const char *what = "";
    switch (sebt_rng_range(r, 0, 3)) {
    case 0: {
        size_t t = (size_t)sebt_rng_range(r, 0, (int64_t)s->n / 2);
        if (!sebt_series_is_missing(s, t))
            s->volume[t] = pow(10.0, (double)sebt_rng_range(r, 12, 15)) * (1 + sebt_rng_unit(r));
        what = "a volume spike";
        break;
    }
    case 1: {
        bool tiny = chance(r, 0.5);
        double k = tiny ? 1e-310 : 1e120;
        for (size_t t = 0; t < s->n; t++)
            if (!sebt_series_is_missing(s, t)) {
                s->open[t] *= k;
                s->high[t] *= k;
                s->low[t] *= k;
                s->close[t] *= k;
                if (tiny && chance(r, 0.5))
                    s->volume[t] *= 1e-315;
            }
        what = tiny ? "subnormal prices" : "huge prices";
        break;
    }
    default: {
        size_t len = (size_t)sebt_rng_range(r, 20, 300), at = (size_t)sebt_rng_range(r, 1, (int64_t)s->n - 1);
        size_t from = at;
        while (from > 0 && sebt_series_is_missing(s, from))
            from--;
        if (sebt_series_is_missing(s, from))
            break;
        for (size_t t = at; t < at + len && t < s->n; t++) {
            s->open[t] = s->open[from];
            s->high[t] = s->high[from];
            s->low[t] = s->low[from];
            s->close[t] = s->close[from];
            s->volume[t] = s->volume[from];
        }
        what = "a long flat run";
        break;
    }
    }
    sebt_series_recount(s);
    /* Near-ties after the extreme: a threshold equal to the reference's
     * own z or cloc at a later bar, for a few combos. */
    sebt_features f;
    if (sebt_features_alloc(&f, s->n, NULL) == SEBT_OK) {
        for (size_t i = 0; i < c->n_combos && i < 8; i++) {
            if (!chance(r, 0.6))
                continue;
            sebt_params *p = &c->combos[i];
            if (sebt_params_validate(p, NULL) != SEBT_OK ||
                sebt_reference_backend.features(&sebt_reference_backend, s, p, &f, NULL) != SEBT_OK)
                continue;
            size_t t0 = (size_t)sebt_rng_range(r, (int64_t)s->n / 2, (int64_t)s->n - 1);
            for (size_t k = 0; k < s->n; k++) {
                size_t t = (t0 + k) % s->n;
                int which = (int)sebt_rng_range(r, 0, 2);
                double v = which == 0 ? f.vol_z[t] : which == 1 ? f.tr_z[t] : f.cloc[t];
                if (!isfinite(v))
                    continue;
                if (which == 0)
                    p->vol_z = v;
                else if (which == 1)
                    p->tr_z = v;
                else
                    p->cloc_min = v;
                break;
            }
        }
        sebt_features_free(&f);
    }
    size_t used = strlen(c->shape);
    if (used < sizeof c->shape)
        snprintf(c->shape + used, sizeof c->shape - used, ", %s then near-ties", what);
}

/* A window of series s, [from, from+n), copied. */
static void copy_bars(const sebt_series *s, size_t from, size_t n, sebt_series *out)
{
    memcpy(out->ts, s->ts + from, n * sizeof *out->ts);
    memcpy(out->open, s->open + from, n * sizeof(double));
    memcpy(out->high, s->high + from, n * sizeof(double));
    memcpy(out->low, s->low + from, n * sizeof(double));
    memcpy(out->close, s->close + from, n * sizeof(double));
    memcpy(out->volume, s->volume + from, n * sizeof(double));
}

/* ---- shapes every run meets, by case number ----------------------------

 * Not left to chance: from the first cases of every run (and every
 * `--cases` run alike), some cases carry what a sweep engine does only
 * for big calls or on many threads. Each is added after the case's own
 * combos are drawn (those stay what they were), from a generator of its
 * own seeded by the case, so the cases between stay the same too. */
#define SHAPED_EVERY 32      /* case k: k % 32 == 2: a cost/time sweep; 5: a batch size; 18: wide */
#define WIDE_EVERY 256       /* ... of which case k % 256 == 18 is wide (>= 8,192 combos) */
#define WIDE_MIN_BARS 130
#define WIDE_MAX_BARS 240

/* Thread counts beyond a small machine's cores: a race that needs three
 * threads, or a split by thread that goes wrong past two. */
static int many_threads(sebt_rng *r, bool at_least_two)
{
    static const int t[] = { 2, 3, 4, 8, 3, 1 };
    return t[sebt_rng_range(r, 0, at_least_two ? 4 : 5)];
}

/* Appends extra (n_extra combos) after the case's own. */
static sebt_status append_combos(sebt_fuzz_case *c, const sebt_params *extra, size_t n_extra, sebt_error *err)
{
    sebt_params *all = realloc(c->combos, (c->n_combos + n_extra) * sizeof *all);
    if (!all)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory for %zu combos", c->n_combos + n_extra);
    memcpy(all + c->n_combos, extra, n_extra * sizeof *extra);
    c->combos = all;
    c->n_combos += n_extra;
    return SEBT_OK;
}

/* One axis of a shaped grid: which parameter, and its values. */
typedef struct {
    int which;          /* see set_axis */
    size_t n;
    double v[8];
} shaped_axis;

static void set_axis(sebt_params *p, int which, double x)
{
    switch (which) {
    case 0: p->ema_fast = (int32_t)x; break;
    case 1: p->ema_slow = (int32_t)x; break;
    case 2: p->z_window = (int32_t)x; break;
    case 3: p->atr_window = (int32_t)x; break;
    case 4: p->vol_z = x; break;
    case 5: p->cloc_min = x; break;
    case 6: p->fee_bp = x; break;
    case 7: p->slippage_bp = x; break;
    case 8: p->use_time = x > 0; p->max_hold = x > 0 ? (int32_t)x : 5; break;   /* 0: no time exit */
    case 9: p->atr_stop_mult = x; break;
    case 10: p->tr_z = x; break;
    default: p->reward_r = x; break;
    }
}

/* A grid over axes (the last varies fastest) of exactly target combos
 * from base: the first target points of the full grid, in grid order,
 * reversed or shuffled. */
static sebt_params *shaped_grid(sebt_rng *r, const sebt_params *base, const shaped_axis *ax, size_t n_ax,
                                size_t target, const char **order_name)
{
    sebt_params *g = malloc((target ? target : 1) * sizeof *g);
    if (!g)
        return NULL;
    for (size_t i = 0; i < target; i++) {
        sebt_params p = *base;
        size_t x = i;
        for (size_t a = n_ax; a-- > 0;) {
            set_axis(&p, ax[a].which, ax[a].v[x % ax[a].n]);
            x /= ax[a].n;
        }
        if (p.ema_slow < 1)
            p.ema_slow = 1;
        g[i] = p;
    }
    int order = (int)sebt_rng_range(r, 0, 2);
    *order_name = order == 0 ? "grid order" : order == 1 ? "reversed" : "shuffled";
    for (size_t i = 0; order == 1 && i < target / 2; i++) {
        sebt_params t = g[i];
        g[i] = g[target - 1 - i];
        g[target - 1 - i] = t;
    }
    for (size_t i = target; order == 2 && i > 1; i--) {
        size_t j = (size_t)sebt_rng_range(r, 0, (int64_t)i - 1);
        sebt_params t = g[i - 1];
        g[i - 1] = g[j];
        g[j] = t;
    }
    return g;
}

/* Axes of costs and time limits over one stop and target: exit keys that
 * differ only in fee_bp and slippage_bp (fast_cpu walks their trades once
 * and sums each combo's costs), or only in max_hold and use_time (they
 * share the exits searched to the last bar). */
static size_t cost_time_axes(sebt_rng *r, shaped_axis *ax)
{
    ax[0] = (shaped_axis){ 6, 3, { 0, 2.5, 10 } };
    ax[1] = (shaped_axis){ 7, 2, { 0, (double)sebt_rng_range(r, 1, 8) } };
    ax[2] = (shaped_axis){ 8, 4, { 1, 0, 3, (double)sebt_rng_range(r, 4, 40) } };
    if (chance(r, 0.5)) {   /* the time axis outermost, the costs innermost, or the other way */
        shaped_axis t = ax[0];
        ax[0] = ax[2];
        ax[2] = t;
    }
    return 3;
}

/* A sweep over signals, costs and time limits: each exit key holds several
 * combos that differ in their signals (fast_cpu runs those two at a time
 * when no trades are recorded), and exit keys differ only in costs or time. */
static sebt_status add_cost_time_sweep(sebt_rng *r, sebt_fuzz_case *c, sebt_error *err)
{
    sebt_params base = c->combos[0];
    base.use_stop = chance(r, 0.8);
    base.use_tp = chance(r, 0.8);
    shaped_axis ax[4];
    size_t n_ax = cost_time_axes(r, ax);
    /* The signal axis innermost: consecutive combos of an exit key. */
    if (chance(r, 0.5))
        ax[n_ax++] = (shaped_axis){ 1, 3, { base.ema_fast + 1, base.ema_fast + 3, base.ema_fast + 7 } };
    else
        ax[n_ax++] = (shaped_axis){ 5, 3, { -1, 0.5, 0.25 } };
    size_t full = 1;
    for (size_t a = 0; a < n_ax; a++)
        full *= ax[a].n;
    size_t target = (size_t)sebt_rng_range(r, 8, (int64_t)full);
    const char *order;
    sebt_params *g = shaped_grid(r, &base, ax, n_ax, target, &order);
    if (!g)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory for %zu combos", target);
    sebt_status st = append_combos(c, g, target, err);
    free(g);
    if (st)
        return st;
    if (c->threads == 1)
        c->threads = (int)sebt_rng_range(r, 1, 2);
    size_t used = strlen(c->shape);
    if (used < sizeof c->shape)
        snprintf(c->shape + used, sizeof c->shape - used, ", a cost/time sweep of %zu combos (%s)", target, order);
    return SEBT_OK;
}

/* Random combos (no shared spans) up to a batch size at or around a power
 * of two or a multiple of 8, on a thread count that may pass the cores:
 * what a backend that cuts a batch into lanes or slices per thread gets
 * wrong at the edges. The size keeps bars x combos under 300,000. */
static sebt_status add_batch_size(sebt_rng *r, sebt_fuzz_case *c, sebt_error *err)
{
    static const size_t sizes[] = { 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 48, 63, 64, 65,
                                    127, 128, 129, 255, 256, 257, 511, 512, 513 };
    size_t n_sizes = sizeof sizes / sizeof sizes[0], bars = c->series.n ? c->series.n : 1;
    while (n_sizes > 3 && sizes[n_sizes - 1] * bars > 300000)
        n_sizes--;
    size_t target = sizes[sebt_rng_range(r, 0, (int64_t)n_sizes - 1)];
    if (target <= c->n_combos)
        target = c->n_combos + 8 - c->n_combos % 8;
    size_t n_extra = target - c->n_combos;
    sebt_params *g = malloc(n_extra * sizeof *g);
    if (!g)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory for %zu combos", target);
    for (size_t i = 0; i < n_extra; i++)
        gen_combo(r, c->series.n, &g[i]);
    sebt_status st = append_combos(c, g, n_extra, err);
    free(g);
    if (st)
        return st;
    c->threads = many_threads(r, false);
    c->threads_fixed = true;
    size_t col = bars * 8;
    switch (sebt_rng_range(r, 0, 2)) {
    case 0: c->memory_budget = 1; break;
    case 1: c->memory_budget = col * (size_t)sebt_rng_range(r, 2, 12) + (size_t)sebt_rng_range(r, 1, (int64_t)col - 1); break;
    default: c->memory_budget = 0; break;
    }
    size_t used = strlen(c->shape);
    if (used < sizeof c->shape)
        snprintf(c->shape + used, sizeof c->shape - used, ", a batch of %zu random combos on %d threads", target,
                 c->threads);
    return SEBT_OK;
}

/* One call of 8,192 to 8,800 combos on 2 to 8 threads (a short series, so
 * the reference checks every combo in well under a second): a grid over
 * windows, thresholds, stops, costs and time limits, where an engine
 * splits its planning passes over threads (fast_cpu from 8,192 combos)
 * and counts past 4,096 and 8,192. */
static sebt_status add_wide(sebt_rng *r, sebt_fuzz_case *c, sebt_error *err)
{
    /* Bars x combos past 10^6, where an engine such as fast_cpu starts a
     * thread team: a series of its own, 130 to 240 bars. */
    if (c->series.n < WIDE_MIN_BARS || c->series.n > WIDE_MAX_BARS) {
        sebt_series own;
        size_t n = (size_t)sebt_rng_range(r, WIDE_MIN_BARS, WIDE_MAX_BARS);
        sebt_status st = sebt_series_alloc(&own, n, err);
        if (st)
            return st;
        gen_series(r, n, &own, c->shape, sizeof c->shape);
        sebt_series_free(&c->series);
        c->series = own;
    }
    static const size_t sizes[] = { 8192, 8193, 8200, 8448, 8800 };
    size_t target = sizes[sebt_rng_range(r, 0, 4)];
    sebt_params base = c->combos[0];
    base.use_stop = base.use_tp = true;
    int32_t f = (int32_t)sebt_rng_range(r, 1, 6);
    shaped_axis ax[10];
    size_t n_ax = 0;
    ax[n_ax++] = (shaped_axis){ 3, 2, { (double)sebt_rng_range(r, 1, 4), (double)sebt_rng_range(r, 5, 20) } };
    ax[n_ax++] = (shaped_axis){ 2, 2, { 2, (double)sebt_rng_range(r, 3, 30) } };
    ax[n_ax++] = (shaped_axis){ 9, 2, { 0, round_sig(uniform(r, 0.3, 2.5), 2) } };
    n_ax += cost_time_axes(r, ax + n_ax);
    ax[n_ax++] = (shaped_axis){ 1, 4, { f + 1, f + 2, f + 5, f + 11 } };
    ax[n_ax++] = (shaped_axis){ 4, 4, { -100, 0, 0.5, 1 } };
    ax[n_ax++] = (shaped_axis){ 5, 6, { -1, 0, 0.25, 0.5, 0.6, 0.8 } };   /* 18,432 points: the first taken */
    base.ema_fast = f;
    const char *order;
    sebt_params *g = shaped_grid(r, &base, ax, n_ax, target - c->n_combos, &order);
    if (!g)
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory for %zu combos", target);
    sebt_status st = append_combos(c, g, target - c->n_combos, err);
    free(g);
    if (st)
        return st;
    c->threads = many_threads(r, true);
    c->threads_fixed = true;
    switch (sebt_rng_range(r, 0, 2)) {
    case 0: c->memory_budget = 1; break;
    case 1: c->memory_budget = c->series.n * 8 * (size_t)sebt_rng_range(r, 2, 6) + 1; break;
    default: c->memory_budget = 0; break;
    }
    size_t used = strlen(c->shape);
    if (used < sizeof c->shape)
        snprintf(c->shape + used, sizeof c->shape - used, ", a wide call of %zu combos (%s) on %d threads", target,
                 order, c->threads);
    return SEBT_OK;
}

bool sebt_fuzz_is_wide(uint64_t iteration) { return iteration % WIDE_EVERY == 18; }

/* Case `iteration`'s scheduled shape, if it has one. */
static sebt_status add_scheduled(uint64_t seed, uint64_t iteration, sebt_fuzz_case *c, sebt_error *err)
{
    uint64_t k = iteration % SHAPED_EVERY;
    if ((k != 2 && k != 5 && k != 18) || c->n_combos == 0)
        return SEBT_OK;
    sebt_rng r;
    sebt_rng_seed(&r, seed ^ (iteration * 0xA0761D6478BD642Full) ^ 0x5AA9EDull);
    if (sebt_fuzz_is_wide(iteration))
        return add_wide(&r, c, err);
    if (k == 5)
        return add_batch_size(&r, c, err);
    if (k == 2)
        return add_cost_time_sweep(&r, c, err);
    return SEBT_OK;
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
    sebt_series tmp;
    sebt_status st = sebt_series_alloc(&tmp, n, err);
    if (st)
        return st;
    char shape[sizeof out->shape];
    gen_series(&r, n, &tmp, shape, sizeof shape);
    size_t n_combos = (size_t)sebt_rng_range(&r, 1, SEBT_FUZZ_MAX_COMBOS);
    st = case_alloc(out, 0, n_combos, err);
    if (st) {
        sebt_series_free(&tmp);
        return st;
    }
    sebt_series_free(&out->series);
    out->series = tmp;
    memcpy(out->shape, shape, sizeof shape);
    out->threads = 1;
    for (size_t i = 0; i < out->n_combos; i++)
        gen_combo(&r, n, &out->combos[i]);
    /* Drawn after the shapes above, so those stay what they were. */
    if (chance(&r, 0.12)) {
        st = gen_sweep(&r, n, sweep_size(&r, n), out, err);
        if (st) {
            sebt_fuzz_case_free(out);
            return st;
        }
    }
    if (chance(&r, 0.12))
        gen_extreme(&r, out);
    st = add_scheduled(seed, iteration, out, err);
    if (st) {
        sebt_fuzz_case_free(out);
        return st;
    }
    return case_check(seed, iteration, out, err);
}

/* ---- big cases: the paths a small case never takes ----------------------- */

/* fast_cpu (and any backend like it) switches paths at these points; big
 * cases aim at both sides of each. Bars x combos below/above 10^6 decides
 * one thread or a team; the memory budget decides how many indicator keys
 * share a batch (a budget of one byte forces one key per batch); ATR is
 * summed in blocks of 512 bars, crossed by every big case. */
#define BIG_THREAD_POINT 1e6
#define BIG_MIN_BARS 100000
#define BIG_MAX_BARS 140000   /* past 2^17 = 131,072 about one case in five */


/* A combo for real prices: windows short enough that the reference checks
 * 100k bars in a fraction of a second, thresholds where real bars sit
 * (0.5 is a common cloc on a tick grid; z-scores over 2 bars are +-1). */
static void gen_big_combo(sebt_rng *r, const int32_t key[4], sebt_params *p)
{
    *p = sebt_params_default();
    p->ema_fast = key[0];
    p->ema_slow = key[1];
    p->z_window = key[2];
    p->atr_window = key[3];
    static const double vz[] = { -100, 0.0, 1.0, 1.5, 2.0, 2.5 };
    static const double tz[] = { -100, 0.0, 1.0, 0.5, 1.2, 2.0 };
    static const double cm[] = { -1, 0.0, 0.5, 0.6, 0.8, 0.25 };
    p->vol_z = vz[sebt_rng_range(r, 0, 5)];
    p->tr_z = tz[sebt_rng_range(r, 0, 5)];
    p->cloc_min = cm[sebt_rng_range(r, 0, 5)];
    p->use_stop = chance(r, 0.85);
    static const double mult[] = { 0.0, 0.0, 0.5, 0.7, 1.0, 2.0 };
    p->atr_stop_mult = mult[sebt_rng_range(r, 0, 5)];
    p->use_tp = chance(r, 0.85);
    static const double rewards[] = { 0.5, 1.0, 1.0, 2.0, 3.0 };
    p->reward_r = rewards[sebt_rng_range(r, 0, 4)];
    p->use_time = chance(r, 0.85);
    p->max_hold = chance(r, 0.3) ? (int32_t)sebt_rng_range(r, 1, 3) : (int32_t)sebt_rng_range(r, 4, 200);
    p->fee_bp = chance(r, 0.3) ? 0.0 : (double)sebt_rng_range(r, 1, 10);
    p->slippage_bp = chance(r, 0.3) ? 0.0 : (double)sebt_rng_range(r, 1, 10);
    gen_rsi(p);
}

sebt_status sebt_fuzz_generate_big(uint64_t seed, uint64_t index, const sebt_series *base,
                                   sebt_fuzz_case *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    sebt_rng r;
    sebt_rng_seed(&r, seed ^ (index * 0x9FB21C651E98DF25ull) ^ 0xB16CA5E5ull);
    if (chance(&r, 0.08)) {
        /* Past 65,536 combos: a sweep on a short series. */
        size_t n = (size_t)sebt_rng_range(&r, 40, 150);
        sebt_status st = case_alloc(out, n, 1, err);
        if (st)
            return st;
        out->big = true;
        gen_series(&r, n, &out->series, out->shape, sizeof out->shape);
        st = gen_sweep(&r, n, (size_t)sebt_rng_range(&r, 65537, 65600), out, err);
        if (st) {
            sebt_fuzz_case_free(out);
            return st;
        }
        out->threads = (int)sebt_rng_range(&r, 2, 8);
        size_t used = strlen(out->shape);
        if (used < sizeof out->shape)
            snprintf(out->shape + used, sizeof out->shape - used, " (big)");
        return case_check(seed, index, out, err);
    }
    size_t n = (size_t)sebt_rng_range(&r, BIG_MIN_BARS, BIG_MAX_BARS);
    bool real = base && base->n >= 2;
    if (real && n > base->n)
        n = base->n;
    /* Both sides of the thread point: bars x combos just under or well over it. */
    size_t under = (size_t)(BIG_THREAD_POINT / (double)n);
    size_t n_combos = chance(&r, 0.35) ? (size_t)sebt_rng_range(&r, 2, (int64_t)(under > 2 ? under : 2))
                                       : (size_t)sebt_rng_range(&r, (int64_t)under + 1, (int64_t)under + 16);
    sebt_status st = case_alloc(out, n, n_combos, err);
    if (st)
        return st;
    out->big = true;
    sebt_series *s = &out->series;
    size_t used;
    if (real) {
        size_t from = (size_t)sebt_rng_range(&r, 0, (int64_t)(base->n - n));
        copy_bars(base, from, n, s);
        used = (size_t)snprintf(out->shape, sizeof out->shape, "big: %zu real bars from bar %zu", n, from);
    } else {
        gen_series(&r, n, s, out->shape, sizeof out->shape);
        used = strlen(out->shape);
        used += (size_t)snprintf(out->shape + used, sizeof out->shape - used, " (big, synthetic)");
    }
    /* Holes punched in: single bars, runs longer than every window, and
     * sometimes the very first bars. */
    size_t singles = (size_t)sebt_rng_range(&r, 0, 200), runs = (size_t)sebt_rng_range(&r, 1, 6);
    for (size_t i = 0; i < singles; i++)
        sebt_series_set_missing(s, (size_t)sebt_rng_range(&r, 0, (int64_t)n - 1));
    for (size_t i = 0; i < runs; i++) {
        size_t len = (size_t)sebt_rng_range(&r, 2, 400);
        size_t at = (size_t)sebt_rng_range(&r, 0, (int64_t)(n > len ? n - len : 0));
        for (size_t t = at; t < at + len && t < n; t++)
            sebt_series_set_missing(s, t);
    }
    if (chance(&r, 0.2))
        for (size_t t = 0, k = (size_t)sebt_rng_range(&r, 1, 50); t < k && t < n; t++)
            sebt_series_set_missing(s, t);
    /* Far out, where an engine's 16-bit or 17-bit counter or a cut at 10^5
     * bars would show: a hole or a price level jump at 2^16, 10^5 or 2^17. */
    static const size_t far[] = { 65535, 65536, 100000, 131071, 131072 };
    size_t n_far = 0;
    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
        if (far[i] + 1 >= n || !chance(&r, 0.5))
            continue;
        n_far++;
        if (chance(&r, 0.5)) {
            for (size_t t = far[i], k = (size_t)sebt_rng_range(&r, 1, 40); t < far[i] + k && t < n; t++)
                sebt_series_set_missing(s, t);
        } else {
            double k = chance(&r, 0.5) ? 10.0 : 0.1;
            for (size_t t = far[i]; t < n; t++)
                if (!sebt_series_is_missing(s, t)) {
                    s->open[t] *= k;
                    s->high[t] *= k;
                    s->low[t] *= k;
                    s->close[t] *= k;
                }
        }
    }
    sebt_series_recount(s);
    /* Indicator keys: some combos share one (grouped), most have their own
     * (so a small budget splits them over many batches). */
    size_t n_keys = (size_t)sebt_rng_range(&r, 1, (int64_t)n_combos);
    int32_t (*keys)[4] = malloc((n_keys ? n_keys : 1) * sizeof *keys);
    if (!keys) {
        sebt_fuzz_case_free(out);
        return sebt_fail(err, SEBT_ERR_NOMEM, "fuzz: out of memory");
    }
    for (size_t k = 0; k < n_keys; k++) {
        keys[k][0] = (int32_t)sebt_rng_range(&r, 1, 60);
        keys[k][1] = chance(&r, 0.15) ? keys[k][0] : (int32_t)sebt_rng_range(&r, 1, 200);
        keys[k][2] = (int32_t)(chance(&r, 0.2) ? 2 : sebt_rng_range(&r, 2, 96));
        keys[k][3] = (int32_t)sebt_rng_range(&r, 1, 48);
    }
    for (size_t i = 0; i < n_combos; i++)
        gen_big_combo(&r, keys[i < n_keys ? i : (size_t)sebt_rng_range(&r, 0, (int64_t)n_keys - 1)],
                      &out->combos[i]);
    free(keys);
    out->threads = (int)sebt_rng_range(&r, 2, 8);
    switch (sebt_rng_range(&r, 0, 4)) {
    case 0: case 1: out->memory_budget = 1; break;                 /* one key per batch */
    case 2: case 3: /* a few columns and a part of one: the last batch is a partial tail */
        out->memory_budget = n * 8 * (size_t)sebt_rng_range(&r, 4, 40) + (size_t)sebt_rng_range(&r, 0, (int64_t)n * 8 - 1);
        break;
    default: out->memory_budget = 0; break;                        /* the backend's own */
    }
    if (used < sizeof out->shape)
        snprintf(out->shape + used, sizeof out->shape - used, ", %zu combos on %zu keys, %d threads,%s %s",
                 n_combos, n_keys, out->threads, n_far ? " holes/jumps past 2^16," : "",
                 out->memory_budget == 1 ? "1-byte budget" : out->memory_budget ? "small budget" : "default budget");
    return case_check(seed, index, out, err);
}

void sebt_fuzz_case_free(sebt_fuzz_case *c)
{
    if (c) {
        sebt_series_free(&c->series);
        free(c->combos);
        c->combos = NULL;
        c->n_combos = 0;
    }
}

/* ---- the loop ---------------------------------------------------------- */

static void drop_cases(sebt_fuzz_case *c, int n)
{
    for (int k = 0; k < n; k++)
        sebt_fuzz_case_free(&c[k]);
}

static void fixture_name(const sebt_backend *b, uint64_t seed, uint64_t stream, bool big, uint64_t it,
                         char *buf, size_t size)
{
    char st[40] = "";
    if (stream)
        snprintf(st, sizeof st, "-stream%llu", (unsigned long long)stream);
    snprintf(buf, size, "%s-seed%llu%s-%s%llu", b->name, (unsigned long long)seed, st,
             big ? "big" : "case", (unsigned long long)it);
    for (char *c = buf; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            *c = '-';
}

static void note_paths(sebt_fuzz_paths *pa, const sebt_fuzz_case *c, const sebt_batch_stats *st)
{
    pa->big_cases += c->big;
    pa->multi_thread_cases += st->threads_used > 1;
    pa->multi_batch_cases += st->batches > 1;
    pa->multi_block_cases += st->blocks > 1;
    if (st->threads_used > pa->max_threads)
        pa->max_threads = st->threads_used;
    if (st->batches > pa->max_batches)
        pa->max_batches = st->batches;
    if (st->blocks > pa->max_blocks)
        pa->max_blocks = st->blocks;
    if (st->chunks > pa->max_chunks)
        pa->max_chunks = st->chunks;
    if (c->series.n > pa->max_bars)
        pa->max_bars = c->series.n;
    if (c->n_combos > pa->max_combos)
        pa->max_combos = c->n_combos;
    pa->stats_reported = pa->stats_reported || st->threads_used || st->batches || st->blocks || st->chunks;
}

/* Writes the batch a reproducer needs besides its combo: every combo (in
 * sebt sweep's combos format) and the run options. */
static sebt_status write_batch_files(const char *folder, const sebt_params *combos, size_t n, int threads,
                                     size_t memory_budget, size_t focus, sebt_error *err)
{
    char file[1200];
    snprintf(file, sizeof file, "%s/combos.csv", folder);
    sebt_outfile of; /* atomic, as every file sebt writes */
    if (sebt_outfile_open(&of, file, err) != SEBT_OK)
        return err->code;
    FILE *f = of.f;
    for (int j = 0; j < SEBT_N_PARAMS; j++)
        fprintf(f, "%s%s", j ? "," : "", sebt_param_table[j].name);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < SEBT_N_PARAMS; j++) {
            char v[64];
            sebt_params_format(&combos[i], j, v, sizeof v);
            fprintf(f, "%s%s", v, j + 1 < SEBT_N_PARAMS ? "," : "\n");
        }
    if (sebt_outfile_commit(&of, err) != SEBT_OK)
        return err->code;
    snprintf(file, sizeof file, "%s/batch.txt", folder);
    if (sebt_outfile_open(&of, file, err) != SEBT_OK)
        return err->code;
    f = of.f;
    fprintf(f, "# The divergence needs these combos in one run_batch call with:\nthreads=%d\n"
               "memory_budget=%zu\nfocus_combo=%zu\n", threads, memory_budget, focus);
    return sebt_outfile_commit(&of, err);
}

/* The cases before it that the divergence needs, in the reproducer's
 * before/ folder (01, 02, ... in the order they ran): each one's series,
 * batch and run options, run first by sebt_fixture_check. */
static sebt_status write_previous(const sebt_fuzz_report *rep, sebt_error *err)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/before", rep->saved_path);
    sebt_status st = SEBT_OK;
    for (int k = rep->n_previous - rep->n_needed, at = 1; st == SEBT_OK && k < rep->n_previous; k++, at++) {
        const sebt_fuzz_case *c = &rep->previous[k];
        char name[16], note[600], path[1200];
        snprintf(name, sizeof name, "%02d", at);
        snprintf(note, sizeof note, "Call %d of %d before the case in the folder above: %s %llu of the same seed, "
                 "as it ran. These calls leave the backend in the state in which that case diverges; sebt "
                 "validate --replay runs them first, in order.\n", at, rep->n_needed, c->big ? "big case" : "case",
                 (unsigned long long)rep->previous_iteration[k]);
        st = sebt_fixture_write(dir, name, &c->series, &c->combos[0], note, path, sizeof path, err);
        if (st == SEBT_OK)
            st = write_batch_files(path, c->combos, c->n_combos, c->threads, c->memory_budget, 0, err);
    }
    return st;
}

/* Takes the diverging case c into the report, shrunk when asked. */
static sebt_status keep_divergence(const sebt_backend *cand, const sebt_fuzz_opts *opts,
                                   sebt_fuzz_case *c, size_t which, const sebt_divergence *div,
                                   sebt_fuzz_report *rep, sebt_error *err)
{
    rep->found = true;
    rep->found_big = c->big;
    snprintf(rep->shape, sizeof rep->shape, "%s", c->shape);
    rep->original_bars = c->series.n;
    rep->original_combos = c->n_combos;
    rep->repro = c->series;               /* ownership moves to the report */
    rep->repro_combos = c->combos;
    rep->repro_n_combos = c->n_combos;
    rep->repro_focus = which;
    rep->repro_threads = c->threads;
    rep->repro_memory_budget = c->memory_budget;
    c->combos = NULL;
    c->series = (sebt_series){ 0 };
    rep->divergence = *div;
    sebt_status st = sebt_fuzz_finish(cand, opts, rep, err);
    /* A failed run hands back nothing to free (its callers free a report
     * only after SEBT_OK), so the case moved in above is freed here. */
    if (st)
        sebt_fuzz_report_free(rep);
    return st;
}

#define RACE_RERUNS 8
#define RACE_RERUN_WORK 20e6   /* bars x combos: a bigger case is not run again that often */

/* How often a non-deterministic case diverges: RACE_RERUNS more runs on
 * twice its threads (at least 4), so a report says "diverged in 5 of 8
 * re-runs at 4 threads" rather than that it once did. A run that fails
 * to run ends the count. */
static void rerun_rate(const sebt_backend *cand, sebt_fuzz_report *rep)
{
    if ((double)rep->repro.n * (double)rep->repro_n_combos > RACE_RERUN_WORK)
        return;
    int threads = rep->repro_threads > 2 ? 2 * rep->repro_threads : 4;
    oracle_case_opts more = { threads, rep->repro_memory_budget, NULL };
    rep->rerun_threads = threads;
    for (int k = 0; k < RACE_RERUNS; k++) {
        bool diverged = false;
        sebt_divergence d;
        sebt_error e = { 0 };
        if (oracle_check_case(cand, &rep->repro, rep->repro_combos, rep->repro_n_combos, &more, &diverged, &d, NULL,
                              NULL, &e) != SEBT_OK)
            break;
        rep->reruns++;
        rep->reruns_diverged += diverged;
    }
    size_t len = strlen(rep->nondet_detail);
    if (rep->reruns)
        snprintf(rep->nondet_detail + len, sizeof rep->nondet_detail - len,
                 "; run again %d times on %d threads it diverged %d times", rep->reruns, threads,
                 rep->reruns_diverged);
}

#define AFTER_PREVIOUS_RUNS 3

/* The last `last` kept cases, then the case: whether it diverged (as_found:
 * as it did when found, the same field, bar and values); false when a run
 * failed to run (*ran false). last 0: the case alone, right after itself. */
static bool diverges_after(const sebt_backend *cand, const sebt_fuzz_report *rep, int last, bool as_found,
                           bool *ran)
{
    *ran = false;
    for (int k = rep->n_previous - last; k < rep->n_previous; k++) {
        const sebt_fuzz_case *p = &rep->previous[k];
        oracle_case_opts po = { p->threads, p->memory_budget, NULL };
        bool d0 = false;
        sebt_divergence d;
        sebt_error e = { 0 };
        if (oracle_check_case(cand, &p->series, p->combos, p->n_combos, &po, &d0, &d, NULL, NULL, &e) != SEBT_OK)
            return false;
    }
    oracle_case_opts co = { rep->repro_threads, rep->repro_memory_budget, NULL };
    bool diverged = false;
    size_t which = 0;
    sebt_divergence d;
    sebt_error e = { 0 };
    if (oracle_check_case(cand, &rep->repro, rep->repro_combos, rep->repro_n_combos, &co, &diverged, &d, NULL,
                          &which, &e) != SEBT_OK)
        return false;
    *ran = true;
    return diverged && (!as_found || (which == rep->repro_focus && oracle_same_divergence(&d, &rep->original)));
}

/* Runs diverges_after AFTER_PREVIOUS_RUNS times; how many diverged, or -1
 * when a run failed to run. */
static int count_diverging(const sebt_backend *cand, const sebt_fuzz_report *rep, int last, bool as_found)
{
    int n = 0;
    for (int k = 0; k < AFTER_PREVIOUS_RUNS; k++) {
        bool ran = false;
        n += diverges_after(cand, rep, last, as_found, &ran);
        if (!ran)
            return -1;
    }
    return n;
}

/* Whether the case, which did not repeat alone, diverges as found each
 * time it runs right after the cases run before it (the last 1, 2, 4 or 8
 * of them, the fewest that do it), and never when run again right after
 * itself: state kept between calls, which a replay of the case alone never
 * shows. A race diverges alone too, or differently each time. */
static void after_previous(const sebt_backend *cand, sebt_fuzz_report *rep)
{
    for (int want = 1;; want *= 2) {
        int last = want < rep->n_previous ? want : rep->n_previous;
        double work = (double)rep->repro.n * (double)rep->repro_n_combos;   /* bars x combos a try runs */
        for (int k = rep->n_previous - last; k < rep->n_previous; k++)
            work += (double)rep->previous[k].series.n * (double)rep->previous[k].n_combos;
        if (work > RACE_RERUN_WORK)
            return;   /* too big to run again that often */
        int diverged_runs = count_diverging(cand, rep, last, true);
        if (diverged_runs < 0)
            return;
        if (diverged_runs < AFTER_PREVIOUS_RUNS) {
            if (last == rep->n_previous)
                return;   /* every kept case tried */
            continue;
        }
        if (count_diverging(cand, rep, 0, false) != 0)
            return;
        rep->after_previous = true;
        rep->n_needed = last;
        size_t len = strlen(rep->nondet_detail);
        const sebt_fuzz_case *p = &rep->previous[rep->n_previous - last];
        snprintf(rep->nondet_detail + len, sizeof rep->nondet_detail - len,
                 "; run right after the %d case%s before it (from %s %llu on) it diverged so %d times of %d, "
                 "and run again right after itself %d times it agreed each time", last, last == 1 ? "" : "s",
                 p->big ? "big case" : "case", (unsigned long long)rep->previous_iteration[rep->n_previous - last],
                 diverged_runs, AFTER_PREVIOUS_RUNS, AFTER_PREVIOUS_RUNS);
        return;
    }
}

sebt_status sebt_fuzz_finish(const sebt_backend *cand, const sebt_fuzz_opts *opts, sebt_fuzz_report *rep,
                             sebt_error *err)
{
    size_t which = rep->repro_focus;
    rep->divergence.combo = which;
    rep->original = rep->divergence;
    /* The case again, twice, the same way: a bug that does not repeat is a
     * data race or state kept between calls, and shrinking it would chase
     * noise; it is reported as such with the case as generated. */
    oracle_case_opts again = { rep->repro_threads, rep->repro_memory_budget, NULL };
    bool repeat = !rep->repeats_checked;
    rep->repeats_checked = true;
    for (int run = 2; repeat && run <= 3 && !rep->nondeterministic; run++) {
        bool diverged = false;
        size_t w = 0;
        sebt_divergence d;
        sebt_status st = oracle_check_case(cand, &rep->repro, rep->repro_combos, rep->repro_n_combos, &again,
                                           &diverged, &d, NULL, &w, err);
        if (st)
            return st;
        if (!diverged)
            snprintf(rep->nondet_detail, sizeof rep->nondet_detail,
                     "run 1 diverged (combo %zu, %s at bar %lld: reference %.17g, candidate %.17g); run %d of "
                     "the same call did not diverge at all", which, rep->original.what,
                     (long long)rep->original.bar, rep->original.ref_value, rep->original.cand_value, run);
        else if (w != which || !oracle_same_divergence(&d, &rep->original))
            snprintf(rep->nondet_detail, sizeof rep->nondet_detail,
                     "run 1: combo %zu, %s at bar %lld, candidate %.17g; run %d of the same call: combo %zu, "
                     "%s at bar %lld, candidate %.17g", which, rep->original.what, (long long)rep->original.bar,
                     rep->original.cand_value, run, w, d.what, (long long)d.bar, d.cand_value);
        rep->nondeterministic = rep->nondet_detail[0] != '\0';
    }
    if (repeat && rep->nondeterministic && rep->n_previous)
        after_previous(cand, rep);
    if (repeat && rep->nondeterministic && !rep->after_previous)
        rerun_rate(cand, rep);
    /* Alone, on one thread and the default budget, the combo may diverge
     * too (the same way): then the batch is not part of the bug and a
     * single combo is the reproducer. */
    bool alone = false;
    sebt_divergence d1;
    sebt_error e1 = { 0 };
    if (!rep->nondeterministic &&
        (rep->repro_n_combos > 1 || rep->repro_threads > 1 || rep->repro_memory_budget)) {
        sebt_status st = oracle_check_case(cand, &rep->repro, &rep->repro_combos[which], 1, NULL, &alone,
                                           &d1, NULL, NULL, &e1);
        rep->alone_agrees = st == SEBT_OK && !alone;
        if (st == SEBT_OK && alone && oracle_same_kind(&d1, &rep->divergence)) {
            rep->repro_combos[0] = rep->repro_combos[which];
            rep->repro_n_combos = 1;
            rep->repro_focus = 0;
            rep->repro_threads = 1;
            rep->repro_memory_budget = 0;
            rep->divergence = d1;
        }
    }
    rep->divergence.combo = rep->repro_focus;
    if (opts->shrink && !rep->nondeterministic) {
        oracle_case_opts co = { rep->repro_threads, rep->repro_memory_budget, NULL };
        bool not_repeated = false;
        sebt_status st = oracle_shrink_batch(cand, &rep->repro, rep->repro_combos, &rep->repro_n_combos,
                                             &rep->repro_focus, &co, &rep->divergence, &not_repeated, err);
        if (st)
            return st;
        if (not_repeated) {
            rep->nondeterministic = true;
            snprintf(rep->nondet_detail, sizeof rep->nondet_detail,
                     "runs 1-3 diverged (%s at bar %lld), a later run of the same call did not",
                     rep->original.what, (long long)rep->original.bar);
        }
        rep->repro_threads = co.threads;
        rep->repro_memory_budget = co.memory_budget;
    }
    rep->repro_params = rep->repro_combos[rep->repro_focus];
    if (opts->save_dir) {
        char name[256], note[3000];
        const char *sel = opts->selector ? opts->selector : sebt_backend_selector(cand);
        fixture_name(cand, opts->seed, opts->stream, rep->found_big, rep->found_iteration, name, sizeof name);
        int used = 0;
        if (rep->after_previous)
            used = snprintf(note, sizeof note, "STATE KEPT BETWEEN CALLS: %s. Kept as generated, unshrunk, with "
                            "the cases before it that it needs in before/, which the replay runs first.\n",
                            rep->nondet_detail);
        else if (rep->nondeterministic)
            used = snprintf(note, sizeof note, "NON-DETERMINISTIC: the same call gave different results (%s). "
                            "Kept as generated, unshrunk; replay it a few times.\n", rep->nondet_detail);
        else if (!oracle_same_divergence(&rep->original, &rep->divergence))
            used = snprintf(note, sizeof note, "As found: combo %zu, %s at bar %lld (reference %.17g, "
                            "candidate %.17g).\n", rep->original.combo, rep->original.what,
                            (long long)rep->original.bar, rep->original.ref_value, rep->original.cand_value);
        char cmd[1600];
        sebt_fuzz_replay_command(cand, opts, rep, cmd, sizeof cmd);
        used += snprintf(note + used, sizeof note - (size_t)used,
                            "Found by `%s` (the case as generated) at %s %llu (%s), shrunk from "
                            "%zu to %zu bars and from %zu to %zu combos.\nDivergence: %s at bar %lld: %s\n",
                            cmd, rep->found_big ? "big case" : "case", (unsigned long long)rep->found_iteration,
                            rep->shape, rep->original_bars, rep->repro.n, rep->original_combos,
                            rep->repro_n_combos, rep->divergence.what, (long long)rep->divergence.bar,
                            rep->divergence.detail);
        if (rep->repro_n_combos > 1 && used > 0 && (size_t)used < sizeof note)
            used += snprintf(note + used, sizeof note - (size_t)used,
                             "The bug needs a batch: combos.csv and batch.txt hold the combos and run options "
                             "(params.txt is the combo that diverges).\n");
        if (used > 0 && (size_t)used < sizeof note)
            snprintf(note + used, sizeof note - (size_t)used,
                     "Replay: `sebt validate --backend %s --replay %s/%s`\n", sel, opts->save_dir, name);
        sebt_status st = sebt_fixture_write(opts->save_dir, name, &rep->repro, &rep->repro_params, note,
                                            rep->saved_path, sizeof rep->saved_path, err);
        if (st == SEBT_OK && (rep->repro_n_combos > 1 || rep->repro_threads > 1 || rep->repro_memory_budget ||
                              rep->after_previous))
            st = write_batch_files(rep->saved_path, rep->repro_combos, rep->repro_n_combos, rep->repro_threads,
                                   rep->repro_memory_budget, rep->repro_focus, err);
        if (st == SEBT_OK && rep->after_previous)
            st = write_previous(rep, err);
        if (st)
            return st;
    }
    return SEBT_OK;
}

void sebt_fuzz_replay_command(const sebt_backend *cand, const sebt_fuzz_opts *opts, const sebt_fuzz_report *rep,
                              char *buf, size_t size)
{
    const char *sel = opts->selector ? opts->selector : sebt_backend_selector(cand);
    int used = snprintf(buf, size, "sebt fuzz --backend %s --seed %llu", sel, (unsigned long long)opts->seed);
    if (opts->stream && used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, " --stream %llu", (unsigned long long)opts->stream);
    if (opts->threads > 0 && used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, " --threads %d", opts->threads);
    if (used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, " --%s %llu", rep->found_big ? "big-case" : "case",
                         (unsigned long long)rep->found_iteration);
    /* Without a base path the big case was synthetic: so is the replay's
     * when the default base is absent too (sebt fuzz --base). */
    if (rep->found_big && opts->base_path && used > 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, " --base %s", opts->base_path);
}

/* A generated case run as opts asks (its threads, before_case) and checked
 * against the reference; its counts are added to rep. *diverged, *which and
 * *div are what the check found. */
static sebt_status check_generated(const sebt_backend *cand, const sebt_fuzz_opts *opts, sebt_fuzz_case *c, bool big,
                                   uint64_t index, bool *diverged, size_t *which, sebt_divergence *div,
                                   sebt_fuzz_report *rep, sebt_error *err)
{
    if (opts->threads > 0 && !c->threads_fixed)
        c->threads = opts->threads;
    if (opts->before_case)
        opts->before_case(opts->before_case_user, c, big, index);
    *diverged = false;
    *which = 0;
    sebt_batch_stats bs = { 0 };
    oracle_case_opts co = { c->threads, c->memory_budget, &bs };
    oracle_tally tally = { 0, 0 };
    sebt_status st = oracle_check_case(cand, &c->series, c->combos, c->n_combos, &co, diverged, div, &tally, which,
                                       err);
    rep->cases_run++;
    rep->ties += (size_t)tally.ties;
    rep->decisions += tally.decisions;
    rep->combos_checked += *diverged ? *which + 1 : c->n_combos;
    note_paths(&rep->paths, c, &bs);
    return st;
}

/* One case, as a replay command names it. */
static sebt_status run_one(const sebt_backend *cand, const sebt_fuzz_opts *opts, sebt_fuzz_report *rep,
                           sebt_error *err)
{
    uint64_t seed = sebt_fuzz_stream_seed(opts->seed, opts->stream);
    double start = oracle_now();
    sebt_fuzz_case c;
    sebt_status st = opts->one_big ? sebt_fuzz_generate_big(seed, opts->case_index, opts->base, &c, err)
                                   : sebt_fuzz_generate(seed, opts->case_index, &c, err);
    if (st)
        return st;
    bool diverged;
    size_t which;
    sebt_divergence div;
    st = check_generated(cand, opts, &c, opts->one_big, opts->case_index, &diverged, &which, &div, rep, err);
    if (st == SEBT_OK && diverged) {
        rep->found_iteration = opts->case_index;
        rep->seconds_to_find = oracle_now() - start;
        st = keep_divergence(cand, opts, &c, which, &div, rep, err);
    }
    sebt_fuzz_case_free(&c);
    rep->seconds = oracle_now() - start;
    return st;
}

sebt_status sebt_fuzz_run(const sebt_backend *cand, const sebt_fuzz_opts *opts,
                          sebt_fuzz_report *rep, sebt_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (opts->one_case)
        return run_one(cand, opts, rep, err);
    if (opts->iterations == 0 && !(opts->time_s > 0))
        return sebt_fail(err, SEBT_ERR_USAGE, "fuzz: give a number of cases or a time limit");
    double share = opts->big_share == 0 ? SEBT_FUZZ_DEFAULT_BIG_SHARE : opts->big_share;
    if (share < 0)
        share = 0;
    if (share > 1)
        share = 1;
    uint64_t seed = sebt_fuzz_stream_seed(opts->seed, opts->stream);
    /* big_est: what the next big case will cost, at first a guess; small
     * cases get the first seconds, where most bugs show. */
    double start = oracle_now(), big_time = 0, big_est = 1.0;
    uint64_t small_i = 0, big_i = 0;
    /* The cases run last, oldest first: a divergence that needs the state
     * they leave is reproduced with them (sebt_fuzz_report.previous). */
    sebt_fuzz_case prev[SEBT_FUZZ_KEPT_CASES];
    uint64_t prev_i[SEBT_FUZZ_KEPT_CASES];
    int n_prev = 0;
    for (;;) {
        double el = oracle_now() - start;
        uint64_t done = small_i + big_i;
        if (opts->iterations && done >= opts->iterations)
            break;
        if (opts->time_s > 0 && el >= opts->time_s)
            break;
        if (opts->should_stop && opts->should_stop(opts->stop_user))
            break;
        if (opts->progress) {
            if (opts->iterations)
                opts->progress(opts->progress_user, (size_t)done, (size_t)opts->iterations);
            else
                opts->progress(opts->progress_user, (size_t)(el * 10), (size_t)(opts->time_s * 10));
        }
        /* Big cases take about `share` of the time: one runs whenever the
         * time spent on them falls behind. The order of small and big
         * cases then depends on speed (unless big_every fixes it); each
         * case is a pure function of (seed, stream, kind, number). */
        bool big = share > 0 && ((opts->big_first && done == 0) ||
                                 (small_i > 0 && (opts->big_every ? big_i < small_i / opts->big_every
                                                                  : big_time + big_est <= share * (el + big_est))));
        sebt_fuzz_case c;
        uint64_t it = big ? big_i : small_i;
        if (!big && opts->skip_wide && sebt_fuzz_is_wide(it)) {
            small_i++;
            continue;
        }
        double t0 = oracle_now();
        sebt_status st = big ? sebt_fuzz_generate_big(seed, it, opts->base, &c, err)
                             : sebt_fuzz_generate(seed, it, &c, err);
        if (st) {
            drop_cases(prev, n_prev);
            return st;
        }
        bool diverged;
        size_t which;
        sebt_divergence div;
        st = check_generated(cand, opts, &c, big, it, &diverged, &which, &div, rep, err);
        if (big) {
            big_i++;
            big_est = oracle_now() - t0;
            big_time += big_est;
        } else {
            small_i++;
        }
        if (st) {
            char msg[SEBT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            sebt_fuzz_case_free(&c);
            drop_cases(prev, n_prev);
            return sebt_fail(err, st, "fuzz %s %llu of seed %llu: %s", big ? "big case" : "case",
                             (unsigned long long)it, (unsigned long long)opts->seed, msg);
        }
        if (!diverged) {
            if (n_prev == SEBT_FUZZ_KEPT_CASES) {
                sebt_fuzz_case_free(&prev[0]);
                memmove(prev, prev + 1, (SEBT_FUZZ_KEPT_CASES - 1) * sizeof *prev);
                memmove(prev_i, prev_i + 1, (SEBT_FUZZ_KEPT_CASES - 1) * sizeof *prev_i);
                n_prev--;
            }
            prev[n_prev] = c;
            prev_i[n_prev++] = it;
            continue;
        }
        /* ownership of the cases before it moves to the report */
        memcpy(rep->previous, prev, (size_t)n_prev * sizeof *prev);
        memcpy(rep->previous_iteration, prev_i, (size_t)n_prev * sizeof *prev_i);
        rep->n_previous = n_prev;
        n_prev = 0;
        rep->found_iteration = it;
        rep->seconds_to_find = oracle_now() - start;
        st = keep_divergence(cand, opts, &c, which, &div, rep, err);
        sebt_fuzz_case_free(&c);
        if (st)
            return st;
        break;
    }
    drop_cases(prev, n_prev);
    rep->seconds = oracle_now() - start;
    return SEBT_OK;
}

void sebt_fuzz_report_free(sebt_fuzz_report *r)
{
    if (r) {
        sebt_series_free(&r->repro);
        free(r->repro_combos);
        r->repro_combos = NULL;
        drop_cases(r->previous, r->n_previous);
        r->n_previous = 0;
    }
}
