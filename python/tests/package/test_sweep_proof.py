"""The sweep's own proof in the package: sebt.sweep() and iter_sweep()
prove what the driver hands out by default (the best combo on the
reference, at least 256 sampled combos on the exact path), record it in
SweepResult.verification, and fail with nothing written when a backend's
rows differ: here fast_cpu copies with one slip planted in a fast path
(oracle/tests/CMakeLists.txt), which change some rows only."""
import os

import numpy as np
import pytest

import sebt

PAIRS_GRID = {"ema_fast": "6:40:1", "reward_r": "1.0:3.0:0.5", "vol_z": [1.5, 2.0], "z_window": 48,
              "max_hold": [24, 48]}   # 700 combos


def planted(slip):
    """The planted plugin of this build (beside the sebt command it tests)."""
    exe = os.environ.get("SEBT_BINARY")
    path = os.path.join(os.path.dirname(exe), "plugins", "libfast_%s.so" % slip) if exe else ""
    if not os.path.isfile(path):
        pytest.skip("no planted plugin libfast_%s.so in this build" % slip)
    return path


def test_a_default_sweep_records_its_proof(data_1m):
    r = sebt.sweep(data_1m, PAIRS_GRID, progress=False)
    v = r.verification
    assert v["version"] == 3 and v["against"] == "reference" and v["sampled_on"] == "exact-path"
    assert v["best"] == 1 and v["best_on"] == "reference-z-where-read"
    assert v["sampled"] >= 256   # at least 256 of 700, more as its budget allows
    assert len(r) == 700


def test_verify_n_samples_n_and_false_records_none(data_1m):
    assert sebt.sweep(data_1m, PAIRS_GRID, verify=12, progress=False).verification["sampled"] == 12
    assert sebt.sweep(data_1m, PAIRS_GRID, verify=False, progress=False).verification is None
    with pytest.raises(ValueError, match="verify"):
        sebt.sweep(data_1m, PAIRS_GRID, verify=0, progress=False)


def test_the_proof_does_not_change_a_row(data_1m):
    a = sebt.sweep(data_1m, PAIRS_GRID, progress=False).rows
    b = sebt.sweep(data_1m, PAIRS_GRID, verify=False, progress=False).rows
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("slip", ["pair_hop", "twin_cost"])
def test_a_planted_slip_fails_the_default_sweep_and_writes_nothing(data_1m, tmp_path, slip):
    grid = dict(PAIRS_GRID, fee_bp=[0, 5]) if slip == "twin_cost" else PAIRS_GRID
    out = tmp_path / "rows.npy"
    with pytest.raises(sebt.SebtError, match=r"combo [0-9]+: [a-z_]+ is .*, the reference's") as e:
        sebt.sweep(data_1m, grid, backend=planted(slip), out=out, progress=False)
    assert e.value.status == "verify"
    assert not out.exists()
    with pytest.raises(sebt.SebtError):
        sebt.sweep(data_1m, grid, backend=planted(slip), progress=False)
    with pytest.raises(sebt.SebtError):
        for _ in sebt.iter_sweep(data_1m, grid, backend=planted(slip), progress=False):
            pass


def test_the_planted_slip_passes_unproven(data_1m):
    """The same plugin with verify=False returns rows that differ from
    fast_cpu's: only the proof stood between them and the caller."""
    bad = sebt.sweep(data_1m, PAIRS_GRID, backend=planted("pair_hop"), verify=False, progress=False).rows
    good = sebt.sweep(data_1m, PAIRS_GRID, progress=False).rows
    assert (bad["n"] != good["n"]).sum() > 0
    assert np.array_equal(bad["combo"], good["combo"])


def test_out_rows_are_read_back_from_the_file_as_written(data_1m, tmp_path, monkeypatch):
    out = tmp_path / "s.npy"
    r = sebt.sweep(data_1m, PAIRS_GRID, out=out, progress=False)
    assert r.verification["rows_read_back"] is True and r.verification["sampled"] >= 256
    assert sebt.sweep(data_1m, PAIRS_GRID, progress=False).verification["rows_read_back"] is False
    # A writer slip: the file's last byte (the last row's valid_bars, a row
    # the proof always reads) changed on its way out; the rows the driver
    # handed over are right, the file is not.
    import ctypes
    real = sebt.library.libc
    row = sebt.library.lib.sebt_sweep_npy_row_bytes()

    class Slipping:
        def fwrite(self, addr, size, n, f):
            buf = bytearray(ctypes.string_at(addr, size * n))
            if len(buf) % row == 0:   # a window's rows (not the header): the last row's last byte flipped
                buf[-1] ^= 1
            return real.fwrite(bytes(buf), size, n, f)

    monkeypatch.setattr(sebt.library, "libc", Slipping())
    bad = tmp_path / "bad.npy"
    with pytest.raises(sebt.SebtError) as e:
        sebt.sweep(data_1m, PAIRS_GRID, out=bad, progress=False)
    assert e.value.status == "verify" and "combo 699" in str(e.value), str(e.value)
    assert not bad.exists()
