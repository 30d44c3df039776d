"""Sweeps through libsebt's streamed driver (sebt_sweep_run): the rows come
as the npy records `sebt sweep --format npy` writes, a window at a time,
and are copied straight into a preallocated numpy array, a file, or
handed out as chunks. The dtype is read from the library's own npy header,
so the package's columns are the CLI's."""
import ctypes as C
import errno
import io
import os
import queue
import tempfile
import threading

import numpy as np

from . import library as L
from . import progress as P
from .backtest import PARAMS, _value_text, backend, params, run
from .series import load


def npy_header(n_rows, analysis=False):
    """The npy preamble and header of n_rows rows, as the CLI writes it
    (with analysis: `sebt sweep --analysis`'s, with the analysis columns;
    analysis=2: `sebt sweep --relative`'s, the relative columns after them)."""
    buf = C.create_string_buffer(4096)
    k = L.lib.sebt_sweep_npy_header_ex(buf, n_rows, int(analysis))
    return buf.raw[:k]


def _dtype(analysis=False):
    fp = io.BytesIO(npy_header(0, analysis))
    np.lib.format.read_magic(fp)
    return np.lib.format.read_array_header_1_0(fp)[2]


ROW_DTYPE = _dtype()
ROW_BYTES = ROW_DTYPE.itemsize
# The rows of a sweep with analysis=True: ROW_DTYPE's columns, then
# exits_stop_gap .. sharpe_annual (docs/formats.md).
ANALYSIS_ROW_DTYPE = _dtype(True)
ANALYSIS_COLUMNS = ANALYSIS_ROW_DTYPE.names[len(ROW_DTYPE.names):]
# With relative=True: ANALYSIS_ROW_DTYPE's columns, then total_return_pct ..
# sqn, `sebt run`'s relative measures at the default capital and fraction.
RELATIVE_ROW_DTYPE = _dtype(2)
RELATIVE_COLUMNS = RELATIVE_ROW_DTYPE.names[len(ANALYSIS_ROW_DTYPE.names):]


def _cols(analysis, relative):
    """The rows' extra columns as libsebt counts them (sebt/sweep.h's
    SEBT_COLS_*): 0 none, 1 the analysis columns, 2 and the relative ones."""
    return 2 if relative else 1 if analysis else 0


def _row_dtype(analysis):
    return RELATIVE_ROW_DTYPE if analysis == 2 else ANALYSIS_ROW_DTYPE if analysis else ROW_DTYPE
METRIC_NAMES = L.METRICS


def _grid_text(grid):
    lines = []
    for k, v in grid.items():
        if k not in PARAMS:
            raise ValueError("grid: unknown parameter %r (parameters: %s)" % (k, " ".join(PARAMS)))
        if isinstance(v, str):
            vals = v                                    # a range start:stop:step or a list as in a grid file
        else:
            if isinstance(v, (range, np.ndarray, tuple, list)):
                v = list(v)
            else:
                v = [v]
            if not v:
                raise ValueError("grid: %s has no values" % k)
            vals = ", ".join(_value_text(k, x) for x in v)
        lines.append("%s = %s\n" % (k, vals))
    return "".join(lines)


class _Combos:
    """What a sweep runs: a grid (opened, made a window at a time) or an
    array of combos."""

    def __init__(self, grid=None, combos=None):
        self.grid = C.c_void_p()
        self.array = None
        self.n = 0
        err = L.Error()
        if grid is not None:
            if isinstance(grid, dict):
                with tempfile.TemporaryDirectory(prefix="sebt-grid-") as d:
                    path = os.path.join(d, "grid")
                    with open(path, "w") as f:
                        f.write(_grid_text(grid))
                    self._open(path, err)
            else:
                self._open(os.fspath(grid), err)
        elif combos is not None:
            if isinstance(combos, (str, os.PathLike)):
                ptr = C.POINTER(L.Params)()
                n = C.c_size_t()
                L.check(L.lib.sebt_combos_load(os.fsencode(combos), C.byref(ptr), C.byref(n), C.byref(err)), err)
                self.array = (L.Params * n.value)()
                C.memmove(self.array, ptr, C.sizeof(L.Params) * n.value)
                L.libc.free(ptr)
            else:
                rows = _combo_rows(combos)
                self.array = (L.Params * len(rows))(*[params(r) for r in rows])
            self.n = len(self.array)
            if not self.n:
                raise ValueError("no combos")
        else:
            raise ValueError("a sweep needs a grid (a dict of lists or a grid file) or combos")

    def _open(self, path, err):
        n = C.c_size_t()
        L.check(L.lib.sebt_grid_open(path.encode(), C.byref(self.grid), C.byref(n), C.byref(err)), err)
        self.n = n.value

    def combo(self, i):
        if self.grid:
            p = L.Params()
            L.lib.sebt_grid_combos(self.grid, i, 1, C.byref(p))
            return p
        return self.array[i]

    def close(self):
        if self.grid:
            L.lib.sebt_grid_close(self.grid)
            self.grid = C.c_void_p()

    def __del__(self):
        if L is not None and L.lib is not None:
            self.close()


def _combo_rows(combos):
    if hasattr(combos, "to_dict") and hasattr(combos, "columns"):
        return combos.to_dict("records")
    if isinstance(combos, np.ndarray) and combos.dtype.names:
        return list(combos)
    return list(combos)


def _metric(by, analysis=False):
    """The rank key named by: a metric, or with analysis an analysis column
    (analysis=2: a relative column too)."""
    m = L.lib.sebt_sweep_rank_key(by.encode())
    if m < 0 or (m >= len(METRIC_NAMES) and not analysis):
        raise ValueError("by=%r: expected one of %s%s" % (by, ", ".join(METRIC_NAMES),
                                                       "" if analysis else " (an analysis column needs analysis=True)"))
    if m >= len(METRIC_NAMES) + len(ANALYSIS_COLUMNS) and analysis != 2:
        raise ValueError("by=%r: a relative column needs relative=True" % (by,))
    return m


def _verify_opts(verify, s):
    """The driver's proof options for verify (True: the default sample,
    False: none, an int N: N sampled combos) on series s."""
    if isinstance(verify, bool):
        n = 0
    elif isinstance(verify, int) and 1 <= verify <= L.VERIFY_MAX:
        n = verify
    else:
        raise ValueError("verify: expected True, False or a number of combos from 1 to %d, got %r"
                         % (L.VERIFY_MAX, verify))
    cached = getattr(s, "_cached_from", None)
    return dict(verify=L.VERIFY_DEFAULT if verify is not False else L.VERIFY_OFF, verify_n=n,
                series_file=cached[0] if cached and verify is not False else None,
                series_load=L.LoadOpts(*cached[1:]) if cached and verify is not False else L.LoadOpts(False, False))


def _verification(v):
    """The driver's record of its proof, as a dict (None: no proof ran)."""
    if not v.done:
        return None
    return {"version": v.version, "against": "reference", "best": v.best,
            "best_on": "reference" if v.best_whole_reference else "reference-z-where-read", "sampled": v.sampled,
            "sampled_on": "exact-path", "series": "cache-equals-fresh-parse" if v.series_fresh_checked else "parsed",
            "seed": "%#x" % v.seed, "rows_read_back": bool(v.rows_read_back), "seconds": v.seconds,
            "sweep_seconds": v.sweep_seconds}


def _run_driver(data, cs, backend_name, threads, window, top, by, on_rows, progress, where=None, what="sweep",
                analysis=False, verify=True, written=None):
    """Runs sebt_sweep_run; on_rows(first, count, parts) gets each window's
    npy rows (a list of (address, bytes): with where, only the rows that
    pass) unless top is set. Returns the Series, the driver's result, the
    backend name. The driver proves what it hands out unless verify is
    False (a SebtError with status "verify" on a difference); written =
    (path, bytes before the rows): the file on_rows writes every row to,
    flushed by the last window's return, from which the proof reads its
    sampled rows back."""
    s = load(data)
    vo = _verify_opts(verify, s)
    if written and verify is not False and not top:
        vo.update(verify_file=written[0], verify_file_start=written[1])
    b = backend(backend_name)
    cond = C.c_void_p()
    if where is not None:
        err = L.Error()
        L.check(L.lib.sebt_sweep_where_ex(where.encode(), int(analysis), C.byref(cond), C.byref(err)), err)
    failure = []
    stop = threading.Event()

    def on_window(user, w):
        try:
            if stop.is_set():
                return 1
            w = w.contents
            parts = [(w.part[i], w.part_bytes[i]) for i in range(w.n_parts) if w.part_bytes[i]]
            on_rows(w.first, w.count, parts)
            return 0
        except BaseException as e:   # noqa: B902: a callback must not unwind through C
            failure.append(e)
            return 1

    bar = P.Bar(what, "combos", cs.n) if P.wanted(progress) else None

    def on_progress(user, done, total):
        try:
            if bar:
                bar.update(done)
        except BaseException as e:   # noqa: B902
            failure.append(e)
            stop.set()

    win_fn = L.WINDOW_FN(on_window)
    prog_fn = L.PROGRESS_FN(on_progress)
    o = L.SweepOpts(grid=cs.grid, combos=cs.array, n_combos=cs.n, threads=threads, window=window,
                    rows=L.ROWS_NONE if top else L.ROWS_NPY, top=top or 0, metric=_metric(by, analysis), where=cond,
                    on_window=win_fn, progress=prog_fn, analysis=bool(analysis), relative=analysis == 2, **vo)
    r = L.SweepResult()
    err = L.Error()
    status = []
    done = threading.Event()

    def drive():
        try:
            status.append(L.lib.sebt_sweep_run(b, C.byref(s._c), C.byref(o), C.byref(r), C.byref(err)))
        finally:
            done.set()

    # The driver runs on a thread of its own so that this one waits in
    # Python, where Ctrl-C lands: it stops the sweep at the next window.
    # (An Event, not Thread.join: an interrupted join can leave the thread
    # looking finished while it runs.)
    threading.Thread(target=drive, name="sebt-sweep-driver", daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except BaseException as e:   # noqa: B902: KeyboardInterrupt, SystemExit
        stop.set()
        failure.insert(0, e)
        while not done.is_set():
            try:
                done.wait(0.1)
            except KeyboardInterrupt:   # a second Ctrl-C while the window ends
                pass
    finally:
        if bar:
            bar.finish()
        if cond:
            L.lib.sebt_where_free(cond)
    st = status[0]
    if failure:
        L.lib.sebt_sweep_result_free(C.byref(r))
        raise failure[0]
    if st != L.SEBT_OK:
        L.lib.sebt_sweep_result_free(C.byref(r))
        err.raise_for(st)
    return s, r, b.contents.name.decode()


def _top_rows(cs, r, into):
    """The driver's kept combos, best first, as npy rows (what `sebt sweep
    --top` writes)."""
    res = L.Result()
    step = into.dtype.itemsize
    for k in range(r.n_top):
        rec = r.top[k]
        p = cs.combo(rec.combo)
        res.metrics = rec.metrics
        res.valid_bars = rec.valid_bars
        res.open_at_end.open = rec.open_at_end != 0
        a = C.byref(rec.analysis) if rec.has_analysis else None
        L.lib.sebt_sweep_npy_row_ex(into.ctypes.data + k * step, rec.combo, C.byref(p), C.byref(res), a)


class SweepResult:
    """A sweep's rows (a numpy structured array with the columns of `sebt
    sweep`, in its order; `frame()` for pandas), the series and backend it
    ran on, and the combos, so any row can be run again with its trades."""

    def __init__(self, rows, series, backend_name, combos, path=None, verification=None):
        self.rows = rows
        self.series = series
        self.backend = backend_name
        self._combos = combos
        self.path = path
        # What the sweep's own proof checked (docs/formats.md "Verification"),
        # or None when it ran with verify=False.
        self.verification = verification
        # overfit=: DSR and PBO (docs/formats.md "Overfitting"), else None.
        self.overfit = None

    def __len__(self):
        return len(self.rows)

    def frame(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(self.rows)

    def combo(self, combo_id):
        """The row of combo combo_id (its input index)."""
        i = np.flatnonzero(self.rows["combo"] == combo_id)
        if not len(i):
            raise KeyError("combo %d is not among this sweep's rows" % combo_id)
        return self.rows[i[0]]

    def run(self, combo_id, backend_name=None):
        """The backtest of combo combo_id, with its trades (sebt.RunResult),
        on this sweep's series and backend."""
        row = self.combo(combo_id)
        return run(self.series, combo=row, backend_name=backend_name or self.backend)

    def trades(self, combo_id):
        """The trades of combo combo_id (TRADE_DTYPE: epoch ms and ISO times)."""
        return self.run(combo_id).trades

    def best(self, k=10, by="sharpe", where=None):
        """The k best rows by a column (higher is better, NaN last, ties by
        combo: the CLI's --top ranking) among those where holds: a boolean
        mask, or a condition in the CLI's --where language. by is a metric,
        or, in a sweep with analysis=True, an analysis column too. k is a
        whole number from 1 to 10^9, as the CLI's --top K."""
        _top_count("k", k)
        _metric(by, by in self.rows.dtype.names)
        rows = self.rows
        if where is not None:
            mask = where_mask(rows, where) if isinstance(where, str) else np.asarray(where, bool)
            rows = rows[mask]
        v = rows[by].astype(np.float64)
        order = np.lexsort((rows["combo"], -np.nan_to_num(v, nan=0.0), np.isnan(v)))
        return rows[order[:k]]

    def __repr__(self):
        return "<sebt.SweepResult %d rows, backend %s, %d bars>" % (len(self.rows), self.backend, self.series.n)


# --top K's range in the CLI (cli/cmd_sweep.c): a count of rows, never 0 or
# negative (a negative count once sliced off the worst rows, or reached
# numpy as "negative dimensions").
_TOP_MAX = 1000000000


def _top_count(name, k):
    """k as the CLI's --top K takes it, else ValueError naming the argument."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= _TOP_MAX:
        raise ValueError("%s expects a whole number from 1 to %d (as the CLI's --top), got %r" % (name, _TOP_MAX, k))
    return int(k)


def where_mask(rows, text):
    """Which rows pass a condition of the CLI's --where language (compiled
    by libsebt's sebt_where, when this libsebt has it)."""
    if not hasattr(L.lib, "sebt_where_compile"):
        raise NotImplementedError("this libsebt has no sebt_where_compile; pass a boolean mask")
    names = rows.dtype.names
    c_names = (C.c_char_p * len(names))(*[n.encode() for n in names])
    is_bool = (C.c_bool * len(names))(*[rows.dtype[n].kind == "b" for n in names])
    w = C.c_void_p()
    err = L.Error()
    L.lib.sebt_where_compile.argtypes = [C.c_char_p, C.c_void_p, C.c_void_p, C.c_size_t, C.POINTER(C.c_void_p),
                                         C.POINTER(L.Error)]
    L.lib.sebt_where_compile.restype = C.c_int
    L.lib.sebt_where_eval.argtypes = [C.c_void_p, C.POINTER(C.c_double)]
    L.lib.sebt_where_eval.restype = C.c_bool
    L.lib.sebt_where_uses.argtypes = [C.c_void_p, C.c_size_t]
    L.lib.sebt_where_uses.restype = C.c_bool
    L.lib.sebt_where_free.argtypes = [C.c_void_p]
    L.check(L.lib.sebt_where_compile(text.encode(), c_names, is_bool, len(names), C.byref(w), C.byref(err)), err)
    try:
        used = [i for i in range(len(names)) if L.lib.sebt_where_uses(w, i)]
        vals = np.zeros((len(rows), len(names)), np.float64)
        for i in used:
            vals[:, i] = rows[names[i]]
        out = np.empty(len(rows), bool)
        base = vals.ctypes.data
        stride = vals.strides[0]
        dp = C.POINTER(C.c_double)
        for k in range(len(rows)):
            out[k] = L.lib.sebt_where_eval(w, C.cast(base + k * stride, dp))
        return out
    finally:
        L.lib.sebt_where_free(w)


def _nan_none(v):
    return None if v != v else v


def _overfit(series, backend_name, cs, blocks, threads):
    """`sebt sweep --overfit`'s measures over every combo of cs, as a dict
    shaped like its JSON section (docs/formats.md "Overfitting"; NaN as
    None, the logits a numpy array with NaN)."""
    o = L.Overfit()
    err = L.Error()
    arr = C.cast(cs.array, C.POINTER(L.Params)) if cs.array is not None else None
    L.check(L.lib.sebt_overfit_sweep(backend(backend_name), C.byref(series._c), cs.grid, arr, cs.n, blocks, threads,
                                     C.byref(o), C.byref(err)), err)
    try:
        d, p = o.dsr, o.pbo
        logits = np.array([p.logit[i] for i in range(p.n_splits)], np.float64)
        return {"version": o.version, "best": o.best,
                "dsr": {"trials": d.n_trials, "with_sharpe": o.with_sharpe, "sharpe_variance": _nan_none(d.var_sr),
                        "sharpe": _nan_none(d.sr), "trades": d.t, "skew": _nan_none(d.skew),
                        "kurtosis": _nan_none(d.kurt), "expected_max_sharpe": _nan_none(d.sr0),
                        "dsr": _nan_none(d.dsr)},
                "pbo": {"blocks": p.blocks, "splits": p.n_splits, "counted": p.n_counted, "pbo": _nan_none(p.pbo),
                        "logit_median": _nan_none(p.logit_median), "slope": _nan_none(p.slope),
                        "intercept": _nan_none(p.intercept), "fitted": p.n_fit,
                        "prob_oos_loss": _nan_none(p.prob_oos_loss), "logits": logits},
                "seconds": o.seconds, "pbo_seconds": o.pbo_seconds}
    finally:
        L.lib.sebt_overfit_free(C.byref(o))


def _overfit_blocks(overfit):
    """overfit= as a block count (0: none): True is 16, else an even whole number from 2 to 24."""
    if overfit is False or overfit is None:
        return 0
    if overfit is True:
        return 16
    if isinstance(overfit, bool) or not isinstance(overfit, (int, np.integer)) or not 2 <= overfit <= 24 \
            or overfit % 2:
        raise ValueError("overfit: expected True, False or an even number of blocks from 2 to 24 "
                         "(the CLI's --overfit-blocks), got %r" % (overfit,))
    return int(overfit)


def sweep(data, grid=None, combos=None, backend=None, threads=0, top=None, by="sharpe", where=None, out=None,
          progress=None, window=0, analysis=False, verify=True, overfit=False, relative=False):
    """Backtests every combo of a grid (a dict {parameter: values}, the
    first varying slowest as in a grid file; or a grid file's path) or of
    combos (a list of dicts, a DataFrame, a combos CSV's path) over data.

    Returns a SweepResult whose rows are the CLI's npy rows bit for bit
    (`sebt sweep --format npy`), in input order, or the top K by `by`.
    The rows are copied a window at a time (65,536 combos) from the
    driver's buffers into one preallocated array; with out=PATH they are
    written to PATH as the CLI's npy file (atomically) and come back
    memory-mapped, so memory stays at a window whatever the grid's size.
    where (a condition of the CLI's --where language over the columns)
    keeps only the rows that pass, and top ranks only them.
    A progress bar is drawn on a terminal (progress=None), always (True)
    or never (False). analysis=True appends the analysis columns
    (ANALYSIS_COLUMNS: exit counts, profit factor, exposure, annualised
    Sharpe; `sebt sweep --analysis`), from each combo's trades: slower,
    and unless window says otherwise in windows sized by their trades
    (about 128 MB of them each; the first 256 combos); where may then
    name them. verify (True, False or a number of combos, `sebt sweep
    --verify N`) is the sweep's own proof: the best combo re-run on the
    reference, at least 256 sampled combos on the exact path, a cached
    series against a fresh parse; a difference raises SebtError (status
    "verify") and writes nothing; SweepResult.verification records it.
    overfit=True (or a number of blocks S, even, 2 to 24; True is 16) then
    measures whether the best combo is a fluke, over every combo (`sebt
    sweep --overfit`): the deflated Sharpe ratio and the probability of
    backtest overfitting, in SweepResult.overfit (a dict shaped like the
    CLI's JSON section); it runs every combo again with its trades.
    relative=True (`sebt sweep --relative`) appends, after the analysis
    columns (implied), RELATIVE_COLUMNS: `sebt run`'s relative measures at
    the default capital and fraction, for where and by too."""
    if top is not None:
        top = _top_count("top", top)
    blocks = _overfit_blocks(overfit)
    analysis = _cols(analysis, relative)
    cs = _Combos(grid, combos)
    try:
        n_rows = min(top, cs.n) if top else cs.n
        if out is not None:
            if where is not None:
                raise ValueError("where with out=: the file's row count must be known before its first row; "
                                 "filter the result, or use iter_sweep(where=...)")
            L.check_paths(("data", data, L.PATH_INPUT), ("grid", grid, L.PATH_INPUT),
                          ("combos", combos, L.PATH_INPUT), ("out", out, L.PATH_OUTPUT))
            res = _sweep_to_file(data, cs, backend, threads, top, by, out, progress, window, n_rows, analysis,
                                 verify)
            if blocks:
                res.overfit = _overfit(res.series, res.backend, cs, blocks, threads)
            return res
        rows = np.empty(n_rows, _row_dtype(analysis))
        at = [rows.ctypes.data]

        def on_rows(first, count, parts):
            for addr, nbytes in parts:
                C.memmove(at[0], addr, nbytes)
                at[0] += nbytes

        s, r, bname = _run_driver(data, cs, backend, threads, window, top, by, on_rows, progress, where,
                                  analysis=analysis, verify=verify)
        try:
            if top:
                rows = rows[:r.n_top]
                _top_rows(cs, r, rows)
            elif where is not None:
                rows = rows[:r.combos_passed].copy()
            proof = _verification(r.verification)
        finally:
            L.lib.sebt_sweep_result_free(C.byref(r))
        res = SweepResult(rows, s, bname, cs, verification=proof)
        if blocks:
            res.overfit = _overfit(s, bname, cs, blocks, threads)
        return res
    except BaseException:
        cs.close()
        raise


# Combos per window of the driver (SEBT_SWEEP_WINDOW, which the layout test
# reads from the header): a file of more rows than a window is written past
# the page cache, as `sebt sweep` writes it.
_DRIVER_WINDOW = 65536
_ANALYSIS_WINDOW = 256   # SEBT_SWEEP_ANALYSIS_WINDOW


def _sweep_to_file(data, cs, backend_name, threads, top, by, out, progress, window, n_rows, analysis, verify):
    """The rows into out through libsebt's atomic file (outfile.h): a big
    file past the page cache, whose copy and writeback would otherwise take
    the backtests' cores; the target replaced only once the file is whole
    and synced."""
    out = os.fspath(out)
    o = L.OutFile()
    err = L.Error()
    L.check(L.lib.sebt_outfile_open(C.byref(o), out.encode(), C.byref(err)), err)
    released = False
    try:
        if n_rows > (window or _DRIVER_WINDOW):
            L.lib.sebt_outfile_direct(C.byref(o))

        def put(addr, nbytes):
            if nbytes and L.libc.fwrite(addr, 1, nbytes, o.f) != nbytes:
                L.lib.sebt_outfile_write_failed(C.byref(o), C.get_errno() or errno.EIO)

        head = npy_header(n_rows, analysis)
        put(C.cast(C.c_char_p(head), C.c_void_p), len(head))

        def on_rows(first, count, parts):
            for addr, nbytes in parts:
                put(addr, nbytes)
            if first + count == cs.n and not top:
                # Written out (the tail of a direct file too) and synced: the
                # proof reads its rows back once this returns; commit then
                # only renames.
                serr = L.Error()
                L.check(L.lib.sebt_outfile_sync(C.byref(o), C.byref(serr)), serr)

        s, r, bname = _run_driver(data, cs, backend_name, threads, window, top, by, on_rows, progress,
                                  analysis=analysis, verify=verify, written=(o.tmp, len(head)))
        try:
            if top:
                rows = np.empty(n_rows, _row_dtype(analysis))
                _top_rows(cs, r, rows)
                put(rows.ctypes.data, rows.nbytes)
            proof = _verification(r.verification)
        finally:
            L.lib.sebt_sweep_result_free(C.byref(r))
        released = True
        L.check(L.lib.sebt_outfile_commit(C.byref(o), C.byref(err)), err)
    except BaseException:
        if not released:
            L.lib.sebt_outfile_abort(C.byref(o))
        raise
    return SweepResult(np.load(out, mmap_mode="r"), s, bname, cs, path=out, verification=proof)


def iter_sweep(data, grid=None, combos=None, backend=None, threads=0, where=None, progress=None, window=0,
               analysis=False, verify=True, relative=False):
    """The rows of a sweep as they are done: one array per window (65,536
    combos unless window says otherwise; with analysis, sized by their
    trades, the first 256 combos), in input
    order. At most two chunks wait for the consumer, so memory stays at a
    few windows whatever the grid's size; leaving the loop early stops the
    sweep. With where, each chunk holds the window's rows that pass;
    analysis as in sweep(). verify as in sweep(): the proof runs once the
    last chunk is handed out, and a difference raises SebtError (status
    "verify") from the loop after it. relative as in sweep()."""
    analysis = _cols(analysis, relative)
    dtype = _row_dtype(analysis)
    cs = _Combos(grid, combos)
    q = queue.Queue(maxsize=1)
    stop = threading.Event()
    END = object()

    def put(item):
        """Hands item to the consumer; False once the consumer has stopped."""
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def on_rows(first, count, parts):
        chunk = np.empty(sum(b for _, b in parts) // dtype.itemsize, dtype)
        at = chunk.ctypes.data
        for addr, nbytes in parts:
            C.memmove(at, addr, nbytes)
            at += nbytes
        if not put(chunk):
            raise StopIteration

    def work():
        try:
            _, r, _ = _run_driver(data, cs, backend, threads, window, None, "sharpe", on_rows, progress, where,
                                  analysis=analysis, verify=verify)
            L.lib.sebt_sweep_result_free(C.byref(r))
            item = END
        except StopIteration:
            item = END
        except BaseException as e:   # noqa: B902: handed to the consumer
            item = e
        put(item)

    t = threading.Thread(target=work, name="sebt-sweep", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is END:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        t.join()
        cs.close()
