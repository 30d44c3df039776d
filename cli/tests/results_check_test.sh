#!/usr/bin/env bash
# Whatever a backend returns is checked
# before anything is printed or written (core/check.c). A plugin that lies
# (cli/tests/plugins/liar.c, one way per SEBT_LIAR value) makes `run`,
# `sweep` and `features` exit 1 with a message naming the backend, the combo
# and the field, prints no result and leaves no output file; an error status
# without a message never reads "error: ok" with exit 0.
#   results_check_test.sh SEBT LIAR_SO DATA
set -u
sebt=$1 liar=$2 data=$3
work=$(mktemp -d /tmp/sebt_results_check_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
printf 'ema_fast = 2, 3\nz_window = 3\natr_window = 2\n' > grid.txt

# lie WAY CODE PATTERN CMD...: with SEBT_LIAR=WAY, CMD exits CODE, says
# PATTERN on stderr, prints nothing on stdout and leaves no out.* file.
lie() {
  local way=$1 code=$2 pattern=$3; shift 3
  rm -f out.* stdout.txt
  SEBT_LIAR=$way "$@" >stdout.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "[$way] $* exited $rc, expected $code: $(cat err.txt)"; return; fi
  if ! grep -q -- "$pattern" err.txt; then fail "[$way] $*: stderr lacks '$pattern': $(cat err.txt)"; return; fi
  if [ -s stdout.txt ]; then fail "[$way] $*: printed a result: $(head -c 200 stdout.txt)"; return; fi
  if ls -A | grep -q '^out\.\|^\.out\.'; then fail "[$way] $*: left $(ls -A | grep out)"; return; fi
  echo "ok [$way]: $(grep -m1 error err.txt | head -c 200)"
}
run() { lie "$1" "$2" "$3" "$sebt" run --backend "$liar" --data "$data" --output out.json; }
sweep() { lie "$1" "$2" "$3" "$sebt" sweep --backend "$liar" --data "$data" --grid grid.txt --output out.csv; }

# The honest liar runs: the checks do not refuse a plain result.
SEBT_LIAR= "$sebt" run --backend "$liar" --data "$data" > honest.json || fail "the honest plugin was refused"
# --no-verify: the honest liar is checked here for what run_batch must get
# right, not against the reference (it counts valid_bars its own way).
SEBT_LIAR= "$sebt" sweep --backend "$liar" --data "$data" --grid grid.txt --no-verify > honest.csv || fail "honest sweep refused"

# What the result checks cannot see, the sweep's own verification does:
# the honest liar counts valid_bars its own way, so the reference re-run of
# its best combo differs; streamed and whole-sweep (text) alike, exit 1
# naming the field, and the previous output file kept. On 3 threads the
# best combo's z-scores are shared out by bars.
echo previous > kept.csv
SEBT_LIAR= "$sebt" sweep --backend "$liar" --data "$data" --grid grid.txt --output kept.csv --threads 3 2>err.txt
rc=$?
if [ "$rc" -eq 1 ] && grep -q "verification failed: combo [0-9]*: valid_bars is [0-9]*, the reference's [0-9]* (the best combos: 1 of 1 differ)" err.txt &&
   [ "$(cat kept.csv)" = previous ] && ! ls -A | grep -q 'kept\.csv\.tmp'; then
  echo "ok [verify]: $(head -c 200 err.txt)"
else fail "a sweep differing from the reference: exit $rc, kept.csv '$(head -c 40 kept.csv)': $(cat err.txt)"; fi
SEBT_LIAR= "$sebt" sweep --backend "$liar" --data "$data" --grid grid.txt --format text >stdout.txt 2>err.txt
rc=$?
if [ "$rc" -eq 1 ] && grep -q "verification failed: combo [0-9]*: valid_bars" err.txt && [ ! -s stdout.txt ]; then
  echo "ok [verify, text]: $(head -c 200 err.txt)"
else fail "a --format text sweep differing from the reference: exit $rc: $(cat err.txt)"; fi

for cmd in run sweep; do
  $cmd nomsg 1 "backend liar failed (internal) and gave no message"
  $cmd unknown 1 "backend liar failed with an unknown status 99"
  $cmd n_negative 1 "combo 0: n = -5 is negative"
  $cmd n_mismatch 1 "combo 0: n = 2 but the result holds n_trades = 0"
  $cmd win_rate 1 "combo 0: win_rate = 7.5 is outside \[0, 1\]"
  $cmd max_dd 1 "combo 0: max_dd = 100 is positive"
  $cmd valid_bars 1 "combo 0: valid_bars = 30 but the series has 29 bars"
  $cmd open_byte 1 "combo 0: open_at_end holds the byte 7"
done
run reason 1 "combo 0: trade 1 has exit reason 99"
run backwards 1 "combo 0: trade 1 has bars signal 0, entry 1, exit 0"
# Was a heap over-read under ASan (n_trades beyond the array).
run overread 1 "combo 0: n_trades = 5 but its trades array holds 1"
lie signal_byte 1 "impossible feature at bar 14: signal = 7" "$sebt" features --backend "$liar" --data "$data" \
  --output out.csv

# Finding 8: validate stops a check that never returns (per-check time
# limit) and reports a plugin that crashes while loading, not a bare SIGSEGV.
fixture=$(dirname "$data")/../regressions/fast_cpu-seed1-case12
SEBT_LIAR=loop "$sebt" validate --backend "$liar" --replay "$fixture" --check-timeout 2 > v.txt 2> v.err
rc=$?
[ "$rc" -eq 1 ] && grep -q "ran past the check's time limit of 2 s and was stopped" v.txt v.err &&
  echo "ok [loop]: validate stopped the looping check" || fail "[loop] validate exited $rc: $(cat v.txt v.err | tail -5)"
# A whole validate of a plugin whose run never returns: the first call is
# stopped as hung after --call-timeout (the default is 60 s: a minute, not
# 10 per check), exit 1, the check it hung in named; every later check of
# the backend is skipped naming it (not timed: skipped checks make no call).
SEBT_LIAR=loop "$sebt" validate --backend "$liar" --call-timeout 2 --cases 5 --no-speed --data "$data" > v.txt 2> v.err
rc=$?
[ "$rc" -eq 1 ] && grep -Eq "^crash +replay +fast_cpu-seed1-case12 .*hung: the backend liar did not return from run_batch \(1 combo x 10 bars\) within 2 s" v.txt &&
  grep -Eq "^skipped +fuzz .*not run: the backend hung in replay fast_cpu-seed1-case12" v.txt &&
  ! grep -Eq "^(crash|fail) +(parity|fuzz|determinism)" v.txt &&
  echo "ok [loop, whole run]: hung in the first check, the rest skipped" ||
  fail "[loop, whole run] validate exited $rc: $(grep -v '^ok' v.txt v.err | head -8)"
SEBT_LIAR=crash_entry "$sebt" validate --backend "$liar" --replay "$fixture" > v.txt 2> v.err
rc=$?
# Under AddressSanitizer (abort_on_error=1, as CI sets it) the same invalid
# access arrives as SIGABRT from the sanitizer's report.
[ "$rc" -eq 1 ] && grep -Eq "crashed with SIG(SEGV \(invalid memory access\)|ABRT \(abort\)) while loading" v.err &&
  echo "ok [crash_entry]: $(cat v.err)" || fail "[crash_entry] validate exited $rc: $(cat v.txt v.err | tail -5)"

# A plugin crashing in sebt's own process (run loads and calls it
# in-process), in its entry point or in its run: a line naming the plugin,
# then the signal's own action (the shell sees 128 + the signal; under
# AddressSanitizer, whose report ends in SIGABRT, 134).
crash_case() {
  local name=$1 code=$2 says=$3
  SEBT_LIAR=$name "$sebt" run --backend "$liar" --data "$data" --output out.json > v.txt 2> v.err
  local rc=$?
  { [ "$rc" -eq "$code" ] || [ "$rc" -eq 134 ]; } && grep -qF "$says" v.err && [ ! -e out.json ] &&
    echo "ok [$name]: sebt run: $(tail -c 200 v.err)" || fail "[$name] sebt run exited $rc: $(tail -c 400 v.err)"
}
crash_case crash_entry 139 "sebt run: error: plugin $liar crashed while loading (in its constructor or sebt_backend_plugin; 'sebt validate --backend $liar' loads it in a child process): SIG"
crash_case crash_run 136 "sebt run: error: the plugin backend 'liar' ($liar) crashed: SIGFPE"

[ "$failures" -eq 0 ] && echo "all result checks passed" || { echo "$failures failure(s)"; exit 1; }
