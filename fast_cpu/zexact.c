/* Z(x, w) with the reference's bits (SPEC §3), many bars side by side.
 *
 * Each bar's window is summed oldest first, then its squared deviations
 * oldest first, exactly as the reference writes it; what changes is only
 * that the inner loop runs across bars (each lane its own bar, its own
 * accumulator), so the compiler vectorises it without reordering any sum. */
#include <math.h>
#include <stdlib.h>

#include "fast_cpu_internal.h"

#define Z_BLOCK 256

/* Bars whose z is NaN for a reason other than the variance: before the
 * window fills, a NaN in the window, a flat window (all values equal).
 * Counted in one pass, as the reference decides them: exactly. */
static void z_undefined(const double *x, size_t n, int32_t w, uint8_t *undef)
{
    size_t ws = (size_t)w, nan_count = 0, run = 0;
    for (size_t t = 0; t < n; t++) {
        if (isnan(x[t])) {
            nan_count++;
            run = 0;
        } else if (t > 0 && x[t] == x[t - 1]) {
            run++;
        } else {
            run = 1;
        }
        if (t >= ws && isnan(x[t - ws]))
            nan_count--;
        undef[t] = t + 1 < ws || nan_count > 0 || run >= ws;
    }
}

void fast_zscore_exact(const double *x, size_t n, int32_t w, double *out)
{
    size_t ws = (size_t)w;
    uint8_t *undef = malloc(n ? n : 1);
    if (!undef) {
        /* No scratch: the reference's own per-bar form, same bits. */
        for (size_t t = 0; t < n; t++)
            out[t] = sebt_k_zscore_at(x, (int64_t)t, w);
        return;
    }
    z_undefined(x, n, w, undef);
    double acc[Z_BLOCK], mean[Z_BLOCK];
    size_t t = ws - 1 < n ? ws - 1 : n;
    for (size_t i = 0; i < t; i++)
        out[i] = NAN;
    while (t < n) {
        size_t len = n - t < Z_BLOCK ? n - t : Z_BLOCK;
        const double *base = x + (t + 1 - ws);   /* window start of bar t */
        fast_window_sums(base, ws, len, acc);
        for (size_t j = 0; j < len; j++) {
            mean[j] = acc[j] / (double)w;
            acc[j] = 0.0;
        }
        for (size_t i = 0; i < ws; i++) {
            const double *row = base + i;
            for (size_t j = 0; j < len; j++) {
                double d = row[j] - mean[j];
                acc[j] += d * d;
            }
        }
        for (size_t j = 0; j < len; j++) {
            double var = acc[j] / (double)w;
            out[t + j] = undef[t + j] || var == 0.0 ? NAN : (x[t + j] - mean[j]) / sqrt(var);
        }
        t += len;
    }
    free(undef);
}

/* The reference's z at each of bars[0 .. count), whose windows the caller
 * knows are full, free of NaN and not flat (a rolling z that is not NaN
 * says so: those cases are decided by counting). Eight bars at a time,
 * each with its own accumulator: eight independent chains of additions
 * keep the FPU busy where one window alone would wait on each add. */
#define Z_LANES 8
void fast_zscore_exact_at(const double *x, int32_t w, const int32_t *bars, size_t count, double *out)
{
    size_t ws = (size_t)w;
    for (size_t g = 0; g < count; g += Z_LANES) {
        size_t m = count - g < Z_LANES ? count - g : Z_LANES;
        const double *base[Z_LANES];
        for (size_t j = 0; j < Z_LANES; j++)
            base[j] = x + ((size_t)bars[g + (j < m ? j : 0)] + 1 - ws);
        double s[Z_LANES] = { 0 }, mu[Z_LANES], ss[Z_LANES] = { 0 };
        for (size_t i = 0; i < ws; i++)
            for (size_t j = 0; j < Z_LANES; j++)
                s[j] += base[j][i];
        for (size_t j = 0; j < Z_LANES; j++)
            mu[j] = s[j] / (double)w;
        for (size_t i = 0; i < ws; i++)
            for (size_t j = 0; j < Z_LANES; j++) {
                double d = base[j][i] - mu[j];
                ss[j] += d * d;
            }
        for (size_t j = 0; j < m; j++) {
            double var = ss[j] / (double)w;
            out[g + j] = var == 0.0 ? NAN : (base[j][ws - 1] - mu[j]) / sqrt(var);
        }
    }
}

#define RSI_BLOCK 256

/* RSI(w) for every bar, as sebt_k_rsi_at gives it: each bar's gains and
 * losses summed oldest first from 0.0 (fast_window_sums keeps that order
 * per lane), so the bits are the reference's while a block of bars is
 * summed side by side, at the cost of ATR's column rather than one
 * function call and one window walk a bar. */
void fast_filter_column_rsi(const sebt_series *s, int32_t w, double *out)
{
    size_t n = s->n, ws = (size_t)w;
    double *gain = malloc(2 * (n ? n : 1) * sizeof(double));
    if (!gain) {
        /* No scratch: the per-bar form, same bits. */
        sebt_k_bars bars = sebt_k_bars_of(s);
        for (size_t t = 0; t < n; t++)
            out[t] = sebt_k_filter_rsi(&bars, (int64_t)t, w);
        return;
    }
    double *loss = gain + (n ? n : 1);
    for (size_t t = 0; t < n; t++)
        sebt_k_rsi_change_at(s->close, (int64_t)t, &gain[t], &loss[t]);
    size_t t = ws - 1 < n ? ws - 1 : n;
    for (size_t i = 0; i < t; i++)
        out[i] = NAN;
    double g[RSI_BLOCK], l[RSI_BLOCK];
    while (t < n) {
        size_t len = n - t < RSI_BLOCK ? n - t : RSI_BLOCK;
        size_t from = t + 1 - ws;   /* window start of bar t */
        fast_window_sums(gain + from, ws, len, g);
        fast_window_sums(loss + from, ws, len, l);
        for (size_t j = 0; j < len; j++)
            out[t + j] = sebt_k_rsi_from_sums(g[j], l[j], w);
        t += len;
    }
    free(gain);
}
