#!/bin/bash
# Quiet-machine measurements: alternated runs, medians. usage: measure.sh NEW_SEBT BASE_SEBT OUTDIR
# BASE_SEBT '-': no base runs (the proof's cost alone: new_verify against
# new_noverify, npy and CSV).
set -u
NEW=$1 BASE=$2 OUT=$3 REPS=${REPS:-5}
mkdir -p "$OUT"
D=/work/main/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
G=/work/main/bench/grids/big-967680.grid
GR=$OUT/big-967680-rsi.grid
{ cat "$G"; echo "use_rsi = true"; } > "$GR"
T=$(mktemp -d)
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
  run new_noverify "$NEW" sweep --data "$D" --grid "$G" --format npy --output "$T/n.npy" --no-verify
  run new_verify "$NEW" sweep --data "$D" --grid "$G" --format npy --output "$T/v.npy"

  run new_csv_noverify "$NEW" sweep --data "$D" --grid "$G" --output "$T/n.csv" --no-verify
  run new_csv_verify "$NEW" sweep --data "$D" --grid "$G" --output "$T/v.csv"
done
rm -rf "$T"
python3 - "$OUT/runs.txt" <<'PY'
import sys, statistics as S, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 4: d[f[0]].append((float(f[1]), float(f[2]), float(f[3])))
for k, v in d.items():
    print(f"{k:18s} n={len(v)} wall={S.median(x[0] for x in v):.3f}s compute={S.median(x[1] for x in v):.3f}s cpu={S.median(x[2] for x in v):.3f}s")
PY
