#!/usr/bin/env bash
# `sebt sweep` spanning processes: shards + merge, checkpoint + resume after
# SIGKILL, and MPI ranks. Every check compares bytes with the plain
# single-process sweep, which the Criterion suites check against the
# reference and hand-worked values; here the point is that splitting the
# work never changes a byte.
#   sweep_dist_test.sh shard|checkpoint|mpi SEBT FIXTURES MPI_MODULE_BUILT
# Exit 77 (ctest: skipped) when the MPI part cannot run here.
set -u
mode=$1 sebt=$2 fixtures=$3 mpi_built=${4:-OFF}
data=$fixtures/data/BTCUSDT-1m-2019-01.csv.gz
other_data=$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv
work=$(mktemp -d /tmp/sebt_sweep_dist_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# expect_error CODE PATTERN CMD...: CMD exits with CODE and says PATTERN on stderr.
expect_error() {
  local code=$1 pattern=$2; shift 2
  "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$* exited $rc, expected $code: $(cat err.txt)"; return; fi
  if ! grep -q -- "$pattern" err.txt; then fail "$*: stderr lacks '$pattern': $(cat err.txt)"; return; fi
  pass "refused ($code): $(head -c 160 err.txt | head -1)"
}
# resign IN OUT: OUT is IN with its checksum line made right again (FNV-1a
# 64 of every byte before it, worked out here independently of sebt), so a
# test can reach the checks behind the checksum.
resign() {
  local h=$((0xcbf29ce484222325)) b
  for b in $(head -n -1 "$1" | od -An -v -tu1); do h=$(( (h ^ b) * 0x100000001b3 )); done
  { head -n -1 "$1"; printf '# sebt-shard-end fnv1a64=%016x\n' "$h"; } > "$2"
}
rows_of() { echo $(($(wc -l < "$1") - 3)); }   # header, CSV header, checksum line
same() { if cmp -s "$1" "$2"; then pass "$3"; else fail "$3 ($1 differs from $2)"; fi; }

# 96 combos in 16 indicator groups of 6 (ema_fast x ema_slow x z_window).
cat > grid.txt <<'G'
ema_fast = 24:96:24
ema_slow = 200, 400
z_window = 96, 192
vol_z = 1.5, 2.0
reward_r = 1.5, 2, 3
G
"$sebt" sweep --data "$data" --grid grid.txt --output whole.csv || { echo "FAIL: plain sweep"; exit 1; }
# The whole-sweep writer (merge, checkpoints, ranks) writes no verification
# object: compared with a streamed sweep run without one.
"$sebt" sweep --data "$data" --grid grid.txt --format json --top 7 --by total_pnl --no-verify --output whole_top.json ||
  { echo "FAIL: plain sweep --top"; exit 1; }
[ "$(wc -l < whole.csv)" -eq 97 ] || fail "whole.csv has $(wc -l < whole.csv) lines, expected 97"

case $mode in
shard)
  for i in 1 2 3 4; do "$sebt" sweep --data "$data" --grid grid.txt --shard "$i/4" --output "s$i.shard" || fail "shard $i/4"; done
  total=0
  for i in 1 2 3 4; do
    rows=$(rows_of "s$i.shard"); total=$((total + rows))
    [ "$rows" -gt 0 ] || fail "shard $i/4 is empty: the partition does not spread the work"
  done
  [ "$total" -eq 96 ] || fail "the 4 shards hold $total rows, expected 96"
  # Each shard proves its own rows and records it; merge reads every row
  # of its file back and says what the output rests on.
  for i in 1 2 3 4; do
    head -1 "s$i.shard" | grep -q " verified=1/$(rows_of "s$i.shard") seed=0x" ||
      fail "shard $i/4's header records no proof of its $(rows_of "s$i.shard") rows: $(head -1 "s$i.shard")"
  done
  "$sebt" merge s1.shard s2.shard s3.shard s4.shard --output proven.csv 2> merge.err || fail "merge: $(cat merge.err)"
  grep -q "verified: each of the 4 shards re-checked its best combo and a sample against the reference before it was written (4 best, 96 sampled in all); every row read back from proven.csv equals its shard's row" merge.err ||
    fail "merge does not say what its output rests on: $(cat merge.err)"
  "$sebt" sweep --data "$data" --grid grid.txt --shard 3/4 --no-verify --output u3.shard 2>/dev/null
  head -1 u3.shard | grep -q ' verified=no seed=0$' || fail "an unverified shard is not marked: $(head -1 u3.shard)"
  "$sebt" merge s1.shard s2.shard u3.shard s4.shard --output unproven.csv 2> merge.err || fail "merge: $(cat merge.err)"
  grep -q "not verified: shard 3/4 (u3.shard) ran with --no-verify" merge.err ||
    fail "merge of an unverified shard does not say so: $(cat merge.err)"
  same unproven.csv whole.csv "a shard run with --no-verify merges to the same bytes"
  # One indicator group larger than a shard's share is cut across shards.
  printf 'vol_z = 1.0, 1.5, 2.0\ntr_z = 0.5, 1.0, 1.5\nreward_r = 1, 2, 3, 4\n' > onegroup.txt
  "$sebt" sweep --data "$data" --grid onegroup.txt --output onegroup.csv
  for i in 1 2 3; do "$sebt" sweep --data "$data" --grid onegroup.txt --shard "$i/3" --output "g$i.shard"; done
  for i in 1 2 3; do [ "$(rows_of "g$i.shard")" -eq 12 ] || fail "one-group shard $i/3 holds $(rows_of "g$i.shard") rows, expected 12"; done
  "$sebt" merge g2.shard g3.shard g1.shard --output g.csv
  same g.csv onegroup.csv "a single 36-combo group cut in 3 shards merges to the whole sweep"
  "$sebt" merge s3.shard s1.shard s4.shard s2.shard --output merged.csv || fail "merge"
  same merged.csv whole.csv "merge of 4 shards (given out of order) equals the whole sweep"
  for i in 1 2 3 4 5; do
    "$sebt" sweep --data "$data" --grid grid.txt --format json --top 7 --by total_pnl --shard "$i/5" --output "t$i.shard" || fail "json shard $i/5"
  done
  "$sebt" merge t*.shard > merged_top.json || fail "merge to stdout"
  same merged_top.json whole_top.json "merge of 5 shards with --format json --top 7 --by total_pnl equals the whole sweep"
  # One shard of one: the whole sweep again.
  "$sebt" sweep --data "$data" --grid grid.txt --shard 1/1 --output one.shard && "$sebt" merge one.shard --output one.csv
  same one.csv whole.csv "shard 1/1 merged equals the whole sweep"

  expect_error 2 "numbered 1 to 4" "$sebt" sweep --data "$data" --grid grid.txt --shard 5/4
  expect_error 2 "expected I/N" "$sebt" sweep --data "$data" --grid grid.txt --shard 0/4
  expect_error 2 "missing: 3" "$sebt" merge s1.shard s2.shard s4.shard
  expect_error 2 "given twice" "$sebt" merge s1.shard s2.shard s2.shard s3.shard s4.shard
  "$sebt" sweep --data "$other_data" --grid grid.txt --shard 2/4 --output other_data.shard 2>/dev/null
  expect_error 2 "their data" "$sebt" merge s1.shard other_data.shard s3.shard s4.shard
  sed 's/^reward_r.*/reward_r = 1.5, 2, 4/' grid.txt > grid2.txt
  "$sebt" sweep --data "$data" --grid grid2.txt --shard 2/4 --output other_grid.shard
  expect_error 2 "their grid" "$sebt" merge s1.shard other_grid.shard s3.shard s4.shard
  sed '1s/version=[^ ]*/version=0.0.1/' s2.shard > old0.shard && resign old0.shard old.shard
  expect_error 2 "version of sebt" "$sebt" merge s1.shard old.shard s3.shard s4.shard
  expect_error 2 "different sweeps" "$sebt" merge s1.shard t2.shard s3.shard s4.shard
  # The checksum (shard format 2 on): one changed character anywhere, a cut, a
  # lost checksum line, an old format; each named by its file.
  head -n -2 s2.shard > cut0.shard && resign cut0.shard cut.shard
  expect_error 2 "incomplete" "$sebt" merge s1.shard cut.shard s3.shard s4.shard
  head -n -1 s2.shard > nosum.shard
  expect_error 2 "nosum.shard is cut short or damaged" "$sebt" merge s1.shard nosum.shard s3.shard s4.shard
  head -c -30 s2.shard > chopped.shard
  expect_error 2 "chopped.shard is cut short or damaged" "$sebt" merge s1.shard chopped.shard s3.shard s4.shard
  # A Sharpe of 0.5 made 8.5 by one character: the failure the campaign saw.
  awk -F, 'NR == 3 { $NF = $NF "7" } { print }' OFS=, s2.shard > flipped.shard
  expect_error 2 "flipped.shard is damaged: its bytes hash to" "$sebt" merge s1.shard flipped.shard s3.shard s4.shard
  sed '1s/^# sebt-shard 3 /# sebt-shard 1 /' s2.shard > format1.shard
  expect_error 2 "format1.shard is a shard file of format .1." "$sebt" merge s1.shard format1.shard s3.shard s4.shard
  sed '1s/^# sebt-shard 3 /# sebt-shard 2 /; 1s/ verified=.*//' s2.shard > format2.shard
  expect_error 2 "format 2 recorded no proof" "$sebt" merge s1.shard format2.shard s3.shard s4.shard
  sed '1s/ verified=[^ ]*/ verified=x/' s2.shard > badproof0.shard && resign badproof0.shard badproof.shard
  expect_error 2 "damaged shard header" "$sebt" merge s1.shard badproof.shard s3.shard s4.shard
  resign s2.shard s2again.shard
  same s2again.shard s2.shard "the test's own checksum equals the one sebt writes"
  sed '3s/^\([0-9]*\),24,/\1,25,/' s2.shard > edited0.shard && resign edited0.shard edited.shard
  expect_error 2 "edited or damaged" "$sebt" merge s1.shard edited.shard s3.shard s4.shard
  expect_error 2 "not a shard file" "$sebt" merge whole.csv
  ;;

checkpoint)
  # Killed by SIGKILL after its 3rd chunk (a test hook, so the kill lands
  # mid-sweep on any machine): no output, chunks on disk; then resumed.
  SEBT_TEST_KILL_AFTER_CHUNKS=3 "$sebt" sweep --data "$data" --grid grid.txt --checkpoint ck --chunk 10 --output ck.csv
  rc=$?
  [ "$rc" -eq 137 ] || fail "the hooked sweep exited $rc, expected 137 (SIGKILL)"
  [ ! -e ck.csv ] && pass "no output file after the kill" || fail "an output file exists after the kill"
  n=$(ls ck/chunk-*.sebt 2>/dev/null | wc -l)
  [ "$n" -eq 3 ] && pass "3 chunks on disk after the kill" || fail "$n chunks on disk, expected 3"
  "$sebt" sweep --data "$data" --grid grid.txt --checkpoint ck --chunk 10 --output ck.csv || fail "resume"
  same ck.csv whole.csv "resumed sweep equals the uninterrupted one"
  n2=$(ls ck/chunk-*.sebt | wc -l)
  [ "$n2" -gt 3 ] && [ "$n2" -lt 12 ] && pass "resume computed only the missing chunks ($n2 in all)" ||
    fail "$n2 chunks after the resume"
  # A finished checkpoint answers at once, in another format too.
  "$sebt" sweep --data "$data" --grid grid.txt --checkpoint ck --format json --top 7 --by total_pnl --output ck.json
  same ck.json whole_top.json "a complete checkpoint rewrites the output without recomputing"

  # SIGKILL from outside, mid-sweep: the sweep stops itself after its 2nd
  # chunk (a test hook), so the kill lands there on a machine of any speed.
  # It writes its pid to a FIFO first: the kill waits for that line, not on
  # a poll (a sweep that ends without it closes nothing here, so the read
  # is bounded far past the sweep's work, and the exit code below fails).
  head -4 grid.txt > small.txt
  "$sebt" sweep --data "$data" --grid small.txt --backend reference --threads 1 --output small_whole.csv
  mkfifo stopped.fifo
  exec 3<> stopped.fifo   # read and write: opening never blocks
  SEBT_TEST_STOP_AFTER_CHUNKS=2 SEBT_TEST_STOPPED_FIFO=stopped.fifo "$sebt" sweep --data "$data" --grid small.txt \
    --backend reference --threads 1 --checkpoint ck2 --chunk 2 --output small.csv &
  pid=$!
  said=""
  read -r -t 300 said <&3
  exec 3<&-
  [ "$said" = "$pid" ] || fail "the sweep did not say it stopped after its 2nd chunk (read '$said', pid $pid)"
  kill -9 "$pid" 2>/dev/null
  wait "$pid"; rc=$?
  [ "$rc" -eq 137 ] && pass "killed from outside mid-sweep" || fail "the stopped sweep exited $rc, expected 137 (SIGKILL)"
  [ ! -e small.csv ] || fail "output exists after the outside kill"
  n=$(ls ck2/chunk-*.sebt 2>/dev/null | wc -l)
  [ "$n" -eq 2 ] && pass "2 chunks on disk after the outside kill" || fail "$n chunks on disk, expected 2"
  "$sebt" sweep --data "$data" --grid small.txt --backend reference --threads 1 --checkpoint ck2 --chunk 2 --output small.csv
  same small.csv small_whole.csv "resumed after the outside SIGKILL equals the uninterrupted sweep"

  expect_error 2 "other data" "$sebt" sweep --data "$other_data" --grid grid.txt --checkpoint ck --output x.csv
  expect_error 2 "another grid" "$sebt" sweep --data "$data" --grid small.txt --checkpoint ck --output x.csv
  expect_error 2 "another backend" "$sebt" sweep --data "$data" --grid grid.txt --backend reference --checkpoint ck --output x.csv
  # Another version: the version field rewritten and the checksum made right again.
  mkdir ck3 && cp "$(ls ck/chunk-*.sebt | head -1)" ck3/chunk-0-1-0-0-0.sebt
  python3 - ck3/chunk-0-1-0-0-0.sebt <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[16:32] = b'0.0.1'.ljust(16, b'\0')
h = 0xcbf29ce484222325
for x in b[:-8]:
    h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
b[-8:] = h.to_bytes(8, 'little')
open(p, 'wb').write(b)
PY
  expect_error 2 "another version of sebt" "$sebt" sweep --data "$data" --grid grid.txt --checkpoint ck3 --output x.csv
  mkdir ck4 && cp "$(ls ck/chunk-*.sebt | head -1)" ck4/chunk-0-1-0-0-0.sebt
  printf '\x07' | dd of=ck4/chunk-0-1-0-0-0.sebt bs=1 seek=200 conv=notrunc 2>/dev/null
  expect_error 2 "damaged" "$sebt" sweep --data "$data" --grid grid.txt --checkpoint ck4 --output x.csv
  [ ! -e x.csv ] || fail "a refused run left an output file"
  ;;

mpi)
  if [ "$mpi_built" != ON ] || ! command -v mpirun >/dev/null; then
    echo "SKIP: no MPI here (module built: $mpi_built, mpirun: $(command -v mpirun || echo none))"
    exit 77
  fi
  mpirun=(mpirun --oversubscribe)
  [ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
  run() { timeout 300 "${mpirun[@]}" "$@"; }
  run -np 3 "$sebt" sweep --data "$data" --grid grid.txt --output mpi3.csv || fail "mpirun -np 3 sweep"
  same mpi3.csv whole.csv "mpirun -np 3 sweep equals the single-process sweep"
  printf 'vol_z = 1.0, 1.5, 2.0\ntr_z = 0.5, 1.0, 1.5\nreward_r = 1, 2, 3, 4\n' > onegroup.txt
  "$sebt" sweep --data "$data" --grid onegroup.txt --output onegroup.csv
  run -np 3 "$sebt" sweep --data "$data" --grid onegroup.txt --output mpi_onegroup.csv
  same mpi_onegroup.csv onegroup.csv "one indicator group cut across 3 ranks equals the single-process sweep"
  run -np 2 "$sebt" sweep --data "$data" --grid grid.txt --format json --top 7 --by total_pnl --output mpi2.json
  same mpi2.json whole_top.json "mpirun -np 2 --format json --top 7 equals the single-process sweep"
  "$sebt" sweep --data "$data" --grid grid.txt --shard 2/3 --seed 5 --output plain.shard
  run -np 2 "$sebt" sweep --data "$data" --grid grid.txt --shard 2/3 --seed 5 --output mpi.shard
  same mpi.shard plain.shard "shard 2/3 on 2 ranks equals shard 2/3 on one process"

  # One rank per GPU: the node-local rank picks BACKTEST_GPU_ID unless set.
  SEBT_SWEEP_STATS=1 run -np 2 -x SEBT_SWEEP_STATS "$sebt" sweep --data "$data" --grid grid.txt --output g.csv 2>err.txt
  grep -q "rank 0: .*gpu 0).*rank 1: .*gpu 1)" err.txt && pass "ranks 0 and 1 of a node take GPUs 0 and 1" ||
    fail "GPU per local rank: $(cat err.txt)"
  SEBT_SWEEP_STATS=1 BACKTEST_GPU_ID=5 run -np 2 -x SEBT_SWEEP_STATS -x BACKTEST_GPU_ID "$sebt" sweep --data "$data" \
    --grid grid.txt --output g.csv 2>err.txt
  grep -q "rank 0: .*gpu 5).*rank 1: .*gpu 5)" err.txt && pass "a BACKTEST_GPU_ID the user set is kept" ||
    fail "BACKTEST_GPU_ID=5: $(cat err.txt)"
  # A rank that fails: the job ends, names the rank, leaves no output.
  SEBT_TEST_FAIL_RANK=1 run -np 3 -x SEBT_TEST_FAIL_RANK "$sebt" sweep --data "$data" --grid grid.txt --output fail.csv >out.txt 2>err.txt
  rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && pass "a failing rank ends the job (exit $rc)" || fail "failing rank: exit $rc (124: hang)"
  grep -q "rank 1 of 3.*failing on purpose" err.txt && pass "the message names the rank" || fail "no rank in: $(cat err.txt)"
  [ ! -e fail.csv ] || fail "an output file exists after a rank failed"
  ls .fail.csv.tmp* fail.csv.tmp* >/dev/null 2>&1 && fail "a temporary output file was left"
  # A rank killed outright, with a checkpoint: the job ends; a rerun on
  # another rank count resumes to the same bytes.
  SEBT_TEST_KILL_RANK=1 run -np 2 -x SEBT_TEST_KILL_RANK "$sebt" sweep --data "$data" --grid grid.txt --checkpoint mck --chunk 12 --output mck.csv >out.txt 2>err.txt
  rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && pass "a killed rank ends the job (exit $rc)" || fail "killed rank: exit $rc (124: hang)"
  [ ! -e mck.csv ] || fail "an output file exists after a rank was killed"
  run -np 3 "$sebt" sweep --data "$data" --grid grid.txt --checkpoint mck --chunk 12 --output mck.csv || fail "resume on 3 ranks"
  same mck.csv whole.csv "checkpoint of a killed 2-rank job resumed on 3 ranks equals the single-process sweep"
  # Fuzzing on ranks: each rank its own stream, --iterations shared out,
  # the summary counts all (budgeted in cases: a count per rank is certain).
  jnum() { sed -n "s/^ *\"$1\":\([0-9]*\),*$/\1/p" "$2" | head -1; }
  run -np 2 "$sebt" fuzz --backend fast_cpu --iterations 101 --big-share 0 --no-save --format json > fzi.json 2>/dev/null
  grep -q '"cases_per_rank":\[51,50\]' fzi.json && [ "$(jnum cases fzi.json)" -eq 101 ] &&
    pass "--iterations 101 on 2 ranks: 51 + 50 cases" || fail "--iterations 101 on 2 ranks: $(grep cases fzi.json)"
  # A planted bug: found, shrunk and saved once, reported once; its stream
  # replays on one process to the same case.
  run -np 3 "$sebt" fuzz --backend mutant:max_hold --iterations 300 --big-share 0 --save fzsave --format json > fzm.json 2>/dev/null
  rc=$?
  [ "$rc" -eq 1 ] || fail "fuzz of a mutant on 3 ranks: exit $rc, expected 1"
  grep -q '"found":true' fzm.json || fail "fuzz of a mutant on 3 ranks found nothing"
  [ "$(ls fzsave | wc -l)" -eq 1 ] && pass "one reproducer saved ($(ls fzsave))" || fail "$(ls fzsave | wc -l) reproducers saved"
  [ "$(grep -c '"found_by_rank"' fzm.json)" -eq 1 ] || fail "the divergence is not reported exactly once"
  stream=$(jnum found_in_stream fzm.json); case_no=$(jnum case fzm.json)
  "$sebt" fuzz --backend mutant:max_hold --stream "$stream" --iterations $((case_no + 1)) --big-share 0 --no-save \
    --format json > fz1.json
  [ "$(jnum case fz1.json)" = "$case_no" ] && grep -q '"found":true' fz1.json &&
    pass "stream $stream replays on one process to case $case_no" ||
    fail "one process on stream $stream did not find case $case_no: $(grep -E 'found|case' fz1.json)"
  # An error every rank meets is printed once.
  run -np 3 "$sebt" sweep --data missing.csv --grid grid.txt >out.txt 2>err.txt
  rc=$?
  [ "$rc" -eq 2 ] && pass "bad input under mpirun exits 2" || fail "bad input under mpirun: exit $rc"
  [ "$(grep -c 'missing.csv' err.txt)" -eq 1 ] && pass "its message is printed once" ||
    fail "message printed $(grep -c 'missing.csv' err.txt) times"
  ;;
*) echo "usage: $0 shard|checkpoint|mpi SEBT FIXTURES MPI_BUILT"; exit 2 ;;
esac
if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all $mode checks passed"
