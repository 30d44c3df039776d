"""sweep(overfit=...) gives `sebt sweep --overfit`'s JSON section bit for
bit (both from libsebt's one pass; the literal recomputation is the CLI's
test, cli/tests/overfit_literal.py), and refuses a bad block count."""
import json
import math
import struct

import pytest

import sebt

GRID = {"ema_fast": [48, 96, 192], "vol_z": [2.0, 3.0], "tr_z": [1.0, 1.5], "reward_r": [1.5, 3.0],
        "max_hold": [96, 192]}


def bits(x):
    return None if x is None or math.isnan(x) else struct.pack("<d", x)


def test_overfit_equals_the_cli(cli, data_15m, tmp_path):
    grid = tmp_path / "g.grid"
    grid.write_text("".join("%s = %s\n" % (k, ", ".join(map(str, v))) for k, v in GRID.items()))
    doc = json.loads(cli("sweep", "--data", data_15m, "--fill-gaps", "--grid", grid, "--format", "json",
                         "--no-verify", "--overfit", "--overfit-blocks", 6))["overfit"]
    s = sebt.load(data_15m, fill_gaps=True)
    got = sebt.sweep(s, GRID, overfit=6, verify=False).overfit
    assert got["best"] == doc["best"] and got["version"] == doc["version"] == 1
    for part in ("dsr", "pbo"):
        for k, v in doc[part].items():
            if k == "logits":
                assert [bits(x) for x in got[part][k]] == [bits(x) for x in v]
            elif isinstance(v, float) or v is None:
                assert bits(got[part][k]) == bits(v), (part, k)
            else:
                assert got[part][k] == v, (part, k)
    assert doc["pbo"]["splits"] == 20 and 0 <= got["pbo"]["pbo"] <= 1


def test_without_overfit_none(data_15m):
    r = sebt.sweep(data_15m, {"vol_z": [2.0, 3.0]}, verify=False)
    assert r.overfit is None


@pytest.mark.parametrize("bad", [3, 26, 0, -2, 1.5, "16"])
def test_bad_blocks_refused(data_15m, bad):
    with pytest.raises(ValueError, match="overfit"):
        sebt.sweep(data_15m, {"vol_z": [2.0, 3.0]}, overfit=bad, verify=False)
