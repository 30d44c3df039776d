/* A sweep small enough for a test and varied enough to reach every path of
 * the per-combo code: a slice of the bundled 15m series (with its holes),
 * combos over several indicator keys, with and without stop, target and
 * time exit, thresholds low enough for many trades per combo. */
#ifndef SEBT_TEST_SWEEP_FIXTURE_H
#define SEBT_TEST_SWEEP_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "sebt/sebt.h"

#define FIXTURE_BARS 12000
#define FIXTURE_COMBOS 64

static inline void fixture_series(sebt_series *out)
{
    sebt_series all = { 0 };
    sebt_error err = { 0 };
    sebt_load_opts opts = { .lenient = false, .fill_gaps = true };
    /* SEBT_TEST_FIXTURES_DIR: where a test program moved away from its
     * source tree (the device bundle) finds fixtures/. */
    const char *moved = getenv("SEBT_TEST_FIXTURES_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/data/BTCUSDT-15m-2017-2021.csv.gz", moved && *moved ? moved : SEBT_FIXTURES_DIR);
    cr_assert_eq(sebt_load_csv(path, &opts, &all, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(sebt_series_slice(&all, 0, FIXTURE_BARS, out, &err), SEBT_OK, "%s", err.msg);
    sebt_series_free(&all);
    sebt_series_recount(out);
    cr_assert_gt(out->n_missing, 0, "the slice should hold holes");
}

static inline void fixture_combos(sebt_params *c)
{
    for (int i = 0; i < FIXTURE_COMBOS; i++) {
        sebt_params p = sebt_params_default();
        p.ema_fast = i % 2 ? 12 : 24;
        p.ema_slow = (i / 2) % 2 ? 48 : 96;
        p.z_window = (i / 4) % 2 ? 48 : 96;
        p.atr_window = (i / 8) % 2 ? 14 : 24;
        p.vol_z = 0.5 + 0.25 * (i % 3);
        p.tr_z = 0.2 + 0.2 * (i % 5);
        p.cloc_min = 0.5;
        p.use_stop = (i / 16) % 4 != 1;
        p.use_tp = (i / 16) % 4 != 2;
        p.use_time = (i / 16) % 4 != 3;
        p.max_hold = 8 + i;
        p.atr_stop_mult = 0.5 + 0.1 * (i % 4);
        c[i] = p;
    }
}

#endif
