"""sebt_kernel: serve a backtest kernel written in Python to sebt.

sebt starts your kernel's command once (`--backend 'exec:python3 mine.py'`)
and talks the kernel protocol, version 2 (docs/kernel-protocol.md), over its
stdin and stdout. This module does the protocol; you write the strategy:

    import sebt_kernel as sk

    def run(series, combos, want_trades):      # all combos at once, or ...
        ...
        return results                          # an sk.Results

    def run_one(series, p, want_trades):        # ... one combo at a time
        ...
        return sk.Result(trades=[...], valid_bars=..., open_at_end=None)

    def features(series, p):                    # one combo's indicator columns
        return dict(ema_f=..., ema_s=..., ..., signal=..., valid=...)

    sk.serve("mine", contract="exact", run_one=run_one, features=features)

series has numpy arrays ts (int64 ms), open, high, low, close, volume
(float64, NaN on a missing bar) and n. combos has one numpy array per
parameter (sk.PARAMS: int64 for bar counts, float64, bool) and n; p is one
combo as a dict of Python numbers. Numbers cross the pipe as raw IEEE-754
doubles, so an exact kernel stays exact.

The parameters, their order and the feature columns are the strategy's,
as sebt declares them in its HELLO: sk.PARAMS, sk.PARAM_INFO,
sk.FEATURE_NAMES and sk.TERMS are filled from it when sebt connects. A
kernel written for a given strategy passes its own lists (params=,
columns=): when sebt declares other ones, the kernel refuses the handshake
naming both, instead of reading parameters it does not know.

While serving, print() and anything else written to stdout goes to stderr:
stdout carries the protocol. An exception in your code is sent to sebt as
an ERROR naming the combo (sebt counts it as a divergence of that input);
its traceback goes to stderr.

Standard library and numpy only. Installed under PREFIX/share/sebt/python:
    PYTHONPATH=PREFIX/share/sebt/python python3 mine.py
"""
import collections
import math
import os
import struct
import sys
import time
import traceback

import numpy as np

PROTOCOL_VERSION = 2
_F8 = np.dtype("<f8")
MAGIC = 0x4B424553  # b"SEBK"
HEADER = struct.Struct("<IHHQ")
HELLO, HELLO_OK, SERIES, RUN, RESULTS, FEATURES, FEATURE_COLUMNS, ERROR, BYE = range(1, 10)

# The strategy's declaration, filled from sebt's HELLO (empty before it):
# PARAMS: (name, numpy type) in order, the layout of every combo sent;
# PARAM_INFO: Param rows with the rule and default; FEATURE_NAMES: the
# columns a features() call returns, then "signal" and "valid"; TERMS: the
# signal's terms. The lists are changed in place.
PARAMS = []
PARAM_INFO = []
FEATURE_NAMES = []
TERMS = []
Param = collections.namedtuple("Param", "name type role min min_excluded default")
Term = collections.namedtuple("Term", "name column cmp rhs enable")
_TYPES = {0: ("int", np.int64), 1: ("double", np.float64), 2: ("bool", np.bool_)}
_ROLES = {0: "window", 1: "signal", 2: "exit", 3: "cost"}
_CMPS = {0: "<", 1: ">", 2: "<="}
# One result row (RESULTS frame).
RESULT_FIELDS = ["n", "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe", "valid_bars", "open",
                 "open_signal_index", "open_entry_index", "open_entry_price", "open_stop", "open_tp",
                 "open_risk", "open_bars_held", "n_trades"]
# One trade row; reason: 0 stop_gap, 1 stop, 2 tp, 3 time (SPEC §6).
TRADE_FIELDS = ["signal_index", "entry_index", "exit_index", "entry_price", "exit_price", "stop", "tp",
                "risk", "pnl", "r", "reason", "bars_held"]
STOP_GAP, STOP, TP, TIME = 0, 1, 2, 3


class Series:
    """The bars sebt sent: numpy arrays ts, open, high, low, close, volume."""

    def __init__(self, ts, o, h, lo, c, v):
        self.ts, self.open, self.high, self.low, self.close, self.volume = ts, o, h, lo, c, v
        self.n = len(ts)


_ROW_CONVERT = []


class _Reader:
    def __init__(self, payload):
        self.p, self.at = payload, 0

    def take(self, fmt):
        vals = struct.unpack_from("<" + fmt, self.p, self.at)
        self.at += struct.calcsize("<" + fmt)
        return vals

    def name(self):
        (n,) = self.take("H")
        if self.at + n > len(self.p):
            raise ValueError("a name runs past the end of the HELLO")
        text = bytes(self.p[self.at:self.at + n]).decode("utf-8")
        self.at += n
        return text


def read_declaration(payload):
    """The HELLO payload (docs/kernel-protocol.md): (version, params,
    feature columns, terms), params as Param rows, terms as Term rows."""
    r = _Reader(payload)
    (version,) = r.take("I")
    params, columns, terms = [], [], []
    (n,) = r.take("H")
    for _ in range(n):
        name = r.name()
        typ, role, excl, lo, default = r.take("BBBdd")
        params.append(Param(name, _TYPES[typ][0], _ROLES[role], lo, bool(excl), default))
    (n,) = r.take("H")
    for _ in range(n):
        columns.append(r.name())
    (n,) = r.take("H")
    for _ in range(n):
        name = r.name()
        col, cmp, rhs_kind, rhs, enable = r.take("HBBHh")
        terms.append(Term(name, columns[col], _CMPS[cmp], columns[rhs] if rhs_kind == 0 else params[rhs].name,
                          None if enable < 0 else params[enable].name))
    if r.at != len(payload):
        raise ValueError("%d bytes after the declaration in the HELLO" % (len(payload) - r.at))
    return version, params, columns, terms


def _declare(params, columns, terms):
    PARAM_INFO[:] = params
    PARAMS[:] = [(p.name, dict(_TYPES.values())[p.type]) for p in params]
    FEATURE_NAMES[:] = columns + ["signal", "valid"]
    TERMS[:] = terms
    _ROW_CONVERT[:] = [(p.name, {"bool": bool, "int": int, "double": float}[p.type]) for p in params]


def _mismatch(what, mine, sebts):
    if mine is None or list(mine) == list(sebts):
        return None
    return "this kernel was written for the %s %s; sebt declares %s" % (what, ", ".join(mine), ", ".join(sebts))


class Combos:
    """A batch of combos: one numpy array per parameter, n rows."""

    def __init__(self, table):
        self.n = table.shape[0]
        self._table = table
        self._rows = None
        for j, (name, typ) in enumerate(PARAMS):
            setattr(self, name, table[:, j].astype(typ))

    def row(self, i):
        """Combo i as a dict of Python numbers (int, float, bool)."""
        if self._rows is None:
            # one conversion of the whole table to Python floats, then each
            # row by zip: a per-element numpy lookup costs ten times more
            self._rows = self._table.tolist()
        return {name: conv(v) for (name, conv), v in zip(_ROW_CONVERT, self._rows[i])}


def metrics(trades):
    """SPEC §7 over trade rows (TRADE_FIELDS order), in the reference's order
    of operations: (n, win_rate, avg_r, total_pnl, max_dd, sharpe). A
    helper; a kernel may compute its own."""
    n = len(trades)
    if n == 0:
        return (0, 0.0, 0.0, 0.0, 0.0, 0.0)
    pnls = [float(t[8]) for t in trades]
    rs = [float(t[9]) for t in trades]
    wins = sum(1 for x in pnls if x > 0)
    sum_r = 0.0
    total = 0.0
    for x in rs:
        sum_r += x
    for x in pnls:
        total += x
    # drawdown against the running maximum of the cumulative pnl after each
    # trade: the curve starts at the first trade
    cum = peak = dd = 0.0
    for i, x in enumerate(pnls):
        cum += x
        if i == 0 or cum > peak:
            peak = cum
        if cum - peak < dd:
            dd = cum - peak
    mean = sum_r / n
    sharpe = 0.0
    if n >= 2:
        ss = 0.0
        for x in rs:
            ss += (x - mean) * (x - mean)
        sd = math.sqrt(ss / (n - 1))
        if sd != 0.0:
            sharpe = mean / sd
    return (n, wins / n, mean, total, dd, sharpe)


class Result:
    """One combo's backtest. trades: rows in TRADE_FIELDS order (a list of
    tuples or an (k, 12) array); open_at_end: None, or (signal_index,
    entry_index, entry_price, stop, tp, risk, bars_held); metrics: the six
    SPEC §7 values (None: computed from trades by sk.metrics)."""

    def __init__(self, trades=(), valid_bars=0, open_at_end=None, metrics=None):
        self.trades = trades
        self.valid_bars = valid_bars
        self.open_at_end = open_at_end
        self.metrics = metrics


class Results:
    """All combos of a batch as arrays: rows (n, 16) in RESULT_FIELDS order
    (its n_trades column says how many trade rows each combo has) and trades
    (T, 12), the combos' trades one after another. A batched kernel fills
    these directly."""

    def __init__(self, rows, trades=None):
        self.rows = np.ascontiguousarray(rows, dtype="<f8")
        self.trades = np.zeros((0, 12)) if trades is None else np.ascontiguousarray(trades, dtype="<f8")


def results_from(list_of_result):
    rows = np.zeros((len(list_of_result), 16))
    parts = []
    for i, r in enumerate(list_of_result):
        tr = np.asarray(r.trades, dtype=np.float64).reshape(-1, 12)
        m = r.metrics if r.metrics is not None else metrics(tr)
        rows[i, 0:6] = m
        rows[i, 6] = r.valid_bars
        if r.open_at_end is not None:
            rows[i, 7] = 1
            rows[i, 8:15] = r.open_at_end
        rows[i, 15] = tr.shape[0]
        parts.append(tr)
    return Results(rows, np.concatenate(parts) if parts else None)


# ---- the protocol ------------------------------------------------------------------

class _Channel:
    def __init__(self):
        # stdout is the protocol's: keep a private copy of it, and send
        # whatever else writes to fd 1 (print, C libraries) to stderr.
        self.out_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self.in_fd = 0

    def read_exact(self, n):
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = os.readv(self.in_fd, [view[got:]])
            if k == 0:
                return None
            got += k
        return buf

    def send(self, type_, payload):
        data = HEADER.pack(MAGIC, PROTOCOL_VERSION, type_, len(payload)) + payload
        view = memoryview(data)
        while len(view):
            k = os.write(self.out_fd, view)
            view = view[k:]

    def send_parts(self, type_, parts):
        """One frame of float64 arrays, in one writev where the pipe takes it."""
        bufs = []
        for p in parts:
            if not (type(p) is np.ndarray and p.dtype == _F8 and p.flags.c_contiguous):
                p = np.ascontiguousarray(p, dtype="<f8")
            if p.size:
                bufs.append(memoryview(p).cast("B"))
        total = sum(b.nbytes for b in bufs)
        bufs.insert(0, memoryview(HEADER.pack(MAGIC, PROTOCOL_VERSION, type_, total)))
        i = 0
        while i < len(bufs):
            k = os.writev(self.out_fd, bufs[i:i + 512])   # at most IOV_MAX (1024) buffers a call
            while i < len(bufs) and k >= bufs[i].nbytes:
                k -= bufs[i].nbytes
                i += 1
            if k:
                bufs[i] = bufs[i][k:]

    def send_raw(self, data):
        if len(data) == 0:
            return
        view = memoryview(data)
        while len(view):
            k = os.write(self.out_fd, view)
            view = view[k:]


def _error_payload(combo, text):
    msg = text.encode("utf-8", "replace")[:65000]
    return struct.pack("<qI", combo, len(msg)) + msg


def _check_rows(res, n_combos, want_trades):
    rows = res.rows
    if rows.shape != (n_combos, 16):
        raise ValueError("the kernel returned results of shape %s for %d combos (expected (%d, 16))"
                         % (rows.shape, n_combos, n_combos))


def serve(name, contract="exact", tol=0.0, run=None, run_one=None, features=None, description="",
          params=None, columns=None):
    """Serves sebt until it says BYE or closes the pipe. contract: "exact"
    (tol 0) or "tolerant" with 0 < tol < 1 (SPEC §8). Give run (batched)
    or run_one (looped), and features. params, columns: the parameter names
    and feature columns, in order, this kernel was written for; sebt's
    HELLO declaring others is refused, naming both (None: whatever sebt
    declares)."""
    if (run is None) == (run_one is None):
        raise ValueError("serve: give exactly one of run= (batched) or run_one= (looped)")
    kind = {"exact": 0, "tolerant": 1}[contract]
    ch = _Channel()
    # SEBT_KERNEL_PROFILE=FILE: at the end, one JSON line of where the time
    # went (the protocol benchmark compares it with sebt's side).
    prof = {"requests": 0, "compute_seconds": 0.0, "send_seconds": 0.0, "total_seconds": 0.0}
    try:
        return _loop(ch, prof, (kind, tol, name, description, params, columns), run, run_one, features)
    finally:
        path = os.environ.get("SEBT_KERNEL_PROFILE")
        if path:
            with open(path, "a") as f:
                f.write('{"kernel": "%s", "requests": %d, "compute_seconds": %.6f, "send_seconds": %.6f, '
                        '"busy_seconds": %.6f}\n' % (name, prof["requests"], prof["compute_seconds"],
                                                      prof["send_seconds"], prof["total_seconds"]))


def _hello(ch, payload, kernel):
    """Answers HELLO: HELLO_OK, or ERROR when sebt declares a strategy other
    than the one this kernel was written for."""
    kind, tol, name, description, params, columns = kernel
    nm = name.encode()
    desc = description.encode()[:1000]
    (version,) = struct.unpack_from("<I", payload, 0) if len(payload) >= 4 else (0,)
    # A sebt of another version gets HELLO_OK in this version's header,
    # which it refuses naming both versions.
    if version == PROTOCOL_VERSION:
        try:
            _, ps, cols, terms = read_declaration(payload)
        except (ValueError, KeyError, IndexError, struct.error) as e:
            ch.send(ERROR, _error_payload(-1, "sebt_kernel: cannot read the HELLO's declaration: %s" % e))
            return
        why = _mismatch("parameters", params, [p.name for p in ps]) or _mismatch("feature columns", columns, cols)
        if why:
            ch.send(ERROR, _error_payload(-1, why))
            return
        _declare(ps, cols, terms)
    ch.send(HELLO_OK, struct.pack("<IdH", kind, float(tol), len(nm)) + nm + struct.pack("<H", len(desc)) + desc)


def _loop(ch, prof, kernel, run, run_one, features):
    clock = time.perf_counter
    series = None
    while True:
        head = ch.read_exact(HEADER.size)
        if head is None:
            return 0
        magic, version, type_, length = HEADER.unpack(head)
        if magic != MAGIC:
            print("sebt_kernel: not a protocol frame from sebt; stopping", file=sys.stderr)
            return 2
        payload = ch.read_exact(length) if length else bytearray()
        if payload is None:
            return 0
        t_req = clock()
        if type_ == HELLO:
            _hello(ch, payload, kernel)
        elif type_ == BYE:
            return 0
        elif type_ == SERIES:
            (n,) = struct.unpack_from("<Q", payload, 0)
            ts = np.frombuffer(payload, dtype="<i8", count=n, offset=8).astype(np.int64)
            cols = np.frombuffer(payload, dtype="<f8", count=5 * n, offset=8 + 8 * n).reshape(5, n).astype(np.float64)
            series = Series(ts, cols[0], cols[1], cols[2], cols[3], cols[4])
        elif type_ == FEATURES:
            (count,) = struct.unpack_from("<Q", payload, 0)
            table = np.frombuffer(payload, dtype="<f8", count=len(PARAMS) * count, offset=8).reshape(count, len(PARAMS))
            combos = Combos(table)
            n_cols = len(FEATURE_NAMES)
            cols = []
            at = 0
            try:
                for at in range(count):
                    t0 = clock()
                    f = features(series, combos.row(at))
                    prof["compute_seconds"] += clock() - t0
                    if isinstance(f, dict):
                        f = [f[k] for k in FEATURE_NAMES]
                    if isinstance(f, np.ndarray) and f.dtype == np.float64 and f.shape == (n_cols, series.n):
                        cols.append(f)      # already the frame's layout: sent as it is
                        continue
                    f = [np.asarray(c, dtype=np.float64) for c in f]
                    if len(f) != n_cols:
                        raise ValueError("features returned %d columns, expected %d (%s)"
                                         % (len(f), n_cols, FEATURE_NAMES))
                    for k, c in zip(FEATURE_NAMES, f):
                        if c.shape != (series.n,):
                            raise ValueError("feature %s has shape %s, expected (%d,)" % (k, c.shape, series.n))
                    cols.extend(f)
            except Exception as e:  # the kernel's own failure: tell sebt, keep serving
                traceback.print_exc()
                ch.send(ERROR, _error_payload(at, "%s: %s" % (type(e).__name__, e)))
                continue
            t_send = clock()
            ch.send_parts(FEATURE_COLUMNS, cols)
            prof["send_seconds"] += clock() - t_send
            prof["requests"] += 1
            prof["total_seconds"] += clock() - t_req
        elif type_ == RUN:
            n_combos, flags, threads = struct.unpack_from("<QII", payload, 0)
            table = np.frombuffer(payload, dtype="<f8", count=len(PARAMS) * n_combos,
                                  offset=16).reshape(n_combos, len(PARAMS))
            combos = Combos(table)
            want = bool(flags & 1)
            at = -1
            try:
                t0 = clock()
                if run is not None:
                    res = run(series, combos, want)
                    prof["compute_seconds"] += clock() - t0
                    if isinstance(res, list):
                        res = results_from(res)
                else:
                    out = []
                    for i in range(n_combos):
                        at = i
                        out.append(run_one(series, combos.row(i), want))
                    at = -1
                    prof["compute_seconds"] += clock() - t0
                    res = results_from(out)
                _check_rows(res, n_combos, want)
            except Exception as e:
                traceback.print_exc()
                ch.send(ERROR, _error_payload(at, "%s: %s" % (type(e).__name__, e)))
                continue
            parts = [res.rows]
            if want:
                parts.append(res.trades)
            t_send = clock()
            ch.send_parts(RESULTS, parts)
            prof["send_seconds"] += clock() - t_send
            prof["requests"] += 1
            prof["total_seconds"] += clock() - t_req
        else:
            print("sebt_kernel: unknown frame type %d from sebt; stopping" % type_, file=sys.stderr)
            return 2
