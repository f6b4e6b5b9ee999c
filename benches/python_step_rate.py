"""`sim.step(n)` from Python beside `heatlab run` on the same GPU, in one call.

For each size, `heatlab run` steps the plate twice (SHORT and LONG steps; each run's wall time
includes start-up, NVRTC and generation, which the difference cancels), giving its marginal
steps/s by wall clock, and its own steps/s by GPU events (run.json). The Python module steps
the same plate SHORT and then LONG steps in one process, timed the same two ways (wall clock
around `step`, GPU events from `sim.timings`). Ratios are Python over `heatlab run`.

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
CASES = sys.argv[1:] or ["2000:100000:600000", "16384:4000:24000"]


def cli_wall(size, steps, folder):
    out = os.path.join(folder, f"run-{size}-{steps}")
    began = time.perf_counter()
    subprocess.run(
        [BIN, "run", "--size", f"{size}x{size}", "--steps", str(steps), "--backend", "cuda",
         "--out", out],
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
            cli_short, _ = cli_wall(size, short, folder)
            cli_long, record = cli_wall(size, long, folder)
            cli_marginal = (long - short) / (cli_long - cli_short)
            sim = heatlab.Simulation(size, size, backend="cuda")
            began = time.perf_counter()
            sim.step(short)
            mid = time.perf_counter()
            rows_before = len(sim.timings)
            sim.step(long)
            ended = time.perf_counter()
            py_wall = long / (ended - mid)
            py_device = device_rate(sim.timings[rows_before:])
            row = {
                "size": size,
                "kernel": sim.kernel,
                "cli_kernel": record["method"],
                "device": sim.device,
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
            sim.close()
    code = "import time; t = time.perf_counter(); import heatlab; print(time.perf_counter() - t)"
    imports = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True).stdout)
        for _ in range(5)
    ]
    print(json.dumps({"import_seconds": imports}), flush=True)


if __name__ == "__main__":
    main()
