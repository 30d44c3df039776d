#!/usr/bin/env bash
# What `sebt sweep --overfit` costs beside the same sweep without it: each
# round runs both (--top 1 --format json, --no-verify), alternating which
# goes first; wall time, user CPU time and peak memory (GNU time) with the
# load beside each (the CPU time is less swayed by a loaded machine's queue),
# and the overfit pass's own seconds and PBO's share (its JSON section);
# medians at the end.
# Usage: bench/overfit_cost.sh SEBT DATA GRID OUT   (REPS rounds, default 5;
#        THREADS, default 2; BLOCKS, default 16; VERIFY=1: both sweeps with
#        their default proof, else --no-verify)
set -u
if (( $# != 4 )); then
  echo "usage: $0 SEBT DATA GRID OUT" >&2
  exit 2
fi
sebt=$1 data=$2 grid=$3 out=$4
reps=${REPS:-5} threads=${THREADS:-2} blocks=${BLOCKS:-16}
proof=(--no-verify)
if [ "${VERIFY:-0}" = 1 ]; then proof=(); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$out"
one() {   # one: NAME [--overfit ...]
  local name=$1
  shift
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%e %M %U" -o "$tmp/t" "$sebt" sweep --data "$data" --grid "$grid" --threads "$threads" "$@" \
    --top 1 --format json "${proof[@]}" --output "$tmp/o.json" 2>/dev/null || { echo "$name: the sweep failed" >&2; exit 1; }
  local extra=
  if [ "$name" = overfit ]; then
    extra=$(python3 -c 'import json, sys; o = json.load(open(sys.argv[1]))["overfit"]
print("pass_s=%.3f pbo_s=%.3f pbo=%r dsr=%r" % (o["seconds"], o["pbo_seconds"], o["pbo"]["pbo"], o["dsr"]["dsr"]))' "$tmp/o.json")
  fi
  echo "$name wall_s=$(cut -d' ' -f1 "$tmp/t") peak_kb=$(cut -d' ' -f2 "$tmp/t") cpu_s=$(cut -d' ' -f3 "$tmp/t") load_before=$load load_after=$(cut -d' ' -f1 /proc/loadavg) $extra" \
    >> "$out"
}
for r in $(seq 1 "$reps"); do
  if (( r % 2 )); then one plain; one overfit --overfit --overfit-blocks "$blocks"
  else one overfit --overfit --overfit-blocks "$blocks"; one plain; fi
done
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { grep "^$1 " "$out" | sed "s/.* $2=\([0-9.]*\).*/\1/" | median; }
for name in plain overfit; do
  echo "median $name wall_s=$(field "$name" wall_s) peak_kb=$(field "$name" peak_kb) cpu_s=$(field "$name" cpu_s)" >> "$out"
done
echo "median overfit pass_s=$(field overfit pass_s) pbo_s=$(field overfit pbo_s)" >> "$out"
cat "$out"
