#!/usr/bin/env bash
# ctest: the numba peer keeps its own copy of SPEC §2's rules (it is an
# independent implementation); this holds it to the one table. Every probe
# of param_probes (each rule's bound, the values next to it, the infinities
# and NaN) must get the verdict sebt_params_validate gives it. Skipped (77)
# when python3-numba is missing.
# usage: test_numba_param_rules.sh PYTHON PARAM_PROBES
set -u
py="$1" probes="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! "$py" -c "import numba" 2>/dev/null; then
  echo "SKIPPED: numba is not importable by $py (apt-get install python3-numba)"
  exit 77
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$probes" > "$tmp/want" || { echo "FAIL: param_probes exited $?"; exit 1; }
n="$(wc -l < "$tmp/want")"
refused="$(grep -c ' refused$' "$tmp/want")"
# A probe list that never crosses a rule would agree with anything.
[ "$n" -ge 40 ] && [ "$refused" -ge 20 ] || { echo "FAIL: only $n probes, $refused refused"; exit 1; }
cut -d' ' -f1,2 "$tmp/want" > "$tmp/probes"
"$py" "$here/numba_peer.py" --check-params "$tmp/probes" > "$tmp/got" || { echo "FAIL: the peer exited $?"; exit 1; }
if ! diff "$tmp/want" "$tmp/got"; then
  echo "FAIL: the numba peer's rules differ from sebt_param_table (< table, > peer)"
  exit 1
fi
echo "ok: the peer agrees with the table on $n probes ($refused refused)"
