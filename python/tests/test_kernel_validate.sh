#!/usr/bin/env bash
# ctest: a kernel served over the kernel protocol passes sebt validate with
# the contract it declares, JUnit written. Skipped (77), saying why, when the
# kernel's Python packages are missing.
# usage: test_kernel_validate.sh PYTHON SEBT FIXTURES_DIR numba|torch64|torch32
set -u
py="$1" sebt="$2" fixtures="$3" which="$4"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
# 20 fuzz cases: every shape the generator makes by case number, the wide
# call (case 18: 8,192+ combos) among them. torch32 stops before it, at 18:
# the same kernel in float64 (torch64) and another tolerant kernel (numba)
# take the wide call over the protocol, and in float32, stepped bar by bar
# in Python, it was nearly all of that test's fuzz (35 s of its 36 s).
cases=20
case "$which" in
  numba)   need=numba; cmd="$root/bench/peers/numba_peer.py --serve"; contract="tolerant(1e-09)" ;;
  torch64) need=torch; cmd="$root/python/examples/torch_kernel.py --device cpu"; contract="exact" ;;
  torch32) need=torch; cmd="$root/python/examples/torch_kernel.py --device cpu --float32"; contract="tolerant(0.0001)"
           cases=18 ;;
  *) echo "unknown kernel $which"; exit 2 ;;
esac
if ! "$py" -c "import numpy, $need" 2>/dev/null; then
  echo "SKIPPED: $need is not importable by $py (apt-get install python3-$need)"
  exit 77
fi
tmp="$(mktemp -d /tmp/sebt-kernel-validate.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$sebt" validate --backend "exec:$py $cmd" --cases "$cases" --no-speed \
  --data "$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv" --junit "$tmp/v.xml" > v.txt 2>&1
rc=$?
grep -v '^ok ' v.txt | tail -25
[ $rc -eq 0 ] || { echo "FAIL: validate exited $rc"; exit 1; }
grep -q "^validate .* ($contract) from 'exec:" v.txt || { echo "FAIL: not validated as $contract"; exit 1; }
grep -Eq '^ok +fuzz .* [1-9][0-9]* cases' v.txt || { echo "FAIL: no fuzz case ran"; exit 1; }
grep -q '<testsuite' v.xml || { echo "FAIL: no JUnit"; exit 1; }
# Ties are reported, per check and in the total (none for an exact kernel).
grep -E "ties adjudicated" v.txt | tail -1
if [ "$contract" = exact ]; then
  grep -q "; 0 ties adjudicated" v.txt || { echo "FAIL: an exact kernel with ties"; exit 1; }
fi
echo "ok: $which validated over the kernel protocol as $contract"
