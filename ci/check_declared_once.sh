#!/usr/bin/env bash
# The strategy is declared once (include/sebt/strategy.def): outside it and
# the independent copies that keep their own literal code on purpose
# (reference/, oracle/plugin-template/, bench/peers/numba_peer.py,
# python/examples/spec_kernel.py) and the tests and fuzz harnesses, no
# source file spells a
# feature column's or a signal term's name as a string literal ("cloc",
# 'tr_z'); code takes them from sebt_feature_table and sebt_term_table (or,
# in a kernel, from the HELLO). Comments do not count. The list the numba
# peer keeps by hand (PARAMS) names the declaration's parameters in its
# order, with its kinds and defaults; the kernel module keeps none (its
# PARAMS and FEATURE_NAMES start empty and are filled from the HELLO).
# usage: check_declared_once.sh ROOT | --self-test. Exit 0 clean, 1 naming
# each literal, 77 without python3.
set -uo pipefail
command -v python3 >/dev/null || { echo "SKIPPED: no python3"; exit 77; }
if [[ "${1:-}" == "--self-test" ]]; then
  # A check that cannot fail is no check: plant a literal in C, one in
  # Python and one inside a comment (not a breach), and expect two; a
  # numba PARAMS off the declaration and a kernel module's list by hand.
  t="$(mktemp -d)"; trap 'rm -rf "$t"' EXIT
  mkdir -p "$t/include/sebt" "$t/core" "$t/python" "$t/reference"
  printf 'SEBT_FEATURE(cloc, "high low close", "")\nSEBT_TERM(ema, ema_f, LT, COLUMN, ema_s, ALWAYS)\n' \
    > "$t/include/sebt/strategy.def"
  printf 'static const char *a = "cloc"; /* "ema" */\n' > "$t/core/a.c"
  printf 'x = {"ema": 1}  # "cloc"\n' > "$t/python/b.py"
  printf 'static const char *c = "cloc";\n' > "$t/reference/c.c"
  printf 'SEBT_PARAM(ema_fast, int32_t, INT, 1, false, 96, WINDOW)\n' >> "$t/include/sebt/strategy.def"
  mkdir -p "$t/bench/peers"
  printf 'PARAMS = [("ema_fast", "i", 48)]\n' > "$t/bench/peers/numba_peer.py"
  printf 'PARAMS = [("ema_fast", np.int64)]\nFEATURE_NAMES = []\n' > "$t/python/sebt_kernel.py"
  out="$(bash "${BASH_SOURCE[0]}" "$t")"; rc=$?
  echo "$out"
  n="$(grep -c '^spelled by hand' <<<"$out")" m="$(grep -c '^copy differs' <<<"$out")"
  if [[ $rc -eq 1 && $n -eq 2 && $m -eq 2 ]]; then
    echo "check_declared_once self-test: 2 literals and 2 lists found"; exit 0
  fi
  echo "check_declared_once self-test: expected exit 1, 2 literals, 2 lists; got exit $rc, $n and $m" >&2; exit 1
fi
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
python3 - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
decl = open(os.path.join(root, "include/sebt/strategy.def")).read()
decl = re.sub(r"/\*.*?\*/", "", decl, flags=re.S)
names_all = names = set(re.findall(r"^SEBT_FEATURE\((\w+)", decl, re.M)) | set(re.findall(r"^SEBT_(?:TERM|FILTER)\((\w+)", decl, re.M))
copies = ("include/sebt/strategy.def", "reference/", "oracle/plugin-template/", "bench/peers/numba_peer.py",
          "python/examples/spec_kernel.py")
# The package's examples name parameters, and vol_z is a parameter as well
# as a column (its feature names come from libsebt's sebt_feature_table).
pending = ("python/sebt/",)
lit = re.compile(r"""(["'])(%s)\1""" % "|".join(sorted(names)))
bad = 0
for top in ("core", "cli", "oracle", "fast_cpu", "gpu", "reference", "bench", "python", "reports", "include"):
    for d, subdirs, files in os.walk(os.path.join(root, top)):
        subdirs[:] = [s for s in subdirs if s not in ("tests", "fuzz", "__pycache__")]  # tests and fuzz harnesses
        for f in files:
            path = os.path.relpath(os.path.join(d, f), root)
            if not f.endswith((".c", ".h", ".cu", ".cc", ".py", ".def")) or path.startswith(copies + pending):
                continue
            text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
            if f.endswith(".py"):
                text = re.sub(r"#[^\n]*", "", text)
            else:
                text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
                text = re.sub(r"//[^\n]*", "", text)
            for i, line in enumerate(text.split("\n"), 1):
                for m in lit.finditer(line):
                    print("spelled by hand: %s:%d: %s (take it from sebt/strategy.def's tables)" % (path, i, m.group(0)))
                    bad += 1

import ast
params = re.findall(r"^SEBT_PARAM\((\w+),\s*\w+,\s*(\w+),[^,]*,[^,]*,\s*([^,]+),", decl, re.M)
features = re.findall(r"^SEBT_FEATURE\((\w+)", decl, re.M)

def literal_list(path, var):
    """The value of `var = [...]` in a Python file, read without running it."""
    full = os.path.join(root, path)
    if not os.path.exists(full):
        return None
    for node in ast.parse(open(full).read()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == var for t in node.targets):
            return node.value
    return None

def differs(path, what, got, want):
    global bad
    if got != want:
        print("copy differs: %s: %s is %s, sebt/strategy.def says %s" % (path, what, got, want))
        bad += 1

def num(text):
    return {"true": True, "false": False}.get(text.strip(), None) if text.strip() in ("true", "false") \
        else float(text)

peer = literal_list("bench/peers/numba_peer.py", "PARAMS")
if peer is not None:
    rows = [tuple(ast.literal_eval(e) for e in t.elts) for t in peer.elts]
    differs("bench/peers/numba_peer.py", "PARAMS", [(n, k, float(d)) for n, k, d in rows],
            [(n, {"INT": "i", "DOUBLE": "f", "BOOL": "b"}[k], float(num(d))) for n, k, d in params])
# The kernel module reads the declaration from sebt's HELLO: a list of its
# own would be a second declaration.
for var in ("PARAMS", "FEATURE_NAMES", "TERMS"):
    value = literal_list("python/sebt_kernel.py", var)
    if value is not None and not (isinstance(value, ast.List) and not value.elts):
        print("copy differs: python/sebt_kernel.py: %s is written by hand; it is filled from the HELLO" % var)
        bad += 1
print("check_declared_once: %d names of feature columns and signal terms, %d literals or lists that differ"
      % (len(names_all), bad))
sys.exit(1 if bad else 0)
PY
