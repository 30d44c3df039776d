#!/usr/bin/env bash
# The main job: installs what is missing, builds sebt, backtests the default
# combo on the bundled real data (152,832 15-minute BTCUSDT bars) and writes
# the quick performance report. Prints a short summary; the full outputs
# are in files, and the last lines say where.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${SEBT_BUILD_DIR:-$SEBT_ROOT/build}"
data="$SEBT_ROOT/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz"
out="$build/demo"
mkdir -p "$out"

echo "sebt demo: build in $build"
step "install dependencies" "$SEBT_ROOT/ci/install-deps.sh"
configure_and_build "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo

echo
echo "\$ sebt run --data fixtures/data/BTCUSDT-15m-2017-2021.csv.gz (default combo)"
"$build/sebt" run --data "$data" --format text --output "$out/trades.txt"
# The same run as JSON; its stderr (the same gap warning) once is enough.
"$build/sebt" run --data "$data" --format json --output "$out/run.json" 2>"$out/run-json.log" ||
  { cat "$out/run-json.log" >&2; exit 1; }
echo "first trades:"
head -n 4 "$out/trades.txt"
# The summary, a line per figure saying what it means.
sed -n '/^summary: /,$p' "$out/trades.txt"
echo "(all trades: $out/trades.txt; JSON: $out/run.json)"

echo
echo "\$ sebt report --out $build/report --quick   (about two minutes on two cores)"
# The report's one-line summary; the benchmark's own output is in bench.log.
# A demo's run goes into the build folder's history, not the repository's.
if ! "$build/sebt" report --out "$build/report" --quick --history "$build/report-history.csv" \
     2>"$build/report-stderr.log" | sed 's/^sebt report: /  /'; then
  cat "$build/report-stderr.log" >&2
  echo "sebt demo: FAILED: sebt report (log above; benchmark log: $build/report/bench.log)" >&2
  exit 1
fi
echo "sebt demo: performance report at $build/report/index.html (Markdown: $build/report/report.md," \
     "benchmark log: $build/report/bench.log)"
