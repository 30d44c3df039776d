#!/usr/bin/env bash
# `sebt validate` of a plugin whose run never returns, every setting at its
# default: the first call of the backend is stopped as hung once it has run
# past the default --call-timeout (60 s; 20 x the reference's time for a
# call this small is far less), the run ends with exit 1 naming the check it
# hung in, and every later check of the backend is skipped naming it. Its
# seconds are printed, never asserted: that the default limit stopped the
# call, not the check's 600 s, is the message's "within 60 s", whatever the
# machine's load.
#
# Two ctests, so the minute of waiting holds none of ctest's slots: `start`
# launches the validate in the background (its own session, every stream
# to a file, so ctest does not wait for it) and returns; `check`, a test
# that requires it and that ctest starts last (COST), waits for its exit
# code, however long that takes, and judges its output. Run alone, `check`
# simply waits out the minute. The wait is a lock, not a poll: `start` takes
# it before the launch and the background shell inherits it, so it is
# released only when that shell has written the exit code and ended.
#   validate_hang_test.sh start SEBT LIAR_SO WORK_DIR
#   validate_hang_test.sh check WORK_DIR
set -u
mode=$1
case $mode in
start)
  sebt=$2 liar=$3 work=$4
  rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
  date +%s >t0
  exec 9>lock && flock -n 9 || { echo "FAIL: could not take $work/lock"; exit 1; }
  SEBT_LIAR=loop setsid bash -c '"$0" validate --backend "$1" >v.txt 2>v.err; echo $? >rc.tmp; mv rc.tmp rc' \
    "$sebt" "$liar" </dev/null >/dev/null 2>&1 &
  echo $! >pid
  echo "started: validate of the hanging plugin in the background (pid $!, $work)"
  exit 0
  ;;
check) work=$2 ;;
*) echo "usage: $0 start SEBT LIAR_SO WORK_DIR | check WORK_DIR"; exit 2 ;;
esac
cd "$work" 2>/dev/null && [ -s pid ] && [ -e lock ] || { echo "FAIL: no validate was started in $work (run the start test)"; exit 1; }
# Blocks until the background shell has ended; a launcher gone without writing an exit code is a failure, not a wait.
flock lock true || { echo "FAIL: could not wait on $work/lock"; exit 1; }
[ -e rc ] || { echo "FAIL: the background validate ended without an exit code"; cat v.txt v.err 2>/dev/null; exit 1; }
rc=$(cat rc) took=$(($(date +%s) - $(cat t0)))
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
[ "$rc" -eq 1 ] || fail "exit $rc, expected 1"
hung=$(grep -E '^crash ' v.txt)
[ "$(grep -c . <<< "$hung")" -eq 1 ] || fail "expected exactly one crashed check, got: $hung"
grep -Eq "^crash +replay +fast_cpu-seed1-case12 .*hung: the backend liar did not return from run_batch \(1 combo x 10 bars\) within 60 s \(20 x the reference's .* at least --call-timeout 60 s\) and was stopped" <<< "$hung" ||
  fail "the hung check is not named with the default limit: $hung"
grep -Eq "^skipped +parity .*not run: the backend hung in replay fast_cpu-seed1-case12" v.txt ||
  fail "the later checks are not skipped naming the hung one"
if grep -Eq "^(fail|crash) +(parity|fuzz|determinism|written)" v.txt; then fail "a later check ran: $(grep -E '^(fail|crash)' v.txt)"; fi
if [ "$failures" -ne 0 ]; then
  echo "--- stdout"; cat v.txt; echo "--- stderr"; cat v.err
  exit 1
fi
echo "ok: exit 1, ${took}s after the start: $(sed 's/  */ /g' <<< "$hung" | head -c 240)"
cd / && rm -rf "$work"
