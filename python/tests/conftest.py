"""Shared fixtures: the golden files made with the NumPy reference, the `heatlab` binary for
comparisons with the command line, and the CUDA backend (skipped, saying why, where there is
no GPU; a failure instead under HEATLAB_REQUIRE_CUDA=1)."""

import os
import pathlib
import shutil

import numpy as np
import pytest

import heatlab

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"


def golden(name):
    """A golden array (tests/golden), made by tests/golden/make_golden.py with NumPy."""
    return np.load(GOLDEN / name)


@pytest.fixture(scope="session")
def heatlab_bin():
    """The heatlab binary: HEATLAB_BIN when set (it must exist), else the workspace's release
    or debug build; skipped when none is built."""
    given = os.environ.get("HEATLAB_BIN")
    if given:
        path = pathlib.Path(given)
        assert path.is_file(), f"HEATLAB_BIN={given} does not exist"
        return str(path)
    for profile in ("release", "debug"):
        path = REPO / "target" / profile / "heatlab"
        if path.is_file():
            return str(path)
    found = shutil.which("heatlab")
    if found:
        return found
    pytest.skip("skipped: no heatlab binary (build it with cargo build --release, or set HEATLAB_BIN)")


def cuda_or_skip():
    """A reason to skip when CUDA cannot run here; under HEATLAB_REQUIRE_CUDA=1, a failure."""
    try:
        heatlab.Simulation(8, 8, backend="cuda").close()
    except RuntimeError as error:
        if os.environ.get("HEATLAB_REQUIRE_CUDA") == "1":
            pytest.fail(f"HEATLAB_REQUIRE_CUDA=1 but CUDA cannot run: {error}")
        pytest.skip(f"skipped: CUDA cannot run here ({error})")


@pytest.fixture(scope="session")
def cuda():
    """Skips the test (saying why) when there is no usable GPU."""
    cuda_or_skip()
