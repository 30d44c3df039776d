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

from raw_kernel import H, MAGIC, declaration, read_exact

out = os.fdopen(1, "wb", buffering=0)
inp = os.fdopen(0, "rb", buffering=0)

while True:
    magic, version, type_, length = H.unpack(read_exact(inp, 16))
    payload = read_exact(inp, length) if length else b""
    if type_ == 9:
        sys.exit(0)
    if type_ != 1:
        sys.exit(3)
    with open(sys.argv[1], "w") as f:
        # -inf (no bound) as JSON's -Infinity, which Python reads back
        json.dump(declaration(payload), f, indent=1)
    name = b"declaration"
    out.write(H.pack(MAGIC, version, 2, 16 + len(name)) + struct.pack("<IdH", 0, 0.0, len(name)) + name +
              struct.pack("<H", 0))
