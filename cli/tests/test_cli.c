/* The `sebt` command as a user meets it: each test spawns the built binary
 * (SEBT_BINARY) and checks its exit code, stdout and stderr.
 *
 * The hand-worked series (HAND_CSV) has 8 bars, 15 minutes apart from
 * 2021-01-01T00:00Z, with parameters that make every number exact:
 * ema_fast=1 (ema_f = close), ema_slow=3 (a = 0.5), z_window=2 (a z over
 * two values is +1 when the second is larger, -1 when smaller, NaN when
 * equal), atr_window=1 (ATR = TR, so every bar is valid),
 * thresholds vol_z=0.5 tr_z=0.5 cloc_min=0.6, atr_stop_mult=1, reward_r=2,
 * max_hold=3, fee_bp=50 + slippage_bp=50 (1% of entry+exit).
 *
 *  t  open  high  low   close vol  TR    ema_s      vol_z tr_z cloc   signal
 *  0  100   101   99    100   100  2     100        nan   nan  0.5    0
 *  1  100   100   96    97    100  4     98.5       nan   1    0.25   0
 *  2  97    97    88.5  95    300  8.5   96.75      1     1    0.76   1
 *  3  90    92    89    91    100  6     93.875     -1    -1   0.67   0
 *  4  91    100   90    99    100  10    96.4375    nan   1    0.9    0
 *  5  99    111   98    108   100  13    102.21875  nan   1    0.77   0
 *  6  108   108   90    102   300  18    102.109375 1     1    0.67   1
 *  7  101   103   100   102   100  3     102.0546875 -1   -1    0.67   0
 *
 * Signal at 2: entry open[3] = 90, stop = low[2] - 1*ATR[2] = 88.5 - 8.5 = 80,
 * risk = 10, tp = 90 + 2*10 = 110. Bar 3 is the entry bar (not checked);
 * bar 4 (bars 1): open 91 > 80, low 90 > 80, high 100 < 110, 1 < 3: stay;
 * bar 5 (bars 2): high 111 >= 110: exit at tp 110.
 * fee = (90 + 110) * 100 / 10000 = 2, pnl = 110 - 90 - 2 = 18, R = 1.8.
 * Signal at 6: entry open[7] = 101, stop = 90 - 18 = 72, risk = 29,
 * tp = 101 + 58 = 159; bar 7 is the last valid bar, so it stays open at end
 * with 0 bars held.
 * Metrics: n 1, win_rate 1, avg_r 1.8, total_pnl 18, max_dd 0, sharpe 0. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/tests/scratch_dir.h"
#include "spawn_files.h"

#define T0 "1609459200000"

static const char HAND_CSV[] =
    "open_time,open,high,low,close,volume\n"
    "1609459200000,100,101,99,100,100\n"
    "1609460100000,100,100,96,97,100\n"
    "1609461000000,97,97,88.5,95,300\n"
    "1609461900000,90,92,89,91,100\n"
    "1609462800000,91,100,90,99,100\n"
    "1609463700000,99,111,98,108,100\n"
    "1609464600000,108,108,90,102,300\n"
    "1609465500000,101,103,100,102,100\n";

#define HAND_SETS                                                                              \
    "--set", "ema_fast=1", "--set", "ema_slow=3", "--set", "z_window=2", "--set",              \
        "atr_window=1", "--set", "vol_z=0.5", "--set", "tr_z=0.5", "--set", "cloc_min=0.6",    \
        "--set", "atr_stop_mult=1", "--set", "reward_r=2", "--set", "max_hold=3", "--set",     \
        "fee_bp=50", "--set", "slippage_bp=50"

typedef struct {
    int code;     /* exit status, or -1 when the process did not exit normally */
    char *out;
    char *err;
} proc;

/* Every buffer the tests read is freed by the suite's fini, so a failed
 * assertion (which leaves the test at once) leaks nothing under ASan. */
static char *owned[256];
static int n_owned;

static void cli_scratch_make(void) { scratch_make("cli"); }

static void cli_scratch_remove(void)
{
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    n_owned = 0;
    scratch_remove();
}

TestSuite(cli, .init = cli_scratch_make, .fini = cli_scratch_remove);

static const char *write_file(const char *name, const char *text)
{
    const char *path = in_scratch(name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot read %s", path);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = '\0';
    fclose(f);
    cr_assert_lt(n_owned, 256, "too many buffers in one test");
    owned[n_owned++] = buf;
    return buf;
}

/* Runs SEBT_BINARY with the NULL-terminated arguments, stdout and stderr in
 * files of dir. */
static proc run_sebt(const char *arg, ...)
{
    const char *argv[128];
    argv[0] = SEBT_BINARY;
    va_list ap;
    va_start(ap, arg);
    gather_args(argv + 1, 127, arg, ap);
    va_end(ap);

    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    int status = spawn_to_files(argv, out_path, err_path);
    proc p = { WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out_path), slurp(err_path) };
    return p;
}

#define assert_has(text, needle) \
    cr_assert_not_null(strstr((text), (needle)), "expected to find\n  %s\nin\n%s", (needle), (text))
#define assert_lacks(text, needle) \
    cr_assert_null(strstr((text), (needle)), "did not expect\n  %s\nin\n%s", (needle), (text))

/* ---- help, unknown commands and options -------------------------------- */

Test(cli, top_level_help_and_version_exit_0)
{
    proc p = run_sebt("--help", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "Usage: sebt COMMAND");
    p = run_sebt("--version", NULL);
    cr_assert_eq(p.code, 0);
    assert_has(p.out, "sebt ");
}

Test(cli, subcommand_help_goes_to_stdout_with_exit_0)
{
    /* Every command of cli/main.c's table. */
    const char *cmds[] = { "run", "features", "backends", "sweep", "parity", "fuzz", "report",
                           "check-gpu" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "Usage: sebt %s", cmds[i]);
        proc p = run_sebt(cmds[i], "--help", NULL);
        cr_assert_eq(p.code, 0, "sebt %s --help exited %d: %s", cmds[i], p.code, p.err);
        assert_has(p.out, want);
        cr_assert_str_empty(p.err);
        p = run_sebt(cmds[i], "-h", NULL);
        cr_assert_eq(p.code, 0);
    }
}

Test(cli, every_subcommand_rejects_an_unknown_option_with_exit_2)
{
    const char *cmds[] = { "run", "features", "backends", "sweep", "parity", "fuzz", "report",
                           "check-gpu" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        proc p = run_sebt(cmds[i], "--no-such-option", NULL);
        cr_assert_eq(p.code, 2, "sebt %s --no-such-option exited %d", cmds[i], p.code);
        assert_has(p.err, "--no-such-option");
    }
}

Test(cli, no_command_or_unknown_command_exit_2)
{
    proc p = run_sebt(NULL);
    cr_assert_eq(p.code, 2);
    p = run_sebt("frobnicate", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "unknown command 'frobnicate'");
}

Test(cli, unknown_options_and_missing_values_exit_2)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--bogus", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "unknown option '--bogus'");

    p = run_sebt("run", "--data", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "--data");

    p = run_sebt("run", NULL);
    cr_assert_eq(p.code, 2, "run without --data must fail");
    assert_has(p.err, "--data FILE is required");

    p = run_sebt("run", "--data", data, "--format", "xml", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "xml");

    p = run_sebt("run", "--data", data, "stray", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "stray");

    p = run_sebt("features", "--data", data, "--format", "json", NULL);
    cr_assert_eq(p.code, 2, "features has no --format");

    p = run_sebt("backends", "--format", "yaml", NULL);
    cr_assert_eq(p.code, 2);

    p = run_sebt("backends", "--nope", NULL);
    cr_assert_eq(p.code, 2);

    p = run_sebt("run", "--data", data, "--backend", "abacus", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "abacus");
}

/* ---- parameters ----------------------------------------------------------- */

Test(cli, parameter_outside_its_rule_exit_2_naming_it)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--set", "ema_fast=0", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "ema_fast");
    assert_has(p.err, "= 0");
    cr_assert_str_empty(p.out);

    p = run_sebt("run", "--data", data, "--set", "reward_r=-1", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "reward_r");

    p = run_sebt("features", "--data", data, "--set", "z_window=1", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "z_window");
}

Test(cli, malformed_set_exit_2)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--set", "nosuch=1", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "nosuch");

    p = run_sebt("run", "--data", data, "--set", "use_stop=maybe", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "use_stop");
    assert_has(p.err, "maybe");

    p = run_sebt("run", "--data", data, "--set", "ema_fast=12abc", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "ema_fast");

    p = run_sebt("run", "--data", data, "--set", "ema_fast", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "NAME=VALUE");
}

/* ---- run: the hand-worked backtest ---------------------------------------- */

Test(cli, run_json_matches_hand_worked_trade)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", HAND_SETS, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    const char *j = p.out;
    assert_has(j, "\"backend\":\"reference\"");
    assert_has(j, "\"bars\":8,");
    assert_has(j, "\"valid_bars\":8,");
    assert_has(j, "{\"signal_index\":2,\"entry_index\":3,\"exit_index\":5,"
                  "\"signal_ts\":1609461000000,\"entry_ts\":1609461900000,\"exit_ts\":1609463700000,"
                  "\"entry_price\":90,\"exit_price\":110,\"stop\":80,\"tp\":110,\"risk\":10,"
                  "\"pnl\":18,\"r\":1.8,\"reason\":\"tp\",\"bars_held\":2}");
    assert_has(j, "\"open_at_end\":{\"signal_index\":6,\"entry_index\":7,"
                  "\"signal_ts\":1609464600000,\"entry_ts\":1609465500000,"
                  "\"entry_price\":101,\"stop\":72,\"tp\":159,\"risk\":29,\"bars_held\":0}");
    assert_has(j, "\"n\":1,");
    assert_has(j, "\"win_rate\":1,");
    assert_has(j, "\"avg_r\":1.8,");
    assert_has(j, "\"total_pnl\":18,");
    assert_has(j, "\"max_dd\":0,");
    assert_has(j, "\"sharpe\":0");
}

Test(cli, run_json_lists_all_15_params_in_spec_order)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", HAND_SETS, "--set",
                      "use_time=false", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    const char *order[] = { "\"ema_fast\":1,", "\"ema_slow\":3,", "\"z_window\":2,",
                            "\"atr_window\":1,", "\"vol_z\":0.5,", "\"tr_z\":0.5,",
                            "\"cloc_min\":0.6,", "\"use_stop\":true,",
                            "\"atr_stop_mult\":1,", "\"use_tp\":true,", "\"reward_r\":2,",
                            "\"use_time\":false,", "\"max_hold\":3,", "\"fee_bp\":50,",
                            "\"slippage_bp\":50" };
    const char *at = p.out;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *hit = strstr(at, order[i]);
        cr_assert_not_null(hit, "param %s missing or out of order in\n%s", order[i], p.out);
        at = hit;
    }
}

Test(cli, run_without_a_trade_has_null_open_and_zero_metrics)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    /* No bar has vol_z above 5, so nothing ever fires. */
    proc p = run_sebt("run", "--data", data, "--backend", "reference", HAND_SETS, "--set", "vol_z=5",
                      NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"trades\":[],");
    assert_has(p.out, "\"open_at_end\":null,");
    assert_has(p.out, "\"n\":0,");
    assert_has(p.out, "\"total_pnl\":0,");
}

Test(cli, run_csv_has_header_and_one_row_per_trade)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--format", "csv", HAND_SETS,
                      NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    cr_assert_str_eq(p.out,
                     "signal_index,entry_index,exit_index,signal_ts,entry_ts,exit_ts,entry_price,"
                     "exit_price,stop,tp,risk,pnl,r,reason,bars_held,signal_time,entry_time,exit_time\n"
                     "2,3,5,1609461000000,1609461900000,1609463700000,90,110,80,110,10,18,1.8,tp,2,"
                     "2021-01-01T00:30:00Z,2021-01-01T00:45:00Z,2021-01-01T01:15:00Z\n");
}

Test(cli, run_text_shows_dates_and_a_summary)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--format", "text", HAND_SETS,
                      NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "2021-01-01T00:30:00Z"); /* signal bar 2 */
    assert_has(p.out, "2021-01-01T01:15:00Z"); /* exit bar 5 */
    assert_has(p.out, "open at end");
    /* The one trade: pnl 18 on an entry of 90 is +20% and R 1.8; one trade
     * has no deviation, so the Sharpe is 0 (SPEC §7). */
    assert_has(p.out, "summary: 1 trade, backend reference, 8 bars 2021-01-01T00:00:00Z .. "
                      "2021-01-01T01:45:00Z (8 valid, 0 missing)\n");
    assert_has(p.out, "\n  total pnl             18   price units (quote currency per 1 unit of the asset)");
    assert_has(p.out, "\n  win rate          100.0%   of trades closed with pnl > 0\n");
    assert_has(p.out, "\n  avg return      +20.000%   mean of pnl / entry price");
    assert_has(p.out, "\n  avg R             1.8000   mean R, R = pnl / risk");
    assert_has(p.out, "\n  max dd                 0   the deepest fall of cumulative pnl");
    assert_has(p.out, "\n  sharpe            0.0000   mean R / sample std of R over the 1 trade: per trade");
    assert_lacks(p.out, "disagree in sign"); /* pnl and R both positive */
    assert_lacks(p.err, "gap");
}

/* sweep --format text over the hand series: combo 0 is the hand-worked
 * combo (1 trade, pnl 18, R 1.8), combo 1 the same with vol_z 5, which no
 * bar reaches (no trade, every metric 0). Only vol_z differs, so it is the
 * only parameter column; by total pnl combo 0 ranks first. */
Test(cli, sweep_text_shows_the_best_combos_aligned)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *combos = write_file("combos.csv",
                                    "ema_fast,ema_slow,z_window,atr_window,vol_z,tr_z,cloc_min,atr_stop_mult,"
                                    "reward_r,max_hold,fee_bp,slippage_bp\n"
                                    "1,3,2,1,0.5,0.5,0.6,1,2,3,50,50\n"
                                    "1,3,2,1,5,0.5,0.6,1,2,3,50,50\n");
    proc p = run_sebt("sweep", "--data", data, "--combos", combos, "--backend", "reference", "--format", "text",
                      "--by", "total_pnl", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    cr_assert_str_eq(p.out,
                     "rank  combo  vol_z  trades  win rate   avg R  total pnl*  max dd  sharpe\n"
                     "   1      0    0.5       1    100.0%  1.8000          18       0  0.0000\n"
                     "   2      1      5       0      0.0%  0.0000           0       0  0.0000\n"
                     "top 2 of 2 combos by total_pnl (* higher is better; max dd is <= 0), backend reference, "
                     "8 bars\n"
                     "same in every combo: ema_fast=1 ema_slow=3 z_window=2 atr_window=1 tr_z=0.5 cloc_min=0.6 "
                     "use_stop=true atr_stop_mult=1 use_tp=true reward_r=2 use_time=true max_hold=3 fee_bp=50 "
                     "slippage_bp=50 use_rsi=false rsi_window=14 rsi_max=30\n"
                     "every combo, every digit: --format csv or json\n");
    /* --top 1 keeps the best; by trades (n) it is combo 0 again. */
    p = run_sebt("sweep", "--data", data, "--combos", combos, "--backend", "reference", "--format", "text",
                 "--top", "1", "--by", "n", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "trades*");
    assert_has(p.out, "\n   1      0    0.5        1    100.0%");
    assert_lacks(p.out, "\n   2 ");
    assert_has(p.out, "top 1 of 2 combos by n ");

    /* In two shards, merged: the same bytes as the one process. */
    proc whole = run_sebt("sweep", "--data", data, "--combos", combos, "--backend", "reference", "--format", "text",
                          "--by", "total_pnl", NULL);
    cr_assert_eq(whole.code, 0, "stderr: %s", whole.err);
    const char *s1 = in_scratch("p1.shard"), *s2 = in_scratch("p2.shard");
    p = run_sebt("sweep", "--data", data, "--combos", combos, "--backend", "reference", "--format", "text", "--by",
                 "total_pnl", "--shard", "1/2", "--output", s1, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    p = run_sebt("sweep", "--data", data, "--combos", combos, "--backend", "reference", "--format", "text", "--by",
                 "total_pnl", "--shard", "2/2", "--output", s2, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    p = run_sebt("merge", s2, s1, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    cr_assert_str_eq(p.out, whole.out);
}

/* The default combo on the bundled 15m data: the reference makes money in
 * price units while its mean R is negative, and the text says why. */
Test(cli, run_text_explains_pnl_and_r_of_opposite_signs)
{
    const char *data = "../../fixtures/data/BTCUSDT-15m-2017-2021.csv.gz";
    proc p = run_sebt("run", "--data", data, "--backend", "reference", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    const char *pnl = strstr(p.out, "\"total_pnl\":"), *r = strstr(p.out, "\"avg_r\":");
    cr_assert(pnl && r, "%s", p.out);
    cr_assert_gt(strtod(pnl + 12, NULL), 0.0);
    cr_assert_lt(strtod(r + 8, NULL), 0.0);
    /* data/README.md: 32 holes, 560 bars. */
    assert_has(p.err, "has 32 timestamp gaps (560 bars missing at its 15 min interval;");
    p = run_sebt("run", "--data", data, "--backend", "reference", "--format", "text", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\n  total pnl and R disagree in sign: pnl weighs each trade by its price level");
}

/* HAND_CSV without bars 3, 5 and 6: steps of 15, 15, 30 and 45 minutes, so
 * the interval is 15 min and there are 2 gaps standing for 1 + 2 = 3 bars,
 * the longest (2 bars, 30 min of missing time) after bar 4, 01:00Z. */
static const char GAPPY_CSV[] =
    "open_time,open,high,low,close,volume\n"
    "1609459200000,100,101,99,100,100\n"
    "1609460100000,100,100,96,97,100\n"
    "1609461000000,97,97,88.5,95,300\n"
    "1609462800000,91,100,90,99,100\n"
    "1609465500000,101,103,100,102,100\n";

Test(cli, run_warns_of_timestamp_gaps_left_unfilled)
{
    const char *data = write_file("gappy.csv", GAPPY_CSV);
    const char *want = "has 2 timestamp gaps (3 bars missing at its 15 min interval; the longest 2 bars, "
                       "30 min, after 2021-01-01T01:00:00Z), not filled";
    const char *formats[] = { "json", "csv", "text" };
    for (size_t k = 0; k < 3; k++) {
        proc p = run_sebt("run", "--data", data, "--backend", "reference", "--format", formats[k],
                          HAND_SETS, NULL);
        cr_assert_eq(p.code, 0, "stderr: %s", p.err);
        assert_has(p.err, "sebt run: warning: ");
        assert_has(p.err, want);
        assert_has(p.err, "--fill-gaps inserts missing bars there");
        if (k == 2)
            assert_has(p.out, "5 bars 2021-01-01T00:00:00Z .. 2021-01-01T01:45:00Z (5 valid, 0 missing; "
                              "2 timestamp gaps of 3 bars not filled)");
    }
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--format", "text", "--fill-gaps",
                      HAND_SETS, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_lacks(p.err, "warning");
    assert_has(p.err, "--fill-gaps: 3 missing bar(s) inserted");
    /* With atr_window 1, a missing bar and nothing else is invalid: 8 - 3. */
    assert_has(p.out, "8 bars 2021-01-01T00:00:00Z .. 2021-01-01T01:45:00Z (5 valid, 3 missing)\n");

    p = run_sebt("features", "--data", data, HAND_SETS, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.err, "sebt features: warning: ");
    assert_has(p.err, want);
}

Test(cli, run_output_file_leaves_stdout_empty)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *out = in_scratch("result.json");
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--output", out, HAND_SETS, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    cr_assert_str_empty(p.out);
    char *text = slurp(out);
    assert_has(text, "\"pnl\":18,");

    p = run_sebt("run", "--data", data, "--backend", "reference", "--output",
                 in_scratch("no/such/dir/x.json"), NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "no/such/dir");
}

Test(cli, run_default_backend_agrees_on_the_hand_trade)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    unsetenv("BACKTEST_BACKEND");
    proc p = run_sebt("run", "--data", data, "--format", "csv", HAND_SETS, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    /* fast_cpu is tolerant: check the decisions, not the last bits of prices. */
    assert_has(p.out, "\n2,3,5,1609461000000,1609461900000,1609463700000,");
    assert_has(p.out, ",tp,2,");
}

/* ---- bad input -------------------------------------------------------------- */

Test(cli, malformed_csv_exit_2_with_file_line_column)
{
    const char *bad = write_file("bad.csv", "open_time,open,high,low,close,volume\n"
                                            "1609459200000,100,101,99,100,100\n"
                                            "1609460100000,100,abc,96,97,100\n");
    proc p = run_sebt("run", "--data", bad, "--backend", "reference", NULL);
    cr_assert_eq(p.code, 2, "stderr: %s", p.err);
    assert_has(p.err, "bad.csv:3:3"); /* line 3, field 3 (high) */
    assert_has(p.err, "abc");
    cr_assert_str_empty(p.out);

    p = run_sebt("features", "--data", bad, "--backend", "reference", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "bad.csv:3:");
}

Test(cli, lenient_and_fill_gaps_keep_holes_as_missing_bars)
{
    /* Row 3 is bad, and 00:30 and 00:45 are absent before the last row. */
    const char *holes = write_file("holes.csv", "open_time,open,high,low,close,volume\n"
                                                "1609459200000,100,101,99,100,100\n"
                                                "1609460100000,100,abc,96,97,100\n"
                                                "1609462800000,100,101,99,100,100\n");
    proc p = run_sebt("run", "--data", holes, "--backend", "reference", "--lenient", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"bars\":3,");
    assert_has(p.err, "1 rejected row");

    p = run_sebt("run", "--data", holes, "--backend", "reference", "--lenient", "--fill-gaps", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"bars\":5,");
    assert_has(p.out, "\"valid_bars\":0,"); /* atr_window 96 > 5 bars */
    assert_has(p.err, "2 missing bar(s) inserted");

    p = run_sebt("features", "--data", holes, "--backend", "reference", "--set", "atr_window=1",
                 "--lenient", "--fill-gaps", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    cr_assert_str_eq(p.out, "ts,ema_f,ema_s,tr,atr,vol_z,tr_z,cloc,rsi,signal,valid\n"
                            "1609459200000,100,100,2,2,nan,nan,0.5,nan,0,1\n"
                            "1609460100000,nan,nan,nan,nan,nan,nan,nan,nan,0,0\n"
                            "1609461000000,nan,nan,nan,nan,nan,nan,nan,nan,0,0\n"
                            "1609461900000,nan,nan,nan,nan,nan,nan,nan,nan,0,0\n"
                            "1609462800000,100,100,2,2,nan,nan,0.5,nan,0,1\n");
}

Test(cli, missing_file_exit_2_naming_it)
{
    proc p = run_sebt("run", "--data", in_scratch("absent.csv"), NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "absent.csv");
}

/* ---- features ---------------------------------------------------------------- */

Test(cli, features_csv_header_rows_and_nan)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    proc p = run_sebt("features", "--data", data, "--backend", "reference", HAND_SETS, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    const char *want_start = "ts,ema_f,ema_s,tr,atr,vol_z,tr_z,cloc,rsi,signal,valid\n"
                             "1609459200000,100,100,2,2,nan,nan,0.5,nan,0,1\n"
                             "1609460100000,97,98.5,4,4,nan,1,0.25,nan,0,1\n"
                             "1609461000000,95,96.75,8.5,8.5,1,1,";
    cr_assert_eq(strncmp(p.out, want_start, strlen(want_start)), 0, "got\n%s", p.out);
    /* One row per bar, signal only at 2 and 6. */
    int rows = 0, signals = 0;
    for (const char *line = strchr(p.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        rows++;
        const char *end = strchr(line + 1, '\n');
        cr_assert_not_null(end);
        cr_assert_eq(end[-1], '1', "every bar is valid with atr_window=1");
        if (end[-3] == '1')
            signals++;
    }
    cr_assert_eq(rows, 8);
    cr_assert_eq(signals, 2);
    assert_has(p.out, "\n1609464600000,102,102.109375,18,18,1,1,");
}

/* ---- backends ------------------------------------------------------------------- */

Test(cli, backends_lists_cpu_backends_with_contracts)
{
    proc p = run_sebt("backends", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\nreference   exact             trades    trades ");
    assert_has(p.out, "\nfast_cpu    exact             walk      walk ");
    assert_has(p.out, "\ncuda ");

    p = run_sebt("backends", "--format", "json", NULL);
    cr_assert_eq(p.code, 0);
    assert_has(p.out, "{\"name\":\"reference\",\"available\":true,\"contract\":\"exact\",\"tol\":0,");
    assert_has(p.out, "{\"name\":\"fast_cpu\",\"available\":true,\"contract\":\"exact\",\"tol\":0,\"analysis\":\"walk\","
                      "\"overfit\":\"walk\",");
    assert_has(p.out, "\"analysis\":\"trades\",\"overfit\":\"trades\",\"description\":\"SPEC written literally");
    assert_has(p.out, "{\"name\":\"cuda\",\"available\":");
}

/* --combo FILE:ID: a sweep's row, its columns found by name (in any order,
 * missing parameters at their defaults), gives the parameters; without
 * --set the run must give the row's metrics. Row 7 below is the
 * hand-worked combo with its hand-worked metrics. */
#define HAND_SWEEP_HEADER                                                                          \
    "combo,ema_fast,ema_slow,z_window,atr_window,vol_z,tr_z,cloc_min,atr_stop_mult,"   \
    "max_hold,fee_bp,slippage_bp,n,win_rate,avg_r,total_pnl,max_dd,sharpe,open_at_end,valid_bars\n"
#define HAND_SWEEP_ROW3 "3,1,3,2,1,5,0.5,0.6,1,3,50,50,0,0,0,0,0,0,0,8\n"
#define HAND_SWEEP_ROW7(total_pnl) "7,1,3,2,1,0.5,0.5,0.6,1,3,50,50,1,1,1.8," total_pnl ",0,0,1,8\n"

Test(cli, run_combo_takes_its_parameters_from_a_sweep_row)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *sweep = write_file("sweep.csv", HAND_SWEEP_HEADER HAND_SWEEP_ROW3 HAND_SWEEP_ROW7("18"));
    char pick[512];
    snprintf(pick, sizeof pick, "%s:7", sweep);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--combo", pick, "--format", "csv", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\n2,3,5,1609461000000,1609461900000,1609463700000,90,110,80,110,10,18,1.8,tp,2,"
                      "2021-01-01T00:30:00Z,2021-01-01T00:45:00Z,2021-01-01T01:15:00Z\n");
    assert_has(p.err, "combo 7 of ");
    assert_has(p.err, "equal the sweep's row, bit for bit");

    /* Row 3 (vol_z 5) fires nothing: no trade, and its row says so. */
    snprintf(pick, sizeof pick, "%s:3", sweep);
    p = run_sebt("run", "--data", data, "--backend", "fast_cpu", "--combo", pick, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"vol_z\":5,");
    assert_has(p.out, "\"n\":0,");
}

Test(cli, run_combo_that_disagrees_with_its_row_fails_naming_the_metric)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *sweep = write_file("sweep.csv", HAND_SWEEP_HEADER HAND_SWEEP_ROW7("17"));
    char pick[512];
    snprintf(pick, sizeof pick, "%s:7", sweep);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--combo", pick, NULL);
    cr_assert_eq(p.code, 1, "stdout: %s stderr: %s", p.out, p.err);
    assert_has(p.err, "gives total_pnl = 18 where the sweep wrote 17");
    cr_assert_str_empty(p.out, "nothing is written when the check fails");

    /* --set changes the combo: fee 0 makes the trade's pnl 110 - 90 = 20, and
     * there is nothing to compare with. */
    p = run_sebt("run", "--data", data, "--backend", "reference", "--combo", pick, "--set", "fee_bp=0", "--set",
                 "slippage_bp=0", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"pnl\":20,");
}

Test(cli, run_combo_reads_a_sweeps_npy)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *grid = write_file("hand.grid", "ema_fast = 1\nema_slow = 3\nz_window = 2\natr_window = 1\n"
                                               "vol_z = 5, 0.5\ntr_z = 0.5\natr_stop_mult = 1\nmax_hold = 3\n"
                                               "fee_bp = 50\nslippage_bp = 50\n");
    char npy[300], pick[320];
    snprintf(npy, sizeof npy, "%s/sweep.npy", dir);
    proc p = run_sebt("sweep", "--data", data, "--grid", grid, "--format", "npy", "--output", npy, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    snprintf(pick, sizeof pick, "%s:1", npy);
    p = run_sebt("run", "--data", data, "--backend", "reference", "--combo", pick, "--format", "csv", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\n2,3,5,1609461000000,1609461900000,1609463700000,90,110,80,110,10,18,1.8,tp,2,");
    assert_has(p.err, "equal the sweep's row, bit for bit");
}

Test(cli, run_combo_refuses_what_is_not_a_sweep_row)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *sweep = write_file("sweep.csv", HAND_SWEEP_HEADER HAND_SWEEP_ROW7("18"));
    char pick[512];
    proc p = run_sebt("run", "--data", data, "--combo", sweep, NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "expected FILE:ID");
    snprintf(pick, sizeof pick, "%s:8", sweep);
    p = run_sebt("run", "--data", data, "--combo", pick, NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "no row of combo 8");
    snprintf(pick, sizeof pick, "%s:0", data);
    p = run_sebt("run", "--data", data, "--combo", pick, NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "not a sweep's output: no 'combo' column");
    const char *bad = write_file("bad.csv", HAND_SWEEP_HEADER "7,1,3,2,1,0.5,0.5,0.6,1,3,50,50,one,1,1.8,18,0,0,1,8\n");
    snprintf(pick, sizeof pick, "%s:7", bad);
    p = run_sebt("run", "--data", data, "--combo", pick, NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, ":2: n is 'one', not a number");
    snprintf(pick, sizeof pick, "%s/absent.csv:1", dir);
    p = run_sebt("run", "--data", data, "--combo", pick, NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "cannot open");
}

/* run --combo FILE:ID with the file's arguments: 2 and the message's
 * text must be in stderr. */
static void assert_combo_refused(const char *data, const char *file, const char *id, const char *text)
{
    char pick[600];
    snprintf(pick, sizeof pick, "%s:%s", file, id);
    proc p = run_sebt("run", "--data", data, "--combo", pick, "--set", "fee_bp=0", NULL);
    cr_assert_eq(p.code, 2, "%s: exit %d, stderr: %s", file, p.code, p.err);
    assert_has(p.err, text);
    cr_assert_str_empty(p.out, "nothing is run from a refused file");
}

/* A sweep file names its combo exactly or is refused: a misspelt
 * parameter would run at its default (with --set, silently), a column or
 * a combo twice leaves which one open. */
Test(cli, run_combo_refuses_a_file_that_does_not_name_its_combo_exactly)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *typo = write_file("typo.csv", "combo,ema_fst,n,win_rate,avg_r,total_pnl,max_dd,sharpe\n"
                                              "7,1,1,1,1.8,18,0,0\n");
    assert_combo_refused(data, typo, "7", ":1: column 2, 'ema_fst', is not a column a sweep writes "
                                          "(did you mean 'ema_fast'?)");
    const char *later = write_file("later.csv", "combo,n,win_rate,avg_r,total_pnl,max_dd,sharpe,future_column\n"
                                                "7,1,1,1.8,18,0,0,x\n");
    assert_combo_refused(data, later, "7", "column 8, 'future_column', is not a column a sweep writes (combo, "
                                           "the parameters");
    const char *twice = write_file("twice.csv", "combo,vol_z,n,win_rate,avg_r,total_pnl,max_dd,sharpe,vol_z\n"
                                                "7,0.5,1,1,1.8,18,0,0,5\n");
    assert_combo_refused(data, twice, "7", "column 'vol_z' twice (columns 2 and 9)");
    const char *ids = write_file("ids.csv", HAND_SWEEP_HEADER HAND_SWEEP_ROW7("18") HAND_SWEEP_ROW3
                                 HAND_SWEEP_ROW7("17"));
    assert_combo_refused(data, ids, "7", "combo 7 on lines 2 and 4");
    /* A control byte in a column's name is shown escaped. */
    const char *esc = write_file("esc.csv", "combo,\x1b[2Jn,win_rate,avg_r,total_pnl,max_dd,sharpe\n7,1,1,1.8,18,0,0\n");
    assert_combo_refused(data, esc, "7", "'\\x1b[2Jn'");
}

/* Without --set, a file that lacks a parameter's column and disagrees with
 * the run names the column, not only the data: cloc_min's default is not
 * the row's 0.6. */
Test(cli, run_combo_check_names_the_parameter_columns_the_file_lacks)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *sweep = write_file("nocloc.csv",
                                   "combo,ema_fast,ema_slow,z_window,atr_window,vol_z,tr_z,atr_stop_mult,max_hold,"
                                   "fee_bp,slippage_bp,n,win_rate,avg_r,total_pnl,max_dd,sharpe,open_at_end,"
                                   "valid_bars\n7,1,3,2,1,0.5,0.5,1,3,50,50,9,1,1.8,18,0,0,1,8\n");
    char pick[512];
    snprintf(pick, sizeof pick, "%s:7", sweep);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--combo", pick, NULL);
    cr_assert_eq(p.code, 1, "stderr: %s", p.err);
    assert_has(p.err, "the file has no column for ");
    assert_has(p.err, "cloc_min");
}

/* The causes --combo names: a folder is not "empty", a NUL byte is not "a
 * long line", and a byte order mark before the header is skipped (as in
 * data, grid and combos files). */
Test(cli, run_combo_names_the_real_cause_of_a_refusal)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    assert_combo_refused(data, dir, "7", ": not a regular file (a folder)");
    const char *nul = in_scratch("nul.csv");
    FILE *f = fopen(nul, "wb");
    cr_assert_not_null(f);
    fputs(HAND_SWEEP_HEADER, f);
    fwrite("7,1\0,3", 1, 6, f);
    fclose(f);
    assert_combo_refused(data, nul, "7", "nul.csv:2: a NUL byte at byte 4 of the line");
    const char *bom = write_file("bom.csv", "\xEF\xBB\xBF" HAND_SWEEP_HEADER HAND_SWEEP_ROW7("18"));
    char pick[512];
    snprintf(pick, sizeof pick, "%s:7", bom);
    proc p = run_sebt("run", "--data", data, "--backend", "reference", "--combo", pick, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.err, "equal the sweep's row, bit for bit");
}

/* Replaces from by to (of the same length) in the npy header at path. */
static void patch_npy_header(const char *path, const char *from, const char *to)
{
    cr_assert_eq(strlen(from), strlen(to));
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    char h[4096 + 1];
    size_t n = fread(h, 1, 4096, f);
    h[n] = '\0';
    char *at = NULL;
    for (size_t i = 10; i + strlen(from) <= n && !at; i++)
        if (memcmp(h + i, from, strlen(from)) == 0)
            at = h + i;
    cr_assert_not_null(at, "%s not in the header of %s", from, path);
    memcpy(at, to, strlen(to));
    rewind(f);
    cr_assert_eq(fwrite(h, 1, n, f), n);
    fclose(f);
}

Test(cli, run_combo_parses_an_npy_header_strictly)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *grid = write_file("hand.grid", "ema_fast = 1\nema_slow = 3\nz_window = 2\natr_window = 1\n"
                                               "vol_z = 5, 0.5\ntr_z = 0.5\natr_stop_mult = 1\nmax_hold = 3\n"
                                               "fee_bp = 50\nslippage_bp = 50\n");
    static const char *const cases[][3] = {
        { "'shape': (2,), }", "'shape': (-9,),}", "'shape' is not (N,) with N a count of rows" },
        { ", }", ",  ", "it is not closed by '}'" },
        { "('ema_slow', ", "('ema_fast', ", "column 'ema_fast' twice (columns 2 and 3)" },
        { "('ema_slow', ", "('ema_flow', ", "'ema_flow', is not a column a sweep writes (did you mean" },
        { "'shape': (2,)", "'shape': (2,2", "'shape' is not (N,)" },
        { "'fortran_order': False", "'fortran_order': True ", "'fortran_order' is not False" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char npy[300];
        snprintf(npy, sizeof npy, "%s/case%zu.npy", dir, k);
        proc p = run_sebt("sweep", "--data", data, "--grid", grid, "--format", "npy", "--output", npy, NULL);
        cr_assert_eq(p.code, 0, "stderr: %s", p.err);
        patch_npy_header(npy, cases[k][0], cases[k][1]);
        assert_combo_refused(data, npy, "1", cases[k][2]);
    }
}

/* --where: on the hand-worked series, vol_z 5 fires nothing (n 0, total
 * pnl 0) and vol_z 0.5 is the hand-worked combo (n 1, total pnl 18).
 * Ranked by total_pnl, a condition decides which rows are ranked at all. */
#define HAND_GRID                                                                                       \
    "ema_fast = 1\nema_slow = 3\nz_window = 2\natr_window = 1\nvol_z = 5, 0.5\ntr_z = 0.5\n"           \
    "atr_stop_mult = 1\nmax_hold = 3\nfee_bp = 50\nslippage_bp = 50\n"

Test(cli, sweep_where_ranks_only_the_combos_that_pass)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *grid = write_file("hand.grid", HAND_GRID);
    proc p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "5", "--by", "total_pnl", "--where",
                      "n >= 1", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\n1,1,3,2,1,0.5,");
    cr_assert_null(strstr(p.out, "\n0,"), "combo 0 (no trade) fails n >= 1 but is listed:\n%s", p.out);
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "5", "--where", "total_pnl == 0 and not n > 0",
                 NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\n0,1,3,2,1,5,");
    cr_assert_null(strstr(p.out, "\n1,"), "combo 1 fails the condition but is listed:\n%s", p.out);
    /* The whole-sweep path (a checkpoint) ranks the same way; text says how many passed. */
    char ck[300];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--format", "text", "--checkpoint", ck, "--where",
                 "vol_z < 1", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "top 1 of 2 combos by sharpe");
    assert_has(p.out, "ranked among the 1 that pass --where 'vol_z < 1'");
}

Test(cli, sweep_where_is_refused_where_it_cannot_apply)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *grid = write_file("hand.grid", HAND_GRID);
    proc p = run_sebt("sweep", "--data", data, "--grid", grid, "--where", "n >= 1", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "--where chooses among the combos --top K ranks");
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "1", "--where", "n >= 1 and vol_zz > 1", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "--where: at character 12");
    assert_has(p.err, "did you mean 'vol_z'?");
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "1", "--where", "n >= 1", "--shard", "1/2", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "a --shard holds only part of it");
}

/* A refused condition is quoted in the message with its control bytes
 * escaped: an escape sequence or a line break in it cannot clear the
 * terminal or forge a line that looks like sebt's own. */
Test(cli, refused_user_text_is_echoed_with_its_control_bytes_escaped)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *grid = write_file("hand.grid", HAND_GRID);
    proc p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "1", "--where",
                      "n >\x1b[2J\nsebt sweep: fake", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "(near '\\x1b[2J\\nsebt sweep:'");
    cr_assert_null(strchr(p.err, '\x1b'), "an ESC reached stderr: %s", p.err);
    cr_assert_null(strstr(p.err, "\nsebt sweep: fake"), "a forged line reached stderr: %s", p.err);
    /* The same through a usage error that quotes an option's value. */
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "1", "--by", "\x07sharpe\nsebt: ok", NULL);
    cr_assert_eq(p.code, 2);
    cr_assert_null(strchr(p.err, '\a'), "a bell reached stderr: %s", p.err);
    cr_assert_null(strstr(p.err, "\nsebt: ok"), "a forged line reached stderr: %s", p.err);
}

/* --analysis on the hand-worked series: combo 1 is the hand-worked trade
 * (a target exit, bars_held 2: 3 bars in the market), then a position
 * entered on the last bar (1 more); no losing trade, so no profit factor;
 * 4 of the 8 valid bars held; one trade, so a Sharpe (and its annual
 * form) of 0. Combo 0 trades nothing. */
Test(cli, sweep_analysis_appends_the_columns_worked_by_hand)
{
    const char *data = write_file("hand.csv", HAND_CSV);
    const char *grid = write_file("hand.grid", HAND_GRID);
    proc p = run_sebt("sweep", "--data", data, "--grid", grid, "--analysis", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, ",open_at_end,valid_bars,exits_stop_gap,exits_stop,exits_tp,exits_time,gross_profit,"
                      "gross_loss,profit_factor,bars_in_market,exposure,sharpe_annual\n");
    assert_has(p.out, ",30,1,1,1.8,18,0,0,1,8,0,0,1,0,18,0,nan,4,0.5,0\n");
    assert_has(p.out, ",0,0,0,0,0,0,8,0,0,0,0,0,0,nan,0,0,0\n");
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--analysis", "--top", "1", "--by", "total_pnl",
                 "--where", "exits_tp >= 1 and exposure == 0.5", "--format", "json", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"analysis\":{\"exits\":{\"stop_gap\":0,\"stop\":0,\"tp\":1,\"time\":0},\"gross_profit\":18,"
                      "\"gross_loss\":0,\"profit_factor\":null,\"bars_in_market\":4,\"exposure\":0.5,");
    /* A combo of such a file run again: its analysis columns are checked too. */
    char file[300], pick[320];
    snprintf(file, sizeof file, "%s/analysis.npy", dir);
    snprintf(pick, sizeof pick, "%s:1", file);
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--analysis", "--format", "npy", "--output", file, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    p = run_sebt("run", "--data", data, "--combo", pick, NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.err, "this run's metrics and analysis columns equal the sweep's row, bit for bit");
    /* Ranked by an analysis column: combo 1's exposure 0.5 before combo 0's 0. */
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--analysis", "--top", "2", "--by", "exposure", "--format",
                 "json", NULL);
    cr_assert_eq(p.code, 0, "stderr: %s", p.err);
    assert_has(p.out, "\"ranked_by\":\"exposure\"");
    const char *one = strstr(p.out, "{\"combo\":1"), *zero = strstr(p.out, "{\"combo\":0");
    cr_assert(one && zero && one < zero, "combo 1 (exposure 0.5) must rank before combo 0:\n%s", p.out);
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "1", "--by", "profit_factor", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "--by profit_factor ranks by an analysis column: give --analysis too");
    /* Without --analysis the columns do not exist; where they cannot be made, --analysis is refused. */
    p = run_sebt("sweep", "--data", data, "--grid", grid, "--top", "1", "--where", "profit_factor > 1", NULL);
    cr_assert_eq(p.code, 2);
    assert_has(p.err, "profit_factor is an analysis column: it needs the analysis columns (sebt sweep --analysis)");
    const char *refused[][2] = { { "--format", "text" }, { "--shard", "1/2" }, { "--verify", "full" } };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        p = run_sebt("sweep", "--data", data, "--grid", grid, "--analysis", refused[i][0], refused[i][1], NULL);
        cr_assert_eq(p.code, 2, "--analysis %s %s: exit %d", refused[i][0], refused[i][1], p.code);
        assert_has(p.err, "--analysis runs in one streamed sweep: not with");
    }
}
