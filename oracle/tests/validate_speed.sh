#!/usr/bin/env bash
# validate's speed stage: fast_cpu is the baseline and is not compared with
# itself; a backend far below 1% of fast_cpu's speed (the slow test plugin,
# which sleeps 100 us per combo and bar) passes with a warning in the text,
# the Markdown, the JUnit and the JSON, and fails only under --min-speedup.
# Usage: validate_speed.sh SEBT PLUGIN_DIR DATA
set -u
sebt=$1 dir=$2 data=$3
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL: $*"; fail=1; }
# Each backend is timed by the speed stage alone (--speed-only): the other
# checks are not what this test is about (the slow plugin sleeps through
# every one), and every full validate elsewhere runs this stage last.
v=(validate --speed-only --data "$data")
vs=("${v[@]}")

# fast_cpu: timed alone, never a ratio.
"$sebt" "${v[@]}" --backend fast_cpu --markdown "$tmp/fast.md" --junit "$tmp/fast.xml" >"$tmp/fast.txt" 2>&1
rc=$?
[[ $rc == 0 ]] || bad "validate fast_cpu exited $rc"
grep -Eq '^ok +speed .*not compared: this is the baseline' "$tmp/fast.txt" || bad "fast_cpu: no 'not compared' line"
grep -q "fast_cpu's speed" "$tmp/fast.txt" && bad "fast_cpu was compared with itself"
grep -q 'not compared: this is the baseline' "$tmp/fast.md" || bad "fast_cpu: the Markdown lacks 'not compared'"
grep -q 'not compared: this is the baseline' "$tmp/fast.xml" || bad "fast_cpu: the JUnit lacks 'not compared'"
grep -qi 'warning' "$tmp/fast.txt" "$tmp/fast.md" && bad "fast_cpu got a speed warning"
"$sebt" "${v[@]}" --backend fast_cpu --format json >"$tmp/fast.json" 2>/dev/null
grep -q '"stage":"speed".*"speedup":null' "$tmp/fast.json" || bad "fast_cpu: the JSON speedup is not null"

# Under the sanitizers fast_cpu runs several times slower while the slow
# plugin's sleeps do not, and the ratio the warning needs is then a matter
# of the machine's load: the speed stage is timed in the plain build only.
if "$sebt" --version | grep -q 'ASan'; then
  echo "skipped: the slow plugin's warning (a sanitized sebt: its speed ratios mean nothing)"
  [[ $fail == 0 ]] && echo "ok: validate's speed stage (fast_cpu's baseline)"
  exit $fail
fi

# The slow plugin: a pass, with the warning in every output. One thread
# each: fast_cpu's cost is then the work, not OpenMP's start-up.
"$sebt" "${vs[@]}" --threads 1 --backend "$dir/libslow.so" --markdown "$tmp/slow.md" --junit "$tmp/slow.xml" >"$tmp/slow.txt" 2>&1
rc=$?
[[ $rc == 0 ]] || { bad "validate slow exited $rc (a slow backend is a pass)"; cat "$tmp/slow.txt"; }
grep -Eq '^ok +speed .*WARNING: slow runs at .*% of fast_cpu.s speed' "$tmp/slow.txt" || bad "slow: no warning on the speed line"
grep -q '^WARNING: speed ' "$tmp/slow.txt" || bad "slow: no warning in the summary"
# Each side's runs are counted apart: on the bundled month the slow
# plugin sleeps 1.5 s a run, past the second after which a candidate is
# timed once, while fast_cpu is still timed three times or more.
"$sebt" validate --speed-only --threads 1 --backend "$dir/libslow.so" --data "$(dirname "$data")/BTCUSDT-1m-2019-01.csv.gz" \
  >"$tmp/month.txt" 2>&1
grep -Eq '^ok +speed .* slow [0-9.]+ s \(median of 1\), fast_cpu [0-9.]+ s \(median of ([3-9]|[1-9][0-9]+)\)' "$tmp/month.txt" ||
  bad "slow on the month: not timed once beside fast_cpu's three or more: $(grep -E '^(ok|fail) +speed' "$tmp/month.txt")"
grep -q '^result: PASS' "$tmp/slow.txt" || bad "slow: not a pass"
grep -q '| speed | .* | pass, \*\*warning\*\* |' "$tmp/slow.md" || bad "slow: the Markdown row shows no warning"
grep -q '^\*\*Warning\*\* (speed ' "$tmp/slow.md" || bad "slow: the Markdown has no warning line"
grep -q 'WARNING: slow runs at' "$tmp/slow.xml" || bad "slow: the JUnit has no warning"
grep -q '<testcase classname="sebt.validate.speed"[^>]*>$' "$tmp/slow.xml" || bad "slow: the JUnit speed case is not a pass with output"

# --min-speedup gates it: a failure, and the JSON keeps the warning.
"$sebt" "${vs[@]}" --threads 1 --backend "$dir/libslow.so" --min-speedup 0.5 --format json >"$tmp/gate.json" 2>/dev/null
rc=$?
[[ $rc == 1 ]] || bad "slow with --min-speedup 0.5 exited $rc, not 1"
grep -q '"stage":"speed"[^}]*"status":"fail"[^}]*"warning":"slow runs at' "$tmp/gate.json" || bad "slow: the JSON lacks the failure or the warning"

[[ $fail == 0 ]] && echo "ok: validate's speed stage"
exit $fail
