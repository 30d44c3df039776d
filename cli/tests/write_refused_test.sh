#!/usr/bin/env bash
# Writes the file system refuses: a file-size limit (ulimit -f, as batch
# schedulers set) with SIGXFSZ at its default action, and a full file system.
# Each is a write error: exit 2, a message naming the file and the reason,
# no temporary file left, the previous file unchanged (docs/cli.md, "Exit
# codes"), on every output format and thread count.
#   write_refused_test.sh SEBT FIXTURES
set -u
sebt=$1 fixtures=$2
data=$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv
work=$(mktemp -d /tmp/sebt_write_refused_XXXXXX)
mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 60,000 combos: one window of rows (no direct I/O), formatted by every
# thread in parts over 1 MiB, each written past stdio's buffer.
printf 'ema_fast = 2:301:1\nz_window = 3:102:1\natr_window = 2\n' > grid.txt

# refused DIR REASON WHAT ARGS...: sebt ARGS over an existing DIR/out.F, run
# by WHAT (a prefix command), exits 2 naming the file and REASON, leaves the
# old file as it was and no temporary file.
refused() {
  local dir=$1 reason=$2 what=$3; shift 3
  local out
  for fmt in csv json npy; do
    for threads in "" "--threads 1"; do
      out=$dir/out.$fmt
      echo old > "$out"
      # shellcheck disable=SC2086
      $what "$sebt" "$@" --format "$fmt" --output "$out" $threads 2>err.txt >/dev/null
      local rc=$?
      local label="$* --format $fmt ${threads:-(every thread)} under $what"
      if [ "$rc" -ne 2 ]; then
        fail "$label: exit $rc, expected 2 (153: killed by SIGXFSZ): $(head -c 300 err.txt)"
      elif ! grep -q "writing $out failed: $reason; the previous file is unchanged" err.txt; then
        fail "$label: the message lacks the file or '$reason': $(head -c 300 err.txt)"
      fi
      [ "$(cat "$out")" = old ] || fail "$label: the previous file changed"
      ls -a "$dir" | grep -q '\.tmp-' && fail "$label: left $(ls -a "$dir" | grep '\.tmp-')"
      rm -f "$dir"/.*.tmp-* 2>/dev/null
    done
  done
}

# ulimit -f is in blocks of 1024 bytes: 100 KiB, far less than the output.
# With SIGXFSZ ignored (as a caller may leave it) each write past the limit
# fails with EFBIG: the reason must survive to the message.
limited_ignoring() { (trap '' XFSZ; ulimit -f 100 && exec "$@"); }
before=$failures
refused "$work" "File too large" limited_ignoring sweep --data "$data" --grid grid.txt
[ "$failures" -eq "$before" ] && echo "ok: a file-size limit, SIGXFSZ ignored: a write error naming the file and the reason"

# SIGXFSZ at its default action (it kills), whatever the caller left: a
# shell cannot reset a signal ignored on entry, so env does where it can.
limited() { (ulimit -f 100 && exec "$@"); }
default_xfsz=()
if env --default-signal=XFSZ true 2>/dev/null; then
  default_xfsz=(env --default-signal=XFSZ)
else
  trap - XFSZ
fi
ign=$("${default_xfsz[@]}" sed -n 's/^SigIgn:\s*//p' /proc/self/status 2>/dev/null)
if [ -n "$ign" ] && (( (16#$ign >> 24) & 1 )); then
  echo "SIGXFSZ at its default action: not checked (it is ignored here, and env cannot reset it: coreutils 8.31 or later can)"
else
  before=$failures
  refused "$work" "File too large" "limited ${default_xfsz[*]}" sweep --data "$data" --grid grid.txt
  [ "$failures" -eq "$before" ] && echo "ok: a file-size limit, SIGXFSZ at its default action: a write error, not a death"
fi

# stdout on a full device: every command that writes to stdout says so,
# naming stdout and the reason, exit 2 (split and walkforward once exited 2
# saying nothing, run and features without the reason).
if [ -c /dev/full ]; then
  before=$failures
  month=$fixtures/data/BTCUSDT-1m-2019-01.csv.gz
  printf 'ema_fast = 12, 24\n' > small.grid
  while IFS= read -r cmd; do
    read -r -a args <<< "$cmd"
    "$sebt" "${args[@]}" > /dev/full 2>err.txt
    rc=$?
    [ "$rc" -eq 2 ] || fail "$cmd > /dev/full: exit $rc, not 2: $(head -c 300 err.txt)"
    grep -q "error: writing stdout failed: No space left on device" err.txt ||
      fail "$cmd > /dev/full does not name stdout and the reason: $(head -c 300 err.txt)"
  done <<EOF2
run --data $data
run --data $data --format csv
features --data $data
sweep --data $data --grid small.grid
split --data $month --grid small.grid --split 2019-01-20
split --data $month --grid small.grid --split 2019-01-20 --format text
walkforward --data $month --grid small.grid --train 20000 --test 5000
backends
backends --format json
completion bash
EOF2
  [ "$failures" -eq "$before" ] && echo "ok: stdout on a full device names stdout and the reason, exit 2"
else
  echo "stdout on a full device: not checked (no /dev/full)"
fi

# A full file system: a small tmpfs where one can be mounted (root); else
# the limit above stands in for it.
mkdir full
if mount -t tmpfs -o size=256k sebt_test_full "$work/full" 2>/dev/null; then
  mounted=$work/full
  before=$failures
  refused "$work/full" "No space left on device" "" sweep --data "$data" --grid grid.txt
  [ "$failures" -eq "$before" ] && echo "ok: a full file system is a write error naming the file and the reason"
else
  echo "a full file system: not checked (no tmpfs can be mounted here); the file-size limit stands in for it"
fi

[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
