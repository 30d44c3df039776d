#!/usr/bin/env bash
# A planted bug of the kinds only the metrics-only path, big calls or many
# threads show (oracle/tests/plugins/planted.c, fast_planted.c) is caught
# by the release gate as a kernel author runs it: `sebt validate --cases
# 10000` (the fuzz budget that also turns on the big call; in cases, so
# the same cases run on a machine of any speed), exit 1,
# stopping at the first catch (--fail-fast,
# so the test costs what the catch costs; parity on the small DATA file,
# so it does not cost the bundled set's ~20 s). The reproducer it prints
# replays: exit 1 again (a crash: killed by the same kind of signal). A
# race is only asked to fail the gate (how often it diverges is the race
# report's business). A bug only the big call sees (kind big-call) is run
# with --big-call: in a whole run the big call is budgeted by the machine's
# measured speed, and a slow machine reports it not checked.
# Usage: planted_gate.sh SEBT DATA PLUGIN [race|big-call]
set -u
sebt=$1 data=$2 plugin=$3 kind=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
extra=()
[[ $kind == big-call ]] && extra=(--big-call)
"$sebt" validate --backend "$plugin" --cases 10000 --fail-fast --no-speed --data "$data" --save "$tmp/save" "${extra[@]}" \
  >"$tmp/out" 2>&1
rc=$?
caught=$(grep -m1 -E '^(fail|crash) ' "$tmp/out")
echo "validate: exit $rc; caught by: ${caught:-nothing}"
if [[ $rc != 1 || -z $caught ]]; then
  echo "FAIL: the planted bug was not caught (want exit 1 and a failed check):"; cat "$tmp/out"; exit 1
fi
grep -A12 -m1 -E '^[a-z-]+ .*: (fail|crash): ' "$tmp/out"
[[ $kind == race ]] && exit 0
line=$(grep -m1 '^replay: ' "$tmp/out" | sed 's/^replay: sebt //')
if [[ -z $line ]]; then
  echo "FAIL: no replay line"; exit 1
fi
echo "replay: sebt $line"
# shellcheck disable=SC2086 # the printed command, split as a shell would (no spaces in its paths here)
(cd "$tmp" && "$sebt" $line >"$tmp/replay" 2>&1)
rrc=$?
if [[ $rrc == 1 || ( $caught == crash* && $rrc -ge 128 ) ]]; then
  echo "ok: the reproducer replays (exit $rrc)"
  exit 0
fi
echo "FAIL: the reproducer does not replay (exit $rrc):"; tail -20 "$tmp/replay"; exit 1
