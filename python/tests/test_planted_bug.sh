#!/usr/bin/env bash
# ctest: the Python example kernel's planted-bug variant fails validate
# with exit 1, a shrunk fuzz reproducer, and a replay command that, pasted
# into a shell, fails again (the example itself validates green as exact in
# test_kernel_protocol.sh, every check but the one its proxy breaks).
# Skipped (77) without numpy.
# usage: test_planted_bug.sh PYTHON SEBT FIXTURES_DIR
set -u
py="$1" sebt="$2" fixtures="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIPPED: numpy is not importable by $py (apt-get install python3-numpy)"
  exit 77
fi
tmp="$(mktemp -d /tmp/sebt-planted.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
kernel="$here/../examples/spec_kernel.py"
# 10 fuzz cases, not seconds: the same cases on any machine; the planted
# fee bug shows in case 1 of seed 1.
data="$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv"
cd "$tmp"

"$sebt" validate --backend "exec:$py $kernel --bug" --cases 10 --no-speed --data "$data" --save "$tmp/repro" > bad.txt 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: the planted bug exited $rc, not 1"; tail -20 bad.txt; exit 1; }
grep -E "^fuzz .*: fail: divergence in fuzz case .*shrunk from [0-9]+ to [0-9]+ bars" bad.txt ||
  { echo "FAIL: no shrunk fuzz reproducer"; tail -20 bad.txt; exit 1; }
# the fuzz stage's reproducer, saved under --save
replay="$(grep -m1 "^replay: sebt validate --backend .* --replay $tmp/repro/" bad.txt | sed 's/^replay: //')"
echo "pasting: $replay"
case "$replay" in "sebt validate --backend 'exec:"*"--bug' --replay "*) ;; *) echo "FAIL: unexpected replay line"; exit 1 ;; esac
sebt() { "$SEBT_BIN" "$@"; }
SEBT_BIN="$sebt"
eval "$replay" > replay.txt 2>&1
rc=$?
tail -2 replay.txt
[ $rc -eq 1 ] || { echo "FAIL: the pasted replay exited $rc, not 1"; exit 1; }
grep -q "trade 0 pnl" replay.txt || { echo "FAIL: the replay does not show the fee bug"; exit 1; }
echo "ok: the planted bug fails validate (exit 1), and its pasted replay fails again"
