"""The raw kernel protocol (docs/kernel-protocol.md) as the test kernels
speak it: struct only, no numpy and not sebt_kernel, so that what a test
kernel sends is exactly the bytes it writes. Imported by declaration_kernel.py
and fault_kernel.py from their own folder."""
import struct
import sys

MAGIC = 0x4B424553
H = struct.Struct("<IHHQ")
TYPES = {0: "int", 1: "double", 2: "bool"}
ROLES = {0: "window", 1: "signal", 2: "exit", 3: "cost"}
CMPS = {0: "<", 1: ">", 2: "<="}


def read_exact(inp, n):
    """n bytes from inp; sebt closing the pipe ends the kernel (exit 0)."""
    buf = b""
    while len(buf) < n:
        chunk = inp.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def declaration(p):
    """The declaration in a version 2 HELLO's payload p: its version, parameters,
    feature columns and signal terms; every byte of p is read."""
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

