#!/bin/bash
# The measurements: `sebt sweep` end to end (the whole process: load,
# grid, backtests, every row written to a file) against its compute alone
# (SEBT_SWEEP_STATS: the backtests' wall and CPU seconds), peak RSS, and the
# parallel efficiency of compute on 2 threads (1-thread compute / (2 x
# 2-thread compute)), at 10^4, 10^5 and 10^6 combos over the bundled 15m
# series (10^7 with FULL=1), CSV, JSON and npy; beside them the numba peer's
# end to end for the 10^4 workload (its start-up, JIT and load included),
# and, with OLD=path/to/old/sebt, an older sebt over the same grids on the
# same machine, so that targets read as same-machine ratios.
# Repeated, engines and thread counts interleaved; medians quoted; the
# machine load is recorded with every run.
#
# usage: bench/run_big_sweeps.sh [BUILD_DIR] [OUT_DIR]
# Environment: REPS (3), FULL (0: 1 for 9,676,800 combos), NUMBA (1: 0 skips
# the peer), FORMATS ("csv json npy"), PY (/usr/bin/python3), OLD (an older
# sebt binary: its CSV and JSON runs go beside the new ones, marked
# "engine": "sebt-old" in runs.jsonl; it skips formats it lacks and, unless
# OLD_FULL=1, the 9,676,800-combo grid, which held every result in memory
# before streaming: 4.8 GB), GRIDS (the grids of bench/grids to run,
# default "windows-10240 cheap-100000 big-967680").
#
# Files (what `sebt report` reads): OUT_DIR/runs.jsonl, one JSON object a
# run: grid, combos, format, threads, rep, end_to_end_s, cpu_s, compute_s,
# compute_cpu_s, peak_rss_kb, bytes, load_before, load_after, sebt (commit
# or "old"); "engine" is absent for this build, "sebt-cached" for this
# build reading the series from the cache, "sebt-old" for OLD and "numba"
# for the peer (which has no compute_s, bytes or format).
# OUT_DIR/summary.md: the medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
OUT=${2:-bench/results/big-sweeps}
REPS=${REPS:-3}
FULL=${FULL:-0}
NUMBA=${NUMBA:-1}
FORMATS=${FORMATS:-csv json npy}
PY=${PY:-/usr/bin/python3}
OLD=${OLD:-}
OLD_FULL=${OLD_FULL:-0}
D=fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
if [ -n "$OLD" ] && [ ! -x "$OLD" ]; then
  echo "run_big_sweeps.sh: OLD=$OLD is not an executable sebt" >&2
  exit 2
fi
mkdir -p "$OUT"
J="$OUT/runs.jsonl"
: > "$J"
SCRATCH=$(mktemp -d /tmp/sebt_big_sweeps_XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
read -r -a grids <<< "${GRIDS:-windows-10240 cheap-100000 big-967680}"
[ "$FULL" = 1 ] && grids+=(big-9676800)
load() { cut -d' ' -f1 /proc/loadavg; }
REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
old_formats=""
if [ -n "$OLD" ]; then
  for fmt in $FORMATS; do
    "$OLD" sweep --help 2>/dev/null | grep -q "$fmt" && old_formats+=" $fmt"
  done
fi

# Every sebt run parses the data file (SEBT_CACHE_DIR=off), as before the
# series cache, except engine "sebt-cached": the 10,240-combo workload
# again with the series read from a primed cache (docs/big-sweeps.md,
# "The series cache"), what a user's second sweep over a file costs.
one() {  # binary engine grid format threads rep
  local bin=$1 engine=$2 g=$3 fmt=$4 t=$5 rep=$6 l0 l1 stats cache=off
  [ "$engine" = sebt-cached ] && cache=$SCRATCH/cache
  l0=$(load)
  local t0=$EPOCHREALTIME
  if ! SEBT_CACHE_DIR=$cache SEBT_SWEEP_STATS=1 SEBT_MAX_COMBOS=20000000 /usr/bin/time -f "TIME %e %U %S %M" \
    "$bin" sweep --data "$D" --grid "bench/grids/$g.grid" --threads "$t" --format "$fmt" \
    --output "$SCRATCH/out.$fmt" 2> "$SCRATCH/err.txt" > /dev/null; then
    echo "run_big_sweeps.sh: $bin sweep $g $fmt --threads $t failed:" >&2
    grep -v 'timestamp gaps' "$SCRATCH/err.txt" >&2
    exit 1
  fi
  local t1=$EPOCHREALTIME
  l1=$(load)
  stats=$(grep '^sweep stats' "$SCRATCH/err.txt")
  read -r _ wall user sys rss < <(grep '^TIME' "$SCRATCH/err.txt")
  # time's %e has 10 ms steps, too coarse at 10^4 combos: the wall clock
  # around it (its own fork and exec included, about a millisecond).
  wall=$(printf %.4f "$(echo "$t1 - $t0" | bc)")
  local combos compute ccpu bytes eng="" rev=$REV
  combos=$(sed -E 's/.* ([0-9]+) combos, .*/\1/' <<< "$stats")
  compute=$(sed -E 's/.*combos in ([0-9.]+) s \(cpu ([0-9.]+) s.*/\1/' <<< "$stats")
  ccpu=$(sed -E 's/.*combos in ([0-9.]+) s \(cpu ([0-9.]+) s.*/\2/' <<< "$stats")
  bytes=$(stat -c %s "$SCRATCH/out.$fmt")
  rm -f "$SCRATCH/out.$fmt"
  [ "$engine" = sebt ] || { eng="\"engine\": \"$engine\", "; [ "$engine" = sebt-cached ] || rev=old; }
  local line="{${eng}\"grid\": \"$g\", \"combos\": $combos, \"format\": \"$fmt\", \"threads\": $t, \"rep\": $rep, \"end_to_end_s\": $wall, \"cpu_s\": $(printf %.2f "$(echo "$user + $sys" | bc)"), \"compute_s\": $compute, \"compute_cpu_s\": $ccpu, \"peak_rss_kb\": $rss, \"bytes\": $bytes, \"load_before\": $l0, \"load_after\": $l1, \"sebt\": \"$rev\"}"
  echo "$line" >> "$J"
  echo "$line" >&2
}

numba_run() {  # rep
  local l0 rc=0
  l0=$(load)
  /usr/bin/time -f "TIME %e %U %S %M" "$PY" bench/peers/numba_peer.py --data "$D" \
    --grid bench/grids/windows-10240.grid --threads 2 --repetitions 1 --check-sample 0 \
    --results "$SCRATCH/numba.csv" > "$SCRATCH/numba.json" 2> "$SCRATCH/err.txt" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "run_big_sweeps.sh: the numba peer failed (exit $rc):" >&2
    cat "$SCRATCH/err.txt" >&2
    exit 1
  fi
  read -r _ wall user sys rss < <(grep '^TIME' "$SCRATCH/err.txt")
  local line="{\"grid\": \"windows-10240\", \"combos\": 10240, \"engine\": \"numba\", \"threads\": 2, \"rep\": $1, \"end_to_end_s\": $wall, \"cpu_s\": $(printf %.2f "$(echo "$user + $sys" | bc)"), \"peak_rss_kb\": $rss, \"load_before\": $l0, \"load_after\": $(load), \"peer\": $(tr -d '\n' < "$SCRATCH/numba.json")}"
  echo "$line" >> "$J"
  echo "$line" | cut -c1-240 >&2
}

have_numba=0
if [ "$NUMBA" = 1 ]; then
  if "$PY" -c "import numba" 2>/dev/null; then have_numba=1
  else echo "run_big_sweeps.sh: $PY has no numba: the peer is not run (NUMBA=0 to say so)" >&2; fi
fi

START="$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "machine: $START; sebt $REV${OLD:+, old: $OLD}" >&2
for g in "${grids[@]}"; do
  reps=$REPS
  [ "$g" = big-9676800 ] && reps=1
  for rep in $(seq 1 "$reps"); do
    for fmt in $FORMATS; do
      one "$B/sebt" sebt "$g" "$fmt" 2 "$rep"
      [ "$fmt" = csv ] && one "$B/sebt" sebt "$g" csv 1 "$rep"
      if [ -n "$OLD" ] && [[ " $old_formats " == *" $fmt "* ]] && { [ "$g" != big-9676800 ] || [ "$OLD_FULL" = 1 ]; }; then
        one "$OLD" sebt-old "$g" "$fmt" 2 "$rep"
        [ "$fmt" = csv ] && one "$OLD" sebt-old "$g" csv 1 "$rep"
      fi
    done
    if [ "$g" = windows-10240 ] && [[ " $FORMATS " == *" csv "* ]]; then
      SEBT_CACHE_DIR=$SCRATCH/cache "$B/sebt" features --data "$D" --output /dev/null 2>/dev/null  # primes it
      one "$B/sebt" sebt-cached "$g" csv 2 "$rep"
    fi
    # The peer beside the 10^4 workload, interleaved with it.
    [ "$g" = windows-10240 ] && [ "$have_numba" = 1 ] && numba_run "$rep"
  done
done

"$PY" - "$J" "$OUT/summary.md" "$START; $(cut -d' ' -f1-3 /proc/loadavg) at the end" "$REV" "$OLD" <<'PYEOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
machine, rev, old = sys.argv[3], sys.argv[4], sys.argv[5]
med = statistics.median
def sel(engine=None, **kw):
    return [r for r in runs if r.get("engine") == engine and all(r.get(k) == v for k, v in kw.items())]
def m(rs, key):
    return med([r[key] for r in rs]) if rs else None
def f2(x):
    return "-" if x is None else "%.2f" % x
out = ["# Big sweeps (bench/run_big_sweeps.sh)\n",
       "sebt %s%s. Machine: %s (1-minute load averages; each run's is in runs.jsonl). "
       "Wall-clock figures carry the machine's load; CPU seconds barely do. Medians of %d runs "
       "(9,676,800 combos: 1).\n" % (rev, ", beside the old binary %s" % old if old else "", machine,
                                   max([r.get("rep", 1) for r in runs] or [1])),
       "| engine | combos | format | threads | end to end s | compute s | CPU s (process) | compute CPU s | peak RSS MB | output MB | load |",
       "|---|---|---|---|---|---|---|---|---|---|---|"]
keys = []
for r in runs:
    if r.get("engine") == "numba":
        continue
    k = (r.get("engine"), r["combos"], r["format"], r["threads"])
    if k not in keys:
        keys.append(k)
for k in sorted(keys, key=lambda k: (k[1], k[2], -k[3], k[0] or "")):
    rs = sel(k[0], combos=k[1], format=k[2], threads=k[3])
    out.append("| %s | %d | %s | %d | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %.1f |" % (
        {None: "sebt", "sebt-cached": "sebt, series cached"}.get(k[0], "old"), k[1], k[2], k[3], m(rs, "end_to_end_s"), m(rs, "compute_s"),
        m(rs, "cpu_s"), m(rs, "compute_cpu_s"), max(r["peak_rss_kb"] for r in rs) / 1024,
        rs[0]["bytes"] / 1e6, m(rs, "load_before")))
sizes = sorted({k[1] for k in keys})

out.append("\n## Formats side by side (this build, 2 threads, medians)\n")
fmts = [f for f in ("csv", "json", "npy") if any(k[2] == f and k[0] is None for k in keys)]
out.append("| combos | " + " | ".join("%s end to end s | %s MB" % (f, f) for f in fmts) +
           (" | npy / csv end to end |" if "npy" in fmts and "csv" in fmts else " |"))
out.append("|---|" + "---|---|" * len(fmts) + ("---|" if "npy" in fmts and "csv" in fmts else ""))
for c in sizes:
    cells, e2e = [], {}
    for f in fmts:
        rs = sel(None, combos=c, format=f, threads=2)
        e2e[f] = m(rs, "end_to_end_s")
        cells.append("%s | %s" % (f2(e2e[f]), "%.0f" % (rs[0]["bytes"] / 1e6) if rs else "-"))
    ratio = ""
    if "npy" in fmts and "csv" in fmts:
        ratio = " %s |" % ("%.2f" % (e2e["npy"] / e2e["csv"]) if e2e.get("npy") and e2e.get("csv") else "-")
    out.append("| %d | %s |%s" % (c, " | ".join(cells), ratio))

out.append("\n## Ratios (medians, CSV)\n")
out.append("Parallel efficiency = 1-thread compute / (2 x 2-thread compute), wall seconds: it needs a "
           "quiet machine (a loaded one steals the second core). The CPU column (1-thread compute CPU / "
           "2-thread compute CPU) is the work the second thread adds, spinning at barriers included, "
           "whatever the load.\n")
hdr = "| combos | end to end s (2 threads) | compute s | end to end / compute | compute 1 thread s | parallel efficiency | CPU 1 / CPU 2 |"
sep = "|---|---|---|---|---|---|---|"
if old:
    hdr += " old end to end s | new / old end to end | old peak RSS MB | new peak RSS MB | old parallel efficiency |"
    sep += "---|---|---|---|---|"
out += [hdr, sep]
def eff(engine, c):
    one, two = sel(engine, combos=c, format="csv", threads=1), sel(engine, combos=c, format="csv", threads=2)
    if not one or not two:
        return None, None
    return m(one, "compute_s") / (2 * m(two, "compute_s")), m(one, "compute_cpu_s") / m(two, "compute_cpu_s")
for c in sizes:
    two = sel(None, combos=c, format="csv", threads=2)
    one = sel(None, combos=c, format="csv", threads=1)
    if not two:
        continue
    e, cpu = eff(None, c)
    row = "| %d | %.2f | %.2f | %.2f | %s | %s | %s |" % (
        c, m(two, "end_to_end_s"), m(two, "compute_s"), m(two, "end_to_end_s") / m(two, "compute_s"),
        f2(m(one, "compute_s")), "-" if e is None else "%.0f%%" % (100 * e),
        "-" if cpu is None else "%.0f%%" % (100 * cpu))
    if old:
        o2 = sel("sebt-old", combos=c, format="csv", threads=2)
        oe, _ = eff("sebt-old", c)
        row += " %s | %s | %s | %.0f | %s |" % (
            f2(m(o2, "end_to_end_s")),
            "%.2f" % (m(two, "end_to_end_s") / m(o2, "end_to_end_s")) if o2 else "-",
            "%.0f" % (max(r["peak_rss_kb"] for r in o2) / 1024) if o2 else "-",
            max(r["peak_rss_kb"] for r in two) / 1024, "-" if oe is None else "%.0f%%" % (100 * oe))
    out.append(row)

cached = sel("sebt-cached", combos=10240, format="csv", threads=2)
if cached:
    out.append("\nThe same 10,240-combo workload with the series read from the cache (engine sebt-cached; "
               "docs/big-sweeps.md, \"The series cache\"): end to end %.3f s, compute %.3f s, end to end / "
               "compute %.2f (median of the runs' own ratios %.2f); the file parsed: %.3f s, %.3f s, %.2f "
               "(median of ratios %.2f)." % (
        m(cached, "end_to_end_s"), m(cached, "compute_s"), m(cached, "end_to_end_s") / m(cached, "compute_s"),
        med([r["end_to_end_s"] / r["compute_s"] for r in cached]),
        m(s10 := sel(None, combos=10240, format="csv", threads=2), "end_to_end_s"), m(s10, "compute_s"),
        m(s10, "end_to_end_s") / m(s10, "compute_s"), med([r["end_to_end_s"] / r["compute_s"] for r in s10])))

nb = sel("numba")
s = sel(None, combos=10240, format="csv", threads=2)
if nb and s:
    out.append("\n## The 10,240-combo workload end to end, 2 threads (numba peer beside sebt)\n")
    out.append("The peer's whole process: Python start-up, numba import and JIT, loading the gzip CSV, "
               "the sweep, its results CSV (`--check-sample 0 --repetitions 1`).\n")
    out.append("| engine | end to end s | CPU s | peak RSS MB | load |")
    out.append("|---|---|---|---|---|")
    out.append("| sebt sweep (CSV written) | %.2f | %.2f | %.0f | %.1f |" % (
        m(s, "end_to_end_s"), m(s, "cpu_s"), max(r["peak_rss_kb"] for r in s) / 1024, m(s, "load_before")))
    o = sel("sebt-old", combos=10240, format="csv", threads=2)
    if o:
        out.append("| old sebt sweep (CSV written) | %.2f | %.2f | %.0f | %.1f |" % (
            m(o, "end_to_end_s"), m(o, "cpu_s"), max(r["peak_rss_kb"] for r in o) / 1024, m(o, "load_before")))
    cached = sel("sebt-cached", combos=10240, format="csv", threads=2)
    if cached:
        out.append("| sebt sweep, series from the cache (CSV written) | %.2f | %.2f | %.0f | %.1f |" % (
            m(cached, "end_to_end_s"), m(cached, "cpu_s"), max(r["peak_rss_kb"] for r in cached) / 1024,
            m(cached, "load_before")))
    out.append("| numba peer (start-up, JIT, load, results CSV) | %.2f | %.2f | %.0f | %.1f |" % (
        m(nb, "end_to_end_s"), m(nb, "cpu_s"), max(r["peak_rss_kb"] for r in nb) / 1024, m(nb, "load_before")))
    out.append("\n| ratio | value |")
    out.append("|---|---|")
    out.append("| sebt end to end / numba end to end | %.3f (numba takes %.1fx as long) |" % (
        m(s, "end_to_end_s") / m(nb, "end_to_end_s"), m(nb, "end_to_end_s") / m(s, "end_to_end_s")))
    out.append("| sebt end to end / sebt compute, the file parsed | %.2f (target <= 1.3) |" % (m(s, "end_to_end_s") / m(s, "compute_s")))
    if cached:
        out.append("| sebt end to end / sebt compute, the series cached | %.2f (target <= 1.3) |" % (
            m(cached, "end_to_end_s") / m(cached, "compute_s")))
    pc = [r["peer"].get("compile_seconds") for r in nb if isinstance(r.get("peer"), dict)]
    pl = [r["peer"].get("load_seconds") for r in nb if isinstance(r.get("peer"), dict)]
    if pc and None not in pc and pl and None not in pl:
        out.append("| numba: JIT s, load s (medians) | %.2f, %.2f |" % (med(pc), med(pl)))
elif not nb:
    out.append("\nThe numba peer was not run (NUMBA=0 or no numba in %s)." % "the interpreter")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PYEOF
