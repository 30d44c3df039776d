"""Parity of a backend against the reference (libsebt's oracle, in this
process) and the release gate `sebt validate` (the installed sebt command,
run as a child process: validate isolates each check in a process of its
own, which a library call cannot)."""
import ctypes as C
import json
import os
import shutil
import subprocess

from . import library as L
from .backtest import backend, params_dict
from .series import load
from .sweep import _Combos


def data_dir():
    """sebt's shared files (the bundled data, parity-combos.csv), or None."""
    d = L.lib.sebt_data_dir()
    return d.decode() if d else None


def bundled(name="BTCUSDT-15m-2017-2021.csv.gz"):
    """The path of a bundled data file (fixtures/data/NAME)."""
    d = data_dir()
    if not d:
        raise FileNotFoundError("sebt's shared files were not found (set SEBT_SHARE_DIR)")
    return os.path.join(d, "fixtures", "data", name)


def parity(data, backend_name, grid=None, combos=None, threads=0, memory_budget=0, stop_first=False):
    """Runs every combo on the backend and on the reference and compares
    them under the backend's contract (SPEC §8), as `sebt parity --data`
    does for one series. Combos: a grid or combos as sebt.sweep takes them,
    else the parity combos sebt ships (parity-combos.csv). Returns a dict:
    ok, combos_checked, combos_diverged, decisions, ties, analysis ("walk":
    the backend's walk keeps the analysis tally, and analysis_compared combos
    had every analysis column compared with the reference's; "trades": its
    columns come from its trades, which are compared) and divergences
    (the first few, each with combo, params, what, bar, ts, reference,
    candidate, margin, detail, text)."""
    s = load(data)
    b = backend(backend_name)
    if grid is None and combos is None:
        combos = os.path.join(data_dir() or "", "parity-combos.csv")
    cs = _Combos(grid, combos)
    try:
        if cs.grid:
            arr = (L.Params * cs.n)()
            L.lib.sebt_grid_combos(cs.grid, 0, cs.n, arr)
        else:
            arr = cs.array
        rep = L.OracleReport()
        err = L.Error()
        o = L.OracleOpts(threads=threads, memory_budget=memory_budget, stop_first=stop_first)
        L.check(L.lib.sebt_oracle_check(b, C.byref(s._c), arr, cs.n, C.byref(o), C.byref(rep), C.byref(err)), err)
    finally:
        cs.close()
    details = []
    for i in range(rep.n_details):
        d = rep.details[i]
        text = C.create_string_buffer(2048)
        L.lib.sebt_divergence_text(C.byref(d), text, len(text))
        details.append(dict(combo=d.combo, params=params_dict(d.params), what=d.what.decode(), bar=d.bar, ts=d.ts,
                            reference=d.ref_value, candidate=d.cand_value, margin=d.margin,
                            detail=d.detail.decode(), text=text.value.decode()))
    return dict(ok=rep.combos_diverged == 0, backend=b.contents.name.decode(), combos_checked=rep.combos_checked,
                combos_diverged=rep.combos_diverged, decisions=rep.decisions, ties=rep.ties,
                analysis="walk" if rep.analysis_from_walk else "trades", analysis_compared=rep.analysis_compared,
                divergences=details)


def sebt_command():
    """The sebt command beside this libsebt (PREFIX/bin/sebt, or the build
    folder's), else the one on PATH."""
    buf = C.create_string_buffer(4096)
    if L.lib.sebt_part_path(b"sebt", buf, len(buf)):
        return buf.value.decode()
    found = shutil.which("sebt")
    if not found:
        raise FileNotFoundError("the sebt command was not found beside %s nor on PATH" % L.path)
    return found


def validate(backend_name, cases=None, time=None, seed=None, threads=None, data=(), no_speed=False, extra=()):
    """`sebt validate --backend NAME --format json` as a child process.
    Returns its JSON report (a dict: pass, exit_code, checks, ...) whatever
    the verdict; raises SebtError when validate could not run (exit 2, 3, 5)."""
    cmd = [sebt_command(), "validate", "--backend", os.fspath(backend_name), "--format", "json"]
    for opt, v in (("--cases", cases), ("--time", time), ("--seed", seed), ("--threads", threads)):
        if v is not None:
            cmd += [opt, str(v)]
    for d in data:
        cmd += ["--data", os.fspath(d)]
    if no_speed:
        cmd.append("--no-speed")
    cmd += list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1, 4):
        raise L.SebtError({2: 1, 3: 6, 5: 5}.get(p.returncode, 8), "sebt validate exited %d: %s" % (
            p.returncode, p.stderr.strip()))
    return json.loads(p.stdout)
