"""One combo through the package: the trades, the open position and the
metrics of `sebt run --format json`, every field, bit for bit; the
indicator columns of `sebt features`."""
import json
import struct

import numpy as np
import pytest

import sebt


def bits(x):
    return struct.pack("<d", x)


@pytest.mark.parametrize("sets", [{}, {"ema_fast": 12, "reward_r": 1.5, "use_time": False},
                                  {"vol_z": 0.5, "atr_stop_mult": 0.0, "fee_bp": 0.0}])
def test_run_equals_sebt_run_json(cli, data_15m, sets):
    args = []
    for k, v in sets.items():
        args += ["--set", "%s=%s" % (k, ("true" if v else "false") if isinstance(v, bool) else v)]
    doc = json.loads(cli("run", "--data", data_15m, "--format", "json", *args))
    r = sebt.run(data_15m, **sets)
    assert r.params == doc["params"]
    assert r.valid_bars == doc["valid_bars"] and r.bars == doc["bars"]
    for k, v in doc["metrics"].items():
        assert bits(float(r.metrics[k])) == bits(float(v)), k
    assert len(r.trades) == len(doc["trades"]) > 0
    for got, want in zip(r.trades, doc["trades"]):
        for k, v in want.items():
            if isinstance(v, float):
                assert bits(float(got[k])) == bits(v), k
            else:
                assert got[k] == v, k
        assert str(got["entry_time"]) + "Z" == np.datetime_as_string(
            np.datetime64(want["entry_ts"], "ms")) + "Z"
    want_stats = doc["analysis"]
    assert r.stats["exits"] == want_stats["exits"]
    for k, v in want_stats.items():
        if k == "exits":
            continue
        if v is None:   # JSON's null: the profit factor when no trade lost
            assert np.isnan(r.stats[k]), k
        elif isinstance(v, int):
            assert r.stats[k] == v, k
        else:
            assert bits(float(r.stats[k])) == bits(v), k
    want_open = doc["open_at_end"]
    assert (r.open_at_end is None) == (want_open is None)
    if want_open:
        for k, v in want_open.items():
            assert r.open_at_end[k] == v, k


def test_iso_times_stand_beside_epoch_ms(data_15m):
    t = sebt.run(data_15m).trades
    assert t["entry_time"][0] == np.datetime64(int(t["entry_ts"][0]), "ms")
    assert str(t["entry_time"][0]).startswith("2017-")


def test_exit_counts_add_up(data_15m):
    r = sebt.run(data_15m)
    c = r.exit_counts()
    assert sum(c.values()) == r.metrics["n"] == 202
    assert c["stop"] + c["stop_gap"] == 109   # docs/cli.md: 109 of the 202 trades were stopped out
    assert r.stats["exits"] == c


def test_stats_worked_from_the_trades(data_15m):
    """The library's figures against numpy over the trades, from their
    definitions (docs/formats.md, `analysis`)."""
    r = sebt.run(data_15m)
    t, st = r.trades, r.stats
    pnl = t["pnl"]
    assert st["gross_profit"] == pytest.approx(pnl[pnl > 0].sum(), rel=1e-12)
    assert st["gross_loss"] == pytest.approx(pnl[pnl < 0].sum(), rel=1e-12)
    assert st["profit_factor"] == pytest.approx(pnl[pnl > 0].sum() / -pnl[pnl < 0].sum(), rel=1e-12)
    held = int((t["bars_held"].astype(np.int64) + 1).sum())
    if r.open_at_end:
        held += r.open_at_end["bars_held"] + 1
    assert st["bars_in_market"] == held
    assert st["exposure"] == held / r.valid_bars
    s = sebt.load(data_15m)
    years = (int(s.ts[-1]) - int(s.ts[0])) / (365.25 * 86400000)
    assert st["years"] == pytest.approx(years, rel=1e-15) and 4.3 < years < 4.4
    assert st["sharpe_annual"] == pytest.approx(r.metrics["sharpe"] * np.sqrt(r.metrics["n"] / years), rel=1e-12)


def test_features_equal_sebt_features_csv(cli, data_15m):
    text = cli("features", "--data", data_15m, "--set", "ema_fast=24").decode().splitlines()
    head = text[0].split(",")
    f = sebt.features(data_15m, ema_fast=24)
    assert len(f) == len(text) - 1
    for i in (0, 100, 700, 5000, len(f) - 1):
        row = dict(zip(head, text[i + 1].split(",")))
        assert f["ts"][i] == int(row["ts"])
        for k in sebt.FEATURE_COLUMNS[:7]:
            want = float(row[k])
            assert (np.isnan(want) and np.isnan(f[k][i])) or bits(f[k][i]) == bits(want), (i, k)
        assert int(f["signal"][i]) == int(row["signal"]) and int(f["valid"][i]) == int(row["valid"])


def test_a_bad_parameter_is_refused_with_its_name(data_15m):
    with pytest.raises(sebt.SebtError, match="z_window") as e:
        sebt.run(data_15m, z_window=1)
    assert e.value.status == "param"
    with pytest.raises(sebt.SebtError, match="ema_fastt"):
        sebt.run(data_15m, ema_fastt=3)


def test_run_on_the_reference_equals_fast_cpu(data_15m):
    a = sebt.run(data_15m, backend_name="reference", ema_fast=24)
    b = sebt.run(data_15m, backend_name="fast_cpu", ema_fast=24)
    assert a.backend == "reference" and a.trades.tobytes() == b.trades.tobytes()
