#!/usr/bin/env bash
# The device run's dry run, as a test (ctest gpu_device_dry_run): a bundle
# assembled from this build folder (bundle.sh --from-build: no nvcc build),
# then run.sh --dry-run into a scratch OUT. The steps that need no GPU must
# have run and passed, every other step must say it was skipped, and OUT
# must hold what the device tool brings back. Then the ways a run must fail:
# --require-gpu with no GPU, a bundle without sebt, and a run where nothing
# ran.
#
#   dry_run_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail

src=$1
build=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sebt-dry-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# status_of OUT STEP: that step's status in OUT/summary.txt ("" when absent).
status_of() { awk -F'\t' -v s="$2" '$1 == s { print $2 }' "$1/summary.txt"; }

expect_status() {
    local out=$1 step=$2 want=$3 got
    got=$(status_of "$out" "$step")
    [[ $got == "$want" ]] || fail "$step: expected $want, summary says '${got:-nothing}'"
}

# run_dry NAME ARGS...: run.sh into $tmp/NAME; sets rc.
run_dry() {
    local name=$1
    shift
    rc=0
    "$src/gpu/device/run.sh" --bundle "$tmp/bundle" --out "$tmp/$name" "$@" >"$tmp/$name.stderr" 2>&1 || rc=$?
}

"$src/gpu/device/bundle.sh" --from-build "$build" --out "$tmp/bundle" >"$tmp/bundle.log" 2>&1 ||
    { cat "$tmp/bundle.log"; echo "FAIL: bundle.sh --from-build exited non-zero"; exit 1; }
[[ -x $tmp/bundle/bin/sebt && -f $tmp/bundle/MANIFEST && -d $tmp/bundle/share/sebt/fixtures/data ]] ||
    { echo "FAIL: the bundle lacks bin/sebt, MANIFEST or share/sebt/fixtures/data"; exit 1; }
# Self-contained: with lib/ first on the path, every library a bundled
# program loads is the bundle's own, but glibc's, the C++ runtime's and the
# driver's (which the device has).
for f in "$tmp"/bundle/bin/* "$tmp"/bundle/lib/sebt/*.so; do
    [[ -f $f ]] || continue
    LD_LIBRARY_PATH=$tmp/bundle/lib ldd "$f" | grep '=> /' | grep -v "=> $tmp/bundle/lib/" |
        grep -Ev '^\s*(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libcuda)\.so' |
        sed "s|^|FAIL: $(basename "$f") loads a library from outside the bundle: |"
done | grep FAIL && fails=$((fails + 1))

# 1. The dry run itself, loading every bundled library as a bare machine
# would.
run_dry out --dry-run --libs all
((rc == 0)) || fail "the dry run exited $rc"
for step in env check_gpu smoke; do
    expect_status "$tmp/out" "$step" pass
done
for step in device_tests parity_fast_cpu parity_reference memcheck racecheck initcheck ncu benchmark validate grids; do
    expect_status "$tmp/out" "$step" skipped
done
[[ $(grep -c $'\t' "$tmp/out/summary.txt") -eq 14 ]] || fail "summary.txt should list 13 steps and its header"
# (grep reads a here-string: with pipefail, grep -q ending a pipe early
# would fail the writer.)
grep -q '^result: pass (3 passed, 0 failed or timed out, 10 skipped)$' <<<"$(tail -1 "$tmp/out/summary.txt")" ||
    fail "last line: $(tail -1 "$tmp/out/summary.txt")"
# What ran left its evidence: the bundle's libraries resolved, check-gpu's
# report, the smoke parity's verdict.
# jansson is optional: where sebt was built without it, another bundled
# library (libgomp, libz, libcriterion...) stands for it.
want_lib=libjansson
ldd "$tmp/bundle/bin/sebt" 2>/dev/null | grep -q libjansson || want_lib='lib'
grep -q "^== libraries from the bundle (--libs all): .*$want_lib" "$tmp/out/steps.log" ||
    fail "steps.log: the bundle's libraries were not used"
grep -q '^Backend each mode would pick' "$tmp/out/steps.log" || fail "steps.log: no check-gpu output"
grep -q '^combos checked 12, divergences 0' "$tmp/out/steps.log" || fail "steps.log: no smoke parity verdict"
grep -q 'smoke/smoke.xml' <<<"$(tar -tzf "$tmp/out/artifacts.tar.gz")" || fail "artifacts.tar.gz: no smoke/smoke.xml"
n_files=$(find "$tmp/out" -type f | wc -l)
((n_files <= 8)) || fail "OUT holds $n_files files; the device tool brings back 8"

# 2. --require-gpu without a GPU: each GPU step fails, and the run.
run_dry require --dry-run --require-gpu --only env,device_tests
((rc == 1)) || fail "--require-gpu without a GPU exited $rc, not 1"
expect_status "$tmp/require" env pass
expect_status "$tmp/require" device_tests fail
[[ -n $(status_of "$tmp/require" smoke) ]] && fail "--only env,device_tests ran smoke"

# 3. A bundle that cannot run sebt fails the steps that need no GPU.
mv "$tmp/bundle/bin/sebt" "$tmp/sebt.moved"
run_dry broken --dry-run --only env,check_gpu,smoke
((rc == 1)) || fail "a bundle without sebt exited $rc, not 1"
for step in env check_gpu smoke; do
    expect_status "$tmp/broken" "$step" fail
done
mv "$tmp/sebt.moved" "$tmp/bundle/bin/sebt"

# 4. Nothing ran: not a pass.
run_dry nothing --dry-run --only device_tests,validate
((rc == 1)) || fail "a run where every step was skipped exited $rc, not 1"
grep -q '^result: fail' <<<"$(tail -1 "$tmp/nothing/summary.txt")" || fail "nothing ran, yet: $(tail -1 "$tmp/nothing/summary.txt")"

# 5. The parity steps' comparison of two sweeps' npy files: fast_cpu's and
# cuda's under host execution (each with its own proof's note: another
# seed) are the same results; a changed data byte or column name is not.
host=$build/libsebt_cuda_host.so
if [[ -f $host ]]; then
    for b in fast_cpu cuda; do
        SEBT_CUDA_LIBRARY=$host "$build/sebt" sweep --backend $b --data "$src/fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv" \
            --combos "$src/oracle/parity-combos.csv" --format npy --output "$tmp/$b.npy" 2>"$tmp/$b.err" ||
            fail "sweep --backend $b exited non-zero: $(cat "$tmp/$b.err")"
    done
    "$src/gpu/device/run.sh" --same-npy "$tmp/fast_cpu.npy" "$tmp/cuda.npy" >/dev/null ||
        fail "--same-npy: fast_cpu's and cuda's sweeps said to differ"
    sed 's/"seed": "0x/"seed": "9x/' "$tmp/cuda.npy" >"$tmp/seed.npy"
    cmp -s "$tmp/cuda.npy" "$tmp/seed.npy" && fail "the npy header has no proof's seed to change"
    "$src/gpu/device/run.sh" --same-npy "$tmp/cuda.npy" "$tmp/seed.npy" >/dev/null ||
        fail "--same-npy: another proof seed said to differ"
    start=$((10 + $(od -An -tu2 -j8 -N2 --endian=little "$tmp/cuda.npy" | tr -d ' ')))
    cp "$tmp/cuda.npy" "$tmp/data.npy"
    printf '\x7f' | dd of="$tmp/data.npy" bs=1 seek=$((start + 100)) conv=notrunc status=none
    "$src/gpu/device/run.sh" --same-npy "$tmp/fast_cpu.npy" "$tmp/data.npy" >/dev/null &&
        fail "--same-npy: a changed data byte passed"
    sed '0,/avg_r/s//avg_x/' "$tmp/cuda.npy" >"$tmp/name.npy"
    "$src/gpu/device/run.sh" --same-npy "$tmp/fast_cpu.npy" "$tmp/name.npy" >/dev/null &&
        fail "--same-npy: a changed column name passed"
else
    fail "$host is missing: it is built on every machine"
fi

if ((fails)); then
    for o in out require broken nothing; do
        echo "---- $o"
        cat "$tmp/$o/summary.txt" "$tmp/$o.stderr" 2>/dev/null
    done
    echo "$fails failure(s)"
    exit 1
fi
echo "dry run: 3 steps passed, 10 skipped; --require-gpu, a broken bundle and an empty run fail; the npy comparison holds"
