#!/usr/bin/python3
"""Keeps of a `sebt report` bench.json what the baseline gate reads: the
context and every repetition of the gated groups (pair, micro_features,
micro_backtest), without Google Benchmark's aggregates.

    trim.py IN.json OUT.json
"""
import json
import sys

GATED = ("pair/", "micro_features/", "micro_backtest/")
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    run = json.load(f)
run["benchmarks"] = [b for b in run["benchmarks"]
                     if b["name"].startswith(GATED) and b.get("run_type") != "aggregate"]
with open(dst, "w") as f:
    json.dump(run, f, indent=1)
    f.write("\n")
