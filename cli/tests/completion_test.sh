#!/usr/bin/env bash
# The bash completion script of `sebt completion bash`, sourced in bash:
# COMPREPLY for commands, options, enumerated values, parameter names and
# file names. Usage: completion_test.sh SEBT FIXTURES
set -u
sebt=$1 fixtures=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

script=$(mktemp -d "${TMPDIR:-/tmp}/sebt-completion.XXXXXX") || exit 1
trap 'rm -rf "$script"' EXIT
"$sebt" completion bash > "$script/sebt" || { echo "FAIL: sebt completion bash exited $?"; exit 1; }
# shellcheck disable=SC1091
source "$script/sebt" || { echo "FAIL: the script does not source"; exit 1; }
complete -p sebt >/dev/null || fail "no completion registered for sebt"

# expect "WORDS..." "WANT (sorted, space-separated)"
expect() {
  local want=$1; shift
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _sebt sebt "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  local got
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "$want" ]; then echo "ok: $* -> $got"; else fail "'$*': got '$got', want '$want'"; fi
}

expect "sweep" sebt sw
expect "--fill-gaps --format" sebt sweep --f
expect "csv json npy text" sebt sweep --format ""
expect "text" sebt fuzz --format t
expect "both filled plain" sebt parity --gaps ""
expect "ema_fast= ema_slow=" sebt run --set ema_
expect "fast_cpu" sebt run --backend fa
expect "$fixtures/data/BTCUSDT-15m-2017-2021.csv.gz" sebt run --data "$fixtures/data/BTCUSDT-15m"
expect "features fuzz" sebt help f
expect "bash" sebt completion b
expect "" sebt sweep --threads ""
# Every option of every command, as the parser's table has it.
for cmd in run features backends sweep merge parity fuzz validate report check-gpu; do
  want=$( ("$sebt" __options "$cmd" | cut -d' ' -f1; echo --help) | sort | tr '\n' ' ' | sed 's/ $//')
  expect "$want" sebt "$cmd" --
done

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all completion checks passed"
