#!/usr/bin/env bash
# The series cache through the command (docs/big-sweeps.md, "The series
# cache"): run, features and sweep write the same bytes whether the series
# was parsed or read from the cache; a damaged entry is said, parsed again
# and replaced; the folder follows SEBT_CACHE_DIR, XDG_CACHE_HOME, HOME.
#   series_cache_test.sh SEBT FIXTURES
set -u
sebt=$1 fixtures=$2
data=$fixtures/data/BTCUSDT-1m-2019-01.csv.gz
work=$(mktemp -d /tmp/sebt_series_cache_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
if "$sebt" --version | grep -q '^series cache: *off (built'; then
  echo "skipped: this sebt has no series cache (built without xxhash)"
  exit 77
fi
printf 'vol_z = 1.5, 2.0\nema_fast = 12, 24\n' > grid.txt
export SEBT_CACHE_STATS=1

# stats DIR NAME CMD...: runs sebt with SEBT_CACHE_DIR=DIR, output to NAME,
# and prints what the cache did.
stats() {
  local d=$1 name=$2; shift 2
  SEBT_CACHE_DIR=$d "$sebt" "$@" --data "$data" --output "$name" 2>err.txt >/dev/null ||
    fail "$* exited $?: $(head -c 300 err.txt)"
  sed -n 's/.*series cache: //p' err.txt
}
# (a verified JSON sweep records its own seed and sample: --no-verify)
for cmd in "sweep --grid grid.txt" "sweep --grid grid.txt --format json --no-verify" "run --format json" "features"; do
  read -r -a args <<< "$cmd"
  rm -rf c
  off=$(stats off parsed.out "${args[@]}")
  first=$(stats "$work/c" first.out "${args[@]}")
  second=$(stats "$work/c" second.out "${args[@]}")
  [ "$off" = off ] || fail "$cmd with SEBT_CACHE_DIR=off: cache said '$off'"
  [ "$first" = "miss, stored" ] || fail "$cmd, first run: cache said '$first'"
  [ "$second" = hit ] || fail "$cmd, second run: cache said '$second'"
  cmp -s parsed.out first.out || fail "$cmd: output differs after storing"
  cmp -s parsed.out second.out || fail "$cmd: output differs when read from the cache"
  [ -s parsed.out ] || fail "$cmd wrote nothing"
  echo "ok: $cmd: off, '$first', '$second': the same $(wc -c < parsed.out) bytes"
done

# Every word for "off" turns the cache off, in any case, and makes no
# folder of that name (OFF once did).
for word in OFF Off 0 false FALSE no No none NONE ""; do
  said=$(stats "$word" off.out features)
  [ "$said" = off ] || fail "SEBT_CACHE_DIR='$word': cache said '$said'"
  [ -z "$word" ] || [ ! -e "$word" ] || fail "SEBT_CACHE_DIR='$word' made a folder of that name"
done
SEBT_CACHE_DIR=OFF "$sebt" --version | grep -q '^series cache: *off' || fail "--version under SEBT_CACHE_DIR=OFF"
echo "ok: OFF, 0, false, no, none in any case or empty: no cache, no folder"

# A damaged entry: said on stderr, the same output, then a hit again.
entry=$(ls c/*.series)
printf 'X' | dd of="$entry" bs=1 seek=5000 conv=notrunc status=none
SEBT_CACHE_DIR=$work/c "$sebt" sweep --grid grid.txt --data "$data" --output damaged.out 2>err.txt ||
  fail "sweep over a damaged entry exited $?"
grep -q "warning: the cached series of $data in $work/c was damaged; the file was parsed again and the entry replaced" err.txt ||
  fail "no warning for a damaged entry: $(cat err.txt)"
grep -q "series cache: damaged entry, replaced" err.txt || fail "stats for a damaged entry: $(cat err.txt)"
SEBT_CACHE_DIR=off "$sebt" sweep --grid grid.txt --data "$data" --output parsed.out 2>/dev/null
cmp -s parsed.out damaged.out || fail "output differs over a damaged entry"
[ "$(stats "$work/c" again.out sweep --grid grid.txt)" = hit ] || fail "the replaced entry is not a hit"
echo "ok: a damaged entry is said, parsed again and replaced"

before=$failures
# A FIFO in an entry's place: refused (never opened for reading, which
# blocked for good), said once, the same output, replaced by a good entry.
rm -f "$entry" && mkfifo "$entry"
SEBT_CACHE_DIR=$work/c timeout 60 "$sebt" sweep --grid grid.txt --data "$data" --output fifo.out 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "sweep over a FIFO entry exited $rc (124: it hung): $(head -c 300 err.txt)"
[ "$(grep -c 'is not a regular file of this user' err.txt)" -eq 1 ] || fail "no single warning for a FIFO entry: $(cat err.txt)"
grep -q "series cache: untrusted entry, replaced" err.txt || fail "stats for a FIFO entry: $(cat err.txt)"
cmp -s parsed.out fifo.out || fail "output differs over a FIFO entry"
[ -f "$entry" ] && [ ! -p "$entry" ] || fail "the FIFO entry was not replaced"
[ "$(stats "$work/c" again.out sweep --grid grid.txt)" = hit ] || fail "the entry replacing a FIFO is not a hit"
[ "$failures" -eq "$before" ] && echo "ok: a FIFO in an entry's place is refused, said once and replaced"
before=$failures

# HOME naming no folder: no cache, one warning, and nothing is created.
( unset SEBT_CACHE_DIR XDG_CACHE_HOME; HOME=$work/nohome/user "$sebt" features --data "$data" \
    --output f.csv 2>err.txt ) || fail "HOME with no folder: exit $?: $(head -c 300 err.txt)"
[ ! -e "$work/nohome" ] || fail "HOME=$work/nohome/user was created"
[ "$(grep -c "warning: HOME=$work/nohome/user is not a folder: no series cache" err.txt)" -eq 1 ] ||
  fail "HOME with no folder: not one warning: $(cat err.txt)"
grep -q "series cache: off" err.txt || fail "HOME with no folder: the cache was used: $(cat err.txt)"
[ "$failures" -eq "$before" ] && echo "ok: HOME naming no folder: no cache, one warning, nothing created"

# Where the folder is.
mkdir home xdg
( unset SEBT_CACHE_DIR XDG_CACHE_HOME; HOME=$work/home "$sebt" features --data "$data" --output f.csv 2>/dev/null )
ls home/.cache/sebt/series/*.series >/dev/null 2>&1 || fail "no entry under HOME/.cache/sebt/series"
( unset SEBT_CACHE_DIR; XDG_CACHE_HOME=$work/xdg HOME=$work/home "$sebt" features --data "$data" --output f.csv 2>/dev/null )
ls xdg/sebt/series/*.series >/dev/null 2>&1 || fail "no entry under XDG_CACHE_HOME/sebt/series"
v=$(unset SEBT_CACHE_DIR; XDG_CACHE_HOME=$work/xdg "$sebt" --version | grep '^series cache:')
case "$v" in *"$work/xdg/sebt/series"*) ;; *) fail "--version: '$v'";; esac
v=$(SEBT_CACHE_DIR=off "$sebt" --version | grep '^series cache:')
case "$v" in *"off (SEBT_CACHE_DIR is off"*) ;; *) fail "--version with SEBT_CACHE_DIR=off: '$v'";; esac
echo "ok: the folder follows SEBT_CACHE_DIR, XDG_CACHE_HOME, HOME"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "series cache: all checks passed"
