/* fast_cpu: one batch of z windows (sweep.c's plan, steps 2 and 3): the
 * rolling and exact z-scores, each (z_window, atr_window) pair's candidate
 * bars, and per atr_window the union of its pairs' candidates with the
 * signal bitsets over it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sweep_internal.h"

static void zpair_free(fast_zpair *p)
{
    free(p->bar);
    free(p->idx);
    free(p->vz);
    free(p->tz);
    free(p->vthr);
    free(p->tthr);
    free(p->vbits);
    free(p->tbits);
}

static void aset_free(fast_aset *s)
{
    free(s->bar);
    free(s->atr);
    free(s->cthr);
    free(s->cbits);
    free(s->spans);
    free(s->ema_at);
    free(s->pairs);
    free(s->ebits);
    for (int f = 0; f < FAST_N_FILTERS; f++) {
        free(s->frows[f]);
        free(s->fbits[f]);
    }
}

/* The bars of one z window where its loosest thresholds could hold, with
 * the reference's vol_z there: the rolling vol_z (into scratch) as a
 * pre-filter, then the exact z at the bars it lets through. */
typedef struct {
    double vmin, cmin;             /* loosest among the batch's pairs of this z */
    size_t n;
    int32_t *bar;
    double *vz;
} zlist;

/* Rolling passes (the pre-filters) run in pieces of the series so that one
 * z window, or one pair, spreads over every thread: a streamed window
 * holds one or two of each, and their rolling passes, one thread each,
 * were a large part of what it computed before its combos could start. A piece of bars [t0, t1) starts its
 * pass w - 1 bars early (at bar 0 at the latest): its first value then
 * comes from the exact window moments, as at bar 0 of a whole pass, so the
 * pre-filter's bound (indicators.h) holds in every piece; the pass's NaN
 * and flat-window counts see whole windows there. A piece is at least 4
 * windows long, so the repeated warm-up costs under a quarter. The pieces
 * depend on the series and the window only; and a pre-filter only drops
 * bars that cannot pass on the exact z, so no result depends on them. */
#define ROLL_PIECE 16384

static size_t roll_piece(int32_t w)
{
    size_t len = 4 * (size_t)w;
    return len > ROLL_PIECE ? len : ROLL_PIECE;
}

static size_t roll_start(size_t t0, int32_t w)
{
    return t0 > (size_t)w - 1 ? t0 - ((size_t)w - 1) : 0;
}

/* Piece k: list list[k], bars [t0[k], t1[k]). */
typedef struct {
    size_t n;
    uint32_t *list;
    size_t *t0, *t1;
} rpieces;

/* Pieces of bars [0, len[i]) of each list i, for its window win[i]. */
static int rpieces_make(rpieces *rp, const size_t *len, const int32_t *win, size_t n_lists)
{
    size_t n = 0;
    for (size_t i = 0; i < n_lists; i++)
        n += (len[i] + roll_piece(win[i]) - 1) / roll_piece(win[i]);
    rp->n = 0;
    rp->list = malloc((n ? n : 1) * sizeof *rp->list);
    rp->t0 = malloc((n ? n : 1) * sizeof *rp->t0);
    rp->t1 = malloc((n ? n : 1) * sizeof *rp->t1);
    if (!rp->list || !rp->t0 || !rp->t1)
        return -1;
    for (size_t i = 0; i < n_lists; i++)
        for (size_t t = 0; t < len[i]; t += roll_piece(win[i])) {
            rp->list[rp->n] = (uint32_t)i;
            rp->t0[rp->n] = t;
            rp->t1[rp->n++] = len[i] - t < roll_piece(win[i]) ? len[i] : t + roll_piece(win[i]);
        }
    return 0;
}

static void rpieces_free(rpieces *rp)
{
    free(rp->list);
    free(rp->t0);
    free(rp->t1);
    memset(rp, 0, sizeof *rp);
}

/* The bars of [t0, t1) that z window zw's pre-filter lets through, into a
 * new array *out of *count bars. */
static int z_piece(const fast_sweep *w, const zlist *zl, int32_t zw, size_t t0, size_t t1, double *scratch,
                   int32_t **out, size_t *count)
{
    size_t s = roll_start(t0, zw);
    sebt_k_zscore(w->s->volume + s, (int64_t)(t1 - s), zw, scratch);
    double pre = sebt_k_z_prefilter(zl->vmin);
    size_t c = 0;
    for (size_t t = t0; t < t1; t++)
        c += w->cloc[t] > zl->cmin && scratch[t - s] > pre;
    *out = malloc((c ? c : 1) * sizeof **out);
    if (!*out)
        return -1;
    size_t k = 0;
    for (size_t t = t0; t < t1; t++)
        if (w->cloc[t] > zl->cmin && scratch[t - s] > pre)
            (*out)[k++] = (int32_t)t;
    *count = c;
    return 0;
}

/* Each z window's list: its pieces' bars, in order (a list's pieces are
 * consecutive, ascending). The exact vol_z there comes next, in pieces. */
static int z_gather(zlist *zls, size_t nz, const rpieces *rp, int32_t *const *sel, const size_t *cnt)
{
    for (size_t k = 0; k < rp->n; k++)
        zls[rp->list[k]].n += cnt[k];
    for (size_t z = 0; z < nz; z++) {
        zlist *zl = &zls[z];
        if (!(zl->vmin < INFINITY))
            continue;
        size_t m = zl->n ? zl->n : 1;
        zl->bar = malloc(m * sizeof *zl->bar);
        zl->vz = malloc(m * sizeof *zl->vz);
        if (!zl->bar || !zl->vz)
            return -1;
        zl->n = 0;
    }
    for (size_t k = 0; k < rp->n; k++) {
        zlist *zl = &zls[rp->list[k]];
        memcpy(zl->bar + zl->n, sel[k], cnt[k] * sizeof *sel[k]);
        zl->n += cnt[k];
    }
    return 0;
}

static void z_keep(zlist *zl)
{
    size_t k = 0;
    for (size_t i = 0; i < zl->n; i++)
        if (zl->vz[i] > zl->vmin) {
            zl->bar[k] = zl->bar[i];
            zl->vz[k] = zl->vz[i];
            k++;
        }
    zl->n = k;
}

/* Candidates of one pair: the bars where its loosest thresholds hold on the
 * reference's bits. From its z window's list (vol_z exact), the bars where
 * the pair's own vol_z and cloc thresholds hold (pair_select); there tr_z
 * is computed exactly. When they are so many that O(z_window) per bar costs
 * more than a rolling pass, the rolling tr_z pre-filters them first (*roll);
 * either way the NaN and flat windows are dropped by a pass over the bars,
 * in pieces (pair_piece), which marks the bars kept in *keep. */
static int pair_select(const fast_sweep *w, fast_zpair *p, const zlist *zl, uint8_t **keep, bool *roll)
{
    size_t n = w->n;
    int32_t zw = w->zs[p->z];
    size_t m = zl->n ? zl->n : 1;
    int32_t *bars = malloc(m * sizeof *bars);
    double *ve = malloc(m * sizeof *ve), *te = malloc(m * sizeof *te);
    *keep = malloc(m);
    if (!bars || !ve || !te || !*keep) {
        free(bars), free(ve), free(te), free(*keep);
        *keep = NULL;
        return -1;
    }
    size_t count = 0;
    for (size_t i = 0; i < zl->n; i++)
        if (zl->vz[i] > p->vmin && w->cloc[zl->bar[i]] > p->cmin) {
            bars[count] = zl->bar[i];
            ve[count] = zl->vz[i];
            count++;
        }
    /* ~2 z_window flops per exact bar against ~40 per bar for a rolling pass. */
    *roll = (double)count * 2.0 * (double)zw > 40.0 * (double)n;
    p->n = count;
    p->bar = bars;
    p->vz = ve;
    p->tz = te;
    return 0;
}

static size_t first_at_or_after(const int32_t *bar, size_t n, size_t t)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if ((size_t)bar[m] < t) a = m + 1; else b = m;
    }
    return a;
}

/* keep[i] for the pair's bars in [t0, t1). */
static void pair_piece(const fast_sweep *w, const fast_zpair *p, bool roll, size_t t0, size_t t1, uint8_t *keep,
                       double *scratch)
{
    size_t i0 = first_at_or_after(p->bar, p->n, t0), i1 = first_at_or_after(p->bar, p->n, t1);
    if (i0 == i1)
        return;
    int32_t zw = w->zs[p->z];
    const double *atr = w->atr_col[p->a];
    size_t s = roll_start(t0, zw), end = (size_t)p->bar[i1 - 1] + 1;
    if (roll) {
        sebt_k_zscore(atr + s, (int64_t)(end - s), zw, scratch);
        double pre = sebt_k_z_prefilter(p->tmin);
        for (size_t i = i0; i < i1; i++)
            keep[i] = scratch[(size_t)p->bar[i] - s] > pre;
        return;
    }
    /* NaN and flat windows are the reference's NaN (SPEC §3): decided by
     * counting, in one pass (bars ascending), as sebt_k_zscore does. */
    size_t ws = (size_t)zw, clean = 0, run = 0, i = i0;
    for (size_t t = s; t < end; t++) {
        clean = isnan(atr[t]) ? 0 : clean + 1;
        run = t > s && atr[t] == atr[t - 1] ? run + 1 : 1;
        if ((size_t)p->bar[i] != t)
            continue;
        keep[i++] = clean >= ws && run < ws;
    }
}

/* The pair's bars that pair_piece kept; the exact tr_z there comes next,
 * in pieces. */
static void pair_compact(fast_zpair *p, const uint8_t *keep)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (keep[i]) {
            p->bar[k] = p->bar[i];
            p->vz[k] = p->vz[i];
            k++;
        }
    p->n = k;
}

static int pair_keep(fast_zpair *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->tz[i] > p->tmin) {
            p->bar[k] = p->bar[i];
            p->vz[k] = p->vz[i];
            p->tz[k] = p->tz[i];
            k++;
        }
    p->n = k;
    p->idx = malloc((k ? k : 1) * sizeof *p->idx);
    return p->idx ? 0 : -1;
}

/* Bitset rows: row r has bit j set where val[j] > thr[r] (val has n
 * entries, positions pos[j] in U, or j itself when pos is NULL). */
static void threshold_bits(uint64_t *bits, size_t words, const double *thr, size_t n_thr, const double *val,
                           const int32_t *pos, size_t n)
{
    memset(bits, 0, n_thr * words * sizeof *bits);
    for (size_t r = 0; r < n_thr; r++) {
        uint64_t *row = bits + r * words;
        for (size_t j = 0; j < n; j++)
            if (val[j] > thr[r]) {
                size_t b = pos ? (size_t)pos[j] : j;
                row[b >> 6] |= (uint64_t)1 << (b & 63);
            }
    }
}

static int filter_row_cmp(const void *pa, const void *pb)
{
    const fast_filter_row *a = pa, *b = pb;
    int c = cmp_i(a->w, b->w);
    return c ? c : cmp_d(a->thr, b->thr);
}

/* Row of (w, thr) in rows[0 .. n), which holds it. */
static int32_t find_filter_row(const fast_filter_row *rows, size_t n, int32_t w, double thr)
{
    size_t a = 0, b = n;
    fast_filter_row key = { w, thr };
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (filter_row_cmp(&rows[m], &key) < 0) a = m + 1; else b = m;
    }
    return (int32_t)a;
}

/* Filter f's column at bar t over window wn (sebt_k_filter_<column>). */
static double filter_value(const sebt_k_bars *b, int f, int64_t t, int32_t wn)
{
    switch (f) {
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
    case FAST_F_##name: return sebt_k_filter_##column(b, t, wn);
#include "sebt/strategy.def"
    default: return NAN;
    }
}

/* Whether filter f holds for value v against threshold thr (its SPEC §4
 * comparison; NaN never holds). */
static bool filter_holds(int f, double v, double thr)
{
    switch (f) {
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
    case FAST_F_##name: return v SEBT_K_CMP_##cmp thr;
#include "sebt/strategy.def"
    default: return false;
    }
}

/* SPEC §4's term of filter f over set s's U, one row per distinct
 * (window, threshold) of its combos that switch it on: the column at U's
 * bars in the reference's bits (sebt_k_filter_<column>), once per window.
 * A set whose combos all leave the filter off gets no row and costs
 * nothing here. */
static int filter_rows(const fast_sweep *w, fast_aset *s, int f)
{
    const fast_combo_ref *R = w->refs;
    size_t k = 0;
    for (size_t q = s->q0; q < s->q1; q++)
        k += R[q].f_on[f];
    s->n_frows[f] = 0;
    if (k == 0)
        return 0;
    fast_filter_row *rows = malloc(k * sizeof *rows);
    if (!rows)
        return -1;
    k = 0;
    for (size_t q = s->q0; q < s->q1; q++)
        if (R[q].f_on[f])
            rows[k++] = (fast_filter_row){ R[q].f_w[f], R[q].f_thr[f] };
    qsort(rows, k, sizeof *rows, filter_row_cmp);
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (n == 0 || filter_row_cmp(&rows[i], &rows[n - 1]) != 0)
            rows[n++] = rows[i];
    s->frows[f] = rows;
    s->n_frows[f] = n;
    size_t wd = s->words ? s->words : 1, m = s->n ? s->n : 1;
    s->fbits[f] = calloc(n * wd, sizeof *s->fbits[f]);
    double *r = malloc(m * sizeof *r);
    if (!s->fbits[f] || !r) {
        free(r);
        return -1;
    }
    sebt_k_bars bars = sebt_k_bars_of(w->s);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || rows[i].w != rows[i - 1].w)
            for (size_t j = 0; j < s->n; j++)
                r[j] = filter_value(&bars, f, s->bar[j], rows[i].w);
        uint64_t *row = s->fbits[f] + i * s->words;
        for (size_t j = 0; j < s->n; j++)
            if (filter_holds(f, r[j], rows[i].thr))
                row[j >> 6] |= (uint64_t)1 << (j & 63);
    }
    free(r);
    return 0;
}

/* Everything of atr set s that does not need the EMAs: U, ATR at U, the
 * pairs' positions in U and their threshold bitsets, the cloc bitsets. */
static int aset_build(const fast_sweep *w, fast_aset *s, int32_t a, fast_zpair *pairs, size_t n_pairs, uint8_t *mask)
{
    size_t n = w->n;
    memset(mask, 0, n ? n : 1);
    for (size_t i = 0; i < n_pairs; i++)
        if (pairs[i].a == a)
            for (size_t k = 0; k < pairs[i].n; k++)
                mask[pairs[i].bar[k]] = 1;
    size_t count = 0;
    for (size_t t = 0; t < n; t++)
        count += mask[t];
    size_t m = count ? count : 1;
    s->n = count;
    s->words = (count + 63) / 64;
    s->bar = malloc(m * sizeof *s->bar);
    s->atr = malloc(m * sizeof *s->atr);
    if (!s->bar || !s->atr)
        return -1;
    size_t k = 0;
    for (size_t t = 0; t < n; t++)
        if (mask[t]) {
            s->bar[k] = (int32_t)t;
            s->atr[k] = w->atr_col[a][t];
            k++;
        }
    size_t wd = s->words ? s->words : 1;
    for (size_t i = 0; i < n_pairs; i++) {
        fast_zpair *p = &pairs[i];
        if (p->a != a)
            continue;
        size_t j = 0;
        for (size_t q = 0; q < p->n; q++) {
            while (s->bar[j] < p->bar[q])
                j++;
            p->idx[q] = (int32_t)j;
        }
        p->vbits = malloc((p->n_vthr ? p->n_vthr : 1) * wd * sizeof *p->vbits);
        p->tbits = malloc((p->n_tthr ? p->n_tthr : 1) * wd * sizeof *p->tbits);
        if (!p->vbits || !p->tbits)
            return -1;
        threshold_bits(p->vbits, s->words, p->vthr, p->n_vthr, p->vz, p->idx, p->n);
        threshold_bits(p->tbits, s->words, p->tthr, p->n_tthr, p->tz, p->idx, p->n);
    }
    double *cl = malloc(m * sizeof *cl);
    s->cbits = malloc((s->n_cthr ? s->n_cthr : 1) * wd * sizeof *s->cbits);
    s->ema_at = malloc((s->n_spans ? s->n_spans : 1) * m * sizeof *s->ema_at);
    s->ebits = malloc((s->n_pairs ? s->n_pairs : 1) * wd * sizeof *s->ebits);
    if (!cl || !s->cbits || !s->ema_at || !s->ebits) {
        free(cl);
        return -1;
    }
    for (size_t j = 0; j < count; j++)
        cl[j] = w->cloc[s->bar[j]];
    /* SPEC §4's cloc > cloc_min, per distinct cloc_min of the set. */
    memset(s->cbits, 0, s->n_cthr * s->words * sizeof *s->cbits);
    for (size_t r = 0; r < s->n_cthr; r++)
        for (size_t j = 0; j < count; j++)
            if (cl[j] > s->cthr[r])
                s->cbits[r * s->words + (j >> 6)] |= (uint64_t)1 << (j & 63);
    free(cl);
    for (int f = 0; f < FAST_N_FILTERS; f++)
        if (filter_rows(w, s, f) != 0)
            return -1;
    return 0;
}

void fast_zbatch_free(fast_zbatch *zb)
{
    for (size_t i = 0; zb->pairs && i < zb->n_pairs; i++)
        zpair_free(&zb->pairs[i]);
    free(zb->pairs);
    for (size_t i = 0; zb->sets && i < zb->n_sets; i++)
        aset_free(&zb->sets[i]);
    free(zb->sets);
    free(zb->set_of_atr);
    free(zb->task_start);
    memset(zb, 0, sizeof *zb);
}

/* A batch under construction: what the steps of fast_zbatch_build hand on. */
typedef struct {
    fast_sweep *w;
    size_t q0, q1, z0, nz;         /* its combos refs[q0 .. q1), its z slots [z0, z0 + nz) */
    zlist *zls;                    /* per z window of the batch */
    fast_zpair *pairs;             /* per (z_window, atr_window) */
    size_t n_pairs;
    fast_aset *sets;               /* per atr_window */
    size_t n_sets;
    int32_t *set_atr;              /* the atr slot of each set */
} zbuild;

/* Step 1: the atr sets (refs are sorted by atr slot within the batch) and
 * the (z, atr) pairs, each with the loosest thresholds of its combos. */
static int group_combos(zbuild *b)
{
    fast_combo_ref *R = b->w->refs;
    size_t q0 = b->q0, q1 = b->q1, nz = b->nz, z0 = b->z0, n_atrs = b->w->n_atrs;
    for (size_t q = q0; q < q1; q++)
        if (q == q0 || R[q].a != R[q - 1].a)
            b->n_sets++;
    b->sets = calloc(b->n_sets ? b->n_sets : 1, sizeof *b->sets);
    b->set_atr = malloc((b->n_sets ? b->n_sets : 1) * sizeof *b->set_atr);
    size_t n_slots = n_atrs * nz > 0 ? n_atrs * nz : 1;
    int32_t *pair_of = malloc(n_slots * sizeof *pair_of);
    if (!b->sets || !b->set_atr || !pair_of) {
        free(pair_of);
        return -1;
    }
    for (size_t i = 0; i < n_atrs * nz; i++)
        pair_of[i] = -1;
    size_t si = (size_t)-1;
    for (size_t q = q0; q < q1; q++) {
        if (q == q0 || R[q].a != R[q - 1].a) {
            b->sets[++si].q0 = q;
            b->set_atr[si] = R[q].a;
        }
        b->sets[si].q1 = q + 1;
        int32_t *slot = &pair_of[(size_t)R[q].a * nz + (size_t)(R[q].z - (int32_t)z0)];
        if (*slot < 0)
            *slot = (int32_t)b->n_pairs++;
    }
    b->pairs = calloc(b->n_pairs ? b->n_pairs : 1, sizeof *b->pairs);
    if (!b->pairs) {
        free(pair_of);
        return -1;
    }
    for (size_t i = 0; i < b->n_pairs; i++)
        b->pairs[i].vmin = b->pairs[i].tmin = b->pairs[i].cmin = INFINITY;
    for (size_t q = q0; q < q1; q++) {
        R[q].pair = pair_of[(size_t)R[q].a * nz + (size_t)(R[q].z - (int32_t)z0)];
        fast_zpair *p = &b->pairs[R[q].pair];
        p->z = R[q].z;
        p->a = R[q].a;
        p->vmin = fmin(p->vmin, R[q].vz);
        p->tmin = fmin(p->tmin, R[q].tz);
        p->cmin = fmin(p->cmin, R[q].cm);
    }
    free(pair_of);
    return 0;
}

/* A list of n distinct values trimmed to its length (at least one, so the
 * pointer stays valid); the list is freed when that fails. */
static void *trim_list(void *list, size_t n, size_t size)
{
    void *t = realloc(list, (n ? n : 1) * size);
    if (!t)
        free(list);
    return t;
}

/* Step 2a: pair i's distinct vol_z (which 0) or tr_z (which 1) thresholds,
 * ascending (the rows of its sebt_k_sigbits bitsets), from its combos
 * R[order[start[i] .. start[i + 1])). */
static int pair_thresholds(zbuild *b, size_t i, int which, const size_t *start, const size_t *order)
{
    const fast_combo_ref *R = b->w->refs;
    size_t k = 0, len = start[i + 1] - start[i];
    double *dv = malloc((len ? len : 1) * sizeof *dv);
    if (!dv)
        return -1;
    for (size_t j = start[i]; j < start[i + 1]; j++)
        dv[k++] = which ? R[order[j]].tz : R[order[j]].vz;
    k = uniq_d(dv, k);
    double *thr = trim_list(dv, k, sizeof *thr);
    if (!thr)
        return -1;
    if (which) {
        b->pairs[i].tthr = thr;
        b->pairs[i].n_tthr = k;
    } else {
        b->pairs[i].vthr = thr;
        b->pairs[i].n_vthr = k;
    }
    return 0;
}

/* The distinct (fast, slow) EMA pairs of set s, sorted, into s->pairs
 * (flattened); pv: scratch for 2 (q1 - q0) spans. */
static int set_ema_pairs(const fast_combo_ref *R, fast_aset *s, int32_t *pv)
{
    size_t np = 0;
    for (size_t q = s->q0; q < s->q1; q++)
        if (q == s->q0 || R[q].fast != R[q - 1].fast || R[q].slow != R[q - 1].slow ||
            R[q].z != R[q - 1].z || exit_cmp(&R[q], &R[q - 1])) {
            pv[2 * np] = R[q].fast;
            pv[2 * np + 1] = R[q].slow;
            np++;
        }
    s->pairs = malloc((np ? np : 1) * 2 * sizeof *s->pairs);
    /* As fast * 2^31 + slow, sorted, repeats dropped. */
    int64_t *keys = malloc((np ? np : 1) * sizeof *keys);
    if (!s->pairs || !keys) {
        free(keys);
        return -1;
    }
    for (size_t i = 0; i < np; i++)
        keys[i] = ((int64_t)pv[2 * i] << 31) | pv[2 * i + 1];
    for (size_t i = 1; i < np; i++) {   /* insertion sort: few pairs, mostly sorted */
        int64_t x = keys[i];
        size_t j = i;
        while (j > 0 && keys[j - 1] > x) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = x;
    }
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || keys[i] != keys[u - 1])
            keys[u++] = keys[i];
    s->n_pairs = u;
    for (size_t i = 0; i < u; i++) {
        s->pairs[2 * i] = (int32_t)(keys[i] >> 31);
        s->pairs[2 * i + 1] = (int32_t)(keys[i] & 0x7fffffff);
    }
    free(keys);
    return 0;
}

/* Step 2b: set s's distinct cloc_min values (which 0), EMA spans (1) or
 * EMA pairs (2). */
static int set_distinct(const fast_combo_ref *R, fast_aset *s, int which)
{
    size_t k = 0, cnt = s->q1 - s->q0 ? s->q1 - s->q0 : 1;
    if (which == 0) {
        double *dv = malloc(cnt * sizeof *dv);
        if (!dv)
            return -1;
        for (size_t q = s->q0; q < s->q1; q++)
            dv[k++] = R[q].cm;
        s->n_cthr = uniq_d(dv, k);
        s->cthr = trim_list(dv, s->n_cthr, sizeof *s->cthr);
        return s->cthr ? 0 : -1;
    }
    int32_t *iv = malloc(2 * cnt * sizeof *iv);
    if (!iv)
        return -1;
    if (which == 2) {
        int rc = set_ema_pairs(R, s, iv);
        free(iv);
        return rc;
    }
    for (size_t q = s->q0; q < s->q1; q++) {
        iv[k++] = R[q].fast;
        iv[k++] = R[q].slow;
    }
    s->n_spans = uniq_i32(iv, k);
    s->spans = trim_list(iv, s->n_spans, sizeof *s->spans);
    return s->spans ? 0 : -1;
}

/* Step 2: the distinct values the bitsets have rows for, each list a task
 * of its own on the team (serial, they were a few percent of a sweep's
 * compute with the other threads idle). The combos are bucketed by pair
 * first (one pass), so the cost does not grow with pairs x combos. */
static int distinct_values(zbuild *b)
{
    const fast_combo_ref *R = b->w->refs;
    size_t np = b->n_pairs, cnt = b->q1 - b->q0;
    size_t *start = calloc(np + 1, sizeof *start);
    size_t *order = malloc((cnt ? cnt : 1) * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return -1;
    }
    for (size_t q = b->q0; q < b->q1; q++)
        start[R[q].pair + 1]++;
    for (size_t i = 0; i < np; i++)
        start[i + 1] += start[i];
    for (size_t q = b->q0; q < b->q1; q++)
        order[start[R[q].pair]++] = q;
    for (size_t i = np; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    size_t n_tasks = 2 * np + 3 * b->n_sets;
    int failed = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(plan_threads(b->w, cnt)) reduction(|:failed)
    for (size_t k = 0; k < n_tasks; k++) {
        if (failed)
            continue;
        if (k < 2 * np)
            failed = pair_thresholds(b, k / 2, (int)(k % 2), start, order) != 0;
        else
            failed = set_distinct(R, &b->sets[(k - 2 * np) / 3], (int)((k - 2 * np) % 3)) != 0;
    }
    free(start);
    free(order);
    return failed ? -1 : 0;
}

/* The exact z-scores of many bar lists, cut into pieces of Z_PIECE bars
 * so that a batch of one or two z windows still spreads over every thread:
 * piece k covers list list[k], bars [from[k], from[k] + Z_PIECE). Each
 * bar's z is computed alone, so the cut changes no bit. */
#define Z_PIECE 256
typedef struct {
    size_t n;
    uint32_t *list;
    size_t *from;
} zpieces;

static int zpieces_make(zpieces *zp, const size_t *len, size_t n_lists)
{
    size_t n = 0;
    for (size_t i = 0; i < n_lists; i++)
        n += (len[i] + Z_PIECE - 1) / Z_PIECE;
    zp->n = 0;
    zp->list = malloc((n ? n : 1) * sizeof *zp->list);
    zp->from = malloc((n ? n : 1) * sizeof *zp->from);
    if (!zp->list || !zp->from)
        return -1;
    zp->n = n;
    n = 0;
    for (size_t i = 0; i < n_lists; i++)
        for (size_t f = 0; f < len[i]; f += Z_PIECE) {
            zp->list[n] = (uint32_t)i;
            zp->from[n++] = f;
        }
    return 0;
}

static void zpieces_free(zpieces *zp)
{
    free(zp->list);
    free(zp->from);
    zp->list = NULL;
    zp->from = NULL;
}

/* Step 3: per z window of the batch, the bars its vol_z thresholds let
 * through (exact vol_z); then each pair's candidates (exact tr_z): the
 * bars where some combo of the pair could signal. One parallel region:
 * the rolling pre-filters in pieces of the series (rpieces), the exact
 * z-scores in pieces of the lists (zpieces). */
static int find_candidates(zbuild *b)
{
    size_t nz = b->nz, z0 = b->z0, n_pairs = b->n_pairs, n = b->w->n, cols = n ? n : 1;
    const fast_sweep *w = b->w;
    zlist *zls = b->zls;
    fast_zpair *pairs = b->pairs;
    for (size_t i = 0; i < n_pairs; i++) {
        zlist *zl = &zls[(size_t)pairs[i].z - z0];
        zl->vmin = fmin(zl->vmin, pairs[i].vmin);
        zl->cmin = fmin(zl->cmin, pairs[i].cmin);
    }
    size_t nl = nz > n_pairs ? nz : n_pairs;
    size_t *len = malloc((nl ? nl : 1) * sizeof *len);
    int32_t *win = malloc((nl ? nl : 1) * sizeof *win);
    uint8_t **keep = calloc(n_pairs ? n_pairs : 1, sizeof *keep);
    bool *roll = calloc(n_pairs ? n_pairs : 1, sizeof *roll);
    rpieces rp = { 0 };
    zpieces zp = { 0 };
    int32_t **sel = NULL;
    size_t *cnt = NULL;
    int failed = !len || !win || !keep || !roll;
    if (!failed) {
        for (size_t z = 0; z < nz; z++) {
            len[z] = zls[z].vmin < INFINITY ? n : 0;
            win[z] = w->zs[z0 + z];
        }
        failed = rpieces_make(&rp, len, win, nz) != 0;
    }
    if (!failed) {
        sel = calloc(rp.n ? rp.n : 1, sizeof *sel);
        cnt = calloc(rp.n ? rp.n : 1, sizeof *cnt);
        failed = !sel || !cnt;
    }
    if (failed) {
        free(len), free(win), free(keep), free(roll), free(sel), free(cnt);
        rpieces_free(&rp);
        return -1;
    }
    #pragma omp parallel num_threads(w->threads)
    {
        double *scratch = malloc(cols * sizeof(double));
        if (!scratch) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < rp.n; k++) {
            uint32_t z = rp.list[k];
            if (scratch && z_piece(w, &zls[z], win[z], rp.t0[k], rp.t1[k], scratch, &sel[k], &cnt[k]) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        }
        #pragma omp single
        {
            if (!failed && z_gather(zls, nz, &rp, sel, cnt) != 0)
                failed = 1;
            for (size_t k = 0; k < rp.n; k++)
                free(sel[k]);
            for (size_t z = 0; z < nz; z++)
                len[z] = failed ? 0 : zls[z].n;
            if (zpieces_make(&zp, len, nz) != 0)
                failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < zp.n; k++) {
            zlist *zl = &zls[zp.list[k]];
            size_t f = zp.from[k], m = zl->n - f < Z_PIECE ? zl->n - f : Z_PIECE;
            fast_zscore_exact_at(w->s->volume, w->zs[z0 + zp.list[k]], zl->bar + f, m, zl->vz + f);
        }
        int ok;   /* read once after a barrier: other threads may set failed inside a loop */
        #pragma omp atomic read
        ok = failed;
        ok = !ok;
        #pragma omp for schedule(static)
        for (size_t z = 0; z < nz; z++)
            if (ok && zls[z].vmin < INFINITY)
                z_keep(&zls[z]);
        #pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < n_pairs; i++)
            if (ok && pair_select(w, &pairs[i], &zls[(size_t)pairs[i].z - z0], &keep[i], &roll[i]) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        #pragma omp single
        {
            rpieces_free(&rp);
            for (size_t i = 0; i < n_pairs; i++) {
                len[i] = failed || !pairs[i].n ? 0 : (size_t)pairs[i].bar[pairs[i].n - 1] + 1;
                win[i] = w->zs[pairs[i].z];
            }
            if (rpieces_make(&rp, len, win, n_pairs) != 0)
                failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < rp.n; k++) {
            uint32_t i = rp.list[k];
            if (scratch)
                pair_piece(w, &pairs[i], roll[i], rp.t0[k], rp.t1[k], keep[i], scratch);
        }
        #pragma omp atomic read
        ok = failed;
        ok = !ok;
        #pragma omp for schedule(static)
        for (size_t i = 0; i < n_pairs; i++)
            if (ok)
                pair_compact(&pairs[i], keep[i]);
        #pragma omp single
        {
            zpieces_free(&zp);
            for (size_t i = 0; i < n_pairs; i++)
                len[i] = failed ? 0 : pairs[i].n;
            if (zpieces_make(&zp, len, n_pairs) != 0)
                failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < zp.n; k++) {
            fast_zpair *p = &pairs[zp.list[k]];
            size_t f = zp.from[k], m = p->n - f < Z_PIECE ? p->n - f : Z_PIECE;
            fast_zscore_exact_at(w->atr_col[p->a], w->zs[p->z], p->bar + f, m, p->tz + f);
        }
        #pragma omp atomic read
        ok = failed;
        ok = !ok;
        #pragma omp for schedule(static)
        for (size_t i = 0; i < n_pairs; i++)
            if (ok && pair_keep(&pairs[i]) != 0) {
                #pragma omp atomic write
                failed = 1;
            }
        free(scratch);
    }
    for (size_t i = 0; i < n_pairs; i++)
        free(keep[i]);
    rpieces_free(&rp);
    zpieces_free(&zp);
    free(len), free(win), free(keep), free(roll), free(sel), free(cnt);
    return failed ? -1 : 0;
}

/* Step 4: U per atr set (sebt_k_union) and the threshold bitsets over it
 * (vol_z, tr_z, cloc rows of sebt_k_sigbits). */
static int build_unions(zbuild *b)
{
    int failed = 0;
    size_t cols = b->w->n ? b->w->n : 1;
    #pragma omp parallel num_threads(b->w->threads) reduction(|:failed)
    {
        uint8_t *mask = malloc(cols);
        if (!mask)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t si = 0; si < b->n_sets; si++)
            if (!failed && aset_build(b->w, &b->sets[si], b->set_atr[si], b->pairs, b->n_pairs, mask) != 0)
                failed = 1;
        free(mask);
    }
    return failed ? -1 : 0;
}

/* Step 5: the EMA rows of sebt_k_sigbits: each distinct span of the batch
 * computed once, kept only at each set's U, then ema_f < ema_s per pair. */
static int ema_bits(zbuild *b)
{
    const fast_sweep *w = b->w;
    size_t n = w->n, cols = n ? n : 1, n_span_all = 0;
    fast_aset *sets = b->sets;
    for (size_t si = 0; si < b->n_sets; si++)
        n_span_all += sets[si].n_spans;
    int32_t *span_list = malloc((n_span_all ? n_span_all : 1) * sizeof *span_list);
    if (!span_list)
        return -1;
    n_span_all = 0;
    for (size_t si = 0; si < b->n_sets; si++)
        for (size_t k = 0; k < sets[si].n_spans; k++)
            span_list[n_span_all++] = sets[si].spans[k];
    n_span_all = uniq_i32(span_list, n_span_all);
    int failed = 0;
    #pragma omp parallel num_threads(w->threads) reduction(|:failed)
    {
        double *col = malloc(cols * sizeof(double));
        if (!col)
            failed = 1;
        #pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < n_span_all; k++) {
            if (failed)
                continue;
            sebt_k_ema(w->s->close, (int64_t)n, span_list[k], col);
            for (size_t si = 0; si < b->n_sets; si++) {
                fast_aset *s = &sets[si];
                int32_t j = find_i32(s->spans, s->n_spans, span_list[k]);
                if ((size_t)j >= s->n_spans || s->spans[j] != span_list[k])
                    continue;
                double *dst = s->ema_at + (size_t)j * s->n;
                for (size_t u = 0; u < s->n; u++)
                    dst[u] = col[s->bar[u]];
            }
        }
        free(col);
    }
    free(span_list);
    if (failed)
        return -1;
    for (size_t si = 0; si < b->n_sets; si++) {
        fast_aset *s = &sets[si];
        memset(s->ebits, 0, s->n_pairs * s->words * sizeof *s->ebits);
        for (size_t pi = 0; pi < s->n_pairs; pi++) {
            const double *ef = s->ema_at + (size_t)find_i32(s->spans, s->n_spans, s->pairs[2 * pi]) * s->n;
            const double *es = s->ema_at + (size_t)find_i32(s->spans, s->n_spans, s->pairs[2 * pi + 1]) * s->n;
            uint64_t *row = s->ebits + pi * s->words;
            for (size_t u = 0; u < s->n; u++)
                if (ef[u] < es[u])
                    row[u >> 6] |= (uint64_t)1 << (u & 63);
        }
    }
    return 0;
}

/* Step 6: each combo's rows (its sebt_k_sigbits): vol_z, tr_z and cloc
 * threshold slots, EMA pair slot, each filter's row (-1: off). */
static void combo_slots(zbuild *b)
{
    fast_combo_ref *R = b->w->refs;
    for (size_t si = 0; si < b->n_sets; si++) {
        const fast_aset *s = &b->sets[si];
        #pragma omp parallel for schedule(static) num_threads(plan_threads(b->w, s->q1 - s->q0))
        for (size_t q = s->q0; q < s->q1; q++) {
            const fast_zpair *p = &b->pairs[R[q].pair];
            R[q].vslot = find_d(p->vthr, p->n_vthr, R[q].vz);
            R[q].tslot = find_d(p->tthr, p->n_tthr, R[q].tz);
            R[q].cslot = find_d(s->cthr, s->n_cthr, R[q].cm);
            for (int f = 0; f < FAST_N_FILTERS; f++)
                R[q].fslot[f] = R[q].f_on[f] ? find_filter_row(s->frows[f], s->n_frows[f], R[q].f_w[f], R[q].f_thr[f])
                                             : -1;
            int64_t key = ((int64_t)R[q].fast << 31) | R[q].slow;
            size_t lo = 0, hi = s->n_pairs;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int64_t k2 = ((int64_t)s->pairs[2 * mid] << 31) | s->pairs[2 * mid + 1];
                if (k2 < key)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            R[q].ema = (int32_t)lo;
        }
    }
}

/* Step 7: the tasks: runs of one exit key (one sebt_k_memo each), split so
 * that every thread gets work. A task's memo is its own (filled lazily),
 * so the split changes what is computed twice, never a result. */
static int split_tasks(zbuild *b, size_t **task_start_out, size_t *n_tasks_out)
{
    const fast_combo_ref *R = b->w->refs;
    size_t q0 = b->q0, q1 = b->q1;
    size_t task_size = (q1 - q0) / ((size_t)b->w->threads * 8);
    if (task_size < 32)
        task_size = 32;
    /* Where the exit key changes, found on every thread; the cut itself
     * (a byte scan) stays serial. */
    uint8_t *edge = malloc(q1 - q0 ? q1 - q0 : 1);
    if (!edge)
        return -1;
    #pragma omp parallel for schedule(static) num_threads(plan_threads(b->w, q1 - q0))
    for (size_t q = q0; q < q1; q++)
        edge[q - q0] = q == q0 || exit_cmp(&R[q], &R[q - 1]) != 0;
    size_t n_tasks = 0;
    for (size_t q = q0, run = 0; q < q1; q++, run++)
        if (edge[q - q0] || run >= task_size) {
            n_tasks++;
            run = 0;
        }
    size_t *task_start = malloc((n_tasks + 1) * sizeof *task_start);
    if (!task_start) {
        free(edge);
        return -1;
    }
    n_tasks = 0;
    for (size_t q = q0, run = 0; q < q1; q++, run++)
        if (edge[q - q0] || run >= task_size) {
            task_start[n_tasks++] = q;
            run = 0;
        }
    task_start[n_tasks] = q1;
    free(edge);
    *task_start_out = task_start;
    *n_tasks_out = n_tasks;
    return 0;
}

static void zbuild_free(zbuild *b)
{
    for (size_t z = 0; b->zls && z < b->nz; z++) {
        free(b->zls[z].bar);
        free(b->zls[z].vz);
    }
    free(b->zls);
    for (size_t i = 0; b->pairs && i < b->n_pairs; i++)
        zpair_free(&b->pairs[i]);
    free(b->pairs);
    for (size_t i = 0; b->sets && i < b->n_sets; i++)
        aset_free(&b->sets[i]);
    free(b->sets);
    free(b->set_atr);
}

/* Everything the combos refs[q0 .. q1) of one batch read (their z slots
 * are [z0, z1)), in the order of the plan at the top of combo_kernel.h:
 * candidates, unions, bitsets, each combo's bitset slots, the tasks (one
 * memo each). fast_cpu and the cuda backend both run combos from it. */
sebt_status fast_zbatch_build(fast_sweep *w, size_t q0, size_t q1, size_t z0, size_t z1, fast_zbatch *zb,
                              sebt_error *err)
{
    memset(zb, 0, sizeof *zb);
    zbuild b = { .w = w, .q0 = q0, .q1 = q1, .z0 = z0, .nz = z1 - z0 };
    b.zls = calloc(b.nz ? b.nz : 1, sizeof *b.zls);
    size_t *task_start = NULL, n_tasks = 0;
    int32_t *set_of_atr = NULL;
    if (!b.zls)
        goto nomem;
    for (size_t z = 0; z < b.nz; z++)
        b.zls[z].vmin = b.zls[z].cmin = INFINITY;
    if (group_combos(&b) != 0 || distinct_values(&b) != 0 || find_candidates(&b) != 0 ||
        build_unions(&b) != 0 || ema_bits(&b) != 0)
        goto nomem;
    combo_slots(&b);
    if (split_tasks(&b, &task_start, &n_tasks) != 0)
        goto nomem;
    set_of_atr = malloc((w->n_atrs ? w->n_atrs : 1) * sizeof *set_of_atr);
    if (!set_of_atr) {
        free(task_start);
        goto nomem;
    }
    for (size_t si = 0; si < b.n_sets; si++)
        set_of_atr[b.set_atr[si]] = (int32_t)si;
    size_t umax = 1;
    for (size_t si = 0; si < b.n_sets; si++)
        if (b.sets[si].n + 1 > umax)
            umax = b.sets[si].n + 1;

    *zb = (fast_zbatch){ .q0 = q0, .q1 = q1, .pairs = b.pairs, .n_pairs = b.n_pairs, .sets = b.sets,
                         .n_sets = b.n_sets, .set_of_atr = set_of_atr, .task_start = task_start,
                         .n_tasks = n_tasks, .umax = umax };
    b.pairs = NULL;
    b.sets = NULL;
    zbuild_free(&b);
    return SEBT_OK;
nomem:
    zbuild_free(&b);
    return sebt_fail(err, SEBT_ERR_NOMEM, "fast_cpu: out of memory for a batch of %zu combos over %zu bars",
                     q1 - q0, w->n);
}
