#!/usr/bin/python3
"""A kernel that breaks the protocol in one chosen way, for the fault tests.
Written on the raw protocol (struct only), not on sebt_kernel, so each fault
is exactly the bytes below.

    fault_kernel.py MODE [TAG]

TAG is ignored: the tests put it on the command line to find leftovers.
With FAULT_KERNEL_ALIVE=FIFO the kernel, and every process it starts, holds
that FIFO open for writing until it dies: the test reads it to its end, so
it knows, without waiting a while, that none of them is left.
Modes answer the handshake (except die, hello_hang, version, v1, chatty)
and then, on the first RUN or FEATURES request:
  die         exit 3 before the handshake, saying why on stderr
  hello_hang  never answer the handshake
  version     answer the handshake with protocol version 3 (a later one)
  v1          a kernel of protocol version 1: 15 parameters a combo, no
              declaration read; says on stderr when it is sent a request
  chatty      print a greeting on stdout before the handshake
  exit_mid    exit 4 on the request
  hang        sleep forever on the request (with a child process that
              sleeps too: ending the kernel must end its whole group); with
              FAULT_KERNEL_STARTED=FIFO, first writes "KERNEL_PID CHILD_PID"
              there
  garbage     print text on stdout instead of a reply
  short_text  print a line shorter than a frame header, then wait
  truncated   send half a RESULTS frame, then exit
  wrong_size  send RESULTS rows of 15 doubles instead of 16
  bad_index   send a trade whose exit bar is past the series
  error       send ERROR naming combo 0 (a refusal: a divergence in checks)
  long_frame  send a RESULTS header promising 8 bytes more than follow, then
              wait for the next request
  long_exit   the same, then exit 6
  orphan_exit start a process that holds stdout (TAG in its command line),
              then exit 7 without answering
  close_out   close stdout and keep running
  escape      send ERROR whose text holds a clear-screen escape, a bell and a
              line break starting a fake line
  combo_max   send ERROR naming combo 2^63-1 (the RUN has fewer)
  nan_pnl     answer every RUN with one trade per combo whose pnl is NaN
  refuse_decl read the declaration in sebt's HELLO and refuse it with an
              ERROR naming every parameter and feature column it declares
"""
import os
import struct
import subprocess
import sys
import time

from raw_kernel import H, MAGIC, declaration, read_exact

mode = sys.argv[1]
alive = os.environ.get("FAULT_KERNEL_ALIVE")
held = (os.open(alive, os.O_WRONLY),) if alive else ()   # closed only by dying
out = os.fdopen(1, "wb", buffering=0)
inp = os.fdopen(0, "rb", buffering=0)

VERSION = 1 if mode == "v1" else 2


def send(type_, payload, version=VERSION):
    out.write(H.pack(MAGIC, version, type_, len(payload)) + payload)

if mode == "die":
    print("fault_kernel: cannot start: no GPU here (on purpose)", file=sys.stderr)
    sys.exit(3)
if mode == "chatty":
    out.write(b"Hello from the kernel! Loading model...\n")

name = b"fault_" + mode.encode()
while True:
    magic, version, type_, length = H.unpack(read_exact(inp, 16))
    payload = read_exact(inp, length) if length else b""
    if type_ == 1:  # HELLO
        if mode == "hello_hang":
            time.sleep(3600)
        if mode == "refuse_decl":
            d = declaration(payload)
            params, cols = [q["name"] for q in d["params"]], d["columns"]
            # columns first: sebt's message (SEBT_ERROR_MSG_MAX) may cut the tail
            msg = ("this kernel was written for the parameters ema_fast; sebt declares the columns %s; "
                   "parameters %s" % (", ".join(cols), ", ".join(params))).encode()
            send(8, struct.pack("<qI", -1, len(msg)) + msg)
            continue
        hello = struct.pack("<IdH", 0, 0.0, len(name)) + name + struct.pack("<H", 0)
        send(2, hello, version=3 if mode == "version" else VERSION)
        continue
    if type_ == 3:  # SERIES: no reply
        n = struct.unpack_from("<Q", payload)[0]
        continue
    if type_ == 9:  # BYE
        sys.exit(0)
    # RUN or FEATURES
    print("fault_kernel: %s on request type %d" % (mode, type_), file=sys.stderr)
    if mode == "v1":
        print("fault_kernel: v1 was sent a request of %d bytes it reads as 15 parameters a combo" % length,
              file=sys.stderr)
    sys.stderr.flush()
    if mode == "exit_mid":
        sys.exit(4)
    if mode == "hang":
        child = subprocess.Popen(["sleep", "3600"], pass_fds=held)
        started = os.environ.get("FAULT_KERNEL_STARTED")
        if started:   # a FIFO the test reads: both pids, once in the request
            with open(started, "w") as f:
                f.write("%d %d\n" % (os.getpid(), child.pid))
        time.sleep(3600)
    if mode == "short_text":
        out.write(b"50%\n")
        time.sleep(3600)
    if mode == "garbage":
        out.write(b"result: 42 trades, looks good\n")
        time.sleep(3600)
    if mode == "error":
        msg = b"ValueError: cannot handle ema_fast=%d" % 1
        send(8, struct.pack("<qI", 0, len(msg)) + msg)
        continue
    if mode == "escape":
        msg = b"bad\x1b[2J\x07\nresult: PASS"
        send(8, struct.pack("<qI", 0, len(msg)) + msg)
        continue
    if mode == "combo_max":
        msg = b"no"
        send(8, struct.pack("<qI", 2**63 - 1, len(msg)) + msg)
        continue
    if mode == "orphan_exit":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", sys.argv[2]], pass_fds=held)
        sys.exit(7)
    if mode == "close_out":
        out.close()
        time.sleep(3600)
    if type_ == 4:
        n_combos = struct.unpack_from("<Q", payload)[0]
        rows = b"".join(struct.pack("<16d", *([0.0] * 6 + [1.0] + [0.0] * 9)) for _ in range(n_combos))
        if mode in ("long_frame", "long_exit"):
            out.write(H.pack(MAGIC, VERSION, 5, len(rows) + 8) + rows)
            if mode == "long_exit":
                sys.exit(6)
            continue
        if mode == "nan_pnl":
            want = struct.unpack_from("<I", payload, 8)[0] & 1
            rows = b"".join(struct.pack("<16d", *([1.0, 0.0, 0.0, float("nan"), 0.0, 0.0, 5.0] + [0.0] * 8 +
                                                  [1.0 if want else 0.0])) for _ in range(n_combos))
            trades = b"".join(struct.pack("<12d", 1, 2, 3, 100, 101, 99, 102, 1, float("nan"), 0, 3, 1)
                              for _ in range(n_combos)) if want else b""
            send(5, rows + trades)
            continue
        if mode == "truncated":
            frame = H.pack(MAGIC, VERSION, 5, len(rows)) + rows
            out.write(frame[: len(frame) // 2])
            sys.exit(5)
        if mode == "wrong_size":
            rows = b"".join(struct.pack("<15d", *([0.0] * 15)) for _ in range(n_combos))
            send(5, rows)
            continue
        if mode == "bad_index":
            want = struct.unpack_from("<I", payload, 8)[0] & 1
            rows = b"".join(struct.pack("<16d", *([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 5.0] + [0.0] * 8 + [1.0]))
                            for _ in range(n_combos))
            trades = b"".join(struct.pack("<12d", 1, 2, n + 7, 1, 2, 0, 0, 1, 1, 1, 2, 1)
                              for _ in range(n_combos)) if want else b""
            send(5, rows + trades)
            continue
    send(8, struct.pack("<qI", -1, 7) + b"unknown")
