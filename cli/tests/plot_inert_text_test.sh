#!/usr/bin/env bash
# No text given to `sebt plot` reaches gnuplot as syntax: every text option
# (--title of both pictures, the --output file name gnuplot is told in
# --script; a sweep's column name, which must be one sebt writes) carrying backquotes,
# system("..."), $(...), quotes, backslashes and newlines: each payload
# would create a marker file if gnuplot ran it; none may exist afterwards,
# and the picture is still drawn. Skipped (77) without gnuplot.
# Usage: plot_inert_text_test.sh SEBT FIXTURES_DIR
set -u
sebt=$1 data=$2/data/BTCUSDT-1m-2019-01.csv.gz
fail() { echo "FAIL: $*"; exit 1; }
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (apt-get install gnuplot-nox)"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
m=$work/marker

payloads=(
  "T \`touch $m.bq\` x"
  "T \" . system(\"touch $m.sys\") . \" x"
  "T ' . system('touch $m.sq') . ' x"
  "T \$(touch $m.dollar) x"
  "T \\\" \`touch $m.bsq\` \\"
  "T
system(\"touch $m.nl\")
\`touch $m.nl2\`"
  "T \\
system(\"touch $m.cont\")"
  "it's \"quoted\" \\\\ \\n end"
)

check() {
  local what=$1 out=$2
  local left
  left=$(ls "$work" | grep '^marker' || true)
  [[ -z $left ]] || fail "$what: gnuplot ran a command from the text (made $left)"
  [[ -s $out ]] || fail "$what: no picture at $out"
}

printf 'ema_fast = 12, 24\nvol_z = 1.0, 2.0\n' >g.grid
"$sebt" sweep --data "$data" --grid g.grid --output s.csv 2>/dev/null || fail "sweep"
i=0
for p in "${payloads[@]}"; do
  i=$((i + 1))
  "$sebt" plot equity --data "$data" --title "$p" --output "eq$i.svg" --script "eq$i.gp" 2>err.txt ||
    fail "equity --title payload $i: exit $?: $(cat err.txt)"
  check "equity --title payload $i" "eq$i.svg"
  gnuplot "eq$i.gp" 2>/dev/null || fail "equity --script of payload $i does not run"
  check "equity --script of payload $i" "eq$i.svg"
  "$sebt" plot heatmap --sweep s.csv --x ema_fast --y vol_z --title "$p" --output "h$i.png" --script "h$i.gp" \
    2>err.txt || fail "heatmap --title payload $i: exit $?: $(cat err.txt)"
  check "heatmap --title payload $i" "h$i.png"
  # The file name gnuplot is told in the script: the payload as --output.
  name="o$i $(printf '%s' "$p" | tr -d '/').svg"
  "$sebt" plot heatmap --sweep s.csv --x ema_fast --y vol_z --output "$name" --script "n$i.gp" 2>err.txt ||
    fail "heatmap --output named by payload $i: exit $?: $(cat err.txt)"
  check "heatmap --output named by payload $i" "$name"
  rm -f "$name"
  gnuplot "n$i.gp" 2>/dev/null || fail "the script naming payload $i as its output does not run"
  check "the script naming payload $i as its output" "$name"
done

# A column name is text from the sweep's file: one sebt never writes is
# refused before anything is drawn (exit 2, named), so a payload there
# never reaches gnuplot either.
i=0
for p in "${payloads[@]}"; do
  i=$((i + 1))
  [[ $p == *$'\n'* || $p == *,* ]] && continue    # one CSV header cell
  { printf 'combo,ema_fast,vol_z,%s\n' "$p"; printf '0,12,1,0.5\n1,24,1,0.25\n2,12,2,0.75\n3,24,2,1\n'; } >c$i.csv
  "$sebt" plot heatmap --sweep c$i.csv --x ema_fast --y vol_z --metric "$p" --output "c$i.svg" 2>err.txt
  rc=$?
  [[ $rc == 2 ]] && grep -q "is not a column a sweep writes" err.txt ||
    fail "heatmap --metric payload $i: exit $rc: $(cat err.txt)"
  [[ -z $(ls "$work" | grep '^marker' || true) ]] || fail "heatmap --metric payload $i: gnuplot ran a command"
done
echo "ok"
