#!/usr/bin/env bash
# Setup of the install tests: a scratch copy of the source tree
# as its own git repository, a separate small build of it (no tests, no
# fuzzers, no nvcc: the product only), a quick report run from that build
# inside the copy (it must leave `git status` clean: nothing written into a
# source tree unless asked), then `cmake --install`, the build folder
# DELETED and the prefix MOVED. The install_* tests run what is left.
# Usage: install_prefix.sh SOURCE_DIR WORK_DIR
set -u
src=$1 work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work/home" || fail "cannot create $work"

# The tree as it is (tracked and new files, not ignored ones), committed.
# Without git (or a checkout) the copy is taken whole, less build folders,
# and the git status check is left out, and said so.
mkdir "$work/src"
have_git=false
if command -v git >/dev/null && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  have_git=true
  (cd "$src" && git ls-files -z --cached --others --exclude-standard) \
    | (cd "$src" && xargs -0 cp --parents -t "$work/src" 2>/dev/null)
else
  (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | (cd "$work/src" && tar -xf -)
fi
[[ -f $work/src/CMakeLists.txt ]] || fail "copying the source tree"
if $have_git; then
  git -C "$work/src" init -q && git -C "$work/src" add -A \
    && git -C "$work/src" -c user.name=t -c user.email=t@t commit -qm scratch || fail "git init of the copy"
fi

b=$work/src/build
cmake -S "$work/src" -B "$b" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DSEBT_BUILD_TESTS=OFF \
  -DSEBT_BUILD_FUZZ=OFF -DSEBT_BUILD_CUDA=OFF >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$b" -j2 >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "build"; }

# A report from the build folder, run inside the checkout, with no
# --history: the default history is the user's ($XDG_STATE_HOME), never
# bench/results/history.csv. A few small benchmarks are enough to show it.
if [[ -x $b/sebt_bench ]] && command -v gnuplot >/dev/null; then
  (cd "$work/src" && env -u XDG_STATE_HOME HOME="$work/home" BENCHMARK_FILTER='^pair/' \
     "$b/sebt" report --quick --out "$work/report-build" >"$work/report-build.log" 2>&1) \
    || { cat "$work/report-build.log"; fail "report from the build folder"; }
  [[ -s $work/home/.local/state/sebt/history.csv ]] || fail "the default history is not under \$HOME/.local/state/sebt"
  if $have_git; then
    dirty=$(git -C "$work/src" status --porcelain)
    [[ -z $dirty ]] || fail "a report run changed the checkout: $dirty"
    echo "report from the build folder: checkout clean, history in \$HOME/.local/state/sebt"
  else
    echo "report from the build folder: history in \$HOME/.local/state/sebt (no git: status not checked)"
  fi
else
  echo "sebt_bench or gnuplot missing: the report part is not checked here"
fi

cmake --install "$b" --prefix "$work/stage" --strip >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; fail "install"; }
rm -rf "$b"
mv "$work/stage" "$work/prefix" || fail "moving the prefix"
# Nothing installed names the build folder, the staging prefix or the
# source tree: the installed sebt cannot reach back into them.
for p in "$b" "$work/stage" "$src" "$work/src"; do
  hits=$(grep -rlF -- "$p" "$work/prefix" 2>/dev/null)
  [[ -z $hits ]] || fail "installed files name $p: $hits"
done
echo "installed, build folder deleted, prefix moved to $work/prefix"
find "$work/prefix" -type f | sed "s|$work/prefix/||" | sort | grep -v '^share/sebt/fixtures/' 
