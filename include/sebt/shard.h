/* Splitting one sweep across shards, MPI ranks and checkpoint chunks
 * (core/shard.c), and the fingerprints that tell whether two pieces of work
 * belong to the same sweep.
 *
 * A partition depends on the combos and the number of parts only (never on
 * threads, timing or the machine), so shard I/N computes the same combos on
 * every machine and a later `sebt merge` or resume can trust it. Combos
 * that share their indicator series (the key ema_fast, ema_slow, z_window,
 * atr_window) stay in one part unless their group alone is larger than a
 * part's fair share; parts are balanced on an estimated cost. */
#ifndef SEBT_SHARD_H
#define SEBT_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "sebt/analysis.h"
#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Estimated cost of an indicator group beyond its combos, in combo units:
 * the shared EMA, ATR and z-score series cost about this many combos'
 * bar loops. Only the balance depends on it, never a result. */
#define SEBT_PARTITION_GROUP_COST 8u

/* Assigns combos[idx[k]] (k < n) to a part in [0, parts): part_of[k].
 * idx must be increasing. Deterministic in (combos, idx, parts). */
sebt_status sebt_partition(const sebt_params *combos, const size_t *idx, size_t n, uint32_t parts,
                           uint32_t *part_of, sebt_error *err);

/* 64-bit FNV-1a fingerprints. The series one covers every bar as loaded
 * (so --lenient and --fill-gaps are part of it); the combos one covers
 * every parameter of every combo in order, field by field (no padding). */
uint64_t sebt_series_fingerprint(const sebt_series *s);
uint64_t sebt_fnv1a(uint64_t h, const void *data, size_t len);   /* h = 0 starts a new hash */
uint64_t sebt_combos_fingerprint(const sebt_params *combos, size_t n);

/* One combo's sweep result as it travels between processes (MPI) and
 * sits in checkpoint chunks: everything a sweep's output prints. The
 * analysis columns (a streamed sweep's opts.analysis) travel only within
 * one process: they are not in the packed bytes. */
typedef struct {
    uint64_t combo;          /* input index */
    sebt_metrics metrics;
    uint64_t valid_bars;
    uint64_t open_at_end;    /* 0 or 1 */
    bool has_analysis;
    sebt_trade_stats analysis;
} sebt_sweep_record;

#define SEBT_SWEEP_RECORD_BYTES 72
/* Fixed-size little-endian encoding, so records read back bit-exact on
 * any host. */
/* What a sweep's row prints of two records is the same: every metric bit
 * for bit (any NaN equal to any NaN, as every output writes one NaN),
 * valid_bars and open_at_end (not the combo, not the analysis columns). */
bool sebt_sweep_record_same(const sebt_sweep_record *a, const sebt_sweep_record *b);
void sebt_sweep_record_pack(const sebt_sweep_record *r, unsigned char out[SEBT_SWEEP_RECORD_BYTES]);
void sebt_sweep_record_unpack(const unsigned char in[SEBT_SWEEP_RECORD_BYTES], sebt_sweep_record *r);

#ifdef __cplusplus
}
#endif

#endif
