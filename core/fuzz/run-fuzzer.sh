#!/usr/bin/env bash
# run-fuzzer.sh HARNESS SECONDS WORKDIR SEED_DIR...
# Runs one libFuzzer harness for SECONDS (SEBT_FUZZ_SECONDS overrides it),
# starting from the seeds and from what earlier runs found in
# WORKDIR/corpus; a finding is saved to WORKDIR/artifacts/ and fails the
# run. Exits 77 (ctest: skipped) when the harness was not built.
set -euo pipefail
harness="$1"; secs="${SEBT_FUZZ_SECONDS:-$2}"; work="$3"; shift 3
if [[ ! -x "$harness" ]]; then
  echo "skipped: $harness was not built (needs clang with libclang-rt's libFuzzer; see docs/fuzzing.md)"
  exit 77
fi
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# -error_exitcode=1: libFuzzer's default (77) would read as "skipped".
# A fixed seed (SEBT_FUZZ_SEED, default 1; 0 = random) so that a CI run is
# repeatable: the same commit explores the same inputs first.
exec "$harness" -seed="${SEBT_FUZZ_SEED:-1}" -max_total_time="$secs" -max_len=8192 -timeout=20 -rss_limit_mb=2560 \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$@"
