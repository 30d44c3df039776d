#!/usr/bin/env bash
# The main job: installs what is missing, builds sebt and installs it into
# a prefix inside the build folder, backtests the default combo on the
# bundled real data (152,832 15-minute BTCUSDT bars) and writes the quick
# performance report. Prints a short summary; the full outputs are in
# files, and the last lines say where, and how to put sebt on PATH.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="$SEBT_PLAIN_BUILD_DIR"
prefix="$build/prefix"
data="$SEBT_ROOT/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz"
out="$build/demo"
took="$out/duration"   # seconds the last whole run took here
mkdir -p "$out"
start=$SECONDS

echo "sebt demo: build in $build, install in $prefix"
if [[ -s $took ]]; then
  echo "sebt demo: the last run here took $(($(cat "$took") / 60)) min $(($(cat "$took") % 60)) s;" \
       "this one rebuilds only what changed, then reruns the backtest and the report"
else
  # A first run on a fresh clone, 2 cores, load 2 to 10; the build is most of it.
  echo "sebt demo: a first run builds everything and takes about 13 minutes on 2 cores (the build" \
       "most of it), less with more cores (SEBT_JOBS, now $SEBT_JOBS); reruns build only what changed"
fi
step "install dependencies" "$SEBT_ROOT/ci/install-deps.sh"
configure_and_build "$build" "${SEBT_PLAIN_CONFIG[@]}"
step "install into ${prefix#"$SEBT_ROOT"/}" cmake --install "$build" --prefix "$prefix"
sebt="$prefix/bin/sebt"

echo
echo "\$ sebt run --data fixtures/data/BTCUSDT-15m-2017-2021.csv.gz (default combo)"
"$sebt" run --data "$data" --format text --output "$out/trades.txt"
# The same run as JSON; its stderr (the same gap warning) once is enough.
"$sebt" run --data "$data" --format json --output "$out/run.json" 2>"$out/run-json.log" ||
  { cat "$out/run-json.log" >&2; exit 1; }
echo "first trades:"
head -n 4 "$out/trades.txt"
# The summary, a line per figure saying what it means.
sed -n '/^summary: /,$p' "$out/trades.txt"
echo "(all trades: $out/trades.txt; JSON: $out/run.json)"

echo
echo "\$ sebt report --out $build/report --quick   (about two minutes on 2 cores)"
# The report's one-line summary on stdout, kept for below; its stderr is
# the step's log. A demo's run goes into the build folder's history, not
# the user's.
report() {
  "$sebt" report --out "$build/report" --quick --history "$build/report-history.csv" >"$out/report-summary.txt" ||
    { local rc=$?; echo "sebt report failed; benchmark log: $build/report/bench.log"; return "$rc"; }
}
step "sebt report --quick" report
sed 's/^sebt report: /  /' "$out/report-summary.txt"
echo "sebt demo: performance report at $build/report/index.html (Markdown: $build/report/report.md," \
     "benchmark log: $build/report/bench.log)"
echo $((SECONDS - start)) >"$took"

echo
echo "sebt demo: done in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s. sebt is installed in $prefix;"
echo "to run it as 'sebt' (the README's commands do), in this shell:"
echo "  export PATH=\"$prefix/bin:\$PATH\""
