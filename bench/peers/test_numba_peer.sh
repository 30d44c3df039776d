#!/usr/bin/env bash
# ctest: the numba peer's trade counts equal the reference's on a sample of
# combos (and the check catches a grid where they cannot). Skipped (77) when
# python3-numba is missing.
# usage: test_numba_peer.sh PYTHON SEBT FIXTURES_DIR
set -u
py="$1" sebt="$2" fixtures="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! "$py" -c "import numba" 2>/dev/null; then
  echo "SKIPPED: numba is not importable by $py (apt-get install python3-numba)"
  exit 77
fi
data="$fixtures/data/BTCUSDT-1m-2019-01.csv.gz"
out="$("$py" "$here/numba_peer.py" --data "$data" --grid "$here/check-grid.txt" \
        --check-sample 5 --sebt "$sebt" --no-time)"
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: the peer's check exited $rc"; exit 1; }
# The JSON must say ok, and the sample must hold trades: a sample of combos
# that never trade would agree with anything.
"$py" - "$out" <<'PY' || exit 1
import json, sys
r = json.loads(sys.argv[1])
c = r["check"]
assert c["ok"] is True, "check not ok"
assert len(c["combos"]) == 5, c["combos"]
assert c["trades_peer"] == c["trades_reference"], c
assert sum(1 for n in c["trades_reference"] if n > 0) >= 3, "sample with too few trades"
assert r["combos"] == 256 and r["bars"] == 44640, (r["combos"], r["bars"])
print("ok: trade counts", c["trades_peer"], "equal the reference's")
PY
# Exact ties (z over 2 bars against -1): the check must refuse to time.
"$py" "$here/numba_peer.py" --data "$data" --grid "$here/tie-grid.txt" \
  --check-sample 1 --sebt "$sebt" > /dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a grid where the peer differs from the reference exited $rc, not 1"; exit 1; }
echo "ok: the check refuses to time a peer that differs from the reference"
