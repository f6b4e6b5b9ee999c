"""The steady state and implicit steps from Python: the same field as `heatlab run --steady`,
a fixed point of the explicit step, implicit steps that reach it, and the refusals."""

import subprocess

import numpy as np
import pytest

import heatlab


def test_steady_state_equals_heatlab_run(heatlab_bin, tmp_path):
    out = tmp_path / "steady"
    subprocess.run(
        [heatlab_bin, "run", "--scenario", "heat-sink", "--steady", "--backend", "cpu",
         "--npy", "--out", str(out)],
        check=True, capture_output=True,
    )
    sim = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    report = sim.solve_steady()
    assert report["iterations"] > 0
    assert report["estimated_error"] <= 1e-8 * report["span"]
    assert len(report["residual_history"]) == report["iterations"] + 1
    np.testing.assert_array_equal(sim.temperature, np.load(out / "field_000000.npy"))
    # The steady state is a fixed point of the explicit step, to f32 rounding.
    steady = sim.temperature.copy()
    sim.step(1)
    assert np.abs(sim.temperature - steady).max() <= 1e-5 * report["span"]


def test_implicit_steps_reach_the_steady_state():
    sim = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    sim.solve_steady()
    steady = sim.temperature.copy()
    sim.reset()
    sim.set_implicit("backward-euler", dt=200.0)
    sim.step(400)
    assert sim.time == pytest.approx(80_000.0)
    span = steady.max() - steady.min()
    assert np.abs(sim.temperature - steady).max() < 1e-4 * span
    sim.set_implicit(None)
    sim.step(3)
    assert sim.steps == 403


def test_what_the_solver_refuses():
    plate = heatlab.Simulation(32, 32, backend="cpu")
    with pytest.raises(ValueError, match="heat problem"):
        plate.solve_steady()
    with pytest.raises(ValueError, match="heat problem"):
        plate.set_implicit("crank-nicolson", dt=1.0)
    sim = heatlab.Simulation.from_scenario("heater-thermostat", backend="cpu")
    with pytest.raises(ValueError, match="thermostat"):
        sim.solve_steady()
    sink = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    with pytest.raises(ValueError, match="implicit scheme"):
        sink.set_implicit("forward-euler", dt=1.0)
    with pytest.raises(ValueError, match="positive"):
        sink.set_implicit("backward-euler", dt=-1.0)
    with pytest.raises(ValueError, match="tolerance"):
        sink.solve_steady(tolerance=2.0)
    with pytest.raises(RuntimeError, match="did not converge"):
        sink.solve_steady(max_iterations=2)
