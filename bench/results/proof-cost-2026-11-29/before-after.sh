#!/bin/bash
# Before (main 11b40cf: build-rel-main) and after (2b6d6f6: build-rel), both
# Release, alternated round by round per grid; usage: before-after.sh OUT_DIR (GRIDS: which)
set -u
cd "$(dirname "$0")/../../.."
out=${1:?out}
mkdir -p "$out"
for g in ${GRIDS:-stream-1000 windows-10240 cheap-100000 big-967680}; do
  mkdir -p "$out/$g"; uptime > "$out/uptime-start-$g.txt"
  for r in $(seq ${ROUNDS:-3}); do
    for b in main new; do
      bin=build-rel-main/sebt; [ $b = new ] && bin=build-rel/sebt
      REPS=1 FORMATS=npy THREADS=2 GRID=bench/grids/$g.grid bench/proof_cost.sh "$bin" "$out/$g/$b-r$r" > "$out/$g/$b-r$r.summary" 2>&1
    done
  done
  uptime > "$out/uptime-end-$g.txt"
done
