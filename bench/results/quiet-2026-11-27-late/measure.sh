#!/bin/bash
# Quiet-machine measurements of the 967,680-combo sweep (bench/grids/big-967680.grid
# over the bundled 15m series, every core, series cache warm): alternated runs,
# medians of REPS rounds.
#   usage: measure.sh NEW_SEBT BASE_SEBT OUTDIR     (BASE_SEBT '-': no base runs)
# Labels: base (BASE, npy), noverify / verify (NEW, npy, --no-verify / default
# proof), csv_noverify / csv_verify (the same as CSV), rsi_noverify / rsi_verify
# (NEW, npy, the same grid with use_rsi = true and rsi_window 14, rsi_max 30, 40).
# OUTDIR/runs.txt: label, wall s, compute s, compute CPU s, 1-minute load.
set -u
NEW=$1 BASE=$2 OUT=$3 REPS=${REPS:-5}
root=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$OUT"
D=$root/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
G=$root/bench/grids/big-967680.grid
GR=$OUT/big-rsi.grid
# max_hold halved (8:96:16) so the RSI grid, with two rsi_max values, keeps 967,680 combos.
{ grep -v '^max_hold' "$G"; printf 'max_hold = 8:88:16\nuse_rsi = true\nrsi_window = 14\nrsi_max = 30, 40\n'; } > "$GR"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
stats() { grep -o 'in [0-9.]* s (cpu [0-9.]* s)' | head -1 | sed 's/in \([0-9.]*\) s (cpu \([0-9.]*\) s)/\1 \2/'; }
run() { # label cmd...
  local label=$1; shift
  local l0; l0=$(cut -d' ' -f1 /proc/loadavg)
  local t0; t0=$(date +%s.%N)
  local st; st=$(SEBT_SWEEP_STATS=1 "$@" 2>&1 >/dev/null | stats)
  local t1; t1=$(date +%s.%N)
  echo "$label $(echo "$t1 - $t0" | bc) $st load=$l0" | tee -a "$OUT/runs.txt"
}
"$NEW" run --data "$D" >/dev/null 2>&1; [ "$BASE" = - ] || "$BASE" run --data "$D" >/dev/null 2>&1
for r in $(seq "$REPS"); do
  [ "$BASE" = - ] || run base "$BASE" sweep --data "$D" --grid "$G" --format npy --output "$T/b.npy"
  run noverify "$NEW" sweep --data "$D" --grid "$G" --format npy --output "$T/n.npy" --no-verify
  run verify "$NEW" sweep --data "$D" --grid "$G" --format npy --output "$T/v.npy"
  run csv_noverify "$NEW" sweep --data "$D" --grid "$G" --output "$T/n.csv" --no-verify
  run csv_verify "$NEW" sweep --data "$D" --grid "$G" --output "$T/v.csv"
  run rsi_noverify "$NEW" sweep --data "$D" --grid "$GR" --format npy --output "$T/r.npy" --no-verify
  run rsi_verify "$NEW" sweep --data "$D" --grid "$GR" --format npy --output "$T/rv.npy"
done
python3 - "$OUT/runs.txt" <<'PY'
import sys, statistics as S, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 4: d[f[0]].append((float(f[1]), float(f[2]), float(f[3])))
for k, v in d.items():
    print(f"{k:14s} n={len(v)} wall={S.median(x[0] for x in v):.3f}s compute={S.median(x[1] for x in v):.3f}s cpu={S.median(x[2] for x in v):.3f}s")
PY
