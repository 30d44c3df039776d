#!/usr/bin/env bash
# What `sebt sweep --analysis` costs beside the same sweep without it: each
# round runs both (npy out, --no-verify), alternating which goes first;
# wall time and peak memory (GNU time) with the load beside each; medians
# at the end.
# Usage: bench/analysis_cost.sh SEBT DATA GRID OUT   (REPS rounds, default 5)
set -u
if (( $# != 4 )); then
  echo "usage: $0 SEBT DATA GRID OUT" >&2
  exit 2
fi
sebt=$1 data=$2 grid=$3 out=$4
reps=${REPS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$out"
one() {   # one: NAME [--analysis]
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/t" "$sebt" sweep --data "$data" --grid "$grid" "$@" --format npy --no-verify \
    --output "$tmp/o.npy" 2>/dev/null || { echo "$name: the sweep failed" >&2; exit 1; }
  echo "$name wall_s=$(cut -d' ' -f1 "$tmp/t") peak_kb=$(cut -d' ' -f2 "$tmp/t") load=$(cut -d' ' -f1 /proc/loadavg)" \
    >> "$out"
}
for r in $(seq 1 "$reps"); do
  if (( r % 2 )); then one plain; one analysis --analysis; else one analysis --analysis; one plain; fi
done
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for name in plain analysis; do
  w=$(grep "^$name " "$out" | sed 's/.*wall_s=\([0-9.]*\).*/\1/' | median)
  m=$(grep "^$name " "$out" | sed 's/.*peak_kb=\([0-9]*\).*/\1/' | median)
  echo "median $name wall_s=$w peak_kb=$m" >> "$out"
done
p=$(grep '^median plain' "$out" | sed 's/.*wall_s=\([0-9.]*\).*/\1/')
a=$(grep '^median analysis' "$out" | sed 's/.*wall_s=\([0-9.]*\).*/\1/')
echo "ratio analysis/plain $(echo "scale=2; $a / $p" | bc)" >> "$out"
cat "$out"
