#!/bin/sh
# Lint of what nvcc really emits for the cuda module, built with the
# module's own flags (gpu/CMakeLists.txt, SEBT_CUDA_DEVICE_FLAGS):
#   - no fused multiply-add (fma.rn.f64/f32): the shared per-combo code must
#     round every product as fast_cpu does (-fmad=false);
#   - no approximate or libdevice transcendental math (ex2/lg2/sin/cos/rcp/
#     rsqrt .approx, calls to __nv_*): nothing outside IEEE +-*/ and sqrt;
#   - ptxas -v: no stack frame, no spill stores or loads in any kernel.
# Usage: ptx_lint.sh PTXAS ARCH FILE.ptx...   (one architecture per call)
#        ptx_lint.sh --expect-fail ...        (passes only if the lint fails)
set -u
expect_fail=0
if [ "${1:-}" = "--expect-fail" ]; then
  expect_fail=1
  shift
fi
ptxas=$1 arch=$2
shift 2
bad=0
for ptx in "$@"; do
  if [ "$(grep -c '^\.visible \.entry' "$ptx")" -lt 2 ]; then
    echo "FAIL: $ptx holds fewer than two kernels: nothing was linted"
    exit 1
  fi
  n=$(grep -cE 'fma\.rn(\.ftz)?(\.sat)?\.f(32|64)' "$ptx")
  if [ "$n" -ne 0 ]; then
    echo "lint: $ptx: $n fused multiply-add instruction(s) (fma.rn.f64/f32):"
    grep -nE 'fma\.rn(\.ftz)?(\.sat)?\.f(32|64)' "$ptx" | head -5
    bad=1
  fi
  n=$(grep -cE '\.approx\.|__nv_|\.extern \.func' "$ptx")
  if [ "$n" -ne 0 ]; then
    echo "lint: $ptx: $n approximate or libdevice math instruction(s):"
    grep -nE '\.approx\.|__nv_|\.extern \.func' "$ptx" | head -5
    bad=1
  fi
  info=$("$ptxas" -v -arch="$arch" "$ptx" -o /dev/null 2>&1) || { echo "FAIL: ptxas failed on $ptx:"; echo "$info"; exit 1; }
  echo "$info" | awk -v arch="$arch" '
    /Compiling entry function/ { k = $0; sub(/.*function .\_Z[0-9]+/, "", k); sub(/[^a-z_].*/, "", k) }
    /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i + 1); printf "%s %-22s %4s registers\n", arch, k, r }'
  spills=$(echo "$info" | grep -E 'bytes stack frame|spill' | grep -vE '^ *0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads')
  if [ -n "$spills" ]; then
    echo "lint: $ptx: local memory or spills:"
    echo "$spills"
    bad=1
  fi
done
if [ "$expect_fail" -eq 1 ]; then
  if [ "$bad" -eq 1 ]; then
    echo "ok: the lint fails on this PTX, as it must"
    exit 0
  fi
  echo "FAIL: the lint passed PTX built without -fmad=false: it cannot catch FMA contraction"
  exit 1
fi
[ "$bad" -eq 0 ] && echo "ok: no FMA, no approximate or libdevice math, no spills or local memory"
exit "$bad"
