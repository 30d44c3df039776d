"""sebt.walkforward equals `sebt walkforward --format json` bit for bit
(every window's bars, pick, parameters, train and test metrics, the
chained metrics) and its --trades CSV, and the reference check runs; the
ctypes structs have oos.h's sizes and offsets."""
import csv
import json

import numpy as np

import sebt

GRID = {"ema_fast": [8, 16, 32], "ema_slow": [96], "z_window": [96], "atr_window": [24], "vol_z": [1.0, 2.0],
        "tr_z": [0.5], "cloc_min": [0.5], "reward_r": [1.0, 2.0], "max_hold": [30]}


def test_walkforward_equals_the_cli(cli, data_1m, tmp_path):
    grid = tmp_path / "g.grid"
    grid.write_text("".join("%s = %s\n" % (k, ", ".join(map(str, v))) for k, v in GRID.items()))
    trades = tmp_path / "t.csv"
    doc = json.loads(cli("walkforward", "--data", data_1m, "--grid", grid, "--train", "5d", "--test", "5d",
                         "--where", "n >= 10", "--check", "3", "--format", "json", "--trades", trades))
    wf = sebt.walkforward(data_1m, GRID, train="5d", test="5d", where="n >= 10", check=3)
    assert len(wf.windows) == len(doc["windows"]) == 5
    for mine, theirs in zip(wf.windows, doc["windows"]):
        for k in ("window", "train_from", "train_to", "test_from", "test_to", "passing", "picked", "combo", "params",
                  "train", "test", "train_few_trades", "test_few_trades"):
            assert mine[k] == theirs[k], (mine["window"], k)
        assert mine["test_few_trades"] == (theirs["test"]["n"] < 10)
    assert wf.metrics == doc["chained"]
    assert wf.few_trades == doc["chained_few_trades"] == (doc["chained"]["n"] < 10)
    assert wf.checked == doc["check"]["compared"] > 0
    with open(trades) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(wf.trades) == doc["chained"]["n"]
    assert [int(r["entry_index"]) for r in rows] == wf.trades["entry_index"].tolist()
    assert [float(r["pnl"]) for r in rows] == wf.trades["pnl"].tolist()
    assert np.all(np.diff(wf.trades["entry_index"]) > 0)


def test_windows_without_bars_are_skipped_as_by_the_cli(cli, data_1m, tmp_path):
    """Days 1-6 of January 2019 without day 4: in days, window 3 tests on
    the hole and window 4 trains on it; both skipped, the rest checked."""
    import gzip

    day0, day = 1546300800000, 86400000
    with gzip.open(data_1m, "rt") as f:
        lines = [ln for i, ln in enumerate(f)
                 if i == 0 or (int(ln.split(",")[0]) < day0 + 6 * day and
                               not day0 + 3 * day <= int(ln.split(",")[0]) < day0 + 4 * day)]
    assert len(lines) == 7201
    data = tmp_path / "hole.csv"
    data.write_text("".join(lines))
    grid = tmp_path / "g.grid"
    grid.write_text("".join("%s = %s\n" % (k, ", ".join(map(str, v))) for k, v in GRID.items()))
    doc = json.loads(cli("walkforward", "--data", data, "--grid", grid, "--train", "1d", "--test", "1d",
                         "--check", "2", "--format", "json"))
    wf = sebt.walkforward(str(data), GRID, train="1d", test="1d", check=2)
    assert [w.get("skipped") for w in wf.windows] == [w.get("skipped") for w in doc["windows"]] == [
        None, None, "no bars in its test span", "no bars in its train span", None]
    assert [w["picked"] for w in wf.windows] == [True, True, False, False, True]
    assert wf.checked == doc["check"]["compared"] == 3 * (2 + 2)


def test_structs_match_oos_h(tmp_path):
    import ctypes as C
    import os
    import shutil
    import subprocess

    import pytest
    from sebt import oos

    cc = shutil.which("cc") or shutil.which("gcc")
    inc = os.environ.get("SEBT_INCLUDE_DIR")
    if not cc or not inc:
        pytest.skip("no C compiler or SEBT_INCLUDE_DIR")
    from sebt import library as L
    structs = {"sebt_wf_opts": oos.WfOpts, "sebt_wf_window": oos.WfWindow, "sebt_wf_result": oos.WfResult,
               "sebt_split_window": oos.SplitWindow, "sebt_split_opts": oos.SplitOpts,
               "sebt_split_pick": oos.SplitPick, "sebt_split_result": oos.SplitResult,
               "sebt_heatmap": L.Heatmap, "sebt_plot_opts": L.PlotOpts}
    src = ["#include <stdio.h>", "#include <stddef.h>", "#include <sebt/oos.h>", "#include <sebt/plot.h>",
           "int main(void) {"]
    for c_name, py in structs.items():
        src.append('printf("%s %%zu\\n", sizeof(%s));' % (c_name, c_name))
        for f, _ in py._fields_:
            src.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (c_name, f, c_name, f))
    src.append('printf("SEBT_FEW_TRADES %d\\n", SEBT_FEW_TRADES);')
    src.append("return 0; }")
    (tmp_path / "layout.c").write_text("\n".join(src))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", inc, str(tmp_path / "layout.c"), "-o", str(exe)], check=True)
    want = dict(line.split() for line in subprocess.run([str(exe)], stdout=subprocess.PIPE, text=True,
                                                         check=True).stdout.splitlines())
    for c_name, py in structs.items():
        assert C.sizeof(py) == int(want[c_name]), c_name
        for f, _ in py._fields_:
            assert getattr(py, f).offset == int(want[c_name + "." + f]), c_name + "." + f
    assert oos.FEW_TRADES == int(want["SEBT_FEW_TRADES"])
