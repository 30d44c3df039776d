#!/usr/bin/env bash
# `sebt plot` ended by SIGTERM, SIGINT or SIGHUP while gnuplot runs stops
# gnuplot, leaves no $TMPDIR/sebt-plot-* folder and no --output, and dies of
# the signal (128+N). The race is certain: a fake gnuplot says it runs
# through a FIFO the test reads, then waits to be stopped. Needs no real
# gnuplot.
# Usage: plot_signal_test.sh SEBT FIXTURES_DIR
set -u
sebt=$1 data=$2/data/BTCUSDT-1m-2018-02-08.raw.csv
work=$(mktemp -d /tmp/sebt_plot_signal_XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mkdir tmp
mkfifo started
exec 3<> started   # read and write: never blocks opening, even if no gnuplot comes
cat > gnuplot <<'G'
#!/bin/sh
# Never draws: its pid into the FIFO, then it waits to be stopped (no timer).
echo $$ > "$PLOT_STARTED"
exec tail -f /dev/null   # until signalled: no clock
G
chmod +x gnuplot
# Job control: a background job keeps SIGINT at its default action.
set -m
for sig in TERM INT HUP; do
  TMPDIR=$work/tmp SEBT_GNUPLOT=$work/gnuplot PLOT_STARTED=$work/started \
    "$sebt" plot equity --data "$data" --output p.png 2> err.txt &
  pid=$!
  gp=""
  read -r -t 300 gp <&3   # returns once the fake gnuplot runs
  if [ -z "$gp" ]; then
    kill -KILL "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    fail "SIG$sig: gnuplot never started: $(tail -2 err.txt)"
    continue
  fi
  held=$(ls tmp)
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  want=$((128 + $(kill -l "$sig")))
  if [ -z "$held" ]; then
    fail "SIG$sig: no scratch folder while gnuplot ran: the race was not reached"
  elif [ "$rc" -ne "$want" ]; then
    fail "SIG$sig: exit $rc, want $want: $(tail -2 err.txt)"
  elif [ -n "$(ls -A tmp)" ]; then
    fail "SIG$sig: left in \$TMPDIR: $(ls -A tmp)"
    rm -rf tmp/*
  elif [ -e p.png ]; then
    fail "SIG$sig: an --output was written"
  elif kill -0 "$gp" 2> /dev/null; then
    fail "SIG$sig: gnuplot ($gp) still runs"
    kill -KILL "$gp"
  else
    echo "ok: SIG$sig while gnuplot ran: exit $rc, $held removed, gnuplot stopped"
  fi
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "an interrupted plot leaves no scratch folder"
