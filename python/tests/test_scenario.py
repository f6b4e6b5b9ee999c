"""Heat problems from Python: the gallery and scenario files, bit for bit as `heatlab run`,
simulated time, the energy budget, saved states."""

import json
import subprocess

import numpy as np
import pytest

import heatlab

SLAB = """
title = "A slab between two held sides"
[grid]
rows = 12
cols = 30
spacing = 0.001
[time]
duration = 1.0
[base]
material = "stainless-steel"
[initial]
temperature = "20 C"
[sides]
left = { type = "fixed", temperature = "100 C" }
right = { type = "fixed", temperature = "20 C" }
top = { type = "insulated" }
bottom = { type = "insulated" }
"""

def test_gallery_problem_equals_heatlab_run(heatlab_bin, tmp_path):
    steps = 2500
    out = tmp_path / "run"
    subprocess.run(
        [heatlab_bin, "run", "--scenario", "heat-sink", "--steps", str(steps),
         "--backend", "cpu", "--npy", "--out", str(out)],
        check=True, capture_output=True,
    )
    sim = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    assert sim.time == 0.0
    assert np.array_equal(sim.temperature, np.load(out / "field_000000.npy"))
    sim.step(1000)
    sim.step(1500)
    assert np.array_equal(sim.temperature, np.load(out / f"field_{steps:06d}.npy"))
    record = json.loads((out / "run.json").read_text())
    problem = record["problem"]
    assert sim.time == pytest.approx(problem["simulated_seconds"], rel=0, abs=0)
    energy = sim.energy()
    budget = energy["budget"]
    assert budget["to_step"] == steps
    assert budget["heaters"] == pytest.approx(problem["budget"]["window"]["exchange"]["sources"], rel=1e-12)
    assert energy["stored"] == pytest.approx(budget["stored_after"], rel=1e-12)
    # How the balance closes: the run record's figures (summed over other windows: the steps
    # here came in two calls), within the float32 bound of the steps.
    window = problem["budget"]["window"]
    # (the bound takes each window's largest temperature).
    assert budget["heat_crossed"] == pytest.approx(window["heat_crossed"], rel=1e-9)
    for key in ("round_off_bound", "relative_closing_error"):
        assert budget[key] == pytest.approx(window[key], rel=1e-2), key
    assert budget["within_round_off"] == window["within_round_off"]
    assert budget["within_round_off"] and budget["round_off_bound"] > 0
    assert budget["relative_closing_error"] < 1e-3


def test_scenario_file_and_its_time(tmp_path):
    path = tmp_path / "slab.toml"
    path.write_text(SLAB)
    sim = heatlab.Simulation.from_scenario(str(path), backend="cpu")
    assert sim.shape == (12, 30)
    assert "A slab" in sim.origin
    energy = sim.energy()
    assert energy["budget"] is None and energy["stored"] > 0
    sim.step(200)
    assert sim.time > 0
    per_step = sim.time / 200
    sim.step(100)
    assert sim.time == pytest.approx(300 * per_step, rel=1e-12)
    field = sim.temperature
    # Heat flows in from the hot side: warmer on the left, everything within the held span.
    assert field[:, 0].mean() > field[:, -1].mean()
    assert field.min() >= 20.0 - 1e-4 and field.max() <= 100.0 + 1e-4
    budget = sim.energy()["budget"]
    assert budget["from_step"] == 0 and budget["to_step"] == 300
    assert set(budget["sides"]) == {"left", "right", "top", "bottom"}
    assert budget["sides"]["left"] > 0


def test_state_round_trip_continues_bit_for_bit(tmp_path):
    state = tmp_path / "sink.heatlab"
    sim = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    sim.step(700)
    sim.save_state(str(state))
    resumed = heatlab.Simulation.resume(state, backend="cpu")
    assert resumed.steps == 700
    assert resumed.time == sim.time
    assert np.array_equal(resumed.temperature, sim.temperature)
    sim.step(300)
    resumed.step(300)
    assert np.array_equal(resumed.temperature, sim.temperature)


def test_state_resumes_in_heatlab_run(heatlab_bin, tmp_path):
    state = tmp_path / "plate.heatlab"
    sim = heatlab.Simulation(30, 40, seed=3, boundary="periodic", coeff=0.15, backend="cpu")
    sim.step(50)
    sim.save_state(state)
    out = tmp_path / "run"
    subprocess.run(
        [heatlab_bin, "run", "--resume", str(state), "--steps", "25", "--backend", "cpu",
         "--npy", "--out", str(out)],
        check=True, capture_output=True,
    )
    sim.step(25)
    assert np.array_equal(sim.temperature, np.load(out / "field_000075.npy"))


def test_set_temperature_keeps_step_and_time_and_restarts_the_budget(tmp_path):
    sim = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    sim.step(400)
    time, field = sim.time, sim.temperature
    sim.set_temperature(field + 1.0)
    assert sim.steps == 400 and sim.time == time
    assert np.array_equal(sim.temperature, field + np.float32(1.0))
    assert sim.energy()["budget"] is None
    sim.step(10)
    assert sim.energy()["budget"]["from_step"] == 400
