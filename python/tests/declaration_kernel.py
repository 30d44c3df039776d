#!/usr/bin/python3
"""A kernel that only shakes hands: it reads the declaration in sebt's HELLO
(docs/kernel-protocol.md), writes it to FILE as JSON and answers HELLO_OK.
Struct only, no numpy: what a kernel in any language reads.

    declaration_kernel.py FILE
"""
import json
import os
import struct
import sys

H = struct.Struct("<IHHQ")
out = os.fdopen(1, "wb", buffering=0)
inp = os.fdopen(0, "rb", buffering=0)
TYPES = {0: "int", 1: "double", 2: "bool"}
ROLES = {0: "window", 1: "signal", 2: "exit", 3: "cost"}
CMPS = {0: "<", 1: ">", 2: "<="}


def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = inp.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def declaration(p):
    at = [0]

    def take(fmt):
        vals = struct.unpack_from("<" + fmt, p, at[0])
        at[0] += struct.calcsize("<" + fmt)
        return vals

    def name():
        (k,) = take("H")
        at[0] += k
        return p[at[0] - k:at[0]].decode()
    (version,) = take("I")
    params, columns, terms = [], [], []
    for _ in range(take("H")[0]):
        nm = name()
        typ, role, excl, lo, default = take("BBBdd")
        params.append({"name": nm, "type": TYPES[typ], "role": ROLES[role], "min": lo,
                       "min_excluded": bool(excl), "default": default})
    for _ in range(take("H")[0]):
        columns.append(name())
    for _ in range(take("H")[0]):
        nm = name()
        col, cmp, rhs_kind, rhs, enable = take("HBBHh")
        terms.append({"name": nm, "column": columns[col], "cmp": CMPS[cmp],
                      "rhs": columns[rhs] if rhs_kind == 0 else params[rhs]["name"],
                      "enable": None if enable < 0 else params[enable]["name"]})
    if at[0] != len(p):
        raise ValueError("%d bytes after the declaration" % (len(p) - at[0]))
    return {"version": version, "params": params, "columns": columns, "terms": terms}


while True:
    magic, version, type_, length = H.unpack(read_exact(16))
    payload = read_exact(length) if length else b""
    if type_ == 9:
        sys.exit(0)
    if type_ != 1:
        sys.exit(3)
    with open(sys.argv[1], "w") as f:
        # -inf (no bound) as JSON's -Infinity, which Python reads back
        json.dump(declaration(payload), f, indent=1)
    name = b"declaration"
    out.write(H.pack(0x4B424553, version, 2, 16 + len(name)) + struct.pack("<IdH", 0, 0.0, len(name)) + name +
              struct.pack("<H", 0))
