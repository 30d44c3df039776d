#!/bin/bash
# The Python package's streamed sweep against `sebt sweep --format npy`, end
# to end (the whole process: start-up and import, load, grid, backtests,
# every row into numpy or the file) and peak RSS, over the same grid and
# series, interleaved, REPS times each:
#   cli      sebt sweep --format npy --no-verify --output FILE: the same work
#            as the package, which does not re-check rows on the reference
#   cli-verified  sebt sweep --format npy --output FILE, as run by default
#            (its verification re-runs a sample on the reference)
#   py-file  sebt.sweep(..., out=FILE): the same bytes written from the
#            driver's window buffers through libsebt's atomic file, past
#            the page cache as the CLI writes (memory: a window, whatever
#            the grid)
#   py-array sebt.sweep(...): rows copied into one preallocated numpy array
#            (memory: that array, 157 bytes a row, plus a window)
#   py-iter  sebt.iter_sweep(...): the rows in chunks of a window, each
#            summed and dropped (memory: a few windows)
# Every file is compared with the CLI's (cmp), and each round's array with
# it (bytes) in one more, untimed, call: a fast wrong answer fails. The target: py-array and py-file at most
# 1.2 times cli's median end to end; py-file and py-iter peak RSS within a
# few windows (65,536 rows: 9 MB of rows, plus the series) of the
# interpreter's own.
#
# usage: bench/python_sweep_vs_cli.sh [BUILD_DIR] [OUT_DIR]
# Environment: REPS (3), GRID (bench/grids/big-967680.grid), DATA (the
# bundled 15m series), PY (/usr/bin/python3), OMP_NUM_THREADS (as given).
# Files: OUT_DIR/runs.tsv (engine rep end_to_end_s peak_rss_kb), and the
# medians on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
reps=${REPS:-3}
grid=${GRID:-$root/bench/grids/big-967680.grid}
data=${DATA:-$root/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz}
py=${PY:-/usr/bin/python3}
export PYTHONPATH=$build/python CI=1
unset SEBT_LIB
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
"$py" -c 'import sebt, numpy' || { echo "the package does not import from $build/python" >&2; exit 2; }
# Warm the series cache and the page cache once, so every engine starts alike.
"$build/sebt" run --data "$data" >/dev/null 2>&1

printf 'engine\trep\tend_to_end_s\tpeak_rss_kb\n' >"$out/runs.tsv"
measure() {   # engine rep command...
  local engine=$1 rep=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$out/rss" "$@" >/dev/null 2>"$out/$engine.err" || { cat "$out/$engine.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\t%s\n' "$engine" "$rep" "$(echo "$t1 - $t0" | bc)" "$(tail -1 "$out/rss")" >>"$out/runs.tsv"
}
for rep in $(seq 1 "$reps"); do
  measure cli "$rep" "$build/sebt" sweep --data "$data" --grid "$grid" --format npy --no-verify --output "$out/cli.npy"
  measure cli-verified "$rep" "$build/sebt" sweep --data "$data" --grid "$grid" --format npy --output "$out/cli-v.npy"
  measure py-file "$rep" "$py" -c 'import sys, sebt; sebt.sweep(sys.argv[1], sys.argv[2], out=sys.argv[3])' \
    "$data" "$grid" "$out/py.npy"
  cmp "$out/cli.npy" "$out/py.npy" || { echo "py-file differs from the CLI's npy" >&2; exit 1; }
  measure py-array "$rep" "$py" -c '
import sys, sebt
print(len(sebt.sweep(sys.argv[1], sys.argv[2])))' "$data" "$grid"
  # The same call again, untimed, its array compared with the CLI's file
  # (two copies of every row: not the cost of the call).
  "$py" -c '
import sys, numpy as np, sebt
r = sebt.sweep(sys.argv[1], sys.argv[2])
a = np.load(sys.argv[3], mmap_mode="r")
assert r.rows.tobytes() == a.tobytes(), "py-array differs from the CLI npy"' "$data" "$grid" "$out/cli.npy" 2>/dev/null ||
    { echo "py-array differs from the CLI's npy" >&2; exit 1; }
  measure py-iter "$rep" "$py" -c '
import sys, sebt
n = 0
for chunk in sebt.iter_sweep(sys.argv[1], sys.argv[2]):
    n += len(chunk)
print(n)' "$data" "$grid"
done
echo "runs: $out/runs.tsv"
"$py" - "$out/runs.tsv" <<'PYEOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = {}
for e in ("cli", "cli-verified", "py-file", "py-array", "py-iter"):
    r = [x for x in rows if x["engine"] == e]
    med[e] = (statistics.median(float(x["end_to_end_s"]) for x in r), statistics.median(int(x["peak_rss_kb"]) for x in r))
for e, (t, rss) in med.items():
    print("%-12s end to end %8.2f s (%.2fx cli)  peak RSS %8.1f MB" % (e, t, t / med["cli"][0], rss / 1024))
PYEOF
