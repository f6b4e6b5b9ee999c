"""The example notebook (examples/diffusion_tutorial.ipynb) runs top to bottom, its code cells
as one script on a small field (its GPU cells say that they skip where there is no GPU)."""

import json
import os

import pytest

from conftest import REPO

NOTEBOOK = REPO / "examples" / "diffusion_tutorial.ipynb"


def test_the_tutorial_notebook_runs(monkeypatch, capsys):
    matplotlib = pytest.importorskip("matplotlib", reason="skipped: matplotlib is not installed")
    matplotlib.use("Agg")
    monkeypatch.setenv("HEATLAB_NOTEBOOK_SIZE", os.environ.get("HEATLAB_NOTEBOOK_SIZE", "256"))
    monkeypatch.setenv("HEATLAB_NOTEBOOK_STEPS", os.environ.get("HEATLAB_NOTEBOOK_STEPS", "500"))
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    source = "\n".join(
        "".join(line for line in cell["source"] if not line.lstrip().startswith("%"))
        for cell in cells
        if cell["cell_type"] == "code"
    )
    assert all(not cell.get("outputs") for cell in cells if cell["cell_type"] == "code")
    exec(compile(source, str(NOTEBOOK), "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "the recipe with a float64 FFT, bit for bit: True" in printed
    assert "cpu: 25 steps bit for bit equal to NumPy's: True" in printed
    assert "Error" not in printed
