#!/usr/bin/env bash
# `sebt validate` of a plugin whose run never returns, every setting at its
# default: the first call of the backend is stopped as hung once it has run
# past the default --call-timeout (60 s; 20 x the reference's time for a
# call this small is far less), the run ends with exit 1 naming the check it
# hung in, and every later check of the backend is skipped naming it. Its
# seconds are printed, never asserted: that the default limit stopped the
# call, not the check's 600 s, is the message's "within 60 s", whatever the
# machine's load.
#   validate_hang_test.sh SEBT LIAR_SO
set -u
sebt=$1 liar=$2
work=$(mktemp -d /tmp/sebt_validate_hang_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
t0=$SECONDS
SEBT_LIAR=loop "$sebt" validate --backend "$liar" > v.txt 2> v.err
rc=$? took=$((SECONDS - t0))
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
echo "ok: exit 1 in ${took}s: $(sed 's/  */ /g' <<< "$hung" | head -c 240)"
