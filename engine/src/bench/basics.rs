//! The maximum ladder of seed `000_...` in the notebook's own Python, timed in a subprocess
//! beside heatlab's ladder: its triple loop (small sizes only), `np.maximum`, Numba's `@njit`
//! loop and `@vectorize` on the CPU, and, where Numba finds CUDA, `@vectorize(target='cuda')`
//! on host arrays and the notebook's `@cuda.jit` kernel on device arrays. Each rung that
//! cannot run here (no Numba, no CUDA, a side the kernel's 8x8x8 blocks do not divide) is left
//! out with a note.

use std::collections::BTreeMap;

use crate::measure::MeanStd;

/// The notebook's rungs, timed as `%timeit` times them (loops of at least ~50 ms per sample);
/// the CUDA kernel is followed by `cuda.synchronize()` so that its time is the kernel's, not
/// only its launch's.
const NOTEBOOK_MAXIMUM_SCRIPT: &str = r#"
import json, sys, time
import numpy as np
sides = [int(s) for s in sys.argv[1].split(',')]
repeats = int(sys.argv[2])
out = {"numpy": np.__version__, "numba": None, "cuda_device": None, "notes": [], "sides": {}}
# Numba releases older than the NumPy beside them still look up np.row_stack (removed in 2.x).
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
try:
    import numba
    from numba import njit, vectorize
    out["numba"] = numba.__version__
except Exception as e:
    numba = None
    out["notes"].append("no numba: %s" % e)
cuda = None
if numba is not None:
    try:
        from numba import cuda as numba_cuda
        if numba_cuda.is_available():
            cuda = numba_cuda
            name = cuda.get_current_device().name
            out["cuda_device"] = name.decode() if isinstance(name, bytes) else str(name)
        else:
            out["notes"].append("numba finds no CUDA GPU")
    except Exception as e:
        out["notes"].append("numba.cuda: %s" % e)

def maximum_1(a, b, c):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            for k in range(a.shape[2]):
                c[i, j, k] = max(a[i, j, k], b[i, j, k])
    return c

if numba is not None:
    maximum_3 = njit(maximum_1)
    def _max(a, b):
        return max(a, b)
    maximum_4 = vectorize(['float32(float32,float32)'])(_max)
    if cuda is not None:
        maximum_5 = vectorize(['float32(float32,float32)'], target='cuda')(_max)
        @cuda.jit
        def maximum_6(a, b, c):
            idx = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
            idy = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
            idz = cuda.blockDim.z * cuda.blockIdx.z + cuda.threadIdx.z
            c[idx, idy, idz] = max(a[idx, idy, idz], b[idx, idy, idz])

def timeit(f):
    f()
    t = time.perf_counter(); f(); one = time.perf_counter() - t
    loops = max(1, int(0.05 / max(one, 1e-7)))
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(loops):
            f()
        samples.append((time.perf_counter() - t) / loops)
    return samples

for side in sides:
    rng = np.random.default_rng(42)
    a = rng.random((side, side, side), dtype=np.float32)
    b = rng.random((side, side, side), dtype=np.float32)
    c = np.zeros_like(a)
    rungs = {}
    if side <= 64:
        rungs["python loops (maximum_1)"] = timeit(lambda: maximum_1(a, b, c))
    rungs["np.maximum (maximum_2)"] = timeit(lambda: np.maximum(a, b))
    if numba is not None:
        rungs["numba @njit loop (maximum_3)"] = timeit(lambda: maximum_3(a, b, c))
        rungs["numba @vectorize cpu (maximum_4)"] = timeit(lambda: maximum_4(a, b))
        if cuda is not None:
            rungs["numba @vectorize cuda, host arrays (maximum_5)"] = timeit(lambda: maximum_5(a, b))
            if side % 8 == 0:
                ad, bd, cd = cuda.to_device(a), cuda.to_device(b), cuda.to_device(c)
                blocks = (side // 8,) * 3
                def kernel():
                    maximum_6[blocks, (8, 8, 8)](ad, bd, cd)
                    cuda.synchronize()
                rungs["numba @cuda.jit, device arrays (maximum_6)"] = timeit(kernel)
            else:
                out["notes"].append("side %d: the notebook's 8x8x8 blocks do not divide it" % side)
    out["sides"][str(side)] = rungs
print(json.dumps(out))
"#;

/// What the notebook's Python measured.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NotebookMaximum {
    /// NumPy's version.
    pub numpy: String,
    /// Numba's version, when Numba is there.
    pub numba: Option<String>,
    /// The GPU Numba found, when it found one.
    pub cuda_device: Option<String>,
    /// Why rungs are missing.
    pub notes: Vec<String>,
    /// Seconds per run of each rung, by cube side (as text) and rung.
    pub sides: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
}

impl NotebookMaximum {
    /// Mean ± std of every rung at `side`, in the script's order of names.
    pub fn rungs(&self, side: usize) -> Vec<(String, MeanStd)> {
        self.sides
            .get(&side.to_string())
            .map(|rungs| {
                rungs
                    .iter()
                    .map(|(name, samples)| (name.clone(), MeanStd::of(samples)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs the notebook's rungs at each cube side with `repeats` samples each, or says why not.
pub fn time_notebook_maximum(sides: &[usize], repeats: usize) -> Result<NotebookMaximum, String> {
    let sides: Vec<String> = sides.iter().map(ToString::to_string).collect();
    let repeats = repeats.max(1).to_string();
    let stdout = super::numpy::run_python(NOTEBOOK_MAXIMUM_SCRIPT, &[&sides.join(","), &repeats])?;
    serde_json::from_slice(&stdout).map_err(|e| e.to_string())
}
