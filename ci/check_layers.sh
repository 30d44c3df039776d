#!/usr/bin/env bash
# The house's walls, read from the #include lines (docs/design.md):
#   - the CLI (cli/) is the top floor: no file outside it includes from it;
#   - fast_cpu/ and gpu/ never include reference code;
#   - reference/ includes nothing of the project but the public types
#     (include/sebt/types.h, analysis.h, backend.h, backends.h);
#   - include/ and core/ (the library) include only the public headers and
#     core itself, but for the library's checkers of a sweep and of a
#     walk-forward (sweep_verify.c, sweep_exact.c, walkforward_check.c),
#     which recompute on the reference's own code (reference/ref.h): the
#     checking side reaches the oracle, never the other way round;
#     reports/ only those and itself;
#   - oracle/ includes no production backend (fast_cpu/, gpu/): it judges them;
#   - nothing outside bench/ includes from bench/ (the CLI measures through
#     the library, not through the benchmark's code).
# A quoted include is resolved as the compiler would: beside the file, then
# in include/. Exit 0 when every wall holds, 1 naming each breach.
set -uo pipefail
if [[ "${1:-}" == "--self-test" ]]; then
  # A check that cannot fail is no check: plant one breach of each wall in a
  # scratch tree and expect all three reported.
  t="$(mktemp -d)"; trap 'rm -rf "$t"' EXIT
  mkdir -p "$t"/{cli,core,fast_cpu,reference,oracle,reports,bench,include/sebt}
  echo '/* x */' > "$t/cli/cli.h"; echo '/* x */' > "$t/reference/ref.h"
  echo '/* x */' > "$t/include/sebt/grid.h"; echo '/* x */' > "$t/include/sebt/types.h"
  echo '/* x */' > "$t/fast_cpu/k.h"; echo '/* x */' > "$t/bench/b.h"; echo '/* x */' > "$t/oracle/o.h"
  echo '#include "../cli/cli.h"' > "$t/core/a.c"
  echo '#include "../reference/ref.h"' > "$t/fast_cpu/b.c"
  printf '#include "sebt/grid.h"\n#include "sebt/types.h"\n#include "ref.h"\n' > "$t/reference/c.c"
  echo '#include "../oracle/o.h"' > "$t/core/d.c"
  echo '#include "../fast_cpu/k.h"' > "$t/oracle/e.c"
  echo '#include "../bench/b.h"' > "$t/cli/f.c"
  echo '#include "../reference/ref.h"' > "$t/reports/g.c"
  self="$(realpath "${BASH_SOURCE[0]}")"
  out="$(cd "$t" && GIT_DIR=/nonexistent bash "$self" "$t")"; rc=$?
  n="$(grep -c '^layer breach' <<<"$out")"
  echo "$out"
  if [[ $rc -eq 1 && $n -eq 8 ]]; then echo "check_layers self-test: 8 breaches found (core/a.c breaks two walls)"; exit 0; fi
  echo "check_layers self-test: expected exit 1 and 8 breaches, got exit $rc and $n" >&2; exit 1
fi
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root" || exit 2
breaches=0
checked=0

resolve() { # FILE INCLUDED -> the project path it names, or nothing
  local dir; dir="$(dirname "$1")"
  if [[ -f "$dir/$2" ]]; then realpath --relative-to="$root" "$dir/$2"
  elif [[ -f "include/$2" ]]; then realpath --relative-to="$root" "include/$2"
  fi
}

breach() { echo "layer breach: $1: $2"; breaches=$((breaches + 1)); }

while IFS= read -r file; do
  while IFS= read -r inc; do
    target="$(resolve "$file" "$inc")"
    [[ -z "$target" ]] && continue
    checked=$((checked + 1))
    case "$file" in cli/*) ;; *)
      [[ "$target" == cli/* ]] && breach "$file" "includes $inc ($target) from the CLI's floor" ;;
    esac
    case "$file" in fast_cpu/*|gpu/*)
      [[ "$target" == reference/* ]] && breach "$file" "includes reference code $inc ($target)" ;;
    esac
    case "$file" in reference/tests/*) ;; reference/*)
      case "$target" in reference/*|include/sebt/types.h|include/sebt/analysis.h|include/sebt/backend.h|include/sebt/backends.h) ;;
        *) breach "$file" "the reference may include only itself and the public types, not $target" ;; esac ;;
    esac
    case "$file:$target" in core/sweep_verify.c:reference/ref.h|core/sweep_exact.c:reference/ref.h|core/walkforward_check.c:reference/ref.h) ;; */tests/*:*) ;; include/*:*|core/*:*|reports/*:*)
      floor="${file%%/*}"
      case "$target" in include/*|"$floor"/*) ;;
        *) breach "$file" "$floor/ may include only the public headers and itself, not $target" ;; esac ;;
    esac
    case "$file" in oracle/*)
      [[ "$target" == fast_cpu/* || "$target" == gpu/* ]] &&
        breach "$file" "the oracle judges the production backends and includes none of them ($target)" ;;
    esac
    case "$file" in bench/*) ;; *)
      [[ "$target" == bench/* ]] && breach "$file" "includes $inc ($target) from bench/" ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
           git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cc' '*.cpp'
         else find . -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cc' \) -printf '%P\n'; fi)

if [[ $checked -eq 0 ]]; then
  echo "check_layers: no project #include resolved: nothing was checked" >&2
  exit 1
fi
echo "check_layers: $checked project includes checked, $breaches breaches"
[[ $breaches -eq 0 ]]
