#!/usr/bin/python3
"""ctest copies_declared: the independent copies of the strategy keep their
own literal code (bench/peers/numba_peer.py, python/examples/spec_kernel.py,
the template's mine.c and mine.cu), and this holds each to the declaration
sebt sends in its HELLO (include/sebt/strategy.def, read back through the
kernel protocol by declaration_kernel.py): the parameters' names, order,
types, defaults and bounds, the feature columns' names and order, and, for
the C copies, that every parameter is read and every column written. Reads
the copies as text (ast, regular expressions): no numpy or numba needed.

    test_copies_declared.py PYTHON SEBT SOURCE_ROOT
"""
import ast
import json
import math
import os
import re
import subprocess
import sys
import tempfile

py, sebt, root = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
failures = []


def fail(copy, msg):
    failures.append("%s: %s" % (copy, msg))


def declaration():
    with tempfile.TemporaryDirectory(prefix="sebt-decl-") as tmp:
        out = os.path.join(tmp, "decl.json")
        cmd = [sebt, "backends", "--backend", "exec:%s %s %s" % (py, os.path.join(here, "declaration_kernel.py"), out)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
        with open(out) as f:
            return json.load(f)


def module_value(path, name):
    """The literal a module assigns to name at its top level."""
    tree = ast.parse(open(path).read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError("%s assigns no %s" % (path, name))


def same_default(a, b):
    return float(a) == float(b)


def check_python_params(copy, mine, decl):
    """mine: [(name, type, min, min_excluded, default)], type int|double|bool,
    min None for no bound."""
    names = [m[0] for m in mine]
    want = [p["name"] for p in decl["params"]]
    if names != want:
        fail(copy, "parameters %s; the declaration's are %s" % (names, want))
        return
    for m, p in zip(mine, decl["params"]):
        name, typ, lo, excl, default = m
        if typ != p["type"]:
            fail(copy, "%s is %s, declared %s" % (name, typ, p["type"]))
        dlo = None if math.isinf(p["min"]) else p["min"]
        if (lo, bool(excl) if lo is not None else False) != (dlo, p["min_excluded"] if dlo is not None else False):
            bound = lambda lo, excl: "none" if lo is None else "%s %r" % (">" if excl else ">=", lo)  # noqa: E731
            fail(copy, "%s's bound is %s, declared %s" % (name, bound(lo, excl), bound(dlo, p["min_excluded"])))
        if not same_default(default, p["default"]):
            fail(copy, "%s's default is %r, declared %r" % (name, default, p["default"]))


def check_columns(copy, cols, decl):
    if list(cols) != decl["columns"]:
        fail(copy, "feature columns %s; the declaration's are %s" % (list(cols), decl["columns"]))


def numba_bounds(path):
    """check_param's rules: {name: (min, excluded)} from its lambdas `x >= 1`."""
    tree = ast.parse(open(path).read(), path)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check_param")
    rules = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                c = v.body
                op = type(c.ops[0])
                rules[ast.literal_eval(k)] = (ast.literal_eval(c.comparators[0]), op is ast.Gt)
    return rules


def check_numba(decl):
    copy = "bench/peers/numba_peer.py"
    path = os.path.join(root, copy)
    params = module_value(path, "PARAMS")
    rules = numba_bounds(path)
    kinds = {"i": "int", "f": "double", "b": "bool"}
    mine = []
    for name, kind, default in params:
        lo, excl = rules.get(name, (None, False))
        mine.append((name, kinds[kind], lo, excl, default))
    check_python_params(copy, mine, decl)
    check_columns(copy, module_value(path, "COLUMNS"), decl)
    for group, kind in (("INT_NAMES", "i"), ("FLT_NAMES", "f"), ("BOOL_NAMES", "b")):
        names = module_value(path, group)
        want = [n for n, k, _ in params if k == kind]
        if sorted(names) != sorted(want):
            fail(copy, "%s holds %s, its PARAMS of that kind are %s" % (group, names, want))


def check_spec_example(decl):
    copy = "python/examples/spec_kernel.py"
    path = os.path.join(root, copy)
    check_python_params(copy, module_value(path, "PARAMS"), decl)
    check_columns(copy, module_value(path, "COLUMNS"), decl)


def check_c(copy, decl, column_list_re):
    text = open(os.path.join(root, copy)).read()
    for p in decl["params"]:
        if not re.search(r"\bp->%s\b" % p["name"], text):
            fail(copy, "never reads the parameter %s (p->%s)" % (p["name"], p["name"]))
    for c in decl["columns"]:
        if not re.search(r"\bf(->|\.)%s\b" % c, text):
            fail(copy, "never writes the feature column %s" % c)
    if "sebt_params_validate" not in text:
        fail(copy, "does not check its combos against SPEC §2 (sebt_params_validate)")
    if column_list_re:
        m = re.search(column_list_re, text, re.S)
        if not m:
            fail(copy, "no list of the columns it copies back")
        else:
            got = re.findall(r"out->(\w+)", m.group(1))
            check_columns(copy, got, decl)
        n = re.search(r"#define MINE_COLUMNS (\d+)", text)
        if not n or int(n.group(1)) != len(decl["columns"]):
            fail(copy, "MINE_COLUMNS is %s, the declaration has %d columns" % (n and n.group(1),
                                                                               len(decl["columns"])))


decl = declaration()
if len(decl["params"]) < 15 or len(decl["columns"]) < 7 or len(decl["terms"]) < 4:
    sys.exit("FAIL: the declaration read back is too short to hold anything to: %s" % decl)
check_numba(decl)
check_spec_example(decl)
check_c("oracle/plugin-template/mine.c", decl, None)
check_c("oracle/plugin-template/mine.cu", decl, r"double \*dst\[MINE_COLUMNS\] = \{(.*?)\};")
for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(1)
print("ok: numba_peer.py, spec_kernel.py, mine.c and mine.cu hold the declaration's %d parameters and %d "
      "feature columns" % (len(decl["params"]), len(decl["columns"])))
