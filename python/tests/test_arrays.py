"""Arrays in and out on the host: NumPy round trips, and every array heatlab refuses, with
the reason in the exception."""

import numpy as np
import pytest

import heatlab


@pytest.fixture
def sim():
    return heatlab.Simulation(24, 36, backend="cpu")


def test_float32_round_trip_is_exact(sim):
    values = np.random.default_rng(4).standard_normal((24, 36)).astype(np.float32)
    sim.set_temperature(values)
    out = sim.temperature
    assert out.dtype == np.float32 and out.shape == (24, 36) and out.flags.c_contiguous
    assert np.array_equal(out, values)
    # A copy: changing it leaves the simulation alone.
    out[0, 0] = 1e6
    assert sim.temperature[0, 0] == values[0, 0]


def test_float64_is_narrowed_as_numpy_narrows(sim):
    values = np.random.default_rng(5).standard_normal((24, 36))
    sim.set_temperature(values)
    assert np.array_equal(sim.temperature, values.astype(np.float32))


def test_read_only_and_list_inputs_are_read(sim):
    values = np.arange(24 * 36, dtype=np.float32).reshape(24, 36)
    values.setflags(write=False)
    sim.set_temperature(values)
    assert np.array_equal(sim.temperature, values)
    sim.set_temperature(values.tolist())
    assert np.array_equal(sim.temperature, values)


def test_set_temperature_keeps_the_step_and_steps_from_it(sim):
    sim.step(5)
    values = np.zeros((24, 36), np.float32)
    values[12, 18] = 1.0
    sim.set_temperature(values)
    assert sim.steps == 5
    sim.step(1)
    out = sim.temperature
    assert out[12, 18] == np.float32(0.0)  # coeff 0.25: 1 - 0.25 * 4
    assert out[11, 18] == out[13, 18] == out[12, 17] == out[12, 19] == np.float32(0.25)


@pytest.mark.parametrize(
    "array,reason",
    [
        (np.zeros((24, 35), np.float32), r"24x35 .*24x36"),
        (np.zeros((24, 36), np.int32), "int32"),
        (np.zeros((24, 36), np.float16), "float16|<f2"),
        (np.zeros((24, 36), np.complex64), "complex|<c8"),
        (np.zeros((2, 24, 36), np.float32), "2-D"),
        (np.zeros(24 * 36, np.float32), "2-D"),
        (np.zeros((36, 24), np.float32).T, "C-contiguous"),
        (np.zeros((24, 72), np.float32)[:, ::2], "C-contiguous"),
        (np.full((24, 36), np.nan, np.float32), "non-finite"),
        (np.full((24, 36), np.inf), "non-finite"),
        (np.full((24, 36), 1e300), "beyond float32"),
        (np.zeros((24, 36), np.float32).astype(">f4"), ">f4|big"),
        ("not an array", "2-D"),
        (None, "2-D"),
        (object(), "2-D|NumPy cannot read"),
    ],
)
def test_bad_arrays_are_refused_and_nothing_changes(sim, array, reason):
    before = sim.temperature
    with pytest.raises(ValueError, match=reason):
        sim.set_temperature(array)
    assert np.array_equal(sim.temperature, before)
    sim.step(1)  # still usable


@pytest.mark.parametrize(
    "kwargs,reason",
    [
        (dict(rows=0), "positive|at least"),
        (dict(rows=-5), "positive"),
        (dict(coeff=0.3), "allow_unstable=True"),
        (dict(coeff=-0.1), "positive"),
        (dict(coeff=float("nan")), "positive"),
        (dict(boundary="open"), "dirichlet, neumann or periodic"),
        (dict(backend="gpu"), "auto, cpu or cuda"),
        (dict(kernel="fast"), "unknown kernel"),
        (dict(kernel="jacobi-rows", backend="cpu"), "GPU kernel"),
        (dict(kernel="user"), "Kernel lab"),
        (dict(exponent=float("inf")), "finite"),
        (dict(percentile=120.0), "percentile"),
        (dict(cutoff=-1.0), "cutoff"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, reason):
    args = dict(rows=16, cols=16, backend="cpu")
    args.update(kwargs)
    rows, cols = args.pop("rows"), args.pop("cols")
    with pytest.raises(ValueError, match=reason):
        heatlab.Simulation(rows, cols, **args)


def test_bad_steps_and_files(tmp_path):
    sim = heatlab.Simulation(8, 8, backend="cpu")
    with pytest.raises(ValueError, match="0 or more"):
        sim.step(-1)
    with pytest.raises(TypeError):
        sim.step(1.5)
    with pytest.raises(ValueError, match="no gallery problem"):
        heatlab.Simulation.from_scenario("no-such-problem")
    bad = tmp_path / "bad.toml"
    bad.write_text("[grid]\nrows = 'x'\n")
    with pytest.raises(ValueError):
        heatlab.Simulation.from_scenario(bad)
    not_state = tmp_path / "x.heatlab"
    not_state.write_bytes(b"hello")
    with pytest.raises(ValueError, match="not a heatlab state file"):
        heatlab.Simulation.resume(not_state)
    with pytest.raises(FileNotFoundError):
        heatlab.Simulation.resume(tmp_path / "missing.heatlab")
    with pytest.raises(OSError):
        sim.save_state(tmp_path / "no" / "such" / "folder" / "s.heatlab")
    with pytest.raises(ValueError, match="energy balance"):
        sim.energy()
    with pytest.raises(ValueError, match="more than heatlab can count"):
        sim.step(2**64)
    sim.step(5)
    with pytest.raises(ValueError, match="largest step count"):
        sim.step(2**64 - 1)
    assert sim.steps == 5


def test_generate_field_arguments():
    field = heatlab.generate_field(10, 12, seed=1)
    assert field.shape == (10, 12) and field.dtype == np.float32
    with pytest.raises(ValueError):
        heatlab.generate_field(0, 12)
    with pytest.raises(ValueError):
        heatlab.generate_field(10, 12, exponent=float("nan"))
