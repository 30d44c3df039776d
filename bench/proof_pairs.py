#!/usr/bin/env python3
"""What a sweep's own proof (docs/cli.md, "Verification") costs, in pairs
that the rest of the machine left alone: one sweep with `--no-verify` and
verified by default, alternated (each pair's order swapped), npy, 2
threads, each run's wall time, its own CPU time and the CPU the rest of the
machine used meanwhile (from /proc/stat). A pair counts when neither run
saw more than 5 % of the machine's CPU go to other work; the run stops at
WANT such pairs or 40 pairs. With SEBT_B, the pairs are SEBT verified
against SEBT_B verified (two builds' proofs side by side).

usage: bench/proof_pairs.py SEBT GRID WANT OUT.tsv [SEBT_B]
Environment: DATA (the bundled 15m series).
OUT.tsv: pair, mode, wall_s, cpu_s, foreign_share, rc, the proof's line;
its last line (and stdout) the medians over the quiet pairs."""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

if len(sys.argv) not in (5, 6):
    sys.exit(__doc__)
sebt, grid, want, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sebt_b = sys.argv[5] if len(sys.argv) > 5 else None
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.environ.get("DATA", os.path.join(root, "fixtures/data/BTCUSDT-15m-2017-2021.csv.gz"))
hz, ncpu = os.sysconf("SC_CLK_TCK"), os.cpu_count()
work = tempfile.mkdtemp()


def busy():
    v = list(map(int, open("/proc/stat").readline().split()[1:]))
    return sum(v) - v[3] - v[4]


def one(verify):
    args = [sebt_b if sebt_b and verify else sebt, "sweep", "--data", data, "--grid", grid, "--threads", "2",
            "--format", "npy", "--output", os.path.join(work, "o.npy")]
    if not verify and not sebt_b:
        args.append("--no-verify")
    r0, b0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), busy(), time.time()
    p = subprocess.run(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    t1, b1, r1 = time.time(), busy(), resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    foreign = max(0.0, (b1 - b0) / hz - own) / ((t1 - t0) * ncpu)
    line = [x for x in p.stderr.splitlines() if "verified:" in x]
    return t1 - t0, own, foreign, p.returncode, line[0] if line else ""


subprocess.run([sebt, "run", "--data", data], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # caches warm
quiet = []
with open(out, "w") as f:
    f.write("pair\tmode\twall_s\tcpu_s\tforeign_share\trc\tproof\n")
    for k in range(40):
        res = {}
        for v in ([False, True] if k % 2 == 0 else [True, False]):
            res[v] = one(v)
            w, c, fo, rc, line = res[v]
            f.write(f"{k}\t{'verified' if v else 'no-verify'}\t{w:.3f}\t{c:.2f}\t{fo:.3f}\t{rc}\t{line}\n")
            f.flush()
        if res[True][2] < 0.05 and res[False][2] < 0.05:
            quiet.append((res[False][0], res[True][0], res[False][1], res[True][1]))
        if len(quiet) >= want:
            break
    if quiet:
        nv, vv = statistics.median(q[0] for q in quiet), statistics.median(q[1] for q in quiet)
        d = statistics.median(q[1] - q[0] for q in quiet)
        s = (f"# {len(quiet)} quiet pairs of {k + 1}: no-verify {nv:.3f} s, verified {vv:.3f} s, median of the "
             f"pairs' differences {d:+.3f} s ({100 * d / nv:+.1f} %); cpu {statistics.median(q[2] for q in quiet):.2f} s "
             f"against {statistics.median(q[3] for q in quiet):.2f} s\n")
    else:
        s = f"# no quiet pair in {k + 1}\n"
    f.write(s)
    print(s, end="")
