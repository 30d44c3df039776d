#!/usr/bin/env bash
# The sweep's compute time of several builds, side by side: each round
# runs every build once, in the order given, over one grid (npy out,
# SEBT_SWEEP_STATS=1's compute time and CPU time, the load beside each);
# medians at the end, each against the first build. A build older than
# the sweep's proof runs it without --no-verify (the proof runs after the
# compute, outside the time). Before the rounds each build's npy file is
# hashed once: builds that should agree bit for bit show one hash.
# Usage: bench/compute_ab.sh DATA GRID OUT NAME=SEBT [NAME=SEBT ...]
#        (REPS rounds, default 11)
set -u
if (( $# < 4 )); then
  echo "usage: $0 DATA GRID OUT NAME=SEBT [NAME=SEBT ...]" >&2
  exit 2
fi
data=$1 grid=$2 out=$3
shift 3
names=() bins=()
for a in "$@"; do
  names+=("${a%%=*}") bins+=("${a#*=}")
done
reps=${REPS:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$out"
verify_flag() {   # --no-verify where the build knows it
  if "$1" sweep --help 2>&1 | grep -q -- --no-verify; then echo --no-verify; fi
}
for i in "${!names[@]}"; do
  "${bins[$i]}" sweep --data "$data" --grid "$grid" --format npy --output "$tmp/o.npy" $(verify_flag "${bins[$i]}") \
    >/dev/null 2>&1 || { echo "${names[$i]}: the sweep failed" >&2; exit 1; }
  echo "hash ${names[$i]} $(md5sum < "$tmp/o.npy" | cut -d' ' -f1)" >> "$out"
done
for r in $(seq 1 "$reps"); do
  for i in "${!names[@]}"; do
    SEBT_SWEEP_STATS=1 "${bins[$i]}" sweep --data "$data" --grid "$grid" --format npy --output "$tmp/o.npy" \
      $(verify_flag "${bins[$i]}") 2>"$tmp/err" >/dev/null
    line=$(grep -o 'combos in [0-9.]* s (cpu [0-9.]* s' "$tmp/err" | head -1)
    echo "${names[$i]} $line load=$(cut -d' ' -f1 /proc/loadavg)" >> "$out"
  done
done
python3 - "$out" "${names[@]}" <<'PY'
import re, statistics, sys
t, c = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) combos in ([0-9.]+) s \(cpu ([0-9.]+) s", line)
    if m:
        t.setdefault(m[1], []).append(float(m[2]))
        c.setdefault(m[1], []).append(float(m[3]))
names = sys.argv[2:]
b, bc = statistics.median(t[names[0]]), statistics.median(c[names[0]])
for k in names:
    mt, mc = statistics.median(t[k]), statistics.median(c[k])
    print("%s: compute %.3f s (%+.1f %%), cpu %.3f s (%+.1f %%), %d runs"
          % (k, mt, 100 * (mt / b - 1), mc, 100 * (mc / bc - 1), len(t[k])))
PY
