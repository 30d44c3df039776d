#!/usr/bin/env bash
# The README's kernel-author block as printed, with validate's default
# settings (no --time, no --data): the unmodified template passes, its big
# call reported as not checked with its reason in the JUnit report whenever
# the template's measured speed puts it past the budget (never as a hang);
# the template built with its planted bug fails the same command (exit 1),
# with a JUnit failure naming a replay command and a shrunk reproducer
# (saved in ./sebt-validate, validate's default) whose printed replay,
# pasted from elsewhere, reproduces the divergence.
# Whatever the machine's speed, a correct backend passes: a stage too slow
# for its budget is "not checked", never a failure.
# Usage: plugin_template_readme.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "install"; }
export PATH="$prefix/bin:$PATH"
# The block, word for word but for $HOME (here the temporary folder).
readme() (
  cp -r "$prefix/share/sebt/plugin-template" "$1" && cd "$1" &&
  cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" "${@:2}" >cfg.log 2>&1 && cmake --build build >build.log 2>&1 \
    || { cat cfg.log build.log; exit 2; }
  sebt validate --backend build/libmine.so --junit validate.xml >validate.txt 2>&1
)

readme "$tmp/mine"
rc=$?
cat "$tmp/mine/validate.txt"
[[ $rc == 0 ]] || fail "the README's block on the unmodified template: exit $rc, want 0"
xml=$tmp/mine/validate.xml
grep -q 'failures="0" errors="0"' "$xml" || fail "validate.xml reports failures"
big=$(grep -A2 '<testcase classname="sebt.validate.big-call"' "$xml") || fail "validate.xml has no big-call testcase"
# The big call passed (a fast machine), or was not checked with the time it would need and how to run it.
if grep -q '<skipped' <<<"$big"; then
  grep -q 'not checked: ~[0-9]* [smh][a-z]* at this backend.*measured [0-9.e+-]* backtests/s.*--big-call' <<<"$big" \
    || fail "the big call is skipped without the time it needs: $big"
  grep -q 'big-call .*not checked: ~' "$tmp/mine/validate.txt" || fail "the text report does not say not checked"
fi

readme "$tmp/bug" -DMINE_PLANTED_BUG=ON
rc=$?
tail -5 "$tmp/bug/validate.txt"
[[ $rc == 1 ]] || fail "the README's block on the template with its planted bug: exit $rc, want 1"
grep -q '<failure message=' "$tmp/bug/validate.xml" || fail "the planted bug's validate.xml has no <failure>"
grep -q 'replay: sebt validate --backend /' "$tmp/bug/validate.xml" || fail "the failure names no replay command"
replay=$(grep -m1 "^replay: sebt validate --backend .* --replay $tmp/bug/sebt-validate/" "$tmp/bug/validate.txt") \
  || fail "no shrunk reproducer saved in ./sebt-validate and printed with its replay"
replay=${replay#replay: sebt }
shrunk=$(grep -m1 -o 'shrunk from [0-9]* to [0-9]* bars' "$tmp/bug/validate.txt") || fail "the reproducer is not shrunk"
echo "reproducer: $shrunk"
echo "replaying: sebt $replay"
cd / || exit 1
read -r -a words <<<"$replay"
sebt "${words[@]}" >"$tmp/replay.txt" 2>&1
rc=$?
cat "$tmp/replay.txt"
[[ $rc == 1 ]] || fail "the printed replay exits $rc, want 1"
grep -q 'replay .*: fail' "$tmp/replay.txt" || fail "the replay does not show the divergence"
echo "ok"
