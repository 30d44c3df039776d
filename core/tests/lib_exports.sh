#!/usr/bin/env bash
# libsebt.so exports the sebt_ names of the public headers and nothing
# else, and every function the installed headers declare (sebt.h, grid.h,
# oracle.h, sweep.h) is among them: a program linked against the library alone
# finds all of it.
# Usage: lib_exports.sh LIBSEBT.so INCLUDE_DIR
set -u
lib=$1 inc=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v nm >/dev/null || { echo "nm not found: skipped"; exit 77; }
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
[[ -n $syms ]] || fail "nm -D shows nothing defined in $lib"
strays=$(grep -v '^sebt_' <<<"$syms")
[[ -z $strays ]] || fail "$lib exports names without the sebt_ prefix: $(echo $strays)"
# Functions: a name followed by '(' outside comments; variables: extern.
declared=$(cat "$inc"/sebt/sebt.h "$inc"/sebt/grid.h "$inc"/sebt/oracle.h "$inc"/sebt/sweep.h "$inc"/sebt/oos.h \
  | sed -e 's://.*$::' | perl -0pe 's{/\*.*?\*/}{}gs' \
  | perl -ne 'print "$1\n" while /\b(sebt_[a-z0-9_]+)\(/g; print "$1\n" if /^extern .*\b(sebt_[a-z0-9_]+)\s*(\[[^\]]*\])?;/' \
  | sort -u)
[[ $(wc -l <<<"$declared") -ge 40 ]] || fail "found only $(wc -l <<<"$declared") declarations in the headers"
missing=$(comm -23 <(echo "$declared") <(echo "$syms"))
[[ -z $missing ]] || fail "declared in the headers but not exported by $lib: $(echo $missing)"
# And nothing else: each export is declared by a public header (the
# installed ones, or include/sebt's others: outfile.h, shard.h, ...).
public=$(cat "$inc"/sebt/*.h | sed -e 's://.*$::' | perl -0pe 's{/\*.*?\*/}{}gs' \
  | perl -ne 'print "$1\n" while /\b(sebt_[a-z0-9_]+)\(/g; print "$1\n" if /^extern .*\b(sebt_[a-z0-9_]+)\s*(\[[^\]]*\])?;/' \
  | sort -u)
extra=$(comm -13 <(echo "$public") <(echo "$syms"))
[[ -z $extra ]] || fail "$lib exports names no public header declares: $(echo $extra)"
echo "ok: $(wc -l <<<"$syms") symbols exported, all sebt_ and declared in include/sebt; all $(wc -l <<<"$declared") of the installed headers' among them"
