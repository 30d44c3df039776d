"""A sweep through the package has the CLI's npy rows bit for bit: every
column, in memory, in a file, in chunks, and ranked with top."""
import io

import numpy as np
import pytest

import sebt

# Every column moves: int, double and bool parameters, combos with no
# trades (every metric 0), open positions at the end.
GRID = {
    "ema_fast": [6, 24, 96],
    "z_window": [48, 672],
    "vol_z": [0.5, 2.0, 9.0],
    "use_stop": [True, False],
    "reward_r": "0.1:0.3:0.1",
    "max_hold": [3, 96],
    "fee_bp": [0.0, 5.0],
}
N = 3 * 2 * 3 * 2 * 3 * 2 * 2


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("grid") / "g.grid"
    p.write_text("".join("%s = %s\n" % (k, v if isinstance(v, str) else ", ".join(
        ("true" if x else "false") if isinstance(x, bool) else repr(x) for x in v)) for k, v in GRID.items()))
    return p


@pytest.fixture(scope="module")
def cli_npy(cli, data_1m, grid_file, tmp_path_factory):
    """The CLI's npy file as `sebt sweep` writes it by default (verified:
    its header carries the verification note)."""
    out = tmp_path_factory.mktemp("cli") / "sweep.npy"
    # --no-verify: a verified CLI file's header also carries its verification
    # note (docs/formats.md), which the package's file has no reason to hold.
    cli("sweep", "--data", data_1m, "--grid", grid_file, "--format", "npy", "--no-verify", "--output", out)
    return out.read_bytes()


def test_rows_equal_the_cli_npy_in_every_bit(data_1m, cli_npy):
    res = sebt.sweep(data_1m, GRID, window=7)   # windows of 7: rows cross many window edges
    assert len(res) == N
    want = np.load(io.BytesIO(cli_npy))
    assert res.rows.dtype == want.dtype
    assert res.rows.tobytes() == want.tobytes() == cli_npy[-N * sebt.ROW_DTYPE.itemsize:]
    # the sweep is not degenerate: the columns that matter move
    assert len(np.unique(res.rows["n"])) > 10 and (res.rows["n"] == 0).any()
    assert (res.rows["sharpe"] == 0).any() and (res.rows["open_at_end"] == 1).any()


def test_a_grid_file_written_by_the_package_is_the_cli_file(cli, data_1m, grid_file, tmp_path):
    out = tmp_path / "pkg.npy"
    res = sebt.sweep(data_1m, grid_file, out=out)
    unverified = tmp_path / "cli.npy"   # the package does not verify: the CLI's file without the note
    cli("sweep", "--data", data_1m, "--grid", grid_file, "--format", "npy", "--no-verify", "--output", unverified)
    assert out.read_bytes() == unverified.read_bytes()
    assert isinstance(res.rows, np.memmap)


def test_a_file_of_more_rows_than_a_window_is_the_cli_file(cli, data_1m, grid_file, tmp_path):
    out = tmp_path / "big.npy"
    out.write_bytes(b"the previous file")
    sebt.sweep(data_1m, grid_file, out=out, window=7)   # more rows than a window: written past the page cache
    unverified = tmp_path / "cli.npy"
    cli("sweep", "--data", data_1m, "--grid", grid_file, "--format", "npy", "--no-verify", "--output", unverified)
    assert out.read_bytes() == unverified.read_bytes()
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_a_failed_sweep_leaves_the_previous_file(grid_file, tmp_path):
    out = tmp_path / "kept.npy"
    out.write_bytes(b"the previous file")
    with pytest.raises(sebt.SebtError):
        sebt.sweep(tmp_path / "no-such-data.csv", grid_file, out=out, window=7)
    assert out.read_bytes() == b"the previous file"
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_chunks_join_into_the_cli_rows(data_1m, cli_npy):
    chunks = list(sebt.iter_sweep(data_1m, GRID, window=50))
    assert [len(c) for c in chunks] == [50] * (N // 50) + ([N % 50] if N % 50 else [])
    assert np.concatenate(chunks).tobytes() == cli_npy[-N * sebt.ROW_DTYPE.itemsize:]


def test_leaving_the_chunk_loop_early_stops_the_sweep(data_1m):
    it = sebt.iter_sweep(data_1m, GRID, window=10)
    first = next(it)
    it.close()
    assert len(first) == 10 and first["combo"][0] == 0


@pytest.mark.parametrize("by", ["sharpe", "avg_r", "max_dd"])
def test_top_equals_the_cli_top(cli, data_1m, grid_file, tmp_path, by):
    out = tmp_path / "top.npy"
    cli("sweep", "--data", data_1m, "--grid", grid_file, "--top", 9, "--by", by, "--format", "npy", "--output", out)
    res = sebt.sweep(data_1m, grid_file, top=9, by=by)
    assert res.rows.tobytes() == np.load(out).tobytes()
    full = sebt.sweep(data_1m, GRID)
    assert full.best(9, by=by).tobytes() == res.rows.tobytes()


def test_a_list_of_combos_equals_the_cli_combos_file(cli, data_1m, tmp_path):
    combos = [dict(ema_fast=12, reward_r=1.5), dict(ema_fast=48, vol_z=1.0, use_tp=False), dict(atr_window=14)]
    f = tmp_path / "combos.csv"
    f.write_text("ema_fast,reward_r,vol_z,use_tp,atr_window\n12,1.5,2,true,96\n48,2,1.0,false,96\n96,2,2,true,14\n")
    out = tmp_path / "c.npy"
    cli("sweep", "--data", data_1m, "--combos", f, "--format", "npy", "--output", out)
    assert sebt.sweep(data_1m, combos=combos).rows.tobytes() == np.load(out).tobytes()
    assert sebt.sweep(data_1m, combos=f).rows.tobytes() == np.load(out).tobytes()


def test_the_trades_of_any_combo_are_those_of_sebt_run(cli, data_1m):
    import json
    res = sebt.sweep(data_1m, {"ema_fast": [12, 24], "vol_z": [1.0, 1.5]})
    row = res.combo(3)
    t = res.trades(3)
    doc = json.loads(cli("run", "--data", data_1m, "--set", "ema_fast=%d" % row["ema_fast"],
                         "--set", "vol_z=%r" % float(row["vol_z"])))
    assert len(t) == len(doc["trades"]) == row["n"] > 0
    assert list(t["pnl"]) == [x["pnl"] for x in doc["trades"]]


def test_where_ranks_under_a_condition(data_1m):
    res = sebt.sweep(data_1m, GRID)
    best = res.best(5, by="sharpe", where="n >= 30 and max_dd > -500")
    assert len(best) == 5
    assert (best["n"] >= 30).all() and (best["max_dd"] > -500).all()
    rows = res.rows
    ok = rows[(rows["n"] >= 30) & (rows["max_dd"] > -500)]
    assert best["sharpe"][0] == np.nanmax(ok["sharpe"])


def test_a_bad_grid_names_the_parameter(data_1m):
    with pytest.raises(ValueError, match="vol_zz"):
        sebt.sweep(data_1m, {"vol_zz": [1.0]})
    with pytest.raises(sebt.SebtError, match="ema_fast") as e:
        sebt.sweep(data_1m, {"ema_fast": [0, 5]})
    assert e.value.status in ("param", "input", "usage")


def test_the_driver_keeps_the_rows_a_condition_passes(data_1m):
    cond = "n >= 5 and max_dd > -400 and use_stop == true"
    full = sebt.sweep(data_1m, GRID).rows
    mask = (full["n"] >= 5) & (full["max_dd"] > -400) & full["use_stop"]
    assert 0 < mask.sum() < len(full)
    assert sebt.sweep(data_1m, GRID, where=cond, window=11).rows.tobytes() == full[mask].tobytes()
    assert np.concatenate(list(sebt.iter_sweep(data_1m, GRID, where=cond, window=13))).tobytes() == \
        full[mask].tobytes()
    top = sebt.sweep(data_1m, GRID, where=cond, top=7, by="avg_r").rows
    assert top.tobytes() == sebt.SweepResult(full, None, "", None).best(7, by="avg_r", where=mask).tobytes()
    assert (sebt.where_mask(full, cond) == mask).all()


def test_analysis_rows_equal_the_cli_and_each_combo_run_alone(cli, data_1m, grid_file, tmp_path):
    """sweep(analysis=True) has `sebt sweep --analysis`'s npy rows bit for
    bit; its first columns are the plain sweep's; each row's analysis
    columns are those `sebt run` shows for that combo alone."""
    import json
    out = tmp_path / "a.npy"
    cli("sweep", "--data", data_1m, "--grid", grid_file, "--analysis", "--format", "npy", "--no-verify", "--output", out)
    want = np.load(out)
    res = sebt.sweep(data_1m, GRID, analysis=True, window=7)
    assert res.rows.dtype == want.dtype == sebt.ANALYSIS_ROW_DTYPE
    assert res.rows.tobytes() == want.tobytes()
    assert sebt.ANALYSIS_COLUMNS == ("exits_stop_gap", "exits_stop", "exits_tp", "exits_time", "gross_profit",
                                     "gross_loss", "profit_factor", "bars_in_market", "exposure", "sharpe_annual")
    plain = sebt.sweep(data_1m, GRID).rows
    for name in plain.dtype.names:
        assert res.rows[name].tobytes() == plain[name].tobytes(), name
    exits = res.rows["exits_stop_gap"] + res.rows["exits_stop"] + res.rows["exits_tp"] + res.rows["exits_time"]
    assert (exits == res.rows["n"]).all()
    assert np.isnan(res.rows["profit_factor"]).any() and (res.rows["exits_time"] > 0).any()
    for k in (0, 5, 37, N - 1):
        row = res.rows[k]
        args = ["run", "--data", data_1m]
        for p in sebt.PARAMS:
            v = row[p]
            args += ["--set", "%s=%s" % (p, ("true" if v else "false") if row.dtype[p].kind == "b" else repr(v.item()))]
        a = json.loads(cli(*args))["analysis"]
        assert [int(row["exits_" + r]) for r in ("stop_gap", "stop", "tp", "time")] == \
            [a["exits"][r] for r in ("stop_gap", "stop", "tp", "time")]
        for name in ("gross_profit", "gross_loss", "exposure", "sharpe_annual", "bars_in_market"):
            assert row[name] == a[name], (k, name)
        assert (a["profit_factor"] is None and np.isnan(row["profit_factor"])) or row["profit_factor"] == \
            a["profit_factor"]


def test_analysis_top_where_and_chunks_equal_the_cli(cli, data_1m, grid_file, tmp_path):
    cond = "profit_factor > 1 and exits_time >= 1"
    out = tmp_path / "top.npy"
    cli("sweep", "--data", data_1m, "--grid", grid_file, "--analysis", "--top", 6, "--where", cond, "--format", "npy",
        "--output", out)
    top = sebt.sweep(data_1m, grid_file, analysis=True, top=6, where=cond)
    assert top.rows.tobytes() == np.load(out).tobytes()
    full = sebt.sweep(data_1m, GRID, analysis=True)
    assert full.best(6, where=cond).tobytes() == top.rows.tobytes()
    for by in ("profit_factor", "sharpe_annual", "exits_stop"):
        cli("sweep", "--data", data_1m, "--grid", grid_file, "--analysis", "--top", 7, "--by", by, "--format", "npy",
            "--output", out)
        ranked = sebt.sweep(data_1m, grid_file, analysis=True, top=7, by=by)
        assert ranked.rows.tobytes() == np.load(out).tobytes() == full.best(7, by=by).tobytes(), by
    with pytest.raises(ValueError, match="analysis=True"):
        sebt.sweep(data_1m, GRID, top=3, by="profit_factor")
    assert np.concatenate(list(sebt.iter_sweep(data_1m, GRID, analysis=True, window=40))).tobytes() == \
        full.rows.tobytes()
    with pytest.raises(sebt.SebtError, match="analysis"):
        sebt.sweep(data_1m, GRID, where="profit_factor > 1")


@pytest.mark.parametrize("k", [0, -1, -5, 1000000001, 2.5, True, "3"])
def test_a_count_the_cli_refuses_is_refused(data_1m, k):
    """top= and best(k) take what the CLI's --top K takes, 1 to 10^9: 0 is
    not "every row", -1 not "all but the worst", and numpy's "negative
    dimensions" never reaches the user."""
    with pytest.raises(ValueError, match="top expects a whole number from 1 to 1000000000"):
        sebt.sweep(data_1m, {"ema_fast": [6, 24]}, top=k)
    res = sebt.sweep(data_1m, {"ema_fast": [6, 24]})
    with pytest.raises(ValueError, match="k expects a whole number from 1 to 1000000000"):
        res.best(k)


def test_the_cache_off_words_turn_the_cache_off_in_any_case(monkeypatch, tmp_path):
    """SEBT_CACHE_DIR=OFF (0, false, no, none, any case) is the CLI's "no
    cache", not a folder of that name."""
    from sebt import series
    for word in ("", "off", "OFF", "Off", "0", "false", "FALSE", "no", "No", "none", "NONE"):
        monkeypatch.setenv("SEBT_CACHE_DIR", word)
        assert series._cache_dir() is None, word
    monkeypatch.setenv("SEBT_CACHE_DIR", str(tmp_path / "c"))
    assert series._cache_dir() == str(tmp_path / "c")
