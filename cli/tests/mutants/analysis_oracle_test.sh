#!/usr/bin/env bash
# The analysis columns fast_cpu and cuda make from their walk's tally are
# judged by `sebt parity` and `sebt validate`: a slip planted in the tally
# (sebt_mutants, core/test_faults.h) fails both, exit 1, naming the combo
# and the column with the reference's value and the backend's; the real
# sebt passes the same commands and says the columns were compared. A
# backend whose columns come from its trades (the reference, a mutant
# test subject) says that instead, in text, JSON and JUnit.
#   analysis_oracle_test.sh SEBT_MUTANTS SEBT FIXTURES_DIR SCOPE [CUDA_HOST_LIBRARY]
# SCOPE: all runs every check; a sanitized build splits them in two ctests
# (docs/ci.md, sanitize_skip): "parity" (the sebt parity runs) and
# "validate" (the two validates, a minute each under ASan).
set -u
mutants=$1 sebt=$2 fixtures=$3 scope=$4 cuda_host=${5:-}
case $scope in
  all|parity|validate) ;;
  *) echo "analysis_oracle_test.sh: SCOPE is all, parity or validate, not '$scope'"; exit 2 ;;
esac
data=$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv
work=$(mktemp -d /tmp/sebt_analysis_oracle_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
walk_line="analysis columns: from the backend's walk (its tally), compared with the reference's, 12 combos, bit for bit"
trades_line="analysis columns: from the backend's trades (compared through its trades)"

# The first divergence's reference and candidate values, and the trade
# count the detail names ("over its own N trades").
values() { grep -m1 -A2 "analysis $2 differs" "$1" | sed -n 's/^  reference: \([^ ]*\)   candidate: \([^ ]*\)$/\1 \2/p'; }
trades() { grep -m1 -o "over its own [0-9]* trades" "$1" | grep -o '[0-9]*'; }

# planted FAULT BACKEND COLUMN RELATION: parity on the planted sebt fails
# naming COLUMN, with the candidate's value RELATION (+n, -n: the
# reference's plus or minus the combo's trades; neg: its negation); the
# same parity on the real sebt passes, the columns compared.
planted() {
  local fault=$1 backend=$2 column=$3 rel=$4
  SEBT_TEST_FAULT=$fault "$mutants" parity --backend "$backend" --data "$data" --gaps plain > "$fault.txt" 2>&1
  local rc=$?
  [ "$rc" -eq 1 ] || { fail "$fault on $backend: parity exit $rc, expected 1: $(tail -3 "$fault.txt")"; return; }
  grep -q "^combo [0-9]*: analysis $column differs$" "$fault.txt" ||
    { fail "$fault on $backend: no combo named with analysis $column: $(cat "$fault.txt")"; return; }
  read -r ref cand <<< "$(values "$fault.txt" "$column")"
  local n want
  n=$(trades "$fault.txt")
  case $rel in
    +n) want=$((ref + n)) ;;
    -n) want=$((ref - n)) ;;
    neg) want=-$ref ;;
  esac
  [ -n "$ref" ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$cand" = "$want" ] ||
    { fail "$fault on $backend: reference $ref, candidate $cand over ${n:-?} trades, expected $want"; return; }
  pass "$fault on $backend: parity exit 1, analysis $column: reference $ref, candidate $cand ($n trades)"
  "$sebt" parity --backend "$backend" --data "$data" --gaps plain > real.txt 2>&1 ||
    { fail "$fault on $backend: the real sebt fails the same parity: $(tail -3 real.txt)"; return; }
  grep -qxF "$walk_line" real.txt || fail "$backend: the real parity does not say '$walk_line': $(cat real.txt)"
}

if [ "$scope" != validate ]; then
  # In fast_cpu's walk: each trade's bars in the market one too many.
  planted tally_bars_from_signal fast_cpu bars_in_market +n
  # In the figures made from any walk's tally (sebt_trade_stats_of_tally).
  planted bars_in_market_one_short fast_cpu bars_in_market -n
  planted profit_factor_sign_flipped fast_cpu profit_factor neg
  if [ -n "$cuda_host" ] && [ -f "$cuda_host" ]; then
    SEBT_CUDA_LIBRARY=$cuda_host OMP_NUM_THREADS=2 planted bars_in_market_one_short cuda bars_in_market -n
  else
    echo "skipped: cuda under host execution (its module is not built)"
  fi

  # JSON says where the columns come from and how many combos had them compared.
  "$sebt" parity --backend fast_cpu --data "$data" --gaps plain --format json > walk.json 2>/dev/null ||
    fail "fast_cpu parity --format json failed"
  grep -q '"analysis_columns":"walk"' walk.json && grep -q '"analysis_combos_compared":12,' walk.json ||
    fail "fast_cpu's JSON does not say walk, 12 combos: $(cat walk.json)"

  # Trade-path backends: the line, the JSON field and the JUnit output.
  # JUnit is XML: the apostrophe is written as an entity.
  trades_xml=$(sed "s/'/\&apos;/g" <<< "$trades_line")
  for b in reference mutant:none; do
    before=$failures
    "$sebt" parity --backend "$b" --data "$data" --gaps plain --junit "trades.xml" > trades.txt 2>&1 ||
      { fail "$b parity failed: $(tail -3 trades.txt)"; continue; }
    grep -qxF "$trades_line" trades.txt || fail "$b: parity does not say '$trades_line': $(cat trades.txt)"
    grep -qF "$trades_xml" trades.xml || fail "$b: the JUnit report does not say '$trades_xml': $(cat trades.xml)"
    "$sebt" parity --backend "$b" --data "$data" --gaps plain --format json > trades.json 2>/dev/null
    grep -q '"analysis_columns":"trades"' trades.json && grep -q '"analysis_combos_compared":0,' trades.json ||
      fail "$b: the JSON does not say trades, 0 combos: $(cat trades.json)"
    [ "$failures" -eq "$before" ] && pass "$b: its analysis columns from its trades, said in text, JSON and JUnit"
  done
fi

if [ "$scope" != parity ]; then
  # validate: the planted walk fails its parity checks; the real one passes,
  # saying so in text, Markdown and JUnit.
  args=(validate --backend fast_cpu --cases 2 --no-speed --data "$data")
  SEBT_TEST_FAULT=tally_bars_from_signal "$mutants" "${args[@]}" > v-planted.txt 2>&1
  rc=$?
  if [ "$rc" -ne 1 ]; then
    fail "validate on the planted walk: exit $rc, expected 1: $(tail -5 v-planted.txt)"
  elif ! grep -q "^fail   parity .* first: combo [0-9]*, analysis bars_in_market" v-planted.txt; then
    fail "validate on the planted walk: no parity check failed on analysis bars_in_market: $(cat v-planted.txt)"
  else
    pass "validate on the planted walk: exit 1, $(grep -c '^fail   parity' v-planted.txt) parity checks fail on analysis bars_in_market"
  fi
  "$sebt" "${args[@]}" --markdown v.md --junit v.xml > v.txt 2>&1 || fail "the real validate failed: $(tail -5 v.txt)"
  grep -q "^analysis columns: from the backend's walk (its tally), compared with the reference's, [1-9][0-9]* combos, bit for bit$" v.txt ||
    fail "the real validate's text does not say the columns were compared: $(tail -5 v.txt)"
  grep -q "^Analysis columns: from the backend's walk (its tally), compared with the reference's, [1-9][0-9]* combos" v.md ||
    fail "the real validate's Markdown does not say the columns were compared"
  grep -q "analysis columns of 12 combos compared" v.xml || fail "the real validate's JUnit does not say the columns were compared"
fi
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all passed"
