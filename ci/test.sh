#!/usr/bin/env bash
# The whole test suite, as CI runs it: gcc with -Wall -Wextra -Werror and
# every test; then again with AddressSanitizer + UndefinedBehaviorSanitizer.
# Idempotent: reruns reuse the build folders and rebuild only what changed.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The plain pass builds what the demo builds, in the same folder
# (ci/common.sh): after ./ci/demo.sh only what changed is rebuilt.
plain="${SEBT_TEST_BUILD_DIR:-$SEBT_PLAIN_BUILD_DIR}"
sanitized="${SEBT_SAN_BUILD_DIR:-$SEBT_ROOT/build-ci-san}"
start=$SECONDS

# ctest's own JUnit report lands beside the logs, for the CI system to read;
# the ten slowest tests of the run are printed from it (after the step's
# line when it passes, at the end of its log's tail when it fails), so where
# CI's time goes is in its output.
# Two tests at once, each with OpenMP's two threads, are four threads on two
# cores: libgomp's threads spin at each barrier (300,000 turns by default)
# before sleeping, on a core the other test needs. Passive waiting cut the
# CPU time of eight threaded tests run as ctest -j2 by a third (docs/ci.md);
# results never depend on it. The validate and speed-gate steps run alone
# and keep the default.
run_ctest() {
  local dir="$1" report="$2" rc=0; shift 2
  OMP_WAIT_POLICY=passive ctest --test-dir "$dir" --output-on-failure --timeout 600 -j "$SEBT_JOBS" \
    --output-junit "$SEBT_LOG_DIR/$report.xml" "$@" || rc=$?
  slowest_tests "$SEBT_LOG_DIR/$report.xml"
  return "$rc"
}
# ctest_step NAME DIR REPORT CTEST_ARGS...: a ctest run as one step.
ctest_step() {
  local name="$1" report="$3"
  step "$name" run_ctest "${@:2}"
  slowest_tests "$SEBT_LOG_DIR/$report.xml"
}
# slowest_tests JUNIT: the ten longest <testcase>s, seconds first.
slowest_tests() {
  [[ -f $1 ]] || return 0
  echo "       slowest tests of ${1##*/}:"
  grep -o '<testcase name="[^"]*"[^>]* time="[^"]*"' "$1" |
    sed -E 's/<testcase name="([^"]*)".* time="([^"]*)"/\2 \1/' |
    sort -rn | head -10 | awk '{ printf "       %8.1fs  %s\n", $1, $2 }' || true
}

# The project eats its own food: the release gate every kernel author runs
# (sebt validate) on the built-in backends, with a short fuzz budget and the
# two smaller bundled series to keep CI short; JUnit and Markdown beside the logs.
# validate LABEL BACKEND CASES: the budget is in cases (about what CI's
# runner fuzzed in 10 s of each), so every run checks the same cases
# whatever the machine, and the three can run side by side.
validate() {
  "$plain/sebt" validate --backend "$2" --cases "$3" \
    --data "$SEBT_ROOT/fixtures/data/BTCUSDT-1m-2019-01.csv.gz" \
    --data "$SEBT_ROOT/fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv" \
    --junit "$SEBT_LOG_DIR/validate-$1.xml" --markdown "$SEBT_LOG_DIR/validate-$1.md"
}
# A kernel in another language goes through the same gate: the numba peer,
# served over the kernel protocol (docs/kernels-python.md), tolerant(1e-9).
numba_kernel="exec:/usr/bin/python3 $SEBT_ROOT/bench/peers/numba_peer.py --serve"
# cuda through host execution: its CUDA sources on CPU threads under the
# checking runtime stand-in (gpu/README.md).
validate_host() (export SEBT_CUDA_LIBRARY="$plain/libsebt_cuda_host.so"; validate "$@")
# Most of a validate's stages run on one thread: the three side by side,
# each with its own log (build-logs/validate-LABEL.log), fill both cores.
validate_side_by_side() {
  local labels=() pids=() rc=0 i
  start_validate() {
    local label=$1; shift
    "$@" >"$SEBT_LOG_DIR/validate-$label.log" 2>&1 &
    labels+=("$label"); pids+=($!)
  }
  start_validate fast_cpu validate fast_cpu fast_cpu 1835
  if [[ -f "$plain/libsebt_cuda_host.so" ]]; then
    start_validate cuda validate_host cuda cuda 38
  else
    echo "validate cuda (host execution): skipped (no libsebt_cuda_host.so)"
  fi
  if /usr/bin/python3 -c "import numba" 2>/dev/null; then
    start_validate numba_peer validate numba_peer "$numba_kernel" 342
  else
    echo "validate numba_peer: skipped (python3-numba is not installed)"
  fi
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      echo "validate ${labels[$i]}: $(tail -n 1 "$SEBT_LOG_DIR/validate-${labels[$i]}.log")"
    else
      rc=1
      echo "validate ${labels[$i]}: FAILED; the end of build-logs/validate-${labels[$i]}.log:"
      tail -n 60 "$SEBT_LOG_DIR/validate-${labels[$i]}.log"
    fi
  done
  return "$rc"
}

echo "sebt tests: gcc -Wall -Wextra -Werror, again with no optional part, then ASan+UBSan (logs in $SEBT_LOG_DIR)"
step "install dependencies" "$SEBT_ROOT/ci/install-deps.sh"

configure_and_build "$plain" "${SEBT_PLAIN_CONFIG[@]}"
ctest_step "ctest ${plain##*/}" "$plain" "ctest-${plain##*/}" -LE fuzz
# The libFuzzer harnesses (core/fuzz, built with clang, ASan+UBSan inside)
# for a short budget each; any finding fails CI. docs/fuzzing.md has the
# longer run. Skipped (and said so) without clang's libFuzzer.
export SEBT_FUZZ_SECONDS="${SEBT_CI_FUZZ_SECONDS:-20}"
ctest_step "fuzz ${SEBT_FUZZ_SECONDS}s per harness (libFuzzer)" "$plain" "ctest-${plain##*/}-fuzz" -L fuzz
unset SEBT_FUZZ_SECONDS
validate_step="validate fast_cpu, cuda (host), numba_peer"
step "$validate_step" validate_side_by_side
grep -E '^validate ' "$SEBT_LOG_DIR/${validate_step//[^A-Za-z0-9_.-]/_}.log" | sed 's/^/       /' || true

# The README's speed gate: a quick report, then its ratios against the
# committed baseline (docs/performance.md). A regression fails CI; a runner
# too loaded to tell is inconclusive (exit 4), said here, and passes.
speed_gate() {
  local rc=0
  "$plain/sebt" report --out "$SEBT_LOG_DIR/report-quick" --quick --history none || return
  "$plain/sebt" report --baseline "$SEBT_ROOT/bench/results/report-quick/bench.json" \
    "$SEBT_LOG_DIR/report-quick/bench.json" >"$SEBT_LOG_DIR/speed-gate.txt" || rc=$?
  cat "$SEBT_LOG_DIR/speed-gate.txt"
  if [[ $rc -eq 4 ]]; then echo "speed gate: inconclusive (exit 4), not a regression: passes"; rc=0; fi
  return "$rc"
}
if [[ -x "$plain/sebt_bench" ]]; then
  step "speed gate (report --quick --baseline)" speed_gate
  grep -E '^(ok|REGRESSION|INCONCLUSIVE)' "$SEBT_LOG_DIR/speed-gate.txt" | sed 's/^/       /' || true
else
  echo "speed gate: skipped (no sebt_bench: Google Benchmark is not installed)"
fi

# Every optional part absent, as on a machine with none of them installed
# (docs/ci.md): each optional library or tool is forced not-found, nvcc,
# MPI, Google Benchmark and libFuzzer are off, under -Werror; the unit and
# CLI tests that are not slow then run with numba, torch and pandas
# unimportable (ci/absent-python), so what needs them skips.
minimal="${SEBT_MINIMAL_BUILD_DIR:-$SEBT_ROOT/build-ci-minimal}"
configure_and_build "$minimal" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEBT_SANITIZE=OFF \
  -DSEBT_BUILD_CUDA=OFF -DSEBT_BUILD_MPI=OFF -DSEBT_BUILD_BENCH=OFF -DSEBT_BUILD_FUZZ=OFF -DSEBT_FAULT_INJECTION=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON "-DSEBT_WITHOUT=xxhash;libdeflate;jansson;help2man;gnuplot"
minimal_ctest() (
  export PYTHONPATH="$SEBT_ROOT/ci/absent-python${PYTHONPATH:+:$PYTHONPATH}"
  run_ctest "$minimal" "ctest-${minimal##*/}" -L 'unit|cli' -LE 'slow|fuzz' -E '^(plugin_cli|oracle_test_cli_oracle)$'
)
step "ctest ${minimal##*/} (no optional part; unit and cli, not slow)" minimal_ctest
slowest_tests "$SEBT_LOG_DIR/ctest-${minimal##*/}.xml"

# The nvcc-built CUDA module stays out of the sanitized build (the CUDA
# driver and ASan's shadow memory do not mix); its host execution,
# libsebt_cuda_host.so, is g++ code and is built and run here too: cuda
# parity, fuzz and fault injection under ASan+UBSan (gpu_host_*, gpu_test_*).
configure_and_build "$sanitized" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEBT_SANITIZE=ON \
  -DSEBT_BUILD_CUDA=OFF -DSEBT_BUILD_BENCH=OFF -DSEBT_BUILD_FUZZ=OFF
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export LSAN_OPTIONS="suppressions=$SEBT_ROOT/ci/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Every test but those labelled sanitize_skip: the C code they drive runs
# here under another test, and their time goes to a Python kernel or to a
# second series through the same code (docs/ci.md lists each).
ctest_step "ctest ${sanitized##*/} (ASan+UBSan)" "$sanitized" "ctest-${sanitized##*/}" -LE sanitize_skip

# Debug (-O0) warns where -O2 does not (gcc's format-truncation): what
# ships (sebt and the libraries it links) built as Debug with ASan+UBSan
# under -Werror, build only.
debug_san="${SEBT_DEBUG_SAN_BUILD_DIR:-$SEBT_ROOT/build-ci-debug-san}"
step "configure ${debug_san##*/}" cmake -S "$SEBT_ROOT" -B "$debug_san" -DSEBT_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
  -DSEBT_SANITIZE=ON -DSEBT_BUILD_CUDA=OFF -DSEBT_BUILD_BENCH=OFF -DSEBT_BUILD_FUZZ=OFF
step "build ${debug_san##*/} (sebt only)" cmake --build "$debug_san" -j "$SEBT_JOBS" --target sebt_cli

echo "sebt tests: all passed in $((SECONDS - start))s; each step:"
printf '%s\n' "${SEBT_STEP_TIMES[@]}"
