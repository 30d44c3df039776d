#!/bin/bash
# Plants each single-line bug (and the shared-work, rolling-z
# and device-split bugs) in turn, in a scratch copy of the committed tree (never in this
# checkout), rebuilds sebt there and runs parity on the bundled data with
# the planted grid, then the release gate as an outside kernel author would
# (`sebt validate --time 10`: its summary line and first failure).
# usage: bench/plant_bugs.sh
set -uo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d /tmp/sebt_plant_XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
git -C "$src" archive HEAD | tar -x -C "$scratch" || { echo "cannot copy the tree"; exit 2; }
cd "$scratch" || exit 2
D=fixtures/data/BTCUSDT-15m-2017-2021.csv.gz
G=bench/grids/parity-planted.grid
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEBT_BUILD_CUDA=OFF -DSEBT_BUILD_MPI=OFF -DSEBT_BUILD_TESTS=OFF -DSEBT_BUILD_BENCH=OFF > build.log 2>&1
run() {
  name=$1
  cmake --build build -j2 --target sebt_cli >> build.log 2>&1 || { echo "$name: build failed"; return; }
  echo "== $name"
  echo "\$ sebt parity --data $D --grid $G --backend fast_cpu --threads 2"
  ./build/sebt parity --data $D --grid $G --backend fast_cpu --threads 2 > out.txt; rc=$?
  head -2 out.txt; grep -m3 -A6 "^combo\|diverg" out.txt | head -14; tail -1 out.txt; echo "exit $rc"
  echo "\$ sebt validate --backend fast_cpu --time 10 --no-speed"
  ./build/sebt validate --backend fast_cpu --time 10 --no-speed --save "$scratch/v" > v.txt 2>&1; rc=$?
  grep -m1 "^validate fast_cpu:" v.txt; grep -m3 -E "^(fail|crash) " v.txt; echo "exit $rc"
}
# cuda under host execution (the CUDA stand-in), where a bug in the
# out-of-device-memory split shows only on a small device: validate's fuzz
# draws device sizes per case (docs/validate.md).
run_cuda() {
  name=$1
  cmake --build build -j2 --target sebt_cli sebt_cuda_host >> build.log 2>&1 || { echo "$name: build failed"; return; }
  echo "== $name"
  echo "\$ SEBT_CUDA_LIBRARY=build/libsebt_cuda_host.so sebt validate --backend cuda --time 10 --no-speed"
  SEBT_CUDA_LIBRARY="$scratch/build/libsebt_cuda_host.so" ./build/sebt validate --backend cuda --time 10 --no-speed \
    --save "$scratch/v" > v.txt 2>&1; rc=$?
  grep -m1 "^validate cuda:" v.txt; grep -m3 -E "^(fail|crash) " v.txt; grep -m1 "^replay: SEBT_CUDA" v.txt; echo "exit $rc"
}
cp fast_cpu/combo_kernel.h /tmp/ck.h; cp fast_cpu/sweep_z.c /tmp/sw.c; cp fast_cpu/indicators.h "$scratch/ind.h"
cp gpu/cuda_backend.cu "$scratch/cb.cu"
sed -i 's/if (m->open\[j\] <= stop) {/if (m->open[j] < stop) {/' fast_cpu/combo_kernel.h
run "stop-gap test written '<' (combo_kernel.h: open[j] < stop)"
cp /tmp/ck.h fast_cpu/combo_kernel.h
sed -i 's/if (ef\[u\] < es\[u\])/if (ef[u] <= es[u])/' fast_cpu/sweep_z.c
run "signal written 'ema_f <= ema_s' (sweep_z.c: EMA pair bitsets)"
cp /tmp/sw.c fast_cpu/sweep_z.c
sed -i 's/            if (cl\[j\] > s->cthr\[r\])/            if (cl[j] >= s->cthr[r])/' fast_cpu/sweep_z.c
grep -c 'cl\[j\] >= s->cthr' fast_cpu/sweep_z.c
run "cloc test written '>=' (sweep_z.c: the cloc bitsets)"
cp /tmp/sw.c fast_cpu/sweep_z.c
sed -i 's/ || R\[q\].slow != R\[q - 1\].slow ||/ ||/' fast_cpu/sweep_z.c
grep -c 'R\[q\].slow != R\[q - 1\].slow' fast_cpu/sweep_z.c
run "shared work ignores ema_slow (sweep_z.c: the EMA pair list keyed on fast alone)"
cp /tmp/sw.c fast_cpu/sweep_z.c
sed -i 's/exact = !(m2 > peak \* SEBT_K_Z_CANCEL) || m2 \* inv_w < scale \* scale;/exact = m2 * inv_w < scale * scale;/' fast_cpu/indicators.h
grep -c 'SEBT_K_Z_CANCEL) ||' fast_cpu/indicators.h
run "rolling z not recomputed when M2 collapses (indicators.h: a spike left the window)"
cp "$scratch/ind.h" fast_cpu/indicators.h
sed -i 's/return st == SEBT_OK ? run_range(w, mid, q1, z0, z1, false, err) : st;/return st == SEBT_OK ? run_range(w, mid + 1, q1, z0, z1, false, err) : st;/' gpu/cuda_backend.cu
grep -c 'run_range(w, mid + 1' gpu/cuda_backend.cu
run_cuda "out-of-device-memory split skips a combo (cuda_backend.cu: run_range's second half)"
cp "$scratch/cb.cu" gpu/cuda_backend.cu
