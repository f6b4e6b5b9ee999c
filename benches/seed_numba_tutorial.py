#!/usr/bin/env python3
"""The seed's own Numba code (seeds/001_90f76f2caf3669f9.txt) for the three tutorial kernels,
timed %timeit-style on this machine, printed as one JSON object.

Baselines for `heatlab kernel` run in the same session on the same GPU:

- hidden layer, n = 1M: the seed's `create_hidden_layer` (three CUDA ufuncs on host arrays:
  to_device, normalize, weigh, activate, copy_to_host) and its custom kernel
  `create_hidden_layer_kernel[128, 128]` on device arrays (kernel only + synchronize);
- Gaussian PDF, n = 100M: the seed's CUDA ufunc `gaussian_pdf(x, mean, sigma)` on host arrays
  (Numba copies x in and the result out), the same ufunc on device arrays with `out=`
  (kernel only), and the seed's CPU ufunc `cpu_gaussian_pdf` (compiled, one thread);
- Monte Carlo pi: the seed's `monte_carlo_pi` is CPU code (@jit, one thread, random.random).
  It runs at 1M samples and at 1e8; 1e10 would take minutes, so its 1e10 time is the 1e8
  time times 100 and is marked as extrapolated. The seed has no GPU pi; for a GPU baseline
  this script adds Numba's standard GPU approach (not in the seed): xoroshiro128+ states per
  thread (numba.cuda.random), a grid-stride loop and one atomic add per thread, at 1M and 1e10.

Usage: python3 seed_numba_tutorial.py [--quick | --tiny] [--out FILE]
  --quick: 10x smaller Gaussian and pi sizes; --tiny: a few thousand elements (for checking the
  script under NUMBA_ENABLE_CUDASIM=1); --out FILE: also write the JSON there after each section,
  so that a run cut short still leaves what it measured.
"""

import json
import math
import random
import sys
import time

import numpy as np

np.row_stack = np.vstack  # the Numba on the GPU machine still calls the removed alias
import numba  # noqa: E402
from numba import cuda, jit, vectorize  # noqa: E402
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32  # noqa: E402

QUICK = "--quick" in sys.argv
TINY = "--tiny" in sys.argv
OUT_FILE = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
SCALE = 1000 if TINY else (10 if QUICK else 1)
N_HIDDEN = 1_000_000 // (SCALE if TINY else 1)
N_GAUSS = 100_000_000 // SCALE
N_PI_CPU_BIG = 100_000_000 // SCALE
N_PI_GPU_BIG = 10**10 // SCALE


def timeit(func, repeat=7, min_seconds=0.05, max_number=1000):
    """Like %timeit: warm up once, pick loops per run so that a run lasts min_seconds, then
    return mean and (population) std of the per-loop time over `repeat` runs."""
    func()
    number = 1
    while True:
        started = time.perf_counter()
        for _ in range(number):
            func()
        elapsed = time.perf_counter() - started
        if elapsed >= min_seconds or number >= max_number:
            break
        number = min(max_number, number * 10)
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            func()
        runs.append((time.perf_counter() - started) / number)
    runs = np.array(runs)
    return {"mean_s": float(runs.mean()), "std_s": float(runs.std()), "loops": number,
            "runs_s": runs.tolist()}


report = {"meta": {"numba": numba.__version__, "numpy": np.__version__,
                   "sizes": {"hidden": N_HIDDEN, "gaussian": N_GAUSS, "pi_cpu_big": N_PI_CPU_BIG,
                             "pi_gpu_big": N_PI_GPU_BIG}},
          "results": {}, "errors": {}}
results = report["results"]


def save():
    text = json.dumps(report, indent=1)
    if OUT_FILE:
        with open(OUT_FILE, "w") as f:
            f.write(text)
    return text


def section(name):
    """Runs a benchmark section; an exception is recorded and the next section still runs."""
    def wrap(func):
        started = time.perf_counter()
        try:
            func()
        except Exception as error:  # noqa: BLE001 - a baseline failing must not hide the others
            report["errors"][name] = repr(error)
        report["meta"][f"{name}_wall_s"] = time.perf_counter() - started
        save()
        print(f"[numba bench] {name} done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        return func
    return wrap


@section("device")
def device_name():
    name = cuda.get_current_device().name
    report["meta"]["gpu"] = name.decode() if isinstance(name, bytes) else str(name)


# ---------------------------------------------------------------------------------------------
# Hidden layer (seed cells 45-58), n = 1M.
def make_hidden_layer_ufuncs():
    """The seed's three CUDA ufuncs (compiled when decorated, so inside a section)."""
    @vectorize(['float32(float32)'], target='cuda')
    def normalize(grayscales):
        return grayscales / 255

    @vectorize(['float32(float32, float32)'], target='cuda')
    def weigh(values, weights):
        return values * weights

    @vectorize(['float32(float32)'], target='cuda')
    def activate(values):
        return (math.exp(values) - math.exp(-values)) / (math.exp(values) + math.exp(-values))

    return normalize, weigh, activate


def create_hidden_layer(n, greyscales, weights, exp, normalize, weigh, activate):
    grey_device = cuda.to_device(greyscales)
    weight_device = cuda.to_device(weights)
    norm_out = cuda.device_array(shape=(n,), dtype=np.float32)
    normalize(grey_device, out=norm_out)
    weight_out = cuda.device_array(shape=(n,), dtype=np.float32)
    weigh(norm_out, weight_device, out=weight_out)
    activated = activate(weight_out)
    activated = activated.copy_to_host()
    return activated


@cuda.jit(device=True)
def normalize_d(grayscales):
    return grayscales / 255


@cuda.jit(device=True)
def weigh_d(values, weights):
    return values * weights


@cuda.jit(device=True)
def activate_d(values):
    return (math.exp(values) - math.exp(-values)) / (math.exp(values) + math.exp(-values))


@cuda.jit
def create_hidden_layer_kernel(greyscales, weights, out_array):
    start_idx = cuda.grid(1)
    stride = cuda.gridsize(1)
    for idx in range(start_idx, greyscales.shape[0], stride):
        out_array[idx] = activate_d(weigh_d(normalize_d(greyscales[idx]), weights[idx]))


@section("hidden_layer")
def hidden_layer():
    n = N_HIDDEN
    greyscales = np.floor(np.random.uniform(0, 255, n).astype(np.float32))
    weights = np.random.normal(.5, .1, n).astype(np.float32)
    greyscales_d = cuda.to_device(greyscales)
    weights_d = cuda.to_device(weights)
    out = cuda.device_array_like(greyscales_d)

    def hidden_kernel():
        create_hidden_layer_kernel[128, 128](greyscales_d, weights_d, out)
        cuda.synchronize()

    results["hidden_layer_custom_kernel_128x128_device_arrays_1M"] = timeit(hidden_kernel)
    normalize, weigh, activate = make_hidden_layer_ufuncs()
    results["hidden_layer_ufuncs_host_arrays_1M"] = timeit(
        lambda: create_hidden_layer(n, greyscales, weights, math.exp, normalize, weigh, activate))


# ---------------------------------------------------------------------------------------------
# Gaussian PDF (seed cells 20-23), n = 100M.
SQRT_2PI = np.float32((2 * math.pi) ** 0.5)


@vectorize
def cpu_gaussian_pdf(x, mean, sigma):
    return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI)


@section("gaussian")
def gaussian():
    x = np.random.uniform(-3, 3, size=N_GAUSS).astype(np.float32)
    mean = np.float32(0.0)
    sigma = np.float32(1.0)
    results["gaussian_cpu_ufunc_one_thread_100M"] = timeit(
        lambda: cpu_gaussian_pdf(x, mean, sigma), repeat=3, min_seconds=0.0)

    @vectorize(['float32(float32, float32, float32)'], target='cuda')
    def gaussian_pdf(x, mean, sigma):
        return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI)

    results["gaussian_cuda_ufunc_host_arrays_100M"] = timeit(
        lambda: gaussian_pdf(x, mean, sigma), repeat=5)
    x_d = cuda.to_device(x)
    out_d = cuda.device_array(shape=(N_GAUSS,), dtype=np.float32)

    def gaussian_device():
        gaussian_pdf(x_d, mean, sigma, out=out_d)
        cuda.synchronize()

    results["gaussian_cuda_ufunc_device_arrays_100M"] = timeit(gaussian_device)


# ---------------------------------------------------------------------------------------------
# Monte Carlo pi (seed cell 10): CPU, one thread.
@jit
def monte_carlo_pi(nsamples):
    acc = 0
    for i in range(nsamples):
        x = random.random()
        y = random.random()
        if (x ** 2 + y ** 2) < 1.0:
            acc += 1
    return 4.0 * acc / nsamples


@section("pi_cpu")
def pi_cpu():
    results["pi_seed_jit_cpu_one_thread_1M"] = timeit(lambda: monte_carlo_pi(1_000_000))
    timing = timeit(lambda: monte_carlo_pi(N_PI_CPU_BIG), repeat=3, min_seconds=0.0)
    results[f"pi_seed_jit_cpu_one_thread_{N_PI_CPU_BIG}"] = timing
    results["pi_seed_jit_cpu_one_thread_1e10_extrapolated"] = {
        "mean_s": timing["mean_s"] * (1e10 / N_PI_CPU_BIG),
        "std_s": timing["std_s"] * (1e10 / N_PI_CPU_BIG),
        "extrapolated_from": N_PI_CPU_BIG,
    }


# Not in the seed: Numba's usual GPU pi, xoroshiro128+ per thread.
@cuda.jit
def pi_xoroshiro(states, nsamples, count):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    inside = 0
    for _ in range(start, nsamples, stride):
        px = xoroshiro128p_uniform_float32(states, start)
        py = xoroshiro128p_uniform_float32(states, start)
        if px * px + py * py < 1.0:
            inside += 1
    cuda.atomic.add(count, 0, inside)


@section("pi_gpu")
def pi_gpu_section():
    blocks = 4 if TINY else cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
    threads = 32 if TINY else 256
    states = create_xoroshiro128p_states(blocks * threads, seed=42)
    count_d = cuda.to_device(np.zeros(1, dtype=np.uint64))

    def pi_gpu(nsamples):
        count_d.copy_to_device(np.zeros(1, dtype=np.uint64))
        pi_xoroshiro[blocks, threads](states, nsamples, count_d)
        return 4.0 * int(count_d.copy_to_host()[0]) / nsamples

    for samples in [1_000_000 // (SCALE if TINY else 1), N_PI_GPU_BIG]:
        results[f"pi_numba_cuda_xoroshiro_{samples}_not_in_seed"] = timeit(
            lambda: pi_gpu(samples), repeat=5, min_seconds=0.0 if samples > 10**8 else 0.05)
    report["meta"]["pi_numba_cuda_estimate_big"] = pi_gpu(N_PI_GPU_BIG)


print(save())
