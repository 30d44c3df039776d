/* One big call: more than 2^32 bar-combos in a single run_batch, metrics
 * only, as a sweep makes it; a sample of its combos checked against the
 * reference. An index kept in 32 bits over combos x bars, or a count of
 * bar-combos that wraps, shows only past 2^32, far beyond what a fuzz case
 * (checked combo by combo with trades) can afford. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"
#include "sebt/backends.h"

/* The next digit of x in base k. */
static size_t digit(size_t *x, size_t k)
{
    size_t d = *x % k;
    *x /= k;
    return d;
}

/* Grid-shaped combos, as sweeps are: few indicator keys (so an engine that
 * shares work runs them fast), many thresholds, exits, costs and time
 * limits. Windows short enough that the reference runs a sampled combo
 * over 150,000 bars in a fraction of a second. */
static void big_call_combos(uint64_t seed, sebt_params *out, size_t n)
{
    sebt_rng r;
    sebt_rng_seed(&r, seed ^ 0xB16CA11ull);
    static const double vz[] = { -100, 0, 0.5, 1, 1.5, 2 }, tz[] = { -100, 0, 0.5, 1, 1.5, 2 };
    static const double cm[] = { -1, 0, 0.25, 0.5, 0.6, 0.8 }, mult[] = { 0, 0.5, 1, 2 };
    static const double rew[] = { 0.5, 1, 2, 3 }, fee[] = { 0, 2.5, 10 };
    static const int32_t hold[] = { 0, 1, 5, 48 };
    int32_t ef[3], es[3], zw[2], aw[2];
    for (int i = 0; i < 3; i++) {
        ef[i] = (int32_t)sebt_rng_range(&r, 1, 12);
        es[i] = ef[i] + (int32_t)sebt_rng_range(&r, 1, 40);
    }
    for (int i = 0; i < 2; i++) {
        zw[i] = (int32_t)sebt_rng_range(&r, 2, 48);
        aw[i] = (int32_t)sebt_rng_range(&r, 1, 24);
    }
    for (size_t i = 0; i < n; i++) {
        size_t x = i;
        sebt_params p = sebt_params_default();
        size_t e = digit(&x, 3);
        p.ema_fast = ef[e];
        p.ema_slow = es[e];
        p.z_window = zw[digit(&x, 2)];
        p.atr_window = aw[digit(&x, 2)];
        p.cloc_min = cm[digit(&x, 6)];
        p.vol_z = vz[digit(&x, 6)];
        p.tr_z = tz[digit(&x, 6)];
        p.fee_bp = fee[digit(&x, 3)];
        int32_t h = hold[digit(&x, 4)];
        p.use_time = h > 0;
        p.max_hold = h > 0 ? h : 10;
        p.atr_stop_mult = mult[digit(&x, 4)];
        p.reward_r = rew[digit(&x, 4)];
        out[i] = p;
    }
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The combos checked: the first and the last, those on either side of
 * combo x bars = 2^31 and 2^32, and random ones. Sorted, distinct. */
static size_t big_call_sample(uint64_t seed, size_t bars, size_t n, size_t *out)
{
    size_t k = 0;
    out[k++] = 0;
    out[k++] = n - 1;
    for (int b = 31; b <= 32; b++) {
        size_t at = (size_t)(((uint64_t)1 << b) / bars);
        for (size_t d = 0; d < 2; d++)
            if (at + d < n)
                out[k++] = at + d;
    }
    sebt_rng r;
    sebt_rng_seed(&r, seed ^ 0x5A3B1Eull);
    while (k < SEBT_BIG_CALL_SAMPLE)
        out[k++] = (size_t)sebt_rng_range(&r, 0, (int64_t)n - 1);
    qsort(out, k, sizeof *out, cmp_size);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || out[i] != out[m - 1])
            out[m++] = out[i];
    return m;
}

sebt_status sebt_oracle_big_call(const sebt_backend *cand, const sebt_series *s, uint64_t seed, int threads,
                                 sebt_big_call_report *rep, sebt_error *err)
{
    memset(rep, 0, sizeof *rep);
    double start = oracle_now();
    if (s->n < 2)
        return sebt_fail(err, SEBT_ERR_INPUT, "big call: a series of %zu bars is too short", s->n);
    size_t bars = s->n, n = (size_t)((SEBT_BIG_CALL_BAR_COMBOS + bars - 1) / bars);
    n += n / 64 + 64;   /* past 2^32 by a margin, whatever the bars */
    rep->bars = bars;
    rep->combos = n;
    rep->bar_combos = (uint64_t)bars * n;
    rep->threads = threads;
    sebt_params *combos = malloc(n * sizeof *combos);
    sebt_result *res = calloc(n, sizeof *res);
    if (!combos || !res) {
        free(combos);
        free(res);
        return sebt_fail(err, SEBT_ERR_NOMEM, "big call: out of memory for %zu combos", n);
    }
    big_call_combos(seed, combos, n);
    sebt_batch_opts o = { .threads = threads };
    sebt_error cerr = { 0 };
    sebt_status st = SEBT_OK, cst = cand->run_batch(cand, s, combos, n, &o, res, &cerr);
    if (cst == SEBT_ERR_NODEVICE || cst == SEBT_ERR_NOMEM || cst == SEBT_ERR_UNAVAILABLE) {
        if (err)
            *err = cerr;
        st = cst;
        goto out;
    }
    if (cst) {
        rep->diverged = true;
        oracle_diverge(&rep->divergence, s, &combos[0], "run_batch error", -1, 0, (double)cst, NAN,
                       "the candidate's run_batch failed on %zu combos x %zu bars (%s): %s", n, bars,
                       sebt_status_name(cst), cerr.msg);
        goto out;
    }
    size_t pick[SEBT_BIG_CALL_SAMPLE];
    size_t n_pick = big_call_sample(seed, bars, n, pick);
    const sebt_backend *ref = &sebt_reference_backend;
    char how[160];
    snprintf(how, sizeof how, "in one metrics-only call of %zu combos x %zu bars (%.3g bar-combos)", n, bars,
             (double)rep->bar_combos);
    for (size_t k = 0; k < n_pick && !rep->diverged; k++) {
        size_t i = pick[k];
        sebt_result want = { 0 };
        sebt_batch_opts ro = { .threads = 1, .want_trades = true };
        st = ref->run_batch(ref, s, &combos[i], 1, &ro, &want, err);
        if (st)
            break;
        rep->sampled++;
        if (!oracle_metrics_only_agree(&cand->contract, s, &combos[i], &want, &res[i], how, "the reference",
                                       &rep->divergence)) {
            rep->diverged = true;
            rep->divergence.combo = i;
        }
        sebt_result_free(&want);
    }
    sebt_results_free(res, n);
out:
    rep->seconds = oracle_now() - start;
    free(combos);
    free(res);
    return st;
}
