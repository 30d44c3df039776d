"""split(overfit=) and walkforward(overfit=) give `sebt split --overfit`'s
and `sebt walkforward --overfit`'s records bit for bit: walk-forward's per
window against the CLI's JSON, split's against `sebt sweep --overfit` over
a file of the in-sample bars alone (what the CLI's test shows split's
block to be, cli/tests/overfit_literal.py) and the numbers of split's text
block."""
import gzip
import json
import math
import struct

import pytest

import sebt

GRID = {"ema_fast": [48, 192], "vol_z": [2.0, 3.0], "reward_r": [1.5, 3.0]}
CUT = "2020-01-01"
CUT_MS = 1577836800000


def bits(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else struct.pack("<d", x)


def same_record(got, want):
    """Every field of an overfit record but the seconds, equal bits."""
    assert got["best"] == want["best"] and got["version"] == want["version"] == 1
    for part in ("dsr", "pbo"):
        assert sorted(got[part]) == sorted(want[part])
        for k, v in want[part].items():
            if k == "logits":
                assert [bits(x) for x in got[part][k]] == [bits(x) for x in v], (part, k)
            elif isinstance(v, float) or v is None:
                assert bits(got[part][k]) == bits(v), (part, k)
            else:
                assert got[part][k] == v, (part, k)


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory):
    g = tmp_path_factory.mktemp("grid") / "g.grid"
    g.write_text("".join("%s = %s\n" % (k, ", ".join(map(str, v))) for k, v in GRID.items()))
    return g


def test_walkforward_overfit_equals_the_cli(cli, data_15m, grid_file):
    doc = json.loads(cli("walkforward", "--data", data_15m, "--fill-gaps", "--grid", grid_file, "--train", "365d",
                         "--test", "180d", "--check", 0, "--format", "json", "--overfit", "--overfit-blocks", 4))
    s = sebt.load(data_15m, fill_gaps=True)
    wf = sebt.walkforward(s, GRID, train="365d", test="180d", check=None, overfit=4)
    assert len(wf.windows) == len(doc["windows"]) >= 5
    for got, want in zip(wf.windows, doc["windows"]):
        assert (got["overfit"] is None) == (want["overfit"] is None)
        if want["overfit"] is not None:
            same_record(got["overfit"], want["overfit"])
            assert got["overfit"]["pbo"]["splits"] == 6
    want = doc["overfit_summary"]
    got = wf.overfit_summary
    assert sorted(got) == sorted(want) and want["windows"] == len(doc["windows"])
    for k, v in want.items():
        assert bits(got[k]) == bits(v) if isinstance(v, float) else got[k] == v, k


def test_split_overfit_equals_the_cli(cli, data_15m, grid_file, tmp_path):
    part = tmp_path / "in-sample.csv"
    with gzip.open(data_15m, "rt") as f, open(part, "w") as g:
        for i, line in enumerate(f):
            if i == 0 or int(line.split(",", 1)[0]) < CUT_MS:
                g.write(line)
    want = json.loads(cli("sweep", "--data", part, "--fill-gaps", "--grid", grid_file, "--format", "json",
                          "--no-verify", "--overfit", "--overfit-blocks", 4))["overfit"]
    s = sebt.load(data_15m, fill_gaps=True)
    sp = sebt.split(s, CUT, GRID, top=3, overfit=4)
    same_record(sp.overfit, want)
    text = cli("split", "--data", data_15m, "--fill-gaps", "--grid", grid_file, "--split", CUT, "--format", "text",
               "--overfit", "--overfit-blocks", 4).decode()
    assert "deflated Sharpe ratio: %.3f " % sp.overfit["dsr"]["dsr"] in text
    assert "PBO: %.3f over " % sp.overfit["pbo"]["pbo"] in text


def test_without_overfit_none(data_15m):
    sp = sebt.split(data_15m, CUT, {"vol_z": [2.0, 3.0]}, top=1)
    wf = sebt.walkforward(data_15m, {"vol_z": [2.0, 3.0]}, train="365d", test="365d", check=None)
    assert sp.overfit is None and wf.overfit_summary is None and all("overfit" not in w for w in wf.windows)


@pytest.mark.parametrize("bad", [3, 26, "16"])
def test_bad_blocks_refused(data_15m, bad):
    with pytest.raises(ValueError, match="overfit"):
        sebt.split(data_15m, CUT, {"vol_z": [2.0, 3.0]}, overfit=bad)
    with pytest.raises(ValueError, match="overfit"):
        sebt.walkforward(data_15m, {"vol_z": [2.0, 3.0]}, train="365d", test="365d", overfit=bad)
