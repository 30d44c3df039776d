#!/usr/bin/env bash
# ctest: a kernel that breaks the protocol once, after its handshake (the
# example kernel behind fault_proxy.py, which garbles the reply to its 5th
# request), fails exactly one check of sebt validate, exit 1, as "protocol"
# with the request's number; the kernel is started again and every later
# check passes; the reproducer replays the requests that led to it and,
# pasted, fails the same way. Skipped (77) without numpy.
# usage: test_kernel_protocol.sh PYTHON SEBT FIXTURES_DIR
set -u
py="$1" sebt="$2" fixtures="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIPPED: numpy is not importable by $py (apt-get install python3-numpy)"
  exit 77
fi
tmp="$(mktemp -d /tmp/sebt-kernel-protocol.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
data="$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv"
cd "$tmp"
kernel="exec:$py $here/fault_proxy.py 5 garbage $tmp/once $py $here/../examples/spec_kernel.py"
fail() { echo "FAIL: $*"; exit 1; }

"$sebt" validate --backend "$kernel" --cases 2 --no-speed --data "$data" --save "$tmp/save" > v.txt 2>&1
rc=$?
[ $rc -eq 1 ] || { tail -20 v.txt; fail "validate exited $rc, not 1"; }
bad=$(grep -Ec '^(fail|crash|error) ' v.txt)
[ "$bad" -eq 1 ] || { grep -Ev '^ok ' v.txt | head; fail "$bad checks failed, not 1"; }
grep -Eq "^fail +[a-z-]+ .*protocol: kernel .*, request 5 since it started \((RUN|FEATURES) \(.*not a protocol frame on stdout" v.txt ||
  { grep -Ev '^ok ' v.txt | head; fail "no protocol failure naming request 5"; }
grep -Eq '^ok +fuzz ' v.txt && grep -Eq '^ok +determinism ' v.txt || fail "the checks after the fault did not pass"
grep -q "^validate spec_python (exact)" v.txt || fail "the example kernel is not validated as exact"
echo "ok: one check failed as protocol at request 5; the kernel was started again and the rest passed"

replay=$(grep -A3 ': fail: protocol: ' v.txt | grep -m1 '^replay: ' | sed 's/^replay: //')
case "$replay" in "sebt validate --backend 'exec:"*" --replay $tmp/save/"*) ;; *) fail "unexpected replay line: $replay" ;; esac
[ -s "$(echo "$replay" | sed 's/.* --replay //')/requests.bin" ] || fail "no requests.bin in the reproducer"
rm -f "$tmp/once"   # the proxy faults again, in its first process
sebt() { "$SEBT_BIN" "$@"; }
SEBT_BIN="$sebt"
eval "$replay" > replay.txt 2>&1
rc=$?
[ $rc -eq 1 ] && grep -Eq "protocol: kernel .*, request 5 since it started" replay.txt ||
  { cat replay.txt; fail "the pasted replay exited $rc without the protocol fault at request 5"; }
echo "ok: the reproducer replays the request sequence: $(grep -m1 -o 'request 5 since it started[^:]*' replay.txt)"

# sebt_kernel.py reads the declaration from the HELLO; a kernel that names
# the parameters it was written for refuses a sebt that declares others
# (both lists named), and is never sent a request.
"$sebt" run --data "$data" --backend "exec:$py $here/narrow_kernel.py ema_fast ema_slow" > narrow.txt 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "refused the handshake of kernel protocol version 2: this kernel was written for the parameters ema_fast, ema_slow; sebt declares ema_fast, ema_slow, z_window, " narrow.txt ||
  { cat narrow.txt; fail "a kernel written for other parameters exited $rc without refusing the handshake"; }
grep -q "asked to compute" narrow.txt && fail "the refusing kernel was sent a request"
echo "ok: a kernel written for other parameters refuses the handshake, naming both"
