"""A simulation's life from Python: closing, `with`, two threads at once, Ctrl-C during a
long step, the GIL released while stepping, and the import's time."""

import _thread
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import heatlab


def test_closed_simulation_refuses_every_use(tmp_path):
    sim = heatlab.Simulation(16, 16, backend="cpu")
    sim.close()
    sim.close()  # twice is fine
    assert "closed" in repr(sim)
    calls = [
        lambda: sim.step(1),
        lambda: sim.temperature,
        lambda: sim.set_temperature(np.zeros((16, 16), np.float32)),
        lambda: sim.laplacian(),
        lambda: sim.steps,
        lambda: sim.reset(),
        lambda: sim.save_state(tmp_path / "s.heatlab"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="closed"):
            call()


def test_with_closes():
    with heatlab.Simulation(16, 16, backend="cpu") as sim:
        sim.step(2)
    with pytest.raises(ValueError, match="closed"):
        sim.step(1)


def long_simulation():
    # About a second or more of stepping on two cores, in pieces of about 0.25 s.
    return heatlab.Simulation(512, 512, backend="cpu")


def test_a_second_thread_is_refused_while_one_steps():
    sim = long_simulation()
    errors = []
    started = threading.Event()

    def stepper():
        started.set()
        sim.step(20_000)

    thread = threading.Thread(target=stepper)
    thread.start()
    started.wait()
    deadline = time.monotonic() + 30
    refused = None
    while refused is None and time.monotonic() < deadline:
        try:
            sim.steps
            time.sleep(0.01)
        except RuntimeError as error:
            refused = error
    thread.join()
    assert refused is not None, "the second thread was never refused"
    assert "another thread" in str(refused)
    assert sim.steps == 20_000
    assert not errors


def test_ctrl_c_stops_a_long_step_between_pieces():
    # Python leaves Ctrl-C alone when it starts with SIGINT ignored (a shell's background
    # job): the test then asks for the usual KeyboardInterrupt itself.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        ctrl_c_stops_a_long_step()
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_stops_a_long_step():
    sim = long_simulation()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sim.step(10_000_000)
    elapsed = time.monotonic() - started
    timer.join()
    assert 0 < sim.steps < 10_000_000
    assert elapsed < 5.0, f"the stop took {elapsed:.1f} s"
    # Still usable, and the steps taken are the field's.
    before = sim.steps
    sim.step(3)
    assert sim.steps == before + 3
    assert np.isfinite(sim.temperature).all()


def test_the_gil_is_released_while_stepping():
    sim = long_simulation()
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    thread = threading.Thread(target=ticker)
    thread.start()
    began = time.monotonic()
    sim.step(5_000)
    ended = time.monotonic()
    stop.set()
    thread.join()
    during = [t for t in ticks if began < t < ended]
    # A held GIL would leave the ticker silent for the whole step.
    assert len(during) >= max(3, int((ended - began) / 0.05)), (len(during), ended - began)


def test_views_of_a_closed_cpu_simulation_are_plain_arrays():
    sim = heatlab.Simulation(8, 8, backend="cpu")
    field = sim.temperature
    sim.close()
    assert field.shape == (8, 8) and np.isfinite(field).all()


def test_import_takes_under_0_3_seconds():
    code = "import time; t = time.perf_counter(); import heatlab; print(time.perf_counter() - t)"
    best = min(
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True, env=dict(os.environ)).stdout)
        for _ in range(3)
    )
    assert best <= 0.3, f"import heatlab took {best:.3f} s"
