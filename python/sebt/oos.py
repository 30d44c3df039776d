"""Out-of-sample checks through libsebt (include/sebt/oos.h): the same
walk-forward `sebt walkforward` runs, bit for bit (docs/out-of-sample.md)."""
import ctypes as C
import re

import numpy as np

from . import library as L
from .backtest import PARAMS, backend, params_dict, trades_array
from .series import Series, load
from .sweep import ROW_DTYPE, _Combos, _overfit, _overfit_blocks

_P = C.POINTER


class WfOpts(C.Structure):
    _fields_ = [("grid", C.c_void_p), ("combos", _P(L.Params)), ("n_combos", C.c_size_t), ("train", C.c_int64),
                ("test", C.c_int64), ("by_time", C.c_bool), ("metric", C.c_int), ("where", C.c_void_p),
                ("threads", C.c_int), ("window", C.c_size_t), ("sample", C.c_size_t),
                ("progress", L.PROGRESS_FN), ("progress_user", C.c_void_p)]


class WfWindow(C.Structure):
    _fields_ = [(k, C.c_size_t) for k in ("train_from", "train_to", "test_from", "test_to", "passing")] + [
        ("picked", C.c_bool), ("combo", C.c_uint64), ("params", L.Params), ("train", L.Result), ("test", L.Result),
        ("sample_metrics", _P(L.Metrics))]


class WfResult(C.Structure):
    _fields_ = [("windows", _P(WfWindow)), ("n_windows", C.c_size_t), ("trades", _P(L.Trade)),
                ("n_trades", C.c_size_t), ("metrics", L.Metrics), ("sample_ids", _P(C.c_uint64)),
                ("sample_params", _P(L.Params)), ("n_sample", C.c_size_t)]


class SplitWindow(C.Structure):
    _fields_ = [("first", C.c_uint64), ("count", C.c_size_t), ("combos", _P(L.Params)), ("in_sample", _P(L.Result)),
                ("out_sample", _P(L.Result))]


SPLIT_WINDOW_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, _P(SplitWindow))


class SplitOpts(C.Structure):
    _fields_ = [("grid", C.c_void_p), ("combos", _P(L.Params)), ("n_combos", C.c_size_t), ("split_ts", C.c_int64),
                ("threads", C.c_int), ("window", C.c_size_t), ("top", C.c_size_t), ("metric", C.c_int),
                ("where", C.c_void_p), ("on_window", SPLIT_WINDOW_FN), ("user", C.c_void_p),
                ("progress", L.PROGRESS_FN), ("progress_user", C.c_void_p)]


class SplitPick(C.Structure):
    _fields_ = [("combo", C.c_uint64), ("params", L.Params), ("in_sample", L.Result), ("out_sample", L.Result)]


class SplitResult(C.Structure):
    _fields_ = [("cut", C.c_size_t), ("combos_done", C.c_size_t), ("passing", C.c_size_t), ("stopped", C.c_int),
                ("top", _P(SplitPick)), ("n_top", C.c_size_t)]


_DECLS = {
    "sebt_split_run": (C.c_int, [_P(L.Backend), _P(L.Series), _P(SplitOpts), _P(SplitResult), _P(L.Error)]),
    "sebt_split_result_free": (None, [_P(SplitResult)]),
    "sebt_sweep_row_passes": (C.c_bool, [C.c_void_p, C.c_uint64, _P(L.Params), _P(L.Result)]),
    "sebt_walkforward_run": (C.c_int, [_P(L.Backend), _P(L.Series), _P(WfOpts), _P(WfResult), _P(L.Error)]),
    "sebt_walkforward_free": (None, [_P(WfResult)]),
    "sebt_walkforward_check": (C.c_int, [_P(L.Backend), _P(L.Series), _P(WfResult), _P(C.c_size_t), _P(L.Error)]),
    "sebt_wf_window_skipped": (C.c_bool, [_P(WfWindow)]),
}
for _name, (_res, _args) in _DECLS.items():
    _f = getattr(L.lib, _name)
    _f.restype, _f.argtypes = _res, _args

_UNITS = {"m": 60000, "h": 3600000, "d": 86400000, "w": 604800000}


def _span(v):
    """A window length: bars (an int or digits), or '90m', '12h', '365d', '8w'."""
    m = re.fullmatch(r"([0-9]+)([mhdw]?)", str(v))
    if not m or int(m.group(1)) < 1:
        raise ValueError("window length %r: expected bars (2000) or time (90m, 12h, 365d, 8w)" % (v,))
    return int(m.group(1)) * _UNITS.get(m.group(2), 1), bool(m.group(2))


def _metrics(m):
    return {k: getattr(m, k) for k in L.METRICS}


class WalkForward:
    """A walk-forward's result: windows (a list of dicts: window, train_from,
    train_to, test_from, test_to (bars), passing, picked, and when picked
    combo, params, train and test metrics, train_few_trades and
    test_few_trades (a Sharpe from fewer than FEW_TRADES trades); skipped,
    the reason, where a
    span in time holds no bars), trades (the test windows'
    trades chained, TRADE_DTYPE), metrics (SPEC §7 over them), checked (runs
    compared bit for bit with the reference; 0 when not checked)."""

    def __init__(self, r, ts):
        self.windows = []
        for k in range(r.n_windows):
            w = r.windows[k]
            d = {"window": k + 1, "train_from": w.train_from, "train_to": w.train_to, "test_from": w.test_from,
                 "test_to": w.test_to, "passing": w.passing, "picked": bool(w.picked)}
            if L.lib.sebt_wf_window_skipped(C.byref(w)):
                d["skipped"] = "no bars in its %s span" % ("train" if w.train_to == w.train_from else "test")
            if w.picked:
                d.update(combo=w.combo, params=params_dict(w.params), train=_metrics(w.train.metrics),
                         test=_metrics(w.test.metrics), train_few_trades=w.train.metrics.n < FEW_TRADES,
                         test_few_trades=w.test.metrics.n < FEW_TRADES)
            self.windows.append(d)
        self.trades = trades_array(r, ts)
        self.metrics = _metrics(r.metrics)
        self.few_trades = r.metrics.n < FEW_TRADES   # the chained Sharpe's
        self.checked = 0
        self.overfit_summary = None   # with overfit=

    def __repr__(self):
        return "<sebt.WalkForward %d windows, %d trades, sharpe %.4f>" % (len(self.windows), len(self.trades),
                                                                          self.metrics["sharpe"])


def _oos_inputs(data, grid, combos, by):
    """The series, the combos and the rank key of a split or walk-forward."""
    s = load(data)
    cs = _Combos(grid, combos)
    metric = L.lib.sebt_metric_index(by.encode())
    if metric < 0:
        cs.close()
        raise ValueError("by=%r: expected one of %s" % (by, ", ".join(L.METRICS)))
    return s, cs, metric


def _oos_where(where, cs):
    """where compiled over the in-sample (train) columns; a NULL pointer
    without one. cs is closed when it does not compile."""
    w = C.c_void_p()
    if where:
        err = L.Error()
        st = L.lib.sebt_sweep_where(where.encode(), C.byref(w), C.byref(err))
        if st != L.SEBT_OK:
            cs.close()
        L.check(st, err)
    return w


def _slice_overfit(s, first, count, backend_name, cs, blocks, threads):
    """sweep(overfit=)'s measures over bars [first, first + count) of s, a
    series of their own (what --overfit of `sebt split` and `sebt
    walkforward` measures)."""
    c = L.Series()
    err = L.Error()
    L.check(L.lib.sebt_series_slice(C.byref(s._c), first, count, C.byref(c), C.byref(err)), err)
    return _overfit(Series(c, s.source), backend_name, cs, blocks, threads)


def _median(v):
    """cli_oos_median: of the values that are not None or NaN; None when none is."""
    v = sorted(x for x in v if x is not None and x == x)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def _overfit_summary(windows, blocks):
    """`sebt walkforward --overfit`'s JSON "overfit_summary"."""
    recs = [w["overfit"] for w in windows if w.get("overfit")]
    dsr = [o["dsr"]["dsr"] for o in recs]
    pbo = [o["pbo"]["pbo"] for o in recs]
    out = sum(1 for d, p in zip(dsr, pbo) if d is not None and p is not None and d >= 0.95 and p < 0.5)
    return {"blocks": blocks, "windows": len(recs), "median_dsr": _median(dsr), "median_pbo": _median(pbo),
            "stand_out": out}


def walkforward(data, grid=None, combos=None, train=None, test=None, where=None, by="sharpe", backend_name=None,
                threads=0, check=16, overfit=False):
    """Rolling train and test windows over data (what `sebt walkforward`
    runs): on each train window the grid (a dict or a grid file) or combos
    are swept and the best by `by` among those meeting `where` is picked and
    traded on the next test window. train and test: bars, or '365d' style
    time. check: sampled combos run again on the reference with each pick
    (None: no check); a difference raises SebtError. overfit=True (or a
    number of blocks, as sweep(overfit=)): each window with train bars gets
    "overfit", sweep(overfit=)'s record over every combo on its train bars
    (`sebt walkforward --overfit`'s JSON; None for a window without), and
    WalkForward.overfit_summary their medians."""
    blocks = _overfit_blocks(overfit)
    (tr, tr_time), (te, te_time) = _span(train), _span(test)
    if tr_time != te_time:
        raise ValueError("train %r and test %r: give both in bars or both in time" % (train, test))
    s, cs, metric = _oos_inputs(data, grid, combos, by)
    err = L.Error()
    w = _oos_where(where, cs)
    b = backend(backend_name)
    o = WfOpts(grid=cs.grid, combos=C.cast(cs.array, _P(L.Params)) if cs.array is not None else None,
               n_combos=cs.n, train=tr, test=te, by_time=tr_time, metric=metric, where=w, threads=threads,
               sample=check or 0)
    r = WfResult()
    try:
        L.check(L.lib.sebt_walkforward_run(b, C.byref(s._c), C.byref(o), C.byref(r), C.byref(err)), err)
        out = WalkForward(r, s.ts)
        if check is not None and b.contents.name != b"reference":
            n = C.c_size_t()
            L.check(L.lib.sebt_walkforward_check(backend("reference"), C.byref(s._c), C.byref(r), C.byref(n),
                                                 C.byref(err)), err)
            out.checked = n.value
        if blocks:
            for win in out.windows:
                span = win["train_to"] - win["train_from"]
                win["overfit"] = _slice_overfit(s, win["train_from"], span, backend_name, cs, blocks,
                                                threads) if span else None
            out.overfit_summary = _overfit_summary(out.windows, blocks)
        return out
    finally:
        L.lib.sebt_walkforward_free(C.byref(r))
        L.lib.sebt_where_free(w)
        cs.close()


# A Sharpe from fewer trades is flagged (include/sebt/oos.h's SEBT_FEW_TRADES):
# `sebt split` and `sebt walkforward` mark it '?' in their text tables.
FEW_TRADES = 10


def _split_dtype():
    cols = [(k, ROW_DTYPE[k]) for k in ("combo",) + tuple(PARAMS)]
    for side in ("is_", "oos_"):
        cols += [(side + k, ROW_DTYPE[k]) for k in L.METRICS + ("open_at_end", "valid_bars")]
    return np.dtype(cols + [("is_few_trades", np.bool_), ("oos_few_trades", np.bool_)])


# `sebt split`'s CSV columns (docs/formats.md), then whether each part's
# Sharpe is from fewer than FEW_TRADES trades.
SPLIT_DTYPE = _split_dtype()


def _split_row(combo, p, is_r, oos_r):
    d = params_dict(p)
    row = [combo] + [d[k] for k in PARAMS]
    for r in (is_r, oos_r):
        row += [getattr(r.metrics, k) for k in L.METRICS] + [bool(r.open_at_end.open), r.valid_bars]
    return tuple(row + [is_r.metrics.n < FEW_TRADES, oos_r.metrics.n < FEW_TRADES])


class Split:
    """A split's result: rows (SPLIT_DTYPE: the CLI's CSV columns, combo,
    the parameters, is_* and oos_* metrics, then is_few_trades and
    oos_few_trades), cut (the bars in sample; out of sample are the rest),
    in_sample_bars, out_sample_bars, combos (run), passing (meeting where in
    sample). With top, the top best by in-sample `by`, best first;
    without, every combo meeting where in input order. overfit: with
    split(overfit=), sweep(overfit=)'s record over every combo on the
    in-sample bars (`sebt split --overfit`'s block), else None."""

    def __init__(self, rows, r, n_bars):
        self.overfit = None
        self.rows = rows
        self.cut = r.cut
        self.in_sample_bars, self.out_sample_bars = r.cut, n_bars - r.cut
        self.combos, self.passing = r.combos_done, r.passing

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(self.rows)

    def __repr__(self):
        return "<sebt.Split %d rows, %d bars in sample, %d out of sample>" % (len(self.rows), self.in_sample_bars,
                                                                           self.out_sample_bars)


def _split_ts(at):
    """The first out-of-sample open time in ms: an int (ms since the epoch,
    UTC), digits, a date or time the CLI's --split takes, or datetime64."""
    if isinstance(at, (int, np.integer)) and not isinstance(at, bool):
        return int(at)
    if isinstance(at, str) and at.isdigit():
        return int(at)
    try:
        t = np.datetime64(at.rstrip("Z") if isinstance(at, str) else at, "ms")
    except (ValueError, TypeError):
        raise ValueError("split at %r: expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (UTC), epoch milliseconds or a "
                         "datetime64" % (at,))
    if np.isnat(t):
        raise ValueError("split at %r: not a time" % (at,))
    return int(t.astype(np.int64))


def split(data, at, grid=None, combos=None, where=None, by="sharpe", top=None, backend_name=None, threads=0,
          overfit=False):
    """Every combo of grid (a dict or a grid file) or combos backtested on
    the bars opening before at (in sample) and on the rest (out of sample),
    each part a series of its own: what `sebt split` runs, bit for bit.
    where: a condition over the in-sample columns; top: only the top best
    by in-sample `by` (as --top). overfit=True (or a number of blocks, as
    sweep(overfit=)): Split.overfit, the in-sample selection's DSR and PBO
    (`sebt split --overfit`). Returns a Split."""
    at_ms = _split_ts(at)
    blocks = _overfit_blocks(overfit)
    if top is not None and (isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1):
        raise ValueError("top=%r: expected a whole number >= 1" % (top,))
    s, cs, metric = _oos_inputs(data, grid, combos, by)
    err = L.Error()
    w = _oos_where(where, cs)
    rows = []

    def on_window(_user, win):
        v = win.contents
        for i in range(v.count):
            if not w or L.lib.sebt_sweep_row_passes(w, v.first + i, C.byref(v.combos[i]), C.byref(v.in_sample[i])):
                rows.append(_split_row(v.first + i, v.combos[i], v.in_sample[i], v.out_sample[i]))
        return 0

    cb = SPLIT_WINDOW_FN(on_window)
    r = SplitResult()
    try:
        o = SplitOpts(grid=cs.grid, combos=C.cast(cs.array, _P(L.Params)) if cs.array is not None else None,
                      n_combos=cs.n, split_ts=at_ms, threads=threads, top=top or 0, metric=metric, where=w,
                      on_window=cb if not top else SPLIT_WINDOW_FN())
        L.check(L.lib.sebt_split_run(backend(backend_name), C.byref(s._c), C.byref(o), C.byref(r), C.byref(err)),
                err)
        if top:
            rows = [_split_row(t.combo, t.params, t.in_sample, t.out_sample) for t in r.top[:r.n_top]]
        out = Split(np.array(rows, SPLIT_DTYPE), r, s.n)
        if blocks:
            out.overfit = _slice_overfit(s, 0, r.cut, backend_name, cs, blocks, threads)
        return out
    finally:
        L.lib.sebt_split_result_free(C.byref(r))
        L.lib.sebt_where_free(w)
        cs.close()
