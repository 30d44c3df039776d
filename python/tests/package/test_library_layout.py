"""The ctypes structs of sebt.library have the C compiler's sizes and
offsets for the installed headers: a field added in C and not in Python
fails here, not as wrong numbers."""
import ctypes as C
import importlib
import os
import shutil
import subprocess

import pytest

from sebt import library as L
sebt_sweep = importlib.import_module("sebt.sweep")   # the module (sebt.sweep is also its function)

STRUCTS = {
    "sebt_series": (L.Series, ["n", "ts", "volume", "interval_ms"]),
    "sebt_params": (L.Params, ["vol_z", "use_stop", "atr_stop_mult", "use_time", "max_hold", "slippage_bp"]),
    "sebt_param_info": (L.ParamInfo, ["offset", "min", "min_excluded", "default_value", "role"]),
    "sebt_features": (L.Features, ["cloc", "signal", "valid"]),
    "sebt_trade": (L.Trade, ["entry_price", "r", "reason", "bars_held"]),
    "sebt_open_position": (L.OpenPosition, ["signal_index", "risk", "bars_held"]),
    "sebt_metrics": (L.Metrics, ["sharpe"]),
    "sebt_result": (L.Result, ["open_at_end", "valid_bars", "n_trades", "trades"]),
    "sebt_batch_opts": (L.BatchOpts, ["want_trades", "progress", "memory_budget", "stats"]),
    "sebt_backend": (L.Backend, ["contract", "features", "run_batch", "state"]),
    "sebt_load_opts": (L.LoadOpts, ["fill_gaps"]),
    "sebt_sweep_record": (L.SweepRecord, ["metrics", "valid_bars", "open_at_end", "has_analysis", "analysis"]),
    "sebt_sweep_window": (L.SweepWindow, ["count", "n_parts", "part", "part_bytes", "passes", "part_first", "row_at",
                                          "analysis"]),
    "sebt_outfile": (L.OutFile, ["f", "tmp", "atomic", "direct", "synced"]),
    "sebt_sweep_opts": (L.SweepOpts, ["n_combos", "window", "want_trades", "rows", "top", "metric", "where", "on_window",
                                      "user", "progress", "progress_user", "analysis", "verify_file",
                                      "verify_file_start"]),
    "sebt_sweep_result": (L.SweepResult, ["n_top", "combos_done", "combos_passed", "stopped", "compute_cpu_s",
                                          "rows_by_backtest_threads"]),
    "sebt_divergence": (L.Divergence, ["params", "what", "bar", "margin", "detail"]),
    "sebt_oracle_report": (L.OracleReport, ["decisions", "stats", "analysis_from_walk", "analysis_compared", "n_details",
                                                "details"]),
    "sebt_oracle_opts": (L.OracleOpts, ["memory_budget", "stop_first", "progress_user"]),
    "sebt_error": (L.Error, ["msg"]),
    "sebt_trade_stats": (L.TradeStats, ["gross_profit", "bars_in_market", "sharpe_annual"]),
    "sebt_dsr": (L.Dsr, ["var_sr", "t", "sr0", "dsr"]),
    "sebt_pbo": (L.Pbo, ["n_splits", "pbo", "n_fit", "logit_median", "mask", "logit"]),
    "sebt_overfit": (L.Overfit, ["best", "dsr", "pbo", "pbo_seconds"]),
}


def test_structs_match_the_headers(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    inc = os.environ.get("SEBT_INCLUDE_DIR")
    if not cc or not inc:
        pytest.skip("no C compiler or SEBT_INCLUDE_DIR")
    src = ["#include <stdio.h>", "#include <stddef.h>", "#include <sebt/sebt.h>", "#include <sebt/sweep.h>",
           "#include <sebt/oracle.h>", "#include <sebt/analysis.h>", "#include <sebt/outfile.h>", "#include <sebt/overfit.h>",
           "int main(void) {"]
    for c_name, (_, fields) in STRUCTS.items():
        src.append('printf("%s %%zu\\n", sizeof(%s));' % (c_name, c_name))
        for f in fields:
            src.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (c_name, f, c_name, f))
    src.append('printf("SEBT_SWEEP_WINDOW %zu\\n", SEBT_SWEEP_WINDOW);')
    src.append('printf("SEBT_SWEEP_ANALYSIS_WINDOW %zu\\n", SEBT_SWEEP_ANALYSIS_WINDOW);')
    src.append("return 0; }")
    (tmp_path / "layout.c").write_text("\n".join(src))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", inc, str(tmp_path / "layout.c"), "-o", str(exe)], check=True)
    want = dict(line.split() for line in subprocess.run([str(exe)], stdout=subprocess.PIPE, text=True,
                                                         check=True).stdout.splitlines())
    assert sebt_sweep._DRIVER_WINDOW == int(want["SEBT_SWEEP_WINDOW"])
    assert sebt_sweep._ANALYSIS_WINDOW == int(want["SEBT_SWEEP_ANALYSIS_WINDOW"])
    for c_name, (py, fields) in STRUCTS.items():
        assert C.sizeof(py) == int(want[c_name]), c_name
        for f in fields:
            assert getattr(py, f).offset == int(want[c_name + "." + f]), c_name + "." + f
