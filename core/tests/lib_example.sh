#!/usr/bin/env bash
# The program of docs/library.md, taken from the page itself, built out of
# tree against the installed prefix (install_prefix.sh: build folder
# deleted, prefix moved), with pkg-config and with find_package(sebt). It
# runs fast_cpu against the reference on the bundled data (parity ok), the
# reference against itself, the cuda module by host execution, and says
# no device for the cuda module without one (when it is installed).
# Usage: lib_example.sh SOURCE_DIR WORK_DIR
set -u
src=$1 work=$2
p=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }
[[ -f $p/lib/pkgconfig/sebt.pc ]] || fail "no installed prefix under $p (the install_prefix test sets it up)"
unset SEBT_CUDA_LIBRARY SEBT_SHARE_DIR
ex=$work/example
rm -rf "$ex" && mkdir -p "$ex" || exit 1
# The fenced block after each "<!-- example: FILE -->" line is FILE.
awk -v dir="$ex" '
  /^<!-- example: .* -->$/ { file = dir "/" $3; next }
  file && /^```/ { if (inblock) { inblock = 0; file = "" } else inblock = 1; next }
  inblock { print > file }' "$src/docs/library.md"
[[ -s $ex/parity_example.c && -s $ex/CMakeLists.txt && -s $ex/stream_example.c ]] ||
  fail "docs/library.md has no example program"

export PKG_CONFIG_PATH=$p/lib/pkgconfig
cc -std=c11 -Wall -Wextra -Werror "$ex/parity_example.c" -o "$ex/pc_example" $(pkg-config --cflags --libs sebt) \
  || fail "the example does not build with pkg-config"
cmake -S "$ex" -B "$ex/build" -DCMAKE_PREFIX_PATH="$p" >"$ex/cmake.log" 2>&1 && cmake --build "$ex/build" >>"$ex/cmake.log" 2>&1 \
  || { cat "$ex/cmake.log"; fail "the example does not build with find_package(sebt)"; }

cd "$ex" || exit 1
for prog in ./pc_example ./build/parity_example; do
  out=$("$prog" fast_cpu) || { echo "$out"; fail "$prog fast_cpu: exit $?"; }
  echo "$out"
  grep -q '^parity ok: fast_cpu = reference on 3 combos' <<<"$out" || fail "$prog: fast_cpu parity not ok"
  [[ $(grep -c '^fast_cpu combo [0-2]: [0-9]* trades' <<<"$out") == 3 ]] || fail "$prog: no batch results"
done
out=$(./pc_example reference) || fail "the reference against itself: exit $?"
grep -q '^parity ok: reference' <<<"$out" || fail "the reference against itself is not ok"
if [[ -f $p/lib/sebt/libsebt_cuda_host.so ]]; then
  out=$(SEBT_CUDA_LIBRARY=$p/lib/sebt/libsebt_cuda_host.so ./pc_example cuda) || { echo "$out"; fail "cuda by host execution: exit $?"; }
  echo "$out"
  grep -q '^parity ok: cuda = reference' <<<"$out" || fail "cuda (host execution) parity not ok"
fi
if [[ -f $p/lib/sebt/libsebt_cuda.so ]] && ! command -v nvidia-smi >/dev/null; then
  ./pc_example cuda >cuda.txt 2>&1 && fail "the cuda module ran without a GPU"
  grep -qi 'device\|gpu' cuda.txt || { cat cuda.txt; fail "the cuda module's failure does not say why"; }
fi
# The streamed sweep of the same page: 200 CSV rows in input order after
# the header, the three best on stderr.
cc -std=c11 -Wall -Wextra -Werror "$ex/stream_example.c" -o "$ex/stream_example" $(pkg-config --cflags --libs sebt) \
  || fail "the streaming example does not build with pkg-config"
./stream_example >stream.csv 2>stream.err || { cat stream.err; fail "stream_example: exit $?"; }
head -c 6 stream.csv | grep -q '^combo,' || fail "stream_example: no CSV header"
[[ $(wc -l <stream.csv) == 201 ]] || fail "stream_example: $(wc -l <stream.csv) lines, expected 201"
[[ $(cut -d, -f1 stream.csv | tail -n +2 | tr '\n' ' ') == "$(seq -s ' ' 0 199) " ]] ||
  fail "stream_example: the rows are not combos 0 to 199 in order"
[[ $(grep -c '^best [1-3]: combo [0-9]*, sharpe' stream.err) == 3 ]] || { cat stream.err; fail "stream_example: no top 3"; }
echo ok
