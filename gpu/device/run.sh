#!/usr/bin/env bash
# The device run: every check of the cuda backend that needs a real GPU, from
# the bundle gpu/device/bundle.sh made, in one command with a time budget,
# recording into OUT (at most 8 files; docs/cuda.md, "On a GPU machine").
#
#   gpu/device/run.sh [--bundle DIR] [--out DIR] [--budget SECONDS]
#                     [--only STEP,...] [--timeout STEP=SECONDS]...
#                     [--dry-run] [--require-gpu] [--libs missing|all]
#
#   --bundle DIR   the bundle (default: build-device/ beside gpu/)
#   --out DIR      where the results go (default: $OUT)
#   --budget S     the whole run's limit (default 360): a step never runs past
#                  it, and one that would start with under 5 s left is not
#                  started and counts as timed out
#   --only LIST    run only these steps (the others are not listed)
#   --timeout STEP=S  that step's own limit instead of its default
#   --dry-run      run only the steps that need no GPU, even with one
#   --require-gpu  no GPU is a failure of every step that needs one (the
#                  device call passes it, so a machine that lost its GPU
#                  cannot pass by skipping)
#   --libs missing|all  which of the bundle's lib/ the programs load: only
#                  those this machine lacks (default: its own newer ones
#                  stay, and CUDA's tools, which inherit the library path,
#                  never see the bundle's), or all of them (how a bare
#                  machine runs, checked on one that is not)
#
# Steps, in order (default limit in seconds; * needs a GPU):
#   env              20   the machine (nvidia-smi, glibc, tools) and that
#                         every bundled program finds its libraries
#   check_gpu        10   sebt check-gpu (with a GPU: it must list a device)
#   smoke            15   sebt parity --backend fast_cpu on the month of 1m bars
#   device_tests*    35   the bundled gpu_test_* with SEBT_REQUIRE_GPU=1: a
#                         skipped test or a skip exit fails the step
#   parity_fast_cpu* 40   sebt sweep, cuda and fast_cpu, on every bundled
#                         series plain and --fill-gaps, results (npy) and
#                         trades compared byte for byte; and two larger grids
#   parity_reference*70   sebt parity --backend gpu: every bundled series,
#                         as loaded and gap-filled, and the joined series,
#                         bit for bit against the reference
#   memcheck*        20   compute-sanitizer --tool memcheck (leaks too) on a
#                         small sweep with trades
#   racecheck*       20   compute-sanitizer --tool racecheck, the same sweep
#   initcheck*       20   compute-sanitizer --tool initcheck, the same sweep
#   ncu*             25   ncu: each kernel's time (and DRAM, L2 bytes, SM
#                         throughput) over one 576-combo sweep
#   benchmark*       35   sebt check-gpu --benchmark --max-combos 10^7 --budget
#                         10 --save, fast_cpu on every core (OMP_NUM_THREADS)
#   validate*        50   sebt validate --backend cuda --time 20 --no-speed on
#                         the month of 1m bars (the bundled set's parity is
#                         parity_reference; speed is benchmark)
#   grids*           90   real grids timed: sebt sweep on fast_cpu (every
#                         core) and on the GPU, cheap-100000 and big-967680
#                         over the 15m series gap-filled, the default proof
#                         on, three rounds alternated, each grid's results
#                         compared (same_npy); the times in grids.txt
#
# OUT receives: summary.txt (a line a step: name, status, seconds, detail;
# rewritten after every step, so a run cut short still says how far it
# got), steps.log (each step's output, added as the step ends), benchmark.txt,
# crossover.txt, ncu.csv, grids.txt, artifacts.tar.gz (each step's files:
# JUnit XML, sweep outputs that differed, sanitizer and ncu reports).
#
# The limits were set from an H200's run (bench/results/gpu-h200-2026-11-29),
# each at least twice what it took (grids: the build whose cuda was 6.5x
# slower than fast_cpu took about 35 s); re-set them from the seconds
# summary.txt records (--timeout, or here).
#
# Statuses: pass, fail, timeout, skipped. Exit 0 when no step failed or
# timed out, 1 otherwise, 2 on bad usage. Without a GPU (or with --dry-run)
# the GPU steps are skipped and said so; the others must pass.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$(basename "${BASH_SOURCE[0]}")
steps=(env check_gpu smoke device_tests parity_fast_cpu parity_reference memcheck racecheck initcheck ncu
    benchmark validate grids)
declare -A limit=([env]=20 [check_gpu]=10 [smoke]=15 [device_tests]=35 [parity_fast_cpu]=40
    [parity_reference]=70 [memcheck]=20 [racecheck]=20 [initcheck]=20 [ncu]=25 [benchmark]=35 [validate]=50
    [grids]=90)
declare -A needs_gpu=([device_tests]=1 [parity_fast_cpu]=1 [parity_reference]=1 [memcheck]=1 [racecheck]=1
    [initcheck]=1 [ncu]=1 [benchmark]=1 [validate]=1 [grids]=1)

usage() { sed -n '2,/^set -uo/p' "$self" | sed '$d; s/^# \{0,1\}//'; }
die_usage() { echo "run.sh: $*" >&2; exit 2; }

# ---- the steps; each runs in its own process (run.sh --step NAME), in
# ---- WORK/NAME, output to stdout; exit 0 passes.

D() { echo "$SEBT_SHARE/fixtures/data"; }
series() { ls "$(D)"/*.csv "$(D)"/*.csv.gz 2>/dev/null | sort; }
# The month of one-minute bars: big enough for every indicator window of the
# parity combos, small enough for a sanitizer.
month() { echo "$(D)/BTCUSDT-1m-2019-01.csv.gz"; }
# SEBT_DEVICE_BACKEND=cuda with SEBT_CUDA_LIBRARY naming libsebt_cuda_host.so
# runs a step under host execution, to check the step itself without a GPU;
# gpu (the default) exits 3 rather than run anywhere but on a device.
B=${SEBT_DEVICE_BACKEND:-gpu}

step_env() {
    echo "== machine"
    uname -a
    echo "cores: $(nproc)"
    ldd --version | head -1
    grep -E '^(PRETTY_NAME)=' /etc/os-release 2>/dev/null
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv || true
    else
        echo "nvidia-smi: none"
    fi
    local tool
    for tool in nvcc compute-sanitizer ncu; do
        printf '%s: ' "$tool"
        command -v "$tool" >/dev/null && "$tool" --version 2>&1 | tail -1 || echo none
    done
    echo "== bundle"
    cat "$BUNDLE/MANIFEST"
    local need have
    need=$(sed -n 's/^glibc needed: GLIBC_//p' "$BUNDLE/MANIFEST")
    have=$(ldd --version | head -1 | grep -o '[0-9][0-9.]*$')
    if [[ -n $need && -n $have ]] && [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -1) != "$have" ]]; then
        echo "FAIL: the bundle needs glibc $need, this machine has $have"
        return 1
    fi
    echo "== libraries from the bundle (--libs $LIBS): $(ls "$LIBDIR" | tr '\n' ' ')"
    local f bad=0
    for f in "$BUNDLE"/bin/* "$BUNDLE"/lib/sebt/*.so; do
        [[ -f $f ]] || continue
        if ldd "$f" | grep 'not found'; then
            echo "FAIL: $f"
            bad=1
        fi
    done
    "$SEBT" --version || bad=1
    return $bad
}

step_check_gpu() {
    "$SEBT" check-gpu | tee check-gpu.txt || return 1
    if [[ $HAVE_GPU == 1 ]]; then
        grep -q '^CUDA devices: [1-9]' check-gpu.txt && grep -q '^  gpu   cuda on device' check-gpu.txt ||
            { echo "FAIL: a GPU is here and check-gpu lists no usable device"; return 1; }
    fi
}

step_smoke() {
    "$SEBT" parity --backend fast_cpu --data "$(month)" --gaps plain --junit smoke.xml
}

# A Criterion program passes only when it ran every test: exit 0, and no
# test reported skipped.
step_device_tests() {
    local t rc bad=0 n=0
    for t in "$BUNDLE"/bin/gpu_test_*; do
        [[ -x $t ]] || continue
        n=$((n + 1))
        echo "== $(basename "$t")"
        SEBT_REQUIRE_GPU=1 SEBT_TEST_CUDA_MODE=device SEBT_TEST_BINARY=$SEBT SEBT_TEST_FIXTURES_DIR=$SEBT_SHARE/fixtures \
            "$t" --verbose --jobs "$(nproc)" 2>&1 | tee "$(basename "$t").log"
        rc=${PIPESTATUS[0]}
        if ((rc != 0)); then
            echo "FAIL: $(basename "$t") exited $rc"
            bad=1
        elif grep -Eq '\[SKIP\]|Skipping|SKIPPED' "$(basename "$t").log"; then
            echo "FAIL: $(basename "$t") skipped a test (SEBT_REQUIRE_GPU=1: a skip is a failure)"
            bad=1
        fi
    done
    ((n > 0)) || { echo "FAIL: the bundle has no device tests"; return 1; }
    return $bad
}

# Where an npy file's data starts: after its header, whose length is
# bytes 8-9 (format version 1) or 8-11 (versions 2 and 3), little-endian.
npy_data_start() {
    local major
    major=$(od -An -tu1 -j6 -N1 "$1" | tr -d ' ')
    if [[ $major == 1 ]]; then
        echo $((10 + $(od -An -tu2 -j8 -N2 --endian=little "$1" | tr -d ' ')))
    else
        echo $((12 + $(od -An -tu4 -j8 -N4 --endian=little "$1" | tr -d ' ')))
    fi
}

# Two sweeps' npy files hold the same results: the data after the header
# byte for byte, and the header the same but for the proof's note (a seed
# drawn per run, and whether the series came from the cache).
same_npy() {
    local a=$1 b=$2 sa sb
    [[ -s $a && -s $b ]] || return 1
    sa=$(npy_data_start "$a") && sb=$(npy_data_start "$b") || return 1
    cmp -s <(head -c "$sa" "$a" | sed 's/ # sebt-verification .*//') \
        <(head -c "$sb" "$b" | sed 's/ # sebt-verification .*//') || { echo "$a $b: headers differ"; return 1; }
    cmp <(tail -c +$((sa + 1)) "$a") <(tail -c +$((sb + 1)) "$b") || { echo "$a $b: data differ"; return 1; }
}

# One sweep on cuda and on fast_cpu; the npy results (same_npy) and every
# trade file must be the same bytes.
same_sweep() {
    local tag=$1
    shift
    local b
    for b in fast_cpu $B; do
        mkdir -p "$tag.$b.trades"
        "$SEBT" sweep --backend $b "$@" --format npy --output "$tag.$b.npy" --trades "$tag.$b.trades" \
            2>"$tag.$b.err" || { echo "FAIL $tag: sweep --backend $b exited $?"; cat "$tag.$b.err"; return 1; }
    done
    if same_npy "$tag.fast_cpu.npy" "$tag.$B.npy" && diff -r -q "$tag.fast_cpu.trades" "$tag.$B.trades"; then
        echo "same bits: $tag ($(ls "$tag.$B.trades" | wc -l) trade files)"
        rm -rf "$tag".*
    else
        echo "FAIL $tag: cuda and fast_cpu differ (kept in artifacts)"
        return 1
    fi
}

step_parity_fast_cpu() {
    local f bad=0 n=0 name
    local combos=$SEBT_SHARE/parity-combos.csv
    while read -r f; do
        name=$(basename "$f")
        same_sweep "$name.plain" --data "$f" --combos "$combos" || bad=1
        same_sweep "$name.filled" --data "$f" --combos "$combos" --fill-gaps || bad=1
        n=$((n + 2))
    done < <(series)
    ((n > 0)) || { echo "FAIL: no bundled series under $(D)"; return 1; }
    # Larger sweeps: many batches and chunks (no trades: the npy alone).
    local grid
    for grid in host-chunks.grid cheap-100000.grid; do
        for b in fast_cpu $B; do
            "$SEBT" sweep --backend $b --data "$(D)/BTCUSDT-15m-2017-2021.csv.gz" --fill-gaps \
                --grid "$BUNDLE/inputs/$grid" --format npy --output "$grid.$b.npy" 2>"$grid.$b.err" ||
                { echo "FAIL $grid: sweep --backend $b exited $?"; cat "$grid.$b.err"; bad=1; }
        done
        if same_npy "$grid.fast_cpu.npy" "$grid.$B.npy"; then
            echo "same bits: 15m filled, $grid"
            rm -f "$grid".*
        else
            echo "FAIL $grid: cuda and fast_cpu differ"
            bad=1
        fi
    done
    return $bad
}

step_parity_reference() {
    "$SEBT" parity --backend $B --junit parity.xml
}

# The small sweep the sanitizers run: the month of 1m bars, gap-filled, the
# parity combos, with trades (the second, trade-writing launch too).
sanitize() {
    local tool=$1
    shift
    mkdir -p trades
    compute-sanitizer --tool "$tool" --error-exitcode 99 "$@" --log-file "$tool.txt" \
        "$SEBT" sweep --backend $B --data "$(month)" --fill-gaps --combos "$SEBT_SHARE/parity-combos.csv" \
        --trades trades --format npy --output sweep.npy
    local rc=$?
    cat "$tool.txt"
    rm -rf trades sweep.npy
    ((rc == 0)) || { echo "FAIL: compute-sanitizer --tool $tool: exit $rc (99: it found errors)"; return 1; }
    grep -Eq '(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)' "$tool.txt" ||
        { echo "FAIL: compute-sanitizer printed no clean summary"; return 1; }
}
step_memcheck() { sanitize memcheck --leak-check full; }
step_racecheck() { sanitize racecheck; }
step_initcheck() { sanitize initcheck; }

# Each kernel's time, and what gpu/README.md's roofline needs to place the
# hop and memo kernels: DRAM and L2 bytes, SM throughput.
NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
step_ncu() {
    ncu --csv --print-units base --clock-control none --launch-count 500 --metrics "$NCU_METRICS" \
        "$SEBT" sweep --backend $B --data "$(D)/BTCUSDT-15m-2017-2021.csv.gz" --fill-gaps \
        --grid "$BUNDLE/inputs/ncu.grid" --format npy --output sweep.npy >ncu.csv 2>ncu.err
    local rc=$?
    cat ncu.err
    rm -f sweep.npy
    cp ncu.csv "$OUT_DIR/ncu.csv"
    ((rc == 0)) || { echo "FAIL: ncu exited $rc"; return 1; }
    # Per kernel: launches and total time (the CSV's Kernel Name, Metric
    # Name and Metric Value columns, found by their header; ==PROF== lines
    # come before it).
    awk -F'","' '!k && /"Kernel Name"/ {
            for (i = 1; i <= NF; i++) { if ($i ~ /Kernel Name/) k = i; if ($i ~ /Metric Name/) m = i; if ($i ~ /Metric Value/) v = i }
            next }
        k && m && v && NF >= v && $m == "gpu__time_duration.sum" { gsub(/"/, "", $v); gsub(/,/, "", $v); t[$k] += $v; n[$k]++; rows++ }
        END { for (x in t) printf "%14.0f ns %6d launches  %s\n", t[x], n[x], x; if (!rows) exit 1 }' ncu.csv \
        >kernels.txt || { echo "FAIL: no per-kernel times in ncu's CSV"; return 1; }
    echo "per kernel, total time over the sweep:"
    sort -n -r kernels.txt
}

step_benchmark() {
    SEBT_CROSSOVER_FILE=$PWD/crossover OMP_NUM_THREADS=$(nproc) "$SEBT" check-gpu --benchmark \
        --max-combos 10000000 --budget 10 --save 2>&1 | tee benchmark.txt
    local rc=${PIPESTATUS[0]}
    cp benchmark.txt "$OUT_DIR/benchmark.txt"
    [[ -f crossover ]] && cp crossover "$OUT_DIR/crossover.txt"
    ((rc == 0)) || { echo "FAIL: check-gpu --benchmark exited $rc"; return 1; }
    [[ -f crossover ]] || { echo "FAIL: no crossover saved"; return 1; }
}

step_validate() {
    "$SEBT" validate --backend cuda --time 20 --no-speed --data "$(month)" --save repro --junit validate.xml
}

# What users sweep, timed on both backends: wall seconds of the whole
# command (load, sweep, proof, file), rounds alternated so that a drift of
# the machine falls on both alike; each grid's two files compared.
step_grids() {
    local g b r t bad=0 start
    {
        echo "# sebt sweep --data BTCUSDT-15m-2017-2021.csv.gz --fill-gaps --grid G --format npy, wall seconds"
        echo "# fast_cpu on $(nproc) threads; gpu: cuda on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
        printf '%s\t%s\t%s\t%s\n' grid backend round seconds
    } >grids.txt
    for g in cheap-100000 big-967680; do
        for r in 1 2 3; do
            for b in fast_cpu $B; do
                start=$EPOCHREALTIME
                OMP_NUM_THREADS=$(nproc) "$SEBT" sweep --backend $b --data "$(D)/BTCUSDT-15m-2017-2021.csv.gz" \
                    --fill-gaps --grid "$BUNDLE/inputs/$g.grid" --format npy --output "$g.$b.npy" 2>"$g.$b.err" ||
                    { echo "FAIL $g: sweep --backend $b exited $?"; cat "$g.$b.err"; bad=1; continue; }
                t=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
                printf '%s\t%s\t%s\t%s\n' "$g" "$b" "$r" "$t" >>grids.txt
            done
        done
        if same_npy "$g.fast_cpu.npy" "$g.$B.npy"; then
            echo "same results: $g"
            rm -f "$g".*.npy
        else
            echo "FAIL $g: cuda and fast_cpu differ"
            bad=1
        fi
    done
    cat grids.txt
    cp grids.txt "$OUT_DIR/grids.txt"
    return $bad
}

# ---- the driver

# LIBDIR gets links to the bundle's libraries the programs are to load: all
# of them, or those ldd finds missing here, round after round (a missing
# library's own needs show only once it is found).
bundle_libs() {
    mkdir -p "$LIBDIR"
    local so missing added
    if [[ $LIBS == all ]]; then
        for so in "$BUNDLE"/lib/*.so*; do
            [[ -f $so ]] && ln -sf "$so" "$LIBDIR/"
        done
        return
    fi
    for _ in 1 2 3 4 5 6; do
        missing=$(for f in "$BUNDLE"/bin/* "$BUNDLE"/lib/sebt/*.so; do
            [[ -f $f ]] && LD_LIBRARY_PATH=$LIBDIR ldd "$f" 2>/dev/null
        done | awk '/=> not found/ { print $1 }' | sort -u)
        added=0
        for so in $missing; do
            if [[ -f $BUNDLE/lib/$so && ! -e $LIBDIR/$so ]]; then
                ln -s "$BUNDLE/lib/$so" "$LIBDIR/$so"
                added=1
            fi
        done
        ((added)) || return 0
    done
}

run_step() {
    local name=$1
    cd "$WORK/$name" || exit 1
    "step_$name"
}

write_summary() {
    {
        echo "# sebt device run: $MODE; budget ${BUDGET}s; bundle $(sed -n 's/^commit: //p' "$BUNDLE/MANIFEST" 2>/dev/null)"
        echo "# step	status	seconds	detail"
        printf '%s\n' "${summary_lines[@]}"
        [[ ${1:-} == final ]] && echo "result: $result ($n_pass passed, $n_fail failed or timed out, $n_skip skipped)"
    } >"$OUT_DIR/summary.txt.tmp" && mv "$OUT_DIR/summary.txt.tmp" "$OUT_DIR/summary.txt"
}

main() {
    local bundle="" only="" dry=0 require=0
    LIBS=missing
    OUT_DIR=${OUT:-}
    BUDGET=360
    while [[ $# -gt 0 ]]; do
        case $1 in
        --bundle) bundle=$2; shift 2 ;;
        --out) OUT_DIR=$2; shift 2 ;;
        --budget) BUDGET=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --timeout)
            [[ $2 =~ ^([a-z_]+)=([0-9]+)$ && -n ${limit[${BASH_REMATCH[1]}]:-} ]] ||
                die_usage "--timeout STEP=SECONDS, STEP one of: ${steps[*]}"
            limit[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
            shift 2 ;;
        --dry-run) dry=1; shift ;;
        --require-gpu) require=1; shift ;;
        --libs)
            [[ $2 == missing || $2 == all ]] || die_usage "--libs missing|all"
            LIBS=$2
            shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
        esac
    done
    [[ -n $OUT_DIR ]] || die_usage "no --out and no \$OUT"
    [[ $BUDGET =~ ^[0-9]+$ ]] || die_usage "--budget SECONDS"
    local s
    for s in ${only//,/ }; do
        [[ -n ${limit[$s]:-} ]] || die_usage "--only: no step $s (steps: ${steps[*]})"
    done
    BUNDLE=$(cd "${bundle:-$here/../../build-device}" 2>/dev/null && pwd) ||
        die_usage "no bundle at ${bundle:-build-device/}: make it with gpu/device/bundle.sh"
    [[ -f $BUNDLE/MANIFEST ]] || die_usage "$BUNDLE is not a bundle (no MANIFEST)"
    # A copy that lost the execute bits (a transfer) still runs.
    chmod u+x "$BUNDLE"/bin/* 2>/dev/null
    mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd)
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/sebt-device.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT

    HAVE_GPU=0
    # (a here-string: under pipefail, grep -q closing the pipe early could
    # make nvidia-smi fail and hide the GPU)
    if ((!dry)) && command -v nvidia-smi >/dev/null && grep -q '^GPU ' <<<"$(nvidia-smi -L 2>/dev/null)"; then
        HAVE_GPU=1
    fi
    if ((dry)); then
        MODE="dry run (--dry-run)"
    elif ((HAVE_GPU)); then
        MODE="device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
    else
        MODE="no GPU found"
    fi
    export BUNDLE WORK OUT_DIR HAVE_GPU SEBT=$BUNDLE/bin/sebt SEBT_SHARE=$BUNDLE/share/sebt
    export LIBS LIBDIR=$WORK/lib
    bundle_libs
    export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    # CUDA's tools (compute-sanitizer, ncu) where PATH does not have them.
    export PATH=$PATH:/usr/local/cuda/bin
    # The bundle's own share folder and module, never a caller's.
    unset SEBT_SHARE_DIR SEBT_CUDA_LIBRARY BACKTEST_BACKEND BACKTEST_GPU_ID SEBT_CROSSOVER_FILE

    local start=$SECONDS log=$OUT_DIR/steps.log
    : >"$log"
    summary_lines=()
    n_pass=0 n_fail=0 n_skip=0 result=pass
    write_summary
    for s in "${steps[@]}"; do
        if [[ -n $only && ",$only," != *",$s,"* ]]; then
            continue
        fi
        local status detail="" t0=$SECONDS left=$((BUDGET - (SECONDS - start))) lim=${limit[$s]}
        ((lim > left - 2)) && lim=$((left - 2))
        if [[ -n ${needs_gpu[$s]:-} && $HAVE_GPU == 0 ]]; then
            if ((require)); then
                status=fail detail="needs a GPU and none was found (--require-gpu)"
            else
                status=skipped detail="needs a GPU: ${MODE}"
            fi
        elif ((lim < 5)); then
            # Not run is not passed: the run did not do what it was asked.
            status=timeout detail="not started: ${left}s of the ${BUDGET}s budget left"
        else
            mkdir -p "$WORK/$s"
            echo "==== $s (limit ${lim}s)" >>"$log"
            timeout -k 5 "$lim" "$BASH" "$self" --step "$s" >"$WORK/$s/output.log" 2>&1
            local rc=$?
            # At most 2 MB of a step in steps.log; the whole is in artifacts.
            head -c 2000000 "$WORK/$s/output.log" >>"$log"
            case $rc in
            0) status=pass ;;
            124 | 137) status=timeout detail="past its ${lim}s limit" ;;
            *) status=fail detail="exit $rc: $(grep -m1 'FAIL\|error' "$WORK/$s/output.log" | cut -c1-160)" ;;
            esac
            echo "==== $s: $status" >>"$log"
        fi
        case $status in
        pass) n_pass=$((n_pass + 1)) ;;
        skipped) n_skip=$((n_skip + 1)) ;;
        *) n_fail=$((n_fail + 1)) result=fail ;;
        esac
        summary_lines+=("$s	$status	$((SECONDS - t0))	$detail")
        write_summary
        echo "$s: $status${detail:+ ($detail)}" >&2
    done
    # A run where nothing ran proves nothing.
    ((n_pass + n_fail > 0)) || result=fail
    write_summary final
    # Each step's files, those over 4 MB left out (a large sweep output).
    (cd "$WORK" && find . -type f -size -4M -print0 | tar -czf "$OUT_DIR/artifacts.tar.gz" --null -T -)
    tail -1 "$OUT_DIR/summary.txt" >&2
    [[ $result == pass ]]
}

if [[ ${1:-} == --step ]]; then
    run_step "$2"
    exit
fi
# The comparison the parity steps make, alone (the dry run's test).
if [[ ${1:-} == --same-npy ]]; then
    same_npy "$2" "$3"
    exit
fi
main "$@"
