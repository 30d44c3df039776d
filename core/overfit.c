/* The deflated Sharpe ratio and the probability of backtest overfitting
 * (sebt/overfit.h; docs/formats.md, "Overfitting", gives every formula and
 * the order of every sum, which a literal implementation (core/tests/
 * overfit_literal.py) follows to the bit). */
#include "sebt/overfit.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sebt/sebt.h"
#include "overfit_internal.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

double sebt_norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* Wichura, M. J. (1988), Algorithm AS241: The Percentage Points of the
 * Normal Distribution, Applied Statistics 37(3), 477-484: PPND16, its
 * three rational approximations evaluated in Horner form as printed. */
double sebt_norm_ppf(double p)
{
    if (isnan(p) || p < 0.0 || p > 1.0)
        return NAN;
    if (p == 0.0)
        return -INFINITY;
    if (p == 1.0)
        return INFINITY;
    double q = p - 0.5;
    if (fabs(q) <= 0.425) {
        double r = 0.180625 - q * q;
        double num = (((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r +
                           6.7265770927008700853e+4) * r + 4.5921953931549871457e+4) * r +
                         1.3731693765509461125e+4) * r + 1.9715909503065514427e+3) * r +
                       1.3314166789178437745e+2) * r + 3.3871328727963666080e+0) * q;
        double den = (((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r +
                           3.9307895800092710610e+4) * r + 2.1213794301586595867e+4) * r +
                         5.3941960214247511077e+3) * r + 6.8718700749205790830e+2) * r +
                       4.2313330701600911252e+1) * r + 1.0);
        return num / den;
    }
    double r = q <= 0.0 ? p : 1.0 - p;
    r = sqrt(-log(r));
    double num, den;
    if (r <= 5.0) {
        r = r - 1.6;
        num = (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r +
                    2.41780725177450611770e-1) * r + 1.27045825245236838258e+0) * r +
                  3.64784832476320460504e+0) * r + 5.76949722146069140550e+0) * r +
                4.63033784615654529590e+0) * r + 1.42343711074968357734e+0);
        den = (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r +
                    1.51986665636164571966e-2) * r + 1.48103976427480074590e-1) * r +
                  6.89767334985100004550e-1) * r + 1.67638483018380384940e+0) * r +
                2.05319162663775882187e+0) * r + 1.0);
    } else {
        r = r - 5.0;
        num = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r +
                    1.24266094738807843860e-3) * r + 2.65321895265761230930e-2) * r +
                  2.96560571828504891230e-1) * r + 1.78482653991729133580e+0) * r +
                5.46378491116411436990e+0) * r + 6.65790464350110377720e+0);
        den = (((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r +
                    1.84631831751005468180e-5) * r + 7.86869131145613259100e-4) * r +
                  1.48753612908506148525e-2) * r + 1.36929880922735805310e-1) * r +
                5.99832206555887937690e-1) * r + 1.0);
    }
    double x = num / den;
    return q < 0.0 ? -x : x;
}

#define EULER_GAMMA 0.57721566490153286061

double sebt_expected_max_sharpe(uint64_t n_trials, double var_sr)
{
    if (!(var_sr >= 0.0) || !isfinite(var_sr))
        return NAN;
    if (n_trials < 2)
        return 0.0;
    double n = (double)n_trials;
    double z1 = sebt_norm_ppf(1.0 - 1.0 / n);
    double z2 = sebt_norm_ppf(1.0 - 1.0 / (n * M_E));
    return sqrt(var_sr) * ((1.0 - EULER_GAMMA) * z1 + EULER_GAMMA * z2);
}

double sebt_probabilistic_sharpe(double sr, double sr0, uint64_t t, double skew, double kurt)
{
    if (t < 2 || isnan(sr) || isnan(sr0) || isnan(skew) || isnan(kurt))
        return NAN;
    double d = 1.0 - skew * sr + (kurt - 1.0) / 4.0 * sr * sr;
    if (!(d > 0.0) || !isfinite(d))
        return NAN;
    return sebt_norm_cdf((sr - sr0) * sqrt((double)(t - 1)) / sqrt(d));
}

void sebt_dsr_compute(sebt_dsr *d)
{
    d->sr0 = sebt_expected_max_sharpe(d->n_trials, d->var_sr);
    d->dsr = sebt_probabilistic_sharpe(d->sr, d->sr0, d->t, d->skew, d->kurt);
}

void sebt_moments(const double *x, size_t n, double *skew, double *kurt)
{
    *skew = *kurt = NAN;
    if (n < 2)
        return;
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    double m = s / (double)n, m2 = 0.0, m3 = 0.0, m4 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - m, d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    m2 /= (double)n;
    m3 /= (double)n;
    m4 /= (double)n;
    if (!(m2 > 0.0))
        return;
    *skew = m3 / (m2 * sqrt(m2));
    *kurt = m4 / (m2 * m2);
}

/* ---- the statistics matrix -------------------------------------------------------- */

int sebt_overfit_block(size_t t, size_t n_bars, int s)
{
    if (n_bars == 0 || t >= n_bars)
        return s - 1;
    return (int)(t * (size_t)s / n_bars);
}

void sebt_overfit_add_trades(double *row, int s, size_t n_bars, const sebt_result *r)
{
    for (size_t k = 0; r->trades && k < r->n_trades; k++) {
        const sebt_trade *t = &r->trades[k];
        double *c = row + SEBT_OVERFIT_STATS * sebt_overfit_block((size_t)t->exit_index, n_bars, s);
        c[0] += 1.0;
        c[1] += t->r;
        c[2] += t->r * t->r;
    }
}

/* One square root and one division, no branch: the chunks' loops below
 * compute it for many combos at once. */
static inline double sharpe_of_sums(double n, double s, double q)
{
    double d = n * q - s * s;
    double v = s * sqrt((n - 1.0) / (n * d));
    return n >= 2.0 && d > 0.0 ? v : NAN;
}

double sebt_overfit_sharpe(double n, double s, double q)
{
    return sharpe_of_sums(n, s, q);
}

/* ---- PBO -------------------------------------------------------------------------- */

/* A set of blocks' sums: the low half's blocks (0 .. S/2-1) added in
 * increasing order from 0, the high half's likewise, then low + high. Each
 * thread keeps, for a chunk of combos, every subset's sums of each half
 * rounded to float (one add per subset from the subset without its highest
 * block: the same order), combos side by side, for the float filter; the
 * double filter and the exact values add one set's sums again from the
 * chunk's rows (mask_sums), the same bits. */
#define SEBT_PBO_MAX_THREADS 256
#define BUILD_LANES 16
#define RECOUNT_TABLE_MIN 128

/* The threads' start: each builds every chunk's rows and float table of
 * its own and walks them for its splits, with nothing shared to wait for
 * (measured a tenth faster than a table built by all and met at, with
 * second-level caches of 1 MiB a core: the walk reads what its core wrote). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    int gate;              /* 0 until every thread started (1) or one could not be (-1) */
} pbo_crew;

/* One step of the AVX-512 walk (walk_groups): split a's mask, its rows'
 * offsets in the float table (subset times the row's stride), and the thresholds of
 * pass 1 (split a) and pass 2 (split n-1-a), NaN for a pass not walked. */
typedef struct {
    float t2a, t2b, ata, atb;
    uint32_t lo, hi, a;
    uint32_t pass;   /* bit 0: pass 1 walked; bit 1: pass 2 */
} group_step;

/* A step's lanes the float filter left undecided in pass 1 and pass 2. */
typedef struct {
    uint32_t e;
    uint16_t und_a, und_b;
} group_event;

typedef struct pbo_job {
    const double *stats;
    const size_t *order;     /* the walk's order: the combo at each position */
    int s, h;
    size_t n_splits, n_combos;
    const uint32_t *masks;
    size_t chunk;
    size_t fstride;          /* the float table's row: chunk floats and a line or more, an odd number of lines */
    void (*pair_filter)(const struct pbo_job *j, uint32_t mask, size_t nc, float t2a, float t2b, size_t *und_a,
                        size_t *lo_b, size_t *und_b);
    size_t pair_lo, pair_hi; /* the job's splits: i and n_splits-1-i for i in pair_lo .. pair_hi */
    sebt_pbo *out;           /* best, is_sharpe, oos_sharpe: written for the job's splits only */
    /* n_splits each, shared, written for the job's splits only: */
    double *t2, *ot2;        /* pass 1's and pass 2's thresholds t|t| (the best's Sharpe in and out of sample) */
    float *ft2, *oft2;       /* as floats for the float filter (ft2_of) */
    size_t *below, *equal;   /* pass 2's counts */
    size_t *recount;         /* the chunks 0 .. recount[sp] are counted after the walk */
    bool lanes;              /* pair_filter writes lane_a and lane_b */
    uint16_t *lane_a, *lane_b; /* (chunk + 15) / 16 each: the combos it left undecided, 16 to a mask */
    group_step *steps;        /* the job's masks in walk_groups's order */
    uint32_t *step_of;        /* each of the job's masks' step, by job_local */
    uint32_t *runs;           /* n_runs + 1: where each run of steps with one high half starts */
    size_t n_runs;
    group_event *events;      /* a run's undecided steps (at most 2^h) */
    size_t nc;                /* the chunk being walked: its combos */
    /* The splits given a best since walk_groups last set their steps (each
     * once: dirty_flag, by job_local), as many as the job's masks; NULL
     * where walk_groups is not run. */
    uint32_t *dirty;
    uint8_t *dirty_flag;
    size_t n_dirty;
    double *scratch;  /* 2^h * BUILD_LANES: one figure's subset sums of one half, for BUILD_LANES combos */
    double *sums;     /* 6 * chunk: one set of blocks' n, s, q of the low half, then the high half (mask_sums) */
    double *v;     /* chunk: one split's Sharpe of each combo of the chunk */
    double *rows;  /* 3 * s * chunk: the chunk's rows, figure by figure */
    float *ftab;   /* 6 * 2^h rows of fstride: n, s, q of every subset of the low half, then of the high half,
                    * rounded to float, for chunk combos; then their margins (ftab_margins) */
    pbo_crew *crew;
} pbo_job;

/* Split a's place among the job's (a among pair_lo .. pair_hi, or its
 * complement among n-pair_hi .. n-pair_lo). */
static inline size_t job_local(const pbo_job *j, size_t a)
{
    return a < j->n_splits / 2 ? a - j->pair_lo : (j->pair_hi - j->pair_lo) + a - (j->n_splits - j->pair_hi);
}

/* Counts up to 2^23 (their sum exact in float), sums of R up to 2^30 in
 * magnitude, sums of squares from 0 to 2^30 (lo .. lim); anything outside
 * becomes NaN, which the float filter leaves to the double one. A negative
 * sum of squares (no trades give one; the call takes any) would let a
 * split's two halves cancel, their float roundings then beyond the
 * filter's margin, which bounds them by the halves' sum. NaN set by its
 * bits: a select on a comparison is left scalar. */
static inline __attribute__((always_inline)) void float_row(const double *restrict x, float *restrict y, size_t nc,
                                                            double lo, double lim)
{
    for (size_t c = 0; c < nc; c++) {
        float f = (float)x[c];
        uint32_t b, nan = (uint32_t)-(int32_t)!((x[c] >= lo) & (x[c] <= lim)) & 0x7fc00000u;
        memcpy(&b, &f, sizeof b);
        b |= nan;
        memcpy(&y[c], &b, sizeof b);
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* build_part's float table for the BUILD_LANES (16) combos from cb, in
 * AVX-512: the same double sums in the same order, each rounded to float
 * as float_row rounds it, and NaN for a figure beyond its bound (a NaN of
 * other bits than float_row's: NaN decides nothing either way), stored
 * from the registers, where the compiler's code read each line back. */
__attribute__((target("avx512f"))) static void float_table_avx512(pbo_job *j, size_t cb)
{
    size_t sub = (size_t)1 << j->h, C = j->chunk, F = j->fstride;
    const __m512 nanv = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));
    for (int half = 0; half < 2; half++)
        for (int k = 0; k < 3; k++) {
            double *t = j->scratch;
            float *ft = j->ftab + (size_t)(3 * half + k) * sub * F + cb;
            const __m512d lim = _mm512_set1_pd(k == 0 ? 0x1p23 : 0x1p30), lo = _mm512_set1_pd(k == 1 ? -0x1p30 : 0.0);
            _mm512_storeu_pd(t, _mm512_setzero_pd());
            _mm512_storeu_pd(t + 8, _mm512_setzero_pd());
            _mm512_storeu_ps(ft, _mm512_setzero_ps());
            for (size_t m = 1; m < sub; m++) {
                int hb = 31 - __builtin_clz((unsigned)m);
                const double *src = t + (m ^ ((size_t)1 << hb)) * BUILD_LANES;
                const double *add = j->rows + (size_t)(3 * (half * j->h + hb) + k) * C + cb;
                __m512d x0 = _mm512_add_pd(_mm512_loadu_pd(src), _mm512_loadu_pd(add));
                __m512d x1 = _mm512_add_pd(_mm512_loadu_pd(src + 8), _mm512_loadu_pd(add + 8));
                _mm512_storeu_pd(t + m * BUILD_LANES, x0);
                _mm512_storeu_pd(t + m * BUILD_LANES + 8, x1);
                __m512 f = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(x0))),
                                                               _mm256_castps_pd(_mm512_cvtpd_ps(x1)), 1));
                __mmask8 in0 = _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(x0, lo, _CMP_GE_OQ), x0, lim, _CMP_LE_OQ);
                __mmask8 in1 = _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(x1, lo, _CMP_GE_OQ), x1, lim, _CMP_LE_OQ);
                _mm512_storeu_ps(ft + m * F, _mm512_mask_mov_ps(nanv, _mm512_kunpackb(in1, in0), f));
            }
        }
}
#endif

/* Beside a chunk's float table: each combo's margin terms P and Q (chunk
 * floats each), then for each 16 combos whether they are surely valid in
 * every split (margins_avx512). */
static float *ftab_margins(const pbo_job *j)
{
    return j->ftab + 6 * ((size_t)1 << j->h) * j->fstride;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("avx512f"))) static void margins_avx512(pbo_job *j, size_t cb);
#endif

/* The chunk at position c0 (nc combos) turned into j->rows, and into
 * j->ftab where float_table, BUILD_LANES combos at a time. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void build_part(pbo_job *j, size_t c0, size_t nc,
                                                                                    bool float_table)
{
    size_t sub = (size_t)1 << j->h, C = j->chunk, F = j->fstride;
    for (size_t cb = 0; cb < nc; cb += BUILD_LANES) {
        size_t w = nc - cb < BUILD_LANES ? nc - cb : BUILD_LANES;
        /* The rows turned on their side first (block and figure, then
         * combo): the adds below then read along a line, not a row apart. */
        for (size_t c = cb; c < cb + w; c++)
            for (int x = 0; x < 3 * j->s; x++)
                j->rows[(size_t)x * C + c] = j->stats[j->order[c0 + c] * (size_t)(3 * j->s) + (size_t)x];
        /* The next chunk's rows, which lie anywhere in stats (the walk's
         * order), on their way into cache while this one is walked. */
        for (size_t c = cb; c < cb + w && c0 + C + c < j->n_combos; c++) {
            const char *row = (const char *)(j->stats + j->order[c0 + C + c] * (size_t)(3 * j->s));
            for (size_t x = 0; x < (size_t)(3 * j->s) * sizeof(double); x += 64)
                __builtin_prefetch(row + x);
            __builtin_prefetch(row + (size_t)(3 * j->s) * sizeof(double) - 1);
        }
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
        if (float_table && j->lanes && w == BUILD_LANES) {
            float_table_avx512(j, cb);
            margins_avx512(j, cb);
            continue;
        }
#endif
        if (float_table)
            ((uint8_t *)(ftab_margins(j) + 2 * j->chunk))[cb / BUILD_LANES] = 0;
        /* The double sums in a small scratch (in cache), each line rounded
         * to float as soon as it is added; only the float table is kept. */
        for (int half = 0; float_table && half < 2; half++)
            for (int k = 0; k < 3; k++) {
                double *t = j->scratch;
                float *ft = j->ftab + (size_t)(3 * half + k) * sub * F + cb;
                double lim = k == 0 ? 0x1p23 : 0x1p30, lo = k == 1 ? -lim : 0.0;
                for (size_t c = 0; c < w; c++)
                    t[c] = 0.0;
                float_row(t, ft, w, lo, lim);
                for (size_t m = 1; m < sub; m++) {
                    int hb = 31 - __builtin_clz((unsigned)m);
                    size_t prev = m ^ ((size_t)1 << hb);
                    double *restrict dst = t + m * BUILD_LANES;
                    const double *restrict src = t + prev * BUILD_LANES;
                    const double *restrict add = j->rows + (size_t)(3 * (half * j->h + hb) + k) * C + cb;
                    for (size_t c = 0; c < w; c++)
                        dst[c] = src[c] + add[c];
                    float_row(dst, ft + m * F, w, lo, lim);
                }
            }
    }
}

typedef struct {
    const double *an, *bn, *as, *bs, *aq, *bq;
} half_sums;

/* The double sums over blocks mask of each half for the chunk's combos,
 * straight from its rows: each half's blocks added in increasing order
 * from 0, as the float table's sums were before their rounding. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static half_sums mask_sums(const pbo_job *j,
                                                                                       uint32_t mask, size_t nc)
{
    size_t C = j->chunk;
    for (int half = 0; half < 2; half++)
        for (int k = 0; k < 3; k++) {
            double *restrict t = j->sums + (size_t)(3 * half + k) * C;
            for (size_t c = 0; c < nc; c++)
                t[c] = 0.0;
            for (int b = half * j->h; b < (half + 1) * j->h; b++)
                if (mask >> b & 1u) {
                    const double *restrict add = j->rows + (size_t)(3 * b + k) * C;
                    for (size_t c = 0; c < nc; c++)
                        t[c] += add[c];
                }
        }
    const double *t = j->sums;
    return (half_sums){ .an = t, .as = t + C, .aq = t + 2 * C, .bn = t + 3 * C, .bs = t + 4 * C, .bq = t + 5 * C };
}

/* v[c]: the Sharpe over blocks mask of each combo c0 + c of the chunk
 * (from its tables), c < nc. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void chunk_sharpe(const half_sums *h, size_t nc, double *restrict v)
{
    const double *restrict an = h->an, *restrict bn = h->bn, *restrict as = h->as, *restrict bs = h->bs;
    const double *restrict aq = h->aq, *restrict bq = h->bq;
    for (size_t c = 0; c < nc; c++)
        v[c] = sharpe_of_sums(an[c] + bn[c], as[c] + bs[c], aq[c] + bq[c]);
}

/* The largest number of v[0..n) (NaN passed over); -inf when none. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static double chunk_max(const double *restrict v,
                                                                                     size_t n)
{
    /* Eight running maxima side by side: a reduction the compiler puts in
     * vector registers without reordering anything that changes the result. */
    double m8[8] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    size_t c = 0;
    for (; c + 8 <= n; c += 8)
        for (int k = 0; k < 8; k++)
            m8[k] = v[c + k] > m8[k] ? v[c + k] : m8[k];
    double mx = -INFINITY;
    for (; c < n; c++)
        mx = v[c] > mx ? v[c] : mx;
    for (int k = 0; k < 8; k++)
        mx = m8[k] > mx ? m8[k] : mx;
    return mx;
}

/* How many of v[0..n) are below ob or NaN (*lo), and equal to it (*eq). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void chunk_count(const double *restrict v,
                                                                                    size_t n, double ob,
                                                                                    size_t *lo, size_t *eq)
{
    int64_t l = 0, e = 0;
    for (size_t c = 0; c < n; c++) {
        l += (v[c] < ob) | (v[c] != v[c]);
        e += v[c] == ob;
    }
    *lo += (size_t)l;
    *eq += (size_t)e;
}

/* ---- a filter before the exact value -------------------------------------------
 * Most combos of a split lie far from the value they are compared with (the
 * in-sample best so far; the best's out-of-sample Sharpe), and the
 * comparison alone needs no division or root: with d > 0 and n >= 2,
 * v > t exactly when v|v| > t|t|, that is when A = s|s|(n - 1) exceeds
 * B = t|t| n d. A and B as computed carry a few roundings each, and the
 * exact v (sharpe_of_sums: its n d, a division, a root, a product) about 6
 * more relative to them: a gap beyond FILTER_MARGIN (|A| + |B|), far above
 * 2^-50 of them, settles the comparison of the exact v with t; within it
 * (ties among them: a combo against itself), or where anything is not
 * finite, the exact v is computed and compared. FILTER_FLOOR keeps a gap
 * between numbers near underflow from settling anything. */
#define FILTER_MARGIN 0x1p-40
#define FILTER_FLOOR 1e-290

/* How many combos of the chunk the filter cannot show to have a Sharpe
 * over blocks mask at most t (t2 = t|t|, t finite). */
static inline __attribute__((always_inline)) size_t filter_above(const half_sums *h, size_t nc, double t2)
{
    const double *restrict an = h->an, *restrict bn = h->bn, *restrict as = h->as, *restrict bs = h->bs;
    const double *restrict aq = h->aq, *restrict bq = h->bq;
    int64_t k = 0;
    for (size_t c = 0; c < nc; c++) {
        double n = an[c] + bn[c], s = as[c] + bs[c], q = aq[c] + bq[c];
        double d = n * q - s * s;
        double A = s * fabs(s) * (n - 1.0), B = t2 * (n * d);
        double tol = FILTER_MARGIN * (fabs(A) + fabs(B)) + FILTER_FLOOR;
        k += (n >= 2.0) & (d > 0.0) & !(A - B < -tol);
    }
    return (size_t)k;
}

/* As filter_above, against the best's out-of-sample Sharpe t (finite):
 * *lo_out gains the combos surely below t (or NaN); returns how many the
 * filter leaves undecided (below, equal or above). */
static inline __attribute__((always_inline)) size_t filter_below(const half_sums *h, size_t nc, double t2,
                                                                  size_t *lo_out)
{
    const double *restrict an = h->an, *restrict bn = h->bn, *restrict as = h->as, *restrict bs = h->bs;
    const double *restrict aq = h->aq, *restrict bq = h->bq;
    int64_t k = 0, below = 0;
    for (size_t c = 0; c < nc; c++) {
        double n = an[c] + bn[c], s = as[c] + bs[c], q = aq[c] + bq[c];
        double d = n * q - s * s;
        double A = s * fabs(s) * (n - 1.0), B = t2 * (n * d);
        double tol = FILTER_MARGIN * (fabs(A) + fabs(B)) + FILTER_FLOOR, gap = A - B;
        int64_t surely_below = !((n >= 2.0) & (d > 0.0)) | (gap < -tol);
        below += surely_below;
        k += !surely_below & !(gap > tol);
    }
    *lo_out += (size_t)below;
    return (size_t)k;
}

/* A first filter in float, on the tables rounded to float (twice the
 * lanes, half the bytes read): the same comparison of A = s|s|(n - 1) with
 * B = t|t| n d, with a margin that covers float's roundings. With u = 2^-24,
 * Sm = |s_lo| + |s_hi| and Qm = q_lo + q_hi (of the rounded halves):
 * s is off by at most 3u Sm, q by 3u Qm (each half's rounding, the add),
 * so d = n q - s s by at most 13u (n Qm + Sm^2), A by 10u n Sm^2 and B by
 * 16u |t2| n (n Qm + Sm^2); the margin, 2^-16 M with
 * M = n (Sm^2 + |t2| (n Qm + Sm^2)), is 8x their sum, and far above the
 * double filter's 2^-40, so whatever it decides the double filter would
 * decide alike. d's sign is taken only beyond the same margin on d. The
 * inputs are bounded so that nothing overflows: counts to 2^23 (exact in
 * float, as their sum), sums to 2^30, sums of squares >= 0 (Qm bounds
 * their errors only so: float_row), |t2| from 10^-10 to 10^9 (ft2_of);
 * beyond, NaN, which decides nothing. FFILTER_FLOOR (2^-50) lies far
 * above what float's underflow can lose under those bounds (at most
 * 2^-66 in B), so a gap or d within it decides nothing either. */
#define FFILTER_MARGIN 0x1p-16f
#define FFILTER_FLOOR 0x1p-50f

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* Each combo's margin terms over every split at once, beside the float
 * table (ftab_margins): P = 2^-16 n Sm^2 + floor and Q = 2^-16 n (n Qm + Sm^2)
 * with n, Qm and Sm taken as their largest over any set of blocks (the
 * whole row's count, sum of squares and sum of |sums|, raised by 2^-20 for
 * their roundings), so that P + |t2| Q bounds 2^-16 M of every split (M
 * grows with each), and the float filter's error analysis holds with it.
 * And whether the 16 combos from cb are surely valid in every split: each
 * has n >= 2 and a d far above its margin there. With w_b = q_b - s_b^2/n_b
 * (a block's sum of squared deviations), d = n q - s^2 over a set of blocks
 * is n sum(w_b) plus n sum(s_b^2/n_b) - (sum s_b)^2 >= 0 (Cauchy-Schwarz),
 * so at least the smallest half-count times the sum of the S/2 smallest w_b; that
 * bound (w_b lowered by 2^-40 q_b for its own roundings) beyond 4 times the
 * largest d margin settles it. A figure beyond the float table's bounds
 * (counts 2^23, sums 2^30, sums of squares 0 .. 2^30) leaves the group to
 * the general filter. */
__attribute__((target("avx512f"))) static void margins_avx512(pbo_job *j, size_t cb)
{
    size_t C = j->chunk;
    int S = j->s, h = j->h;
    float *P = ftab_margins(j), *Q = P + C;
    uint8_t *fast = (uint8_t *)(Q + C);
    /* The 16 combos side by side, each loop over them left to the
     * compiler's vectors. */
    enum { L = BUILD_LANES };
    double nt[L], st[L], qt[L], nmin[L], wmin[L], nb[SEBT_OVERFIT_MAX_BLOCKS][L], wb[SEBT_OVERFIT_MAX_BLOCKS][L];
    int bad[L];
    for (int l = 0; l < L; l++) {
        nt[l] = st[l] = qt[l] = nmin[l] = wmin[l] = 0.0;
        bad[l] = 0;
    }
    for (int b = 0; b < S; b++) {
        const double *rn = j->rows + (size_t)(3 * b) * C + cb, *rs = rn + C, *rq = rs + C;
        for (int l = 0; l < L; l++) {
            double n = rn[l], sb = rs[l], q = rq[l];
            bad[l] |= !(q >= 0.0) | !(fabs(sb) <= 0x1p30);
            nt[l] += n;
            st[l] += fabs(sb);
            qt[l] += q;
            nb[b][l] = n;
            double w = n > 0.0 ? q - sb * sb / n - 0x1p-40 * q : 0.0;
            wb[b][l] = w > 0.0 ? w : 0.0;
        }
    }
    /* The h smallest of each: h passes of a selection by min and max. */
    for (int k = 0; k < h; k++) {
        for (int b = k + 1; b < S; b++)
            for (int l = 0; l < L; l++) {
                double x = nb[k][l], y = nb[b][l], u = wb[k][l], v = wb[b][l];
                nb[k][l] = y < x ? y : x;
                nb[b][l] = y < x ? x : y;
                wb[k][l] = v < u ? v : u;
                wb[b][l] = v < u ? u : v;
            }
        for (int l = 0; l < L; l++) {
            nmin[l] += nb[k][l];
            wmin[l] += wb[k][l];
        }
    }
    int all = 1;
    for (int l = 0; l < L; l++) {
        double sm = st[l] * (1.0 + 0x1p-20), qm = qt[l] * (1.0 + 0x1p-20);
        double sm2 = sm * sm, mq = nt[l] * qm + sm2;
        double p = (0x1p-16 * (nt[l] * sm2) + (double)FFILTER_FLOOR) * (1.0 + 0x1p-20);
        double q = 0x1p-16 * (nt[l] * mq) * (1.0 + 0x1p-20);
        double dtol = 0x1p-16 * mq + (double)FFILTER_FLOOR;
        all &= !bad[l] & (nt[l] <= 0x1p23) & (st[l] <= 0x1p30) & (qt[l] <= 0x1p30) & (nmin[l] >= 2.0) &
               (nmin[l] * wmin[l] > 4.0 * dtol);
        P[cb + (size_t)l] = (float)p;
        Q[cb + (size_t)l] = (float)q;
    }
    fast[cb / BUILD_LANES] = (uint8_t)all;
}
#endif

typedef struct {
    const float *an, *bn, *as, *bs, *aq, *bq;
} ftab_rows;

static inline __attribute__((always_inline)) ftab_rows frows(const pbo_job *j, uint32_t mask)
{
    size_t sub = (size_t)1 << j->h, F = j->fstride;
    size_t lo = mask & (sub - 1), hi = mask >> j->h;
    ftab_rows r;
    r.an = j->ftab + lo * F;
    r.bn = j->ftab + 3 * sub * F + hi * F;
    r.as = r.an + sub * F;
    r.bs = r.bn + sub * F;
    r.aq = r.as + sub * F;
    r.bq = r.bs + sub * F;
    return r;
}

/* The float filter over a chunk's Sharpe over blocks mask against two
 * thresholds t2 = t|t| (floats, finite and not tiny: ft2_of), pass 1's
 * t2a and pass 2's t2b: *und_a is how many combos it cannot show to have a
 * Sharpe at most t (neither surely without one nor surely below), *lo_b
 * gains those surely below t2b's t or surely without a Sharpe (NaN: below
 * in pass 2's count), and *und_b is how many it leaves undecided against
 * t2b. The margin above is gathered as 2^-16 n Sm^2 + floor and
 * 2^-16 n (n Qm + Sm^2) once per combo, then one multiply-add per
 * threshold: 2^-16 M + floor up to a few float roundings (a relative
 * 2^-21 at most), and 2^-16 M is 8x the errors it must cover, so every
 * decision stands. A NaN threshold decides nothing its caller reads. */
typedef void pair_filter_fn(const pbo_job *j, uint32_t mask, size_t nc, float t2a, float t2b, size_t *und_a,
                            size_t *lo_b, size_t *und_b);

#define PAIR_FILTER_ONE(T, ABS, LANE_TRUE)                                                               \
    {                                                                                                  \
        T sm = ABS(asc) + ABS(bsc), nq = n * q, mq = nq + sm * sm;                                     \
        T d = nq - s * s, dtol = FFILTER_MARGIN * mq + FFILTER_FLOOR;                                  \
        T A = s * ABS(s) * (n - 1.0f), nd = n * d;                                                     \
        T P = FFILTER_MARGIN * (n * (sm * sm)) + FFILTER_FLOOR, Q = FFILTER_MARGIN * (n * mq);         \
        T tola = P + ata * Q, tolb = P + atb * Q;                                                      \
        T ga = A - t2a * nd, gb = A - t2b * nd;                                                        \
        M valid = (n >= 2.0f) & (d > dtol);                                                            \
        M invalid = (n < 2.0f) | (d < -dtol);                                                          \
        M below_b = invalid | (valid & (gb < -tolb));                                                  \
        KA += LANE_TRUE(~(invalid | (valid & (ga < -tola))));                                          \
        LO += LANE_TRUE(below_b);                                                                      \
        KB += LANE_TRUE(~(below_b | (valid & (gb > tolb))));                                           \
    }

/* One combo at a time: a comparison is 0 or 1, its ~ -1 or -2. */
#define SCALAR_TRUE(x) ((x) & 1)
#define SCALAR_PAIR_LOOP                                                                                \
    for (; c < nc; c++) {                                                                              \
        typedef int32_t M;                                                                             \
        float asc = as[c], bsc = bs[c], aqc = aq[c], bqc = bq[c];                                      \
        float n = an[c] + bn[c], s = asc + bsc, q = aqc + bqc;                                         \
        int32_t KA = 0, KB = 0, LO = 0;                                                                \
        PAIR_FILTER_ONE(float, fabsf, SCALAR_TRUE)                                                     \
        ka += KA;                                                                                      \
        kb += KB;                                                                                      \
        lo += LO;                                                                                      \
    }

#define PAIR_FILTER_HEAD                                                                                \
    ftab_rows r = frows(j, mask);                                                                      \
    const float *restrict an = r.an, *restrict bn = r.bn, *restrict as = r.as, *restrict bs = r.bs;    \
    const float *restrict aq = r.aq, *restrict bq = r.bq;                                              \
    float ata = fabsf(t2a), atb = fabsf(t2b);                                                          \
    int32_t ka = 0, kb = 0, lo = 0;                                                                    \
    size_t c = 0;

#define PAIR_FILTER_TAIL                                                                                \
    *und_a = (size_t)ka;                                                                               \
    *lo_b += (size_t)lo;                                                                               \
    *und_b = (size_t)kb;

/* Several combos side by side in GCC's vector extension: the comparisons
 * stay lane masks (a true lane is -1), where a loop left to the compiler
 * moves each through a general register. Each width is written for its
 * own target (target_clones would lower the vectors for the baseline
 * first; a vector wider than the target's registers is lowered badly):
 * 16 lanes for AVX-512, 8 for AVX2, 4 (SSE2, NEON or plain C) otherwise;
 * picked at run time (pair_filter). */
#define VECTOR_TRUE(x) (-(x))
#define VECTOR_PAIR_FILTER(NAME, ATTR, LANES)                                                           \
    typedef float NAME##_vf __attribute__((vector_size(4 * LANES), aligned(4)));                       \
    typedef int32_t NAME##_vi __attribute__((vector_size(4 * LANES), aligned(4)));                     \
    ATTR static void NAME(const pbo_job *j, uint32_t mask, size_t nc, float t2a, float t2b, size_t *und_a, \
                          size_t *lo_b, size_t *und_b)                                                 \
    {                                                                                                  \
        typedef NAME##_vf V;                                                                           \
        typedef NAME##_vi M;                                                                           \
        PAIR_FILTER_HEAD                                                                               \
        M KA = { 0 }, KB = { 0 }, LO = { 0 };                                                          \
        for (; c + LANES <= nc; c += LANES) {                                                          \
            V asc = *(const V *)(as + c), bsc = *(const V *)(bs + c);                                  \
            V aqc = *(const V *)(aq + c), bqc = *(const V *)(bq + c);                                  \
            V n = *(const V *)(an + c) + *(const V *)(bn + c), s = asc + bsc, q = aqc + bqc;           \
            PAIR_FILTER_ONE(V, VABS, VECTOR_TRUE)                                                      \
        }                                                                                              \
        for (int l = 0; l < LANES; l++) {                                                              \
            ka += KA[l];                                                                               \
            kb += KB[l];                                                                               \
            lo += LO[l];                                                                               \
        }                                                                                              \
        SCALAR_PAIR_LOOP                                                                               \
        PAIR_FILTER_TAIL                                                                               \
    }
#define VABS(x) ((V)((M)(x) & 0x7fffffff))
VECTOR_PAIR_FILTER(ffilter_pair, , 4)
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
VECTOR_PAIR_FILTER(ffilter_pair_avx2, __attribute__((target("avx2"))), 8)

/* The same filter for AVX-512 in its intrinsics: the comparisons stay in
 * mask registers (the vector extension moves each through a vector of
 * -1/0 and back), and the multiply-adds are fused. Each value is
 * PAIR_FILTER_ONE's with the same or fewer roundings, so its error bounds
 * (above) hold: fl(x - y z) in one rounding is off x - y z by at most
 * u |x - y z| <= u |x - fl(y z)| + u^2 |y z|, within the bound taken for
 * fl(x - fl(y z)) (u |y z| + u |x - fl(y z)|); 2^-16 times a float is
 * exact (nothing here comes near underflow: the inputs' bounds above),
 * so the fused 2^-16 m + floor is the separate one's value, and
 * (2^-16 |t2|) Q' with Q' = n mq is 2^-16 M's threshold term exactly
 * before its one rounding; -(y z) - w is the exact negation of y z + w's
 * rounding. The comparisons are ordered (false on NaN), as the plain C's.
 * The margin gathered so (2^-16 M + floor within a relative 2u of it) is
 * the plain C's, 8x the errors it covers. It also writes which lanes
 * it leaves undecided (j->lane_a, j->lane_b: a 16-bit mask for each 16
 * combos), so that only those are computed exactly (j->lanes); a last
 * part of the chunk shorter than 16 runs masked. */
typedef struct {
    __m512 fm, flo, two, one, vt2a, vt2b, ma, mb, ata, atb;
} avx512_consts;

typedef struct {
    __mmask16 below_b, dec_a, dec_b;   /* surely below in pass 2; decided in pass 1, pass 2 (dead lanes too) */
} avx512_lanes;

/* The filter's constants for thresholds t2a and t2b. 2^-16 |t2|: exact
 * (|t2| >= 1e-10, ft2_of), or NaN, as t2 is. */
__attribute__((target("avx512f"))) static inline avx512_consts avx512_consts_of(float t2a, float t2b)
{
    return (avx512_consts){ _mm512_set1_ps(FFILTER_MARGIN), _mm512_set1_ps(FFILTER_FLOOR), _mm512_set1_ps(2.0f),
                            _mm512_set1_ps(1.0f), _mm512_set1_ps(t2a), _mm512_set1_ps(t2b),
                            _mm512_set1_ps(FFILTER_MARGIN * fabsf(t2a)), _mm512_set1_ps(FFILTER_MARGIN * fabsf(t2b)),
                            _mm512_set1_ps(fabsf(t2a)), _mm512_set1_ps(fabsf(t2b)) };
}

/* 16 combos from c, those of live (all unless the chunk ends before). */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) avx512_lanes
ffilter_avx512_step(const ftab_rows *r, size_t c, __mmask16 live, bool full, const avx512_consts *k)
{
#define LOAD(p) (full ? _mm512_loadu_ps((p) + c) : _mm512_maskz_loadu_ps(live, (p) + c))
    __m512 asc = LOAD(r->as), bsc = LOAD(r->bs);
    __m512 n = _mm512_add_ps(LOAD(r->an), LOAD(r->bn)), s = _mm512_add_ps(asc, bsc);
    __m512 q = _mm512_add_ps(LOAD(r->aq), LOAD(r->bq));
#undef LOAD
    __m512 sm = _mm512_add_ps(_mm512_abs_ps(asc), _mm512_abs_ps(bsc)), sm2 = _mm512_mul_ps(sm, sm);
    __m512 nq = _mm512_mul_ps(n, q), mq = _mm512_add_ps(nq, sm2);
    __m512 d = _mm512_fnmadd_ps(s, s, nq);
    __m512 dtol = _mm512_fmadd_ps(k->fm, mq, k->flo), ndtol = _mm512_fnmsub_ps(k->fm, mq, k->flo);
    __m512 A = _mm512_mul_ps(_mm512_mul_ps(s, _mm512_abs_ps(s)), _mm512_sub_ps(n, k->one));
    __m512 nd = _mm512_mul_ps(n, d);
    __m512 P = _mm512_fmadd_ps(k->fm, _mm512_mul_ps(n, sm2), k->flo), nmq = _mm512_mul_ps(n, mq);
    __m512 ntola = _mm512_fnmsub_ps(k->ma, nmq, P);
    __m512 tolb = _mm512_fmadd_ps(k->mb, nmq, P), ntolb = _mm512_fnmsub_ps(k->mb, nmq, P);
    __m512 ga = _mm512_fnmadd_ps(k->vt2a, nd, A), gb = _mm512_fnmadd_ps(k->vt2b, nd, A);
    __mmask16 big = _mm512_cmp_ps_mask(n, k->two, _CMP_GE_OQ);
    __mmask16 valid = _mm512_mask_cmp_ps_mask(big, d, dtol, _CMP_GT_OQ);
    __mmask16 invalid = _kor_mask16(_mm512_cmp_ps_mask(n, k->two, _CMP_LT_OQ), _mm512_cmp_ps_mask(d, ndtol, _CMP_LT_OQ));
    __mmask16 below_a = _kor_mask16(invalid, _mm512_mask_cmp_ps_mask(valid, ga, ntola, _CMP_LT_OQ));
    __mmask16 below_b = _kor_mask16(invalid, _mm512_mask_cmp_ps_mask(valid, gb, ntolb, _CMP_LT_OQ));
    __mmask16 above_b = _mm512_mask_cmp_ps_mask(valid, gb, tolb, _CMP_GT_OQ);
    /* The decided lanes: the caller turns them into the undecided ones in
     * general registers, leaving the mask ports to the work above. */
    if (full)
        return (avx512_lanes){ below_b, below_a, _kor_mask16(below_b, above_b) };
    return (avx512_lanes){ _kand_mask16(below_b, live), _kor_mask16(below_a, _knot_mask16(live)),
                           _kor_mask16(_kor_mask16(below_b, above_b), _knot_mask16(live)) };
}

/* The step for 16 combos surely valid in every split (margins_avx512):
 * no validity to test, and the margin P + |t2| Q from each combo's bounds
 * over all splits (one multiply-add per threshold) where the general step
 * gathers it from the split's own figures. The same A, d and comparisons. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) avx512_lanes
ffilter_avx512_fast_step(const ftab_rows *r, size_t c, const float *P, const float *Q, const avx512_consts *k)
{
    __m512 n = _mm512_add_ps(_mm512_loadu_ps(r->an + c), _mm512_loadu_ps(r->bn + c));
    __m512 s = _mm512_add_ps(_mm512_loadu_ps(r->as + c), _mm512_loadu_ps(r->bs + c));
    __m512 q = _mm512_add_ps(_mm512_loadu_ps(r->aq + c), _mm512_loadu_ps(r->bq + c));
    __m512 ss = _mm512_mul_ps(s, _mm512_abs_ps(s));
    __m512 A = _mm512_fmsub_ps(ss, n, ss);   /* ss (n - 1) in one rounding: n - 1 is exact */
    __m512 nd = _mm512_mul_ps(n, _mm512_fnmadd_ps(s, s, _mm512_mul_ps(n, q)));
    __m512 ga = _mm512_fnmadd_ps(k->vt2a, nd, A), gb = _mm512_fnmadd_ps(k->vt2b, nd, A);
    __m512 Pv = _mm512_loadu_ps(P + c), Qv = _mm512_loadu_ps(Q + c);
    __m512 ntola = _mm512_fnmsub_ps(k->ata, Qv, Pv);
    __m512 tolb = _mm512_fmadd_ps(k->atb, Qv, Pv), ntolb = _mm512_fnmsub_ps(k->atb, Qv, Pv);
    __mmask16 below_b = _mm512_cmp_ps_mask(gb, ntolb, _CMP_LT_OQ);
    return (avx512_lanes){ below_b, _mm512_cmp_ps_mask(ga, ntola, _CMP_LT_OQ),
                           _kor_mask16(below_b, _mm512_cmp_ps_mask(gb, tolb, _CMP_GT_OQ)) };
}

__attribute__((target("avx512f"))) static void ffilter_pair_avx512(const pbo_job *j, uint32_t mask, size_t nc,
                                                                   float t2a, float t2b, size_t *und_a, size_t *lo_b,
                                                                   size_t *und_b)
{
    ftab_rows r = frows(j, mask);
    const avx512_consts k = avx512_consts_of(t2a, t2b);
    const float *P = ftab_margins(j), *Q = P + j->chunk;
    const uint8_t *fast = (const uint8_t *)(Q + j->chunk);
    __m512i LO = _mm512_setzero_si512();
    const __m512i minus1 = _mm512_set1_epi32(-1);
    /* The lanes decided in every group so far, kept in mask registers: the
     * lanes left undecided (rare once a split's best is found) are written
     * out by a second run over the chunk, not by every step. */
    __mmask16 all_a = 0xffff, all_b = 0xffff, last = (__mmask16)((1u << (nc % 16)) - 1u);
    size_t c = 0, g = 0;
    for (; c + 16 <= nc; c += 16, g++) {
        avx512_lanes l = fast[g] ? ffilter_avx512_fast_step(&r, c, P, Q, &k)
                                 : ffilter_avx512_step(&r, c, 0xffff, true, &k);
        LO = _mm512_mask_sub_epi32(LO, l.below_b, LO, minus1);
        all_a = _kand_mask16(all_a, l.dec_a);
        all_b = _kand_mask16(all_b, l.dec_b);
    }
    if (c < nc) {
        avx512_lanes l = ffilter_avx512_step(&r, c, last, false, &k);
        LO = _mm512_mask_sub_epi32(LO, l.below_b, LO, minus1);
        all_a = _kand_mask16(all_a, l.dec_a);
        all_b = _kand_mask16(all_b, l.dec_b);
    }
    *lo_b += (size_t)_mm512_reduce_add_epi32(LO);
    unsigned ua = (uint16_t)~_cvtmask16_u32(all_a), ub = (uint16_t)~_cvtmask16_u32(all_b);
    *und_a = (size_t)__builtin_popcount(ua);
    *und_b = (size_t)__builtin_popcount(ub);
    if (!ua && !ub)
        return;
    for (c = 0, g = 0; c < nc; c += 16, g++) {
        avx512_lanes l = c + 16 > nc ? ffilter_avx512_step(&r, c, last, false, &k)
                         : fast[g]   ? ffilter_avx512_fast_step(&r, c, P, Q, &k)
                                     : ffilter_avx512_step(&r, c, 0xffff, true, &k);
        j->lane_a[g] = (uint16_t)~_cvtmask16_u32(l.dec_a);
        j->lane_b[g] = (uint16_t)~_cvtmask16_u32(l.dec_b);
    }
}
#endif

/* The widest filter the machine runs, or no wider than widest (PBO_PLAIN,
 * PBO_AVX2: tests run each). */
static pair_filter_fn *pair_filter(int widest)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (widest >= PBO_AVX512 && __builtin_cpu_supports("avx512f"))
        return ffilter_pair_avx512;
    if (widest >= PBO_AVX2 && __builtin_cpu_supports("avx2"))
        return ffilter_pair_avx2;
#endif
    (void)widest;
    return ffilter_pair;
}

/* The filter that writes which lanes it leaves undecided; NULL where none. */
static pair_filter_fn *lane_filter(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    return ffilter_pair_avx512;
#else
    return NULL;
#endif
}

/* t2 as a float where the float filter may use it; NaN where not. */
static float ft2_of(double t2)
{
    return fabs(t2) >= 1e-10 && fabs(t2) <= 1e9 ? (float)t2 : NAN;
}

/* The same sums straight from one combo's row. */
static double set_sharpe(const double *row, int h, uint32_t mask)
{
    double v[2][3] = { { 0.0, 0.0, 0.0 }, { 0.0, 0.0, 0.0 } };
    for (int half = 0; half < 2; half++)
        for (int b = half * h; b < (half + 1) * h; b++)
            if (mask >> b & 1u)
                for (int k = 0; k < 3; k++)
                    v[half][k] += row[3 * b + k];
    return sharpe_of_sums(v[0][0] + v[1][0], v[0][1] + v[1][1], v[0][2] + v[1][2]);
}

/* ---- both passes in one walk over the chunks --------------------------------------
 * Split i's out-of-sample blocks, all ^ masks[i], are split n-1-i's
 * in-sample blocks (complementing reverses the masks' order), so one walk
 * over a chunk's tables per mask serves both passes: the Sharpe over
 * masks[i] is split i's in-sample value (pass 1: might any combo beat its
 * best so far?) and split n-1-i's out-of-sample value (pass 2: how many
 * fall below its best's out-of-sample Sharpe?). Pass 2 needs the final
 * best; the chunks are walked in the order of the combos' full-sample
 * Sharpe, highest first, so that most splits find their final best in the
 * first chunks, and a split whose best changes at chunk k has its counts
 * dropped and chunks 0..k counted again after the walk (recount[sp] = k;
 * the walk counts only the chunks after it). The order decides only which
 * combos share a chunk and when a best is met: the best is the highest
 * in-sample Sharpe, the lowest combo index among equals, and the counts
 * are sums, whatever the order, the chunk size or the threads. */

static void adopt_best(pbo_job *j, size_t sp, size_t best, double bv, size_t k);

/* Pass 1 on the chunk at position p0 (chunk k, nc combos) for split sp,
 * exactly: its best updated, and on a change the best's out-of-sample
 * Sharpe, the thresholds and the counts to redo. */
static void is_exact(pbo_job *j, size_t sp, const half_sums *h, size_t p0, size_t nc, size_t k)
{
    sebt_pbo *o = j->out;
    size_t best = o->best[sp], was = best;
    double bv = o->is_sharpe[sp];
    chunk_sharpe(h, nc, j->v);
    /* The chunk's largest first, then (rarely: when it reaches the best so
     * far) where it is. -inf is no Sharpe a sum of trades gives, but is
     * scanned for anyway. */
    double mx = chunk_max(j->v, nc);
    if (best != SIZE_MAX && !(mx >= bv) && mx != -INFINITY)
        return;
    for (size_t c = 0; c < nc; c++) {
        double v = j->v[c];
        size_t id = j->order[p0 + c];
        if (!isnan(v) && (best == SIZE_MAX || v > bv || (v == bv && id < best))) {
            best = id;
            bv = v;
        }
    }
    if (best != was)
        adopt_best(j, sp, best, bv, k);
}

/* Split sp's best becomes combo best, of in-sample Sharpe bv, at chunk k:
 * its out-of-sample Sharpe, the thresholds, and the counts to redo. */
static void adopt_best(pbo_job *j, size_t sp, size_t best, double bv, size_t k)
{
    sebt_pbo *o = j->out;
    uint32_t all = (1u << j->s) - 1u;
    double ob = set_sharpe(j->stats + best * (size_t)(3 * j->s), j->h, all & ~j->masks[sp]);
    o->best[sp] = best;
    o->is_sharpe[sp] = bv;
    o->oos_sharpe[sp] = ob;
    j->t2[sp] = isfinite(bv) ? bv * fabs(bv) : NAN;
    j->ft2[sp] = ft2_of(j->t2[sp]);
    j->ot2[sp] = isfinite(ob) ? ob * fabs(ob) : NAN;
    j->oft2[sp] = ft2_of(j->ot2[sp]);
    j->below[sp] = j->equal[sp] = 0;
    j->recount[sp] = k;
    if (j->dirty && !j->dirty_flag[job_local(j, sp)]) {
        j->dirty_flag[job_local(j, sp)] = 1;
        j->dirty[j->n_dirty++] = (uint32_t)sp;
    }
}

/* The exact Sharpe over blocks mask of combo c of the chunk, from its
 * rows: mask_sums' sums and chunk_sharpe's value for that combo alone, the
 * same operations in the same order, so the same bits. */
static double lane_sharpe(const pbo_job *j, uint32_t mask, size_t c)
{
    double v[2][3] = { { 0.0, 0.0, 0.0 }, { 0.0, 0.0, 0.0 } };
    for (int half = 0; half < 2; half++)
        for (int b = half * j->h; b < (half + 1) * j->h; b++)
            if (mask >> b & 1u)
                for (int k = 0; k < 3; k++)
                    v[half][k] += j->rows[(size_t)(3 * b + k) * j->chunk + c];
    return sharpe_of_sums(v[0][0] + v[1][0], v[0][1] + v[1][1], v[0][2] + v[1][2]);
}

/* Pass 2's counts for split sp (its best's out-of-sample Sharpe finite):
 * lo, the combos the float filter found surely below it (or without a
 * Sharpe), and those it left undecided (lane_b) counted exactly, as
 * chunk_count counts them. */
static void count_lanes(pbo_job *j, size_t sp, size_t nc, size_t lo)
{
    uint32_t mask = ((1u << j->s) - 1u) & ~j->masks[sp];
    double ob = j->out->oos_sharpe[sp];
    size_t eq = 0;
    for (size_t g = 0; g * 16 < nc; g++)
        for (unsigned bits = j->lane_b[g]; bits; bits &= bits - 1) {
            double v = lane_sharpe(j, mask, g * 16 + (size_t)__builtin_ctz(bits));
            lo += (v < ob) | (v != v);
            eq += v == ob;
        }
    j->below[sp] += lo;
    j->equal[sp] += eq;
}

/* Pass 2 on the current chunk for split sp (it has a best): the combos
 * whose out-of-sample Sharpe is below its best's (or NaN) and equal to it
 * added to its counts; by the float filter unless float_tried (it was and
 * left some undecided, or the chunk has no float table), then the double
 * filter, then exactly. */
static void oos_count(pbo_job *j, size_t sp, size_t nc, bool float_tried)
{
    uint32_t mask = ((1u << j->s) - 1u) & ~j->masks[sp];
    size_t lo = 0, eq = 0;
    if (!float_tried && !isnan(j->oft2[sp])) {
        size_t und_a, und_b;
        j->pair_filter(j, mask, nc, NAN, j->oft2[sp], &und_a, &lo, &und_b);
        if (und_b == 0) {
            j->below[sp] += lo;
            return;
        }
        if (j->lanes) {
            count_lanes(j, sp, nc, lo);
            return;
        }
    }
    lo = 0;
    half_sums h = mask_sums(j, mask, nc);
    if (!isnan(j->ot2[sp]) && filter_below(&h, nc, j->ot2[sp], &lo) == 0) {
        j->below[sp] += lo;
        return;
    }
    lo = 0;
    double ob = j->out->oos_sharpe[sp];
    chunk_sharpe(&h, nc, j->v);
    if (isnan(ob)) {
        for (size_t c = 0; c < nc; c++)
            eq += isnan(j->v[c]);
    } else {
        chunk_count(j->v, nc, ob, &lo, &eq);
    }
    j->below[sp] += lo;
    j->equal[sp] += eq;
}

/* The walk's step on mask a of chunk k (position p0, nc combos): pass 1 for
 * split a, pass 2 for split n-1-a where the walk counts it. Where the
 * filter is AVX-512's, walk_groups walks instead. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void walk_mask(pbo_job *j, size_t a, size_t p0,
                                                                                   size_t nc, size_t k)
{
    const sebt_pbo *o = j->out;
    size_t b = j->n_splits - 1 - a, und_a = 1, lo_b = 0, und_b = 1;
    bool count_b = o->best[b] != SIZE_MAX && k > j->recount[b];
    float fa = j->ft2[a], fb = count_b ? j->oft2[b] : NAN;
    if (!isnan(fa) || !isnan(fb))
        j->pair_filter(j, j->masks[a], nc, fa, fb, &und_a, &lo_b, &und_b);
    if (isnan(j->t2[a]) || isnan(fa) || und_a != 0) {
        half_sums h = mask_sums(j, j->masks[a], nc);
        if (isnan(j->t2[a]) || filter_above(&h, nc, j->t2[a]) != 0)
            is_exact(j, a, &h, p0, nc, k);
    }
    if (!count_b)
        return;
    if (!isnan(fb) && und_b == 0)
        j->below[b] += lo_b;
    else
        oos_count(j, b, nc, !isnan(fb));
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* Pass 1 for split a on the lanes und of the 16 combos from c, which the
 * float filter left undecided against its best: each computed exactly. */
__attribute__((noinline)) static bool is_group(pbo_job *j, size_t a, size_t p0, size_t c, unsigned und, size_t k)
{
    const sebt_pbo *o = j->out;
    size_t best = o->best[a], was = best;
    double bv = o->is_sharpe[a];
    for (; und; und &= und - 1) {
        size_t cc = c + (size_t)__builtin_ctz(und), id = j->order[p0 + cc];
        double v = lane_sharpe(j, j->masks[a], cc);
        if (!isnan(v) && (v > bv || (v == bv && id < best))) {
            best = id;
            bv = v;
        }
    }
    if (best == was)
        return false;
    adopt_best(j, a, best, bv, k);
    return true;
}

/* Pass 2 for split b on the lanes und of the 16 combos from c (out of
 * sample: mask), which the float filter left undecided: as count_lanes. */
__attribute__((noinline)) static void oos_group(pbo_job *j, size_t b, uint32_t mask, size_t c, unsigned und)
{
    double ob = j->out->oos_sharpe[b];
    size_t lo = 0, eq = 0;
    for (; und; und &= und - 1) {
        double v = lane_sharpe(j, mask, c + (size_t)__builtin_ctz(und));
        lo += (v < ob) | (v != v);
        eq += v == ob;
    }
    j->below[b] += lo;
    j->equal[b] += eq;
}

/* Step e of walk_groups for split a at chunk k: pass 1 walked where split a
 * has a best and a float threshold (or keep_p1: a best adopted in this
 * chunk, its float threshold NaN or not, so that the walk takes the split
 * to the chunk's end), pass 2 where split n-1-a counts this chunk with a
 * float threshold; the other's threshold NaN. */
static void step_set(const pbo_job *j, group_step *e, size_t a, size_t k, bool keep_p1)
{
    const sebt_pbo *o = j->out;
    size_t b = j->n_splits - 1 - a;
    bool p1 = o->best[a] != SIZE_MAX && (keep_p1 || !isnan(j->ft2[a]));
    bool p2 = o->best[b] != SIZE_MAX && k > j->recount[b] && !isnan(j->oft2[b]);
    e->t2a = p1 ? j->ft2[a] : NAN;
    e->t2b = p2 ? j->oft2[b] : NAN;
    e->ata = fabsf(e->t2a);
    e->atb = fabsf(e->t2b);
    e->pass = (uint32_t)p1 | (uint32_t)p2 << 1;
}

/* walk_groups's steps of run `run` on the 16 combos from c (group g):
 * the float filter only, its undecided lanes noted (events) and taken
 * exactly after the run, so that the loop calls nothing and keeps its
 * pointers in registers. A pass 2 noted for a split given a best since
 * (recount at k) is dropped: the chunk is counted again for it. */
__attribute__((target("avx512f"))) static void walk_run(pbo_job *j, size_t p0, size_t c, size_t g, size_t k,
                                                        size_t run)
{
    size_t n = j->n_splits, C = j->chunk, F = j->fstride, sub = (size_t)1 << j->h, nc = j->nc;
    const float *P = ftab_margins(j), *Q = P + C;
    bool full = c + 16 <= nc, fg = full && ((const uint8_t *)(Q + C))[g];
    __mmask16 live = full ? 0xffff : (__mmask16)((1u << (nc - c)) - 1u);
    const float *restrict ln = j->ftab + c, *restrict ls = ln + sub * F, *restrict lq = ls + sub * F;
    const float *hrow = lq + sub * F + j->steps[j->runs[run]].hi;
    /* Read only for a fast group, all 16 of its combos there. */
    __m512 Pv = _mm512_setzero_ps(), Qv = Pv, hnv = Pv, hsv = Pv, hqv = Pv;
    if (fg) {
        Pv = _mm512_loadu_ps(P + c);
        Qv = _mm512_loadu_ps(Q + c);
        hnv = _mm512_loadu_ps(hrow);
        hsv = _mm512_loadu_ps(hrow + sub * F);
        hqv = _mm512_loadu_ps(hrow + 2 * sub * F);
    }
    const group_step *restrict steps = j->steps;
    size_t *restrict below = j->below;
    group_event *restrict ev = j->events;
    size_t nev = 0, e1 = j->runs[run + 1];
    for (size_t e = j->runs[run]; e < e1; e++) {
        const group_step *st = &steps[e];
        uint32_t pass = st->pass;
        if (!pass)
            continue;
        avx512_lanes l;
        if (fg) {
            size_t lo = st->lo;
            __m512 nv = _mm512_add_ps(_mm512_loadu_ps(ln + lo), hnv);
            __m512 sv = _mm512_add_ps(_mm512_loadu_ps(ls + lo), hsv);
            __m512 qv = _mm512_add_ps(_mm512_loadu_ps(lq + lo), hqv);
            __m512 ss = _mm512_mul_ps(sv, _mm512_abs_ps(sv));
            __m512 A = _mm512_fmsub_ps(ss, nv, ss);   /* ss (n - 1) in one rounding: n - 1 is exact */
            __m512 nd = _mm512_mul_ps(nv, _mm512_fnmadd_ps(sv, sv, _mm512_mul_ps(nv, qv)));
            __m512 ga = _mm512_fnmadd_ps(_mm512_set1_ps(st->t2a), nd, A);
            __m512 gb = _mm512_fnmadd_ps(_mm512_set1_ps(st->t2b), nd, A);
            __m512 ata = _mm512_set1_ps(st->ata), atb = _mm512_set1_ps(st->atb);
            __m512 ntola = _mm512_fnmsub_ps(ata, Qv, Pv);
            __m512 tolb = _mm512_fmadd_ps(atb, Qv, Pv), ntolb = _mm512_fnmsub_ps(atb, Qv, Pv);
            l.below_b = _mm512_cmp_ps_mask(gb, ntolb, _CMP_LT_OQ);
            l.dec_a = _mm512_cmp_ps_mask(ga, ntola, _CMP_LT_OQ);
            l.dec_b = _kor_mask16(l.below_b, _mm512_cmp_ps_mask(gb, tolb, _CMP_GT_OQ));
        } else {
            ftab_rows r = frows(j, j->masks[st->a]);
            const avx512_consts kc = avx512_consts_of(st->t2a, st->t2b);
            l = ffilter_avx512_step(&r, c, live, full, &kc);
        }
        unsigned und_a = pass & 1u ? (uint16_t)~_cvtmask16_u32(l.dec_a) & live : 0u;
        unsigned und_b = 0;
        if (pass & 2u) {
            below[n - 1 - st->a] += (size_t)__builtin_popcount(_cvtmask16_u32(_kand_mask16(l.below_b, live)));
            und_b = (uint16_t)~_cvtmask16_u32(l.dec_b) & live;
        }
        if (__builtin_expect((und_a | und_b) != 0, 0))
            ev[nev++] = (group_event){ .e = (uint32_t)e, .und_a = (uint16_t)und_a, .und_b = (uint16_t)und_b };
    }
    for (size_t v = 0; v < nev; v++) {
        size_t e = ev[v].e, a = steps[e].a, b = n - 1 - a;
        unsigned und_a = ev[v].und_a, und_b = j->recount[b] != k ? ev[v].und_b : 0u;
        if (fg && (und_a | und_b)) {
            /* The general step's margins, the split's own (the fast step's
             * hold for every split), settle most of the rest. */
            const group_step *st = &steps[e];
            ftab_rows r = frows(j, j->masks[a]);
            const avx512_consts kc = avx512_consts_of(st->t2a, st->t2b);
            avx512_lanes l = ffilter_avx512_step(&r, c, 0xffff, true, &kc);
            below[b] += (size_t)__builtin_popcount(_cvtmask16_u32(l.below_b) & und_b);
            und_b &= (uint16_t)~_cvtmask16_u32(l.dec_b);
            und_a &= (uint16_t)~_cvtmask16_u32(l.dec_a);
        }
        if (und_b)
            oos_group(j, b, j->masks[a], c, und_b);
        if (und_a && is_group(j, a, p0, c, und_a, k)) {
            /* A new best: pass 1 goes on with its threshold; pass 2 of
             * split a (at mask n-1-a) is off for the chunk. */
            step_set(j, &j->steps[e], a, k, true);
            step_set(j, &j->steps[j->step_of[job_local(j, b)]], b, k, false);
        }
    }
}

/* The chunk's walk with the combos outside and the splits inside (the
 * AVX-512 filter): a group of 16 combos keeps its margins in registers,
 * and the job's masks, taken by the popcount of their high half, then that
 * half, then the low half (steps), share one half's rows for a run and
 * cycle through at most 70 subsets of the other (13 KiB, in the first-level
 * cache), where a walk per split reads every row from the second level.
 * The same decisions as walk_mask's: pass 1 for split a on mask a and
 * pass 2 for split n-1-a, their float filter first and the undecided lanes
 * exactly; a split whose float threshold is NaN (no best yet, or one
 * beyond the float filter's range) goes through walk_mask's double paths
 * after the groups. A best adopted mid-chunk has its split counted again
 * from chunk 0 to this one (adopt_best), so what its pass 2 counted before
 * in this chunk is dropped, and its steps after skip it. */
__attribute__((target("avx512f"))) static void walk_groups(pbo_job *j, size_t p0, size_t nc, size_t k)
{
    const sebt_pbo *o = j->out;
    size_t n = j->n_splits, ns = 2 * (j->pair_hi - j->pair_lo);
    group_step *steps = j->steps;
    /* A step changes only when its split or its complement is given a best
     * (which also starts or stops pass 2 the chunk after): those alone are
     * set again, all at the first chunk. */
    if (k == 0) {
        for (size_t e = 0; e < ns; e++)
            step_set(j, &steps[e], steps[e].a, k, false);
    } else {
        for (size_t d = 0; d < j->n_dirty; d++) {
            size_t sp = j->dirty[d];
            step_set(j, &steps[j->step_of[job_local(j, sp)]], sp, k, false);
            step_set(j, &steps[j->step_of[job_local(j, n - 1 - sp)]], n - 1 - sp, k, false);
        }
    }
    for (size_t d = 0; d < j->n_dirty; d++)
        j->dirty_flag[job_local(j, j->dirty[d])] = 0;
    j->n_dirty = 0;
    j->nc = nc;
    for (size_t c = 0, g = 0; c < nc; c += 16, g++) {
        for (size_t run = 0; run < j->n_runs; run++)
            walk_run(j, p0, c, g, k, run);
    }
    /* What the groups left: pass 1 of the splits without a best or with a
     * float threshold NaN from before the chunk, pass 2 of those whose
     * best's out-of-sample threshold is NaN, by walk_mask's double paths. */
    for (int side = 0; side < 2; side++) {
        size_t a0 = side ? n - j->pair_hi : j->pair_lo, a1 = side ? n - j->pair_lo : j->pair_hi;
        for (size_t a = a0; a < a1; a++) {
            size_t b = n - 1 - a;
            if (o->best[a] == SIZE_MAX || (isnan(j->ft2[a]) && j->recount[a] != k)) {
                half_sums h = mask_sums(j, j->masks[a], nc);
                if (isnan(j->t2[a]) || filter_above(&h, nc, j->t2[a]) != 0)
                    is_exact(j, a, &h, p0, nc, k);
            }
            if (o->best[b] != SIZE_MAX && k > j->recount[b] && isnan(j->oft2[b]))
                oos_count(j, b, nc, false);
        }
    }
}
#endif

/* Whether to go: every thread was started. */
static bool crew_gate(pbo_crew *c)
{
    pthread_mutex_lock(&c->mu);
    while (c->gate == 0)
        pthread_cond_wait(&c->cv, &c->mu);
    bool go = c->gate > 0;
    pthread_mutex_unlock(&c->mu);
    return go;
}

static void crew_open(pbo_crew *c, bool go)
{
    pthread_mutex_lock(&c->mu);
    c->gate = go ? 1 : -1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* One thread's splits, the pairs i and n-1-i for i in pair_lo .. pair_hi:
 * the walk, then the recounts. */
static void *pbo_thread(void *arg)
{
    pbo_job *j = arg;
    if (!crew_gate(j->crew))
        return NULL;
    size_t n = j->n_splits, C = j->chunk, n_chunks = (j->n_combos + C - 1) / C;
    for (size_t k = 0; k < n_chunks; k++) {
        size_t p0 = k * C, nc = j->n_combos - p0 < C ? j->n_combos - p0 : C;
        build_part(j, p0, nc, true);
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
        if (j->lanes) {
            walk_groups(j, p0, nc, k);
            continue;
        }
#endif
        for (size_t i = j->pair_lo; i < j->pair_hi; i++) {
            walk_mask(j, i, p0, nc, k);
            walk_mask(j, n - 1 - i, p0, nc, k);
        }
    }
    size_t last = 0;
    bool any = false;
    for (size_t i = j->pair_lo; i < j->pair_hi; i++)
        for (int side = 0; side < 2; side++) {
            size_t sp = side ? n - 1 - i : i;
            if (j->out->best[sp] != SIZE_MAX) {
                any = true;
                last = j->recount[sp] > last ? j->recount[sp] : last;
            }
        }
    /* Most recounts are of the first chunks; a chunk only a few splits
     * recount (a best met late) is counted from its rows alone, without the
     * float table (its build costs about as much as RECOUNT_TABLE_MIN
     * splits' double sums and filter beyond the float filter's). */
    for (size_t k = 0; any && k <= last; k++) {
        size_t p0 = k * C, nc = j->n_combos - p0 < C ? j->n_combos - p0 : C, need = 0;
        for (size_t i = j->pair_lo; i < j->pair_hi; i++)
            need += (j->out->best[i] != SIZE_MAX && j->recount[i] >= k) +
                    (j->out->best[n - 1 - i] != SIZE_MAX && j->recount[n - 1 - i] >= k);
        if (need == 0)
            continue;
        bool table = need >= RECOUNT_TABLE_MIN || need >= j->pair_hi - j->pair_lo;   /* or half its splits */
        build_part(j, p0, nc, table);
        for (size_t i = j->pair_lo; i < j->pair_hi; i++)
            for (int side = 0; side < 2; side++) {
                size_t sp = side ? n - 1 - i : i;
                if (j->out->best[sp] != SIZE_MAX && j->recount[sp] >= k)
                    oos_count(j, sp, nc, !table);
            }
    }
    return NULL;
}

/* Runs every job, jobs 1.. on threads of their own and job 0 here; false
 * when a thread could not be started (nothing then ran). */
static bool run_jobs(pbo_job *jobs, int n)
{
    pthread_t tid[SEBT_PBO_MAX_THREADS];
    int started = 1;
    bool ok = true;
    for (; ok && started < n; started++)
        ok = pthread_create(&tid[started], NULL, pbo_thread, &jobs[started]) == 0;
    if (!ok)
        started--;
    crew_open(jobs[0].crew, ok);
    if (ok)
        pbo_thread(&jobs[0]);
    for (int t = 1; t < started; t++)
        pthread_join(tid[t], NULL);
    return ok;
}

/* Both passes, then each split's rank of its best out of sample. */
static bool pbo_passes(pbo_job *jobs, int n, sebt_pbo *o)
{
    if (!run_jobs(jobs, n))
        return false;
    for (size_t sp = 0; sp < o->n_splits; sp++) {
        if (o->best[sp] == SIZE_MAX) {
            o->omega[sp] = o->logit[sp] = NAN;
            continue;
        }
        size_t below = jobs[0].below[sp], equal = jobs[0].equal[sp] - 1;   /* less the best itself */
        o->omega[sp] = (double)(2 * below + equal + 2) / (double)(2 * (o->n_combos + 1));
        o->logit[sp] = log(o->omega[sp] / (1.0 - o->omega[sp]));
    }
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* PBO, the degradation fit and the logits' median from the splits. */
static sebt_status pbo_summary(sebt_pbo *o, sebt_error *err)
{
    double *lg = malloc((o->n_splits ? o->n_splits : 1) * sizeof *lg);
    if (!lg)
        return sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for %zu logits", o->n_splits);
    size_t le = 0, n = 0, nf = 0, loss = 0;
    double sx = 0.0, sy = 0.0;
    for (size_t i = 0; i < o->n_splits; i++) {
        if (o->best[i] == SIZE_MAX)
            continue;
        lg[n++] = o->logit[i];
        le += o->logit[i] <= 0.0;
        if (!isnan(o->oos_sharpe[i])) {
            nf++;
            sx += o->is_sharpe[i];
            sy += o->oos_sharpe[i];
            loss += o->oos_sharpe[i] < 0.0;
        }
    }
    o->n_counted = n;
    o->pbo = n ? (double)le / (double)n : NAN;
    qsort(lg, n, sizeof *lg, cmp_double);
    o->logit_median = n == 0 ? NAN : n % 2 ? lg[n / 2] : 0.5 * (lg[n / 2 - 1] + lg[n / 2]);
    free(lg);
    o->n_fit = nf;
    o->prob_oos_loss = nf ? (double)loss / (double)nf : NAN;
    o->slope = o->intercept = NAN;
    if (nf < 2)
        return SEBT_OK;
    double mx = sx / (double)nf, my = sy / (double)nf, sxx = 0.0, sxy = 0.0;
    for (size_t i = 0; i < o->n_splits; i++) {
        if (o->best[i] == SIZE_MAX || isnan(o->oos_sharpe[i]))
            continue;
        double dx = o->is_sharpe[i] - mx;
        sxx += dx * dx;
        sxy += dx * (o->oos_sharpe[i] - my);
    }
    if (sxx > 0.0) {
        o->slope = sxy / sxx;
        o->intercept = my - o->slope * mx;
    }
    return SEBT_OK;
}

static size_t choose(int n, int k)
{
    size_t c = 1;
    for (int i = 1; i <= k; i++)
        c = c * (size_t)(n - k + i) / (size_t)i;
    return c;
}

void sebt_pbo_free(sebt_pbo *p)
{
    free(p->mask);
    free(p->best);
    free(p->is_sharpe);
    free(p->oos_sharpe);
    free(p->omega);
    free(p->logit);
    p->mask = NULL;
    p->best = NULL;
    p->is_sharpe = p->oos_sharpe = p->omega = p->logit = NULL;
}

/* The walk's order: by the largest Sharpe over the S halves of cyclically
 * adjacent blocks (splits' in-sample sets, their sums slid one block at a
 * time), highest first (no Sharpe last), then by index; NULL when out of
 * memory. A split's best is met sooner so than in the order of the
 * full-sample Sharpe (10^5 combos of the bundled data: the chunks counted
 * again for bests met late halved). Only an order: any other gives the
 * same bits, later. Sorted by radix (stable, from the index order), the
 * keys as integers in the order of their values, highest first. */
static size_t *walk_order(const double *stats, size_t n_combos, int s)
{
    uint64_t *key = malloc(n_combos * sizeof *key);
    size_t *order = malloc(n_combos * sizeof *order), *tmp = malloc(n_combos * sizeof *tmp);
    if (!key || !order || !tmp) {
        free(key);
        free(order);
        free(tmp);
        return NULL;
    }
    int h = s / 2;
    for (size_t c = 0; c < n_combos; c++) {
        const double *row = stats + c * (size_t)(3 * s);
        double sum[3] = { 0.0, 0.0, 0.0 }, best = -INFINITY;
        for (int b = 0; b < h; b++)
            for (int x = 0; x < 3; x++)
                sum[x] += row[3 * b + x];
        for (int i = 0; i < s; i++) {
            double v = sharpe_of_sums(sum[0], sum[1], sum[2]);
            best = v > best ? v : best;
            for (int x = 0; x < 3; x++)
                sum[x] += row[3 * ((i + h) % s) + x] - row[3 * i + x];
        }
        best = best == 0.0 ? 0.0 : best;   /* -0 as +0 */
        uint64_t u;
        memcpy(&u, &best, sizeof u);
        u = u >> 63 ? ~u : u | (uint64_t)1 << 63;   /* increasing with the value */
        key[c] = ~u;                                 /* the highest first */
        order[c] = c;
    }
    size_t count[256];
    for (int shift = 0; shift < 64; shift += 8) {
        memset(count, 0, sizeof count);
        for (size_t c = 0; c < n_combos; c++)
            count[key[order[c]] >> shift & 255]++;
        for (size_t b = 0, at = 0; b < 256; b++) {
            size_t n = count[b];
            count[b] = at;
            at += n;
        }
        for (size_t c = 0; c < n_combos; c++)
            tmp[count[key[order[c]] >> shift & 255]++] = order[c];
        size_t *t = order;
        order = tmp;
        tmp = t;
    }
    free(key);
    free(tmp);
    return order;
}

/* Combos to a chunk: its float table about 768 KiB (128 combos at S = 16),
 * so that the two shared buffers and what the walk reads beside them stay
 * in a 2 MiB L2; measured a tenth faster than 256 combos, 512 slower. */
static size_t chunk_for(int h, size_t n_combos)
{
    size_t per = 6 * ((size_t)1 << h) * sizeof(float);
    size_t c = ((size_t)3 << 18) / per;
    c = c < 16 ? 16 : c > 256 ? 256 : c;
    return c < n_combos ? c : n_combos;
}

sebt_status sebt_pbo_check(int s, size_t n_combos, sebt_error *err)
{
    if (s < 2 || s > SEBT_OVERFIT_MAX_BLOCKS || s % 2)
        return sebt_fail(err, SEBT_ERR_USAGE, "overfit: blocks %d: expected an even number from 2 to %d", s,
                         SEBT_OVERFIT_MAX_BLOCKS);
    if (n_combos < 2)
        return sebt_fail(err, SEBT_ERR_USAGE, "overfit: PBO ranks combos against each other: %zu combo%s", n_combos,
                         n_combos == 1 ? "" : "s");
    return SEBT_OK;
}

/* n rounded up to whole cache lines: the tables start on a line (aligned_alloc
 * wants a multiple of it), so that a chunk's 16 combos from a multiple of 16
 * fill one line of floats, two of doubles, where a table off the line had
 * every load and store of them cross two (and the float table's build
 * spent most of its time there). */
static size_t line_round(size_t n)
{
    return (n + 63) / 64 * 64;
}

/* walk_groups's steps: the job's masks (i and n-1-i for i in pair_lo ..
 * pair_hi) by the popcount of their high half, then that half (a counting
 * sort, stable: then the job's own order), with their rows' offsets;
 * step_of names each one's step. False when out of memory. */
static bool job_steps(pbo_job *j)
{
    size_t n = j->n_splits, sub = (size_t)1 << j->h, r = 0;
    uint32_t *rank = malloc(sub * sizeof *rank);
    size_t *at = calloc(sub + 1, sizeof *at);
    if (!rank || !at) {
        free(rank);
        free(at);
        return false;
    }
    for (int pc = 0; pc <= j->h; pc++)
        for (size_t hi = 0; hi < sub; hi++)
            if (__builtin_popcount((unsigned)hi) == pc)
                rank[hi] = (uint32_t)r++;
    for (int pass = 0; pass < 2; pass++)
        for (int side = 0; side < 2; side++) {
            size_t a0 = side ? n - j->pair_hi : j->pair_lo, a1 = side ? n - j->pair_lo : j->pair_hi;
            for (size_t a = a0; a < a1; a++) {
                size_t hi = j->masks[a] >> j->h;
                if (pass == 0) {
                    at[rank[hi] + 1]++;
                    continue;
                }
                size_t e = at[rank[hi]]++;
                j->steps[e] = (group_step){ .lo = (uint32_t)((j->masks[a] & (sub - 1)) * j->fstride),
                                            .hi = (uint32_t)(hi * j->fstride), .a = (uint32_t)a };
                j->step_of[job_local(j, a)] = (uint32_t)e;
            }
            if (pass == 0 && side == 1)
                for (size_t b = 0; b < sub; b++)
                    at[b + 1] += at[b];
        }
    size_t ns = 2 * (j->pair_hi - j->pair_lo);
    for (size_t e = 0; e < ns; e++)
        if (e == 0 || j->steps[e - 1].hi != j->steps[e].hi)
            j->runs[j->n_runs++] = (uint32_t)e;
    j->runs[j->n_runs] = (uint32_t)ns;
    free(rank);
    free(at);
    return true;
}

/* The walk's shared arrays and each thread's tables, both passes, and the
 * ranks (o's arrays allocated, its masks set); false when out of memory. */
static bool pbo_walk(const double *stats, size_t n_combos, int s, int threads, size_t chunk, int widest,
                     sebt_pbo *out)
{
    size_t n = out->n_splits;
    pbo_job shared = { .stats = stats, .s = s, .h = s / 2, .n_splits = n, .n_combos = n_combos,
                       .masks = out->mask, .chunk = chunk, .pair_filter = pair_filter(widest), .out = out };
    shared.lanes = shared.pair_filter == lane_filter();
    size_t *order = walk_order(stats, n_combos, s);
    shared.t2 = malloc(n * sizeof(double));
    shared.ot2 = malloc(n * sizeof(double));
    shared.ft2 = malloc(n * sizeof(float));
    shared.oft2 = malloc(n * sizeof(float));
    shared.below = calloc(n, sizeof(size_t));
    shared.equal = calloc(n, sizeof(size_t));
    shared.recount = calloc(n, sizeof(size_t));
    shared.order = order;
    /* A float table's rows an odd number of cache lines apart: a group of
     * 16 combos (one line of a row) then meets every set of the
     * first-level cache, not the eighth that rows 512 bytes apart meet. */
    shared.fstride = (chunk + 15) / 16 % 2 ? (chunk + 15) / 16 * 16 : (chunk + 15) / 16 * 16 + 16;
    size_t ftab_bytes = line_round((6 * ((size_t)1 << (s / 2)) * shared.fstride + 2 * chunk) * sizeof(float) +
                                   (chunk + 15) / 16);
    size_t rows_bytes = line_round((size_t)(3 * s) * chunk * sizeof(double));
    pbo_crew crew = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .n = threads };
    shared.crew = &crew;
    pbo_job *jobs = calloc((size_t)threads, sizeof *jobs);
    bool ok = jobs && order && shared.t2 && shared.ot2 && shared.ft2 && shared.oft2 && shared.below && shared.equal &&
              shared.recount;
    for (size_t i = 0; ok && i < n; i++) {
        out->best[i] = SIZE_MAX;
        out->is_sharpe[i] = shared.t2[i] = shared.ot2[i] = NAN;
        shared.ft2[i] = shared.oft2[i] = NAN;
    }
    for (int t = 0; ok && t < threads; t++) {
        jobs[t] = shared;
        jobs[t].pair_lo = n / 2 * (size_t)t / (size_t)threads;
        jobs[t].pair_hi = n / 2 * (size_t)(t + 1) / (size_t)threads;
        jobs[t].scratch = aligned_alloc(64, line_round(((size_t)1 << (s / 2)) * BUILD_LANES * sizeof(double)));
        jobs[t].sums = malloc(6 * chunk * sizeof(double));
        jobs[t].v = malloc(chunk * sizeof(double));
        jobs[t].rows = aligned_alloc(64, rows_bytes);
        jobs[t].ftab = aligned_alloc(64, ftab_bytes);
        jobs[t].lane_a = malloc((chunk + 15) / 16 * sizeof(uint16_t));
        jobs[t].lane_b = malloc((chunk + 15) / 16 * sizeof(uint16_t));
        size_t ns = 2 * (jobs[t].pair_hi - jobs[t].pair_lo);
        if (shared.lanes) {   /* walk_groups's */
            jobs[t].steps = malloc((ns + 1) * sizeof(group_step));
            jobs[t].step_of = malloc((ns + 1) * sizeof(uint32_t));
            jobs[t].runs = malloc((ns + 2) * sizeof(uint32_t));
            jobs[t].events = malloc(((size_t)1 << (s / 2)) * sizeof(group_event));
            jobs[t].dirty = malloc((ns + 1) * sizeof(uint32_t));
            jobs[t].dirty_flag = calloc(ns + 1, 1);
        }
        ok = jobs[t].scratch && jobs[t].sums && jobs[t].v && jobs[t].rows && jobs[t].ftab && jobs[t].lane_a &&
             jobs[t].lane_b &&
             (!shared.lanes || (jobs[t].steps && jobs[t].step_of && jobs[t].runs && jobs[t].events && jobs[t].dirty &&
                                jobs[t].dirty_flag && job_steps(&jobs[t])));
    }
    bool done = ok && pbo_passes(jobs, threads, out);
    for (int t = 0; jobs && t < threads; t++) {
        pbo_job *j = &jobs[t];
        void *own[] = { j->scratch, j->sums, j->v, j->rows, j->ftab, j->lane_a, j->lane_b,
                        j->steps, j->step_of, j->runs, j->events, j->dirty, j->dirty_flag };
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            free(own[i]);
    }
    free(jobs);
    pthread_cond_destroy(&crew.cv);
    pthread_mutex_destroy(&crew.mu);
    free(order);
    free(shared.t2);
    free(shared.ot2);
    free(shared.ft2);
    free(shared.oft2);
    free(shared.below);
    free(shared.equal);
    free(shared.recount);
    return done;
}

sebt_status sebt_pbo_compute(const double *stats, size_t n_combos, int s, int threads, sebt_pbo *out,
                             sebt_error *err)
{
    return pbo_compute_chunked(stats, n_combos, s, threads, 0, PBO_AVX512, out, err);
}

sebt_status pbo_compute_chunked(const double *stats, size_t n_combos, int s, int threads, size_t chunk, int widest,
                                sebt_pbo *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    sebt_status st = sebt_pbo_check(s, n_combos, err);
    if (st != SEBT_OK)
        return st;
    /* The float filter decides "fewer than 2 trades" on counts rounded to
     * float: a count that is not a whole number could round across 2 and be
     * decided otherwise than the exact path would. */
    for (size_t i = 0; i < n_combos; i++)
        for (int b = 0; b < s; b++) {
            double n = stats[(size_t)SEBT_OVERFIT_STATS * (size_t)s * i + (size_t)SEBT_OVERFIT_STATS * (size_t)b];
            if (!(n >= 0 && n <= 9007199254740992.0) || n != floor(n))
                return sebt_fail(err, SEBT_ERR_USAGE, "overfit: combo %zu, block %d: the trade count %.17g is not "
                                 "a whole number >= 0", i, b, n);
        }
    out->blocks = s;
    out->n_combos = n_combos;
    out->n_splits = choose(s, s / 2);
    size_t n = out->n_splits;
    out->mask = malloc(n * sizeof *out->mask);
    out->best = malloc(n * sizeof *out->best);
    out->is_sharpe = malloc(n * sizeof(double));
    out->oos_sharpe = malloc(n * sizeof(double));
    out->omega = malloc(n * sizeof(double));
    out->logit = malloc(n * sizeof(double));
    if (!out->mask || !out->best || !out->is_sharpe || !out->oos_sharpe || !out->omega || !out->logit) {
        sebt_pbo_free(out);
        return sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for %zu splits", n);
    }
    size_t k = 0;
    for (uint32_t m = 0; m < (1u << s) && k < n; m++)
        if (__builtin_popcount(m) == s / 2)
            out->mask[k++] = m;
    for (size_t i = 0; i < n; i++)
        out->oos_sharpe[i] = NAN;
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if ((size_t)threads > n / 2)
        threads = (int)(n / 2);
    if (threads > SEBT_PBO_MAX_THREADS)
        threads = SEBT_PBO_MAX_THREADS;
    if (chunk == 0 || chunk > n_combos)
        chunk = chunk_for(s / 2, n_combos);
    bool failed = !pbo_walk(stats, n_combos, s, threads, chunk, widest, out);
    if (failed) {
        sebt_pbo_free(out);
        return sebt_fail(err, SEBT_ERR_NOMEM, "overfit: out of memory for PBO's tables (%d threads)", threads);
    }
    st = pbo_summary(out, err);
    if (st != SEBT_OK)
        sebt_pbo_free(out);
    return st;
}
