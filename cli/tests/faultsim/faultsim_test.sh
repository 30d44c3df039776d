#!/usr/bin/env bash
# Allocation fault injection: runs a small sweep, a parity check
# and a validate under sebt_faultsim with the Nth allocation failing, N swept
# over every allocation each makes (or BUDGET of them, spread, when there
# are more), and checks that each run ends cleanly: exit 5 with an
# "out of memory" message and no file left behind, or (where sebt works
# around the failure, e.g. by a smaller batch) exit 0 with the very output
# of the run without a fault. Anything else fails: another exit code, a
# crash, a different result, a leftover file, a leak (the sanitized CI pass
# builds sebt_faultsim with ASan; a leak makes the run exit non-zero).
# The run without a fault must give the reference backend's bits.
#   faultsim_test.sh SEBT_FAULTSIM SEBT FIXTURES BUDGET
set -u
fs=$1 sebt=$2 fixtures=$3 budget=${4:-150}
work=$(mktemp -d /tmp/sebt_faultsim_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export OMP_NUM_THREADS=1      # one allocation order: N means the same call in every run
failures=0 runs=0
FAULTSIM_STOP=()
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
zcat "$fixtures/data/BTCUSDT-1m-2019-01.csv.gz" | head -801 > data.csv
printf 'ema_fast = 2, 4\nema_slow = 8\nz_window = 5\natr_window = 3\nvol_z = 0, 1\ntr_z = 0\ncloc_min = 0.3\n' > grid.txt
mkdir inputs && mv data.csv grid.txt inputs/
: > sites.txt

# The two outputs equal but for the seconds they print (parity's table
# and summary: the only numbers with a decimal point), which the
# machine's load sets.
same_but_seconds() { cmp -s <(sed -E 's/[0-9]+\.[0-9]+/S/g' "$1") <(sed -E 's/[0-9]+\.[0-9]+/S/g' "$2"); }

# pick NAME OUT WHOLE VAR=VALUE CMD...: one run of the scenario with one
# allocation failing (VAR: SEBT_FAULT_NTH=N, or SEBT_FAULT_SITE=S for the
# first call at site S); WHOLE=1: it goes on past its failure.
pick() {
  local name=$1 out=$2 whole=$3 fault=$4; shift 4
  rm -rf ./* ./.[!.]* 2>/dev/null
  local stop=() sticky=()
  [ "$whole" = 0 ] && stop=("${FAULTSIM_STOP[@]}")
  [ "$whole" = 0 ] && [ "${#FAULTSIM_STOP[@]}" -gt 0 ] && [ "${fault%%=*}" = SEBT_FAULT_SITE ] &&
    sticky=(SEBT_FAULT_STICKY=1)
  env "$fault" "${sticky[@]}" SEBT_FAULT_LOG=log.txt "$@" "${stop[@]}" > stdout.txt 2> stderr.txt
  local rc2=$? failed
  runs=$((runs + 1))
  failed=$(sed -n 's/.*failed_site=//p' log.txt)
  echo "$name $failed" >> ../sites.txt
  # A site named must be the one that failed: else the run proved nothing
  # about it (the site was not reached).
  if [ "${fault%%=*}" = SEBT_FAULT_SITE ] && [ "$failed" != "${fault#*=}" ]; then
    bad=$((bad + 1)); fail "$name, the first allocation at ${fault#*=} failing: that site failed nothing ($failed)"
    return
  fi
  local left
  left=$(ls -A | grep -v '^log.txt$\|^stdout.txt$\|^stderr.txt$' | tr '\n' ' ')
  if [ "$rc2" -eq 5 ] && grep -q "out of memory" stderr.txt stdout.txt && [ -z "$left" ]; then
    clean=$((clean + 1))
  elif [ "$rc2" -eq 0 ] && { [ "$out" = "*" ] || { [ "$out" = - ] && same_but_seconds stdout.txt ../"$name.nofault"; } ||
                               { [ "$out" != - ] && cmp -s "$out" ../"$name.nofault"; }; }; then
    recovered=$((recovered + 1))
  else
    bad=$((bad + 1))
    [ "$bad" -le 8 ] && fail "$name, $fault failing ($failed): exit $rc2," \
      "left '$left': $(grep -v '^sebt.*: backend\|^$' stderr.txt | tail -2 | head -c 300)" \
      "$([ "$rc2" -eq 0 ] && diff "$([ "$out" = - ] && echo stdout.txt || echo "$out")" ../"$name.nofault" | head -4)"
  fi
}

# scenario NAME OUTFILE CMD...: OUTFILE is what the command writes; its run
# without a fault is the yardstick ("-": stdout; "*": exit 0 is enough, for
# a validate, whose report carries timings).
scenario() {
  local name=$1 out=$2; shift 2
  mkdir -p "run_$name" && cd "run_$name" || return
  rm -rf ./* ./.[!.]* 2>/dev/null
  SEBT_FAULT_SITES=../"$name.sites" SEBT_FAULT_LOG=log.txt "$@" > stdout.txt 2> stderr.txt
  local rc=$?
  if [ "$rc" -ne 0 ]; then fail "$name without a fault exited $rc: $(tail -3 stderr.txt)"; cd ..; return; fi
  local total
  total=$(sed -n 's/^allocs=\([0-9]*\).*/\1/p' log.txt | head -1)
  case $out in
  -|"*") cp stdout.txt ../"$name.nofault" ;;
  *) cp "$out" ../"$name.nofault" ;;
  esac
  # Each allocation site once, at its first call (SEBT_FAULT_SITES of the
  # run without a fault), in the first scenario that reaches it; for
  # validate, only with SEBT_FAULTSIM_VALIDATE=sites (the plain build), and
  # in its first quarter of allocations: past it, its mutants' fuzz makes
  # them, and a site first called there is a mutant's run_batch
  # (oracle_test_nomem fails each of their allocations).
  local firsts="" sites=""
  if [ "$name" != validate ] || [ "$validate_mode" = sites ]; then
    firsts=$(sort -n ../"$name.sites" | awk -v cut="$([ "$name" = validate ] && echo $((total / 4)) || echo "$total")" '
      FILENAME != "-" { done[$2] = 1; next }
      $1 <= cut && !($2 in done) { print }' ../sites.txt -)
    sites=$(echo "$firsts" | awk '{ print $2 }')
  fi
  # And allocations by number: BUDGET of them evenly spread. For validate
  # (SEBT_FAULTSIM_VALIDATE=1, the sanitized build), a sixth of BUDGET
  # evenly over log N, among its start-up (loading, replay, parity, fuzz),
  # and two more: a tenth of the way in (its fuzz) and half (its mutants'
  # fuzz), each run there costing that share of a whole validate.
  local picks=$total
  local cap=$budget
  [ "$name" = validate ] && cap=$((budget > 0 ? (budget + 2) / 3 : 500))
  if [ "$cap" -gt 0 ] && [ "$total" -gt "$cap" ]; then picks=$cap; fi
  local ns=""
  [ "$name" != validate ] || [ "$validate_mode" != sites ] &&
    ns=$(awk -v t="$total" -v p="$picks" -v logs="$([ "$name" = validate ] && echo 1 || echo 0)" 'BEGIN {
      if (!logs) for (i = 0; i < p; i++) print 1 + int(i * t / p)
      else {
        for (i = 1; i <= p / 2; i++) print int(exp(log(t) * i / (p / 2 + 1)))
        print 1 + int(t / 10); print 1 + int(t / 2)
      }
    }' | sort -n -u)
  echo "$name: $total allocations without a fault; failing $(echo "$ns" | grep -c .) of them by number" \
    "and the first call at each of $(echo "$sites" | grep -c .) sites"
  # One run goes on past its failure (the first pick past a tenth of the
  # allocations, or the last), the others stop there (FAULTSIM_STOP, e.g.
  # validate's --fail-fast: a validate carries on through its other checks
  # after one runs out of memory, a whole run's time for each pick).
  local whole=""
  [ "${#FAULTSIM_STOP[@]}" -gt 0 ] &&
    whole=$({ echo "$ns" | awk 'NF { print $1, "SEBT_FAULT_NTH=" $1 }'
              echo "$firsts" | awk 'NF { print $1, "SEBT_FAULT_SITE=" $2 }'; } | sort -n |
            awk -v w="$((1 + total / 10))" '$1 >= w { print $2; found = 1; exit } { last = $2 }
                                             END { if (!found) print last }')
  local n s bad=0 clean=0 recovered=0
  for n in $ns; do pick "$name" "$out" "$([ "SEBT_FAULT_NTH=$n" = "$whole" ] && echo 1 || echo 0)" "SEBT_FAULT_NTH=$n" "$@"; done
  for s in $sites; do pick "$name" "$out" "$([ "SEBT_FAULT_SITE=$s" = "$whole" ] && echo 1 || echo 0)" "SEBT_FAULT_SITE=$s" "$@"; done
  echo "$name: $clean clean out-of-memory exits, $recovered recovered with the same output, $bad wrong"
  cd ..
}

# The reference's bits, from the plain sebt.
"$sebt" sweep --backend reference --data inputs/data.csv --grid inputs/grid.txt --output ref.csv ||
  { echo "FAIL: the reference sweep"; exit 1; }
scenario sweep out.csv "$fs" sweep --backend fast_cpu --threads 1 --data ../inputs/data.csv --grid ../inputs/grid.txt \
  --output out.csv
cmp -s sweep.nofault ref.csv && echo "ok: the sweep without a fault gives the reference's bits" ||
  fail "the sweep without a fault differs from the reference's output"
scenario parity - "$fs" parity --backend fast_cpu --threads 1 --data ../inputs/data.csv --grid ../inputs/grid.txt
# validate: its runs are the longest (a third of the budget), each stopped
# at its out-of-memory check by --fail-fast but one. An allocation
# failing inside a check is out of memory (exit 5), never a failed check.
# --cases, not --time: the same cases in every run, so allocation N is the
# same call in every run and a failure replays with SEBT_FAULT_NTH=N (its
# output carries timings: exit 0 is the yardstick). SEBT_FAULTSIM_VALIDATE=0
# leaves it out; =sites fails the first call at each of its own sites (those
# the sweep and parity do not reach, in its first quarter), each run sticky
# (SEBT_FAULT_STICKY: every allocation after it fails too, so fast_cpu
# cannot work around it and run the whole validate to its end), and no
# allocation by number.
validate_mode=${SEBT_FAULTSIM_VALIDATE:-1}
[ "$validate_mode" != 0 ] && FAULTSIM_STOP=(--fail-fast) &&
  scenario validate "*" "$fs" validate --backend fast_cpu --no-isolate --no-speed --cases 100 \
  --threads 1 --data ../inputs/data.csv --save sv
FAULTSIM_STOP=()

sites=$(awk '{print $2}' sites.txt | grep -v '^none$' | sort -u | wc -l)
echo "allocation sites exercised: $sites distinct call sites over $runs runs (budget $budget a scenario)"
[ "$failures" -eq 0 ] && echo "all fault-injection runs ended cleanly" || { echo "$failures failure(s)"; exit 1; }
