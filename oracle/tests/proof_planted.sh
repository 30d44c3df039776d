#!/usr/bin/env bash
# The sweep's default proof (no --verify: at least 256 sampled combos, or
# all of a smaller sweep, on the exact path) against fast_cpu copies with
# one slip planted in a fast path (oracle/tests/CMakeLists.txt,
# sebt_fast_planted): each slip changes some rows only, and each makes a
# plain `sebt sweep` fail: exit 1, "verification failed" naming a combo
# and a field, the previous output kept, no temporary file. The same sweep
# on fast_cpu passes; so does a --shard of it. --seed fixes the sample, so the verdict is the same
# on every run.
#   proof_planted.sh SEBT DATA PLUGIN_DIR
set -u
sebt=$1 data=$2 plugins=$3
work=$(mktemp -d /tmp/sebt_proof_planted_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
export SEBT_CACHE_DIR=off
threads=$(nproc)
[ "$threads" -ge 2 ] || threads=2
printf 'ema_fast = 6:40:1\nreward_r = 1.0:3.0:0.5\nvol_z = 1.5, 2.0\nz_window = 48\nmax_hold = 24, 48\n' > pairs.grid
printf 'use_rsi = false, true\nrsi_max = 30, 45\nrsi_window = 14, 28\nema_fast = 6:40:2\nz_window = 48\nvol_z = 1.0, 1.5\n' > filter.grid
printf 'fee_bp = 0, 5, 10\nslippage_bp = 0, 2\nema_fast = 6:40:2\nz_window = 48\nreward_r = 1.0:3.0:0.5\n' > twins.grid

# caught SLIP GRID FORMAT WHAT
caught() {
  local slip=$1 grid=$2 fmt=$3 what=$4 plugin=$plugins/libfast_$1.so out=out.$3
  if [ ! -f "$plugin" ]; then fail "$what: no plugin $plugin"; return; fi
  echo old > "$out"
  "$sebt" sweep --data "$data" --grid "$grid" --backend "$plugin" --threads "$threads" --format "$fmt" \
    --output "$out" --seed 3 2> "$slip.err"
  local rc=$?
  [ "$rc" -eq 1 ] || { fail "$what: exit $rc, expected 1: $(tail -2 "$slip.err")"; return; }
  grep -q "verification failed: combo [0-9]*: [a-z_]* is .*, the reference's" "$slip.err" ||
    { fail "$what: the failure does not name a combo and a field: $(cat "$slip.err")"; return; }
  [ "$(cat "$out")" = old ] || { fail "$what: the previous $out was replaced"; return; }
  ls -A | grep -q '\.tmp-' && { fail "$what: a temporary file was left: $(ls -A)"; return; }
  pass "$what: exit 1, '$(grep -o 'verification failed: [^;]*' "$slip.err" | head -c 160)'"
  "$sebt" sweep --data "$data" --grid "$grid" --threads "$threads" --format "$fmt" --output "$out" --seed 3 \
    2> real.err || fail "$what: fast_cpu fails the same sweep: $(cat real.err)"
}
caught pair_hop pairs.grid csv "the pair hop giving the second combo the first's signal"
caught filter_switch filter.grid npy "a filter's switch read as off in the sweep's signal"
caught twin_cost twins.grid csv "cost twins summed with the first twin's costs"
# A --shard proves its own combos before writing its file: the pair hop's
# slip in shard 2 of 3 fails it (exit 1, the previous shard file kept).
echo old > s2.shard
"$sebt" sweep --data "$data" --grid pairs.grid --backend "$plugins/libfast_pair_hop.so" --threads "$threads" \
  --shard 2/3 --output s2.shard --seed 3 2> shard.err
rc=$?
if [ "$rc" -eq 1 ] && grep -q "verification failed: combo [0-9]*: [a-z_]* is" shard.err && [ "$(cat s2.shard)" = old ]; then
  pass "a shard with the pair hop's slip: exit 1, '$(grep -o 'verification failed: [^;]*' shard.err | head -c 160)'"
else
  fail "a shard with the pair hop's slip: exit $rc, expected 1 with the previous file kept: $(tail -2 shard.err)"
fi
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all passed"
