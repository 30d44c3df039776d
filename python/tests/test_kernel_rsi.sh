#!/usr/bin/env bash
# ctest: with the RSI entry filter on (use_rsi = true; SPEC §3-4), a kernel
# served over the kernel protocol passes sebt parity against the reference,
# as loaded and gap-filled, on four years of 15-minute bars with holes. The grid is one
# where the filter bites (the reference's trade counts move with rsi_max and
# rsi_window and differ from the filter off, checked first), so a kernel
# that ignored it would fail. Skipped (77), saying why, when the kernel's
# Python packages are missing.
# usage: test_kernel_rsi.sh PYTHON SEBT FIXTURES_DIR spec|numba
set -u
py="$1" sebt="$2" fixtures="$3" which="$4"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
case "$which" in
  spec)  need=numpy; cmd="$root/python/examples/spec_kernel.py" ;;
  numba) need=numba; cmd="$root/bench/peers/numba_peer.py --serve" ;;
  *) echo "unknown kernel $which"; exit 2 ;;
esac
if ! "$py" -c "import numpy, $need" 2>/dev/null; then
  echo "SKIPPED: $need is not importable by $py (apt-get install python3-$need)"
  exit 77
fi
tmp="$(mktemp -d /tmp/sebt-kernel-rsi.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
data="$fixtures/data/BTCUSDT-15m-2017-2021.csv.gz"   # 32 holes: RSI across a missing bar
fail() { echo "FAIL: $*"; exit 1; }
cat > grid.txt <<'GRID'
ema_fast = 4
ema_slow = 32
z_window = 16
atr_window = 8
vol_z = 0.5
tr_z = 0
cloc_min = 0.3
use_rsi = false, true
rsi_window = 2, 14
rsi_max = 20, 50
GRID

# The filter bites on this grid: the reference's trade counts with it on
# differ from those with it off, and between its thresholds.
"$sebt" sweep --backend reference --data "$data" --grid grid.txt --format csv --no-verify > ref.csv 2> ref.err ||
  { cat ref.err; fail "the reference sweep exited $?"; }
"$py" - ref.csv <<'PY' || exit 1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, len(rows)
off = {r["n"] for r in rows if r["use_rsi"] == "false"}
on = [r["n"] for r in rows if r["use_rsi"] == "true"]
assert len(off) == 1, "with the filter off, rsi_window and rsi_max changed the trades: %s" % off
assert len(set(on)) == 4 and not off & set(on), "the filter does not bite on this grid: off %s, on %s" % (off, on)
assert all(int(n) > 0 for n in on), on
print("ok: the reference's trades: %s with the filter off, %s with it on" % (off.pop(), on))
PY

"$sebt" parity --backend "exec:$py $cmd" --data "$data" --grid grid.txt > parity.txt 2>&1
rc=$?
tail -4 parity.txt
[ $rc -eq 0 ] || fail "parity of $which with the RSI filter exited $rc"
grep -q "^combos checked 16, divergences 0" parity.txt || fail "not 16 combos checked without divergence"
echo "ok: $which passes parity with the RSI filter on and off"
