"""sweep(relative=True) and `sebt sweep --relative`: every relative column
of every row equals the literal recomputation of test_relative.py from
that combo's trades (many combos, rare traders among them so that the
undefined cases come up), the CLI's npy rows are the package's bit for
bit, and the columns work in where and by; without relative they are
refused by name."""
import math
import subprocess

import numpy as np
import pytest

import sebt
from test_relative import literal, same

# Some combos trade often, some (vol_z 8) a few times, some (vol_z 50) never: the undefined cases.
GRID = {"ema_fast": [24, 192], "vol_z": [1.0, 8.0, 50.0], "tr_z": [1.0, 3.0], "reward_r": [1.5, 3.0],
        "max_hold": [12, 192]}


@pytest.fixture(scope="module")
def swept(data_15m):
    s = sebt.load(data_15m, fill_gaps=True)
    return s, sebt.sweep(s, GRID, relative=True, threads=2)


def test_every_relative_column_equals_its_literal_recomputation(swept):
    s, res = swept
    rows = res.rows
    assert rows.dtype.names[-len(sebt.RELATIVE_COLUMNS):] == sebt.RELATIVE_COLUMNS
    assert len(sebt.RELATIVE_COLUMNS) == 17 and len(rows) == 48
    kinds = {"nan": 0, "few": 0, "many": 0}
    for row in rows:
        trades = res.trades(int(row["combo"]))
        want = literal(trades, s, 10000.0, 1.0)
        for k in sebt.RELATIVE_COLUMNS:
            assert same(float(row[k]), float(want[k])), (int(row["combo"]), k, row[k], want[k])
        kinds["nan" if math.isnan(row["sqn"]) else "few" if len(trades) < 10 else "many"] += 1
    assert all(kinds.values()), kinds   # defined, undefined and few-trade rows all compared


def test_the_cli_rows_are_the_package_rows(cli, data_15m, swept, tmp_path):
    _, res = swept
    grid = tmp_path / "g.grid"
    grid.write_text("".join("%s = %s\n" % (k, ", ".join(map(str, v))) for k, v in GRID.items()))
    out = tmp_path / "rel.npy"
    cli("sweep", "--data", data_15m, "--fill-gaps", "--grid", grid, "--relative", "--format", "npy", "--output", out)
    got = np.load(out)
    assert got.dtype == res.rows.dtype == sebt.RELATIVE_ROW_DTYPE
    assert got.tobytes() == np.asarray(res.rows).tobytes()


def test_where_and_by_read_them(swept, data_15m):
    s, res = swept
    top = sebt.sweep(s, GRID, relative=True, top=3, by="calmar", where="total_return_pct > 0 and n >= 10",
                     threads=2)
    keep = res.rows[(res.rows["total_return_pct"] > 0) & (res.rows["n"] >= 10)]
    order = sorted(keep, key=lambda r: (-r["calmar"] if not math.isnan(r["calmar"]) else math.inf, r["combo"]))
    assert list(top.rows["combo"]) == [int(r["combo"]) for r in order[:3]]


def test_refused_without_relative(cli, data_15m, tmp_path):
    with pytest.raises(sebt.SebtError, match="relative column"):
        sebt.sweep(data_15m, {"vol_z": [2.0, 3.0]}, analysis=True, where="sqn > 0")
    with pytest.raises(ValueError, match="relative=True"):
        sebt.sweep(data_15m, {"vol_z": [2.0, 3.0]}, analysis=True, top=1, by="sqn")
    grid = tmp_path / "g.grid"
    grid.write_text("vol_z = 2.0, 3.0\n")
    for extra in (["--analysis", "--where", "sqn > 0"], ["--analysis", "--by", "sqn"]):
        p = subprocess.run([cli.exe, "sweep", "--data", data_15m, "--top", "1", "--grid", str(grid)] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.returncode == 2 and "--relative" in p.stderr and not p.stdout, p.stderr
