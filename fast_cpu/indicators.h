/* The indicator columns of SPEC §3 as fast_cpu computes them, shared with
 * the cuda backend (same rules as combo_kernel.h: static inline SEBT_HD
 * functions over plain arrays, no malloc, nothing beyond <math.h>).
 *
 * EMA, TR, ATR and cloc are computed in the reference's operation order,
 * so they are bit-identical to it. ATR keeps the naive window sum on
 * purpose: it costs O(w) per bar, but bars are independent, so fast_cpu
 * vectorises it across bars (sweep.c) and a GPU gives each bar a thread;
 * in exchange the stop prices are exact and a flat ATR window is flat
 * exactly when the reference's is.
 *
 * Z has two forms. sebt_k_zscore_at is the reference's: per bar, the window
 * summed oldest first, then the squared deviations summed oldest first, so
 * it gives the reference's bits (O(w) per bar; a GPU gives each bar a
 * thread, fast_cpu computes many bars side by side). sebt_k_zscore is a
 * rolling O(1)-per-bar approximation, within ~1e-9 of it, used by sweeps
 * only as a pre-filter: a decision is never taken on its value unless the
 * value is far (SEBT_K_Z_MARGIN) from the threshold. */
#ifndef SEBT_INDICATORS_H
#define SEBT_INDICATORS_H

#include <math.h>
#include <stdint.h>

#include "combo_kernel.h"

/* SPEC §4 at bar t over a combo's feature columns (col[SEBT_FI_<name>]),
 * made from sebt/strategy.def's terms: each term that p switches on holds
 * (a comparison with NaN is false). */
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) \
    SEBT_HD static inline bool sebt_k_on_##name(const sebt_params *p) { return p->name != 0; }
#include "sebt/strategy.def"
SEBT_HD static inline bool sebt_k_on_ALWAYS(const sebt_params *p) { (void)p; return true; }
#define SEBT_K_CMP_LT <
#define SEBT_K_CMP_GT >
#define SEBT_K_CMP_LE <=
#define SEBT_K_RHS_COLUMN(x) col[SEBT_FI_##x][t]
#define SEBT_K_RHS_PARAM(x) p->x
SEBT_HD static inline bool sebt_k_signal_at(const double *const *col, int64_t t, const sebt_params *p)
{
    return true
#define SEBT_TERM(name, column, cmp, rhs_kind, rhs, enable) \
        && (!sebt_k_on_##enable(p) || col[SEBT_FI_##column][t] SEBT_K_CMP_##cmp SEBT_K_RHS_##rhs_kind(rhs))
#include "sebt/strategy.def"
        ;
}

SEBT_HD static inline void sebt_k_ema(const double *close, int64_t n, int32_t span, double *out)
{
    double a = 2.0 / ((double)span + 1.0);
    double b = 1.0 - a;
    double y = NAN;
    int seeded = 0;
    for (int64_t t = 0; t < n; t++) {
        if (isnan(close[t])) {
            out[t] = NAN;
            continue;
        }
        if (!seeded) {
            y = close[t];
            seeded = 1;
        } else {
            y = a * close[t] + b * y;
        }
        out[t] = y;
    }
}

SEBT_HD static inline double sebt_k_tr_at(const double *high, const double *low, const double *close,
                                          int64_t t)
{
    double h = high[t], l = low[t];
    if (isnan(h))
        return NAN;
    double hl = h - l;
    if (t == 0 || isnan(close[t - 1]))
        return hl;
    double pc = close[t - 1];
    double a = fabs(h - pc), b = fabs(l - pc);
    double m = hl > a ? hl : a;
    return m > b ? m : b;
}

/* ATR(w) at bar t: the naive sum, oldest first, as the reference. A NaN in
 * the window makes the sum NaN, as SPEC wants. */
SEBT_HD static inline double sebt_k_atr_at(const double *tr, int64_t t, int32_t w)
{
    if (t + 1 < (int64_t)w)
        return NAN;
    double sum = 0.0;
    for (int64_t i = t + 1 - w; i <= t; i++)
        sum += tr[i];
    return sum / (double)w;
}

SEBT_HD static inline double sebt_k_cloc_at(const double *high, const double *low, const double *close,
                                            int64_t t)
{
    double h = high[t], l = low[t];
    if (isnan(h) || h == l)
        return NAN;
    return (close[t] - l) / (h - l);
}

/* SPEC §3 RSI: bar t's gain and loss, both NaN where undefined (t == 0,
 * bar t or bar t-1 missing). */
SEBT_HD static inline void sebt_k_rsi_change_at(const double *close, int64_t t, double *gain, double *loss)
{
    if (t == 0 || isnan(close[t]) || isnan(close[t - 1])) {
        *gain = *loss = NAN;
        return;
    }
    double d = close[t] - close[t - 1];
    *gain = d > 0 ? d : 0.0;
    *loss = d < 0 ? -d : 0.0;
}

/* RSI(w) at a bar from its window's sums of gains and losses, each added
 * oldest first from 0.0 as the reference adds them (a NaN change in the
 * window makes its sums NaN: no reading, as there). */
SEBT_HD static inline double sebt_k_rsi_from_sums(double gains, double losses, int32_t w)
{
    double G = gains / (double)w, L = losses / (double)w;
    if (isnan(G) || G + L == 0)
        return NAN;
    return (100.0 * G) / (G + L);
}

/* RSI(w) at bar t with the reference's bits: its window's changes summed
 * oldest first (O(w) per bar; a GPU gives each bar a thread). */
SEBT_HD static inline double sebt_k_rsi_at(const double *close, int64_t t, int32_t w)
{
    if (t + 1 < (int64_t)w)
        return NAN;
    double gains = 0.0, losses = 0.0;
    for (int64_t i = t + 1 - w; i <= t; i++) {
        double g, l;
        sebt_k_rsi_change_at(close, i, &g, &l);
        gains += g;
        losses += l;
    }
    return sebt_k_rsi_from_sums(gains, losses, w);
}

/* The bar columns an entry filter's column may read, on the host or the
 * device. */
typedef struct {
    const double *high, *low, *close, *volume;
} sebt_k_bars;

static inline sebt_k_bars sebt_k_bars_of(const sebt_series *s)
{
    sebt_k_bars b;
    b.high = s->high;
    b.low = s->low;
    b.close = s->close;
    b.volume = s->volume;
    return b;
}

/* A filter's column at bar t over window w (sebt/strategy.def's
 * SEBT_FILTER rows name it sebt_k_filter_<column>), with the reference's
 * bits: what fast_cpu's features, the sweep's filter rows and cuda's
 * features read. */
SEBT_HD static inline double sebt_k_filter_rsi(const sebt_k_bars *b, int64_t t, int32_t w)
{
    return sebt_k_rsi_at(b->close, t, w);
}

/* Z(x, w) at bar t exactly as the reference computes it (SPEC §3): NaN
 * before the window fills, with a NaN in it, or when it is flat; then the
 * mean and the population variance summed oldest first; NaN if the
 * variance underflows to 0. */
SEBT_HD static inline double sebt_k_zscore_at(const double *x, int64_t t, int32_t w)
{
    if (t + 1 < (int64_t)w)
        return NAN;
    int64_t from = t + 1 - w;
    int flat = 1;
    for (int64_t i = from; i <= t; i++) {
        if (isnan(x[i]))
            return NAN;
        if (x[i] != x[from])
            flat = 0;
    }
    if (flat)
        return NAN;
    double sum = 0.0;
    for (int64_t i = from; i <= t; i++)
        sum += x[i];
    double m = sum / (double)w;
    double ss = 0.0;
    for (int64_t i = from; i <= t; i++)
        ss += (x[i] - m) * (x[i] - m);
    double var = ss / (double)w;
    if (var == 0.0)
        return NAN;
    return (x[t] - m) / sqrt(var);
}

/* How far a rolling z (sebt_k_zscore) may be trusted from a threshold: it
 * is within ~1e-9 (absolute, and relative to |z|) of the reference's bits
 * (fast_cpu/README.md says why), so where it is below thr - margin the
 * reference's is below thr too. Three orders of magnitude to spare. */
#define SEBT_K_Z_MARGIN 0x1p-20
SEBT_HD static inline double sebt_k_z_prefilter(double thr)
{
    return thr - SEBT_K_Z_MARGIN * (fabs(thr) > 1.0 ? fabs(thr) : 1.0);
}

/* sum + comp holds a running sum to about twice working precision, so a
 * mean slid through many bars is as good as one summed afresh (exact when
 * the values and their sum are integers below 2^53). */
SEBT_HD static inline void sebt_k_neumaier_add(double *sum, double *comp, double x)
{
    double t = *sum + x;
    if (fabs(*sum) >= fabs(x))
        *comp += (*sum - t) + x;
    else
        *comp += (x - t) + *sum;
    *sum = t;
}

/* The reference's two-pass mean and sum of squared deviations over
 * x[from .. from+w), plus the window's sum around that mean (compensated),
 * from which the sliding update starts. */
SEBT_HD static inline void sebt_k_window_moments(const double *x, int64_t from, int32_t w,
                                                 double *sum_out, double *mean, double *m2,
                                                 double *dev_sum, double *dev_comp)
{
    double sum = 0.0;
    for (int64_t i = from; i < from + w; i++)
        sum += x[i];
    double m = sum / (double)w;
    double ss = 0.0, ds = 0.0, dc = 0.0;
    for (int64_t i = from; i < from + w; i++) {
        ss += (x[i] - m) * (x[i] - m);
        sebt_k_neumaier_add(&ds, &dc, x[i] - m);
    }
    *sum_out = sum;
    *mean = m;
    *m2 = ss;
    *dev_sum = ds;
    *dev_comp = dc;
}

/* Below this share of the largest sum of squares seen since the last exact
 * pass, a sliding update has cancelled too many digits: recompute. */
#define SEBT_K_Z_CANCEL 0x1p-8
/* sd < |mean| * w * this is near-flat: computed exactly (see below). */
#define SEBT_K_Z_ILL 0x1p-22

/* Z(x, w) over a whole column, O(1) per bar amortised.
 *
 * NaN and flat windows are decided exactly, by counting: a window is NaN
 * while it holds a NaN (count of NaN in the window), and flat when the run
 * of equal values ending at t is w long.
 *
 * Otherwise z = (x[t] - m) / sqrt(M2/w) as the reference writes it, with
 *  - m = (compensated window sum)/w: the reference's own rounding of the
 *    mean whenever its naive sum is exact (integer volumes), and within an
 *    ulp or so of it otherwise;
 *  - M2 slid with the update for replacing x_old by x_new, done around a
 *    pivot K (the mean at the last exact pass), y = x - K:
 *        M2' = M2 + (y_new - y_old) * ((y_new - my') + (y_old - my)),
 *    my = mean of y from its compensated sum. Raw sums of squares are never
 *    formed (no cancellation at volumes of 1e12), and working around K keeps
 *    the deviations' digits when the window sits far from zero (1e9 + small).
 * Rounding still drifts, so the exact two-pass sums (the reference's, bit
 * for bit) are redone every w bars, whenever the window turns clean after a
 * NaN or a flat stretch, and whenever M2 falls below SEBT_K_Z_CANCEL of its
 * largest value since the last pass (a spike just left the window). Each
 * exact pass costs O(w) and comes at most once per w bars except after such
 * drops: O(1) per bar amortised on any series not built to defeat it.
 * A near-flat window (sd < |mean| * w * 2^-22) is also computed exactly:
 * there z depends on the last bits of the mean (the reference's own z is
 * off from the true one by ~ ulp(mean)/sd), so only the same sums in the
 * same order agree with it. Real data almost never has such windows; a
 * series made of them costs O(w) per bar. */
SEBT_HD static inline void sebt_k_zscore(const double *x, int64_t n, int32_t w, double *out)
{
    double dw = (double)w, inv_w = 1.0 / dw;   /* a pre-filter: a product is as good as a quotient */
    int64_t nan_count = 0, run = 0, since = 0;
    int fresh = 0;                      /* the state describes x[t-w .. t-1] */
    double sum = 0.0, comp = 0.0;       /* window sum of x, compensated */
    double pivot = 0.0, ysum = 0.0, ycomp = 0.0, m2 = 0.0, peak = 0.0;
    double mean = 0.0;
    for (int64_t t = 0; t < n; t++) {
        double xt = x[t];
        if (isnan(xt)) {
            nan_count++;
            run = 0;
        } else if (t > 0 && xt == x[t - 1]) {
            run++;
        } else {
            run = 1;
        }
        if (t >= w && isnan(x[t - w]))
            nan_count--;
        if (t + 1 < (int64_t)w || nan_count > 0 || run >= (int64_t)w) {
            out[t] = NAN;
            fresh = 0;
            continue;
        }
        int exact = !fresh || since >= (int64_t)w;
        if (!exact) {
            double xo = x[t - w];
            sebt_k_neumaier_add(&sum, &comp, xt);
            sebt_k_neumaier_add(&sum, &comp, -xo);
            mean = (sum + comp) * inv_w;
            double yt = xt - pivot, yo = xo - pivot;
            double my = (ysum + ycomp) * inv_w;
            sebt_k_neumaier_add(&ysum, &ycomp, yt);
            sebt_k_neumaier_add(&ysum, &ycomp, -yo);
            double my_new = (ysum + ycomp) * inv_w;
            m2 += (yt - yo) * ((yt - my_new) + (yo - my));
            since++;
            if (m2 > peak)
                peak = m2;
            /* A near-flat window (sd tiny against |mean|) makes z hang on
             * the last bits of the mean, so only the reference's own sums
             * agree with it there: take them. */
            double scale = fabs(mean) * dw * SEBT_K_Z_ILL;
            exact = !(m2 > peak * SEBT_K_Z_CANCEL) || m2 * inv_w < scale * scale;
        }
        if (exact) {
            sebt_k_window_moments(x, t + 1 - w, w, &sum, &mean, &m2, &ysum, &ycomp);
            comp = 0.0;
            pivot = mean;
            peak = m2;
            since = 0;
            fresh = 1;
        }
        double var = m2 * inv_w;
        out[t] = var == 0.0 ? NAN : (xt - mean) / sqrt(var);
    }
}

#endif
