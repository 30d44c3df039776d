#!/bin/bash
# The measurements, side by side in one run: fast_cpu against the
# numba peer on the same cores, the 10^5-combo throughput, and 10^6 bars
# against 150k bars at the same grid. Repeated; medians quoted.
#
# usage: bench/run_exact_fast.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  where sebt and sebt_bench_grid are (default build)
#   OUT_DIR    where the JSON lines and summary.md go (default
#              bench/results/exact-fast)
# Environment: THREADS (2), REPS (5, fast_cpu), NUMBA_REPS (1: a numba
# repetition of the 10,240-combo grid takes minutes), PY (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
OUT=${2:-bench/results/exact-fast}
THREADS=${THREADS:-2}
REPS=${REPS:-5}
NUMBA_REPS=${NUMBA_REPS:-1}
PY=${PY:-/usr/bin/python3}
D=fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
G10K=bench/grids/windows-10240.grid
G100K=bench/grids/cheap-100000.grid
mkdir -p "$OUT"
J="$OUT/runs.jsonl"
: > "$J"
fast() {  # label, then sebt_bench_grid arguments
  local label=$1; shift
  local line
  line=$("$B/sebt_bench_grid" --data $D --threads "$THREADS" --repetitions "$REPS" "$@")
  echo "{\"label\": \"$label\", \"run\": $line}" >> "$J"
  echo "$label: $line" >&2
}
MACHINE="$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "machine: $MACHINE" >&2

# 1. Side by side: fast_cpu, numba, fast_cpu again (the load moves).
fast fast_10240_before --grid $G10K
if "$PY" -c "import numba" 2>/dev/null; then
  line=$("$PY" bench/peers/numba_peer.py --data $D --grid $G10K --threads "$THREADS" \
         --repetitions "$NUMBA_REPS" --check-sample 3 --sebt "$B/sebt" | tr -d '\n')
  echo "{\"label\": \"numba_10240\", \"run\": $line}" >> "$J"
  echo "numba_10240: $line" >&2
else
  echo "numba not importable by $PY: no side-by-side ratio" >&2
fi
fast fast_10240_after --grid $G10K

# 2. 10^5 combos over the bundled 15m series.
fast fast_100000 --grid $G100K

# 3. 10^6 bars against 150k bars, same grid, interleaved.
fast bars_150k_a --grid $G10K --bars 150000
fast bars_1m_a --grid $G10K --bars 1000000
fast bars_150k_b --grid $G10K --bars 150000
fast bars_1m_b --grid $G10K --bars 1000000

"$PY" - "$J" "$OUT/summary.md" "$MACHINE" <<'PYEOF'
import json, statistics, sys
runs = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    runs[r["label"]] = r["run"]
def f(label, key):
    return runs[label][key] if label in runs else None
out = []
out.append("# Measurements (bench/run_exact_fast.sh)\n")
out.append("Machine: %s (a shared machine: wall-clock figures carry its load; "
           "CPU seconds, all threads, do not).\n" % sys.argv[3])
fb = [f("fast_10240_before", "seconds"), f("fast_10240_after", "seconds")]
fcpu = [f("fast_10240_before", "cpu_seconds"), f("fast_10240_after", "cpu_seconds")]
fmed = statistics.median(fb)
out.append("## 10,240 combos (4 values of each window, 3 thresholds) over %d bars, %d threads\n"
           % (runs["fast_10240_before"]["bars"], runs["fast_10240_before"]["threads"]))
out.append("| engine | seconds (median) | backtests/s | trades |")
out.append("|---|---|---|---|")
out.append("| fast_cpu (before numba) | %.3f | %.0f | %d |" % (fb[0], runs["fast_10240_before"]["backtests_per_s"], runs["fast_10240_before"]["trades_total"]))
out.append("| fast_cpu (after numba) | %.3f | %.0f | %d |" % (fb[1], runs["fast_10240_after"]["backtests_per_s"], runs["fast_10240_after"]["trades_total"]))
if "numba_10240" in runs:
    nb = runs["numba_10240"]
    out.append("| numba peer | %.3f | %.1f | %d |" % (nb["seconds"], nb["backtests_per_s"], nb["trades_total"]))
    out.append("")
    out.append("Ratio (numba seconds / fast_cpu median seconds): **%.0fx** (target >= 100x). "
               "Trade totals equal: %s. numba check against the reference: %s."
               % (nb["seconds"] / fmed, nb["trades_total"] == runs["fast_10240_before"]["trades_total"],
                  nb.get("check", {}).get("ok")))
out.append("fast_cpu CPU seconds per sweep (all threads): %.3f, %.3f.\n" % tuple(fcpu))
h = runs["fast_100000"]
out.append("## 100,000 combos over the bundled 15m series (%d bars), %d threads\n" % (h["bars"], h["threads"]))
out.append("%.3f s median wall (%.0f backtests/s; target >= 150,000), %.3f CPU seconds "
           "(%.0f backtests per CPU second), %d trades, peak RSS %.1f MB, stats %s.\n"
           % (h["seconds"], h["backtests_per_s"], h["cpu_seconds"], h["combos"] / h["cpu_seconds"],
              h["trades_total"], h["peak_rss_mb"], h["stats"]))
s150 = statistics.median([f("bars_150k_a", "seconds"), f("bars_150k_b", "seconds")])
s1m = statistics.median([f("bars_1m_a", "seconds"), f("bars_1m_b", "seconds")])
c150 = statistics.median([f("bars_150k_a", "cpu_seconds"), f("bars_150k_b", "cpu_seconds")])
c1m = statistics.median([f("bars_1m_a", "cpu_seconds"), f("bars_1m_b", "cpu_seconds")])
out.append("## 10^6 bars against 150,000 bars, the 10,240-combo grid\n")
out.append("| bars | seconds | CPU seconds | peak RSS MB |")
out.append("|---|---|---|---|")
out.append("| 150,000 | %.3f | %.3f | %.1f |" % (s150, c150, runs["bars_150k_a"]["peak_rss_mb"]))
out.append("| 1,000,000 | %.3f | %.3f | %.1f |" % (s1m, c1m, runs["bars_1m_a"]["peak_rss_mb"]))
out.append("")
out.append("Time ratio %.2fx wall, %.2fx CPU for 6.67x the bars (target <= 8x).\n" % (s1m / s150, c1m / c150))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PYEOF
