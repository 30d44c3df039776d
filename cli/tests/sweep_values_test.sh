#!/usr/bin/env bash
# A sweep's values, as the streamed writer writes them (shortest numbers),
# read back bit for bit equal to the recorded values (the digests in
# sweep_values.digests), in CSV, JSON and npy; and the bytes are the
# same whatever the thread count, split into merged shards, killed and
# resumed from a checkpoint, or on 3 MPI ranks.
#   sweep_values_test.sh small|big|mpi SEBT VALUES_DIGEST SOURCE_ROOT MPI_MODULE_BUILT SANITIZED
# small: 10^3 and 10^5 combos; big: 967,680 combos, CSV and npy (label
# slow; skipped, exit 77, in a sanitized build, where it would take
# minutes); mpi: 10^5
# combos on 3 ranks (exit 77 without MPI).
set -u
mode=$1 sebt=$2 digest=$3 root=$4 mpi_built=${5:-OFF} sanitized=${6:-OFF}
data=$root/fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
grids=$root/bench/grids
expected=$root/cli/tests/sweep_values.digests
work=$(mktemp -d /tmp/sebt_sweep_values_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
same() { if cmp -s "$1" "$2"; then pass "$3"; else fail "$3 ($1 differs from $2)"; fi; }
want() { grep "^$1 " "$expected" | cut -d' ' -f2-; }
check_values() {  # grid file label
  local got
  got=$("$digest" "$2") || { fail "$3: $2 does not read back"; return; }
  if [ "$got" = "$(want "$1")" ]; then pass "$3: values read back bit for bit ($got)"
  else fail "$3: values differ from the pre-streaming output: got '$got', expected '$(want "$1")'"; fi
}
# A fixed verification sample (seed and size), so that the npy files'
# verification notes, and so their bytes, are the same whatever the threads.
sweep() { "$sebt" sweep --data "$data" --verify 2 --seed 7 "$@"; }

values_and_threads() {  # grid [csv-npy]
  local g=$1 formats=${2:-all}
  sweep --grid "$grids/$g.grid" --threads 2 --output "$g.csv" || fail "$g: sweep"
  check_values "$g" "$g.csv" "$g CSV"
  if [ "$formats" = all ]; then
    sweep --grid "$grids/$g.grid" --threads 2 --format json --output "$g.json" || fail "$g: json sweep"
    check_values "$g" "$g.json" "$g JSON"
  fi
  SEBT_SWEEP_STATS=1 sweep --grid "$grids/$g.grid" --threads 1 --output "$g.t1.csv" 2> t1.err ||
    fail "$g: 1-thread sweep"
  same "$g.t1.csv" "$g.csv" "$g: 1 thread writes the bytes of 2"
  # Both ways of formatting CSV rows ran (core/sweep.c, team_format):
  # by the backtests' threads when they take every core (the default), by
  # the writer thread beside them when a core is spare.
  SEBT_SWEEP_STATS=1 sweep --grid "$grids/$g.grid" --output "$g.all.csv" 2> all.err || fail "$g: sweep on every core"
  same "$g.all.csv" "$g.csv" "$g: every core writes the bytes of 2 threads"
  # Without OpenMP there is one thread, and the writer formats the rows.
  if "$sebt" --version | grep -q '^OpenMP: *no'; then
    grep -q "rows formatted by the writer thread" all.err ||
      fail "$g: without OpenMP the writer thread did not format the rows: $(grep stats all.err)"
  else
    grep -q "rows formatted by the backtests' threads" all.err ||
      fail "$g: on every core the backtests' threads did not format the rows: $(grep stats all.err)"
  fi
  if [ "$(nproc)" -gt 1 ]; then
    grep -q "rows formatted by the writer thread" t1.err ||
      fail "$g: with a core spare the writer did not format the rows: $(grep stats t1.err)"
  fi
  # More than a window (65,536 combos) of rows went past the page cache
  # (sebt_outfile_direct), where this file system takes direct I/O; fewer
  # did not. The bytes compared above and below are those files'.
  if dd if=/dev/zero of=direct.probe bs=4096 count=1 oflag=direct 2>/dev/null; then
    if [ "$g" = stream-1000 ]; then
      ! grep -q "past the page cache" all.err || fail "$g: 1,000 rows went past the page cache"
    else
      grep -q "written past the page cache" all.err ||
        fail "$g: a sweep of more than a window was not written past the page cache: $(grep stats all.err)"
      grep -q "written past the page cache" t1.err ||
        fail "$g: with the writer formatting, not written past the page cache: $(grep stats t1.err)"
    fi
  fi
  sweep --grid "$grids/$g.grid" --threads 2 --format npy --output "$g.npy" || fail "$g: npy sweep"
  check_values "$g" "$g.npy" "$g npy"
  if [ "$formats" = all ]; then
    sweep --grid "$grids/$g.grid" --threads 1 --format npy --output "$g.t1.npy" || fail "$g: 1-thread npy sweep"
    same "$g.t1.npy" "$g.npy" "$g: npy, 1 thread writes the bytes of 2"
  fi
}

case $mode in
small)
  values_and_threads stream-1000
  values_and_threads cheap-100000
  g=cheap-100000
  sweep --grid "$grids/$g.grid" --threads 3 --output "$g.t3.csv" || fail "3-thread sweep"
  same "$g.t3.csv" "$g.csv" "$g: 3 threads write the bytes of 2"
  sweep --grid "$grids/$g.grid" --threads 3 --format npy --output "$g.t3.npy" || fail "3-thread npy sweep"
  same "$g.t3.npy" "$g.npy" "$g: npy, 3 threads write the bytes of 2"
  for i in 1 2 3; do sweep --grid "$grids/$g.grid" --shard "$i/3" --output "s$i.shard" || fail "shard $i/3"; done
  "$sebt" merge s2.shard s3.shard s1.shard --output merged.csv || fail "merge"
  same merged.csv "$g.csv" "$g: 3 shards merged write the bytes of the whole sweep"
  SEBT_TEST_KILL_AFTER_CHUNKS=2 sweep --grid "$grids/$g.grid" --checkpoint ck --chunk 20000 --output ck.csv 2>/dev/null
  rc=$?
  [ "$rc" -eq 137 ] || fail "the hooked sweep exited $rc, expected 137 (SIGKILL)"
  [ ! -e ck.csv ] || fail "a killed sweep left ck.csv behind"
  sweep --grid "$grids/$g.grid" --checkpoint ck --chunk 20000 --output ck.csv || fail "resume"
  same ck.csv "$g.csv" "$g: killed after 2 chunks and resumed, the bytes of the whole sweep"
  ;;
big)
  if [ "$sanitized" = ON ]; then
    echo "SKIP: 967,680 combos under ASan+UBSan take minutes; the plain build runs this"
    exit 77
  fi
  # The values in CSV and npy, and the CSV's bytes on 1, 2 and every
  # thread (each way of formatting rows), at 967,680 combos. What the
  # writers' bytes do not owe to the size (JSON, which formats the numbers
  # as CSV does; npy on 1 thread; shards merged) is small's, at 10^5.
  values_and_threads big-967680 csv-npy
  ;;
mpi)
  if [ "$mpi_built" != ON ] || ! command -v mpirun >/dev/null; then
    echo "SKIP: no MPI here (module built: $mpi_built, mpirun: $(command -v mpirun || echo none))"
    exit 77
  fi
  mpirun=(mpirun --oversubscribe)
  [ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
  g=cheap-100000
  sweep --grid "$grids/$g.grid" --output "$g.csv" || fail "sweep"
  check_values "$g" "$g.csv" "$g CSV"
  timeout 300 "${mpirun[@]}" -np 3 "$sebt" sweep --data "$data" --grid "$grids/$g.grid" --threads 1 --output mpi3.csv ||
    fail "mpirun -np 3"
  same mpi3.csv "$g.csv" "$g: mpirun -np 3 writes the bytes of one process"
  ;;
*) echo "usage: $0 small|big|mpi ..."; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all passed"
