"""libsebt through ctypes: finding the library and declaring what the
package calls. The structs mirror include/sebt/*.h; tests/test_library_layout
checks their sizes against the C compiler's."""
import ctypes as C
import os

from . import location

c_size_t = C.c_size_t

# ---- errors ------------------------------------------------------------------

SEBT_OK = 0
STATUS_NAMES = ["ok", "usage", "input", "param", "io", "nomem", "nodevice", "unavailable", "internal",
                "protocol", "timeout", "verify"]


class SebtError(Exception):
    """A libsebt call failed. `status` is the library's code (one of
    STATUS_NAMES: "input" for a malformed data file, "param" for a value
    outside its rule, ...); the message says what and where."""

    def __init__(self, status, message):
        self.status = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
        self.code = status
        super().__init__(message)


class Error(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 512)]

    def raise_for(self, status):
        msg = self.msg.decode("utf-8", "replace") or STATUS_NAMES[status]
        raise SebtError(status, msg)


# ---- types.h -----------------------------------------------------------------


class Series(C.Structure):
    _fields_ = [("n", c_size_t), ("ts", C.POINTER(C.c_int64))] + [
        (k, C.POINTER(C.c_double)) for k in ("open", "high", "low", "close", "volume")
    ] + [("n_missing", c_size_t), ("n_rejected", c_size_t), ("n_gap_filled", c_size_t),
         ("interval_ms", C.c_int64)]


class ParamInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("type", C.c_int), ("offset", c_size_t), ("min", C.c_double),
                ("min_excluded", C.c_bool), ("default_value", C.c_double), ("role", C.c_int)]



def _load():
    p = location.library_path()
    try:
        return C.CDLL(p), p
    except OSError as e:
        raise ImportError(
            "sebt: cannot load libsebt (%s): %s. Build sebt, or set SEBT_LIB to the path of libsebt.so" % (p, e))


lib, path = _load()
lib.sebt_sweep_npy_header.restype = c_size_t
lib.sebt_sweep_npy_header.argtypes = [C.c_char_p, C.c_uint64]


def _param_count():
    """SEBT_N_PARAMS, read from the npy header libsebt writes: the
    parameters are the columns between combo and n."""
    import ast
    buf = C.create_string_buffer(4096)
    k = lib.sebt_sweep_npy_header(buf, 0)
    names = [f[0] for f in ast.literal_eval(buf.raw[10:k].decode("latin-1").strip())["descr"]]
    return names.index("n") - names.index("combo") - 1


N_PARAMS = _param_count()
PARAM_TABLE = (ParamInfo * N_PARAMS).in_dll(lib, "sebt_param_table")
PARAM_NAMES = tuple(PARAM_TABLE[i].name.decode() for i in range(N_PARAMS))
PARAM_TYPES = tuple(("int", "float", "bool")[PARAM_TABLE[i].type] for i in range(N_PARAMS))


class Params(C.Structure):
    """sebt_params, its fields made from libsebt's own parameter table, so
    a parameter added to the strategy's declaration needs no edit here."""
    _fields_ = [(n, (C.c_int32, C.c_double, C.c_bool)[PARAM_TABLE[i].type]) for i, n in enumerate(PARAM_NAMES)]


for _i, _n in enumerate(PARAM_NAMES):
    if getattr(Params, _n).offset != PARAM_TABLE[_i].offset:
        raise ImportError("sebt: libsebt's sebt_params layout (%s at %d) is not the package's (%d)"
                          % (_n, PARAM_TABLE[_i].offset, getattr(Params, _n).offset))


class FeatureInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("inputs", C.c_char_p), ("window", C.c_char_p)]


def _feature_count():
    """SEBT_N_FEATURES: the columns sebt_features_alloc fills in a
    sebt_features (n, the columns, signal, valid), counted."""
    room = (C.c_void_p * 256)()
    err = Error()
    if lib.sebt_features_alloc(C.byref(room), C.c_size_t(1), C.byref(err)) != 0:
        raise ImportError("sebt: libsebt could not allocate a features record: %s" % err.msg.decode())
    k = 1
    while room[k]:
        k += 1
    lib.sebt_features_free(C.byref(room))
    return k - 3


# sebt_features' double columns, in sebt/strategy.def's order, from libsebt's table.
FEATURE_TABLE = (FeatureInfo * _feature_count()).in_dll(lib, "sebt_feature_table")
FEATURE_NAMES = tuple(f.name.decode() for f in FEATURE_TABLE)


class Features(C.Structure):
    _fields_ = [("n", c_size_t)] + [(k, C.POINTER(C.c_double)) for k in FEATURE_NAMES] + \
        [("signal", C.POINTER(C.c_uint8)), ("valid", C.POINTER(C.c_uint8))]


class Trade(C.Structure):
    _fields_ = [("signal_index", C.c_int64), ("entry_index", C.c_int64), ("exit_index", C.c_int64)] + [
        (k, C.c_double) for k in ("entry_price", "exit_price", "stop", "tp", "risk", "pnl", "r")
    ] + [("reason", C.c_int), ("bars_held", C.c_int32)]


class OpenPosition(C.Structure):
    _fields_ = [("open", C.c_bool), ("signal_index", C.c_int64), ("entry_index", C.c_int64),
                ("entry_price", C.c_double), ("stop", C.c_double), ("tp", C.c_double), ("risk", C.c_double),
                ("bars_held", C.c_int32)]


METRICS = ("n", "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe")


class Metrics(C.Structure):
    _fields_ = [("n", C.c_int64)] + [(k, C.c_double) for k in METRICS[1:]]


class Result(C.Structure):
    _fields_ = [("metrics", Metrics), ("open_at_end", OpenPosition), ("valid_bars", c_size_t),
                ("n_trades", c_size_t), ("trades", C.POINTER(Trade))]


# ---- analysis.h --------------------------------------------------------------

class TradeStats(C.Structure):
    _fields_ = [("exits", C.c_int64 * 4), ("gross_profit", C.c_double), ("gross_loss", C.c_double),
                ("profit_factor", C.c_double), ("bars_in_market", C.c_int64), ("exposure", C.c_double),
                ("years", C.c_double), ("sharpe_annual", C.c_double),
                # A sweep's relative columns (sebt_relative_stats: 20 eight-byte fields).
                ("has_relative", C.c_bool), ("relative", C.c_double * 20)]


TRADE_STATS = tuple(name for name, _ in TradeStats._fields_[1:8])   # the figures after the exit counts


class RelativeOpts(C.Structure):
    _fields_ = [("capital", C.c_double), ("fraction", C.c_double)]


class RelativeField(C.Structure):
    _fields_ = [("name", C.c_char_p), ("count", C.c_bool), ("what", C.c_char_p), ("offset", c_size_t)]


# sebt_relative_stats' fields, in order, from libsebt's table: every field is
# 8 bytes (a double, or an int64_t where count is set), so a record is read
# as that many 8-byte words at the table's offsets.
RELATIVE_TABLE = (RelativeField * C.c_int.in_dll(lib, "sebt_relative_count").value).in_dll(lib, "sebt_relative_fields")
RELATIVE_NAMES = tuple(f.name.decode() for f in RELATIVE_TABLE)


def relative_stats(series, result, capital, fraction):
    """The relative measures of result over series (sebt_relative_stats_of),
    as a dict in the table's order."""
    room = (C.c_double * (len(RELATIVE_TABLE) + 1))()
    err = Error()
    o = RelativeOpts(float(capital), float(fraction))
    check(lib.sebt_relative_stats_of(C.byref(series), C.byref(result), C.byref(o), C.cast(room, C.c_void_p), C.byref(err)), err)
    raw = C.cast(room, C.c_void_p).value
    out = {}
    for f in RELATIVE_TABLE:
        if f.count:
            out[f.name.decode()] = C.c_int64.from_address(raw + f.offset).value
        else:
            out[f.name.decode()] = C.c_double.from_address(raw + f.offset).value
    return out


# ---- backend.h ---------------------------------------------------------------

PROGRESS_FN = C.CFUNCTYPE(None, C.c_void_p, c_size_t, c_size_t)


class BatchStats(C.Structure):
    _fields_ = [("threads_used", C.c_int), ("batches", c_size_t), ("chunks", c_size_t), ("blocks", c_size_t)]


class BatchOpts(C.Structure):
    _fields_ = [("threads", C.c_int), ("want_trades", C.c_bool), ("progress", PROGRESS_FN),
                ("progress_user", C.c_void_p), ("memory_budget", c_size_t), ("stats", C.POINTER(BatchStats))]


class Contract(C.Structure):
    _fields_ = [("kind", C.c_int), ("tol", C.c_double)]


class Backend(C.Structure):
    _fields_ = [("name", C.c_char_p), ("description", C.c_char_p), ("contract", Contract),
                ("features", C.c_void_p), ("run_batch", C.c_void_p), ("state", C.c_void_p)]


CACHE_HIT = 2   # sebt_cache_use's SEBT_CACHE_HIT


class LoadOpts(C.Structure):
    _fields_ = [("lenient", C.c_bool), ("fill_gaps", C.c_bool)]


# ---- shard.h, sweep.h --------------------------------------------------------


class SweepRecord(C.Structure):
    _fields_ = [("combo", C.c_uint64), ("metrics", Metrics), ("valid_bars", C.c_uint64),
                ("open_at_end", C.c_uint64), ("has_analysis", C.c_bool), ("analysis", TradeStats)]


ROWS_NONE, ROWS_CSV, ROWS_NPY = 0, 1, 2


class SweepWindow(C.Structure):
    _fields_ = [("first", C.c_uint64), ("count", c_size_t), ("combos", C.POINTER(Params)),
                ("results", C.POINTER(Result)), ("n_parts", C.c_int), ("part", C.POINTER(C.c_void_p)),
                ("part_bytes", C.POINTER(c_size_t)), ("passes", C.POINTER(C.c_bool)),
                ("part_first", C.POINTER(c_size_t)), ("row_at", C.POINTER(c_size_t)),
                ("analysis", C.POINTER(TradeStats))]


WINDOW_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(SweepWindow))


class SweepOpts(C.Structure):
    _fields_ = [("grid", C.c_void_p), ("combos", C.POINTER(Params)), ("n_combos", c_size_t),
                ("threads", C.c_int), ("window", c_size_t), ("want_trades", C.c_bool), ("rows", C.c_int),
                ("top", c_size_t), ("metric", C.c_int), ("where", C.c_void_p), ("on_window", WINDOW_FN),
                ("user", C.c_void_p),
                ("progress", PROGRESS_FN), ("progress_user", C.c_void_p), ("analysis", C.c_bool),
                ("relative", C.c_bool), ("verify", C.c_int), ("verify_n", c_size_t), ("verify_seeded", C.c_bool), ("verify_seed", C.c_uint64),
                ("series_file", C.c_char_p), ("series_load", LoadOpts), ("verify_file", C.c_char_p),
                ("verify_file_start", C.c_uint64), ("overfit", C.c_void_p)]


VERIFY_DEFAULT = 0
VERIFY_OFF = 1
VERIFY_MIN = 256
VERIFY_MAX = 4096
VERIFICATION_VERSION = 2


class Verification(C.Structure):
    _fields_ = [("done", C.c_bool), ("version", C.c_int), ("best", c_size_t), ("sampled", c_size_t),
                ("series_fresh_checked", C.c_bool), ("rows_read_back", C.c_bool), ("seed", C.c_uint64),
                ("seconds", C.c_double), ("sweep_seconds", C.c_double), ("best_whole_reference", C.c_bool)]


class SweepResult(C.Structure):
    _fields_ = [("top", C.POINTER(SweepRecord)), ("n_top", c_size_t), ("combos_done", c_size_t),
                ("combos_passed", c_size_t), ("stopped", C.c_int), ("compute_s", C.c_double), ("compute_cpu_s", C.c_double),
                ("rows_by_backtest_threads", C.c_bool), ("verification", Verification)]


# ---- overfit.h ---------------------------------------------------------------

class Dsr(C.Structure):
    _fields_ = [("n_trials", C.c_uint64), ("var_sr", C.c_double), ("sr", C.c_double), ("skew", C.c_double),
                ("kurt", C.c_double), ("t", C.c_uint64), ("sr0", C.c_double), ("dsr", C.c_double)]


class Pbo(C.Structure):
    _fields_ = [("blocks", C.c_int), ("n_combos", c_size_t), ("n_splits", c_size_t), ("n_counted", c_size_t),
                ("pbo", C.c_double), ("slope", C.c_double), ("intercept", C.c_double), ("n_fit", c_size_t),
                ("prob_oos_loss", C.c_double), ("logit_median", C.c_double), ("mask", C.POINTER(C.c_uint32)),
                ("best", C.POINTER(c_size_t)), ("is_sharpe", C.POINTER(C.c_double)),
                ("oos_sharpe", C.POINTER(C.c_double)), ("omega", C.POINTER(C.c_double)),
                ("logit", C.POINTER(C.c_double))]


class Overfit(C.Structure):
    _fields_ = [("version", C.c_int), ("best", c_size_t), ("with_sharpe", c_size_t), ("dsr", Dsr), ("pbo", Pbo),
                ("seconds", C.c_double), ("pbo_seconds", C.c_double)]


# ---- oracle.h ----------------------------------------------------------------


class Divergence(C.Structure):
    _fields_ = [("combo", c_size_t), ("params", Params), ("what", C.c_char * 64), ("bar", C.c_int64),
                ("ts", C.c_int64), ("ref_value", C.c_double), ("cand_value", C.c_double),
                ("margin", C.c_double), ("detail", C.c_char * 320)]


class OracleReport(C.Structure):
    _fields_ = [("combos_checked", c_size_t), ("combos_diverged", c_size_t), ("ties", c_size_t),
                ("decisions", C.c_uint64), ("stats", BatchStats), ("analysis_from_walk", C.c_bool),
                ("analysis_compared", c_size_t), ("n_details", c_size_t),
                ("details", Divergence * 8)]


class OracleOpts(C.Structure):
    _fields_ = [("threads", C.c_int), ("memory_budget", c_size_t), ("stop_first", C.c_bool),
                ("progress", PROGRESS_FN), ("progress_user", C.c_void_p)]


# ---- plot.h -------------------------------------------------------------------


class PlotOpts(C.Structure):
    _fields_ = [("format", C.c_int), ("width", C.c_int), ("height", C.c_int), ("output", C.c_char_p),
                ("title", C.c_char_p)]


class Heatmap(C.Structure):
    _fields_ = [("nx", c_size_t), ("ny", c_size_t), ("x", C.POINTER(C.c_double)), ("y", C.POINTER(C.c_double)),
                ("value", C.POINTER(C.c_double)), ("combo", C.POINTER(C.c_uint64)), ("rows", C.POINTER(c_size_t)),
                ("best", c_size_t), ("agg", C.c_int), ("counted", C.POINTER(c_size_t))]


# ---- outfile.h: no output replaces an input --------------------------------

PATH_INPUT, PATH_OUTPUT, PATH_OUTPUT_DIR = 0, 1, 2


class PathUse(C.Structure):
    _fields_ = [("option", C.c_char_p), ("path", C.c_char_p), ("role", C.c_int), ("holds", C.c_char_p)]


def check_paths(*uses):
    """sebt_paths_check, the CLI's rule: uses are (name, value, role); a
    value that is not a path (an array, a dict, None) is passed over.
    Raises SebtError (status "usage") naming both when an output would
    replace an input or another output."""
    rows = [(n.encode(), os.fsencode(v), role, None) for n, v, role in uses
            if isinstance(v, (str, bytes, os.PathLike))]
    arr = (PathUse * max(len(rows), 1))(*rows)
    err = Error()
    check(lib.sebt_paths_check(arr, len(rows), C.byref(err)), err)


# ---- the library -------------------------------------------------------------

class OutFile(C.Structure):
    """sebt_outfile (outfile.h): an atomic file, written through its FILE *."""
    _fields_ = [("f", C.c_void_p), ("path", C.c_char_p), ("tmp", C.c_char_p), ("atomic", C.c_bool),
                ("slot", C.c_int), ("direct", C.c_void_p), ("write_errno", C.c_int), ("synced", C.c_bool)]


_P = C.POINTER
_DECLS = {
    "sebt_status_name": (C.c_char_p, [C.c_int]),
    "sebt_series_alloc": (C.c_int, [_P(Series), c_size_t, _P(Error)]),
    "sebt_series_free": (None, [_P(Series)]),
    "sebt_series_slice": (C.c_int, [_P(Series), c_size_t, c_size_t, _P(Series), _P(Error)]),
    "sebt_series_recount": (None, [_P(Series)]),
    "sebt_series_check": (C.c_int, [_P(Series), _P(Error)]),
    "sebt_load_csv_cached": (C.c_int, [C.c_char_p, _P(LoadOpts), C.c_char_p, _P(Series), _P(C.c_int), _P(Error)]),
    "sebt_params_default": (Params, []),
    "sebt_params_set": (C.c_int, [_P(Params), C.c_char_p, C.c_char_p, _P(Error)]),
    "sebt_params_validate": (C.c_int, [_P(Params), _P(Error)]),
    "sebt_features_alloc": (C.c_int, [_P(Features), c_size_t, _P(Error)]),
    "sebt_features_free": (None, [_P(Features)]),
    "sebt_result_free": (None, [_P(Result)]),
    "sebt_results_free": (None, [_P(Result), c_size_t]),
    "sebt_exit_reason_name": (C.c_char_p, [C.c_int]),
    "sebt_backend_get": (C.c_int, [C.c_char_p, _P(_P(Backend)), _P(Error)]),
    "sebt_backend_count": (c_size_t, []),
    "sebt_backend_name_at": (C.c_char_p, [c_size_t]),
    "sebt_backend_run": (C.c_int, [_P(Backend), _P(Series), _P(Params), c_size_t, _P(BatchOpts), _P(Result),
                                   _P(Error)]),
    "sebt_backend_features": (C.c_int, [_P(Backend), _P(Series), _P(Params), _P(Features), _P(Error)]),
    "sebt_result_fits": (C.c_int, [_P(Params), C.c_uint64, _P(Result), _P(Error)]),
    "sebt_data_dir": (C.c_char_p, []),
    "sebt_part_path": (C.c_bool, [C.c_char_p, C.c_char_p, c_size_t]),
    "sebt_grid_open": (C.c_int, [C.c_char_p, _P(C.c_void_p), _P(c_size_t), _P(Error)]),
    "sebt_grid_combos": (None, [C.c_void_p, c_size_t, c_size_t, _P(Params)]),
    "sebt_grid_close": (None, [C.c_void_p]),
    "sebt_combos_load": (C.c_int, [C.c_char_p, _P(_P(Params)), _P(c_size_t), _P(Error)]),
    "sebt_metric_index": (C.c_int, [C.c_char_p]),
    "sebt_sweep_rank_key": (C.c_int, [C.c_char_p]),
    "sebt_sweep_npy_header": (c_size_t, [C.c_char_p, C.c_uint64]),
    "sebt_sweep_npy_row": (c_size_t, [C.c_void_p, C.c_uint64, _P(Params), _P(Result)]),
    "sebt_sweep_npy_row_bytes": (c_size_t, []),
    "sebt_sweep_npy_header_ex": (c_size_t, [C.c_char_p, C.c_uint64, C.c_int]),
    "sebt_sweep_npy_row_ex": (c_size_t, [C.c_void_p, C.c_uint64, _P(Params), _P(Result), _P(TradeStats)]),
    "sebt_sweep_where_ex": (C.c_int, [C.c_char_p, C.c_int, _P(C.c_void_p), _P(Error)]),
    "sebt_sweep_run": (C.c_int, [_P(Backend), _P(Series), _P(SweepOpts), _P(SweepResult), _P(Error)]),
    "sebt_sweep_result_free": (None, [_P(SweepResult)]),
    "sebt_overfit_sweep": (C.c_int, [_P(Backend), _P(Series), C.c_void_p, _P(Params), c_size_t, C.c_int, C.c_int,
                                     _P(Overfit), _P(Error)]),
    "sebt_overfit_free": (None, [_P(Overfit)]),
    "sebt_sweep_where": (C.c_int, [C.c_char_p, _P(C.c_void_p), _P(Error)]),
    "sebt_where_free": (None, [C.c_void_p]),
    "sebt_oracle_check": (C.c_int, [_P(Backend), _P(Series), _P(Params), c_size_t, _P(OracleOpts),
                                    _P(OracleReport), _P(Error)]),
    "sebt_divergence_text": (None, [_P(Divergence), C.c_char_p, c_size_t]),
    "sebt_equity_curve": (None, [_P(Result), _P(C.c_double), _P(C.c_double)]),
    "sebt_trade_stats_of": (None, [_P(Series), _P(Result), _P(TradeStats)]),
    "sebt_relative_stats_of": (C.c_int, [_P(Series), _P(Result), _P(RelativeOpts), C.c_void_p, _P(Error)]),
    "sebt_plot_equity_script": (C.c_int, [_P(Series), _P(Params), _P(Result), _P(PlotOpts), _P(C.c_void_p),
                                          _P(c_size_t), _P(Error)]),
    "sebt_heatmap_make": (C.c_int, [_P(C.c_double), _P(C.c_double), _P(C.c_double), _P(C.c_uint64), c_size_t,
                                    _P(Heatmap), _P(Error)]),
    "sebt_heatmap_make_agg": (C.c_int, [_P(C.c_double), _P(C.c_double), _P(C.c_double), _P(C.c_uint64), c_size_t,
                                        C.c_int, _P(Heatmap), _P(Error)]),
    "sebt_heatmap_free": (None, [_P(Heatmap)]),
    "sebt_plot_heatmap_script_ex": (C.c_int, [_P(Heatmap), C.c_char_p, C.c_char_p, C.c_char_p, C.c_char_p,
                                              C.c_char_p, _P(PlotOpts), _P(C.c_void_p), _P(c_size_t), _P(Error)]),
    "sebt_sweep_columns_ex": (c_size_t, [_P(C.c_char_p), _P(C.c_bool), C.c_int]),
    "sebt_where_uses": (C.c_bool, [C.c_void_p, c_size_t]),
    "sebt_plot_heatmap_script": (C.c_int, [_P(Heatmap), C.c_char_p, C.c_char_p, C.c_char_p, C.c_char_p,
                                           _P(PlotOpts), _P(C.c_void_p), _P(c_size_t), _P(Error)]),
    "sebt_outfile_open": (C.c_int, [_P(OutFile), C.c_char_p, _P(Error)]),
    "sebt_outfile_direct": (C.c_bool, [_P(OutFile)]),
    "sebt_outfile_write_failed": (None, [_P(OutFile), C.c_int]),
    "sebt_outfile_commit": (C.c_int, [_P(OutFile), _P(Error)]),
    "sebt_outfile_sync": (C.c_int, [_P(OutFile), _P(Error)]),
    "sebt_outfile_abort": (None, [_P(OutFile)]),
    "sebt_paths_check": (C.c_int, [_P(PathUse), c_size_t, _P(Error)]),
    "sebt_sweep_columns_read": (C.c_int, [C.c_char_p, _P(C.c_char_p), c_size_t, _P(_P(C.c_double)), _P(c_size_t),
                                          _P(Error)]),
}


def _declare():
    for name, (res, args) in _DECLS.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    libc = C.CDLL(None, use_errno=True)
    libc.free.argtypes = [C.c_void_p]
    libc.free.restype = None
    libc.fwrite.argtypes = [C.c_void_p, c_size_t, c_size_t, C.c_void_p]
    libc.fwrite.restype = c_size_t
    return libc


libc = _declare()


def check(status, err):
    """Raises SebtError for a failed call."""
    if status != SEBT_OK:
        err.raise_for(status)
