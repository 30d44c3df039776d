"""One combo: its parameters, its backtest (metrics, trades, the open
position) and its indicator columns, through libsebt's backends."""
import ctypes as C
import os

import numpy as np

from . import library as L
from .series import load

PARAMS = L.PARAM_NAMES
EXIT_REASONS = ("stop_gap", "stop", "tp", "time")

TRADE_DTYPE = np.dtype([
    ("signal_index", "<i8"), ("entry_index", "<i8"), ("exit_index", "<i8"),
    ("signal_ts", "<i8"), ("entry_ts", "<i8"), ("exit_ts", "<i8"),
    ("signal_time", "datetime64[ms]"), ("entry_time", "datetime64[ms]"), ("exit_time", "datetime64[ms]"),
    ("entry_price", "<f8"), ("exit_price", "<f8"), ("stop", "<f8"), ("tp", "<f8"), ("risk", "<f8"),
    ("pnl", "<f8"), ("r", "<f8"), ("reason", "<U8"), ("bars_held", "<i4"),
])


def _value_text(name, v):
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))   # shortest text that reads back to the same double
    return str(v)


def params(values=None, **kwargs):
    """A combo's parameters: SPEC §2's defaults, then values (a dict, a row
    of a sweep's array or DataFrame: extra fields are ignored) and kwargs,
    parsed and checked as `sebt run --set NAME=VALUE` does."""
    p = L.lib.sebt_params_default()
    err = L.Error()
    merged = {}
    if values is not None:
        names = values.dtype.names if hasattr(values, "dtype") and values.dtype.names else None
        keys = names if names is not None else values.keys()
        for k in keys:
            if k in PARAMS:
                merged[k] = values[k]
    merged.update(kwargs)
    for k, v in merged.items():
        L.check(L.lib.sebt_params_set(C.byref(p), k.encode(), _value_text(k, v).encode(), C.byref(err)), err)
    L.check(L.lib.sebt_params_validate(C.byref(p), C.byref(err)), err)
    return p


def params_dict(p):
    return {k: (bool(getattr(p, k)) if t == "bool" else getattr(p, k)) for k, t in zip(PARAMS, L.PARAM_TYPES)}


def backend(name=None):
    """A backend by what `--backend` takes (reference, fast_cpu, cuda, a
    plugin's path, exec:CMD); None: $BACKTEST_BACKEND, else fast_cpu. The
    modes cpu and gpu mean fast_cpu and cuda; auto is the CLI's alone."""
    if name is None:
        name = os.environ.get("BACKTEST_BACKEND") or "fast_cpu"
    name = {"cpu": "fast_cpu", "gpu": "cuda"}.get(name, name)
    if name == "auto":
        raise ValueError("backend 'auto' is the CLI's (sebt run --backend auto); name the backend")
    b = C.POINTER(L.Backend)()
    err = L.Error()
    L.check(L.lib.sebt_backend_get(os.fsencode(name), C.byref(b), C.byref(err)), err)
    return b


def backends():
    """The backends built into this libsebt, by name."""
    return [L.lib.sebt_backend_name_at(i).decode() for i in range(L.lib.sebt_backend_count())]


def trades_array(c_result, ts):
    """The result's trades as TRADE_DTYPE rows (times from the series' ts)."""
    n = c_result.n_trades
    a = np.zeros(n, TRADE_DTYPE)
    if n == 0:
        return a
    t = np.ctypeslib.as_array(c_result.trades, shape=(n,))
    for k in ("signal_index", "entry_index", "exit_index", "entry_price", "exit_price", "stop", "tp", "risk",
              "pnl", "r", "bars_held"):
        a[k] = t[k]
    for k in ("signal", "entry", "exit"):
        a[k + "_ts"] = ts[a[k + "_index"]]
        a[k + "_time"] = a[k + "_ts"].astype("datetime64[ms]")
    a["reason"] = np.asarray(EXIT_REASONS)[t["reason"]]
    return a


class RunResult:
    """One combo's backtest: metrics (dict: n, win_rate, avg_r, total_pnl,
    max_dd, sharpe), trades (TRADE_DTYPE array; trades_frame() for pandas),
    open_at_end (dict or None), valid_bars, bars, backend, params, and
    stats: what `sebt run` shows as "analysis" and "relative" beside the
    metrics (dict: exits, a dict by reason; gross_profit, gross_loss,
    profit_factor, NaN when no trade lost; bars_in_market, exposure, years,
    sharpe_annual; then the relative measures of docs/formats.md, from
    capital to sqn, at the run's capital and fraction)."""

    def __init__(self, backend_name, p, series, c_result, capital=10000.0, fraction=1.0):
        self.backend = backend_name
        self.params = params_dict(p)
        self.bars = series.n
        self.valid_bars = c_result.valid_bars
        m = c_result.metrics
        self.metrics = {k: getattr(m, k) for k in L.METRICS}
        ts = series.ts
        self.trades = trades_array(c_result, ts)
        o = c_result.open_at_end
        self.open_at_end = None
        if o.open:
            self.open_at_end = {k: getattr(o, k) for k in ("signal_index", "entry_index")}
            self.open_at_end.update(signal_ts=int(ts[o.signal_index]), entry_ts=int(ts[o.entry_index]))
            self.open_at_end.update({k: getattr(o, k) for k in ("entry_price", "stop", "tp", "risk", "bars_held")})
        st = L.TradeStats()
        L.lib.sebt_trade_stats_of(C.byref(series._c), C.byref(c_result), C.byref(st))
        self.stats = {"exits": dict(zip(EXIT_REASONS, (int(x) for x in st.exits)))}
        self.stats.update({k: getattr(st, k) for k in L.TRADE_STATS})
        self.stats.update(L.relative_stats(series._c, c_result, capital, fraction))
        self._series = series
        self._params = p

    def trades_frame(self):
        """The trades as a pandas DataFrame (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(self.trades)

    def equity(self):
        """The cumulative pnl and drawdown after each trade (SPEC §7: the
        first trade's value is the first peak; min(drawdown, 0) is max_dd)."""
        eq = np.cumsum(self.trades["pnl"])
        peak = np.maximum.accumulate(eq) if len(eq) else eq
        return eq, eq - peak

    def exit_counts(self):
        """Trades per exit reason."""
        return {r: int((self.trades["reason"] == r).sum()) for r in EXIT_REASONS}

    def __repr__(self):
        m = self.metrics
        return ("<sebt.RunResult %s: %d trades, total_pnl %.6g, win_rate %.3f, avg_r %.4f, max_dd %.6g, "
                "sharpe %.4f>" % (self.backend, m["n"], m["total_pnl"], m["win_rate"], m["avg_r"], m["max_dd"],
                                  m["sharpe"]))


class _CRun:
    """One combo's backtest held in libsebt's memory (for the pictures)."""

    def __init__(self, data, combo, backend_name, threads, kwargs):
        self.series = load(data)
        self.params = params(combo, **kwargs)
        b = backend(backend_name)
        self.backend = b.contents.name.decode()
        self.result = L.Result()
        err = L.Error()
        opts = L.BatchOpts(threads=threads, want_trades=True)
        L.check(L.lib.sebt_backend_run(b, C.byref(self.series._c), C.byref(self.params), 1, C.byref(opts),
                                       C.byref(self.result), C.byref(err)), err)
        r = self.result
        if r.n_trades and not r.trades:
            self.free()
            raise L.SebtError(8, "backend %s reported %d trades but returned none" % (self.backend, r.n_trades))
        st = L.lib.sebt_result_fits(C.byref(self.params), 0, C.byref(r), C.byref(err))
        if st != L.SEBT_OK:
            self.free()
            err.raise_for(st)

    def free(self):
        L.lib.sebt_result_free(C.byref(self.result))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


def run(data, combo=None, backend_name=None, threads=0, *, capital=10000.0, fraction=1.0, **kwargs):
    """Backtests one combo over data (anything sebt.load takes); the
    parameters are combo (a dict or a sweep row) and kwargs. The result is
    checked as `sebt run` checks it. capital and fraction set the relative
    measures' equity (`sebt run --capital --fraction`): fraction in (0, 1]."""
    with _CRun(data, combo, backend_name, threads, kwargs) as c:
        return RunResult(c.backend, c.params, c.series, c.result, capital, fraction)


FEATURE_COLUMNS = L.FEATURE_NAMES + ("signal", "valid")


def features(data, combo=None, backend_name=None, as_frame=False, **kwargs):
    """One combo's indicator columns over data (what `sebt features`
    writes): a structured array ts, time, ema_f, ema_s, tr, atr, vol_z,
    tr_z, cloc, rsi (NaN where undefined), signal, valid (bool); a DataFrame
    with as_frame=True."""
    s = load(data)
    p = params(combo, **kwargs)
    b = backend(backend_name)
    f = L.Features()
    err = L.Error()
    L.check(L.lib.sebt_features_alloc(C.byref(f), s.n, C.byref(err)), err)
    try:
        L.check(L.lib.sebt_backend_features(b, C.byref(s._c), C.byref(p), C.byref(f), C.byref(err)), err)
        dt = [("ts", "<i8"), ("time", "datetime64[ms]")] + [(k, "<f8") for k in L.FEATURE_NAMES] + \
             [("signal", "?"), ("valid", "?")]
        a = np.empty(s.n, dt)
        a["ts"] = s.ts
        a["time"] = a["ts"].astype("datetime64[ms]")
        for k in FEATURE_COLUMNS:
            if s.n:
                a[k] = np.ctypeslib.as_array(getattr(f, k), shape=(s.n,))
    finally:
        L.lib.sebt_features_free(C.byref(f))
    if as_frame:
        import pandas as pd
        return pd.DataFrame(a)
    return a
