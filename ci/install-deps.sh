#!/usr/bin/env bash
# Installs the Debian packages sebt needs, and only when one is missing, so
# it is cheap to run before every build. Runs as root, or through sudo when
# that exists; otherwise it names the packages to install and fails.
set -euo pipefail

packages=(
  cmake make gcc g++ pkg-config   # build (g++: std::to_chars writes the shortest exact numbers; without it a slower portable path)
  zlib1g-dev                      # the loader reads .gz data files
  libdeflate-dev                  # faster whole-file inflate of .gz data (optional: zlib alone works)
  libxxhash-dev                   # names series cache entries by XXH3-128 (optional: without it every load parses)
  libcriterion-dev                # tests
  bash-completion                 # where `sebt completion bash` installs (optional)
  libbenchmark-dev                # bench/
  gnuplot-nox                     # report figures
  libjansson-dev                  # the report reads benchmark JSON through jansson
  help2man                        # man pages, from --help and --version
  libopenmpi-dev openmpi-bin      # sebt under mpirun (optional part)
  python3-numba                   # the numba peer of the benchmarks, validated over the kernel protocol
  python3-torch                   # the torch example kernel (python/examples; ~50 MB, ~3 min)
  python3-pandas                  # cli_sweep_npy_numpy reads a sweep's npy through pandas too (optional)
  python3-numpy python3-pytest    # the sebt Python package and its tests (ctest python_package)
  clang libclang-rt-14-dev        # libFuzzer harnesses of the parsers
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ci/install-deps.sh: no apt-get here; install these yourself: ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "ci/install-deps.sh: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "ci/install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
