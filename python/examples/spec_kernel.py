#!/usr/bin/python3
"""The Python example kernel: SPEC.md written out in numpy and plain Python,
one combo at a time (the indicator columns kept while the windows and the
series stay the same), served to sebt over the kernel protocol. It declares
an exact contract: every window is summed oldest first as SPEC §3 says
(vectorised over bars, one pass per offset), and every other expression is
evaluated in the order written, so its bits are the reference's.

    sebt validate --backend 'exec:python3 python/examples/spec_kernel.py' ...

--bug plants one bug (for the tests and the guide): the fee is charged on
the exit leg only, as a hurried port might do. validate then fails (exit 1)
with a shrunk reproducer.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import sebt_kernel as sk  # noqa: E402

BUG = "--bug" in sys.argv[1:]

# SPEC §2, this kernel's own copy: name, type, lower bound (None: none),
# bound excluded, default. A double must also be finite. sebt declares its
# parameters in the handshake; one that declares others is refused.
PARAMS = [
    ("ema_fast", "int", 1, False, 96), ("ema_slow", "int", 1, False, 672), ("z_window", "int", 2, False, 672),
    ("atr_window", "int", 1, False, 96), ("vol_z", "double", None, False, 2.0), ("tr_z", "double", None, False, 1.2),
    ("cloc_min", "double", None, False, 0.6), ("use_stop", "bool", None, False, True),
    ("atr_stop_mult", "double", 0, False, 0.7), ("use_tp", "bool", None, False, True),
    ("reward_r", "double", 0, True, 2.0), ("use_time", "bool", None, False, True), ("max_hold", "int", 1, False, 96),
    ("fee_bp", "double", 0, False, 5.0), ("slippage_bp", "double", 0, False, 5.0),
    ("use_rsi", "bool", None, False, False), ("rsi_window", "int", 1, False, 14),
    ("rsi_max", "double", None, False, 30.0),
]
# SPEC §3's columns, in the order features() returns them (then signal, valid).
COLUMNS = ["ema_f", "ema_s", "tr", "atr", "vol_z", "tr_z", "cloc", "rsi"]


def check_params(p):
    """SPEC §2's rules, this kernel's copy: a combo outside them is refused
    (sebt checks before sending, so a refusal here means the two differ)."""
    for name, typ, lo, excl, _ in PARAMS:
        v = p[name]
        if typ == "double" and not math.isfinite(v):
            raise ValueError("%s = %r is not finite" % (name, v))
        if lo is not None and (v <= lo if excl else v < lo):
            raise ValueError("%s = %r is outside its rule (%s %s)" % (name, v, ">" if excl else ">=", lo))


def ema(close, span):
    a = 2.0 / (span + 1)
    b = 1.0 - a
    out = np.full(close.shape[0], np.nan)
    y = None
    for t, c in enumerate(close.tolist()):
        if c != c:          # a missing bar: y unchanged, output NaN
            continue
        y = c if y is None else a * c + b * y
        out[t] = y
    return out


def true_range(s):
    h, lo, c = s.high, s.low, s.close
    hl = h - lo
    tr = hl.copy()
    if s.n > 1:
        pc = c[:-1]
        alt = np.maximum(np.maximum(hl[1:], np.abs(h[1:] - pc)), np.abs(lo[1:] - pc))
        tr[1:] = np.where(np.isnan(pc), hl[1:], alt)
    return tr                # NaN on a missing bar, since high and low are


def window_sum(x, w):
    """sum of x[t-w+1..t], oldest first, for t >= w-1 (n-w+1 values)."""
    n = x.shape[0]
    acc = x[0:n - w + 1].copy()
    for k in range(1, w):
        acc += x[k:n - w + 1 + k]
    return acc


def atr(tr, w):
    out = np.full(tr.shape[0], np.nan)
    if tr.shape[0] >= w:
        out[w - 1:] = window_sum(tr, w) / w
    return out


def zscore(x, w):
    n = x.shape[0]
    out = np.full(n, np.nan)
    if n < w:
        return out
    m = window_sum(x, w) / w
    ss = np.zeros(n - w + 1)
    lo = x[0:n - w + 1].copy()
    hi = lo.copy()
    for k in range(w):
        xk = x[k:n - w + 1 + k]
        d = xk - m
        ss += d * d
        lo = np.minimum(lo, xk)
        hi = np.maximum(hi, xk)
    var = ss / w
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (x[w - 1:] - m) / np.sqrt(var)
    bad = np.isnan(m) | (lo == hi) | (var == 0.0)
    z[bad] = np.nan
    out[w - 1:] = z
    return out


def rsi(close, w):
    """SPEC §3's RSI(w): gains and losses of close against the bar before
    (NaN at bar 0 and where either bar is missing), each window's means
    summed oldest first; NaN where the window holds a NaN or nothing moved."""
    n = close.shape[0]
    gain = np.full(n, np.nan)
    loss = np.full(n, np.nan)
    if n > 1:
        d = close[1:] - close[:-1]
        gain[1:] = np.where(d > 0, d, 0.0)
        loss[1:] = np.where(d < 0, -d, 0.0)
        gain[1:][np.isnan(d)] = np.nan
    out = np.full(n, np.nan)
    if n >= w:
        g = window_sum(gain, w) / w
        lo = window_sum(loss, w) / w
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (100.0 * g) / (g + lo)
        r[np.isnan(g) | (g + lo == 0.0)] = np.nan
        out[w - 1:] = r
    return out


# The last combo's indicator columns, by the series and the windows that
# set them: the combos of a grid share their windows (a sweep of 80,640
# combos may have one set), and the columns are most of a combo's time.
# The series is held, so another one is never taken for it.
_last = {"series": None, "windows": None, "columns": None}


def indicator_columns(s, p):
    windows = (p["ema_fast"], p["ema_slow"], p["atr_window"], p["z_window"], p["rsi_window"])
    if _last["series"] is s and _last["windows"] == windows:
        return _last["columns"]
    ef = ema(s.close, p["ema_fast"])
    es = ema(s.close, p["ema_slow"])
    tr = true_range(s)
    a = atr(tr, p["atr_window"])
    vz = zscore(s.volume, p["z_window"])
    tz = zscore(a, p["z_window"])
    hl = s.high - s.low
    with np.errstate(invalid="ignore", divide="ignore"):
        cloc = (s.close - s.low) / hl
    cloc[hl == 0] = np.nan
    rs = rsi(s.close, p["rsi_window"])
    columns = (ef, es, tr, a, vz, tz, cloc, rs)
    for c in columns:
        c.flags.writeable = False      # shared by the combos that follow: read only
    _last.update(series=s, windows=windows, columns=columns)
    return columns


def features(s, p):
    check_params(p)
    ef, es, tr, a, vz, tz, cloc, rs = indicator_columns(s, p)
    with np.errstate(invalid="ignore"):
        sig = (ef < es) & (vz > p["vol_z"]) & (tz > p["tr_z"]) & (cloc > p["cloc_min"])
        if p["use_rsi"]:
            sig &= rs <= p["rsi_max"]
    valid = ~np.isnan(a)
    return dict(ema_f=ef, ema_s=es, tr=tr, atr=a, vol_z=vz, tr_z=tz, cloc=cloc, rsi=rs, signal=sig, valid=valid)


def run_one(s, p, want_trades):
    f = features(s, p)
    v = np.flatnonzero(f["valid"]).tolist()
    sig = f["signal"].tolist()
    A = f["atr"].tolist()
    o, h, lo, c = s.open.tolist(), s.high.tolist(), s.low.tolist(), s.close.tolist()
    cost_bp = p["fee_bp"] + p["slippage_bp"]
    trades = []
    in_pos = False
    entry = stop = tp = risk = 0.0
    bars = sig_bar = entry_bar = 0
    for k in range(len(v) - 1):
        t, u = v[k], v[k + 1]
        if not in_pos:
            if sig[t]:
                entry = o[u]
                stop = lo[t] - p["atr_stop_mult"] * A[t] if p["use_stop"] else 0.0
                risk = max(1e-8, entry - stop) if p["use_stop"] else entry * 0.01
                tp = entry + p["reward_r"] * risk if p["use_tp"] else 0.0
                bars, in_pos, sig_bar, entry_bar = 0, True, t, u
            continue
        bars += 1
        if p["use_stop"] and o[u] <= stop:
            px, why = o[u], sk.STOP_GAP
        elif p["use_stop"] and lo[u] <= stop:
            px, why = stop, sk.STOP
        elif p["use_tp"] and tp > 0 and h[u] >= tp:
            px, why = tp, sk.TP
        elif p["use_time"] and bars >= p["max_hold"]:
            px, why = c[u], sk.TIME
        else:
            continue
        if BUG:
            fee = px * cost_bp / 10000.0          # the planted bug: exit leg only
        else:
            fee = (entry + px) * cost_bp / 10000.0
        pnl = px - entry - fee
        with np.errstate(all="ignore"):      # risk 0 (a zero price): C's inf or NaN, not an exception
            r = float(np.float64(pnl) / np.float64(risk))
        trades.append((sig_bar, entry_bar, u, entry, px, stop, tp, risk, pnl, r, why, bars))
        in_pos = False
    open_at_end = (sig_bar, entry_bar, entry, stop, tp, risk, bars) if in_pos else None
    return sk.Result(trades=trades, valid_bars=len(v), open_at_end=open_at_end)


if __name__ == "__main__":
    sys.exit(sk.serve("spec_python_bug" if BUG else "spec_python", contract="exact", run_one=run_one,
                      features=features, params=[name for name, *_ in PARAMS], columns=COLUMNS,
                      description="SPEC.md in numpy, one combo at a time (python/examples/spec_kernel.py)"))
