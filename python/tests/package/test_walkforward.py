"""sebt.walkforward equals `sebt walkforward --format json` bit for bit
(every window's bars, pick, parameters, train and test metrics, the
chained metrics) and its --trades CSV, and the reference check runs."""
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
                  "train", "test"):
            assert mine[k] == theirs[k], (mine["window"], k)
    assert wf.metrics == doc["chained"]
    assert wf.checked == doc["check"]["compared"] > 0
    with open(trades) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(wf.trades) == doc["chained"]["n"]
    assert [int(r["entry_index"]) for r in rows] == wf.trades["entry_index"].tolist()
    assert [float(r["pnl"]) for r in rows] == wf.trades["pnl"].tolist()
    assert np.all(np.diff(wf.trades["entry_index"]) > 0)
