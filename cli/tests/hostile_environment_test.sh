#!/usr/bin/env bash
# What the environment and special files can do
# to a run. Each case once crashed, grew without bound or lifted a limit;
# now each exits 2 with a message naming the variable or the file.
#   hostile_environment_test.sh SEBT FIXTURES
set -u
sebt=$1 fixtures=$2
data=$fixtures/data/BTCUSDT-1m-2018-02-08.raw.csv
work=$(mktemp -d /tmp/sebt_hostile_env_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CODE PATTERN CMD...: CMD exits CODE, says PATTERN on stderr, leaves no out.csv.
expect() {
  local code=$1 pattern=$2; shift 2
  rm -f out.csv
  "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$* exited $rc, expected $code: $(head -c 300 err.txt)"; return; fi
  if ! grep -q -- "$pattern" err.txt; then fail "$*: stderr lacks '$pattern': $(head -c 300 err.txt)"; return; fi
  if [ -e out.csv ]; then fail "$*: left out.csv"; return; fi
  echo "ok ($code): $(grep -m1 error err.txt | head -c 160)"
}
printf 'ema_fast = 2, 3\nz_window = 3\natr_window = 2\n' > grid.txt

# 5: OMP_NUM_THREADS beyond --threads' limit crashed GOMP; now refused like --threads.
OMP_NUM_THREADS=100000 expect 2 "OMP_NUM_THREADS='100000': expected whole numbers from 1 to 4096" \
  "$sebt" sweep --data "$data" --grid grid.txt --output out.csv
OMP_NUM_THREADS=2,100000 expect 2 "OMP_NUM_THREADS='2,100000'" "$sebt" sweep --data "$data" --grid grid.txt
OMP_NUM_THREADS=2 "$sebt" sweep --data "$data" --grid grid.txt --output ok.csv || fail "OMP_NUM_THREADS=2 refused"

# 7: a blank and a sign made the limit 2^64-5.
for v in SEBT_MAX_COMBOS SEBT_MAX_GAP_FILL SEBT_MAX_INFLATE_MB; do
  printf 'ema_fast\n2\n3\n' > combos.csv
  env "$v= -5" "$sebt" sweep --data "$data" --combos combos.csv --fill-gaps --output out.csv >/dev/null 2>err.txt
  rc=$?
  if [ "$v" = SEBT_MAX_GAP_FILL ]; then
    # Only read where a gap is filled: one of 3 minutes here.
    printf 'open_time,open,high,low,close,volume\n0,1,1,1,1,1\n60000,1,1,1,1,1\n300000,1,1,1,1,1\n' > gap.csv
    env "$v= -5" "$sebt" run --data gap.csv --fill-gaps --output out.csv >/dev/null 2>err.txt
    rc=$?
  fi
  if [ "$v" = SEBT_MAX_INFLATE_MB ]; then
    # Only read for a gzip file.
    env "$v= -5" "$sebt" run --data "$fixtures/data/BTCUSDT-1m-2019-01.csv.gz" --output out.csv >/dev/null 2>err.txt
    rc=$?
  fi
  [ "$rc" -eq 2 ] && grep -q "$v=' -5': expected a whole number" err.txt && echo "ok (2): $v=' -5' refused" ||
    fail "$v=' -5' gave exit $rc: $(cat err.txt)"
done
SEBT_MAX_COMBOS=+5 expect 2 "SEBT_MAX_COMBOS='+5'" "$sebt" sweep --data "$data" --combos combos.csv --output out.csv
# A limit variable is checked at start-up, on paths that never consult it
# too: a plain streamed sweep, --format text, --fill-gaps on a file without
# gaps, a run of a plain CSV.
for v in SEBT_MAX_COMBOS SEBT_MAX_GAP_FILL SEBT_MAX_INFLATE_MB SEBT_MAX_STREAM_MB SEBT_FAST_CPU_MEMORY_MB; do
  for bad in ' -5' abc 0; do
    for how in sweep text fill run; do
      case $how in
        sweep) set -- sweep --data "$data" --grid grid.txt --output out.csv ;;
        text) set -- sweep --data "$data" --grid grid.txt --format text ;;
        fill) set -- run --data "$data" --fill-gaps --output out.csv ;;
        run) set -- run --data "$data" --output out.csv ;;
      esac
      env "$v=$bad" "$sebt" "$@" >/dev/null 2>err.txt
      rc=$?
      [ "$rc" -eq 2 ] && grep -q "$v='$bad': expected a whole number >= 1" err.txt && [ ! -e out.csv ] ||
        fail "$v='$bad' on $how gave exit $rc: $(head -c 200 err.txt)"
      rm -f out.csv
    done
  done
done
echo "ok: junk in any limit variable is exit 2 on every path"

# 6: special files were read whole (/dev/zero grew to 4.2 GB, then exit 1).
expect 2 "/dev/zero: not a regular file (a character device)" "$sebt" run --data /dev/zero --output out.csv
ln -s /dev/zero zero.txt
expect 2 "zero.txt: not a regular file (a character device)" "$sebt" sweep --data "$data" --grid zero.txt \
  --output out.csv
expect 2 "zero.txt: not a regular file" "$sebt" sweep --data "$data" --combos zero.txt --output out.csv
expect 2 "zero.txt: not a regular file" "$sebt" merge zero.txt --output out.csv
mkdir ck && ln -s /dev/zero "ck/chunk-0-2-0.sebt"
expect 2 "not a regular file" "$sebt" sweep --data "$data" --grid grid.txt --checkpoint ck --output out.csv
# plot heatmap --sweep read /dev/zero without end (2.6 GB in 6 s) and
# waited on a FIFO without a writer: every reader goes through one check
# (sebt_open_input). heatmap keeps every row, so it takes only a file;
# run --combo keeps one row at a time, so it reads a pipe too. Bounded
# here in memory and time only so that the unfixed reader fails instead of
# eating the machine; the refusal itself comes before a byte is read.
bounded() {
  if "$sebt" --version | grep -q 'ASan'; then timeout 60 "$@"; else (ulimit -v 4194304; timeout 60 "$@"); fi
}
export SEBT_GNUPLOT=/bin/true # a gnuplot, never run: the sweep file is refused first
expect 2 "/dev/zero: not a regular file (a character device)" \
  bounded "$sebt" plot heatmap --sweep /dev/zero --x ema_fast --y vol_z --format png --output out.csv
expect 2 "ck: not a regular file (a folder)" \
  bounded "$sebt" plot heatmap --sweep ck --x ema_fast --y vol_z --format png --output out.csv
expect 2 "zero.txt: not a regular file (a character device)" \
  bounded "$sebt" plot heatmap --sweep zero.txt --x ema_fast --y vol_z --format png --output out.csv
expect 2 "zero.txt: not a regular file (a character device)" bounded "$sebt" run --data "$data" --combo zero.txt:0 \
  --output out.csv
mkfifo sweep.fifo
expect 2 "sweep.fifo: not a regular file (a FIFO or pipe)" \
  bounded "$sebt" plot heatmap --sweep sweep.fifo --x ema_fast --y vol_z --format png --output out.csv
unset SEBT_GNUPLOT
expect 2 "ck: not a regular file (a folder)" "$sebt" run --data "$data" --combo ck:0 --output out.csv
# A pipe is read, up to a bound.
SEBT_MAX_STREAM_MB=1 expect 2 "not a regular file, and more than 1 MiB came out of it" \
  "$sebt" run --data <(yes 1) --output out.csv
"$sebt" run --data <(cat "$data") --output pipe.json && cmp -s pipe.json <("$sebt" run --data "$data") &&
  echo "ok: a pipe holding the data reads as the file" || fail "a pipe of the data gave another result"

# 9: --trades DIR followed a planted combo_N.csv link and overwrote its target.
mkdir trades && echo precious > precious.txt && ln -s ../precious.txt trades/combo_1.csv
expect 2 "trades/combo_1.csv is a symbolic link, not a trade file of sebt" \
  "$sebt" sweep --data "$data" --grid grid.txt --trades trades --output out.csv
[ "$(cat precious.txt)" = precious ] && echo "ok: the link's target is untouched" || fail "precious.txt was overwritten"
# 9: --output equal to an input silently replaced it.
cp "$data" mydata.csv && cp grid.txt mygrid.txt
expect 2 "--output mydata.csv would write over the input --data mydata.csv" "$sebt" run --data mydata.csv --output mydata.csv
expect 2 "would write over the input" "$sebt" sweep --data mydata.csv --grid mygrid.txt --output ./mygrid.txt
expect 2 "would write over the input" "$sebt" features --data mydata.csv --output "$work/mydata.csv"
cmp -s mydata.csv "$data" && cmp -s mygrid.txt grid.txt && echo "ok: the inputs are untouched" || fail "an input changed"
# 9: a byte order mark in a grid or combos file (data files accept one).
printf '\xef\xbb\xbfema_fast = 2, 3\nz_window = 3\natr_window = 2\n' > bom_grid.txt
"$sebt" sweep --data "$data" --grid bom_grid.txt --output bom.csv 2>err.txt &&
  "$sebt" sweep --data "$data" --grid grid.txt --output nobom.csv && cmp -s bom.csv nobom.csv &&
  echo "ok: a grid with a BOM gives the same sweep" || fail "a grid with a BOM: $(cat err.txt)"
printf '\xef\xbb\xbfema_fast,z_window,atr_window\n2,3,2\n3,3,2\n' > bom_combos.csv
"$sebt" sweep --data "$data" --combos bom_combos.csv --output bomc.csv 2>err.txt && cmp -s bomc.csv nobom.csv &&
  echo "ok: a combos file with a BOM gives the same sweep" || fail "a combos file with a BOM: $(cat err.txt)"
# 9: an empty grid ran one default combo without a word.
printf '# nothing yet\n\n' > empty_grid.txt
expect 2 "empty_grid.txt: the grid sets no parameter" "$sebt" sweep --data "$data" --grid empty_grid.txt --output out.csv

[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
