"""Out-of-sample checks through libsebt (include/sebt/oos.h): the same
walk-forward `sebt walkforward` runs, bit for bit (docs/out-of-sample.md)."""
import ctypes as C
import re

from . import library as L
from .backtest import backend, params_dict, trades_array
from .series import load
from .sweep import _Combos

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


_DECLS = {
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
    combo, params, train and test metrics; skipped, the reason, where a
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
                         test=_metrics(w.test.metrics))
            self.windows.append(d)
        self.trades = trades_array(r, ts)
        self.metrics = _metrics(r.metrics)
        self.checked = 0

    def __repr__(self):
        return "<sebt.WalkForward %d windows, %d trades, sharpe %.4f>" % (len(self.windows), len(self.trades),
                                                                          self.metrics["sharpe"])


def walkforward(data, grid=None, combos=None, train=None, test=None, where=None, by="sharpe", backend_name=None,
                threads=0, check=16):
    """Rolling train and test windows over data (what `sebt walkforward`
    runs): on each train window the grid (a dict or a grid file) or combos
    are swept and the best by `by` among those meeting `where` is picked and
    traded on the next test window. train and test: bars, or '365d' style
    time. check: sampled combos run again on the reference with each pick
    (None: no check); a difference raises SebtError."""
    (tr, tr_time), (te, te_time) = _span(train), _span(test)
    if tr_time != te_time:
        raise ValueError("train %r and test %r: give both in bars or both in time" % (train, test))
    s = load(data)
    cs = _Combos(grid, combos)
    metric = L.lib.sebt_metric_index(by.encode())
    if metric < 0:
        raise ValueError("by=%r: expected one of %s" % (by, ", ".join(L.METRICS)))
    err = L.Error()
    w = C.c_void_p()
    if where:
        L.check(L.lib.sebt_sweep_where(where.encode(), C.byref(w), C.byref(err)), err)
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
        return out
    finally:
        L.lib.sebt_walkforward_free(C.byref(r))
        L.lib.sebt_where_free(w)
        cs.close()
