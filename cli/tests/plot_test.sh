#!/usr/bin/env bash
# `sebt plot`: a PNG and an SVG of one combo's equity and of a sweep's
# heatmap (from its CSV and from its npy: the same picture), usage errors
# exit 2 and write nothing, and without gnuplot exit 2 naming what to
# install. Skipped (77) without gnuplot, after the no-gnuplot check.
# Usage: plot_test.sh SEBT FIXTURES_DIR
set -u
sebt=$1 data=$2/data/BTCUSDT-1m-2019-01.csv.gz
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

SEBT_GNUPLOT=$work/none "$sebt" plot equity --data "$data" --output none.png 2>err.txt
[[ $? == 2 ]] || fail "without gnuplot: exit $?, want 2"
grep -q "apt-get install gnuplot-nox" err.txt || fail "without gnuplot the message does not say what to install: $(cat err.txt)"
[[ ! -e none.png ]] || fail "without gnuplot a file was written"

command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (apt-get install gnuplot-nox)"; exit 77; }

"$sebt" plot equity --data "$data" --set ema_fast=24 --output eq.png 2>/dev/null || fail "plot equity png"
[[ $(head -c 8 eq.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "eq.png is not a PNG"
"$sebt" plot equity --data "$data" --set ema_fast=24 --output eq.svg --size 900x600 2>/dev/null || fail "plot equity svg"
grep -q "<svg" eq.svg || fail "eq.svg is not an SVG"
grep -q "ema_fast=24" eq.svg || fail "the equity title does not name the combo"

printf 'ema_fast = 12, 24, 48\nvol_z = 1.0, 2.0\nuse_tp = true, false\n' >g.grid
"$sebt" sweep --data "$data" --grid g.grid --output s.csv 2>/dev/null || fail "sweep csv"
"$sebt" sweep --data "$data" --grid g.grid --format npy --output s.npy 2>/dev/null || fail "sweep npy"
for f in csv npy; do
  "$sebt" plot heatmap --sweep s.$f --x ema_fast --y vol_z --metric avg_r --output h-$f.svg --script h-$f.gp \
    || fail "plot heatmap from $f"
done
cmp -s h-csv.svg h-npy.svg || fail "the heatmap of the CSV and of the npy differ"
grep -q "median avg_r over ema_fast and vol_z (each cell the median of its rows over the other parameters" h-csv.gp \
  || fail "the heatmap's title does not name its default aggregate, median"
"$sebt" plot heatmap --sweep s.csv --x ema_fast --y vol_z --agg best --output h.svg --script best.gp || fail "--agg best"
grep -q "best sharpe over ema_fast and vol_z (each cell its best row: the other parameters at their best)" best.gp \
  || fail "the best heatmap's title"

# Each aggregate over a hand-made sweep: s.csv's first row with combo,
# ema_fast, vol_z and sharpe (columns 1, 2, 6, 25) replaced. The cells, as
# worked out by hand from docs/cli.md's definitions:
#   ema_fast=12 vol_z=1: 4 1 NaN 2 8 -> median 3, mean 3.75, q25 1.75, q75 5, best 8
#   ema_fast=24 vol_z=1: -1 3 0.5    -> median 0.5, q25 -0.25, q75 1.75, best 3
#   ema_fast=12 vol_z=2: NaN NaN     -> NaN
#   ema_fast=24 vol_z=2: 2.5         -> 2.5
[[ $(head -1 s.csv | cut -d, -f1,2,6,25) == combo,ema_fast,vol_z,sharpe ]] || fail "s.csv's columns moved"
{
  head -1 s.csv
  k=10
  for r in "12 1 4" "24 1 -1" "12 1 1" "12 2 NaN" "24 2 2.5" "12 1 NaN" "24 1 3" "12 2 NaN" "12 1 2" "24 1 0.5" "12 1 8"; do
    set -- $r
    sed -n 2p s.csv | awk -F, -v OFS=, -v c=$k -v x=$1 -v y=$2 -v m=$3 '{ $1 = c; $2 = x; $6 = y; $25 = m; print }'
    k=$((k + 1))
  done
} >hand.csv
cells() {   # the $map block of a script, one "i j value" per cell
  awk '/^\$map << EOD/ { on = 1; next } /^EOD/ { on = 0 } on && NF' "$1" | tr '\n' ';'
}
want_cells() {
  local agg=$1 want=$2; shift 2
  "$sebt" plot heatmap --sweep hand.csv --x ema_fast --y vol_z --agg "$agg" "$@" --output hand.svg --script hand.gp \
    || fail "hand.csv --agg $agg $*"
  [[ $(cells hand.gp) == "$want" ]] || fail "hand.csv --agg $agg $*: cells $(cells hand.gp), want $want"
}
want_cells median "0 0 3;1 0 0.5;0 1 NaN;1 1 2.5;"
grep -q "highest median: 3 at ema_fast=12 vol_z=1 (of 4 rows)" hand.gp || fail "the highest median cell"
want_cells mean "0 0 3.75;1 0 0.83333333333333337;0 1 NaN;1 1 2.5;"
want_cells q25 "0 0 1.75;1 0 -0.25;0 1 NaN;1 1 2.5;"
want_cells q75 "0 0 5;1 0 1.75;0 1 NaN;1 1 2.5;"
want_cells best "0 0 8;1 0 3;0 1 NaN;1 1 2.5;"
# --where before aggregating: without combo 20 (the 8) the best is 4 and
# the median of 4 1 2 is 2; the condition is named in the title.
want_cells best "0 0 4;1 0 3;0 1 NaN;1 1 2.5;" --where "combo != 20"
want_cells median "0 0 2;1 0 0.5;0 1 NaN;1 1 2.5;" --where "combo != 20"
grep -q "rows where combo != 20;" hand.gp || fail "the title does not say --where's condition"
# With the rows of one vol_z left, a row of cells is still drawn.
want_cells median "0 0 3;1 0 0.5;" --where "vol_z < 1.5"
"$sebt" plot heatmap --sweep hand.csv --x ema_fast --y vol_z --where "vol_z < 1.5" --output one-row.png \
  || fail "a heatmap one cell high"
"$sebt" help plot | grep -q "median (the" || fail "--help does not state the default aggregate"

"$sebt" plot heatmap --sweep s.npy --x ema_fast --y vol_z --fix use_tp=false --output h.png || fail "heatmap --fix"

# --combo FILE:ID draws the sweep's row: combo 3 of g.grid (first parameter
# slowest) is ema_fast=12 vol_z=2 use_tp=false, the same script as by --set.
"$sebt" plot equity --data "$data" --combo s.npy:3 --script by-id.gp --output same.svg 2>/dev/null || fail "equity --combo"
"$sebt" plot equity --data "$data" --set ema_fast=12 --set vol_z=2 --set use_tp=false --script by-set.gp \
  --output same.svg 2>/dev/null || fail "equity by --set"
cmp -s by-id.gp by-set.gp || fail "equity --combo s.npy:3 draws another combo than its parameters by --set"
grep -q "use_tp=false" by-id.gp || fail "the --combo picture's title does not name the combo"

bad() {
  local what=$1; shift
  "$sebt" plot "$@" 2>err.txt
  [[ $? == 2 ]] || fail "$what: exit $?, want 2"
  [[ ! -e out.png ]] || fail "$what: wrote out.png"
}
bad "no picture" --data "$data" --output out.png
# A parameter the sweep never varied: refused, naming its one value.
bad "a parameter the sweep did not vary" heatmap --sweep s.csv --x ema_fast --y ema_slow --output out.png
grep -q "the sweep s.csv did not vary ema_slow: all its 12 rows have ema_slow=672" err.txt \
  || fail "an unvaried parameter: $(cat err.txt)"
bad "a boolean the sweep did not vary" heatmap --sweep s.csv --x ema_fast --y use_stop --output out.png
grep -q "use_stop=true" err.txt || fail "an unvaried boolean: $(cat err.txt)"
bad "a --where no row meets" heatmap --sweep s.csv --x ema_fast --y vol_z --where "n > 1e9" --output out.png
bad "a --where naming a table heading" heatmap --sweep s.csv --x ema_fast --y vol_z --where "trades > 1" --output out.png
bad "an unknown --agg" heatmap --sweep s.csv --x ema_fast --y vol_z --agg max --output out.png
bad "an unknown picture" candles --data "$data" --output out.png
bad "no output" equity --data "$data"
bad "an output that is neither png nor svg" equity --data "$data" --output out.pdf
bad "a heatmap without --y" heatmap --sweep s.csv --x ema_fast --output out.png
bad "the same axis twice" heatmap --sweep s.csv --x vol_z --y vol_z --output out.png
bad "an axis that is not a parameter" heatmap --sweep s.csv --x sharpe --y vol_z --output out.png
bad "a fix no row has" heatmap --sweep s.csv --x ema_fast --y vol_z --fix vol_z=7 --output out.png
bad "a column the sweep lacks" heatmap --sweep s.csv --x ema_fast --y vol_z --metric nope --output out.png
grep -q "no column 'nope'" err.txt || fail "a missing column is not named: $(cat err.txt)"
bad "an axis that is no parameter" heatmap --sweep s.csv --x volz --y ema_fast --output out.png
grep -q "no parameter named 'volz'; did you mean vol_z?" err.txt || fail "a misspelt axis: $(cat err.txt)"
for f in csv npy; do
  bad "an analysis column of a sweep without them ($f)" heatmap --sweep s.$f --x ema_fast --y vol_z \
    --metric profit_factor --output out.png
  grep -q "no column 'profit_factor': it is an analysis column, written only by a sweep run with --analysis" err.txt \
    || fail "an analysis column of a sweep without them ($f): $(cat err.txt)"
done
bad "--combo for a heatmap" heatmap --sweep s.csv --combo s.csv:3 --x ema_fast --y vol_z --output out.png
bad "a combo the sweep lacks" equity --data "$data" --combo s.npy:99 --output out.png
bad "a heatmap option for equity" equity --data "$data" --x ema_fast --output out.png
bad "a bad size" equity --data "$data" --size 10x10 --output out.png
echo "ok"
