#!/bin/bash
# Issue 23's measurements: `sebt sweep` end to end (the whole process: load,
# grid, backtests, every row written to a file) against its compute alone
# (SEBT_SWEEP_STATS: the backtests' wall and CPU seconds), peak RSS, and the
# parallel efficiency of compute on 2 threads (1-thread compute / (2 x
# 2-thread compute)), at 10^4, 10^5 and 10^6 combos over the bundled 15m
# series (10^7 with FULL=1), CSV and JSON; beside them the numba peer's end
# to end for the 10^4 workload (its start-up, JIT and load included).
# Repeated, thread counts interleaved; medians quoted; the machine load is
# recorded with every run.
#
# usage: bench/run_big_sweeps.sh [BUILD_DIR] [OUT_DIR]
# Environment: REPS (3), FULL (0: 1 for 9,676,800 combos), NUMBA (1: 0 skips
# the peer), FORMATS ("csv json"), PY (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
OUT=${2:-bench/results/big-sweeps}
REPS=${REPS:-3}
FULL=${FULL:-0}
NUMBA=${NUMBA:-1}
FORMATS=${FORMATS:-csv json}
PY=${PY:-/usr/bin/python3}
D=fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
mkdir -p "$OUT"
J="$OUT/runs.jsonl"
: > "$J"
SCRATCH=$(mktemp -d /tmp/sebt_big_sweeps_XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
grids=(windows-10240 cheap-100000 big-967680)
[ "$FULL" = 1 ] && grids+=(big-9676800)
load() { cut -d' ' -f1 /proc/loadavg; }

one() {  # grid format threads rep
  local g=$1 fmt=$2 t=$3 rep=$4 l0 l1 stats
  l0=$(load)
  SEBT_SWEEP_STATS=1 SEBT_MAX_COMBOS=20000000 /usr/bin/time -f "TIME %e %U %S %M" \
    "$B/sebt" sweep --data "$D" --grid "bench/grids/$g.grid" --threads "$t" --format "$fmt" \
    --output "$SCRATCH/out.$fmt" 2> "$SCRATCH/err.txt" > /dev/null
  l1=$(load)
  stats=$(grep '^sweep stats' "$SCRATCH/err.txt")
  read -r _ wall user sys rss < <(grep '^TIME' "$SCRATCH/err.txt")
  local combos compute ccpu bytes
  combos=$(sed -E 's/.* ([0-9]+) combos, .*/\1/' <<< "$stats")
  compute=$(sed -E 's/.*combos in ([0-9.]+) s \(cpu ([0-9.]+) s.*/\1/' <<< "$stats")
  ccpu=$(sed -E 's/.*combos in ([0-9.]+) s \(cpu ([0-9.]+) s.*/\2/' <<< "$stats")
  bytes=$(stat -c %s "$SCRATCH/out.$fmt")
  local line="{\"grid\": \"$g\", \"combos\": $combos, \"format\": \"$fmt\", \"threads\": $t, \"rep\": $rep, \"end_to_end_s\": $wall, \"cpu_s\": $(printf %.2f "$(echo "$user + $sys" | bc)"), \"compute_s\": $compute, \"compute_cpu_s\": $ccpu, \"peak_rss_kb\": $rss, \"bytes\": $bytes, \"load_before\": $l0, \"load_after\": $l1}"
  echo "$line" >> "$J"
  echo "$line" >&2
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; sebt $(git rev-parse --short HEAD)" >&2
for g in "${grids[@]}"; do
  reps=$REPS
  [ "$g" = big-9676800 ] && reps=1
  for rep in $(seq 1 "$reps"); do
    for fmt in $FORMATS; do
      one "$g" "$fmt" 2 "$rep"
      [ "$fmt" = csv ] && one "$g" csv 1 "$rep"
    done
  done
done

if [ "$NUMBA" = 1 ] && "$PY" -c "import numba" 2>/dev/null; then
  l0=$(load)
  /usr/bin/time -f "TIME %e %U %S %M" "$PY" bench/peers/numba_peer.py --data "$D" --grid bench/grids/windows-10240.grid \
    --threads 2 --repetitions 1 --check-sample 0 --results "$SCRATCH/numba.csv" > "$SCRATCH/numba.json" 2> "$SCRATCH/err.txt"
  read -r _ wall user sys rss < <(grep '^TIME' "$SCRATCH/err.txt")
  echo "{\"grid\": \"windows-10240\", \"combos\": 10240, \"engine\": \"numba\", \"threads\": 2, \"end_to_end_s\": $wall, \"cpu_s\": $(printf %.2f "$(echo "$user + $sys" | bc)"), \"peak_rss_kb\": $rss, \"load_before\": $l0, \"load_after\": $(load), \"peer\": $(tr -d '\n' < "$SCRATCH/numba.json")}" >> "$J"
fi

"$PY" - "$J" "$OUT/summary.md" "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" <<'PYEOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
out = ["# Big sweeps (bench/run_big_sweeps.sh)\n",
       "Machine: %s. Wall-clock figures carry the machine's load (each run's "
       "1-minute load average is in runs.jsonl); CPU seconds do not.\n" % sys.argv[3],
       "| combos | format | threads | end to end s | compute s | CPU s (process) | compute CPU s | peak RSS MB | output MB | load |",
       "|---|---|---|---|---|---|---|---|---|---|"]
keys = []
for r in runs:
    if "engine" in r:
        continue
    k = (r["combos"], r["format"], r["threads"])
    if k not in keys:
        keys.append(k)
for k in sorted(keys, key=lambda k: (k[0], k[1], -k[2])):
    rs = [r for r in runs if "engine" not in r and (r["combos"], r["format"], r["threads"]) == k]
    out.append("| %d | %s | %d | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %.1f |" % (
        k[0], k[1], k[2], med([r["end_to_end_s"] for r in rs]), med([r["compute_s"] for r in rs]),
        med([r["cpu_s"] for r in rs]), med([r["compute_cpu_s"] for r in rs]),
        max(r["peak_rss_kb"] for r in rs) / 1024, rs[0]["bytes"] / 1e6, med([r["load_before"] for r in rs])))
out.append("\n## Parallel efficiency of compute (1-thread compute / (2 x 2-thread compute), medians, CSV runs)\n")
out.append("Efficiency from wall seconds needs a quiet machine; the CPU column (1-thread compute CPU / "
           "2-thread compute CPU) shows the work the second thread adds (spinning at barriers counts), "
           "whatever the load.\n")
out.append("| combos | compute 1 thread s | compute 2 threads s | efficiency | CPU 1 thread / CPU 2 threads | end to end / compute (2 threads) |")
out.append("|---|---|---|---|---|---|")
for c in sorted({k[0] for k in keys}):
    one = [r for r in runs if "engine" not in r and r["combos"] == c and r["format"] == "csv" and r["threads"] == 1]
    two = [r for r in runs if "engine" not in r and r["combos"] == c and r["format"] == "csv" and r["threads"] == 2]
    if one and two:
        c1, c2 = med([r["compute_s"] for r in one]), med([r["compute_s"] for r in two])
        e2e = med([r["end_to_end_s"] for r in two])
        p1, p2 = med([r["compute_cpu_s"] for r in one]), med([r["compute_cpu_s"] for r in two])
        out.append("| %d | %.2f | %.2f | %.0f%% | %.0f%% | %.2f |" % (c, c1, c2, 100 * c1 / (2 * c2), 100 * p1 / p2,
                                                             e2e / c2))
nb = [r for r in runs if r.get("engine") == "numba"]
if nb:
    s = [r for r in runs if "engine" not in r and r["combos"] == 10240 and r["format"] == "csv" and r["threads"] == 2]
    out.append("\n## The 10,240-combo workload end to end, 2 threads\n")
    out.append("| engine | end to end s | CPU s | load |")
    out.append("|---|---|---|---|")
    out.append("| sebt sweep (CSV written) | %.2f | %.2f | %.1f |" % (med([r["end_to_end_s"] for r in s]),
               med([r["cpu_s"] for r in s]), med([r["load_before"] for r in s])))
    out.append("| numba peer (start-up, JIT, load, results CSV) | %.2f | %.2f | %.1f |" % (nb[0]["end_to_end_s"],
               nb[0]["cpu_s"], nb[0]["load_before"]))
    out.append("\nRatio numba / sebt end to end: %.1fx" % (nb[0]["end_to_end_s"] / med([r["end_to_end_s"] for r in s])))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PYEOF
