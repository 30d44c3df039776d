#!/usr/bin/env bash
# No file sebt writes may be one it reads or another it writes: every
# output option of every command (files, the files a folder output will
# hold, a folder replaced whole), set to an input or to another output, is
# refused with exit 2 before anything is written, the message naming both
# options, every file left byte for byte as it was and nothing new made.
# Usage: output_collision_test.sh SEBT FIXTURES_DIR
set -u
sebt=$1 fixtures=$2
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
failures=0
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
snaps=$work/snaps
mkdir -p "$work/w" "$snaps" && cd "$work/w" || exit 1
# A plot is refused before gnuplot would run: any executable stands in.
export SEBT_GNUPLOT=/bin/true HOME=$work/home XDG_STATE_HOME=$work/state

cp "$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv" d.csv
printf 'ema_fast = 12, 24\nvol_z = 1.0, 2.0\n' >g.grid
printf 'ema_fast,vol_z\n12,1.0\n24,2.0\n' >c.csv
"$sebt" sweep --data d.csv --grid g.grid --output s.csv 2>/dev/null || { echo "FAIL: a sweep to plot"; exit 1; }
"$sebt" sweep --data d.csv --grid g.grid --shard 1/1 --output s.shard 2>/dev/null || { echo "FAIL: a shard"; exit 1; }
mkdir -p t r fz/case sv rp
cp d.csv t/combo_0.csv
cp d.csv t/chunk-0-1.sebt
cp d.csv sv/written-bars.csv
cp d.csv fz/case/series.csv
printf '{}\n' >r/bench.json
printf '{}\n' >old.json

snapshot() { find . -type f -print0 | sort -z | xargs -0 md5sum; find . | sort; }
snapshot >"$snaps/before"

# refused OPTION_A OPTION_B ARGS...: `sebt ARGS` names OPTION_A and OPTION_B
# in its refusal, exits 2, changes and makes nothing.
refused() {
  local a=$1 b=$2; shift 2
  "$sebt" "$@" >/dev/null 2>"$snaps/err"
  local rc=$?
  [[ $rc == 2 ]] || { fail "sebt $*: exit $rc, want 2: $(head -c 400 "$snaps/err")"; return; }
  grep -qF -- "$a " "$snaps/err" && grep -qF -- "$b " "$snaps/err" ||
    fail "sebt $*: the refusal does not name $a and $b: $(cat "$snaps/err")"
  snapshot >"$snaps/after"
  cmp -s "$snaps/before" "$snaps/after" || fail "sebt $*: files changed: $(diff "$snaps/before" "$snaps/after" | head -5)"
}

D=(--data d.csv)
G=(--grid g.grid)
# command, option written, option read
refused --output --data sweep "${D[@]}" "${G[@]}" --output d.csv
refused --output --grid sweep "${D[@]}" "${G[@]}" --output g.grid
refused --output --combos sweep "${D[@]}" --combos c.csv --output c.csv
refused --trades --data sweep --data t/combo_0.csv "${G[@]}" --trades t --top 1
refused --trades --output sweep "${D[@]}" "${G[@]}" --trades t2 --top 1 --output t2/combo_1.csv
refused --checkpoint --data sweep --data t/chunk-0-1.sebt "${G[@]}" --checkpoint t
refused --output --data run "${D[@]}" --output d.csv
refused --output --combo run "${D[@]}" --combo s.csv:0 --output s.csv
refused --output --data features "${D[@]}" --output d.csv
refused --output --combo features "${D[@]}" --combo s.csv:1 --output ./s.csv
refused --output SHARD merge s.shard --output s.shard
refused --output --data split "${D[@]}" "${G[@]}" --split 2018-02-08T12:00 --output d.csv
refused --output --combos split "${D[@]}" --combos c.csv --split 2018-02-08T12:00 --output c.csv
refused --output --grid walkforward "${D[@]}" "${G[@]}" --train 10 --test 5 --output g.grid
refused --trades --data walkforward "${D[@]}" "${G[@]}" --train 10 --test 5 --trades d.csv
refused --trades --grid walkforward "${D[@]}" "${G[@]}" --train 10 --test 5 --trades ./g.grid
refused --trades --combos walkforward "${D[@]}" --combos c.csv --train 10 --test 5 --trades c.csv
refused --trades --output walkforward "${D[@]}" "${G[@]}" --train 10 --test 5 --output new.txt --trades new.txt
refused --script --data plot equity "${D[@]}" --output p.png --script d.csv
refused --output --data plot equity "${D[@]}" --output d.csv --format png
refused --script --output plot equity "${D[@]}" --output p.png --script p.png
refused --script --combo plot equity "${D[@]}" --combo s.csv:0 --output p.png --script s.csv
refused --script --sweep plot heatmap --sweep s.csv --x ema_fast --y vol_z --output h.svg --script s.csv
refused --output --sweep plot heatmap --sweep s.csv --x ema_fast --y vol_z --output s.csv --format svg
refused --script --output plot heatmap --sweep s.csv --x ema_fast --y vol_z --output h.svg --script ./h.svg
refused --junit --data parity --backend reference "${D[@]}" --junit d.csv
refused --junit --grid parity --backend reference "${D[@]}" "${G[@]}" --junit g.grid
refused --junit --combos parity --backend reference "${D[@]}" --combos c.csv --junit c.csv
refused --junit --data validate --backend reference "${D[@]}" --junit d.csv
refused --markdown --data validate --backend reference "${D[@]}" --markdown d.csv
refused --markdown --junit validate --backend reference --junit v.xml --markdown v.xml
refused --save --data validate --backend reference --data sv/written-bars.csv --save sv
refused --save --replay validate --backend reference --replay rp --save rp
refused --junit --base fuzz --backend reference --base d.csv --junit d.csv
refused --save --base fuzz --backend reference --base fz/case/series.csv --save fz
refused --history --from report --out r2 --from r/bench.json --history r/bench.json --append-history
refused --history --baseline report --baseline old.json r/bench.json --out r2 --history old.json --append-history
refused --out --history report --out r3 --from r/bench.json --history r3/history.csv --append-history

# Not collisions: a redraw in place reads the folder it replaces; /dev/null
# twice is written in place; a folder output beside an input it will not write.
"$sebt" report --out r --from r/bench.json --history none >/dev/null 2>"$snaps/err"
grep -q -- '--from\|--out .* would' "$snaps/err" && fail "report --from DIR/bench.json --out DIR refused: $(cat "$snaps/err")"
"$sebt" walkforward "${D[@]}" "${G[@]}" --train 10 --test 5 --output /dev/null --trades /dev/null 2>"$snaps/err" ||
  fail "walkforward --output /dev/null --trades /dev/null: exit $?: $(cat "$snaps/err")"
"$sebt" sweep "${D[@]}" "${G[@]}" --trades . --top 1 --output /dev/null 2>"$snaps/err" ||
  fail "sweep --trades . beside --data d.csv: exit $?: $(cat "$snaps/err")"
[[ -s combo_0.csv ]] || fail "sweep --trades . wrote no combo_0.csv"

[[ $failures == 0 ]] || { echo "$failures failed"; exit 1; }
echo ok
