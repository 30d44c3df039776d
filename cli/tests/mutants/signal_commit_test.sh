#!/usr/bin/env bash
# A signal that arrives just after the output was renamed into place (made
# certain by sebt_mutants: SEBT_TEST_FAULT=sigterm_after_rename raises it
# there) no longer stops the run: the new file is complete, so sebt exits
# as the run would have without it (0), and 128+N keeps meaning "every
# previous file kept" (docs/decisions.md). Checked for run's --output
# (cli_close_output) and the sweep's --output and --shard, against the same
# commands on the real sebt.
#   signal_commit_test.sh SEBT_MUTANTS SEBT FIXTURES_DIR
set -u
mutants=$1 sebt=$2 fixtures=$3
data=$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv
work=$(mktemp -d /tmp/sebt_signal_commit_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export SEBT_CACHE_DIR=off   # the cache's own files would take the signal first
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
printf 'ema_fast = 12, 24\nvol_z = 1.5, 2.0\n' > g.grid

# landed FAULT WANT_FILE OUT -- ARGS...: the new file, complete, and exit 0.
landed() {
  local fault=$1 want=$2 out=$3
  shift 4
  echo old > "$out"
  SEBT_TEST_FAULT=$fault "$mutants" "$@" --output "$out" > /dev/null 2> err.txt
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$fault, $*: exit $rc, not 0, though the new file was in place: $(tail -2 err.txt)"
  elif ! cmp -s "$out" "$want"; then
    fail "$fault, $*: $out is not the new file"
  elif ls -A | grep -q '\.tmp-'; then
    fail "$fault, $*: a temporary file was left: $(ls -A)"
  else
    echo "ok: $fault, $*: exit 0, the new file complete"
  fi
}

"$sebt" run --data "$data" --output run.want 2> err.txt || { echo "FAIL: sebt run: $(cat err.txt)"; exit 1; }
"$sebt" sweep --data "$data" --grid g.grid --output sweep.want 2> err.txt || { echo "FAIL: sebt sweep: $(cat err.txt)"; exit 1; }
"$sebt" sweep --data "$data" --grid g.grid --shard 1/2 --seed 7 --output shard.want 2> err.txt ||
  { echo "FAIL: sebt sweep --shard: $(cat err.txt)"; exit 1; }
landed sigterm_after_rename run.want run.csv -- run --data "$data"
landed sigterm_after_rename sweep.want sweep.csv -- sweep --data "$data" --grid g.grid
landed sigterm_after_rename shard.want shard.csv -- sweep --data "$data" --grid g.grid --shard 1/2 --seed 7
# SIGINT, unless this shell was started with it ignored (then sebt keeps
# ignoring it, and the case would prove nothing).
if (( ($(awk '/^SigIgn:/ { print "0x" $2 }' /proc/$$/status) >> 1) & 1 )); then
  echo "note: SIGINT is ignored here: its case is not run"
else
  landed sigint_after_rename run.want run.csv -- run --data "$data"
  landed sigint_after_rename sweep.want sweep.csv -- sweep --data "$data" --grid g.grid
fi
# Before the output is put in place, the signal stops the run: a --trades
# file renamed mid-sweep takes it (written while the run goes on, it does
# not start the landing), exit 143, the previous --output kept, no
# temporary file. This also shows the hook raises the signal at all.
echo old > sweep.csv
SEBT_TEST_FAULT=sigterm_after_rename "$mutants" sweep --data "$data" --grid g.grid --trades tr \
  --output sweep.csv > /dev/null 2> err.txt
rc=$?
if [ "$rc" -ne 143 ] || [ "$(cat sweep.csv)" != old ]; then
  fail "a SIGTERM after a --trades file, before the output: exit $rc (want 143), sweep.csv: $(head -c 40 sweep.csv)"
elif ls -A | grep -q '\.tmp-'; then
  fail "a SIGTERM before the output's commit left a temporary file: $(ls -A)"
else
  echo "ok: a SIGTERM after a --trades file, before the output: exit 143, the previous file kept"
fi
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "a signal after the commit leaves the new file and exit 0; before it, the old file and 128+N"
