"""A price series in libsebt's memory: loaded from a file (the CLI's loader
and series cache) or copied from numpy or pandas columns."""
import ctypes as C
import os
import warnings

import numpy as np

from . import library as L

_COLUMNS = ("open", "high", "low", "close", "volume")
_TIME_NAMES = ("open_time", "timestamp", "time", "date", "datetime", "ts")


def _cache_dir():
    """The CLI's series cache folder (docs/big-sweeps.md), or None."""
    v = os.environ.get("SEBT_CACHE_DIR")
    if v is not None:
        # The CLI's words for "no cache", in any case (cli_cache_switched_off).
        return None if v.lower() in ("", "off", "0", "false", "no", "none") else v
    xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", "")
    if xdg.startswith("/"):
        return xdg + "/sebt/series"
    if home.startswith("/"):
        return home + "/.cache/sebt/series"
    return None


class Series:
    """n bars: ts (int64 ms since the epoch, UTC) and open, high, low, close,
    volume (float64, NaN on a missing bar). Build one with sebt.load."""

    def __init__(self, c_series, source):
        self._c = c_series
        self.source = source

    def __del__(self):
        c = getattr(self, "_c", None)
        if c is not None and L is not None and L.lib is not None:
            L.lib.sebt_series_free(C.byref(c))
            self._c = None

    @property
    def n(self):
        return self._c.n

    def __len__(self):
        return self._c.n

    n_missing = property(lambda self: self._c.n_missing)
    n_rejected = property(lambda self: self._c.n_rejected)
    n_gap_filled = property(lambda self: self._c.n_gap_filled)
    interval_ms = property(lambda self: self._c.interval_ms)

    def column(self, name):
        """A copy of one column as a numpy array (ts, open, ..., volume)."""
        ptr = getattr(self._c, name)
        if self.n == 0:
            return np.empty(0, np.int64 if name == "ts" else np.float64)
        return np.ctypeslib.as_array(ptr, shape=(self.n,)).copy()

    @property
    def ts(self):
        return self.column("ts")

    @property
    def time(self):
        """ts as numpy datetime64[ms] (UTC)."""
        return self.column("ts").astype("datetime64[ms]")

    def to_numpy(self):
        """A structured array: ts, time (datetime64[ms]), open .. volume."""
        dt = [("ts", "<i8"), ("time", "datetime64[ms]")] + [(k, "<f8") for k in _COLUMNS]
        a = np.empty(self.n, dt)
        a["ts"] = self.ts
        a["time"] = a["ts"].astype("datetime64[ms]")
        for k in _COLUMNS:
            a[k] = self.column(k)
        return a

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(self.to_numpy())

    def __repr__(self):
        if not self.n:
            return "<sebt.Series 0 bars>"
        t = self.time
        return "<sebt.Series %d bars %sZ .. %sZ, %d missing, from %s>" % (
            self.n, t[0], t[-1], self.n_missing, self.source)


def _warn_gaps(s):
    if s.n < 2 or s.interval_ms <= 0:
        return
    step = np.diff(s.ts)
    gaps = step > s.interval_ms
    if gaps.any():
        missing = int((step[gaps] // s.interval_ms - 1).sum())
        warnings.warn("%s has %d timestamp gaps (%d bars missing at its %d ms interval), not filled: the "
                      "indicators run across the holes as if the bars were adjacent; load with fill_gaps=True "
                      "to insert missing bars" % (s.source, int(gaps.sum()), missing, s.interval_ms),
                      stacklevel=4)


def load_file(path, lenient=False, fill_gaps=False, cache=True):
    c = L.Series()
    err = L.Error()
    use = C.c_int(0)
    opts = L.LoadOpts(lenient, fill_gaps)
    cache_dir = _cache_dir() if cache else None
    st = L.lib.sebt_load_csv_cached(os.fsencode(path), C.byref(opts),
                                    cache_dir.encode() if cache_dir else None, C.byref(c), C.byref(use),
                                    C.byref(err))
    L.check(st, err)
    s = Series(c, os.fspath(path))
    # Read from a cache entry: a sweep's proof compares it with a fresh parse.
    s._cached_from = (os.fsencode(path), bool(lenient), bool(fill_gaps)) if use.value == L.CACHE_HIT else None
    if not fill_gaps:
        _warn_gaps(s)
    return s


def _as_ms(t):
    t = np.asarray(t)
    if np.issubdtype(t.dtype, np.datetime64):
        return t.astype("datetime64[ms]").astype(np.int64)
    if t.dtype.kind in "iu":
        return t.astype(np.int64)
    if t.dtype.kind == "O":   # pandas Timestamps with a time zone
        import pandas as pd
        return pd.to_datetime(t, utc=True).values.astype("datetime64[ms]").astype(np.int64)
    raise TypeError("time must be integers (ms since the epoch, UTC) or datetime64, got %s" % t.dtype)


# The loader's bound on the bars a fill inserts (core/loader.c): 4 per row,
# at least 10^6, or SEBT_MAX_GAP_FILL.
_FILL_PER_ROW, _FILL_MIN = 4, 1000000


def _fill_gaps(cols, source):
    """cols (ts, then the five prices) with a missing bar (NaN in all five)
    at each timestamp a step skips, as the loader's fill_gaps does: the
    interval is the most common step (the smallest on a tie); a step that
    is not a whole number of intervals is an error naming its row."""
    ts = cols[0]
    if len(ts) < 2:
        return cols, 0
    step = np.diff(ts)
    if (step <= 0).any():
        return cols, 0   # sebt_series_check names the row out of order
    values, counts = np.unique(step, return_counts=True)
    interval = int(values[np.argmax(counts)])   # unique sorts: the first maximum is the smallest step
    odd = np.nonzero(step % interval)[0]
    if len(odd):
        i = int(odd[0]) + 1
        raise ValueError("%s: the step of %d ms before row %d is not a whole number of the series' interval "
                         "(%d ms, its most common step), so the gap cannot be filled"
                         % (source, int(step[i - 1]), i, interval))
    extra = int((step // interval - 1).sum())
    if extra == 0:
        return cols, 0
    env = os.environ.get("SEBT_MAX_GAP_FILL", "")
    limit = int(env) if env.isdigit() else max(_FILL_PER_ROW * len(ts), _FILL_MIN)
    if extra > limit:
        raise ValueError("%s: filling the gaps would insert %d missing bars into %d rows, more than the limit of %d "
                         "(set SEBT_MAX_GAP_FILL=N to allow N)" % (source, extra, len(ts), limit))
    at = (ts - ts[0]) // interval
    out = [ts[0] + np.arange(int(at[-1]) + 1, dtype=np.int64) * interval]
    for v in cols[1:]:
        f = np.full(len(out[0]), np.nan)
        f[at] = v
        out.append(f)
    return out, extra


def from_columns(ts, open, high, low, close, volume, source="arrays", fill_gaps=False):
    """A series from columns: ts as ms since the epoch (int) or datetime64;
    prices and volume as floats, NaN in all five on a missing bar. Checked
    as a loaded file is (SPEC §1: increasing ts, a bar present or missing).
    fill_gaps: a missing bar at each timestamp a step skips, as for a file."""
    cols = [np.ascontiguousarray(_as_ms(ts), np.int64)]
    cols += [np.ascontiguousarray(np.asarray(v, dtype=np.float64)) for v in (open, high, low, close, volume)]
    n = len(cols[0])
    for name, v in zip(("ts",) + _COLUMNS, cols):
        if v.ndim != 1 or len(v) != n:
            raise ValueError("column %s: expected %d values in one dimension, got shape %s" % (name, n, v.shape))
    filled = 0
    if fill_gaps:
        cols, filled = _fill_gaps(cols, source)
        n = len(cols[0])
    c = L.Series()
    err = L.Error()
    L.check(L.lib.sebt_series_alloc(C.byref(c), n, C.byref(err)), err)
    s = Series(c, source)
    if n:
        C.memmove(c.ts, cols[0].ctypes.data, 8 * n)
        for name, v in zip(_COLUMNS, cols[1:]):
            C.memmove(getattr(c, name), v.ctypes.data, 8 * n)
    L.lib.sebt_series_recount(C.byref(c))
    c.n_gap_filled = filled
    L.check(L.lib.sebt_series_check(C.byref(c), C.byref(err)), err)
    _warn_gaps(s)
    return s


def _from_frame(df, fill_gaps):
    names = {str(k).lower(): k for k in df.columns}
    t = None
    for k in _TIME_NAMES:
        if k in names:
            t = df[names[k]].values
            break
    if t is None:
        import pandas as pd
        if isinstance(df.index, pd.DatetimeIndex):
            idx = df.index.tz_convert("UTC").tz_localize(None) if df.index.tz is not None else df.index
            t = idx.values
        else:
            raise ValueError("no time column (one of %s) and no DatetimeIndex" % ", ".join(_TIME_NAMES))
    try:
        cols = [df[names[k]].values for k in _COLUMNS]
    except KeyError as e:
        raise ValueError("missing column %s (need open, high, low, close, volume)" % e)
    return from_columns(t, *cols, source="DataFrame", fill_gaps=fill_gaps)


def load(data, lenient=False, fill_gaps=False, cache=True):
    """A Series from a file path (CSV with a header or a Binance kline file,
    .gz read as gzip: what `sebt run --data` reads), a pandas DataFrame
    (a time column or a DatetimeIndex, and open, high, low, close, volume),
    a numpy structured array or a dict of columns with those names. A Series
    is returned as it is. fill_gaps inserts a missing bar at each timestamp
    a step skips, for a file and for columns alike; lenient is a file's."""
    if isinstance(data, Series):
        return data
    if isinstance(data, (str, bytes, os.PathLike)):
        return load_file(data, lenient, fill_gaps, cache)
    if lenient:
        raise ValueError("lenient applies to files (a bad row read as a missing bar); give columns with NaN bars "
                         "where bars are bad")
    if hasattr(data, "columns") and hasattr(data, "index"):
        return _from_frame(data, fill_gaps)
    if isinstance(data, np.ndarray) and data.dtype.names:
        data = {k: data[k] for k in data.dtype.names}
    if isinstance(data, dict):
        d = {str(k).lower(): v for k, v in data.items()}
        t = next((d[k] for k in _TIME_NAMES if k in d), None)
        if t is None:
            raise ValueError("no time column: one of %s" % ", ".join(_TIME_NAMES))
        missing = [k for k in _COLUMNS if k not in d]
        if missing:
            raise ValueError("missing column(s) %s (need open, high, low, close, volume)" % ", ".join(missing))
        return from_columns(t, *(d[k] for k in _COLUMNS), fill_gaps=fill_gaps)
    raise TypeError("sebt.load: expected a path, a DataFrame, a structured array or a dict of columns, got %s"
                    % type(data).__name__)
