"""Pictures: what libsebt computes for them (the equity curve and its
drawdown, the heatmap's cells) against values worked out here from the
trades and the sweep's rows; the files gnuplot draws, from the package and
from `sebt plot`, which run the same script."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import sebt

needs_gnuplot = pytest.mark.skipif(not (os.environ.get("SEBT_GNUPLOT") or shutil.which("gnuplot")),
                                   reason="gnuplot is not installed (apt-get install gnuplot-nox)")
GRID = {"ema_fast": [12, 48, 96], "vol_z": [1.0, 2.0, 3.0], "reward_r": [1.5, 3.0], "use_tp": [True, False]}


@pytest.fixture(scope="module")
def demo_sweep(data_15m):
    return sebt.sweep(data_15m, GRID)


def test_the_drawdown_bottoms_at_max_dd(data_15m):
    for sets in ({}, {"vol_z": 3.0, "reward_r": 3.0}, {"ema_fast": 12}):
        r = sebt.run(data_15m, **sets)
        eq, dd = r.equity()
        cum, want = 0.0, []
        for pnl in r.trades["pnl"]:   # one trade at a time, as SPEC §7 sums
            cum += pnl
            want.append(cum)
        assert eq.tolist() == want
        assert min(dd.min(), 0.0) == r.metrics["max_dd"]
        assert np.float64(eq[-1]).tobytes() == np.float64(r.metrics["total_pnl"]).tobytes()


def test_the_library_curve_is_the_package_curve(data_15m):
    import ctypes as C
    from sebt import library as L
    from sebt.backtest import _CRun
    with _CRun(data_15m, None, None, 0, {"ema_fast": 48}) as c:
        n = c.result.n_trades
        eq, dd = np.empty(n), np.empty(n)
        dp = C.POINTER(C.c_double)
        L.lib.sebt_equity_curve(C.byref(c.result), eq.ctypes.data_as(dp), dd.ctypes.data_as(dp))
        r = sebt.RunResult(c.backend, c.params, c.series, c.result)
    want_eq, want_dd = r.equity()
    assert eq.tobytes() == want_eq.tobytes() and dd.tobytes() == want_dd.tobytes()


def test_each_cell_is_the_best_row_of_its_pair(demo_sweep):
    xs, ys, value, combo, rows = sebt.heatmap(demo_sweep, "ema_fast", "vol_z", "sharpe", agg="best")
    assert list(xs) == GRID["ema_fast"] and list(ys) == GRID["vol_z"]
    r = demo_sweep.rows
    for j, yv in enumerate(ys):
        for i, xv in enumerate(xs):
            cell = r[(r["ema_fast"] == xv) & (r["vol_z"] == yv)]
            assert rows[j, i] == len(cell) == 4
            best = cell[np.lexsort((cell["combo"], -cell["sharpe"]))][0]
            assert value[j, i] == best["sharpe"] and combo[j, i] == best["combo"]


def test_fix_keeps_only_the_rows_with_that_value(demo_sweep):
    _, _, value, combo, rows = sebt.heatmap(demo_sweep, "ema_fast", "vol_z", "avg_r", agg="best",
                                            fix={"use_tp": False, "reward_r": 3.0})
    assert (rows == 1).all()
    r = demo_sweep.rows
    for c, v in zip(combo.ravel(), value.ravel()):
        row = r[r["combo"] == c][0]
        assert not row["use_tp"] and row["reward_r"] == 3.0 and row["avg_r"] == v


# A hand-made sweep, every cell worked out by hand from the definitions
# (docs/cli.md: linear interpolation between the sorted values at
# h = (m - 1) p; NaN rows left out; the mean a sum over the count):
#   ema_fast=12 vol_z=1: 4 1 NaN 2 8 -> sorted 1 2 4 8
#   ema_fast=24 vol_z=1: -1 3 0.5    -> sorted -1 0.5 3
#   ema_fast=12 vol_z=2: NaN NaN     -> NaN
#   ema_fast=24 vol_z=2: 2.5
HAND = {"combo": np.arange(10, 21, dtype=float),
        "ema_fast": np.array([12, 24, 12, 12, 24, 12, 24, 12, 12, 24, 12], float),
        "vol_z": np.array([1, 1, 1, 2, 2, 1, 1, 2, 1, 1, 1], float),
        "n": np.array([40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 5], float),
        "sharpe": np.array([4, -1, 1, np.nan, 2.5, np.nan, 3, np.nan, 2, 0.5, 8])}
HAND_CELLS = {"median": [[3, 0.5], [np.nan, 2.5]], "mean": [[3.75, 2.5 / 3], [np.nan, 2.5]],
              "q25": [[1.75, -0.25], [np.nan, 2.5]], "q75": [[5, 1.75], [np.nan, 2.5]],
              "best": [[8, 3], [np.nan, 2.5]]}


def test_each_aggregate_of_a_hand_made_sweep():
    for agg, want in HAND_CELLS.items():
        xs, ys, value, combo, rows = sebt.heatmap(HAND, "ema_fast", "vol_z", agg=agg)
        assert list(xs) == [12, 24] and list(ys) == [1, 2]
        assert np.array_equal(value, np.array(want), equal_nan=True), (agg, value)
        assert rows.tolist() == [[5, 3], [2, 1]]
        assert combo[0].tolist() == [20, 16]   # the best row's, whatever the aggregate
    # The default is the median.
    assert np.array_equal(sebt.heatmap(HAND, "ema_fast", "vol_z")[2], np.array(HAND_CELLS["median"]), equal_nan=True)


def test_where_applies_before_aggregating(tmp_path):
    # Without combo 20 (n = 5, sharpe 8): best 4, median of 4 1 2 is 2.
    for agg, want in (("best", 4), ("median", 2)):
        value = sebt.heatmap(HAND, "ema_fast", "vol_z", agg=agg, where="n >= 30")[2]
        assert value[0, 0] == want and value[0, 1] == HAND_CELLS[agg][0][1]
    assert np.array_equal(sebt.heatmap(HAND, "ema_fast", "vol_z", where="true")[2], np.array(HAND_CELLS["median"]),
                          equal_nan=True)
    with pytest.raises(sebt.SebtError, match="the text table's 'trades' is the column 'n'"):
        sebt.heatmap(HAND, "ema_fast", "vol_z", where="trades >= 30")
    with pytest.raises(ValueError, match="no row has where n > 100"):
        sebt.heatmap(HAND, "ema_fast", "vol_z", where="n > 100")


def test_axes_and_aggregates_are_checked():
    with pytest.raises(ValueError, match="no parameter named 'volz'; did you mean vol_z"):
        sebt.heatmap(HAND, "ema_fast", "volz")
    with pytest.raises(ValueError, match="agg='medain'.*did you mean median"):
        sebt.heatmap(HAND, "ema_fast", "vol_z", agg="medain")
    rows = dict(HAND, ema_slow=np.full(11, 672.0), use_stop=np.ones(11))
    with pytest.raises(ValueError, match="did not vary ema_slow: all its 11 rows have ema_slow=672.0"):
        sebt.heatmap(rows, "ema_fast", "ema_slow")
    with pytest.raises(ValueError, match="use_stop=true"):
        sebt.heatmap(rows, "use_stop", "vol_z")


def test_a_file_reads_as_the_array(cli, data_15m, demo_sweep, tmp_path):
    grid = tmp_path / "g.grid"
    grid.write_text("".join("%s = %s\n" % (k, ", ".join(str(x).lower() for x in v)) for k, v in GRID.items()))
    for fmt in ("csv", "npy"):
        out = tmp_path / ("s." + fmt)
        cli("sweep", "--data", data_15m, "--grid", grid, "--format", fmt, "--output", out)
        for agg in ("best", "median", "q75"):
            a = sebt.heatmap(out, "reward_r", "ema_fast", "total_pnl", agg=agg, where="use_tp and n >= 20")
            b = sebt.heatmap(demo_sweep, "reward_r", "ema_fast", "total_pnl", agg=agg, where="use_tp and n >= 20")
            for u, v in zip(a, b):
                assert u.tobytes() == v.tobytes()


def test_a_continuous_axis_is_refused():
    n = 1000
    rows = {"ema_fast": np.arange(n, dtype=float), "vol_z": np.arange(n) % 2.0, "sharpe": np.zeros(n),
            "combo": np.arange(n, dtype=float)}
    with pytest.raises(sebt.SebtError, match="distinct values"):
        sebt.heatmap(rows, "ema_fast", "vol_z")


@needs_gnuplot
def test_pictures_from_the_package_and_the_cli(cli, data_15m, demo_sweep, tmp_path):
    png, svg = tmp_path / "eq.png", tmp_path / "h.svg"
    gp_pkg, gp_cli = tmp_path / "pkg.gp", tmp_path / "cli.gp"
    sebt.plot_equity(data_15m, png, vol_z=3.0, script=gp_pkg)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cli("plot", "equity", "--data", data_15m, "--set", "vol_z=3", "--output", tmp_path / "c.png", "--script", gp_cli)
    assert gp_pkg.read_text().replace(str(png), "X") == gp_cli.read_text().replace(str(tmp_path / "c.png"), "X")
    npy = tmp_path / "s.npy"
    np.save(npy, demo_sweep.rows)
    sebt.plot_heatmap(npy, "ema_fast", "vol_z", svg, metric="win_rate", fix={"use_tp": True}, where="n >= 10")
    text = svg.read_text()
    assert "<svg" in text and "median win_rate over ema_fast and vol_z" in text
    assert "use_tp=true fixed; rows where n >= 10; each cell the median of its rows" in text
    cli("plot", "heatmap", "--sweep", npy, "--x", "ema_fast", "--y", "vol_z", "--metric", "win_rate",
        "--fix", "use_tp=true", "--where", "n >= 10", "--output", tmp_path / "c.svg")
    assert (tmp_path / "c.svg").read_text() == text


def test_without_gnuplot_the_cli_exits_2_naming_the_package(cli, data_15m, tmp_path, monkeypatch):
    env = dict(os.environ, SEBT_GNUPLOT=str(tmp_path / "no-gnuplot"))
    p = subprocess.run([cli.exe, "plot", "equity", "--data", data_15m, "--output", tmp_path / "x.png"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2 and "gnuplot-nox" in p.stderr and not (tmp_path / "x.png").exists()
    monkeypatch.setenv("SEBT_GNUPLOT", str(tmp_path / "no-gnuplot"))
    with pytest.raises(FileNotFoundError, match="gnuplot-nox"):
        sebt.plot_equity(data_15m, tmp_path / "y.png")


def _payloads(marker):
    return ["T `touch %s.bq` x" % marker,
            'T " . system("touch %s.sys") . " x' % marker,
            "T ' . system('touch %s.sq') . ' x" % marker,
            "T $(touch %s.dollar) x" % marker,
            'T \\" `touch %s.bsq` \\' % marker,
            'T\nsystem("touch %s.nl")\n`touch %s.nl2`' % (marker, marker),
            'T \\\nsystem("touch %s.cont")' % marker,
            "it's \"quoted\" \\\\ \\n end"]


@needs_gnuplot
def test_no_text_reaches_gnuplot_as_syntax(tmp_path, data_1m):
    # Every text the plot functions hand gnuplot: titles, the output's
    # name in the script, a sweep's column names as the heatmap's labels.
    marker = str(tmp_path / "marker")
    made = lambda: sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("marker"))
    s = sebt.sweep(data_1m, {"ema_fast": [12, 24], "vol_z": [1.0, 2.0]})
    for i, p in enumerate(_payloads(marker)):
        out = tmp_path / ("eq%d.svg" % i)
        sebt.plot_equity(data_1m, out, title=p, script=tmp_path / ("eq%d.gp" % i))
        assert made() == [] and out.stat().st_size > 0
        out = tmp_path / ("h%d %s.svg" % (i, p.replace("/", "")))
        sebt.plot_heatmap(s, "ema_fast", "vol_z", out, title=p, script=tmp_path / ("h%d.gp" % i))
        assert made() == [] and out.stat().st_size > 0
        out.unlink()
        subprocess.run([sebt.plot.gnuplot(), str(tmp_path / ("h%d.gp" % i))], check=True, cwd=tmp_path,
                       stderr=subprocess.DEVNULL)
        assert made() == [] and out.stat().st_size > 0
        rows = {"combo": np.arange(4), "ema_fast": np.array([12., 24, 12, 24]), "vol_z": np.array([1., 1, 2, 2]),
                p: np.array([0.5, 0.25, 0.75, 1.0])}
        out = tmp_path / ("m%d.png" % i)
        sebt.plot_heatmap(rows, "ema_fast", "vol_z", out, metric=p)
        assert made() == [] and out.stat().st_size > 0


def test_no_output_replaces_an_input(tmp_path, data_1m):
    # The CLI's rule (sebt_paths_check): refused before anything is written,
    # naming both, every input byte for byte as it was.
    import shutil as sh
    d, g = tmp_path / "d.csv", tmp_path / "g.grid"
    sh.copyfile(data_1m, d)
    g.write_text("ema_fast = 12, 24\nvol_z = 1.0, 2.0\n")
    s = tmp_path / "s.npy"
    sr = sebt.sweep(d, g, out=s)
    before = {p: p.read_bytes() for p in (d, g, s)}
    refusals = [
        (lambda: sebt.sweep(str(d), str(g), out=str(d)), "out", "data"),
        (lambda: sebt.sweep(d, g, out=tmp_path / "." / "g.grid"), "out", "grid"),
        (lambda: sebt.plot_equity(d, tmp_path / "p.png", script=d), "script", "data"),
        (lambda: sebt.plot_equity(d, tmp_path / "p.svg", script=tmp_path / "p.svg"), "script", "output"),
        (lambda: sebt.plot_equity(d, d, fmt="png"), "output", "data"),
        (lambda: sebt.plot_heatmap(s, "ema_fast", "vol_z", tmp_path / "h.svg", script=s), "script", "sweep"),
        (lambda: sebt.plot_heatmap(sr, "ema_fast", "vol_z", s, fmt="svg"), "output", "sweep"),
    ]
    for call, written, read in refusals:
        with pytest.raises(sebt.SebtError) as e:
            call()
        assert e.value.status == "usage"
        assert (written + " ") in str(e.value) and (read + " ") in str(e.value), str(e.value)
        assert {p: p.read_bytes() for p in before} == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "g.grid", "s.npy"]
