"""The tutorial's plate from Python: the NumPy reference's steps bit for bit on every
boundary, and the same numbers as `heatlab run` for the same arguments."""

import json
import subprocess

import numpy as np
import pytest

import heatlab
from conftest import golden

CASES = [  # rows, cols, seed, steps, coeff (tests/golden/make_golden.py)
    (64, 64, 7, 25, 0.25),
    (33, 47, 3966789, 10, 0.25),
    (40, 64, 12345, 50, 0.2),
]


@pytest.mark.parametrize("boundary", ["dirichlet", "neumann", "periodic"])
@pytest.mark.parametrize("rows,cols,seed,steps,coeff", CASES)
def test_steps_equal_the_numpy_reference(rows, cols, seed, steps, coeff, boundary):
    tag = f"{rows}x{cols}_{seed}_{boundary}_{steps}"
    sim = heatlab.Simulation(rows, cols, coeff=coeff, boundary=boundary, backend="cpu")
    sim.set_temperature(golden(f"field_{rows}x{cols}_{seed}.npy"))
    sim.step(steps)
    assert sim.steps == steps
    assert np.array_equal(sim.temperature, golden(f"diffused_{tag}.npy"))
    assert np.array_equal(sim.laplacian(), golden(f"laplacian_{tag}.npy"))


def notebook_recipe(j, k, seed, fft_input_dtype):
    """The seed notebook's field, its noise transformed as `fft_input_dtype` (NumPy 1 turned
    float32 into float64 itself; NumPy 2 transforms float32 as it is)."""
    r = np.random.default_rng(seed)
    field = r.random(size=(j, k), dtype=np.float32).astype(fft_input_dtype)
    field = np.fft.fftshift(np.fft.fft2(field))
    radius = 1 + np.sqrt((np.arange(j).reshape(-1, 1) - j // 2) ** 2
                         + (np.arange(k).reshape(1, -1) - k // 2) ** 2)
    field = field * (radius ** -1.7)
    field = np.fft.ifft2(np.fft.ifftshift(field)) * (radius < 0.45 * j)
    field = field.real * (field.real > np.percentile(field.real, 70))
    return field.astype(np.float32)


@pytest.mark.parametrize("rows,cols,seed", [(64, 64, 7), (33, 47, 3966789), (128, 80, 1), (97, 101, 5)])
def test_generated_field_is_the_notebook_recipe_bit_for_bit(rows, cols, seed):
    ours = heatlab.generate_field(rows, cols, seed=seed)
    assert np.array_equal(ours, notebook_recipe(rows, cols, seed, np.float64))


def test_generated_field_is_the_notebook_recipe_within_one_ulp():
    ours = heatlab.generate_field(64, 64, seed=7)
    numpy = golden("field_64x64_7.npy")
    assert ours.dtype == np.float32 and ours.shape == (64, 64)
    # Same cells zeroed by the percentile threshold; values within one float32 rounding.
    assert np.array_equal(ours == 0, numpy == 0)
    assert np.all(np.abs(ours - numpy) <= np.spacing(np.abs(numpy)))
    # The plate starts from the same generator.
    sim = heatlab.Simulation(64, 64, seed=7, backend="cpu")
    assert np.array_equal(sim.temperature, ours)


def test_generation_parameters_change_the_field():
    base = heatlab.generate_field(32, 40, seed=1)
    assert not np.array_equal(base, heatlab.generate_field(32, 40, seed=2))
    assert not np.array_equal(base, heatlab.generate_field(32, 40, seed=1, exponent=-1.0))
    assert not np.array_equal(base, heatlab.generate_field(32, 40, seed=1, percentile=50.0))


@pytest.mark.parametrize("boundary", ["dirichlet", "neumann", "periodic"])
def test_plate_equals_heatlab_run(heatlab_bin, tmp_path, boundary):
    rows, cols, seed, steps, coeff = 48, 72, 11, 137, 0.2
    out = tmp_path / "run"
    subprocess.run(
        [heatlab_bin, "run", "--size", f"{rows}x{cols}", "--seed", str(seed),
         "--steps", str(steps), "--coeff", str(coeff), "--boundary", boundary,
         "--backend", "cpu", "--npy", "--out", str(out)],
        check=True, capture_output=True,
    )
    sim = heatlab.Simulation(rows, cols, seed=seed, coeff=coeff, boundary=boundary, backend="cpu")
    assert np.array_equal(sim.temperature, np.load(out / "field_000000.npy"))
    sim.step(100)
    sim.step(37)
    assert np.array_equal(sim.temperature, np.load(out / f"field_{steps:06d}.npy"))
    assert np.array_equal(sim.laplacian(), np.load(out / f"laplacian_{steps:06d}.npy"))
    record = json.loads((out / "run.json").read_text())
    assert record["steps_completed"] == sim.steps


def test_zero_steps_change_nothing():
    sim = heatlab.Simulation(20, 30, backend="cpu")
    before = sim.temperature
    sim.step(0)
    assert sim.steps == 0
    assert np.array_equal(sim.temperature, before)


def test_reset_returns_to_the_initial_field():
    sim = heatlab.Simulation(20, 30, backend="cpu")
    initial = sim.temperature
    sim.step(15)
    assert not np.array_equal(sim.temperature, initial)
    sim.reset()
    assert sim.steps == 0
    assert np.array_equal(sim.temperature, initial)


def test_properties_say_what_runs():
    sim = heatlab.Simulation(16, 24, backend="cpu")
    assert sim.backend == "cpu"
    assert sim.shape == (16, 24)
    assert sim.time is None
    assert "cpu" in sim.kernel
    assert "seed 3966789" in sim.origin
    assert "16x24" in repr(sim)
    sim.step(3)
    rows = sim.timings
    assert len(rows) == 1 and rows[0]["steps"] == 3 and rows[0]["step_start"] == 0
    assert rows[0]["backend"] == "cpu" and rows[0]["steps_per_s"] > 0


def test_unstable_coefficient_halts_at_the_last_finite_state():
    sim = heatlab.Simulation(24, 24, coeff=0.4, allow_unstable=True, backend="cpu")
    with pytest.raises(heatlab.SimulationHalted, match="non-finite at step"):
        sim.step(5000)
    assert 0 < sim.steps < 5000
    assert np.isfinite(sim.temperature).all()
