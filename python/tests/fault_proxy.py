#!/usr/bin/python3
"""A kernel that breaks the protocol once, at its Nth request, and is right
otherwise: it passes every frame between sebt and a real kernel, except the
reply to the Nth RUN or FEATURES request of its process, which it replaces
by a fault. For the tests of what sebt does after a kernel's fault (the
check fails as "protocol", the kernel is started again, the reproducer
replays the requests).

    fault_proxy.py N MODE ONCE_FILE KERNEL_COMMAND...

MODE: garbage (text on stdout instead of the reply) or long (a reply
header promising 8 bytes more than follow, then exit 6). With ONCE_FILE,
the fault happens in the first process only: it creates the file, and a
process that finds it passes every reply (so a restarted kernel is right);
an empty ONCE_FILE ('') faults in every process.
"""
import os
import queue
import struct
import subprocess
import sys
import threading

H = struct.Struct("<IHHQ")
n_fault, mode, once = int(sys.argv[1]), sys.argv[2], sys.argv[3]
armed = not (once and os.path.exists(once))
kernel = subprocess.Popen(sys.argv[4:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = os.fdopen(1, "wb", buffering=0)
inp = os.fdopen(0, "rb", buffering=0)
requests = queue.Queue()


def read_exact(f, n):
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(f):
    head = read_exact(f, 16)
    if head is None:
        return None, None
    length = H.unpack(head)[3]
    body = read_exact(f, length) if length else b""
    return head, body


def forward_requests():
    count = 0
    while True:
        head, body = read_frame(inp)
        if head is None:
            kernel.stdin.close()
            return
        type_ = H.unpack(head)[2]
        if type_ in (4, 6):   # RUN, FEATURES: each gets one reply
            count += 1
            requests.put(count)
        kernel.stdin.write(head + body)
        kernel.stdin.flush()


threading.Thread(target=forward_requests, daemon=True).start()
head, body = read_frame(kernel.stdout)   # HELLO_OK
out.write(head + body)
while True:
    head, body = read_frame(kernel.stdout)
    if head is None:
        sys.exit(kernel.wait())
    number = requests.get()
    if armed and number == n_fault:
        if once:
            open(once, "w").close()
        print("fault_proxy: %s at request %d" % (mode, number), file=sys.stderr)
        sys.stderr.flush()
        if mode == "garbage":
            out.write(b"progress: 50%\n")
        else:
            magic, version, type_, length = H.unpack(head)
            out.write(H.pack(magic, version, type_, length + 8) + body)
            os._exit(6)
        continue
    out.write(head + body)
