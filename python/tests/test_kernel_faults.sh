#!/usr/bin/env bash
# ctest: each fault of a kernel process is the kernel's: a clear message
# naming what it did, exit 2 before the handshake is done (the kernel cannot
# be used), exit 1 after it (the kernel's bug, named with the request's
# number; an ERROR reply is a divergence in a check), the kernel's stderr
# shown, sebt never hangs, and no process of the kernel is left behind.
# usage: test_kernel_faults.sh PYTHON SEBT FIXTURES_DIR
set -u
py="$1" sebt="$2" fixtures="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv"
tag="sebtfault$$"
fails=0
tmp="$(mktemp -d /tmp/sebt-kernel-faults.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# check NAME WANT_RC REGEX -- sebt args...
# Each check's own limit: a sanitized sebt runs validate's reference side
# (the mutant checks before a hang is reached) several times slower.
limit=60
"$sebt" --version 2>/dev/null | grep -q 'ASan' && limit=300
# alive_open: fd 6 reads a new FIFO that every kernel process of the
# next command holds open for writing (FAULT_KERNEL_ALIVE) until it dies;
# alive_gone: reads it to its end, which comes once all of them are dead
# (zombies included), however loaded the machine: no sleep-and-look. A
# process left running keeps it open: after $limit s that is a failure.
alive_n=0
alive_open() {
  alive_n=$((alive_n + 1)); fifo="$tmp/alive.$alive_n"
  mkfifo "$fifo"
  exec 5<> "$fifo" 6< "$fifo" 5>&-   # opened read-write first: neither open blocks
}
alive_gone() {
  local line rc
  while read -r -t "$limit" -u 6 line; rc=$?; [ "$rc" -eq 0 ]; do :; done
  exec 6<&-; rm -f "$fifo"
  [ "$rc" -eq 1 ]   # 1: the end; above 128: a writer stayed
}
check() {
  local name="$1" want="$2" regex="$3"
  shift 4
  local t0=$SECONDS
  alive_open
  FAULT_KERNEL_ALIVE="$fifo" timeout -k 5 "$limit" "$@" > "$tmp/out" 2> "$tmp/err" 6<&-
  local rc=$? took=$((SECONDS - t0))
  local bad=""
  [ "$rc" -eq "$want" ] || bad="exit $rc, not $want"
  cat "$tmp/out" >> "$tmp/err"
  grep -Eq "$regex" "$tmp/err" || bad="$bad; no message matching /$regex/"
  alive_gone || bad="$bad; a kernel process held its FIFO $limit s after sebt ended"
  if pgrep -f "$tag-$name" > /dev/null; then
    bad="$bad; left running: $(pgrep -af "$tag-$name" | head -3)"
    pkill -KILL -f "$tag-$name"   # only this test's own leftovers, by their unique tag
  fi
  if [ -n "$bad" ]; then
    echo "FAIL $name: $bad (${took}s)"; sed 's/^/  stderr: /' "$tmp/err" | tail -5
    fails=$((fails + 1))
  else
    echo "ok   $name: exit $rc in ${took}s: $(grep -Eo "$regex" "$tmp/err" | head -1)"
  fi
}
k() { echo "exec:$py $here/fault_kernel.py $1 $tag-$1"; }
run() { local m="$1"; shift; check "$m" "$@" -- "$sebt" run --data "$data" --backend "$(k "$m")"; }

run die        2 "exited with status 3 during the HELLO request.*no GPU here \(on purpose\)"
SEBT_KERNEL_TIMEOUT=2 run hello_hang 2 "did not answer the HELLO request within 2 s"
run version    2 "speaks kernel protocol version 3; this sebt speaks version 2"
# A kernel of the version before: refused at the handshake, both versions
# named, and never sent a combo (it would read them as 15 parameters).
run v1         2 "speaks kernel protocol version 1; this sebt speaks version 2 \(version 1's requests carry 15 parameters and 7 feature columns, version 2's carry [0-9]+ and [0-9]+: it cannot read them"
if grep -q "was sent a request" "$tmp/err"; then
  echo "FAIL v1: the version 1 kernel was sent a request"; fails=$((fails + 1))
fi
check v1_parity 2 "speaks kernel protocol version 1; this sebt speaks version 2" -- "$sebt" parity --data "$data" --backend "$(k v1)" --gaps plain
# A kernel that refuses the declaration sebt sends is not used (exit 2).
run refuse_decl 2 "refused the handshake of kernel protocol version 2: this kernel was written for the parameters ema_fast; sebt declares the columns ema_f, ema_s, tr, atr, vol_z, tr_z, cloc, rsi; parameters ema_fast, ema_slow, z_window"
run chatty     2 "not a protocol frame on stdout during the HELLO request \(\"Hello from the kernel"
run exit_mid   1 "request 1 since it started .*exited with status 4 during the RUN \(1 combo, [0-9]+ bars\) request.*fault_kernel: exit_mid"
SEBT_KERNEL_TIMEOUT=2 run hang 1 "did not answer the RUN .* within 2 s \(SEBT_KERNEL_TIMEOUT"
run garbage    1 "not a protocol frame on stdout during the RUN .*result: 42 trades"
SEBT_KERNEL_TIMEOUT=30 run short_text 1 "not a protocol frame on stdout during the RUN .*\"50%\."
run truncated  1 "exited with status 5 in the middle of its reply .*a short RESULTS frame: its header promised 128 bytes of payload, 56 came"
run wrong_size 1 "answered the RUN .* with [0-9]+ bytes of results \(1 rows of 16 doubles"
run bad_index  1 "trade 0 of combo 0 with exit_index"
run error      2 "kernel fault_error failed on combo 0: ValueError: cannot handle"
# A frame whose header promises 8 bytes more than come: short, said so;
# when the kernel exits, at once (not after SEBT_KERNEL_TIMEOUT).
SEBT_KERNEL_TIMEOUT=2 run long_frame 1 "did not finish its reply to the RUN .* a short RESULTS frame: its header promised 136 bytes of payload, 128 came"
SEBT_KERNEL_TIMEOUT=30 run long_exit 1 "exited with status 6 in the middle of its reply .*a short RESULTS frame: its header promised 136 bytes of payload, 128 came"
# A kernel that exits while a process it started holds its stdout (no EOF
# comes), or that closes stdout and runs on: seen at once, its exit named.
SEBT_KERNEL_TIMEOUT=30 run orphan_exit 1 "exited with status 7 during the RUN .* before answering \(a process it started still holds its stdout\)"
# (behind exec: a shell that waits for the kernel holds the pipe too.)
check close_out 1 "closed its stdout during the RUN .* before answering" -- env SEBT_KERNEL_TIMEOUT=30 \
  "$sebt" run --data "$data" --backend "exec:exec $py $here/fault_kernel.py close_out $tag-close_out"
# A kernel's text reaches the terminal with its control characters escaped;
# a combo index outside the request is a protocol fault.
run escape     2 'failed on combo 0: bad\\x1b\[2J\\x07\\nresult: PASS'
if grep -q $'\x1b' "$tmp/err" || grep -q $'\a' "$tmp/err"; then
  echo "FAIL escape: a raw escape or bell reached stderr"; fails=$((fails + 1))
fi
run combo_max  1 "sent an ERROR about combo 9223372036854775807 for the RUN \(1 combo, [0-9]+ bars\) request, which has combos 0 to 0"
# NaN pnl on ordinary prices: the backend's impossible result (exit 1, named), not the prices' fault.
run nan_pnl    1 "backend fault_nan_pnl returned an impossible result"
SEBT_KERNEL_TIMEOUT=abc run exit_mid 2 "SEBT_KERNEL_TIMEOUT='abc': expected seconds > 0"

# In the oracle: a kernel broken after its handshake is exit 1 (never a
# divergence to shrink), with a replay command; an ERROR reply is a
# divergence (exit 1); a kernel that cannot start is exit 2.
check parity_hang 1 "did not answer .* within 2 s" -- env SEBT_KERNEL_TIMEOUT=2 "$sebt" parity --data "$data" --backend "$(k hang)" --gaps plain
check fuzz_exit 1 "exited with status 4 during the RUN" -- "$sebt" fuzz --iterations 5 --no-save --backend "$(k exit_mid)"
check fuzz_replay 1 "replay: sebt fuzz --backend 'exec:" -- "$sebt" fuzz --iterations 5 --no-save --backend "$(k exit_mid)"
check parity_error 1 "kernel fault_error failed on combo 0" -- "$sebt" parity --data "$data" --backend "$(k error)" --gaps plain
check validate_die 2 "exited with status 3 during the HELLO request" -- "$sebt" validate --no-speed --cases 2 --backend "$(k die)"
# validate limits a kernel's requests as it limits a plugin's calls (20 x
# the reference's time for the work, at least --call-timeout), not by the
# fixed SEBT_KERNEL_TIMEOUT: the hung check is a crash naming it. It stops
# there (--fail-fast): the mutants, which still run after a hang without
# it, took it past its limit on a loaded machine.
check validate_hang 1 "^crash +replay +fast_cpu-seed1-case12 .*did not answer the RUN \(1 combo, 10 bars\) request within 2 s \(20 x the reference's time for this work, at least --call-timeout 2 s" -- \
  env -u SEBT_KERNEL_TIMEOUT "$sebt" validate --no-speed --cases 2 --call-timeout 2 --fail-fast --save "$tmp/save" --backend "$(k hang)"

# sebt ended during a request by SIGTERM or SIGINT (a CI timeout, Ctrl-C),
# or by any other signal that ends a process (SIGQUIT, SIGUSR1, ...: one
# list, sebt_ending_signals), ends the kernel's whole process group, also
# behind a /bin/sh -c that waits for it (the "; true" keeps the shell from
# handing over with exec). Certain: the kernel writes its pid and its
# child's to a FIFO once in the request; only then is sebt signalled. (A
# background job of a script starts with SIGINT and SIGQUIT ignored:
# restored first.)
ulimit -c 0   # SIGQUIT's default action dumps core
mkfifo "$tmp/started"
exec 3<> "$tmp/started"   # read and write: never blocks opening
for sig in TERM INT QUIT USR1; do
  name="signal_$sig"
  alive_open
  FAULT_KERNEL_ALIVE="$fifo" FAULT_KERNEL_STARTED="$tmp/started" "$py" -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT): signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' \
    "$sebt" run --data "$data" --backend "exec:$py $here/fault_kernel.py hang $tag-$name; true" > /dev/null 2>&1 6<&- &
  pid=$!
  kpid="" cpid=""
  read -r -t 300 kpid cpid <&3
  if [ -z "$cpid" ]; then
    echo "FAIL $name: the kernel never reached its request"; fails=$((fails + 1))
    kill -KILL $pid; wait $pid; exec 6<&-; rm -f "$fifo"; continue
  fi
  kill -$sig $pid; wait $pid; rc=$?
  # SIGKILLed by sebt's handler before it died: both hold the FIFO until
  # they are dead (left alive, they would live for an hour).
  # (The FIFO's end comes as they close their files on the way out, a
  # moment before /proc says Z: their state is not looked at after it.)
  if ! alive_gone; then
    echo "FAIL $name: left running after sebt ended (exit $rc): $(ps -o pid=,args= -p "$kpid,$cpid")"
    kill -KILL "$kpid" "$cpid" 2> /dev/null
    fails=$((fails + 1))
  elif [ $rc -ne $((128 + $(kill -l $sig))) ]; then
    echo "FAIL $name: sebt exited $rc, not by SIG$sig"; fails=$((fails + 1))
  else
    echo "ok   $name: sebt ended (exit $rc), the kernel ($kpid) and its child ($cpid) with it"
  fi
done

[ $fails -eq 0 ] || { echo "$fails fault check(s) failed"; exit 1; }
echo "every kernel fault reported as the kernel's, none left running"
