# Medians of before-after.sh's runs: summarise.py OUT_DIR
import csv, glob, os, statistics, sys
out = sys.argv[1]
print("| grid | build | wall no-verify | wall verified | wall added | wall added % | CPU no-verify | CPU verified | CPU added | sampled | proof's own clock | load1 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for g in ["stream-1000", "windows-10240", "cheap-100000", "big-967680"]:
    for b in ["main", "new"]:
        rows = []
        for f in sorted(glob.glob(os.path.join(out, g, b + "-r*", "runs.tsv"))):
            rows += list(csv.DictReader(open(f), delimiter="\t"))
        if not rows:
            continue
        nv = [float(r["wall_s"]) for r in rows if r["mode"] == "no-verify"]
        v = [float(r["wall_s"]) for r in rows if r["mode"] == "verified"]
        # per round: verified - no-verify of the same round
        import re
        own = [re.search(r"\(([0-9.]+) s, ", r["proof"]) for r in rows if r["mode"] == "verified"]
        own = [float(m.group(1)) for m in own if m]
        samp = sorted({re.search(r"and ([0-9]+) sampled", r["proof"]).group(1) for r in rows if r["mode"] == "verified" and "sampled" in r["proof"]})
        a, c = statistics.median(nv), statistics.median(v)
        loads = [float(r["load1"]) for r in rows]
        cn = statistics.median(float(r["cpu_s"]) for r in rows if r["mode"] == "no-verify")
        cv = statistics.median(float(r["cpu_s"]) for r in rows if r["mode"] == "verified")
        print(f"| {g} | {b} | {a:.3f} s | {c:.3f} s | {c - a:+.3f} s | {100 * (c / a - 1):+.0f} % | {cn:.2f} s | {cv:.2f} s | {cv - cn:+.2f} s | {','.join(samp)} | {min(own):.2f}-{max(own):.2f} s | {min(loads):.2f}-{max(loads):.2f} |")
