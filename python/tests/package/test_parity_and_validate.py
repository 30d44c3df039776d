"""Parity through libsebt's oracle, validate through the sebt command."""
import sebt


def test_parity_of_fast_cpu_checks_every_combo(data_15m):
    rep = sebt.parity(data_15m, "fast_cpu", grid={"ema_fast": [12, 48], "vol_z": [1.0, 2.0]})
    assert rep["ok"] and rep["combos_checked"] == 4 and rep["combos_diverged"] == 0
    assert rep["decisions"] > 1000
    assert rep["analysis"] == "walk" and rep["analysis_compared"] == 4


def test_parity_of_the_reference_takes_its_analysis_from_its_trades(data_15m):
    rep = sebt.parity(data_15m, "reference", grid={"ema_fast": [12], "vol_z": [1.0]})
    assert rep["ok"] and rep["analysis"] == "trades" and rep["analysis_compared"] == 0


def test_parity_defaults_to_the_shipped_parity_combos(data_15m):
    import os
    n = sum(1 for _ in open(os.path.join(sebt.data_dir(), "parity-combos.csv"))) - 1
    rep = sebt.parity(data_15m, "fast_cpu")
    assert rep["ok"] and rep["combos_checked"] == n


def test_validate_runs_the_release_gate():
    # On the 29-bar series (data= reaches the command): parity on every
    # bundled series is oracle_parity_bundled_fast_cpu's, minutes of the
    # reference's walk that say nothing more of this wrapper.
    small = sebt.bundled("BTCUSDT-1m-2018-02-08.raw.csv")
    rep = sebt.validate("fast_cpu", cases=2, no_speed=True, data=[small])
    assert rep["schema"] == "sebt-validate/1" and rep["pass"] is True and rep["exit_code"] == 0
    parity = [c["name"] for c in rep["checks"] if c["stage"] == "parity"]
    assert parity and all(n.startswith("BTCUSDT-1m-2018-02-08.raw.csv, ") for n in parity), parity
    assert rep["analysis_columns"] == "walk" and rep["analysis_combos_compared"] > 0
