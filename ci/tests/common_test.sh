#!/usr/bin/env bash
# ci/common.sh's step and its progress: what a step prints when it works
# and when it fails, and the percentage read from a build's or a test
# run's log (make, ninja, ctest, or nothing to read).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# In a child shell each: common.sh sets -e and a step that fails exits.
run() { (export SEBT_LOG_DIR="$tmp/logs" SEBT_PROGRESS="$1"; shift
         source "$root/ci/common.sh"; "$@") >"$tmp/out" 2>"$tmp/err"; }

printf '[  3%%] Building C object a.o\n[ 45%%] Building C object b.o\nwarning: x\n' >"$tmp/make.log"
printf '[12/345] Building C object a.o\n[69/345] Linking C executable b\n' >"$tmp/ninja.log"
printf '      Start 7: x\n 3/12 Test  #7: x ....   Passed\n 6/12 Test  #9: y ....   Passed\n' >"$tmp/ctest.log"
printf 'configuring\n' >"$tmp/none.log"
for want in "make.log 45%" "ninja.log 20%" "ctest.log 50% of the tests" "none.log " "missing.log "; do
  log=${want%% *} pct=${want#* }
  run off progress_of "$tmp/$log" || fail "progress_of $log exited $?"
  [[ $(cat "$tmp/out") == "$pct" ]] || fail "progress_of $log: '$(cat "$tmp/out")', expected '$pct'"
done

# A short step in a log: its ok line and nothing else (the first progress
# line comes after 9 s); its output goes to its log, not to ours.
run "" step "short one" sh -c 'echo hidden; echo [ 50%] x' || fail "a working step exited $?"
[[ $(wc -l <"$tmp/out") -eq 1 ]] && grep -qE '^  ok   short one +[0-9]+s$' "$tmp/out" ||
  fail "a working step printed: $(cat "$tmp/out")"
grep -q hidden "$tmp/logs/short_one.log" || fail "the step's output is not in its log"

# A failing step: FAIL with its exit code, the log's tail, where the log
# is; the script exits with the step's code.
rc=0; run "" step "bad one" sh -c 'echo the reason; exit 3' || rc=$?
[[ $rc -eq 3 ]] || fail "a failing step exited $rc, expected 3"
grep -q '^  FAIL bad one .*(exit 3)' "$tmp/err" && grep -q 'the reason' "$tmp/err" &&
  grep -q "full log: $tmp/logs/bad_one.log" "$tmp/err" || fail "a failing step printed: $(cat "$tmp/err")"

echo "ok: step and progress"
