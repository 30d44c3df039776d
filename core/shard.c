/* Partitions and fingerprints for shards, ranks and checkpoints
 * (include/sebt/shard.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/shard.h"

#include "le_bytes.h"

/* ---- partition ------------------------------------------------------------ */

typedef struct {
    int32_t key[4];
    size_t k;          /* position in idx */
} keyed;

static int keyed_cmp(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    for (int i = 0; i < 4; i++)
        if (a->key[i] != b->key[i])
            return a->key[i] < b->key[i] ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

typedef struct {
    size_t start, count;    /* a run of the sorted array */
    size_t first;           /* smallest position in it: the tie-break */
    uint64_t cost;
} piece;

static int piece_cmp(const void *pa, const void *pb)
{
    const piece *a = pa, *b = pb;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

/* A min-heap of parts by (load, part): the least loaded part, lowest
 * number first, takes the next piece (longest-processing-time first). */
typedef struct {
    uint64_t load;
    uint32_t part;
} slot;

static int slot_less(const slot *a, const slot *b)
{
    return a->load != b->load ? a->load < b->load : a->part < b->part;
}

static void sift_down(slot *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && slot_less(&h[l], &h[m]))
            m = l;
        if (r < n && slot_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        slot t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

sebt_status sebt_partition(const sebt_params *combos, const size_t *idx, size_t n, uint32_t parts,
                           uint32_t *part_of, sebt_error *err)
{
    if (parts == 0)
        return sebt_fail(err, SEBT_ERR_USAGE, "partition: at least one part is needed");
    if (n == 0)
        return SEBT_OK;
    if (parts == 1) {
        memset(part_of, 0, n * sizeof *part_of);
        return SEBT_OK;
    }
    keyed *ks = malloc(n * sizeof *ks);
    piece *pieces = NULL;
    slot *heap = malloc((size_t)parts * sizeof *heap);
    if (!ks || !heap) {
        free(ks);
        free(heap);
        return sebt_fail(err, SEBT_ERR_NOMEM, "partition: out of memory for %zu combos", n);
    }
    for (size_t k = 0; k < n; k++) {
        const sebt_params *p = &combos[idx[k]];
        ks[k].key[0] = p->atr_window;
        ks[k].key[1] = p->z_window;
        ks[k].key[2] = p->ema_fast;
        ks[k].key[3] = p->ema_slow;
        ks[k].k = k;
    }
    qsort(ks, n, sizeof *ks, keyed_cmp);

    size_t n_groups = 0;
    for (size_t k = 0; k < n; k++)
        n_groups += k == 0 || memcmp(ks[k - 1].key, ks[k].key, sizeof ks[k].key) != 0;
    const uint64_t w = SEBT_PARTITION_GROUP_COST;
    uint64_t total = (uint64_t)n + w * (uint64_t)n_groups;
    uint64_t target = (total + parts - 1) / parts;
    if (target <= w)
        target = w + 1;
    uint64_t room = target - w;     /* combos a piece may hold */

    /* Pieces: whole groups, or a group cut in near-equal runs when it
     * alone is more than a part's share. */
    size_t n_pieces = 0, cap = 0;
    for (size_t g0 = 0; g0 < n;) {
        size_t g1 = g0 + 1;
        while (g1 < n && memcmp(ks[g1].key, ks[g0].key, sizeof ks[g0].key) == 0)
            g1++;
        size_t c = g1 - g0;
        size_t m = (size_t)(((uint64_t)c + room - 1) / room);
        if (n_pieces + m > cap) {
            size_t ncap = cap ? cap * 2 : 64;
            while (ncap < n_pieces + m)
                ncap *= 2;
            piece *np = realloc(pieces, ncap * sizeof *np);
            if (!np) {
                free(ks);
                free(heap);
                free(pieces);
                return sebt_fail(err, SEBT_ERR_NOMEM, "partition: out of memory for %zu combos", n);
            }
            pieces = np;
            cap = ncap;
        }
        size_t at = g0;
        for (size_t j = 0; j < m; j++) {
            size_t len = c / m + (j < c % m ? 1 : 0);
            piece *pc = &pieces[n_pieces++];
            pc->start = at;
            pc->count = len;
            pc->first = ks[at].k;   /* sorted by position within the group */
            pc->cost = (uint64_t)len + w;
            at += len;
        }
        g0 = g1;
    }
    qsort(pieces, n_pieces, sizeof *pieces, piece_cmp);
    for (uint32_t p = 0; p < parts; p++) {
        heap[p].load = 0;
        heap[p].part = p;
    }
    for (size_t i = 0; i < n_pieces; i++) {
        const piece *pc = &pieces[i];
        uint32_t p = heap[0].part;
        for (size_t j = pc->start; j < pc->start + pc->count; j++)
            part_of[ks[j].k] = p;
        heap[0].load += pc->cost;
        sift_down(heap, parts, 0);
    }
    free(ks);
    free(pieces);
    free(heap);
    return SEBT_OK;
}

/* ---- fingerprints ---------------------------------------------------------- */

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return h;
}

uint64_t sebt_fnv1a(uint64_t h, const void *data, size_t len)
{
    return fnv(h ? h : FNV_OFFSET, data, len);
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return fnv(h, b, 8);
}

static uint64_t fnv_doubles(uint64_t h, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        h = fnv_u64(h, bits);
    }
    return h;
}

uint64_t sebt_series_fingerprint(const sebt_series *s)
{
    uint64_t h = fnv_u64(FNV_OFFSET, (uint64_t)s->n);
    for (size_t t = 0; t < s->n; t++)
        h = fnv_u64(h, (uint64_t)s->ts[t]);
    h = fnv_doubles(h, s->open, s->n);
    h = fnv_doubles(h, s->high, s->n);
    h = fnv_doubles(h, s->low, s->n);
    h = fnv_doubles(h, s->close, s->n);
    return fnv_doubles(h, s->volume, s->n);
}

uint64_t sebt_combos_fingerprint(const sebt_params *combos, size_t n)
{
    uint64_t h = fnv_u64(FNV_OFFSET, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        const char *base = (const char *)&combos[i];
        for (int f = 0; f < SEBT_N_PARAMS; f++) {
            const sebt_param_info *info = &sebt_param_table[f];
            uint64_t v = 0;
            switch (info->type) {
            case SEBT_PARAM_INT: { int32_t x; memcpy(&x, base + info->offset, sizeof x); v = (uint64_t)(uint32_t)x; break; }
            case SEBT_PARAM_DOUBLE: memcpy(&v, base + info->offset, sizeof v); break;
            case SEBT_PARAM_BOOL: { bool x; memcpy(&x, base + info->offset, sizeof x); v = x ? 1 : 0; break; }
            }
            h = fnv_u64(h, v);
        }
    }
    return h;
}

/* ---- records ----------------------------------------------------------------- */

void sebt_sweep_record_pack(const sebt_sweep_record *r, unsigned char out[SEBT_SWEEP_RECORD_BYTES])
{
    put_u64(out, r->combo);
    put_u64(out + 8, (uint64_t)r->metrics.n);
    put_f64(out + 16, r->metrics.win_rate);
    put_f64(out + 24, r->metrics.avg_r);
    put_f64(out + 32, r->metrics.total_pnl);
    put_f64(out + 40, r->metrics.max_dd);
    put_f64(out + 48, r->metrics.sharpe);
    put_u64(out + 56, r->valid_bars);
    put_u64(out + 64, r->open_at_end);
}

void sebt_sweep_record_unpack(const unsigned char in[SEBT_SWEEP_RECORD_BYTES], sebt_sweep_record *r)
{
    memset(r, 0, sizeof *r);
    r->combo = get_u64(in);
    r->metrics.n = (int64_t)get_u64(in + 8);
    r->metrics.win_rate = get_f64(in + 16);
    r->metrics.avg_r = get_f64(in + 24);
    r->metrics.total_pnl = get_f64(in + 32);
    r->metrics.max_dd = get_f64(in + 40);
    r->metrics.sharpe = get_f64(in + 48);
    r->valid_bars = get_u64(in + 56);
    r->open_at_end = get_u64(in + 64);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

bool sebt_sweep_record_same(const sebt_sweep_record *a, const sebt_sweep_record *b)
{
    const sebt_metrics *x = &a->metrics, *y = &b->metrics;
    return x->n == y->n && same_bits(x->win_rate, y->win_rate) && same_bits(x->avg_r, y->avg_r) &&
           same_bits(x->total_pnl, y->total_pnl) && same_bits(x->max_dd, y->max_dd) &&
           same_bits(x->sharpe, y->sharpe) && a->valid_bars == b->valid_bars &&
           (a->open_at_end != 0) == (b->open_at_end != 0);
}
