"""sebt: the seller-exhaustion backtest engine (libsebt) from Python.

    import sebt
    s = sebt.load(sebt.bundled("BTCUSDT-15m-2017-2021.csv.gz"))
    r = sebt.run(s, ema_fast=48)             # metrics, trades (numpy; r.trades_frame() for pandas)
    res = sebt.sweep(s, {"ema_fast": [24, 48, 96], "vol_z": [1.5, 2.0, 2.5]})
    res.best(10, by="sharpe", where="n >= 30")
    res.trades(combo_id)

numpy is required, pandas optional. Results are the sebt command's bit for
bit: the same library runs both. docs/python.md is the reference."""
from .library import SebtError, path as library_path
from .series import Series, load
from .backtest import (EXIT_REASONS, FEATURE_COLUMNS, PARAMS, TRADE_DTYPE, RunResult, backends, features, params,
                       params_dict, run)
from .sweep import ANALYSIS_COLUMNS, ANALYSIS_ROW_DTYPE, RELATIVE_COLUMNS, RELATIVE_ROW_DTYPE, ROW_DTYPE, SweepResult, iter_sweep, sweep, where_mask
from .oracle import bundled, data_dir, parity, sebt_command, validate
from .plot import gnuplot, heatmap, plot_equity, plot_heatmap
from .oos import FEW_TRADES, Split, WalkForward, split, walkforward

__version__ = "0.1.0"


def defaults():
    """SPEC §2's default parameters, as a dict."""
    return params_dict(params())


__all__ = ["SebtError", "Series", "load", "run", "features", "sweep", "iter_sweep", "SweepResult", "RunResult",
           "parity", "validate", "params", "defaults", "backends", "bundled", "data_dir", "sebt_command",
           "where_mask", "walkforward", "WalkForward", "split", "Split", "FEW_TRADES", "plot_equity", "plot_heatmap", "heatmap", "gnuplot", "PARAMS", "EXIT_REASONS", "FEATURE_COLUMNS", "TRADE_DTYPE", "ROW_DTYPE", "ANALYSIS_ROW_DTYPE", "ANALYSIS_COLUMNS", "RELATIVE_ROW_DTYPE", "RELATIVE_COLUMNS", "library_path"]
