#!/usr/bin/env bash
# The documentation's own checks (docs/ci.md, "Checks on the project itself").
#   check_docs.sh links ROOT   every relative link of ROOT/README.md and
#                              ROOT/docs/*.md names a file or folder that exists
#   check_docs.sh spec ROOT    ROOT/SPEC.md is byte for byte ROOT/../shared/SPEC.md,
#                              the contract it was copied from; exit 77 (skipped)
#                              where that file is absent (a fresh clone)
#   check_docs.sh fences ROOT  every code fence of every .md file is closed,
#                              and none is "closed" by a fence line with text
#                              after it (which does not close it: the rest of
#                              the page would render as code)
#   check_docs.sh worklog ROOT no file outside bench/results cites an issue
#                              number or a work session, and no doc narrates
#                              when it was written: a reader of the repository
#                              has neither (the patterns are in worklog() below;
#                              dated measurements go to bench/results beside
#                              their command, history to git)
#   check_docs.sh --self-test  plants a broken link, a changed SPEC, broken
#                              fences and work-log words, and expects each to
#                              be caught
set -euo pipefail

# The files of ROOT: git's list (tracked and new, not ignored) in a
# checkout, else every file outside build folders.
project_files() {
  local root=$1
  local top
  top=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null) || top=""
  if [[ -n $top && $top == "$(cd "$root" && pwd -P)" ]]; then
    git -C "$root" ls-files --cached --others --exclude-standard
  else
    (cd "$root" && find . -path './build*' -prune -o -type f -print | sed 's|^\./||')
  fi
}

# CommonMark fences: a line of 3+ backticks or tildes (up to 3 spaces in)
# opens a block; only a fence of the same character, at least as long, with
# nothing but spaces after it, closes it.
fences() {
  local root=$1 bad=0 f
  while IFS= read -r f; do
    [[ -f "$root/$f" ]] || continue
    awk -v file="$f" '
      {
        line = $0
        if (match(line, /^ ? ? ?(```+|~~~+)/)) {
          fence = substr(line, RSTART, RLENGTH); sub(/^ +/, "", fence)
          rest = substr(line, RSTART + RLENGTH)
          if (!open) {
            if (substr(fence, 1, 1) == "`" && index(rest, "`")) next   # inline code, not a fence
            open = 1; ch = substr(fence, 1, 1); len = length(fence); at = NR
          } else if (substr(fence, 1, 1) == ch && length(fence) >= len) {
            if (rest ~ /^[ \t]*$/) open = 0
            else { printf "%s:%d: a code fence with text after it (\"%s\") does not close the block opened on line %d\n", file, NR, substr(line, 1, 40), at; bad = 1 }
          }
        }
      }
      END {
        if (open) { printf "%s:%d: this code fence is never closed: the rest of the page renders as code\n", file, at; bad = 1 }
        exit bad
      }' "$root/$f" || bad=1
  done < <(project_files "$root" | grep -E '\.md$')
  if [[ $bad -ne 0 ]]; then return 1; fi
  echo "docs fences: ok"
}

# What a work log says and a reference does not. In every file: an issue
# number (the word, then a number, a range or #number), a work session, a
# commit of main named as where something was run. In .md files also: this
# or that "round" of work, a measurement dated in the text (that belongs
# in bench/results), and a count of the people at work on the machine.
# SPEC.md is a copy of the contract (check_docs.sh spec) and is not ours to
# edit; bench/results holds the dated runs on purpose.
worklog() {
  local root=$1 bad=0 f hits
  local every='issues? ?#?[0-9]+|(this|last|previous|that|next) session|session.s (start|end)|until this (session|round|change|commit)|at main [0-9a-f]{7}'
  local docs='(this|last|previous|that|next) round\b|(measured|re-measured|counts|run) (on )?\(?20[0-9]{2}-[0-9]{2}-[0-9]{2}|\b([0-9]+|two|three|four|five|six|seven|eight|nine|ten) (other )?(helpers|engineers|agents)\b'
  local -a md=() other=()
  while IFS= read -r f; do
    case $f in bench/results/*|SPEC.md) continue ;; esac
    [[ -f "$root/$f" ]] || continue
    if [[ $f =~ [Ii]ssue_?[0-9]+ ]]; then
      echo "$f: the file's name cites an issue number"
      bad=1
    fi
    if [[ $f == *.md ]]; then md+=("$f"); else other+=("$f"); fi
  done < <(project_files "$root")
  if ((${#other[@]})) && hits=$(cd "$root" && grep -HnIiE -- "$every" "${other[@]}"); then
    cut -c1-200 <<<"$hits"
    bad=1
  fi
  if ((${#md[@]})) && hits=$(cd "$root" && grep -HnIiE -- "$every|$docs" "${md[@]}"); then
    cut -c1-200 <<<"$hits"
    bad=1
  fi
  if [[ $bad -ne 0 ]]; then
    echo "(a reference says what is and why; dated runs go to bench/results beside their command, history to git)"
    return 1
  fi
  echo "docs worklog: ok"
}

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

  # Fences: balanced ones, an info string and inline triple backticks pass;
  # a "closing" fence with text after it, and an unclosed one, do not.
  printf '# x\n```sh\nls\n```\n~~~\n```\n~~~\nuse ```code``` inline\n' > "$tmp/proj/docs/f.md"
  fences "$tmp/proj" >/dev/null || { echo "self-test: balanced fences reported broken"; return 1; }
  printf '```\n$ sebt sweep\n``` A progress bar\nmore\n```\n' > "$tmp/proj/docs/f.md"
  if fences "$tmp/proj" >/dev/null; then echo "self-test: a fence closed with text after it was not caught"; return 1; fi
  printf 'text\n```sh\nls\n' > "$tmp/proj/docs/f.md"
  if fences "$tmp/proj" >/dev/null; then echo "self-test: an unclosed fence was not caught"; return 1; fi
  rm "$tmp/proj/docs/f.md"

  # Work-log words (split here so that this file does not match itself).
  local iss="iss""ue" ses="ses""sion" plant
  worklog "$tmp/proj" >/dev/null || { echo "self-test: a clean project reported a work log"; return 1; }
  mkdir -p "$tmp/proj/bench/results" "$tmp/proj/core"
  printf 'measured %s-11-24 at %s abc1234 in %s 23\n' 2026 main "$iss" > "$tmp/proj/bench/results/history.md"
  printf 'a fuzz round; the last round of a campaign; that rounding\n' > "$tmp/proj/core/a.c"
  printf 'that rounding may change; test helpers; the other helpers of the library\n' > "$tmp/proj/core/a.md"
  worklog "$tmp/proj" >/dev/null || { echo "self-test: bench/results or a code 'round' reported"; return 1; }
  for plant in "c:/* see $iss 15, defect 2 */" "c:/* ${iss}s 18-23 */" "c:/* $iss #4 */" \
               "c:// until this $ses the writer" "c:/* the previous $ses */" "c:/* at ma""in 68ad0fb */" \
               "md:as of this round" "md:(measured 2026-11-24, load 14)" "md:Counts (2026-11-26, 2 cores)" \
               "md:2 cores shared by 8 hel""pers" "md:a VM six other hel""pers used"; do
    printf '%s\n' "${plant#*:}" > "$tmp/proj/core/b.${plant%%:*}"
    if worklog "$tmp/proj" >/dev/null; then echo "self-test: '${plant#*:}' was not caught"; return 1; fi
    rm "$tmp/proj/core/b.${plant%%:*}"
  done
  printf 'x\n' > "$tmp/proj/core/${iss}20_inputs_test.sh"
  if worklog "$tmp/proj" >/dev/null; then echo "self-test: a file named after an $iss was not caught"; return 1; fi
  echo "docs self-test: ok"
}

case ${1:-} in
  links) links "${2:?usage: check_docs.sh links ROOT}" ;;
  spec) spec "${2:?usage: check_docs.sh spec ROOT}" ;;
  fences) fences "${2:?usage: check_docs.sh fences ROOT}" ;;
  worklog) worklog "${2:?usage: check_docs.sh worklog ROOT}" ;;
  --self-test) self_test ;;
  *) echo "usage: check_docs.sh links|spec|fences|worklog ROOT | --self-test" >&2; exit 2 ;;
esac
