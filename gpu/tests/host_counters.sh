#!/bin/sh
# SEBT_CUDA_HOST_COUNTERS: a cuda sweep of the 12 parity combos over the
# bundled 15m series (gap-filled: 152,832 bars) under host execution writes
# one JSON line whose figures follow from the sweep: the results alone come
# back (12 x 136 B, sizeof(sebt_result) on LP64), at least the four price
# columns go up (4 x 8 x 152,832 B) and stay resident, and both kernels ran.
set -u
sebt=$1 data=$2 combos=$3
f=$(mktemp) || exit 1
trap 'rm -f "$f"' EXIT
rm -f "$f"
SEBT_CUDA_HOST_COUNTERS=$f "$sebt" sweep --backend cuda --data "$data" --fill-gaps --combos "$combos" >/dev/null || {
  echo "FAIL: the sweep failed"; exit 1; }
[ -s "$f" ] || { echo "FAIL: no counters written"; exit 1; }
line=$(cat "$f")
echo "$line"
[ "$(wc -l <"$f")" -eq 1 ] || { echo "FAIL: expected one line"; exit 1; }
num() { printf '%s\n' "$line" | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"; }
d2h=$(num d2h_bytes) h2d=$(num h2d_bytes) peak=$(num peak_device_bytes)
[ "$d2h" = 1632 ] || { echo "FAIL: d2h_bytes $d2h, expected 1632"; exit 1; }
min=$((4 * 8 * 152832))
[ "$h2d" -ge "$min" ] && [ "$peak" -ge "$min" ] || { echo "FAIL: h2d $h2d / peak $peak below $min"; exit 1; }
case "$line" in
  *'"cuda_hop_kernel": {"launches": '[1-9]*'"cuda_memo_kernel": {"launches": '[1-9]*) ;;
  *) echo "FAIL: hop and memo kernels not both counted"; exit 1 ;;
esac
echo "ok"
