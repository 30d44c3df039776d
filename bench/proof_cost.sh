#!/bin/bash
# What a sweep's own proof (docs/cli.md, "Verification") costs: the same
# sweep with `--no-verify` and verified by default, as npy and as CSV,
# alternated (no-verify, verified, no-verify, ...), REPS rounds, wall time
# of the whole process; medians and the ratio verified / no-verify on
# stdout. Run it on a quiet machine: the ratio is what it measures, and a
# build or test beside it moves both sides unevenly.
#
# usage: bench/proof_cost.sh [SEBT] [OUT_DIR]
# Environment: REPS (7), GRID (bench/grids/big-967680.grid), DATA (the
# bundled 15m series), THREADS (the cores).
# Files: OUT_DIR/runs.tsv (format mode round wall_s load1 proof_line).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sebt=${1:-$root/build/sebt}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
reps=${REPS:-7}
grid=${GRID:-$root/bench/grids/big-967680.grid}
data=${DATA:-$root/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz}
threads=${THREADS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CI=1
"$sebt" run --data "$data" > /dev/null 2>&1 || true   # the series cache and the page cache, warm
printf 'format\tmode\tround\twall_s\tload1\tproof\n' > "$out/runs.tsv"
one() { # format mode round
  local fmt=$1 mode=$2 round=$3 flag=()
  [ "$mode" = no-verify ] && flag=(--no-verify)
  local load t0 t1 line
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  "$sebt" sweep --data "$data" --grid "$grid" --threads "$threads" --format "$fmt" --output "$work/o.$fmt" \
    "${flag[@]}" 2> "$work/err"
  t1=$(date +%s.%N)
  line=$(grep -o 'verified: .*' "$work/err" || true)
  printf '%s\t%s\t%s\t%.3f\t%s\t%s\n' "$fmt" "$mode" "$round" "$(echo "$t1 - $t0" | bc)" "$load" "$line" \
    >> "$out/runs.tsv"
}
for r in $(seq "$reps"); do
  for fmt in npy csv; do
    one "$fmt" no-verify "$r"
    one "$fmt" verified "$r"
  done
done
python3 - "$out/runs.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
med = {}
for fmt in ('npy', 'csv'):
    for mode in ('no-verify', 'verified'):
        med[fmt, mode] = statistics.median(float(r['wall_s']) for r in rows if r['format'] == fmt and r['mode'] == mode)
    print(f"{fmt}: no-verify {med[fmt, 'no-verify']:.3f} s, verified {med[fmt, 'verified']:.3f} s, "
          f"+{100 * (med[fmt, 'verified'] / med[fmt, 'no-verify'] - 1):.1f} %")
print("load1 over the runs:", min(r['load1'] for r in rows), "to", max(r['load1'] for r in rows))
PY
