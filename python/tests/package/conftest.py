import os
import subprocess

import pytest

import sebt


def pytest_configure(config):
    # The bundled 15m file has gaps; the tests that check the warning catch it themselves.
    config.addinivalue_line("filterwarnings", "ignore:.*timestamp gaps:UserWarning")


@pytest.fixture(scope="session")
def cli():
    """Runs this build's sebt command; returns its stdout (bytes)."""
    exe = os.environ.get("SEBT_BINARY") or sebt.sebt_command()

    def run(*args):
        p = subprocess.run([exe] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.returncode == 0, "sebt %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr.decode())
        return p.stdout
    run.exe = exe
    return run


@pytest.fixture(scope="session")
def data_1m():
    return sebt.bundled("BTCUSDT-1m-2019-01.csv.gz")


@pytest.fixture(scope="session")
def data_15m():
    return sebt.bundled("BTCUSDT-15m-2017-2021.csv.gz")
