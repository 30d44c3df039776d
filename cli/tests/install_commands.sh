#!/usr/bin/env bash
# With the build folder deleted and the prefix moved (install_prefix.sh),
# the installed sebt runs every command: run, sweep (and under mpirun when
# the MPI module is installed), parity, fuzz, validate (fast_cpu; cuda by
# host execution through parity and fuzz) and report. Nothing from the environment points it
# anywhere: it finds its modules and files relative to itself.
# Usage: install_commands.sh WORK_DIR
set -u
work=$1
p=$work/prefix
sebt=$p/bin/sebt
fail() { echo "FAIL: $*"; exit 1; }
[[ -x $sebt ]] || fail "no installed sebt under $p (the install_prefix test sets it up)"
[[ ! -e $work/src/build ]] || fail "the build folder is still there"
unset SEBT_CUDA_LIBRARY SEBT_MPI_LIBRARY SEBT_SHARE_DIR SEBT_BENCH_BINARY SEBT_BINARY SEBT_FIXTURES_DIR \
  SEBT_GNUPLOT XDG_STATE_HOME
export HOME=$work/home OMP_NUM_THREADS=2
run_dir=$work/run
rm -rf "$run_dir" && mkdir -p "$run_dir" && cd "$run_dir" || exit 1
data=$p/share/sebt/fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv
[[ -f $data ]] || fail "the bundled data is not installed"
step() { echo "== $*"; }

step version
"$sebt" --version || fail "sebt --version"

step run
"$sebt" run --data "$data" --format json >run.json || fail "sebt run"
grep -q '"sharpe"' run.json || fail "sebt run printed no metrics"

step sweep
printf 'ema_fast = 12, 24, 48\nreward_r = 1.5, 2\n' >grid.txt
"$sebt" sweep --data "$data" --grid grid.txt --threads 2 >sweep.csv || fail "sebt sweep"
[[ $(wc -l <sweep.csv) == 7 ]] || fail "sweep wrote $(wc -l <sweep.csv) lines, want a header and 6 combos"

if [[ -f $p/lib/sebt/libsebt_mpi.so ]] && command -v mpirun >/dev/null; then
  step "mpirun sweep"
  mpirun --allow-run-as-root --oversubscribe -np 2 -x HOME -x OMP_NUM_THREADS=1 \
    "$sebt" sweep --data "$data" --grid grid.txt --output sweep-mpi.csv >mpi.log 2>&1 \
    || { cat mpi.log; fail "mpirun sebt sweep"; }
  cmp sweep.csv sweep-mpi.csv || fail "the sweep under mpirun differs from the one-process sweep"
  grep -qi "error" mpi.log && { cat mpi.log; fail "mpirun sweep said error"; }
else
  echo "== mpirun sweep: skipped (no MPI module installed or no mpirun)"
fi

step parity
"$sebt" parity --backend fast_cpu --data "$data" >parity.txt 2>&1 || { cat parity.txt; fail "sebt parity"; }
grep -q 'result: pass' parity.txt || { cat parity.txt; fail "parity did not pass"; }

step fuzz
"$sebt" fuzz --backend fast_cpu --iterations 30 --big-share 0 --no-save >fuzz.txt 2>&1 \
  || { cat fuzz.txt; fail "sebt fuzz"; }

step validate
"$sebt" validate --backend fast_cpu --cases 30 --data "$data" --no-speed --junit validate.xml >validate.txt 2>&1 \
  || { cat validate.txt; fail "sebt validate fast_cpu"; }
tail -3 validate.txt
# JUnit as CI systems expect it: when and where the suite ran.
grep -Eq '<testsuite [^>]*timestamp="20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"' validate.xml \
  || fail "validate.xml: no timestamp on the testsuite"
grep -q "<testsuite [^>]*hostname=\"$(hostname)\"" validate.xml || fail "validate.xml: no hostname on the testsuite"
# The installed host-execution module against the reference: parity on
# the bundled combos and 10 fuzz cases. The whole gate over it is CI's
# `validate cuda` step (from the build folder); the installed validate is
# the fast_cpu run above.
if [[ -f $p/lib/sebt/libsebt_cuda_host.so ]]; then
  step "parity and fuzz of cuda (host execution)"
  export SEBT_CUDA_LIBRARY=$p/lib/sebt/libsebt_cuda_host.so
  "$sebt" parity --backend cuda --data "$data" >parity-cuda.txt 2>&1 && grep -q 'result: pass' parity-cuda.txt \
    || { cat parity-cuda.txt; fail "sebt parity of cuda (host execution)"; }
  "$sebt" fuzz --backend cuda --iterations 10 --big-share 0 --no-save >fuzz-cuda.txt 2>&1 \
    || { cat fuzz-cuda.txt; fail "sebt fuzz of cuda (host execution)"; }
  grep -q 'host execution' <("$sebt" backends --backend cuda 2>&1) || fail "the installed cuda module is not host execution"
  unset SEBT_CUDA_LIBRARY
  tail -n 2 parity-cuda.txt fuzz-cuda.txt
fi

if [[ -x $p/lib/sebt/sebt_bench ]] && command -v gnuplot >/dev/null; then
  step "report --quick (a few benchmarks)"
  BENCHMARK_FILTER='^pair/' "$sebt" report --quick --out report --history history.csv >report.txt 2>&1 \
    || { cat report.txt; fail "sebt report"; }
  cat report.txt
  [[ -s report/index.html && -s history.csv ]] || fail "report wrote no index.html or history"
  grep -q '"sebt_git_commit"' report/bench.json || fail "the benchmark run names no commit"
else
  echo "== report: skipped (sebt_bench or gnuplot not installed)"
fi
if command -v gnuplot >/dev/null; then
  step "plot equity"
  "$sebt" plot equity --data "$data" --output equity.svg 2>plot.txt || { cat plot.txt; fail "sebt plot equity"; }
  grep -q "<svg" equity.svg || fail "sebt plot equity wrote no SVG"
fi

pkg=$(ls -d "$p"/lib/python3*/*-packages 2>/dev/null | head -1)
if [[ -n $pkg ]] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  step "python: import sebt from the moved prefix"
  PYTHONPATH=$pkg /usr/bin/python3 -W ignore -c '
import sys, sebt
assert sebt.library_path.startswith(sys.argv[1]), sebt.library_path
assert sebt.sebt_command() == sys.argv[1] + "/bin/sebt", sebt.sebt_command()
r = sebt.run(sys.argv[2])
print(r)' "$p" "$data" || fail "the installed Python package does not run from the moved prefix"
else
  echo "== python: skipped (no package installed, or no numpy)"
fi
echo ok
