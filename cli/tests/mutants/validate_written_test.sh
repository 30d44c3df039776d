#!/usr/bin/env bash
# The written-sweep stage of `sebt validate` catches a writer bug planted in
# sebt_mutants (core/test_faults.h): validate of fast_cpu exits 1 with the
# stage's checks failed (verification failed) and no other stage failing.
# The stage's own input (the short series it writes) does not go through
# the number writer under test, so the digit slip fails the sweep, not
# the set-up.
#   validate_written_test.sh SEBT_MUTANTS DATA RUN FAULT...
# RUN: whole (every stage runs, none but the written sweep fails) or
# fail-fast (a sanitized build, docs/ci.md: the run stops at the written
# sweep's first failed check; the stages before it pass).
set -u
mutants=$1 data=$2 run=$3
shift 3
stop=()
case $run in
  whole) ;;
  fail-fast) stop=(--fail-fast) ;;
  *) echo "validate_written_test.sh: RUN is whole or fail-fast, not '$run'"; exit 2 ;;
esac
work=$(mktemp -d /tmp/sebt_validate_written_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
for fault in "$@"; do
  SEBT_TEST_FAULT=$fault "$mutants" validate --backend fast_cpu --cases 30 --no-speed --data "$data" \
    --save "$work/save-$fault" "${stop[@]}" > "$fault.txt" 2> "$fault.err"
  rc=$?
  bad=""
  [ "$rc" -eq 1 ] || bad="exit $rc, expected 1"
  grep -Eq "^fail +written-sweep .*verification failed" "$fault.txt" || bad="$bad; no written-sweep check failed"
  others=$(grep -E '^(fail|crash|error) ' "$fault.txt" | grep -Ev '^fail +written-sweep ')
  [ -z "$others" ] || bad="$bad; other checks failed: $others"
  if [ -n "$bad" ]; then
    echo "FAIL $fault: $bad"; grep -Ev '^ok ' "$fault.txt" | head -12; failures=$((failures + 1))
  else
    echo "ok $fault: $(grep -m1 -E '^fail +written-sweep' "$fault.txt" | sed 's/  */ /g' | head -c 220)"
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "all caught"
