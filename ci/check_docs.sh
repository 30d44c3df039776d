#!/usr/bin/env bash
# The documentation's own checks (docs/ci.md, "Checks on the project itself").
#   check_docs.sh links ROOT   every relative link of ROOT/README.md and
#                              ROOT/docs/*.md names a file or folder that exists
#   check_docs.sh spec ROOT    ROOT/SPEC.md is byte for byte ROOT/../shared/SPEC.md,
#                              the contract it was copied from; exit 77 (skipped)
#                              where that file is absent (a fresh clone)
#   check_docs.sh --self-test  plants a broken link and a changed SPEC and
#                              expects both to be caught
set -euo pipefail

# Links outside code fences and code spans: [text](target). Web links and
# in-page anchors are not checked; "file#anchor" checks the file.
links() {
  local root=$1 bad=0 f target path
  for f in "$root/README.md" "$root"/docs/*.md; do
    [[ -f $f ]] || continue
    while IFS=$'\t' read -r line target; do
      case $target in
        http://*|https://*|mailto:*|'#'*) continue ;;
      esac
      path=${target%%#*}
      if [[ ! -e "$(dirname "$f")/$path" ]]; then
        echo "${f#"$root"/}:$line: broken link: $target"
        bad=1
      fi
    done < <(awk '
      /^[[:space:]]*```/ { fence = !fence; next }
      fence { next }
      {
        s = $0
        gsub(/`[^`]*`/, "", s)
        while (match(s, /\]\([^) ]+\)/)) {
          print NR "\t" substr(s, RSTART + 2, RLENGTH - 3)
          s = substr(s, RSTART + RLENGTH)
        }
      }' "$f")
  done
  if [[ $bad -ne 0 ]]; then return 1; fi
  echo "docs links: ok"
}

spec() {
  local root=$1 shared="$1/../shared/SPEC.md"
  if [[ ! -f $shared ]]; then
    echo "skipped: no $shared beside this checkout to compare SPEC.md with"
    return 77
  fi
  if ! cmp "$shared" "$root/SPEC.md"; then
    echo "SPEC.md differs from $shared: the SPEC lives in one file, copy it again"
    diff -u "$shared" "$root/SPEC.md" | head -40 || true
    return 1
  fi
  echo "SPEC.md: identical to $shared"
}

self_test() {
  local tmp rc
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/proj/docs" "$tmp/shared"
  printf '# x\n[ok](docs/a.md) [web](https://x.org) `[no](code.md)`\n```\n[no](fence.md)\n```\n' > "$tmp/proj/README.md"
  printf '[up](../README.md) [anchor](a.md#b) [self](#c)\n' > "$tmp/proj/docs/a.md"
  links "$tmp/proj" >/dev/null || { echo "self-test: good links reported broken"; return 1; }
  printf '[gone](missing.md)\n' >> "$tmp/proj/docs/a.md"
  if links "$tmp/proj" >/dev/null; then echo "self-test: a broken link was not caught"; return 1; fi
  printf 'contract\n' > "$tmp/shared/SPEC.md"
  cp "$tmp/shared/SPEC.md" "$tmp/proj/SPEC.md"
  spec "$tmp/proj" >/dev/null || { echo "self-test: identical SPECs reported different"; return 1; }
  printf 'contract.\n' > "$tmp/proj/SPEC.md"
  rc=0; spec "$tmp/proj" >/dev/null || rc=$?
  [[ $rc -eq 1 ]] || { echo "self-test: a changed SPEC was not caught (exit $rc)"; return 1; }
  rm "$tmp/shared/SPEC.md"
  rc=0; spec "$tmp/proj" >/dev/null || rc=$?
  [[ $rc -eq 77 ]] || { echo "self-test: a missing shared SPEC was not a skip (exit $rc)"; return 1; }
  echo "docs self-test: ok"
}

case ${1:-} in
  links) links "${2:?usage: check_docs.sh links ROOT}" ;;
  spec) spec "${2:?usage: check_docs.sh spec ROOT}" ;;
  --self-test) self_test ;;
  *) echo "usage: check_docs.sh links|spec ROOT | --self-test" >&2; exit 2 ;;
esac
