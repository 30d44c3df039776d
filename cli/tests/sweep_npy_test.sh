#!/usr/bin/env bash
# `sebt sweep --format npy` (docs/formats.md): the NumPy file holds
# the CSV's values bit for bit, whatever path wrote it, and a failed or
# interrupted sweep leaves no file.
#   sweep_npy_test.sh files SEBT VALUES_DIGEST SOURCE_ROOT LIAR_SO
#   sweep_npy_test.sh numpy SEBT VALUES_DIGEST SOURCE_ROOT PYTHON
# files: C only (values_digest reads the npy by its own header): --top,
#   stdout, the whole-sweep writer (shards merged, checkpoint) against the
#   streamed one, a lying backend and SIGTERM leave no file (the old one
#   stays). numpy: numpy.load (and pandas.DataFrame of it, when pandas is
#   installed) against Python's own reading of the CSV at 1,000 and
#   100,000 combos; exit 77 without numpy.
set -u
mode=$1 sebt=$2 digest=$3 root=$4 extra=${5:-}
data=$root/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
grids=$root/bench/grids
work=$(mktemp -d /tmp/sebt_sweep_npy_XXXXXX)
pid=
trap '[ -n "$pid" ] && { kill "$pid"; kill -CONT "$pid"; } 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
same() { if cmp -s "$1" "$2"; then pass "$3"; else fail "$3 ($1 differs from $2)"; fi; }
# Without verification: the whole-sweep writer (merge, checkpoints) and
# stdout carry no verification note, and the bytes are compared with them.
# The verified file's values are checked below.
sweep() { "$sebt" sweep --data "$data" --no-verify "$@" 2>>err.txt; }
same_values() {  # a b label
  local x y
  x=$("$digest" "$1") || { fail "$3: $1 does not read back"; return; }
  y=$("$digest" "$2") || { fail "$3: $2 does not read back"; return; }
  if [ "$x" = "$y" ]; then pass "$3 ($x)"; else fail "$3: $1 '$x' vs $2 '$y'"; fi
}
no_file() {  # name label
  if ls -A | grep -q "^$1\$\|^\.$1\.tmp"; then fail "$2: left $(ls -A | grep "$1" | tr '\n' ' ')"
  else pass "$2: no $1, no temporary file"; fi
}

case $mode in
files)
  liar=$extra
  g=$grids/stream-1000.grid
  sweep --grid "$g" --output all.csv || fail "csv sweep"
  grep -q '^sebt sweep: not verified (--no-verify): no best combo or sample recomputed on the reference, no cached series compared with a fresh parse, no row read back$' err.txt &&
    pass "--no-verify says what it skipped" || fail "--no-verify does not say what it skipped: $(tail -2 err.txt)"
  sweep --grid "$g" --format npy --output all.npy || fail "npy sweep"
  same_values all.npy all.csv "1,000 combos: npy and CSV hold the same values"
  # 10 + header + 1000 rows of 157 bytes (docs/formats.md), header a multiple of 64
  size=$(stat -c %s all.npy)
  if [ $(( (size - 157000) % 64 )) -eq 0 ] && [ "$size" -gt 157000 ] && [ "$size" -lt 159048 ]; then
    pass "size $size = header (multiple of 64) + 1000 x 157"
  else fail "all.npy is $size bytes, expected a 64-multiple header + 157,000"; fi
  head -c 8 all.npy | cmp -s - <(printf '\223NUMPY\001\000') &&
    pass "magic and version 1.0" || fail "magic/version: $(head -c 10 all.npy | od -An -c)"
  sweep --grid "$g" --format npy > stdout.npy || fail "npy to stdout"
  same stdout.npy all.npy "npy on stdout: the bytes of --output"
  # Verified (the default): the header carries the verification as a
  # comment after its dict, the rows are the same bytes.
  "$sebt" sweep --data "$data" --grid "$g" --format npy --verify 3 --seed 9 --output verified.npy 2>>err.txt ||
    fail "verified npy sweep"
  same_values verified.npy all.csv "verified npy: the values of the CSV"
  hv=$(( $(stat -c %s verified.npy) - 157000 )) ha=$(( $(stat -c %s all.npy) - 157000 ))
  if [ $((hv % 64)) -eq 0 ] && cmp -s <(tail -c 157000 verified.npy) <(tail -c 157000 all.npy) &&
     head -c "$hv" verified.npy | grep -aq "}  *# sebt-verification {\"version\": 3, .*\"best_on\": \"reference-z-where-read\", .*\"seed\": \"0x9\""; then
    pass "verified npy: header of $hv bytes (unverified $ha) with its note, the same rows"
  else fail "verified npy: header or rows differ: $(head -c "$hv" verified.npy | tr -c '[:print:]' '.')"; fi
  # --verify full runs the best combo on the whole reference (every bar's
  # z-scores), and its note says so.
  "$sebt" sweep --data "$data" --grid "$g" --format npy --verify full --seed 9 --output full.npy 2>>err.txt ||
    fail "--verify full npy sweep"
  hf=$(( $(stat -c %s full.npy) - 157000 ))
  if head -c "$hf" full.npy | grep -aq "\"best\": 1, \"best_on\": \"reference\", .*\"full\": true"; then
    pass "--verify full: the note records the best combo on the reference"
  else fail "--verify full: the note: $(head -c "$hf" full.npy | tr -c '[:print:]' '.')"; fi
  if command -v script >/dev/null; then   # util-linux: stdout a terminal
    script -qec "'$sebt' sweep --data '$data' --grid '$g' --format npy" /dev/null > tty.txt 2>&1
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q "binary" tty.txt && ! grep -q NUMPY tty.txt; then
      pass "npy to a terminal: refused, exit 2"
    else fail "npy to a terminal: exit $rc: $(head -c 300 tty.txt)"; fi
  fi
  sweep --grid "$g" --top 37 --by total_pnl --output top.csv || fail "csv --top"
  sweep --grid "$g" --top 37 --by total_pnl --format npy --output top.npy || fail "npy --top"
  same_values top.npy top.csv "--top 37 --by total_pnl: npy and CSV hold the same rows, same order"
  case $("$digest" top.npy) in rows=37\ *) pass "--top 37 writes 37 rows" ;; *) fail "--top 37: $("$digest" top.npy)" ;; esac
  sweep --grid "$g" --top 5000 --format npy --output topall.npy || fail "npy --top above the combo count"
  case $("$digest" topall.npy) in rows=1000\ *) pass "--top 5000 of 1000: 1000 rows" ;; *) fail "--top 5000: $("$digest" topall.npy)" ;; esac
  # The whole-sweep writer (shards merged, checkpoint) against the streamed one.
  for i in 1 2 3; do sweep --grid "$g" --format npy --shard "$i/3" --output "s$i.shard" || fail "shard $i/3"; done
  "$sebt" merge s3.shard s1.shard s2.shard --output merged.npy 2>>err.txt || fail "merge"
  same merged.npy all.npy "3 npy shards merged: the bytes of the streamed sweep"
  sweep --grid "$g" --format npy --checkpoint ck --chunk 300 --output ck.npy || fail "checkpointed sweep"
  same ck.npy all.npy "checkpointed npy sweep: the bytes of the streamed sweep"
  sweep --grid "$g" --format npy --checkpoint ck2 --top 37 --by total_pnl --output cktop.npy || fail "checkpoint --top"
  same cktop.npy top.npy "--top through the whole-sweep writer: the bytes of the streamed one"
  sweep --grid "$g" --format npy --threads 3 --trades tr --top 3 --output trtop.npy || fail "--trades"
  [ "$(ls tr | wc -l)" -eq 3 ] && pass "--trades with npy: 3 trade files" || fail "--trades: $(ls tr)"
  # A backend that lies: exit 1, no file, no temporary file.
  printf 'ema_fast = 2, 3\nz_window = 3\natr_window = 2\n' > tiny.grid
  SEBT_LIAR=win_rate "$sebt" sweep --backend "$liar" --data "$root/fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv" \
    --grid tiny.grid --format npy --output lie.npy 2>lie.txt
  rc=$?
  [ "$rc" -eq 1 ] && pass "a lying backend: exit 1" || fail "a lying backend: exit $rc, expected 1: $(cat lie.txt)"
  no_file lie.npy "a lying backend"
  # SIGTERM while rows are being written (a background job of a script
  # ignores SIGINT; sebt handles both alike, cli/main.c): the old file
  # stays, no temporary file.
  echo old > int.npy
  # Certain, not a race: the sweep holds itself (a read of hold.fifo,
  # which this shell keeps open and never writes) once its first window's
  # rows are in the temporary file, and says so through a FIFO; the TERM
  # sent then ends it wherever it is, with no stop to continue.
  mkfifo int.fifo hold.fifo
  exec 4<> int.fifo   # read and write: opening never blocks
  exec 5<> hold.fifo
  SEBT_TEST_STOP_AFTER_WINDOWS=1 SEBT_TEST_STOPPED_FIFO=int.fifo SEBT_TEST_HOLD_FIFO=hold.fifo "$sebt" sweep --data "$data" \
    --grid "$grids/big-967680.grid" --format npy --threads 1 --output int.npy 2>int.txt &
  pid=$!
  stopped=""
  read -r -t 300 stopped <&4
  if [ "$stopped" = "$pid" ] && ls -A | grep -q '^\.int\.npy\.tmp' &&
     [ "$(stat -c %s .int.npy.tmp* 2>/dev/null | head -1)" -gt 0 ]; then
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    pid=
    [ "$rc" -eq 143 ] && pass "SIGTERM mid-sweep: exit 143" || fail "SIGTERM mid-sweep: exit $rc, expected 143"
    [ "$(cat int.npy)" = old ] && pass "SIGTERM mid-sweep: the old int.npy is intact" || fail "int.npy changed"
    ls -A | grep -q '^\.int\.npy\.tmp' && fail "SIGTERM left $(ls -A | grep tmp)" || pass "SIGTERM: no temporary file"
  else
    fail "the 967,680-combo sweep did not stop with rows in its temporary file (said '$stopped', pid $pid): $(cat int.txt)"
  fi
  exec 4<&-
  ;;
numpy)
  py=${extra:-/usr/bin/python3}
  if ! "$py" -c 'import numpy' 2>/dev/null; then
    echo "SKIP: $py has no numpy (Debian: python3-numpy); the C reader of cli_sweep_npy_files still checks the values"
    exit 77
  fi
  for g in stream-1000 cheap-100000; do
    sweep --grid "$grids/$g.grid" --output "$g.csv" || fail "$g csv"
    sweep --grid "$grids/$g.grid" --format npy --output "$g.npy" || fail "$g npy"
    if "$py" "$root/cli/tests/npy_check.py" "$g.npy" "$g.csv"; then pass "$g: numpy reads the CSV's values bit for bit"
    else fail "$g: numpy check"; fi
  done
  # numpy reads a verified file, whose header carries the verification note.
  g=stream-1000
  "$sebt" sweep --data "$data" --grid "$grids/$g.grid" --format npy --verify 2 --output verified.npy 2>/dev/null ||
    fail "verified npy sweep"
  if "$py" "$root/cli/tests/npy_check.py" verified.npy "$g.csv"; then pass "verified npy: numpy reads it bit for bit"
  else fail "verified npy: numpy check"; fi
  ;;
*) echo "usage: $0 files|numpy ..."; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; cat err.txt 2>/dev/null | grep -v 'timestamp gaps' | tail -5; exit 1; }
echo "all passed"
