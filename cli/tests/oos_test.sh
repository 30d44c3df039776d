#!/usr/bin/env bash
# sebt split and sebt walkforward, worked out again by hand with `sebt run`
# on the reference over files cut from the fixture at the same bars: the
# split's in-sample and out-of-sample columns of a combo, and the first test
# window's trades of a walk-forward (in its chained trades CSV); the JSON's
# shape and reference check; the usage errors.
# Usage: oos_test.sh SEBT FIXTURES_DIR
set -u
sebt=$1 fx=$2
data=$fx/data/BTCUSDT-1m-2019-01.csv.gz
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$t/g.grid" <<'G'
ema_fast = 8, 16, 32
ema_slow = 96
z_window = 96
atr_window = 24
vol_z = 1.0, 2.0
tr_z = 0.5
cloc_min = 0.5
reward_r = 1.0, 2.0
max_hold = 30
G
sets=(--set ema_slow=96 --set z_window=96 --set atr_window=24 --set tr_z=0.5 --set cloc_min=0.5 --set max_hold=30)
zcat "$data" >"$t/all.csv"
# rows of the file, header kept: bars [from, to)
cutbars() { { head -1 "$t/all.csv"; sed -n "$(($1 + 2)),$(($2 + 1))p" "$t/all.csv"; } >"$3"; }
# the metrics of a `sebt run` JSON as one line n,win_rate,...,sharpe
metrics() { sed -n '/"metrics":{/,/}/{/{/d;p}' "$1" | grep -o ':[^,]*' | tr -d ': ' | paste -sd,; }

# ---- split at 2019-01-21 00:00 UTC: bar 28800 -----------------------------------
"$sebt" split --data "$data" --grid "$t/g.grid" --split 2019-01-21 --backend fast_cpu >"$t/split.csv" \
  || fail "split exited $?"
[[ $(wc -l <"$t/split.csv") -eq 13 ]] || fail "split: expected a header and 12 rows"
cutbars 0 28800 "$t/is.csv"
cutbars 28800 44640 "$t/oos.csv"
# a column's number in a CSV's header, by its name
col() { head -1 "$2" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
c_ef=$(col ema_fast "$t/split.csv") c_vz=$(col vol_z "$t/split.csv") c_rr=$(col reward_r "$t/split.csv")
is0=$(col is_n "$t/split.csv") oos0=$(col oos_n "$t/split.csv")
[[ -n $c_ef && -n $c_vz && -n $c_rr && -n $is0 && -n $oos0 ]] || fail "split: a column is missing: $(head -1 "$t/split.csv")"
is_m="$is0-$((is0 + 5))" oos_m="$oos0-$((oos0 + 5))"
# combo 3: ema_fast 8, vol_z 2, reward_r 2 (the grid's first parameter varies slowest)
row=$(awk -F, '$1 == 3' "$t/split.csv")
[[ $(cut -d, -f"$c_ef,$c_vz,$c_rr" <<<"$row") == 8,2,2 ]] || fail "split: combo 3's parameters: $row"
p=(--set ema_fast=8 --set vol_z=2 --set reward_r=2 "${sets[@]}")
"$sebt" run --backend reference --data "$t/is.csv" "${p[@]}" >"$t/is.json" || fail "run in sample"
"$sebt" run --backend reference --data "$t/oos.csv" "${p[@]}" >"$t/oos.json" || fail "run out of sample"
[[ $(cut -d, -f"$is_m" <<<"$row") == "$(metrics "$t/is.json")" ]] \
  || fail "split: in-sample metrics $(cut -d, -f"$is_m" <<<"$row") != the reference's $(metrics "$t/is.json")"
[[ $(cut -d, -f"$oos_m" <<<"$row") == "$(metrics "$t/oos.json")" ]] \
  || fail "split: out-of-sample metrics $(cut -d, -f"$oos_m" <<<"$row") != the reference's $(metrics "$t/oos.json")"
# --combos: a combos CSV of combos 3 and 9 gives their rows (renumbered 0 and 1)
printf 'ema_fast,vol_z,reward_r,ema_slow,z_window,atr_window,tr_z,cloc_min,max_hold\n8,2,2,96,96,24,0.5,0.5,30\n32,1,2,96,96,24,0.5,0.5,30\n' \
  >"$t/combos.csv"
"$sebt" split --data "$data" --combos "$t/combos.csv" --split 2019-01-21 >"$t/c.csv" || fail "split --combos"
[[ $(sed -n 2p "$t/c.csv" | cut -d, -f2-) == $(awk -F, '$1 == 3' "$t/split.csv" | cut -d, -f2-) && \
   $(sed -n 3p "$t/c.csv" | cut -d, -f2-) == $(awk -F, '$1 == 9' "$t/split.csv" | cut -d, -f2-) ]] \
  || fail "split --combos: rows differ from the grid's"
# --where keeps the rows that meet it; text ranks them
"$sebt" split --data "$data" --grid "$t/g.grid" --split 2019-01-21 --where 'n >= 135' >"$t/w.csv" || fail "where"
[[ $(tail -n +2 "$t/w.csv" | awk -F, -v c="$is0" '$c < 135' | wc -l) -eq 0 && $(wc -l <"$t/w.csv") -gt 2 && \
   $(wc -l <"$t/w.csv") -lt 13 ]] || fail "split --where: $(wc -l <"$t/w.csv") lines"
"$sebt" split --data "$data" --grid "$t/g.grid" --split 2019-01-21 --format text --top 3 >"$t/s.txt" || fail "text"
grep -q "in sample: *28800 bars" "$t/s.txt" && [[ $(grep -c '^[123]  ' "$t/s.txt") -eq 3 ]] && \
  grep -q '^rank 1 (combo [0-9]*): ema_fast=' "$t/s.txt" && grep -q '^same in every one: .*ema_slow=96' "$t/s.txt" \
  || { cat "$t/s.txt"; fail "split text"; }
# The summary's medians, worked out here from the CSV of every combo, and a
# verdict that follows from the first-ranked row's out-of-sample Sharpe.
median() {
  tail -n +2 "$t/split.csv" | cut -d, -f"$(col "$1" "$t/split.csv")" | grep -v nan | sort -g |
    awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
grep -q "^summary: the 12 combos meeting the condition: median sharpe $(median is_sharpe) in sample, $(median oos_sharpe) out of sample; the first ranked (combo [0-9]*): " "$t/s.txt" \
  && grep -q '^verdict: ' "$t/s.txt" || { tail -3 "$t/s.txt"; fail "split summary: medians $(median is_sharpe), $(median oos_sharpe)"; }

# ---- walk-forward: train 8000 bars, test 6000 -------------------------------------
"$sebt" walkforward --data "$data" --grid "$t/g.grid" --train 8000 --test 6000 --where 'n >= 10' --check 3 \
  --format json --trades "$t/chain.csv" >"$t/wf.json" || fail "walkforward exited $?"
grep -q '"schema":"sebt-walkforward/1"' "$t/wf.json" || fail "no schema"
[[ $(grep -c '{"window":' "$t/wf.json") -eq 6 ]] || fail "expected 6 windows"
grep -q '"agreed":true' "$t/wf.json" || fail "the reference check did not agree"
"$sebt" walkforward --data "$data" --grid "$t/g.grid" --train 8000 --test 6000 --where 'n >= 10' >"$t/wf.txt" \
  || fail "walkforward text exited $?"
grep -q '^summary: [0-9]* windows with a pick: median sharpe ' "$t/wf.txt" && grep -q '^verdict: ' "$t/wf.txt" \
  || { tail -3 "$t/wf.txt"; fail "walkforward summary"; }
n=$(sed -n '/"chained":{/,/}/p' "$t/wf.json" | grep -o '"n":[0-9]*' | cut -d: -f2)
[[ $(($(wc -l <"$t/chain.csv") - 1)) -eq $n ]] || fail "the chained trades CSV has not $n rows"
w1=$(grep '{"window":1,' "$t/wf.json")
combo=$(grep -o '"combo":[0-9]*' <<<"$w1" | cut -d: -f2)
params=$(grep -o '"params":{[^}]*}' <<<"$w1" | sed 's/"params":{//' | grep -o '"[a-z_]*":[^,}]*' | tr -d '"' | sed 's/:/=/;s/^/--set\n/')
mapfile -t pick <<<"$params"
cutbars 8000 14000 "$t/test1.csv"
"$sebt" run --backend reference --data "$t/test1.csv" --format csv "${pick[@]}" >"$t/test1.trades" \
  || fail "run window 1's pick (combo $combo)"
k=$(($(wc -l <"$t/test1.trades") - 1))
[[ $k -gt 5 ]] || fail "window 1's pick made only $k trades"
diff <(tail -n +2 "$t/test1.trades" | cut -d, -f4-) <(sed -n "2,$((k + 1))p" "$t/chain.csv" | cut -d, -f4-) \
  || fail "window 1's trades differ from the reference's on the cut file"
[[ $(sed -n "2p" "$t/chain.csv" | cut -d, -f2) -ge 8000 ]] || fail "chained trades' bars are not the whole series'"
"$sebt" walkforward --data "$data" --grid "$t/g.grid" --train 5d --test 5d --backend reference >"$t/wf.txt" \
  || fail "walkforward on the reference"
grep -q "reference check: not run" "$t/wf.txt" && grep -q "^ *5  2019-01-21 00:00" "$t/wf.txt" \
  || { cat "$t/wf.txt"; fail "walkforward text in days"; }

# ---- a Sharpe from fewer than 10 trades is marked '?' in the text tables (each
# row's own n decides, read back from the row), with a footnote; JSON says so
# per window. Short windows and a late cut make both kinds of rows.
few_rows() {   # rows of a split or walkforward table: fields 8/9 or 4/9, 11/16 are n and sharpe
  awk -v nf="$2" '$10 == "|" && NF == 16 {
      marked_l = ($9 ~ /[?]$/); marked_r = ($16 ~ /[?]$/); few_l = ($nf < 10); few_r = ($11 < 10)
      if (marked_l != few_l || marked_r != few_r) { print "wrong mark: " $0; bad = 1 }
      few += few_l + few_r; many += !few_l + !few_r
    } END { if (bad) exit 1; if (!few || !many) { print "not both kinds: " few " few, " many " not"; exit 1 } }' "$1"
}
"$sebt" walkforward --data "$data" --grid "$t/g.grid" --train 2d --test 12h --backend fast_cpu --check 0 >"$t/few.txt" \
  || fail "walkforward with short windows"
few_rows "$t/few.txt" 8 || { cat "$t/few.txt"; fail "walkforward: a Sharpe's mark does not follow its trades"; }
grep -q "^? a Sharpe from fewer than 10 trades" "$t/few.txt" || fail "walkforward: no footnote for the marks"
"$sebt" split --data "$data" --grid "$t/g.grid" --split 2019-01-31T06:00 --format text >"$t/few-split.txt" \
  || fail "split with a short out-of-sample part"
few_rows "$t/few-split.txt" 4 || { cat "$t/few-split.txt"; fail "split: a Sharpe's mark does not follow its trades"; }
grep -q "^? a Sharpe from fewer than 10 trades" "$t/few-split.txt" || fail "split: no footnote for the marks"
! grep -q "^?" "$t/s.txt" && ! grep -q "[?]$" "$t/s.txt" || fail "split: a mark where every part has 10 trades or more"
"$sebt" walkforward --data "$data" --grid "$t/g.grid" --train 2d --test 12h --backend fast_cpu --check 0 \
  --format json >"$t/few.json" || fail "walkforward json with short windows"
grep -o '{"window":[^]]*"test_few_trades":[a-z]*' "$t/few.json" | awk '
  { tr = $0; sub(/.*"train":\{"n":/, "", tr); sub(/,.*/, "", tr)
    te = $0; sub(/.*"test":\{"n":/, "", te); sub(/,.*/, "", te)
    want = (tr + 0 < 10 ? "true" : "false") "," (te + 0 < 10 ? "true" : "false")
    got = $0; sub(/.*"train_few_trades":/, "", got); sub(/"test_few_trades":/, "", got)
    if (got != want) { print "window: " got " for n " tr ", " te; bad = 1 }; k++ }
  END { exit bad || k < 2 }' || fail "walkforward json: train_few_trades/test_few_trades do not follow n"
grep -q '"chained_few_trades":false' "$t/few.json" || fail "walkforward json: chained_few_trades"

# ---- a hole in the data: days 1-6 of the fixture without day 4 (in time, window 3 tests on day 4, window 4 trains
# on it). Both are skipped alike by the sweep, the reference check and the report; the others are checked.
awk -F, 'NR == 1 || ($1 < 1546300800000 + 6 * 86400000 && ($1 < 1546300800000 + 3 * 86400000 ||
  $1 >= 1546300800000 + 4 * 86400000))' "$t/all.csv" >"$t/hole.csv"
[[ $(wc -l <"$t/hole.csv") -eq 7201 ]] || fail "the file with a hole has not 7200 bars"
for check in 4 0; do
  "$sebt" walkforward --data "$t/hole.csv" --grid "$t/g.grid" --train 1d --test 1d --backend fast_cpu \
    --check $check >"$t/hole.txt" 2>"$t/hole.err" || { rc=$?; cat "$t/hole.txt" "$t/hole.err"; fail "hole --check $check: exit $rc"; }
  grep -q "^ *3  2019-01-03 00:00  2019-01-04 00:00  *-  window 3: no bars in its test span: skipped$" "$t/hole.txt" &&
    grep -q "^ *4  2019-01-04 00:00  2019-01-05 00:00  *-  window 4: no bars in its train span: skipped$" "$t/hole.txt" &&
    [[ $(grep -c "skipped" "$t/hole.txt") -eq 2 && $(grep -c "none meets" "$t/hole.txt") -eq 0 ]] &&
    grep -q "^ *5  2019-01-05 00:00  2019-01-06 00:00  *12 " "$t/hole.txt" &&
    grep -q "reference check: $((3 * (2 + check))) runs .* agree bit for bit" "$t/hole.txt" \
    || { cat "$t/hole.txt"; fail "hole --check $check: the windows without bars are not reported as skipped"; }
done
"$sebt" walkforward --data "$t/hole.csv" --grid "$t/g.grid" --train 1d --test 1d --backend fast_cpu --format json \
  >"$t/hole.json" || fail "hole json: exit $?"
grep -q '{"window":3,[^{]*"passing":0,"picked":false,"skipped":"no bars in its test span"}' "$t/hole.json" &&
  grep -q '{"window":4,[^{]*"passing":0,"picked":false,"skipped":"no bars in its train span"}' "$t/hole.json" &&
  [[ $(grep -c '"skipped"' "$t/hole.json") -eq 2 ]] || { cat "$t/hole.json"; fail "hole json: skipped windows"; }

# ---- usage errors: exit 2 with a message --------------------------------------------
expect2() {
  local want=$1; shift
  "$sebt" "$@" >/dev/null 2>"$t/err"; local rc=$?
  [[ $rc -eq 2 ]] && grep -q -- "$want" "$t/err" || fail "$*: exit $rc, $(cat "$t/err")"
}
expect2 "no in-sample bars" split --data "$data" --grid "$t/g.grid" --split 2018-01-01
expect2 "no out-of-sample bars" split --data "$data" --grid "$t/g.grid" --split 2019-03-01
# A refused split writes nothing to stdout, not even the CSV header.
"$sebt" split --data "$data" --grid "$t/g.grid" --split 2019-03-01 >"$t/refused.csv" 2>/dev/null
[[ ! -s "$t/refused.csv" ]] || fail "a refused split wrote to stdout: $(head -c 200 "$t/refused.csv")"
expect2 "expected a date" split --data "$data" --grid "$t/g.grid" --split 2019-02-30
expect2 "both in bars or both in time" walkforward --data "$data" --grid "$t/g.grid" --train 30d --test 100
expect2 "no whole train window" walkforward --data "$data" --grid "$t/g.grid" --train 40000 --test 6000
expect2 "exactly one of --grid" split --data "$data" --grid "$t/g.grid" --combos "$t/combos.csv" --split 2019-01-21
expect2 "at most 100000 windows" walkforward --data "$fx/data/BTCUSDT-15m-2017-2021.csv.gz" --grid "$t/g.grid" \
  --train 100 --test 1
expect2 "expected a number of bars" walkforward --data "$data" --grid "$t/g.grid" --train 3y --test 1d
expect2 "nearest\|did you mean\|unknown" split --data "$data" --grid "$t/g.grid" --split 2019-01-21 --where 'sharp > 0'
echo "ok: split and walkforward agree with the reference on the cut files"
