# Shared by ci/*.sh (sourced, not run): quiet steps that fail loudly.

set -euo pipefail

SEBT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SEBT_JOBS="${SEBT_JOBS:-2}"
SEBT_LOG_DIR="${SEBT_LOG_DIR:-$SEBT_ROOT/build-logs}"
mkdir -p "$SEBT_LOG_DIR"

# One build folder per configuration: the demo and the plain pass of
# ci/test.sh build the same thing (gcc, -Werror, RelWithDebInfo), so they
# share this folder and the second finds the first's work done.
SEBT_PLAIN_BUILD_DIR="${SEBT_BUILD_DIR:-$SEBT_ROOT/build}"
SEBT_PLAIN_CONFIG=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEBT_SANITIZE=OFF)

# How a running step shows it is alive (docs/decisions.md, "Scripts that
# speak"): on a terminal, one line redrawn in place; elsewhere (a CI log, a
# pipe, tee), a line every 10 s; SEBT_PROGRESS=off for none.
if [[ ${SEBT_PROGRESS:-} == off ]]; then
  SEBT_PROGRESS_MODE=off
elif [[ -t 1 ]]; then
  SEBT_PROGRESS_MODE=live
else
  SEBT_PROGRESS_MODE=lines
fi

# "45%" from the step's log: make's "[ 45%]", ninja's "[12/345]" or
# ctest's " 12/345 Test"; empty when the log says nothing of the kind.
progress_of() {
  { tail -c 8192 "$1" 2>/dev/null || true; } | tr '\r' '\n' | awk '
    match($0, /^\[ *[0-9]+%\]/) { p = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "", p) }
    match($0, /^\[[0-9]+\/[0-9]+\]/) { split(substr($0, 2, RLENGTH - 2), f, "/"); if (f[2] > 0) p = int(100 * f[1] / f[2]) "%" }
    match($0, /^ *[0-9]+\/[0-9]+ Test /) { split($1, f, "/"); if (f[2] > 0) p = int(100 * f[1] / f[2]) "% of the tests" }
    END { print p }'
}

# ticker NAME LOG START: runs beside a step until killed (or until this
# script is gone), saying how far the step is and for how long it has run.
ticker() {
  local name=$1 log=$2 start=$3 owner=$$ last=$SECONDS pct line
  # SECONDS counts whole seconds: a line after 9 of them, checked every
  # half second, comes at most 10 s after the one before.
  while kill -0 "$owner" 2>/dev/null; do
    sleep 0.5
    [[ $SEBT_PROGRESS_MODE == live ]] || ((SECONDS - last >= 9)) || continue
    pct=$(progress_of "$log")
    line=$(printf '  ..   %-40s %4ds%s' "$name" $((SECONDS - start)) "${pct:+  $pct}")
    if [[ $SEBT_PROGRESS_MODE == live ]]; then
      printf '\r%s\033[K' "$line"
    else
      printf '%s\n' "$line"
      last=$SECONDS
    fi
  done
}

# Each step's seconds and name, in order, for a summary at the end.
SEBT_STEP_TIMES=()

# step NAME COMMAND...: runs COMMAND with its output in a log; prints one
# line when it works, and the log's tail and where the log is when it fails.
# While it runs, the ticker above speaks for it.
step() {
  local name="$1"; shift
  local slug="${name//[^A-Za-z0-9_.-]/_}"
  local log="$SEBT_LOG_DIR/${slug}.log"
  local start=$SECONDS tick="" rc=0
  : >"$log"
  if [[ $SEBT_PROGRESS_MODE != off ]]; then
    # It stops itself when this script is gone (Ctrl-C), so no trap of the
    # caller's is replaced.
    ticker "$name" "$log" "$start" &
    tick=$!
  fi
  "$@" >"$log" 2>&1 || rc=$?
  if [[ -n $tick ]]; then
    kill "$tick" 2>/dev/null || true
    wait "$tick" 2>/dev/null || true
    if [[ $SEBT_PROGRESS_MODE == live ]]; then printf '\r\033[K'; fi
  fi
  SEBT_STEP_TIMES+=("$(printf '%6ds  %s' $((SECONDS - start)) "$name")")
  if [[ $rc -eq 0 ]]; then
    printf '  ok   %-40s %4ds\n' "$name" $((SECONDS - start))
  else
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
