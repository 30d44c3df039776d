#!/usr/bin/env bash
# Plugins through the CLI: the template loads by path (./x.so, a/b.so, or
# BACKTEST_BACKEND), shows its own name and contract, runs bit-identical to
# the reference; each broken plugin is refused with exit 2 (3 for a missing
# device) and a message naming the path and the fault; a crash names the
# plugin. Usage: plugin_cli.sh SEBT PLUGIN_DIR DATA [SCOPE]
# SCOPE: all (the default) runs every scenario. A sanitized build splits
# them in two ctests (docs/ci.md, sanitize_skip): "light" is all but the
# three validates of a failing plugin run through every stage, the crash in
# parity stopping at the crash (--fail-fast) and asserting what it reports;
# "whole" is those three validates (crash in parity, planted bug, race),
# each through every stage, with all their assertions.
set -u
sebt=$1 dir=$2 data=$3 scope=${4:-all}
case $scope in
  all|light|whole) ;;
  *) echo "plugin_cli.sh: SCOPE is all, light or whole, not '$scope'"; exit 2 ;;
esac
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect() { # expect RC PATTERN -- command...
  local want=$1 pattern=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc != "$want" ]] || ! grep -Eq -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "FAIL: $* -> rc $rc (want $want), output lacks /$pattern/:"; cat "$tmp/out" "$tmp/err"; fail=1
  else
    echo "ok: $* -> $want"
  fi
}

# validate: a crash in a check is reported as a crash (exit 1, JUnit
# <error>) with a command that reproduces it; the other checks still run.
# --cases, not --time: the same fuzz cases however loaded the machine is
# (under --time 1 a slow machine may stop before the case that crashes).
v=(validate --cases 100 --no-speed --data "$data")
# Where only the first failing check is asserted: the run stops there
# (--fail-fast), not through the stages after it that the runs of the
# crashing and the passing plugin go through.
vf=("${v[@]}" --fail-fast)
# crash_in STAGE REPLAY VALIDATE_ARGS...: the crash in a check of STAGE,
# the command that reproduces it (sebt REPLAY --backend PLUGIN ...) and the
# JUnit <error>.
crash_in() {
  local stage=$1 replay=$2; shift 2
  expect 1 "crash +$stage .*crashed with SIGSEGV" -- "$sebt" "$@" --backend "$dir/libbroken_crash.so" --junit "$tmp/crash.xml"
  grep -q "replay: sebt $replay --backend $dir/libbroken_crash.so" "$tmp/out" || { echo "FAIL: no replay for the crash"; fail=1; }
  grep -q '<error message="the backend broken crashed with SIGSEGV' "$tmp/crash.xml" || { echo "FAIL: crash.xml"; cat "$tmp/crash.xml"; fail=1; }
}

if [[ $scope != whole ]]; then
  expect 0 '^mine +exact +trades +trades +template plugin' -- "$sebt" backends --backend "$dir/libmine_ok.so"
  expect 0 "\"plugin\":\"$dir/libmine_ok.so\"" -- "$sebt" backends --backend "$dir/libmine_ok.so" --format json
  expect 0 'mine_f32 +tolerant\(0.0001\)' -- "$sebt" backends --backend "$dir/libmine_float32.so"
  (cd "$dir" && expect 0 '"backend":"mine"' -- "$sebt" run --backend libmine_ok.so --data "$data")
  BACKTEST_BACKEND="$dir/libmine_ok.so" expect 0 '"backend":"mine"' -- "$sebt" run --data "$data"

  # Same bits as the reference through the CLI, trades and metrics.
  "$sebt" run --backend reference --data "$data" --set vol_z=-5 --set tr_z=-5 --set cloc_min=-1 --set atr_window=2 --set z_window=3 --set ema_fast=2 --set ema_slow=4 --format csv >"$tmp/ref" 2>/dev/null
  "$sebt" run --backend "$dir/libmine_ok.so" --data "$data" --set vol_z=-5 --set tr_z=-5 --set cloc_min=-1 --set atr_window=2 --set z_window=3 --set ema_fast=2 --set ema_slow=4 --format csv >"$tmp/mine" 2>/dev/null
  if ! cmp -s "$tmp/ref" "$tmp/mine" || [[ $(wc -l <"$tmp/ref") -lt 2 ]]; then
    echo "FAIL: the template's trades differ from the reference's (or there are none)"; fail=1
  fi

  expect 2 'ABI mismatch.*ABI 99.*ABI 2' -- "$sebt" run --backend "$dir/libbroken_abi.so" --data "$data"
  # With the RSI entry filter on, on bars with holes: the template (and its
  # float32 variant) against the reference.
  rsi_grid="$tmp/rsi-grid.txt"
  printf 'ema_fast = 4\nema_slow = 32\nz_window = 16\natr_window = 8\nvol_z = 0.5\ntr_z = 0\ncloc_min = 0.3\nuse_rsi = true\nrsi_window = 2, 14\nrsi_max = 20, 50\n' > "$rsi_grid"
  for variant in ok float32; do
    expect 0 'combos checked 4, divergences 0.*' -- "$sebt" parity --backend "$dir/libmine_$variant.so" --gaps plain \
      --data "$(dirname "$data")/BTCUSDT-15m-2017-2021.csv.gz" --grid "$rsi_grid"
    # A plugin's analysis columns come from its trades: parity says so.
    grep -qx "analysis columns: from the backend's trades (compared through its trades)" "$tmp/out" ||
      { echo "FAIL: parity of libmine_$variant.so does not say its analysis columns come from its trades"; fail=1; }
  done
  # A plugin built for ABI 1 (sebt_params of 15 fields): its own check refuses
  # it; one that exports its ABI is refused unread (anything of it called aborts).
  expect 2 'libold_abi_checks.so refused to load: plugin ABI mismatch: the plugin was built for sebt plugin ABI 1, this sebt speaks ABI 2' -- \
    "$sebt" run --backend "$dir/libold_abi_checks.so" --data "$data"
  expect 2 'libold_abi_exports.so refused to load: plugin ABI mismatch: the plugin was built for sebt plugin ABI 1, this sebt speaks ABI 2' -- \
    "$sebt" run --backend "$dir/libold_abi_exports.so" --data "$data"
  if grep -q 'old_abi: ' "$tmp/out" "$tmp/err"; then echo "FAIL: the ABI 1 plugin was called"; fail=1; fi
  expect 2 'does not export sebt_backend_plugin' -- "$sebt" run --backend "$dir/libbroken_nosym.so" --data "$data"
  expect 2 "null run_batch" -- "$sebt" backends --backend "$dir/libbroken_nullfn.so"
  expect 3 'no CUDA device' -- "$sebt" run --backend "$dir/libbroken_nodevice.so" --data "$data"
  expect 2 'nothere.so: no such file' -- "$sebt" run --backend ./nothere.so --data "$data"
  expect 2 'path of a plugin' -- "$sebt" run --backend nosuchbackend --data "$data"
  "$sebt" run --backend "$dir/libbroken_crash.so" --data "$data" >/dev/null 2>"$tmp/err"
  rc=$?
  if [[ $rc -lt 128 ]] || ! grep -q "plugin backend 'broken' ($dir/libbroken_crash.so) crashed: SIGSEGV" "$tmp/err"; then
    echo "FAIL: a crashing plugin was not reported (rc $rc):"; cat "$tmp/err"; fail=1
  else
    echo "ok: crash reported, rc $rc"
  fi
  # The crash stopped at the first check (a replay fixture's); "all" and
  # "whole" run it through every stage below, the crash in parity too.
  if [[ $scope == light ]]; then
    crash_in replay validate "${vf[@]}"
  fi
  # A crash in one fuzz case (crash2 dies on a call given 2 threads with 3 or
  # more combos: case 18 of seed 1 carries its own 2 threads) names the case,
  # its threads, and a command that runs that one case, which crashes again.
  expect 1 "crash +fuzz .*crashed with SIGSEGV.* in fuzz case [0-9]+ of seed [0-9]+ \(2 threads\)" -- \
    "$sebt" "${vf[@]}" --threads 3 --backend "$dir/libcrash2.so"
  one=$(grep -m1 '^replay: sebt fuzz ' "$tmp/out" | sed 's/^replay: sebt //')
  if [[ $one != "fuzz --backend $dir/libcrash2.so --seed "*" --threads 2 --case "* ]]; then
    echo "FAIL: the crash's replay is not one case:"; grep -v '^ok' "$tmp/out"; fail=1
  else
    "$sebt" $one >/dev/null 2>"$tmp/err"
    rc=$?
    if [[ $rc -lt 128 ]] || ! grep -q "crashed: SIG" "$tmp/err"; then
      echo "FAIL: sebt $one did not crash again (rc $rc)"; cat "$tmp/err"; fail=1
    else
      echo "ok: sebt $one crashes again (rc $rc)"
    fi
  fi
  expect 2 'ABI mismatch' -- "$sebt" "${v[@]}" --backend "$dir/libbroken_abi.so"
  expect 3 'no CUDA device' -- "$sebt" "${v[@]}" --backend "$dir/libbroken_nodevice.so"
  expect 2 'needs a FILE' -- "$sebt" validate --backend "$dir/libmine_ok.so" --junit
  expect 0 '"selector":"'"$dir/libmine_ok.so"'"' -- "$sebt" "${v[@]}" --backend "$dir/libmine_ok.so" --format json
  grep -q '"analysis_columns": *"trades"' "$tmp/out" && grep -q '"analysis_combos_compared": *0,' "$tmp/out" ||
    { echo "FAIL: validate's JSON does not say the plugin's analysis columns come from its trades"; fail=1; }
  # --junit of parity and fuzz: a failure with the divergence and a replay naming the plugin's path.
  expect 1 'result: FAIL' -- "$sebt" parity --backend "$dir/libmine_planted_bug.so" --data "$data" \
    --grid /dev/stdin --junit "$tmp/parity.xml" <<<"ema_fast = 1
ema_slow = 2
z_window = 2
atr_window = 1
vol_z = -100
tr_z = -100
cloc_min = -1"
  grep -q "<failure message=\"1 of 1 combos diverge\">" "$tmp/parity.xml" && grep -q "replay: sebt parity --backend $dir/libmine_planted_bug.so" "$tmp/parity.xml" \
    || { echo "FAIL: parity.xml"; cat "$tmp/parity.xml"; fail=1; }
  expect 1 'DIVERGENCE' -- "$sebt" fuzz --backend "$dir/libmine_planted_bug.so" --iterations 300 --save "$tmp/repro" --junit "$tmp/fuzz.xml"
  grep -q "replay: sebt validate --backend $dir/libmine_planted_bug.so --replay $tmp/repro/" "$tmp/fuzz.xml" \
    || { echo "FAIL: fuzz.xml"; cat "$tmp/fuzz.xml"; fail=1; }
  # A kernel whose results depend on earlier calls: non-deterministic, exit 1,
  # the case saved as generated (not "does not diverge to begin with", exit 2).
  expect 1 'NON-DETERMINISTIC' -- "$sebt" fuzz --backend "$dir/libracy.so" --iterations 300 --save "$tmp/racy"
  grep -q 'NON-DETERMINISTIC' "$tmp"/racy/*/README.txt 2>/dev/null || { echo "FAIL: racy reproducer not saved"; fail=1; }
  expect 1 'fail +fuzz .*non-deterministic' -- "$sebt" "${vf[@]}" --backend "$dir/libracy.so" --save "$tmp/racy2"
  # A kernel that carries a value from one call into the next (right alone,
  # wrong after a call on other data): the finding names the state kept
  # between calls, the reproducer keeps the cases before it that it needs, and
  # its replay line shows the bug again; without those cases it would not.
  expect 1 'STATE KEPT BETWEEN CALLS' -- "$sebt" fuzz --backend "$dir/libstale.so" --iterations 300 --save "$tmp/stale"
  line=$(grep -m1 '^replay: ' "$tmp/out" | sed 's/^replay: //')
  stale_dir=${line##* }
  if [[ $line != "sebt validate --backend $dir/libstale.so --replay $tmp/stale/"* ]] || ! [[ -f $stale_dir/before/01/series.csv ]]; then
    echo "FAIL: no replay line, or no cases before it, for the state kept between calls:"; cat "$tmp/out"; fail=1
  else
    expect 1 'fail +replay' -- "$sebt" ${line#sebt }
    mv "$stale_dir/before" "$tmp/stale-before"
    expect 0 'ok +replay' -- "$sebt" ${line#sebt }
  fi
  expect 1 'fail +fuzz .*state kept between calls' -- "$sebt" "${vf[@]}" --backend "$dir/libstale.so" --save "$tmp/stale2"
  # A kernel that computes invalid combos and series instead of refusing them.
  expect 1 'fail +bad-input' -- "$sebt" "${vf[@]}" --backend "$dir/liblax.so"
  grep -q 'accepted combo 2 with ema_fast 0' "$tmp/out" || { echo "FAIL: lax plugin: no detail"; fail=1; }
  # Every case comes back by the command printed for it (seed, threads, kind,
  # number, base), with the plugin's path.
  "$sebt" fuzz --backend "$dir/libmine_planted_bug.so" --threads 2 --iterations 300 --no-save >"$tmp/f1" 2>&1
  again=$(grep -m1 '^the case as generated: ' "$tmp/f1" | sed 's/^the case as generated: sebt //')
  found=$(grep -m1 -o '^result: DIVERGENCE in [a-z ]*[0-9]*' "$tmp/f1")
  if [[ $again != "fuzz --backend $dir/libmine_planted_bug.so --seed 1 --threads 2 --"* || -z $found ]]; then
    echo "FAIL: no replay command for the case:"; cat "$tmp/f1"; fail=1
  else
    expect 1 "^$found " -- "$sebt" $again --no-save
  fi
fi

# The validates of a failing plugin through every stage.
if [[ $scope != light ]]; then
  crash_in parity parity "${v[@]}"
  grep -Eq 'ok +anti-vacuity +mutant:sma' "$tmp/out" || { echo "FAIL: checks after the crash did not run"; fail=1; }
  # validate's reproducer names the plugin by its path, never by its name
  # (`--backend mine` fails with "unknown backend"), and the replay command it
  # prints pastes back and shows the bug again.
  expect 1 'fail +fuzz' -- "$sebt" "${v[@]}" --backend "$dir/libmine_planted_bug.so" --save "$tmp/vrepro"
  readme=$(ls "$tmp"/vrepro/*/README.txt 2>/dev/null | head -1)
  if [[ -z $readme ]] || ! grep -q -- "--backend $dir/libmine_planted_bug.so" "$readme" || grep -q -- '--backend mine ' "$readme"; then
    echo "FAIL: the reproducer's README does not name the plugin's path:"; cat "$readme" 2>/dev/null; fail=1
  fi
  line=$(grep -A20 '^fuzz seed' "$tmp/out" | grep -m1 '^replay: ' | sed 's/^replay: //')
  if [[ $line != "sebt validate --backend $dir/libmine_planted_bug.so --replay "* ]]; then
    echo "FAIL: no replay line for the fuzz failure:"; cat "$tmp/out"; fail=1
  else
    expect 1 'fail +replay' -- "$sebt" ${line#sebt }
  fi
  # A true data race (two threads summing total_pnl into one unguarded
  # accumulator): validate says non-deterministic, exit 1, from the fuzz
  # stage's re-runs or the determinism stage (whichever sees it first; both
  # are right), with a replay command; never "does not diverge to begin
  # with". A race that loses the same way twice in a row (seen under ASan,
  # whose timing differs) is a plain divergence to the fuzz stage, which is
  # right too: the determinism stage then names it, as non-deterministic when
  # two identical calls differ, or by the variant of the call whose results
  # differ first (threads, order, split), which a race also is. Two runs that
  # differ prove the race ran.
  expect 1 'fail +(fuzz|determinism) ' -- "$sebt" "${v[@]}" --backend "$dir/librace.so" --save "$tmp/race"
  if ! grep -Eq '^fail +(fuzz .*non-deterministic|determinism )' "$tmp/out" || ! grep -q '^replay: sebt .*librace.so' "$tmp/out" \
     || grep -Eq '^fail +fuzz .*does not diverge' "$tmp/out"; then
    echo "FAIL: the race is not reported as non-deterministic, or by the determinism stage, with a replay:"
    cat "$tmp/out"; fail=1
  fi
fi
exit $fail
