# Shared by ci/*.sh (sourced, not run): quiet steps that fail loudly.

set -euo pipefail

SEBT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SEBT_JOBS="${SEBT_JOBS:-2}"
SEBT_LOG_DIR="${SEBT_LOG_DIR:-$SEBT_ROOT/build-logs}"
mkdir -p "$SEBT_LOG_DIR"

# step NAME COMMAND...: runs COMMAND with its output in a log; prints one
# line when it works, and the log's tail and where the log is when it fails.
step() {
  local name="$1"; shift
  local slug="${name//[^A-Za-z0-9_.-]/_}"
  local log="$SEBT_LOG_DIR/${slug}.log"
  local start=$SECONDS
  if "$@" >"$log" 2>&1; then
    printf '  ok   %-40s %4ds\n' "$name" $((SECONDS - start))
  else
    local rc=$?
    printf '  FAIL %-40s (exit %d)\n' "$name" "$rc" >&2
    echo "------ last 150 lines of $log ------" >&2
    tail -n 150 "$log" >&2
    echo "------ ${0##*/}: FAILED at '$name'; full log: $log ------" >&2
    exit "$rc"
  fi
}

# CI's compiler is gcc. Through the environment, not -DCMAKE_C_COMPILER, so
# a build folder configured earlier is reused instead of being wiped.
export CC=gcc CXX=g++

# configure_and_build DIR CMAKE_ARGS...: builds the whole project in DIR.
configure_and_build() {
  local dir="$1"; shift
  step "configure ${dir##*/}" cmake -S "$SEBT_ROOT" -B "$dir" -DSEBT_WERROR=ON "$@"
  step "build ${dir##*/}" cmake --build "$dir" -j "$SEBT_JOBS"
}
