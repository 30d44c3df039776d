#!/bin/sh
# One sebt command against the cuda backend under host execution (ctest
# sets SEBT_CUDA_LIBRARY to libsebt_cuda_host.so). Passes when the command
# exits with EXPECT_RC (default 0) and its output says that cuda ran as host
# execution, with no device: a run that quietly used something else, or
# passed host execution off as a GPU, fails.
set -u
expect=${EXPECT_RC:-0}
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 40
if [ "$rc" -ne "$expect" ]; then
  echo "FAIL: exit code $rc, expected $expect: $*"
  exit 1
fi
case "$out" in
  *"host execution, no device"*) ;;
  *) echo "FAIL: the output does not say that cuda ran as host execution, no device"; exit 1 ;;
esac
case "$out" in
  *"cuda on device ["*) echo "FAIL: host execution shown as a device"; exit 1 ;;
esac
echo "ok: exit $rc, host execution"
