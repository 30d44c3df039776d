/* Is a sweep's best combo a fluke? Two measures of backtest overfitting
 * (core/overfit.c; definitions, formulas and NaN rules in docs/formats.md,
 * "Overfitting"):
 *
 * - the deflated Sharpe ratio (Bailey and López de Prado, 2014): the
 *   probability that the best combo's true per-trade Sharpe exceeds the
 *   best Sharpe that N trials of pure noise would be expected to show;
 * - the probability of backtest overfitting by combinatorially symmetric
 *   cross-validation (Bailey, Borwein, López de Prado and Zhu, 2015): the
 *   bars cut into S blocks, every half of them taken in turn as in-sample,
 *   how often the in-sample best lands in the lower half out of sample.
 *
 * Every Sharpe here is SPEC §7's kind: per trade, over the trades' R. */
#ifndef SEBT_OVERFIT_H
#define SEBT_OVERFIT_H

#include <stddef.h>
#include <stdint.h>

#include "sebt/backend.h"
#include "sebt/grid.h"
#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the overfit record (docs/formats.md). */
#define SEBT_OVERFIT_VERSION 1
/* Blocks unless told otherwise, and the most: C(24,12) = 2,704,156 splits. */
#define SEBT_OVERFIT_BLOCKS 16
#define SEBT_OVERFIT_MAX_BLOCKS 24

/* Φ, the standard normal distribution function: 0.5 * erfc(-x / sqrt 2). */
double sebt_norm_cdf(double x);
/* Φ⁻¹(p) by Wichura's AS241 (PPND16, about 1e-16 relative): -inf at 0,
 * +inf at 1, NaN outside [0, 1] or for NaN. */
double sebt_norm_ppf(double p);

/* The expected maximum of n_trials Sharpe ratios drawn with variance
 * var_sr around 0: sqrt(var_sr) * ((1 - g) Φ⁻¹(1 - 1/N) + g Φ⁻¹(1 - 1/(N e))),
 * g the Euler-Mascheroni constant. 0 when n_trials < 2 (nothing was
 * selected); NaN when var_sr is negative or not finite. */
double sebt_expected_max_sharpe(uint64_t n_trials, double var_sr);

/* The probabilistic Sharpe ratio of a Sharpe sr measured over t returns
 * of skewness skew and kurtosis kurt (not excess: 3 for a normal), against
 * the benchmark sr0: Φ((sr - sr0) sqrt(t - 1) / sqrt(1 - skew sr + (kurt - 1)/4 sr²)).
 * NaN when t < 2, an input is NaN or the root's argument is not > 0. */
double sebt_probabilistic_sharpe(double sr, double sr0, uint64_t t, double skew, double kurt);

typedef struct {
    uint64_t n_trials;     /* N: the combos tried */
    double var_sr;         /* V[SR]: the trials' per-trade Sharpe variance */
    double sr;             /* the best's per-trade Sharpe */
    double skew, kurt;     /* of the best's trade R (population moments) */
    uint64_t t;            /* T: the best's trades */
    double sr0;            /* sebt_expected_max_sharpe(N, V[SR]) */
    double dsr;            /* sebt_probabilistic_sharpe(sr, sr0, T, skew, kurt) */
} sebt_dsr;

/* Fills sr0 and dsr of d from its inputs. */
void sebt_dsr_compute(sebt_dsr *d);

/* Skewness and kurtosis (population: m3/m2^1.5, m4/m2²) of x[0..n); NaN
 * both when n < 2 or m2 is 0. */
void sebt_moments(const double *x, size_t n, double *skew, double *kurt);

/* ---- the CSCV statistics matrix ----------------------------------------------
 * For each combo and block b (0 <= b < S): the trades whose exit bar lies in
 * the block, their count and the sums of their R and of R², added in trade
 * order. Block b holds bars [floor(b N / S), floor((b+1) N / S)) of the N
 * bars of the series. The row of combo i starts at 3 S i: count, sum,
 * sum of squares for block 0, then block 1, ... */
#define SEBT_OVERFIT_STATS 3

/* The block of bar t of a series of n_bars bars cut into s blocks. */
int sebt_overfit_block(size_t t, size_t n_bars, int s);
/* Adds result r's trades (run with its trades) to row (3 s doubles, zeroed
 * by the caller before the first). */
void sebt_overfit_add_trades(double *row, int s, size_t n_bars, const sebt_result *r);

typedef struct {
    int blocks;            /* S */
    size_t n_combos;
    size_t n_splits;       /* C(S, S/2) */
    size_t n_counted;      /* splits with an in-sample best (some in-sample Sharpe defined) */
    double pbo;            /* the share of counted splits with logit <= 0; NaN when none */
    /* The performance degradation: least squares of the in-sample best's
     * out-of-sample Sharpe on its in-sample Sharpe over the splits where
     * both are defined (n_fit of them); NaN when fewer than 2 or no spread. */
    double slope, intercept;
    size_t n_fit;
    double prob_oos_loss;  /* share of the n_fit splits whose best's out-of-sample Sharpe < 0 */
    double logit_median;   /* of the counted splits' logits */
    /* Per split (n_splits each, in the order of the splits: the in-sample
     * blocks as a bit mask, increasing): the mask, the in-sample best
     * (SIZE_MAX when none), its in-sample and out-of-sample Sharpe, its
     * relative out-of-sample rank ω and logit ln(ω/(1-ω)) (NaN when none). */
    uint32_t *mask;
    size_t *best;
    double *is_sharpe, *oos_sharpe, *omega, *logit;
} sebt_pbo;

/* The Sharpe of the trades in a set of blocks from their sums (count n,
 * sum s, sum of squares q): with d = n*q - s*s, s * sqrt((n-1) / (n*d)),
 * the mean over the sample deviation; NaN when n < 2 or d <= 0. */
double sebt_overfit_sharpe(double n, double s, double q);

/* PBO over stats (n_combos rows of 3 s doubles, as above), s even, 2 to
 * SEBT_OVERFIT_MAX_BLOCKS, n_combos >= 2. threads: 0 every core. Errors:
 * SEBT_ERR_USAGE (s, n_combos, or a count that is not a whole number >= 0),
 * SEBT_ERR_NOMEM. Free with sebt_pbo_free. */
/* Whether PBO can be taken over n_combos combos in s blocks: SEBT_OK, or
 * SEBT_ERR_USAGE naming what is wrong. */
sebt_status sebt_pbo_check(int s, size_t n_combos, sebt_error *err);
sebt_status sebt_pbo_compute(const double *stats, size_t n_combos, int s, int threads, sebt_pbo *out,
                             sebt_error *err);
void sebt_pbo_free(sebt_pbo *p);

/* ---- a sweep's overfitting, in one pass over its combos ---------------------- */

typedef struct {
    int version;           /* SEBT_OVERFIT_VERSION */
    size_t best;           /* the combo with the highest per-trade Sharpe (ties: lowest index) */
    size_t with_sharpe;    /* combos with >= 2 trades: those V[SR] is taken over */
    sebt_dsr dsr;
    sebt_pbo pbo;
    double seconds;        /* the pass's wall time: the trades' run and PBO */
    double pbo_seconds;    /* of which PBO's own */
} sebt_overfit;

/* Runs the n_combos combos (a grid, or combos when grid is NULL) on b over
 * s with their trades, a window at a time, and measures DSR of the best
 * and PBO over blocks blocks (0: SEBT_OVERFIT_BLOCKS). threads: 0 the
 * backend's default. Errors: those of sebt_sweep_run and sebt_pbo_compute.
 * Free with sebt_overfit_free. */
sebt_status sebt_overfit_sweep(const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                               const sebt_params *combos, size_t n_combos, int blocks, int threads,
                               sebt_overfit *out, sebt_error *err);
void sebt_overfit_free(sebt_overfit *o);

/* What a sweep on the trade path gathers for the same measures, so that
 * no second run is needed (sebt_sweep_opts.overfit): the block statistics
 * (n_combos rows of 3 blocks doubles, zeroed by the caller; the driver
 * adds each combo's trades, as sebt_overfit_add_trades) and each combo's
 * SPEC §7 trade count and Sharpe. */
/* n_combos rows of 3 blocks zeros for sebt_overfit_gather.stats (free
 * with free), every page written before the sweep adds to it; NULL when
 * out of memory. */
double *sebt_overfit_stats_new(size_t n_combos, int blocks);
typedef struct sebt_overfit_gather {
    int blocks;            /* S: even, 2 to SEBT_OVERFIT_MAX_BLOCKS */
    double *stats;
    int64_t *n;
    double *sharpe;
} sebt_overfit_gather;

/* sebt_overfit_sweep's record from what a sweep of the same combos over s
 * on b gathered in g: the best combo alone is run again for its trades
 * (their skew and kurtosis; its trade count and Sharpe must be the
 * sweep's, else SEBT_ERR_INTERNAL). The same bits as sebt_overfit_sweep.
 * Free with sebt_overfit_free. */
sebt_status sebt_overfit_gathered(const sebt_backend *b, const sebt_series *s, const sebt_grid *grid,
                                  const sebt_params *combos, size_t n_combos, const sebt_overfit_gather *g,
                                  int threads, sebt_overfit *out, sebt_error *err);

#ifdef __cplusplus
}
#endif

#endif
