"""Series from a file, from numpy columns and from pandas: the same bars
give the same backtest."""
import numpy as np
import pytest

import sebt


def test_columns_give_the_file_backtest(data_15m):
    s = sebt.load(data_15m)
    a = s.to_numpy()
    s2 = sebt.load({k: a[k] for k in ("ts", "open", "high", "low", "close", "volume")})
    assert s2.n == s.n == 152832
    assert sebt.run(s2).trades.tobytes() == sebt.run(s).trades.tobytes()
    s3 = sebt.load({"time": a["time"], **{k: a[k] for k in ("open", "high", "low", "close", "volume")}})
    assert (s3.ts == s.ts).all()


def test_a_dataframe_with_a_datetime_index(data_15m):
    pd = pytest.importorskip("pandas")
    df = sebt.load(data_15m).to_pandas().set_index("time").drop(columns="ts")
    s = sebt.load(df)
    assert sebt.run(s).metrics == sebt.run(data_15m).metrics


def test_fill_gaps_inserts_missing_bars(data_15m):
    s = sebt.load(data_15m, fill_gaps=True)
    assert s.n == 152832 + 560 and s.n_gap_filled == 560 and s.n_missing == 560
    assert np.isnan(s.column("close")).sum() == 560


def test_unfilled_gaps_warn(data_15m):
    with pytest.warns(UserWarning, match="32 timestamp gaps"):
        sebt.load(data_15m)


def test_the_gap_warnings_advice_works_for_columns_too(data_15m):
    """The warning for columns with gaps says "load with fill_gaps=True";
    that gives the bars the file gives with fill_gaps=True."""
    pd = pytest.importorskip("pandas")
    df = sebt.load(data_15m).to_pandas().drop(columns="ts")
    with pytest.warns(UserWarning, match="load with fill_gaps=True"):
        sebt.load(df)
    s = sebt.load(df, fill_gaps=True)
    f = sebt.load(data_15m, fill_gaps=True)
    assert s.n == f.n == 152832 + 560 and s.n_gap_filled == 560 and s.n_missing == 560
    assert (s.ts == f.ts).all()
    for k in ("open", "high", "low", "close", "volume"):
        assert s.column(k).tobytes() == f.column(k).tobytes()
    assert sebt.run(s).metrics == sebt.run(f).metrics
    with pytest.raises(ValueError, match="lenient applies to files"):
        sebt.load(df, lenient=True)


def test_columns_whose_step_is_off_the_grid_are_not_filled():
    bars = {"ts": [0, 60000, 150000], "open": [1.0] * 3, "high": [1.0] * 3, "low": [1.0] * 3, "close": [1.0] * 3,
            "volume": [1.0] * 3}
    with pytest.raises(ValueError, match="step of 90000 ms before row 2 is not a whole number"):
        sebt.load(bars, fill_gaps=True)
    bars["ts"] = [0, 60000, 240000]
    s = sebt.load(bars, fill_gaps=True)
    assert list(s.ts) == [0, 60000, 120000, 180000, 240000] and s.n_missing == 2 and s.n_gap_filled == 2


def test_bad_columns_are_refused():
    with pytest.raises(sebt.SebtError) as e:
        sebt.load({"ts": [3, 2], "open": [1, 1], "high": [1, 1], "low": [1, 1], "close": [1, 1], "volume": [1, 1]})
    assert "timestamp 2 is not after" in str(e.value)
    with pytest.raises(ValueError, match="volume"):
        sebt.load({"ts": [1, 2], "open": [1, 1], "high": [1, 1], "low": [1, 1], "close": [1, 1]})


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(sebt.SebtError, match="nope.csv"):
        sebt.load(tmp_path / "nope.csv")
