"""Pictures through gnuplot: libsebt computes what is drawn and writes the
gnuplot script (core/plot.c, what `sebt plot` runs); this runs gnuplot on
it and publishes the picture atomically."""
import ctypes as C
import difflib
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import library as L
from .backtest import PARAMS, _CRun

SEBT_PLOT_PNG, SEBT_PLOT_SVG = 0, 1


def gnuplot():
    """The gnuplot sebt runs: $SEBT_GNUPLOT, else gnuplot on PATH."""
    want = os.environ.get("SEBT_GNUPLOT") or "gnuplot"
    found = want if "/" in want and os.access(want, os.X_OK) else shutil.which(want) if "/" not in want else None
    if not found:
        raise FileNotFoundError("gnuplot is needed to draw pictures and %r %s; install it (apt-get install "
                                "gnuplot-nox) or set SEBT_GNUPLOT" % (
                                    want, "is not an executable file" if "/" in want else "is not on PATH"))
    return found


def _opts(output, fmt, size, title):
    output = os.fspath(output)
    if fmt is None:
        ext = os.path.splitext(output)[1].lower()
        if ext not in (".png", ".svg"):
            raise ValueError("output %s: name a .png or .svg file, or give fmt='png'|'svg'" % output)
        fmt = ext[1:]
    if fmt not in ("png", "svg"):
        raise ValueError("fmt=%r: expected png or svg" % fmt)
    w, h = size or (0, 0)
    return output, L.PlotOpts(SEBT_PLOT_SVG if fmt == "svg" else SEBT_PLOT_PNG, int(w), int(h), None,
                              title.encode() if title else None)


def _draw(output, opts, make, script_out=None):
    """make(opts) -> the script's bytes; gnuplot draws it in a private
    folder; the picture then replaces output in one rename."""
    exe = gnuplot()
    d = os.path.dirname(os.path.abspath(output))
    with tempfile.TemporaryDirectory(prefix="sebt-plot-") as tmp:
        picture = os.path.join(tmp, "picture")
        opts.output = picture.encode()
        gp = os.path.join(tmp, "plot.gp")
        with open(gp, "wb") as f:
            f.write(make(opts))
        p = subprocess.run([exe, gp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or not os.path.exists(picture) or os.path.getsize(picture) == 0:
            raise RuntimeError("gnuplot (%s) drew nothing; it said:\n%s" % (exe, p.stdout.strip() or "(nothing)"))
        if script_out:
            opts.output = os.fspath(output).encode()
            with open(script_out, "wb") as f:
                f.write(make(opts))
        fd, staged = tempfile.mkstemp(prefix="." + os.path.basename(output) + ".tmp-", dir=d)
        try:
            with os.fdopen(fd, "wb") as f, open(picture, "rb") as src:
                shutil.copyfileobj(src, f)
            os.chmod(staged, 0o644)
            os.replace(staged, output)
        except BaseException:
            os.unlink(staged)
            raise
    return output


def _script(call):
    ptr = C.c_void_p()
    n = C.c_size_t()
    err = L.Error()
    L.check(call(C.byref(ptr), C.byref(n), C.byref(err)), err)
    try:
        return C.string_at(ptr.value, n.value)
    finally:
        L.libc.free(ptr)


def plot_equity(data, output, combo=None, backend_name=None, fmt=None, size=None, title=None, script=None,
                **kwargs):
    """One combo's equity curve, its trades marked by exit reason, over its
    drawdown (what `sebt plot equity` draws) into output (.png or .svg).
    data and the parameters as for sebt.run; size=(width, height) pixels;
    script=PATH also writes the gnuplot script. Returns output."""
    output, opts = _opts(output, fmt, size, title)
    L.check_paths(("data", data, L.PATH_INPUT), ("output", output, L.PATH_OUTPUT), ("script", script, L.PATH_OUTPUT))
    with _CRun(data, combo, backend_name, 0, kwargs) as c:
        def make(o):
            return _script(lambda ptr, n, err: L.lib.sebt_plot_equity_script(
                C.byref(c.series._c), C.byref(c.params), C.byref(c.result), C.byref(o), ptr, n, err))
        return _draw(output, opts, make, script)


def _sweep_columns(sweep, names):
    if isinstance(sweep, (str, os.PathLike)):
        cols = (C.POINTER(C.c_double) * len(names))()
        c_names = (C.c_char_p * len(names))(*[n.encode() for n in names])
        n = C.c_size_t()
        err = L.Error()
        L.check(L.lib.sebt_sweep_columns_read(os.fsencode(sweep), c_names, len(names), cols, C.byref(n),
                                              C.byref(err)), err)
        try:
            return {k: np.ctypeslib.as_array(cols[i], shape=(n.value,)).copy() for i, k in enumerate(names)}
        finally:
            for i in range(len(names)):
                L.libc.free(cols[i])
    rows = getattr(sweep, "rows", sweep)
    if hasattr(rows, "columns"):   # a DataFrame
        return {k: rows[k].to_numpy(np.float64) for k in names}
    return {k: np.asarray(rows[k], np.float64) for k in names}


AGGS = ("best", "median", "mean", "q25", "q75")   # sebt_heatmap_agg's order


def heatmap(sweep, x, y, metric="sharpe", fix=None, agg="median", where=None):
    """The heatmap `sebt plot heatmap` draws, as arrays: (xs, ys, value,
    combo, rows), value[j, i] the aggregate agg of the metric over the rows
    with x = xs[i] and y = ys[j] (and every fix, and meeting where), NaN
    where none has a value; combo the cell's best row's combo, rows its
    count of rows. agg: median (the default), mean, q25, q75 (NaN rows left
    out; quantiles by linear interpolation, docs/cli.md) or best (the
    highest row). where: a condition of the CLI's --where language, applied
    before aggregating. sweep: a SweepResult, a sweep's structured array or
    DataFrame, or a CSV/npy file of sebt sweep."""
    h, _ = _heatmap(sweep, x, y, metric, fix, agg, where)
    try:
        shape = (h.ny, h.nx)
        out = (np.ctypeslib.as_array(h.x, shape=(h.nx,)).copy(), np.ctypeslib.as_array(h.y, shape=(h.ny,)).copy(),
               np.ctypeslib.as_array(h.value, shape=shape).copy(), np.ctypeslib.as_array(h.combo, shape=shape).copy(),
               np.ctypeslib.as_array(h.rows, shape=shape).copy())
    finally:
        L.lib.sebt_heatmap_free(C.byref(h))
    return out


def _check_axis(which, name):
    if name in PARAMS:
        return
    near = difflib.get_close_matches(str(name), PARAMS, n=1)
    raise ValueError("%s=%r: no parameter named %r; %s" % (
        which, name, name, "did you mean %s?" % near[0] if near else "an axis is a parameter: " + " ".join(PARAMS)))


def _where_columns(text):
    """The sweep columns a condition reads, compiled as `sweep --where`
    compiles it (so its mistakes get the CLI's messages)."""
    names = (C.c_char_p * 64)()
    is_bool = (C.c_bool * 64)()
    n = L.lib.sebt_sweep_columns_ex(names, is_bool, 2)   # every column: SEBT_COLS_RELATIVE
    w = C.c_void_p()
    err = L.Error()
    L.check(L.lib.sebt_sweep_where_ex(text.encode(), 2, C.byref(w), C.byref(err)), err)
    try:
        return [names[i].decode() for i in range(n) if L.lib.sebt_where_uses(w, i)]
    finally:
        L.lib.sebt_where_free(w)


def _where_keep(cols, names, text):
    """Which rows meet text, from the columns it reads (booleans as bools)."""
    from .sweep import where_mask
    types = dict(zip(PARAMS, L.PARAM_TYPES))
    rows = np.empty(len(cols[names[0]]) if names else 0,
                    [(k, np.bool_ if types.get(k) == "bool" else np.float64) for k in names])
    for k in names:
        rows[k] = cols[k] != 0 if types.get(k) == "bool" else cols[k]
    return where_mask(rows, text)


def _refuse_unvaried(which, name, v):
    if len(v) and (v != v[0]).any():
        return
    one = ("true" if v[0] else "false") if dict(zip(PARAMS, L.PARAM_TYPES)).get(name) == "bool" and len(v) else \
        ("%r" % float(v[0]) if len(v) else "nothing")
    raise ValueError("%s=%r: the sweep did not vary %s: all its %d rows have %s=%s; choose a parameter its grid "
                     "varies" % (which, name, name, len(v), name, one))


def _heatmap(sweep, x, y, metric, fix, agg, where):
    _check_axis("x", x)
    _check_axis("y", y)
    if x == y:
        raise ValueError("x and y are both %r: a heatmap needs two different parameters" % x)
    if agg not in AGGS:
        near = difflib.get_close_matches(str(agg), AGGS, n=1)
        raise ValueError("agg=%r: expected %s%s" % (agg, ", ".join(AGGS), "; did you mean %s?" % near[0] if near else ""))
    fix = dict(fix or {})
    # A condition of constants only ("true") still needs a column for its row count.
    wnames = (_where_columns(where) or ["combo"]) if where is not None else []
    names = list(dict.fromkeys([x, y, metric, "combo"] + list(fix) + wnames))
    cols = _sweep_columns(sweep, names)
    _refuse_unvaried("x", x, cols[x])
    _refuse_unvaried("y", y, cols[y])
    keep = np.ones(len(cols[x]), bool)
    for k, v in fix.items():
        keep &= cols[k] == (float(v) if not isinstance(v, str) else {"true": 1.0, "false": 0.0}.get(v, float("nan")))
    if where is not None:
        keep &= _where_keep(cols, wnames, where)
    if not keep.any():
        raise ValueError("no row has %s" % " and ".join(
            [" ".join("%s=%s" % kv for kv in fix.items())] * bool(fix) + ["where %s" % where] * (where is not None)))
    xs, ys, ms = (np.ascontiguousarray(cols[k][keep], np.float64) for k in (x, y, metric))
    combo = np.ascontiguousarray(cols["combo"][keep].astype(np.uint64))
    h = L.Heatmap()
    err = L.Error()
    dp = C.POINTER(C.c_double)
    L.check(L.lib.sebt_heatmap_make_agg(xs.ctypes.data_as(dp), ys.ctypes.data_as(dp), ms.ctypes.data_as(dp),
                                        combo.ctypes.data_as(C.POINTER(C.c_uint64)), len(xs), AGGS.index(agg),
                                        C.byref(h), C.byref(err)), err)
    fixed = " ".join("%s=%s" % (k, ("true" if v else "false") if isinstance(v, (bool, np.bool_)) else v)
                     for k, v in fix.items()) or None
    return h, fixed


def plot_heatmap(sweep, x, y, output, metric="sharpe", fix=None, agg="median", where=None, fmt=None, size=None,
                 title=None, script=None):
    """A metric of a sweep over two parameters, each cell the aggregate agg
    of the rows with that pair (median by default; mean, q25, q75, or best:
    the highest row), after fix={name: value} and where (a --where
    condition) keep the rows they name; the highest cell outlined, the
    aggregate named in the title: what `sebt plot heatmap` draws. Returns
    output."""
    output, opts = _opts(output, fmt, size, title)
    L.check_paths(("sweep", getattr(sweep, "path", None) or sweep, L.PATH_INPUT), ("output", output, L.PATH_OUTPUT),
                  ("script", script, L.PATH_OUTPUT))
    h, fixed = _heatmap(sweep, x, y, metric, fix, agg, where)
    try:
        def make(o):
            return _script(lambda ptr, n, err: L.lib.sebt_plot_heatmap_script_ex(
                C.byref(h), x.encode(), y.encode(), metric.encode(), fixed.encode() if fixed else None,
                where.encode() if where is not None else None, C.byref(o), ptr, n, err))
        return _draw(output, opts, make, script)
    finally:
        L.lib.sebt_heatmap_free(C.byref(h))
