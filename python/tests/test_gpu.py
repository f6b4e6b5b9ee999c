"""The CUDA paths from Python: bit for bit as the CPU and `heatlab run --backend cuda`, and
the field shared with CuPy, PyTorch and Numba with no copy (the same device pointer), in and
out, with the stream ordering and lifetimes a consumer relies on. Each test skips, saying
why, without a GPU or without the consumer library; HEATLAB_REQUIRE_CUDA=1 turns a missing
GPU into a failure."""

import gc
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import heatlab
from conftest import golden

if not hasattr(np, "row_stack"):  # numba's NumPy check, on NumPy 2.5 and later
    np.row_stack = np.vstack


def library(name):
    try:
        return __import__(name)
    except ImportError as error:
        pytest.skip(f"skipped: {name} is not installed ({error})")


@pytest.fixture
def cupy(cuda):
    return library("cupy")


@pytest.fixture
def torch(cuda):
    module = library("torch")
    if not module.cuda.is_available():
        pytest.skip("skipped: PyTorch sees no GPU")
    return module


@pytest.fixture
def numba_cuda(cuda):
    library("numba")
    from numba import cuda as numba_cuda

    return numba_cuda


def pair(rows=96, cols=80, **kwargs):
    """The same plate on CUDA and on the CPU, from the same field."""
    gpu = heatlab.Simulation(rows, cols, backend="cuda", **kwargs)
    cpu = heatlab.Simulation(rows, cols, backend="cpu", **kwargs)
    cpu.set_temperature(np.asarray(gpu.temperature))
    return gpu, cpu


@pytest.mark.parametrize("boundary", ["dirichlet", "neumann", "periodic"])
def test_cuda_steps_equal_the_numpy_reference(cuda, boundary):
    tag = f"40x64_12345_{boundary}_50"
    sim = heatlab.Simulation(40, 64, coeff=0.2, boundary=boundary, backend="cuda")
    assert sim.backend == "cuda"
    sim.set_temperature(golden("field_40x64_12345.npy"))
    sim.step(50)
    assert np.array_equal(np.asarray(sim.temperature), golden(f"diffused_{tag}.npy"))
    assert np.array_equal(sim.laplacian(), golden(f"laplacian_{tag}.npy"))


@pytest.mark.parametrize("boundary", ["dirichlet", "neumann", "periodic"])
def test_cuda_equals_cpu_over_many_calls(cuda, boundary):
    gpu, cpu = pair(257, 190, boundary=boundary, coeff=0.21)
    for steps in [1, 7, 1000, 2500, 3]:
        gpu.step(steps)
        cpu.step(steps)
        assert np.array_equal(np.asarray(gpu.temperature), cpu.temperature), steps


def test_cuda_plate_equals_heatlab_run(cuda, heatlab_bin, tmp_path):
    out = tmp_path / "run"
    subprocess.run(
        [heatlab_bin, "run", "--size", "300x200", "--steps", "3000", "--backend", "cuda",
         "--npy", "--out", str(out)],
        check=True, capture_output=True,
    )
    sim = heatlab.Simulation(300, 200, backend="cuda")
    assert np.array_equal(np.asarray(sim.temperature), np.load(out / "field_000000.npy"))
    sim.step(3000)
    assert np.array_equal(np.asarray(sim.temperature), np.load(out / "field_003000.npy"))
    record = json.loads((out / "run.json").read_text())
    assert record["method"] == sim.kernel


def test_cuda_scenario_equals_cpu_and_heatlab_run(cuda, heatlab_bin, tmp_path):
    out = tmp_path / "run"
    subprocess.run(
        [heatlab_bin, "run", "--scenario", "heat-sink", "--steps", "5000", "--backend", "cuda",
         "--npy", "--out", str(out)],
        check=True, capture_output=True,
    )
    gpu = heatlab.Simulation.from_scenario("heat-sink", backend="cuda")
    cpu = heatlab.Simulation.from_scenario("heat-sink", backend="cpu")
    gpu.step(5000)
    cpu.step(5000)
    field = np.asarray(gpu.temperature)
    assert np.array_equal(field, cpu.temperature)
    assert np.array_equal(field, np.load(out / "field_005000.npy"))
    assert gpu.time == cpu.time
    # The stored energy is summed in the CPU's order on the GPU: the same number. The heat
    # through the sides is summed per block over the steps on the GPU and per step over the
    # cells on the CPU: the same to rounding.
    gpu_energy, cpu_energy = gpu.energy(), cpu.energy()
    assert gpu_energy["stored"] == cpu_energy["stored"]
    gpu_budget, cpu_budget = gpu_energy["budget"], cpu_energy["budget"]
    assert gpu_budget["heaters"] == cpu_budget["heaters"]
    for side, heat in cpu_budget["sides"].items():
        assert gpu_budget["sides"][side] == pytest.approx(heat, rel=1e-9, abs=1e-12), side


def test_temperature_is_a_device_view(cuda):
    sim = heatlab.Simulation(64, 48, backend="cuda")
    view = sim.temperature
    assert isinstance(view, heatlab.DeviceArray)
    assert view.shape == (64, 48) and view.dtype == "float32"
    assert view.__dlpack_device__() == (2, view.device_id)
    interface = view.__cuda_array_interface__
    assert interface["version"] == 3 and interface["typestr"] == "<f4"
    assert interface["shape"] == (64, 48) and interface["strides"] is None
    assert interface["data"] == (view.ptr, False) and interface["stream"] is None
    assert np.array_equal(np.asarray(view), view.get())
    assert len(view) == 64 and "cuda" in repr(view)


def test_cupy_reads_and_writes_the_same_memory(cupy):
    sim = heatlab.Simulation(128, 96, backend="cuda")
    view = sim.temperature
    by_interface = cupy.asarray(view)
    by_dlpack = cupy.from_dlpack(view)
    assert by_interface.data.ptr == view.ptr == by_dlpack.data.ptr
    assert by_interface.dtype == cupy.float32 and by_interface.shape == (128, 96)
    assert cupy.array_equal(by_interface, cupy.asarray(np.asarray(view)))
    by_interface[10:20, 10:20] = 5.0  # writes the simulation's field
    assert np.all(np.asarray(sim.temperature)[10:20, 10:20] == 5.0)


def test_torch_reads_the_same_memory(torch):
    sim = heatlab.Simulation(128, 96, backend="cuda")
    view = sim.temperature
    by_dlpack = torch.from_dlpack(view)
    by_interface = torch.as_tensor(view, device="cuda")
    assert by_dlpack.data_ptr() == view.ptr == by_interface.data_ptr()
    assert by_dlpack.dtype == torch.float32 and tuple(by_dlpack.shape) == (128, 96)
    assert by_dlpack.is_contiguous()
    assert np.array_equal(by_dlpack.cpu().numpy(), np.asarray(view))


def test_numba_reads_the_same_memory(numba_cuda):
    sim = heatlab.Simulation(64, 64, backend="cuda")
    view = sim.temperature
    array = numba_cuda.as_cuda_array(view)
    assert array.device_ctypes_pointer.value == view.ptr
    assert np.array_equal(array.copy_to_host(), np.asarray(view))


def test_consumers_see_the_finished_step(cupy, torch):
    # A long queue of steps: a consumer reading right after `step` must see its end.
    gpu, cpu = pair(2048, 2048)
    gpu.step(3000)
    cpu.step(3000)
    expected = cpu.temperature
    assert np.array_equal(cupy.asnumpy(cupy.asarray(gpu.temperature)), expected)
    gpu.step(3000)
    cpu.step(3000)
    expected = cpu.temperature
    assert np.array_equal(torch.from_dlpack(gpu.temperature).cpu().numpy(), expected)


def test_heatlab_waits_for_a_consumer_before_writing(cupy):
    # A consumer's long kernel still reading the shared buffer when heatlab steps again.
    sim = heatlab.Simulation(4096, 4096, backend="cuda")
    shared = cupy.asarray(sim.temperature)
    snapshot = shared.copy()
    with cupy.cuda.Stream(non_blocking=True):
        total = (shared * 1.0).sum(dtype=cupy.float64)
        for _ in range(20):
            total += (shared * 1.0).sum(dtype=cupy.float64)
    sim.step(10)  # writes the other buffer, then the next step writes this one
    assert float(total) == pytest.approx(21 * float(snapshot.sum(dtype=cupy.float64)), rel=1e-12)


def test_set_temperature_from_device_arrays(cupy, torch):
    gpu, cpu = pair(200, 150)
    values = np.random.default_rng(9).standard_normal((200, 150)).astype(np.float32)
    for device_array in [cupy.asarray(values), torch.from_numpy(values).cuda()]:
        gpu.set_temperature(device_array)
        assert np.array_equal(np.asarray(gpu.temperature), values)
    # A PyTorch array made on a stream of its own: heatlab waits for that stream.
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        base = torch.from_numpy(values).cuda(non_blocking=True)
        late = base * 2.0 + 1.0
        for _ in range(50):
            late = late * 1.0
        gpu.set_temperature(late)
    expected = values * np.float32(2.0) + np.float32(1.0)
    assert np.array_equal(np.asarray(gpu.temperature), expected)
    cpu.set_temperature(expected)
    gpu.step(77)
    cpu.step(77)
    assert np.array_equal(np.asarray(gpu.temperature), cpu.temperature)


def test_set_temperature_from_numba(numba_cuda):
    sim = heatlab.Simulation(32, 40, backend="cuda")
    values = np.arange(32 * 40, dtype=np.float32).reshape(32, 40)
    sim.set_temperature(numba_cuda.to_device(values))
    assert np.array_equal(np.asarray(sim.temperature), values)


def test_a_view_survives_steps_and_close(cupy, torch):
    sim = heatlab.Simulation(64, 64, backend="cuda")
    tensor = torch.from_dlpack(sim.temperature)
    array = cupy.asarray(sim.temperature)
    copy = array.copy()
    sim.close()
    del sim
    gc.collect()
    # The simulation's memory lives while its views do.
    assert bool(cupy.array_equal(array, copy))
    assert float(tensor.sum()) == pytest.approx(float(copy.sum()), rel=1e-6)


def test_an_unconsumed_capsule_is_freed(cuda):
    sim = heatlab.Simulation(16, 16, backend="cuda")
    for _ in range(100):
        capsule = sim.temperature.__dlpack__()
        del capsule
    gc.collect()
    sim.step(1)
    assert sim.steps == 1


def test_bad_device_arrays_are_refused_and_nothing_changes(cupy, torch):
    sim = heatlab.Simulation(64, 48, backend="cuda")
    before = np.asarray(sim.temperature)
    cases = [
        (cupy.zeros((64, 48), cupy.float64), "float64"),
        (cupy.zeros((64, 48), cupy.int32), "<i4"),
        (cupy.zeros((48, 64), cupy.float32).T, "C-contiguous"),
        (cupy.zeros((64, 96), cupy.float32)[:, ::2], "C-contiguous"),
        (cupy.zeros((64, 47), cupy.float32), "64x47"),
        (cupy.zeros((2, 64, 48), cupy.float32), "2-D"),
        (cupy.full((64, 48), cupy.nan, cupy.float32), "NaN or infinite"),
        (torch.zeros((64, 48), device="cuda", dtype=torch.float16), "<f2"),
        (torch.zeros((48, 64), device="cuda").t(), "C-contiguous"),
    ]
    for array, reason in cases:
        with pytest.raises(ValueError, match=reason):
            sim.set_temperature(array)
        assert np.array_equal(np.asarray(sim.temperature), before), reason
    grad = torch.zeros((64, 48), device="cuda", requires_grad=True)
    with pytest.raises((ValueError, RuntimeError)):
        sim.set_temperature(grad)
    cpu = heatlab.Simulation(64, 48, backend="cpu")
    with pytest.raises(ValueError, match="runs on the CPU"):
        cpu.set_temperature(cupy.zeros((64, 48), cupy.float32))


def test_an_array_on_another_gpu_is_refused(cupy):
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("skipped: one GPU here; an array on another GPU needs two")
    sim = heatlab.Simulation(32, 32, backend="cuda")
    with cupy.cuda.Device(1):
        other = cupy.ones((32, 32), cupy.float32)
    with pytest.raises(ValueError, match="on GPU 1"):
        sim.set_temperature(other)


def test_dlpack_requests_heatlab_cannot_meet(cuda):
    sim = heatlab.Simulation(16, 16, backend="cuda")
    view = sim.temperature
    with pytest.raises(BufferError, match="no copies"):
        view.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="device"):
        view.__dlpack__(dl_device=(1, 0))
    with pytest.raises(ValueError, match="copy"):
        np.asarray(view, copy=False) if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else view.__array__(copy=False)


def test_a_second_thread_is_refused_on_cuda(cuda):
    sim = heatlab.Simulation(4096, 4096, backend="cuda")
    view = sim.temperature
    thread = threading.Thread(target=sim.step, args=(20_000,))
    thread.start()
    refused = None
    while thread.is_alive() and refused is None:
        try:
            view.__dlpack__()
        except RuntimeError as error:
            refused = error
    thread.join()
    assert refused is not None and "another thread" in str(refused)
    assert sim.steps == 20_000


def test_kernel_choice_and_its_refusals(cuda):
    sim = heatlab.Simulation(256, 256, backend="cuda", kernel="jacobi-rows")
    assert sim.kernel == "cuda-jacobi-rows"
    cpu = heatlab.Simulation(256, 256, backend="cpu")
    cpu.set_temperature(np.asarray(sim.temperature))
    sim.step(100)
    cpu.step(100)
    assert np.array_equal(np.asarray(sim.temperature), cpu.temperature)


@pytest.mark.skipif(os.environ.get("HEATLAB_SKIP_SLOW") == "1", reason="slow")
def test_ctrl_c_stops_a_long_cuda_step(cuda):
    import _thread

    sim = heatlab.Simulation(8192, 8192, backend="cuda")
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.step(10**9)
    timer.join()
    assert 0 < sim.steps < 10**9
    sim.step(1)
