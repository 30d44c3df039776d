#!/usr/bin/env bash
# Out of memory in validate's late checks is out of memory: the written
# sweep's grid parse and the series-cache check each get their first
# allocation failed (sebt_faultsim's SEBT_FAULT_SITE), and validate must
# exit 5 naming that check, write no reproducer, and stop there
# (--fail-fast), not exit 2 as a usage error with a written.grid saved.
# The sites are found by name (addr2line over the sites a small cached
# sweep records), so no allocation number is written down here; each run
# checks that the site it named is the one that failed.
#   validate_stages_test.sh SEBT_FAULTSIM FIXTURES
set -u
fs=$1 fixtures=$2
command -v addr2line > /dev/null || { echo "SKIP: no addr2line (binutils)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d /tmp/sebt_faultsim_stages_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export OMP_NUM_THREADS=1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
zcat "$fixtures/data/BTCUSDT-1m-2019-01.csv.gz" | head -801 > data.csv
printf 'ema_fast = 2, 4\nema_slow = 8:10:2\nz_window = 5\natr_window = 3\n' > grid.txt

# The sites: a sweep through a fresh series cache (of the bundled month:
# a file too small is not cached) with a ranged grid reaches both
# functions; each site is named by the innermost function addr2line gives
# for it (inlined ones included).
SEBT_CACHE_DIR="$work/cache" SEBT_CACHE_STATS=1 SEBT_FAULT_SITES=sites.txt SEBT_FAULT_LOG=log.txt \
  "$fs" sweep --backend fast_cpu --threads 1 --data "$fixtures/data/BTCUSDT-1m-2019-01.csv.gz" --grid grid.txt \
  --output out.csv > /dev/null 2> sweep-err.txt ||
  { echo "FAIL: the sweep that lists the sites"; exit 1; }
site_of() {
  local n s
  while read -r n s; do
    [ "${s%+*}" = "${fs##*/}" ] || continue
    [ "$(addr2line -f -i -s -e "$fs" "${s#*+}" | head -1)" = "$1" ] && { echo "$s"; return; }
  done < <(sort -n sites.txt)
}

# expect FUNCTION CHECK: the first allocation at FUNCTION's site fails in
# validate; CHECK (stage/name in the JSON) must be the check that ended
# in an error, every other check passed or skipped.
expect() {
  local func=$1 check=$2 site rc before=$failures
  site=$(site_of "$func")
  [ -n "$site" ] || { fail "no allocation site found in $func"; return; }
  rm -rf sv out.json err.txt vlog.txt
  SEBT_FAULT_SITE=$site SEBT_FAULT_LOG=vlog.txt "$fs" validate --backend fast_cpu --no-isolate --no-speed \
    --cases 1 --threads 1 --data data.csv --save sv --fail-fast --format json > out.json 2> err.txt
  rc=$?
  local failed
  failed=$(sed -n 's/.*failed_site=//p' vlog.txt)
  [ "$failed" = "$site" ] || { fail "$func ($site): that site failed nothing in validate ($failed)"; return; }
  [ "$rc" -eq 5 ] || fail "$func: validate exited $rc, not 5 (out of memory): $(tail -2 err.txt)"
  [ -z "$(ls -A sv 2> /dev/null)" ] || fail "$func: a reproducer was saved for an out of memory: $(ls sv)"
  local verdict
  verdict=$(python3 - "$check" out.json << 'EOF'
import json, sys
want, path = sys.argv[1], sys.argv[2]
checks = json.load(open(path))["checks"]
bad = [f"{c['stage']}/{c['name']}: {c['status']}" for c in checks if c["status"] not in ("pass", "skipped")]
errors = [f"{c['stage']}/{c['name']}" for c in checks if c["status"] == "error"]
msg = [c["message"] for c in checks if f"{c['stage']}/{c['name']}" == want]
if errors != [want] or len(bad) != 1 or not msg or "out of memory" not in msg[0]:
    print("; ".join(bad) or "no check ended in an error", "|", msg)
EOF
)
  [ -z "$verdict" ] || fail "$func: expected only '$check' to end in out of memory: $verdict"
  [ "$failures" -eq "$before" ] && echo "ok: $func failing: exit 5, '$check' out of memory, nothing saved"
}

expect parse_range "written-sweep/csv, read back"
# A build without xxhash has no series cache, and validate skips its check.
if grep -q "series cache: off" sweep-err.txt; then
  echo "skipped: the series cache's key (this build has no series cache)"
else
  expect file_key "written-sweep/series cache against a fresh parse"
fi

[ "$failures" -eq 0 ] && echo "validate's written sweep and series cache: out of memory is exit 5" ||
  { echo "$failures failure(s)"; exit 1; }
