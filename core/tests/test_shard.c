/* Partitions, fingerprints and records (core/shard.c). The expected
 * assignments are worked out by hand from the rule in shard.h: groups of
 * the indicator key, a cost of (combos + 8) each, longest first onto the
 * least loaded part, lowest part on a tie. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/shard.h"

static sebt_params with_key(int32_t fast, int32_t slow)
{
    sebt_params p = sebt_params_default();
    p.ema_fast = fast;
    p.ema_slow = slow;
    return p;
}

Test(shard, groups_stay_whole_and_balance)
{
    /* Groups: A (fast 10) 4 combos, cost 12; B (fast 20) 2 combos, cost
     * 10; C (fast 30) 1 combo, cost 9; interleaved in input order.
     * total 31, share ceil(31/2) = 16: no group is cut. Longest first:
     * A -> part 0 (load 12); B -> part 1 (load 10); C -> the least loaded,
     * part 1. */
    sebt_params c[7] = { with_key(10, 50), with_key(20, 50), with_key(10, 50), with_key(30, 50),
                         with_key(10, 50), with_key(20, 50), with_key(10, 50) };
    size_t idx[7] = { 0, 1, 2, 3, 4, 5, 6 };
    uint32_t part[7];
    sebt_error err = { 0 };
    cr_assert_eq(sebt_partition(c, idx, 7, 2, part, &err), SEBT_OK, "%s", err.msg);
    uint32_t expect[7] = { 0, 1, 0, 1, 0, 1, 0 };
    for (int i = 0; i < 7; i++)
        cr_expect_eq(part[i], expect[i], "combo %d: part %u, expected %u", i, part[i], expect[i]);
}

Test(shard, a_group_bigger_than_a_share_is_cut)
{
    /* One group of 40 combos over 4 parts: cost 48, share 12, room 4 per
     * piece: 10 pieces of 4 combos (cost 12 each), dealt to parts
     * 0,1,2,3,0,1,2,3,0,1 in input order (equal costs, first index first). */
    sebt_params c[40];
    size_t idx[40];
    for (int i = 0; i < 40; i++) {
        c[i] = with_key(10, 50);
        idx[i] = (size_t)i;
    }
    uint32_t part[40];
    cr_assert_eq(sebt_partition(c, idx, 40, 4, part, NULL), SEBT_OK);
    for (int i = 0; i < 40; i++)
        cr_expect_eq(part[i], (uint32_t)((i / 4) % 4), "combo %d: part %u", i, part[i]);
}

Test(shard, subsets_and_more_parts_than_combos)
{
    sebt_params c[5] = { with_key(1, 2), with_key(3, 4), with_key(5, 6), with_key(7, 8), with_key(9, 10) };
    size_t idx[3] = { 1, 3, 4 };
    uint32_t part[3];
    cr_assert_eq(sebt_partition(c, idx, 3, 8, part, NULL), SEBT_OK);
    /* Three groups of cost 9 onto 8 empty parts: 0, 1, 2 in input order. */
    cr_expect_eq(part[0], 0u);
    cr_expect_eq(part[1], 1u);
    cr_expect_eq(part[2], 2u);
    cr_expect_eq(sebt_partition(c, idx, 3, 0, part, NULL), SEBT_ERR_USAGE);
}

Test(shard, fingerprints_see_every_bit)
{
    sebt_params c[2] = { with_key(1, 2), with_key(3, 4) };
    uint64_t f = sebt_combos_fingerprint(c, 2);
    c[1].fee_bp = nextafter(c[1].fee_bp, 1e9);
    cr_expect_neq(sebt_combos_fingerprint(c, 2), f);
    cr_expect_neq(sebt_combos_fingerprint(c, 1), sebt_combos_fingerprint(c, 2));
    sebt_series s = { 0 };
    cr_assert_eq(sebt_series_alloc(&s, 3, NULL), SEBT_OK);
    for (int t = 0; t < 3; t++) {
        s.ts[t] = t * 60000;
        s.open[t] = s.high[t] = s.low[t] = s.close[t] = 100;
        s.volume[t] = 1;
    }
    uint64_t g = sebt_series_fingerprint(&s);
    s.volume[2] = nextafter(1.0, 2.0);
    cr_expect_neq(sebt_series_fingerprint(&s), g);
    sebt_series_free(&s);
    /* FNV-1a of "a" is af63dc4c8601ec8c (the published test vector). */
    cr_expect_eq(sebt_fnv1a(0, "a", 1), 0xaf63dc4c8601ec8cull);
}

Test(shard, records_read_back_bit_exact)
{
    sebt_sweep_record r = { .combo = 123456789012ull, .metrics = { .n = -3, .win_rate = NAN, .avg_r = -0.0,
                            .total_pnl = 1e308, .max_dd = -INFINITY, .sharpe = 0.1 },
                            .valid_bars = 44545, .open_at_end = 1 };
    unsigned char buf[SEBT_SWEEP_RECORD_BYTES];
    sebt_sweep_record_pack(&r, buf);
    cr_expect_eq(buf[0], (unsigned char)(123456789012ull & 0xff), "little-endian first byte");
    sebt_sweep_record back;
    sebt_sweep_record_unpack(buf, &back);
    cr_expect_eq(memcmp(&back.metrics, &r.metrics, sizeof r.metrics), 0);
    cr_expect_eq(back.combo, r.combo);
    cr_expect_eq(back.valid_bars, r.valid_bars);
    cr_expect_eq(back.open_at_end, 1u);
}
