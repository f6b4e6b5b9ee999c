//! NumPy's step, timed in a Python subprocess beside the CPU variants.

use std::process::Command;

use super::BenchConfig;
use crate::grid::GridSize;
use crate::measure::MeanStd;

/// The step of `shared/reference/seed_reference.py`, timed the same way as heatlab's variants.
const NUMPY_STEP_SCRIPT: &str = r#"
import json, sys, time
import numpy as np
rows, cols, target, repeats = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
def laplacian(f):
    p = np.pad(f, 1)
    return (4 * f - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]).astype(np.float32)
def step(f, coeff=0.25):
    return (f - np.float32(coeff) * laplacian(f)).astype(np.float32)
f = np.random.default_rng(1).random((rows, cols), dtype=np.float32)
f = step(f)
t = time.perf_counter(); f = step(f); probe = time.perf_counter() - t
steps = max(1, int(target / max(probe, 1e-7)))
samples = []
for _ in range(repeats):
    t = time.perf_counter()
    for _ in range(steps):
        f = step(f)
    samples.append((time.perf_counter() - t) / steps * 1e6)
print(json.dumps({"steps": steps, "us_per_step": samples, "numpy": np.__version__}))
"#;

#[derive(serde::Deserialize)]
struct NumpyTiming {
    steps: u64,
    us_per_step: Vec<f64>,
    numpy: String,
}

/// Times NumPy's step at `size`: (steps per repetition, µs per step, NumPy's version).
pub fn time_numpy_step(
    size: GridSize,
    config: &BenchConfig,
) -> Result<(u64, MeanStd, String), String> {
    let rows = size.rows.to_string();
    let cols = size.cols.to_string();
    let seconds = config.seconds_per_repeat.to_string();
    let repeats = config.repeats.max(1).to_string();
    let stdout = run_python(NUMPY_STEP_SCRIPT, &[&rows, &cols, &seconds, &repeats])?;
    let timing: NumpyTiming = serde_json::from_slice(&stdout).map_err(|e| e.to_string())?;
    Ok((timing.steps, MeanStd::of(&timing.us_per_step), timing.numpy))
}

/// The jagged field of `shared/reference/seed_reference.py`, timed in NumPy.
const NUMPY_FIELD_SCRIPT: &str = r#"
import json, sys, time
import numpy as np
from numpy import fft
def jagged(j, k, seed=3966789, exponent=-1.7, cutoff=0.45, percentile=70.0):
    r = np.random.default_rng(seed)
    field = r.random(size=(j, k), dtype=np.float32)
    field = fft.fftshift(fft.fft2(field))
    radius = 1 + np.sqrt((np.arange(j).reshape(-1, 1) - j // 2) ** 2
                         + (np.arange(k).reshape(1, -1) - k // 2) ** 2)
    field = field * (radius ** exponent)
    field = fft.ifft2(fft.ifftshift(field)) * (radius < cutoff * j)
    field = field.real * (field.real > np.percentile(field.real, percentile))
    return field.astype(np.float32)
rows, cols, repeats = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
jagged(rows, cols)
samples = []
for _ in range(repeats):
    t = time.perf_counter()
    jagged(rows, cols)
    samples.append(time.perf_counter() - t)
print(json.dumps({"seconds": samples, "numpy": np.__version__}))
"#;

#[derive(serde::Deserialize)]
struct NumpyFieldTiming {
    seconds: Vec<f64>,
    numpy: String,
}

/// Times NumPy's jagged field at `size`: (seconds, NumPy's version).
pub fn time_numpy_field(size: GridSize, repeats: usize) -> Result<(MeanStd, String), String> {
    let rows = size.rows.to_string();
    let cols = size.cols.to_string();
    let repeats = repeats.max(1).to_string();
    let stdout = run_python(NUMPY_FIELD_SCRIPT, &[&rows, &cols, &repeats])?;
    let timing: NumpyFieldTiming = serde_json::from_slice(&stdout).map_err(|e| e.to_string())?;
    Ok((MeanStd::of(&timing.seconds), timing.numpy))
}

/// Runs `script` with `python3 -c` and `args`; its standard output, or the last line it wrote
/// to standard error (the Python exception) when it failed.
pub fn run_python(script: &str, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| format!("python3 could not be started ({e})"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(stderr
            .lines()
            .last()
            .unwrap_or("python3 failed")
            .to_string());
    }
    Ok(output.stdout)
}
