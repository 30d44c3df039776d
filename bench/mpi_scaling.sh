#!/usr/bin/env bash
# 1 rank vs 2 ranks of `sebt sweep` on this machine, in the same run,
# alternating, repeated; medians quoted (docs/scaling.md).
#   bench/mpi_scaling.sh [BUILD_DIR] [REPEATS]
# Each rank runs one thread, so 2 ranks use 2 cores. Also measures the
# part every rank repeats (loading the data and the grid: a 1-combo sweep)
# and the bytes gathered per combo (SEBT_SWEEP_STATS).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
reps=${2:-5}
sebt=$build/sebt
data=$root/fixtures/data/BTCUSDT-1m-2021.csv.gz
work=$(mktemp -d /tmp/sebt_mpi_scaling_XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/grid.txt" <<'G'
ema_fast = 24, 48, 72, 96
ema_slow = 400, 672
z_window = 336, 672
atr_window = 48, 96, 192
vol_z = 1.0, 1.5, 2.0, 2.5
tr_z = 0.8, 1.2, 1.6
reward_r = 1, 1.5, 2, 3
max_hold = 48, 96
G
echo "ema_fast = 24" > "$work/one.txt"
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: > "$work/t1"; : > "$work/t2"; : > "$work/tload"
for r in $(seq 1 "$reps"); do
  t=$(now); SEBT_SWEEP_STATS=1 "${mpirun[@]}" -np 1 "$sebt" sweep --data "$data" --grid "$work/grid.txt" --threads 1 \
    --output "$work/one_rank.csv" 2>> "$work/stats1"
  echo "$(now) - $t" | bc >> "$work/t1"
  t=$(now); SEBT_SWEEP_STATS=1 "${mpirun[@]}" -np 2 "$sebt" sweep --data "$data" --grid "$work/grid.txt" --threads 1 \
    --output "$work/two_ranks.csv" 2>> "$work/stats2"
  echo "$(now) - $t" | bc >> "$work/t2"
  t=$(now); "$sebt" sweep --data "$data" --grid "$work/one.txt" --threads 1 --output /dev/null
  echo "$(now) - $t" | bc >> "$work/tload"
  cmp -s "$work/one_rank.csv" "$work/two_ranks.csv" || { echo "outputs differ"; exit 1; }
done
m1=$(median < "$work/t1"); m2=$(median < "$work/t2"); ml=$(median < "$work/tload")
# The compute phase: the slowest rank's time (the others wait for it).
slowest() { grep -o 'in [0-9.]* s (cpu' "$1" | awk '{print $2}' | paste - - 2>/dev/null | awk '{m=$1; for(i=2;i<=NF;i++) if($i>m) m=$i; print m}'; }
c1=$(grep -o 'in [0-9.]* s (cpu' "$work/stats1" | awk '{print $2}' | median)
c2=$(slowest "$work/stats2" | median)
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sweep: $(($(wc -l < "$work/one_rank.csv") - 1)) combos x $(zcat "$data" | tail -n +2 | wc -l) bars, $reps repeats"
echo "1 rank:  median $m1 s  (all: $(tr '\n' ' ' < "$work/t1"))"
echo "2 ranks: median $m2 s  (all: $(tr '\n' ' ' < "$work/t2"))"
echo "speed-up 2 vs 1: $(echo "scale=2; $m1 / $m2" | bc)"
echo "compute phase (slowest rank): 1 rank median $c1 s, 2 ranks median $c2 s, speed-up $(echo "scale=2; $c1 / $c2" | bc)"
echo "compute cpu time per rank (last run): 1 rank: $(grep -o 'cpu [0-9.]* s' "$work/stats1" | tail -1), 2 ranks: $(tail -1 "$work/stats2" | grep -o 'cpu [0-9.]* s' | tr '\n' ' ')"
echo "per-rank fixed part (load data + grid, a 1-combo sweep): median $ml s"
echo "last 2-rank stats: $(tail -1 "$work/stats2")"
