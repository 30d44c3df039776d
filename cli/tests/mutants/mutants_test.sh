#!/usr/bin/env bash
# Each writer and cache bug planted in sebt_mutants (core/test_faults.h) is
# caught by the sweep's own verification: exit 1, "verification failed"
# naming what differs, the previous output file unchanged and no temporary
# file left; the same command on the real sebt passes (exit 0).
#   mutants_test.sh SEBT_MUTANTS SEBT FIXTURES_DIR SOURCE_ROOT
set -u
mutants=$1 sebt=$2 fixtures=$3 root=$4
data=$fixtures/data/BTCUSDT-1m-2019-01.csv.gz
work=$(mktemp -d /tmp/sebt_mutants_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# The backtests' threads format CSV rows when they take every core: at
# least two, so a window's rows come in two slices or more.
threads=$(nproc)
[ "$threads" -ge 2 ] || threads=2
printf 'ema_fast = 6:40:1\nreward_r = 1.0:3.0:0.5\nvol_z = 1.5, 2.0\nz_window = 48\n' > small.grid
# More than a window (80,640 combos > 65,536): the file goes past the page cache.
printf 'z_window = 48\nvol_z = 1.0:3.5:0.5\ntr_z = 0.6:2.0:0.2\ncloc_min = 0.3:0.9:0.1\natr_stop_mult = 0.3:1.5:0.3\nreward_r = 1.0:4.0:1.0\nmax_hold = 8:96:8\n' > big.grid

# caught NAME DESCRIPTION EXPECTED_TEXT OUTPUT SWEEP_ARGS...
caught() {
  local name=$1 what=$2 expect=$3 out=$4
  shift 4
  echo old > "$out"
  SEBT_TEST_FAULT=$name "$mutants" sweep --data "$data" --threads "$threads" --output "$out" "$@" 2> "$name.err"
  local rc=$?
  if [ "$rc" -ne 1 ]; then fail "$what: exit $rc, expected 1: $(tail -2 "$name.err")"; return; fi
  grep -q "verification failed: .*$expect" "$name.err" ||
    { fail "$what: the failure does not say '$expect': $(cat "$name.err")"; return; }
  [ "$(cat "$out")" = old ] || { fail "$what: the previous $out was replaced"; return; }
  ls -A | grep -q '\.tmp-' && { fail "$what: a temporary file was left: $(ls -A)"; return; }
  pass "$what: exit 1, '$(grep -o 'verification failed: [^;]*' "$name.err" | head -c 160)'"
  "$sebt" sweep --data "$data" --threads "$threads" --output "$out" "$@" 2> real.err ||
    fail "$what: the real sebt fails the same sweep: $(cat real.err)"
}

# What this sebt was built with decides which planted bugs it can carry:
# one thread formats everything without OpenMP, and no series is cached
# without xxhash.
built=$("$sebt" --version)
if grep -q '^OpenMP: *yes' <<< "$built"; then
  caught slice_numbered_from_window_start "a thread's CSV slice numbered from the window start" \
    "reads back as combo" small.csv --grid small.grid --verify 8
else
  echo "skipped: a thread's CSV slice (built without OpenMP: one thread writes every row)"
fi
caught last_digit_dropped "the shortest-number writer dropping a last digit" \
  "reads back as combo [0-9]* with other parameters\|the reference's" small.csv --grid small.grid --verify 8
caught exits_stop_and_tp_swapped "the analysis columns' stop and tp exit counts written in each other's place" \
  "exits_\(stop\|tp\) is [0-9]*, the reference's" small.csv --grid small.grid --analysis --verify 8
# Slips in the library's analysis figures (sebt_trade_stats_of), which
# made the sweep's columns and once the proof's side too: the proof now
# recomputes them with the reference's literal form.
caught profit_factor_sign_flipped "the profit factor's sign flipped" \
  "profit_factor is -[0-9.e-]*, the reference's [0-9]" small.csv --grid small.grid --analysis --verify 8
caught bars_in_market_one_short "the bars in the market one short a trade" \
  "bars_in_market is [0-9]*, the reference's [0-9]*" small.csv --grid small.grid --analysis --verify 8
caught year_of_365_days "a year of 365 days in the annualised Sharpe" \
  "sharpe_annual is [0-9.e-]*, the reference's" small.npy --grid small.grid --analysis --format npy --verify 8
# A --where comparison slip: the proof re-decides each sampled combo's
# kept or dropped on the reference's row with the reference's literal
# reading of the condition. 20 of small.grid's 350 combos have n == 142.
caught where_ge_read_as_gt "a --where '>=' read as '>'" \
  "--where 'n >= 142' keeps the row on the reference's values, the sweep dropped it" top.txt \
  --grid small.grid --where 'n >= 142' --top 5 --verify 128 --seed 3
# The proof's own slip: a check that asks for the analysis columns (each
# combo's trades) of a sweep that ran without them, or leaves them out of
# one that made them. Read back as npy, the columns left out would pass
# unread ("verified" over columns nobody compared); the proof compares
# what it asks for with what the windows handed over, and names it.
caught proof_asks_trades_without "the proof asking for trades of a sweep that ran without them" \
  "the check asks for the analysis columns (each combo's trades) of a sweep that ran without them" \
  small.npy --grid small.grid --format npy --verify 8
caught proof_leaves_trades_out "the proof leaving out the analysis columns a sweep made from its trades" \
  "the sweep made the analysis columns (from each combo's trades) and the check leaves them out" \
  small.npy --grid small.grid --analysis --format npy --verify 8
# A split's cut and a walk-forward's window edges one bar off: each
# command compares the edges it ran on with the reference's literal count
# of the bars in each span.
# caught_edges NAME DESCRIPTION EXPECTED_TEXT OUTPUT COMMAND ARGS...
caught_edges() {
  local name=$1 what=$2 expect=$3 out=$4
  shift 4
  echo old > "$out"
  SEBT_TEST_FAULT=$name "$mutants" "$@" --data "$data" --threads "$threads" --output "$out" 2> "$name.err"
  local rc=$?
  if [ "$rc" -ne 1 ]; then fail "$what: exit $rc, expected 1: $(tail -2 "$name.err")"; return; fi
  grep -q "verification failed: .*$expect" "$name.err" ||
    { fail "$what: the failure does not say '$expect': $(cat "$name.err")"; return; }
  [ "$(cat "$out")" = old ] || { fail "$what: the previous $out was replaced"; return; }
  pass "$what: exit 1, '$(grep -o 'verification failed: [^;]*' "$name.err" | head -c 160)'"
  "$sebt" "$@" --data "$data" --threads "$threads" --output "$out" 2> real.err ||
    fail "$what: the real sebt fails the same command: $(cat real.err)"
}
printf 'ema_fast = 6:12:2\nz_window = 48\n' > tiny.grid
caught_edges series_cut_one_bar_late "a split's cut one bar late" \
  "cut the series after 20161 bars; .* are 20160" split.csv split --grid tiny.grid --split 2019-01-15
caught_edges series_cut_one_bar_late "a walk-forward's windows in time one bar late" \
  "window 1: train_from is bar 1, .* gives 0" wf-time.txt walkforward --grid tiny.grid --train 7d --test 3d
caught_edges wf_test_window_one_bar_short "a walk-forward's test window in bars one bar short" \
  "window 1: test_to is bar 14999, .* gives 15000" wf-bars.txt walkforward --grid tiny.grid --train 10000 --test 5000
if dd if=/dev/zero of=direct.probe bs=4096 count=1 oflag=direct 2>/dev/null; then
  caught direct_tail_from_buffer_start "the direct file's tail written from its buffer's start" \
    "combo 80639" big.csv --grid big.grid --verify 2
else
  echo "skipped: the direct file's tail (this file system takes no direct I/O: the tail is never direct)"
fi
export SEBT_CACHE_DIR=$work/cache
if ! "$sebt" --version | grep -q '^series cache: *off'; then
  caught cached_volume_from_close "a cached series' volume read from its close column" \
    "series read from the cache differs from a fresh parse of .* in volume" small.npy --grid small.grid --format npy --verify full
else
  echo "skipped: a cached series (this sebt caches no series)"
fi
# A cached series read wrong: the default proof parses the file afresh
# when the series came from the cache (a first run, with nothing planted,
# stores the entry: each build keeps its own entries).
if ! "$sebt" --version | grep -q '^series cache: *off'; then
  SEBT_CACHE_DIR=$work/cache-default "$mutants" sweep --data "$data" --grid small.grid --output warm.csv 2>/dev/null ||
    fail "the unplanted sweep that stores the cache entry"
  SEBT_CACHE_DIR=$work/cache-default caught cached_volume_from_close "a cached series' volume read wrong, default proof" \
    "the series read from the cache differs from a fresh parse of .* in volume" small.csv --grid small.grid
else
  echo "skipped: a cached series, default proof (this sebt caches no series)"
fi
# Rows read back from every place they can be: two windows, three pieces a
# window (three formatting threads), each row found from its piece's start
# or end; all of them equal the reference on the real sebt.
for fmt in csv npy; do
  "$sebt" sweep --data "$data" --grid big.grid --threads 3 --format "$fmt" --output "many.$fmt" --verify 400 \
    --seed 11 2> many.err ||
    { fail "the real sebt's $fmt sweep with 400 rows read back: $(cat many.err)"; continue; }
  grep -q "the best combo and 400 sampled (seed 0xb, rows read back from many.$fmt)" many.err ||
    fail "the $fmt sweep did not read 400 rows back: $(cat many.err)"
done
pass "400 sampled rows of a two-window file in three pieces a window, read back as CSV and npy"
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all passed"
