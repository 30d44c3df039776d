#!/usr/bin/env bash
# ctest: each fault of a kernel process is the kernel's: a clear message
# naming what it did, exit 2 (1 for an ERROR reply, a divergence in a
# check), the kernel's stderr shown, sebt never hangs, and no process of
# the kernel is left behind.
# usage: test_kernel_faults.sh PYTHON SEBT FIXTURES_DIR
set -u
py="$1" sebt="$2" fixtures="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv"
tag="sebtfault$$"
fails=0
tmp="$(mktemp -d /tmp/sebt-kernel-faults.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# check NAME WANT_RC REGEX -- sebt args...
check() {
  local name="$1" want="$2" regex="$3"
  shift 4
  local t0=$SECONDS
  timeout -k 5 60 "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$? took=$((SECONDS - t0))
  local bad=""
  [ "$rc" -eq "$want" ] || bad="exit $rc, not $want"
  cat "$tmp/out" >> "$tmp/err"
  grep -Eq "$regex" "$tmp/err" || bad="$bad; no message matching /$regex/"
  sleep 0.2
  if pgrep -f "$tag-$name" > /dev/null; then
    bad="$bad; left running: $(pgrep -af "$tag-$name" | head -3)"
    pkill -KILL -f "$tag-$name"   # only this test's own leftovers, by their unique tag
  fi
  if [ -n "$bad" ]; then
    echo "FAIL $name: $bad (${took}s)"; sed 's/^/  stderr: /' "$tmp/err" | tail -5
    fails=$((fails + 1))
  else
    echo "ok   $name: exit $rc in ${took}s: $(grep -Eo "$regex" "$tmp/err" | head -1)"
  fi
}
k() { echo "exec:$py $here/fault_kernel.py $1 $tag-$1"; }
run() { local m="$1"; shift; check "$m" "$@" -- "$sebt" run --data "$data" --backend "$(k "$m")"; }

run die        2 "exited with status 3 during the HELLO request.*no GPU here \(on purpose\)"
SEBT_KERNEL_TIMEOUT=2 run hello_hang 2 "did not answer the HELLO request within 2 s"
run version    2 "speaks kernel protocol version 2; this sebt speaks version 1"
run chatty     2 "not a protocol frame on stdout during the HELLO request \(\"Hello from the kernel"
run exit_mid   2 "exited with status 4 during the RUN \(1 combo, [0-9]+ bars\) request.*fault_kernel: exit_mid"
SEBT_KERNEL_TIMEOUT=2 run hang 2 "did not answer the RUN .* within 2 s \(SEBT_KERNEL_TIMEOUT"
run garbage    2 "not a protocol frame on stdout during the RUN .*result: 42 trades"
run truncated  2 "exited with status 5 in the middle of its reply .*truncated frame"
run wrong_size 2 "answered the RUN .* with [0-9]+ bytes of results \(1 rows of 16 doubles"
run bad_index  2 "trade 0 of combo 0 with exit_index"
run error      2 "kernel fault_error failed on combo 0: ValueError: cannot handle"
SEBT_KERNEL_TIMEOUT=abc run exit_mid 2 "SEBT_KERNEL_TIMEOUT='abc': expected seconds > 0"

# In the oracle: a broken kernel is exit 2 (never a divergence), with a
# replay command; an ERROR reply is a divergence (exit 1).
check parity_hang 2 "did not answer .* within 2 s" -- env SEBT_KERNEL_TIMEOUT=2 "$sebt" parity --data "$data" --backend "$(k hang)" --gaps plain
check fuzz_exit 2 "exited with status 4 during the RUN" -- "$sebt" fuzz --iterations 5 --no-save --backend "$(k exit_mid)"
check fuzz_replay 2 "replay: sebt fuzz --backend 'exec:" -- "$sebt" fuzz --iterations 5 --no-save --backend "$(k exit_mid)"
check parity_error 1 "kernel fault_error failed on combo 0" -- "$sebt" parity --data "$data" --backend "$(k error)" --gaps plain
check validate_die 2 "exited with status 3 during the HELLO request" -- "$sebt" validate --no-speed --time 1 --backend "$(k die)"

[ $fails -eq 0 ] || { echo "$fails fault check(s) failed"; exit 1; }
echo "every kernel fault reported as the kernel's, none left running"
