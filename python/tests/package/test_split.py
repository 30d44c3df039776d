"""sebt.split equals `sebt split` bit for bit: every combo's in-sample and
out-of-sample columns of its CSV, --where and --top; a Sharpe from fewer
than 10 trades is flagged from the row's own trade count."""
import csv
import math

import numpy as np
import pytest

import sebt

GRID = {"ema_fast": [12, 24, 48], "vol_z": [1.0, 2.0], "use_tp": [True, False]}


def _grid_file(tmp_path):
    g = tmp_path / "g.grid"
    g.write_text("".join("%s = %s\n" % (k, ", ".join(str(x).lower() for x in v)) for k, v in GRID.items()))
    return g


def _same(mine, text):
    """A value of the package's row against the CSV's text, bit for bit."""
    if text in ("true", "false"):
        return bool(mine) == (text == "true")
    v = float(text)
    return (math.isnan(v) and math.isnan(mine)) or float(mine) == v


def _cli_rows(cli, *args):
    lines = cli("split", *args).decode().splitlines()
    return list(csv.DictReader(lines))


def _assert_rows_equal(rows, cli_rows):
    assert len(rows) == len(cli_rows) > 0
    for mine, theirs in zip(rows, cli_rows):
        assert list(theirs) == list(sebt.oos.SPLIT_DTYPE.names[:len(theirs)])
        for k, text in theirs.items():
            assert _same(mine[k], text), (theirs["combo"], k, mine[k], text)


def test_split_equals_the_cli(cli, data_1m, tmp_path):
    g = _grid_file(tmp_path)
    r = sebt.split(data_1m, "2019-01-25", grid=GRID)
    _assert_rows_equal(r.rows, _cli_rows(cli, "--data", data_1m, "--grid", g, "--split", "2019-01-25"))
    assert r.rows["combo"].tolist() == list(range(12))
    assert r.in_sample_bars == 24 * 24 * 60 and r.out_sample_bars == 7 * 24 * 60 and r.combos == r.passing == 12
    # --where over the in-sample columns, and --top by another metric.
    r = sebt.split(data_1m, "2019-01-25", grid=GRID, where="n >= 45")
    _assert_rows_equal(r.rows, _cli_rows(cli, "--data", data_1m, "--grid", g, "--split", "2019-01-25",
                                         "--where", "n >= 45"))
    assert 0 < len(r.rows) < 12 and (r.rows["is_n"] >= 45).all() and r.passing == len(r.rows)
    r = sebt.split(data_1m, 1548374400000, grid=GRID, top=3, by="avg_r")
    _assert_rows_equal(r.rows, _cli_rows(cli, "--data", data_1m, "--grid", g, "--split", "1548374400000",
                                         "--top", "3", "--by", "avg_r"))
    assert r.rows["is_avg_r"].tolist() == sorted(r.rows["is_avg_r"].tolist(), reverse=True)


def test_a_sharpe_from_few_trades_is_flagged(data_1m):
    # Six hours out of sample: every combo has fewer than 10 trades there,
    # more in sample.
    r = sebt.split(data_1m, np.datetime64("2019-01-31T18:00"), grid=GRID)
    assert (r.rows["oos_n"] < 10).all() and (r.rows["is_n"] >= 10).all()
    assert r.rows["oos_few_trades"].all() and not r.rows["is_few_trades"].any()
    r = sebt.split(data_1m, "2019-01-02", grid=GRID)
    assert (r.rows["is_few_trades"] == (r.rows["is_n"] < 10)).all() and r.rows["is_few_trades"].any()
    assert sebt.FEW_TRADES == 10


def test_bad_arguments_are_refused(data_1m):
    with pytest.raises(ValueError, match="split at"):
        sebt.split(data_1m, "2019-02-30", grid=GRID)
    with pytest.raises(sebt.SebtError, match="no out-of-sample bars"):
        sebt.split(data_1m, "2019-03-01", grid=GRID)
    with pytest.raises(ValueError, match="top="):
        sebt.split(data_1m, "2019-01-25", grid=GRID, top=0)
    with pytest.raises(sebt.SebtError, match="did you mean 'vol_z'"):
        sebt.split(data_1m, "2019-01-25", grid=GRID, where="vol_zz > 1")
