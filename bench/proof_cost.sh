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
# Files: OUT_DIR/runs.tsv (format mode round wall_s cpu_s load1 proof_line):
# cpu_s, the process's user + system time, moves less than the wall time
# when other work shares the machine.
# FORMATS (npy csv) picks the formats.
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
printf 'format\tmode\tround\twall_s\tcpu_s\tload1\tproof\n' > "$out/runs.tsv"
one() { # format mode round
  local fmt=$1 mode=$2 round=$3 flag=()
  [ "$mode" = no-verify ] && flag=(--no-verify)
  local load t0 t1 line
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$work/cpu" \
    "$sebt" sweep --data "$data" --grid "$grid" --threads "$threads" --format "$fmt" --output "$work/o.$fmt" \
    "${flag[@]}" 2> "$work/err"
  t1=$(date +%s.%N)
  line=$(grep -o 'verified: .*' "$work/err" || true)
  printf '%s\t%s\t%s\t%.3f\t%.2f\t%s\t%s\n' "$fmt" "$mode" "$round" "$(echo "$t1 - $t0" | bc)" \
    "$(awk '{print $1 + $2}' "$work/cpu")" "$load" "$line" \
    >> "$out/runs.tsv"
}
for r in $(seq "$reps"); do
  for fmt in ${FORMATS:-npy csv}; do
    one "$fmt" no-verify "$r"
    one "$fmt" verified "$r"
  done
done
python3 - "$out/runs.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
med = {}
for fmt in sorted({r['format'] for r in rows}):
    for mode in ('no-verify', 'verified'):
        for col in ('wall_s', 'cpu_s'):
            med[fmt, mode, col] = statistics.median(float(r[col]) for r in rows if r['format'] == fmt and r['mode'] == mode)
    w0, w1 = med[fmt, 'no-verify', 'wall_s'], med[fmt, 'verified', 'wall_s']
    c0, c1 = med[fmt, 'no-verify', 'cpu_s'], med[fmt, 'verified', 'cpu_s']
    print(f"{fmt}: wall no-verify {w0:.3f} s, verified {w1:.3f} s, +{w1 - w0:.3f} s (+{100 * (w1 / w0 - 1):.1f} %); "
          f"cpu {c0:.2f} s against {c1:.2f} s (+{100 * (c1 / c0 - 1):.1f} %)")
print("load1 over the runs:", min(r['load1'] for r in rows), "to", max(r['load1'] for r in rows))
PY
