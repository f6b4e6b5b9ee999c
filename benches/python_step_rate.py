"""`sim.step(n)` from Python beside `heatlab run` on the same GPU, in one call.

For each size the Python module steps the plate SHORT steps (the kernel is tuned and the graphs
captured) and then LONG steps, timed by wall clock around `step` and by GPU events
(`sim.timings`). `heatlab run` then steps the same plate with the kernel Python chose, once to
warm the driver's caches, then SHORT and LONG steps, each run one chunk as each `step` call
is (`--chunk`: one wait for the GPU every quarter of a second); the difference of the two runs' wall times
cancels start-up, NVRTC and generation, giving its marginal steps/s by wall clock, and run.json
gives its steps/s by GPU events. Ratios are Python over `heatlab run`.

    HEATLAB_BIN=path/to/heatlab python3 benches/python_step_rate.py [SIZE:SHORT:LONG ...]
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import heatlab

BIN = os.environ.get("HEATLAB_BIN", "target/release/heatlab")
CASES = sys.argv[1:] or ["2000:200000:2000000", "16384:4000:40000"]


def cli_wall(size, steps, kernel, folder):
    out = os.path.join(folder, f"run-{size}-{steps}")
    began = time.perf_counter()
    subprocess.run(
        [BIN, "run", "--size", f"{size}x{size}", "--steps", str(steps), "--backend", "cuda",
         "--kernel", kernel, "--chunk", str(steps), "--overwrite", "--out", out],
        check=True, capture_output=True,
    )
    wall = time.perf_counter() - began
    with open(os.path.join(out, "run.json")) as record:
        return wall, json.load(record)


def device_rate(rows):
    steps = sum(row["steps"] for row in rows)
    return steps / sum(row["seconds"] for row in rows)


def main():
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            size, short, long = (int(part) for part in case.split(":"))
            sim = heatlab.Simulation(size, size, backend="cuda")
            began = time.perf_counter()
            sim.step(short)
            mid = time.perf_counter()
            rows_before = len(sim.timings)
            sim.step(long)
            ended = time.perf_counter()
            py_wall = long / (ended - mid)
            py_device = device_rate(sim.timings[rows_before:])
            kernel = sim.kernel.removeprefix("cuda-")
            device = sim.device
            sim.close()
            cli_wall(size, short, kernel, folder)
            cli_short, _ = cli_wall(size, short, kernel, folder)
            cli_long, record = cli_wall(size, short + long, kernel, folder)
            cli_marginal = long / (cli_long - cli_short)
            row = {
                "size": size,
                "kernel": kernel,
                "cli_kernel": record["method"],
                "device": device,
                "cli_marginal_wall_steps_per_s": cli_marginal,
                "cli_event_steps_per_s": record["steps_per_s"],
                "python_wall_steps_per_s": py_wall,
                "python_event_steps_per_s": py_device,
                "python_first_step_call_s": mid - began,
                "ratio_wall": py_wall / cli_marginal,
                "ratio_events": py_device / record["steps_per_s"],
            }
            results.append(row)
            print(json.dumps(row), flush=True)
    code = "import time; t = time.perf_counter(); import heatlab; print(time.perf_counter() - t)"
    imports = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True).stdout)
        for _ in range(5)
    ]
    print(json.dumps({"import_seconds": imports}), flush=True)


if __name__ == "__main__":
    main()
