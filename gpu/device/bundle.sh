#!/usr/bin/env bash
# Builds the device bundle: one folder that runs sebt's GPU checks on a bare
# x86-64 Linux with the NVIDIA driver (the lent H100/H200 machine, which has
# CUDA's tools but none of sebt's Debian libraries and reaches no registry).
#
#   gpu/device/bundle.sh [--out DIR] [--obj DIR] [--jobs N]
#       configure and build a Release sebt with the CUDA module for sm_90
#       (H100/H200) with this machine's nvcc in --obj (default
#       build-device-obj/), then assemble the bundle in --out (default
#       build-device/, the folder the device tool carries). Fails when
#       nvcc or the module is missing, or the bundle is over 64 MiB.
#   gpu/device/bundle.sh --from-build BUILD --out DIR
#       assemble from an existing build folder without building (the dry
#       run's test uses it; the cuda module and the tests are taken when
#       that build has them).
#
# The bundle (docs/cuda.md, "On a GPU machine"):
#   bin/sebt and the device tests (gpu_test_*), installed layout, so sebt
#     finds lib/sebt and share/sebt beside it;
#   lib/sebt/libsebt_cuda.so, the module;
#   lib/*.so.*, every library ldd resolves for them but glibc's own, libstdc++
#     and libgcc_s (every glibc system with a C++ runtime has those, and an
#     older copy here would shadow the newer one that compute-sanitizer and
#     ncu inject into the process); run.sh puts lib/ on LD_LIBRARY_PATH;
#   share/sebt/: parity-combos.csv, fixtures/data, fixtures/regressions;
#   inputs/: the grids and combos run.sh sweeps;
#   MANIFEST: commit, compiler, architectures, libraries and where they came
#     from, the newest glibc symbol version needed, sizes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
out=$src/build-device
obj=$src/build-device-obj
from_build=
jobs=2
limit_mib=64
tests=(gpu_test_device_parity gpu_test_select gpu_test_cpu_maps gpu_test_check_gpu)

die() { echo "bundle.sh: error: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case $1 in
    --out) out=$2; shift 2 ;;
    --obj) obj=$2; shift 2 ;;
    --from-build) from_build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done

build_release() {
    local nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
    [[ -x $nvcc ]] || nvcc=$(command -v nvcc) || die "no nvcc (set CUDACXX): the bundle needs the CUDA module"
    # ccache for nvcc too when the C compiler goes through it.
    local launcher=()
    if [[ ${CMAKE_C_COMPILER_LAUNCHER:-} == *ccache* ]]; then
        launcher=(-DCMAKE_CUDA_COMPILER_LAUNCHER="$CMAKE_C_COMPILER_LAUNCHER")
    fi
    mkdir -p "$obj"
    cmake -S "$src" -B "$obj" -DCMAKE_BUILD_TYPE=Release -DSEBT_WERROR=ON -DSEBT_SANITIZE=OFF \
        -DSEBT_BUILD_CUDA=ON -DSEBT_BUILD_TESTS=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
        -DCMAKE_CUDA_ARCHITECTURES=90 "${launcher[@]}" >"$obj/configure.log" 2>&1 ||
        { tail -30 "$obj/configure.log" >&2; die "cmake configure failed (log: $obj/configure.log)"; }
    ! grep -q 'Criterion not found' "$obj/configure.log" ||
        die "Criterion not found: the device tests cannot be built"
    cmake --build "$obj" -j"$jobs" --target sebt_cli sebt_cuda "${tests[@]}" ||
        die "the build failed"
    [[ -f $obj/libsebt_cuda.so ]] || die "the CUDA module was not built ($obj/libsebt_cuda.so)"
    build=$obj
}

# The libraries ldd resolves for one ELF file, one "soname path" a line;
# fails on any it cannot find.
resolved_libs() {
    local f=$1 line
    while IFS= read -r line; do
        if [[ $line == *"=> not found"* ]]; then
            die "$f: ${line%% =>*} not found"
        fi
        if [[ $line =~ ^[[:space:]]*([^[:space:]]+)\ =\>\ (/[^[:space:]]+) ]]; then
            echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
        fi
    done < <(ldd "$f")
}

# glibc's own libraries, the C++ runtime (see above) and the driver stay the
# device's.
system_lib() {
    case $1 in
    ld-linux*.so* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | \
        libutil.so.* | libanl.so.* | libnss_*.so.* | libmvec.so.* | libstdc++.so.* | libgcc_s.so.* | \
        libcuda.so.* | libnvidia-*.so.*) return 0 ;;
    esac
    return 1
}

assemble() {
    [[ -x $build/sebt ]] || die "$build/sebt is not built"
    rm -rf "$out"
    mkdir -p "$out/bin" "$out/lib/sebt" "$out/share/sebt/fixtures" "$out/inputs"
    cp "$build/sebt" "$out/bin/"
    local t have_tests=()
    for t in "${tests[@]}"; do
        if [[ -x $build/gpu/tests/$t ]]; then
            cp "$build/gpu/tests/$t" "$out/bin/"
            have_tests+=("$t")
        elif [[ -z $from_build ]]; then
            die "$build/gpu/tests/$t is not built"
        fi
    done
    [[ -f $build/libsebt_cuda.so ]] && cp "$build/libsebt_cuda.so" "$out/lib/sebt/"
    cp "$src/oracle/parity-combos.csv" "$out/share/sebt/"
    cp -R "$src/fixtures/data" "$src/fixtures/regressions" "$out/share/sebt/fixtures/"
    cp "$src/gpu/tests/host-chunks.grid" "$src/gpu/device/ncu.grid" "$src/bench/grids/cheap-100000.grid" \
        "$src/bench/grids/big-967680.grid" "$out/inputs/"

    local f soname path list libs=()
    for f in "$out"/bin/* "$out"/lib/sebt/*.so; do
        [[ -f $f ]] || continue
        list=$(resolved_libs "$f")
        while read -r soname path; do
            [[ -n $soname ]] || continue
            system_lib "$soname" && continue
            if [[ ! -e $out/lib/$soname ]]; then
                cp -L "$path" "$out/lib/$soname"
                libs+=("$soname $(realpath "$path")")
            fi
        done <<<"$list"
    done
    write_manifest "${have_tests[*]}" "${libs[@]}"
}

# The newest GLIBC_x.y symbol version any bundled file needs.
glibc_needed() {
    local f
    for f in "$out"/bin/* "$out"/lib/sebt/*.so "$out"/lib/*.so*; do
        [[ -f $f ]] && objdump -T "$f" 2>/dev/null
    done | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V | tail -1
}

write_manifest() {
    local tests_built=$1
    shift
    local commit dirty="" cache=$build/CMakeCache.txt
    commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
    git -C "$src" diff --quiet HEAD 2>/dev/null || dirty=" (with uncommitted changes)"
    {
        echo "sebt device bundle"
        echo "commit: $commit$dirty"
        echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -sm), $(ldd --version | head -1)"
        echo "build: $build ($(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache"))"
        echo "cuda compiler: $(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$cache") $(cat "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null | sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")/\1/p' | head -1)"
        echo "cuda architectures: $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$cache")"
        echo "cuda module: $([[ -f $out/lib/sebt/libsebt_cuda.so ]] && echo lib/sebt/libsebt_cuda.so || echo none)"
        echo "device tests: ${tests_built:-none}"
        echo "glibc needed: $(glibc_needed)"
        local l soname path pkg
        for l in "$@"; do
            read -r soname path <<<"$l"
            # /usr/lib and /lib are one folder; dpkg knows each file by one of them.
            pkg=$( (dpkg -S "$path" || dpkg -S "${path#/usr}") 2>/dev/null | head -1 | cut -d: -f1) || true
            echo "lib: $soname from ${pkg:-?} ($path)"
        done
    } >"$out/MANIFEST"
}

check_size() {
    local bytes tree_bytes limit=$((limit_mib * 1024 * 1024))
    bytes=$(du -sb "$out" | cut -f1)
    echo "bundle: $out, $((bytes / 1024)) KiB" | tee -a "$out/MANIFEST"
    ((bytes <= limit)) || die "the bundle is $bytes bytes, over $limit_mib MiB"
    # What the device tool sends: tracked and untracked-not-ignored files,
    # and the carried bundle, 64 MiB in all.
    if [[ -z $from_build ]] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        tree_bytes=$(cd "$src" && git ls-files -z --cached --others --exclude-standard |
            xargs -0 -r stat -c %s -- 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
        echo "with the working tree: $(((tree_bytes + bytes) / 1024)) KiB of $((limit / 1024))" |
            tee -a "$out/MANIFEST"
        ((tree_bytes + bytes <= limit)) ||
            die "the working tree ($tree_bytes bytes) and the bundle ($bytes) are over $limit_mib MiB together"
    fi
}

if [[ -n $from_build ]]; then
    build=$(cd "$from_build" && pwd)
else
    build_release
fi
assemble
check_size
