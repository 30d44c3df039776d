#!/usr/bin/env bash
# The main job: installs what is missing, builds sebt, and backtests the
# default combo on the bundled real data (152,832 15-minute BTCUSDT bars).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${SEBT_BUILD_DIR:-$SEBT_ROOT/build}"
data="$SEBT_ROOT/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz"

echo "sebt demo: build in $build"
step "install dependencies" "$SEBT_ROOT/ci/install-deps.sh"
configure_and_build "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo

echo
echo "\$ sebt run --data fixtures/data/BTCUSDT-15m-2017-2021.csv.gz --format text"
"$build/sebt" run --data "$data" --format text

echo
echo "\$ sebt report --out $build/report --quick"
"$build/sebt" report --out "$build/report" --quick
echo "sebt demo: performance report at $build/report/index.html (Markdown: $build/report/report.md)"
