#!/usr/bin/env python3
"""`sebt sweep --overfit` against a literal recomputation, bit for bit.

Written from the papers' words (Bailey and López de Prado 2014, "The
Deflated Sharpe Ratio"; Bailey, Borwein, López de Prado and Zhu 2015, "The
Probability of Backtest Overfitting") and docs/formats.md's order of sums,
sharing no code with core/overfit.c: every combo's trades from `--trades`,
each trade's R in the block of its exit bar, every half of the blocks as
in-sample (itertools), the in-sample best's out-of-sample rank, its logit;
DSR with Python's own statistics.NormalDist for Φ⁻¹ (AS241 in CPython's
code) and the C library's erfc for Φ. The JSON's
shortest round-trip numbers read back as the doubles written, so equal
means equal bits. Then `sebt split --overfit`'s in-sample block against
`sebt sweep --overfit` over a file of the in-sample bars alone, and the
usage errors.

    overfit_literal.py SEBT DATA GRID S [S ...]
"""
import csv
import ctypes
import ctypes.util
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

EULER_GAMMA = 0.57721566490153286061
NAN = float("nan")
# Φ from the C library's erfc, the platform's primitive as sqrt and log are:
# Python's own math.erfc is another approximation, a few units in the last
# place apart in the far tail (a DSR of 1e-4 differed in its last 2 digits).
_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LIBM.erfc.restype = ctypes.c_double
_LIBM.erfc.argtypes = [ctypes.c_double]


def phi(x):
    return 0.5 * _LIBM.erfc(-x / math.sqrt(2.0))


def sharpe_of(n, s, q):
    """Mean over sample deviation, (s/n) / sqrt((n q - s^2) / (n (n-1))), written as docs/formats.md fixes it."""
    d = n * q - s * s
    if not (n >= 2 and d > 0):
        return NAN
    return s * math.sqrt((n - 1) / (n * d))


def set_sums(row, blocks, S):
    """The sums over a set of blocks: each half of the blocks in increasing order from 0, then low + high."""
    h = S // 2
    low, high = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    for b in range(S):
        if b in blocks:
            part = low if b < h else high
            for k in range(3):
                part[k] += row[b][k]
    return [low[k] + high[k] for k in range(3)]


def pbo_literal(rows, S):
    N = len(rows)
    everything = set(range(S))
    splits = sorted(itertools.combinations(range(S), S // 2), key=lambda c: sum(1 << b for b in c))
    logits, xs, ys = [], [], []
    for half in splits:
        ins, oos = set(half), everything - set(half)
        perf_is = [sharpe_of(*set_sums(r, ins, S)) for r in rows]
        perf_oos = [sharpe_of(*set_sums(r, oos, S)) for r in rows]
        best = None
        for i, v in enumerate(perf_is):
            if not math.isnan(v) and (best is None or v > perf_is[best]):
                best = i
        if best is None:
            continue
        ob = perf_oos[best]
        below = equal = 0
        for j, v in enumerate(perf_oos):
            if j == best:
                continue
            if math.isnan(ob):
                equal += math.isnan(v)
            else:
                below += math.isnan(v) or v < ob
                equal += v == ob
        omega = (2 * below + equal + 2) / (2 * (N + 1))
        logits.append(math.log(omega / (1 - omega)))
        if not math.isnan(ob):
            xs.append(perf_is[best])
            ys.append(ob)
    out = {"splits": len(splits), "counted": len(logits),
           "pbo": sum(1 for v in logits if v <= 0) / len(logits) if logits else NAN,
           "logit_median": statistics.median(logits) if logits else NAN, "logits": logits,
           "fitted": len(xs), "prob_oos_loss": sum(1 for y in ys if y < 0) / len(ys) if ys else NAN,
           "slope": NAN, "intercept": NAN}
    if len(xs) >= 2:
        sx = sy = 0.0
        for x, y in zip(xs, ys):
            sx += x
            sy += y
        mx, my = sx / len(xs), sy / len(xs)
        sxx = sxy = 0.0
        for x, y in zip(xs, ys):
            sxx += (x - mx) * (x - mx)
            sxy += (x - mx) * (y - my)
        if sxx > 0:
            out["slope"] = sxy / sxx
            out["intercept"] = my - out["slope"] * mx
    return out


def dsr_literal(sharpes, trades_r):
    N = len(sharpes)
    sr_all = [v for n, v in sharpes if n >= 2]
    best = max(range(N), key=lambda i: (sharpes[i][1], -i))
    s = 0.0
    for v in sr_all:
        s += v
    m = s / len(sr_all)
    v = 0.0
    for x in sr_all:
        v += (x - m) * (x - m)
    var = v / (len(sr_all) - 1)
    nd = statistics.NormalDist()
    sr0 = math.sqrt(var) * ((1 - EULER_GAMMA) * nd.inv_cdf(1 - 1 / N) + EULER_GAMMA * nd.inv_cdf(1 - 1 / (N * math.e)))
    r = trades_r[best]
    T = len(r)
    s = 0.0
    for x in r:
        s += x
    mean = s / T
    m2 = m3 = m4 = 0.0
    for x in r:
        d = x - mean
        m2 += d * d
        m3 += d * d * d
        m4 += (d * d) * (d * d)
    m2, m3, m4 = m2 / T, m3 / T, m4 / T
    skew, kurt = m3 / (m2 * math.sqrt(m2)), m4 / (m2 * m2)
    sr = sharpes[best][1]
    z = (sr - sr0) * math.sqrt(T - 1) / math.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr * sr)
    return best, {"trials": N, "with_sharpe": len(sr_all), "sharpe_variance": var, "sharpe": sr, "trades": T,
                  "skew": skew, "kurtosis": kurt, "expected_max_sharpe": sr0, "dsr": phi(z)}


def same(a, b):
    if a is None or b is None:
        return a is None and (b is None or (isinstance(b, float) and math.isnan(b)))
    if isinstance(b, float) and math.isnan(b):
        return False
    return a == b


def refusals(sebt, data, grid):
    """Usage errors exit 2 and name the option."""
    failures = 0
    base = [sebt, "sweep", "--data", data, "--grid", grid, "--no-verify"]
    for extra, word in ((["--overfit", "--overfit-blocks", "5"], "--overfit-blocks 5"),
                        (["--overfit-blocks", "4"], "--overfit-blocks"),
                        (["--overfit", "--overfit-blocks", "26"], "--overfit-blocks"),
                        (["--overfit", "--shard", "1/2"], "--overfit")):
        p = subprocess.run(base + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 2 or word not in p.stderr:
            print("FAIL: %s: exit %d, stderr %r" % (" ".join(extra), p.returncode, p.stderr))
            failures += 1
    # One combo: nothing to rank it against, refused before the sweep runs (no output).
    with tempfile.TemporaryDirectory() as work:
        one = os.path.join(work, "one.grid")
        with open(one, "w") as f:
            f.write("vol_z = 2.0\n")
        p = subprocess.run([sebt, "sweep", "--data", data, "--grid", one, "--no-verify", "--overfit"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 2 or "--overfit" not in p.stderr or p.stdout:
            print("FAIL: one combo: exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout[:80], p.stderr))
            failures += 1
    return failures


def split_block(sebt, data, grid):
    """`sebt split --overfit`'s block is `sebt sweep --overfit`'s over the
    in-sample bars alone, written to a file of their own."""
    import gzip
    cut_ms = 1577836800000   # 2020-01-01
    with tempfile.TemporaryDirectory() as work:
        part = os.path.join(work, "in-sample.csv")
        with gzip.open(data, "rt") as f, open(part, "w") as g:
            for i, line in enumerate(f):
                if i == 0 or int(line.split(",", 1)[0]) < cut_ms:
                    g.write(line)
        common = ["--fill-gaps", "--grid", grid, "--overfit", "--overfit-blocks", "4"]
        a = subprocess.run([sebt, "split", "--data", data, "--split", "2020-01-01", "--format", "text"] + common,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        b = subprocess.run([sebt, "sweep", "--data", part, "--format", "text", "--no-verify"] + common,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if a.returncode or b.returncode:
            print("FAIL: split/sweep --overfit: exit %d/%d\n%s%s" % (a.returncode, b.returncode, a.stderr, b.stderr))
            return 1
        block = lambda out, head: out[out.index(head) + 1:].split("\n", 1)[1]
        x = block(a.stdout, "\nOverfitting of the in-sample bars (")
        y = block(b.stdout, "\nOverfitting (")
        if x != y or "deflated Sharpe ratio" not in x:
            print("FAIL: split's in-sample block differs from the sweep's over the in-sample bars:\n%s\n%s" % (x, y))
            return 1
        print("split --overfit: the in-sample block equals sweep --overfit over the in-sample bars")
    return 0


def walkforward_windows(sebt, data, grid):
    """`sebt walkforward --overfit`'s record of each of the first two train
    windows is `sebt sweep --overfit`'s over a file of that window's bars
    alone (the 15m series filled: bar i opens 15 minutes after bar i - 1),
    and the text verdict says what the medians say."""
    import gzip
    common = ["--fill-gaps", "--grid", grid, "--overfit", "--overfit-blocks", "4"]
    wf = ["walkforward", "--data", data, "--train", "365d", "--test", "365d", "--check", "0"] + common
    p = subprocess.run([sebt] + wf + ["--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode:
        print("FAIL: walkforward --overfit: exit %d\n%s" % (p.returncode, p.stderr))
        return 1
    doc = json.loads(p.stdout)
    failures = 0
    with gzip.open(data, "rt") as f:
        lines = f.readlines()
    t0 = int(lines[1].split(",", 1)[0])
    with tempfile.TemporaryDirectory() as work:
        for w in doc["windows"][:2]:
            lo, hi = t0 + w["train_from"] * 900000, t0 + w["train_to"] * 900000
            part = os.path.join(work, "train%d.csv" % w["window"])
            with open(part, "w") as g:
                g.write(lines[0])
                g.writelines(x for x in lines[1:] if lo <= int(x.split(",", 1)[0]) < hi)
            q = subprocess.run([sebt, "sweep", "--data", part, "--format", "json", "--no-verify"] + common,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if q.returncode:
                print("FAIL: sweep over window %d's bars: exit %d\n%s" % (w["window"], q.returncode, q.stderr))
                return 1
            want, got = json.loads(q.stdout)["overfit"], w["overfit"]
            for rec in (want, got):
                del rec["seconds"], rec["pbo_seconds"]
            if json.loads(q.stdout)["bars"] != w["train_to"] - w["train_from"] or want != got:
                print("FAIL: walkforward window %d's overfit record differs from the sweep's over its bars:\n%s\n%s"
                      % (w["window"], got, want))
                failures += 1
    summ = doc["overfit_summary"]
    dsr = sorted(w["overfit"]["dsr"]["dsr"] for w in doc["windows"])
    n = len(dsr)
    median = dsr[n // 2] if n % 2 else (dsr[n // 2 - 1] + dsr[n // 2]) / 2.0
    if summ["windows"] != n or summ["median_dsr"] != median or summ["blocks"] != 4:
        print("FAIL: overfit_summary %r: %d windows, median DSR %r" % (summ, n, median))
        failures += 1
    t = subprocess.run([sebt] + wf, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = "overfitting: %d train windows: median DSR %.3f, median PBO %.3f;" % (n, median, summ["median_pbo"])
    fluke = not (median >= 0.95 and summ["median_pbo"] < 0.5)
    clause = "best combos may well be flukes" if fluke else "best combos stand out from luck"
    verdict = [x for x in t.stdout.splitlines() if x.startswith("verdict: ")]
    if t.returncode or line not in t.stdout or len(verdict) != 1 or clause not in verdict[0]:
        print("FAIL: walkforward --overfit text: no %r or a verdict with %r:\n%s" % (line, clause, t.stdout))
        failures += 1
    if not failures:
        print("walkforward --overfit: windows 1-2 equal sweep --overfit over their bars; summary and verdict agree")
    return failures


def gathered(sebt, data, grid):
    """`sebt sweep --relative --overfit` gathers the block sums from the
    sweep's own trades (no second run): its record is the separate pass's
    (`--overfit` alone), every field but the seconds, bit for bit."""
    docs = []
    for extra in ([], ["--relative"]):
        p = subprocess.run([sebt, "sweep", "--data", data, "--fill-gaps", "--grid", grid, "--format", "json",
                            "--top", "3", "--threads", "2", "--overfit", "--overfit-blocks", "6"] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            print("FAIL: sweep --overfit %s: exit %d\n%s" % (" ".join(extra), p.returncode, p.stderr))
            return 1
        o = json.loads(p.stdout)["overfit"]
        del o["seconds"], o["pbo_seconds"]
        docs.append(json.dumps(o, sort_keys=True))
    if docs[0] != docs[1] or '"splits": 20' not in docs[0]:
        print("FAIL: --relative --overfit's record differs from --overfit's:\n%s\n%s" % tuple(docs))
        return 1
    print("sweep --relative --overfit: the gathered record equals the separate pass's")
    return 0


def main():
    sebt, data, grid = sys.argv[1:4]
    failures = refusals(sebt, data, grid) + split_block(sebt, data, grid) + walkforward_windows(sebt, data, grid)
    failures += gathered(sebt, data, grid)
    with tempfile.TemporaryDirectory() as work:
        for S in map(int, sys.argv[4:]):
            tr = os.path.join(work, "trades%d" % S)
            p = subprocess.run([sebt, "sweep", "--data", data, "--fill-gaps", "--grid", grid, "--format", "json",
                                "--no-verify", "--threads", "2", "--trades", tr, "--overfit", "--overfit-blocks",
                                str(S)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                print("FAIL: S=%d: exit %d\n%s" % (S, p.returncode, p.stderr))
                return 1
            doc = json.loads(p.stdout)
            n_bars, rows_out = doc["bars"], doc["results"]
            got = doc["overfit"]
            rows, sharpes, trades_r = [], [], []
            for res in rows_out:
                row = [[0.0, 0.0, 0.0] for _ in range(S)]
                rs = []
                with open(os.path.join(tr, "combo_%d.csv" % res["combo"])) as f:
                    for t in csv.DictReader(f):
                        r = float(t["r"])
                        b = int(t["exit_index"]) * S // n_bars
                        row[b][0] += 1.0
                        row[b][1] += r
                        row[b][2] += r * r
                        rs.append(r)
                if len(rs) != res["metrics"]["n"]:
                    print("FAIL: combo %d: %d trades in its file, n %d" % (res["combo"], len(rs), res["metrics"]["n"]))
                    failures += 1
                rows.append(row)
                trades_r.append(rs)
                sharpes.append((res["metrics"]["n"], res["metrics"]["sharpe"]))
            best, want_dsr = dsr_literal(sharpes, trades_r)
            want_pbo = pbo_literal(rows, S)
            checks = [("best", got["best"], best), ("version", got["version"], 1)]
            checks += [("dsr." + k, got["dsr"][k], v) for k, v in want_dsr.items()]
            checks += [("pbo." + k, got["pbo"][k], v) for k, v in want_pbo.items() if k != "logits"]
            checks.append(("pbo.logits count", len(got["pbo"]["logits"]), len(want_pbo["logits"])))
            checks += [("pbo.logits[%d]" % i, a, b) for i, (a, b) in enumerate(zip(got["pbo"]["logits"], want_pbo["logits"]))]
            bad = [(k, a, b) for k, a, b in checks if not same(a, b)]
            for k, a, b in bad:
                print("FAIL: S=%d %s: sebt %r, literal %r" % (S, k, a, b))
            failures += len(bad)
            print("S=%d: %d combos, %d values compared, %d differ (PBO %r, DSR %r)"
                  % (S, len(rows), len(checks), len(bad), got["pbo"]["pbo"], got["dsr"]["dsr"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
