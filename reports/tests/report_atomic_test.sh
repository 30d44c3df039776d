#!/usr/bin/env bash
# sebt report is atomic: the programs it starts run in
# their own process groups and are stopped when sebt is interrupted or fails;
# the report is written into a folder beside --out and replaces it whole at
# the end. A fake slow sebt_bench and a fake slow gnuplot (SEBT_BENCH_BINARY,
# SEBT_GNUPLOT) hold the run at a known moment (they say when they are there,
# nothing waits on a clock); then sebt, or its whole process group, gets
# SIGINT, SIGTERM or SIGHUP, and the test checks that no process of theirs is
# left, nothing partial is under or beside --out, and the previous report,
# bench.json included, is byte for byte what it was.
#   report_atomic_test.sh SEBT RUN_OK.json
set -u
sebt=$1 json=$2
work=$(mktemp -d /tmp/sebt_report_atomic_XXXXXX)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Processes of a process group, zombies aside (they write nothing), read
# from /proc: procps need not be installed.
group_members() {
  local f rest
  for f in /proc/[0-9]*/stat; do
    rest=$(sed 's/.*) //' "$f" 2>/dev/null) || continue
    set -- $rest
    [ "$#" -ge 3 ] && [ "$3" = "$want" ] && [ "$1" != Z ] && echo "${f#/proc/}"
  done
}
alive() { local want=$1; group_members | sed 's,/stat,,' | tr '\n' ' '; }
# Everything the fakes started is ended here whatever happened above, so a
# failing run leaves nothing behind either.
cleanup() {
  local g
  for g in $(cat "$work"/pgid.* "$work"/groups 2>/dev/null); do kill -KILL -- "-$g" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
# Each scenario starts with no pgid files; the groups seen before are kept
# for the cleanup above.
forget_pgids() { cat "$work"/pgid.* >> "$work/groups" 2>/dev/null; rm -f "$work"/pgid.*; }
cd "$work" || exit 1
export FAKE_DIR=$work/fake HISTORY=none
mkdir -p fake out

# The fakes. Each writes its process group to pgid.NAME, starts a
# grandchild (a background sleep: what a real program may leave running),
# leaves a partial file where the report is being written, says "ready"
# (its name, on the FIFO FAKE_READY), and waits. With FAKE_ALIVE (a FIFO),
# the fake and its grandchild hold it open for writing until they die. FAKE_MODE: slow (wait for ever), stubborn (ignore SIGTERM too),
# ok (finish at once with good output), truncated (exit 0 after writing half
# the JSON), fail (exit 3 saying why).
cat > fake/gnuplot <<EOF
#!/usr/bin/env bash
sed 's/.*) //' /proc/\$\$/stat | cut -d' ' -f3 > $work/pgid.gnuplot
[ -n "\${FAKE_ALIVE:-}" ] && exec 7> "\$FAKE_ALIVE"
case \${FAKE_MODE:-slow} in
ok) for f in \$(sed -n "s/^set output '\\(.*\\)'\$/\\1/p" "\$1"); do echo "figure \$f" > "\$f"; done; exit 0 ;;
esac
[ "\${FAKE_MODE:-slow}" = stubborn ] && trap '' TERM
sleep 1000 &
: > throughput_vs_combos.svg                                   # gnuplot's file, 0 bytes so far
head -c 16384 /dev/zero > throughput_vs_combos.png
[ -n "\${FAKE_READY:-}" ] && echo gnuplot > "\$FAKE_READY"
while :; do wait; done
EOF
cat > fake/sebt_bench <<EOF
#!/usr/bin/env bash
sed 's/.*) //' /proc/\$\$/stat | cut -d' ' -f3 > $work/pgid.bench
[ -n "\${FAKE_ALIVE:-}" ] && exec 7> "\$FAKE_ALIVE"
out=
for a in "\$@"; do case \$a in --benchmark_out=*) out=\${a#--benchmark_out=} ;; esac; done
case \${FAKE_MODE:-slow} in
ok) cp "$json" "\$out"; echo "fake bench: done"; exit 0 ;;
truncated) head -c 3000 "$json" > "\$out"; exit 0 ;;
fail) echo "fake bench: the machine caught fire"; exit 3 ;;
esac
[ "\${FAKE_MODE:-slow}" = stubborn ] && trap '' TERM
sleep 1000 &
head -c 3000 "$json" > "\$out"                                  # half a JSON so far
echo "fake bench: running"
[ -n "\${FAKE_READY:-}" ] && echo bench > "\$FAKE_READY"
while :; do wait; done
EOF
chmod +x fake/gnuplot fake/sebt_bench

fingerprint() { (cd "$1" && find . -type f -exec cksum {} + | sort -k3) 2>/dev/null; }
beside() { ls -A out | grep -v '^prev$' | tr '\n' ' '; }

# A previous report to protect, drawn with the fast fake gnuplot.
FAKE_MODE=ok SEBT_GNUPLOT=$work/fake/gnuplot "$sebt" report --out out/prev --from "$json" --history none \
  > prev.txt 2>&1 || { cat prev.txt; echo "FAIL: the first report"; exit 1; }
cmp -s out/prev/bench.json "$json" || fail "the first report's bench.json is not its source"
before=$(fingerprint out/prev)
[ -n "$before" ] || { echo "FAIL: the first report is empty"; exit 1; }

# interrupt WHAT SIGNAL TARGET MODE: starts a report held by the fake WHAT,
# waits until the fake is ready, sends SIGNAL to sebt (TARGET=pid) or to its
# whole process group (TARGET=group), then checks what is left.
# The fake says it is ready on a FIFO the test holds open both ways (a
# read waits for the line, however long starting takes; the bound only
# ends a run whose fake never came). Its processes hold alive.N until they
# die: its end, read after sebt is gone, says none of them is left, with
# no look at /proc a moment too soon (a process closes its files on the
# way out, a moment before /proc says Z).
mkfifo ready.fifo
exec 8<> ready.fifo
alive_n=0
interrupt() {
  local what=$1 sig=$2 target=$3 mode=$4 args line
  forget_pgids
  alive_n=$((alive_n + 1))
  local fifo=$work/alive.$alive_n
  mkfifo "$fifo"
  exec 5<> "$fifo" 6< "$fifo" 5>&-   # read-write first: neither open blocks
  if [ "$what" = bench ]; then
    args=(--quick --history none)
  else
    args=(--from "$json" --history none)
  fi
  # Job control: sebt leads a process group of its own, as a job of an
  # interactive shell does (and SIGINT is not ignored, as it would be for a
  # background command of a script), so that "the group" is sebt and
  # whatever stayed in it.
  set -m
  FAKE_MODE=$mode FAKE_READY=$work/ready.fifo FAKE_ALIVE=$fifo SEBT_GNUPLOT=$work/fake/gnuplot \
    SEBT_BENCH_BINARY=$work/fake/sebt_bench "$sebt" report --out out/prev "${args[@]}" > run.txt 2>&1 6<&- 8<&- &
  local pid=$!
  set +m
  if ! read -r -t 600 -u 8 line || [ "$line" != "$what" ]; then
    fail "$what/$sig/$target: the fake $what never got ready (${line:-nothing said}): $(cat run.txt)"
    kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exec 6<&-; return
  fi
  local child_group
  child_group=$(cat "pgid.$what")
  if [ "$target" = group ]; then kill "-$sig" -- "-$pid"; else kill "-$sig" "$pid"; fi
  { wait "$pid"; } 2>/dev/null
  local rc=$? want before_failures=$failures
  local label="$what ($mode) running, SIG$sig to sebt's $target"
  case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
  [ "$rc" -eq "$want" ] || fail "$label: sebt exited $rc, expected $want (death by the signal): $(tail -3 run.txt)"
  local left rc_read
  while read -r -t 600 -u 6 line; rc_read=$?; [ "$rc_read" -eq 0 ]; do :; done
  exec 6<&-; rm -f "$fifo"
  if [ "$rc_read" -ne 1 ]; then   # 1: the end; above 128: a holder stayed
    left=$(alive "$pid")
    fail "$label: a process of the $what held its FIFO 600 s after sebt ended; in sebt's group: ${left:-none}," \
      "in the $what's group $child_group: $(alive "$child_group")"
  fi
  [ "$(fingerprint out/prev)" = "$before" ] || fail "$label: the previous report changed:
$(diff <(echo "$before") <(fingerprint out/prev) | head -8)"
  [ -z "$(beside)" ] || fail "$label: left beside it: $(beside)"
  [ "$failures" -eq "$before_failures" ] && echo "ok: $label: exit $rc, nothing left running, the previous report intact"
}

for sig in INT TERM HUP; do
  for target in pid group; do
    interrupt bench "$sig" "$target" slow
    interrupt gnuplot "$sig" "$target" slow
  done
done
# A program that ignores SIGTERM is killed after the grace period.
interrupt bench INT group stubborn
interrupt gnuplot TERM pid stubborn

# expect_refused LABEL CODE PATTERN: the run just made failed as it should
# and changed nothing.
expect_refused() {
  local label=$1 code=$2 pattern=$3 rc=$4 before_failures=$failures
  [ "$rc" -eq "$code" ] || fail "$label: exit $rc, expected $code: $(tail -3 run.txt)"
  grep -q -- "$pattern" run.txt || fail "$label: no '$pattern' in: $(tail -3 run.txt)"
  [ "$(fingerprint out/prev)" = "$before" ] || fail "$label: the previous report changed"
  [ -z "$(beside)" ] || fail "$label: left beside it: $(beside)"
  local g
  for g in $(cat pgid.* 2>/dev/null); do
    [ -z "$(alive "$g")" ] || fail "$label: processes left in group $g: $(alive "$g")"
  done
  [ "$failures" -eq "$before_failures" ] && echo "ok: $label: exit $rc, the previous report intact"
}
# --quick whose benchmark wrote truncated JSON and exited 0: refused before
# anything is replaced.
forget_pgids
FAKE_MODE=truncated SEBT_GNUPLOT=$work/fake/gnuplot SEBT_BENCH_BINARY=$work/fake/sebt_bench \
  "$sebt" report --out out/prev --quick --history none > run.txt 2>&1
expect_refused "truncated bench.json" 2 "bench.json" $?
forget_pgids
FAKE_MODE=fail SEBT_GNUPLOT=$work/fake/gnuplot SEBT_BENCH_BINARY=$work/fake/sebt_bench \
  "$sebt" report --out out/prev --quick --history none > run.txt 2>&1
expect_refused "a failing benchmark" 1 "the machine caught fire" $?
# A folder holding what a report does not write is not replaced.
mkdir -p out/notes && echo keep > out/notes/notes.txt
FAKE_MODE=ok SEBT_GNUPLOT=$work/fake/gnuplot "$sebt" report --out out/notes --from "$json" --history none \
  > run.txt 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "holds 'notes.txt'" run.txt && [ "$(cat out/notes/notes.txt)" = keep ] &&
  [ "$(ls -A out/notes)" = notes.txt ] && echo "ok: a folder of other files is refused, named, untouched" ||
  fail "a folder of other files: exit $rc: $(cat run.txt)"
rm -rf out/notes

# A whole new run replaces the previous report at once: its files, and
# nothing of the old one (a stale figure is gone), nothing beside.
echo stale > out/prev/old_figure.svg
forget_pgids
FAKE_MODE=ok SEBT_GNUPLOT=$work/fake/gnuplot SEBT_BENCH_BINARY=$work/fake/sebt_bench \
  "$sebt" report --out out/prev --quick --history none > run.txt 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "a whole run: exit $rc: $(cat run.txt)"
[ ! -e out/prev/old_figure.svg ] || fail "a whole run kept a file of the old report"
cmp -s out/prev/bench.json "$json" || fail "a whole run: bench.json is not what the benchmark wrote"
grep -q "fake bench: done" out/prev/bench.log || fail "a whole run: bench.log is not the benchmark's output"
[ -s out/prev/index.html ] && [ -s out/prev/report.md ] || fail "a whole run: no index.html or report.md"
[ -z "$(beside)" ] || fail "a whole run: left beside it: $(beside)"
for g in $(cat pgid.* 2>/dev/null); do
  [ -z "$(alive "$g")" ] || fail "a whole run: processes left in group $g: $(alive "$g")"
done
# A redraw of the report's own JSON, in place: the log comes along.
FAKE_MODE=ok SEBT_GNUPLOT=$work/fake/gnuplot "$sebt" report --out out/prev --from out/prev/bench.json \
  --history none > run.txt 2>&1 || fail "a redraw in place: $(cat run.txt)"
grep -q "fake bench: done" out/prev/bench.log || fail "a redraw in place lost bench.log"
cmp -s out/prev/bench.json "$json" || fail "a redraw in place changed bench.json"
[ "$failures" -eq 0 ] && echo "ok: a whole run replaces the report, a redraw in place keeps its log"

[ "$failures" -eq 0 ] && echo "all report atomicity checks passed" || { echo "$failures failure(s)"; exit 1; }
