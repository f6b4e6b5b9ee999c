//! The maximum ladder of seed `000_...`: `c = max(a, b)` over float32 cubes, climbed rung by
//! rung: a naive indexed loop (the notebook's triple loop), a loop the compiler vectorises
//! (NumPy's `np.maximum` and Numba's `@vectorize` on the CPU), all CPU threads, the GPU with
//! host arrays (pageable and page-locked: `@vectorize(target='cuda')`) and the GPU with
//! device-resident arrays (the notebook's `@cuda.jit` kernel on `cuda.to_device` arrays).
//! Each rung is timed over a few sizes, and the size from which the GPU wins is reported.
//!
//! Inputs: `rng = np.random.default_rng(seed); a = rng.random(n, dtype=np.float32);
//! b = rng.random(n, dtype=np.float32)` (the notebook's `np.random.rand` is the legacy
//! generator; heatlab draws from the one it reproduces bit for bit).

use std::sync::Arc;

use cudarc::driver::{CudaStream, CudaView, CudaViewMut, PushKernelArg};
use rayon::prelude::*;

use super::super::gpu::{run_elementwise, same_bits, ElementwiseJob};
use super::super::{time_cpu_runs, KernelTimings, RunControl, TimingStats, CPU_CHUNK};
use super::{check_repeats, one_per_thread, BasicsGpu, ELEMENT_BLOCK};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;

/// The notebook's cube side (its arrays are 32 x 32 x 32).
pub const NOTEBOOK_SIDE: usize = 32;
/// The sides the ladder climbs by default: the notebook's 32, 128 and 256, and 64 and 192 between.
pub const DEFAULT_SIDES: [usize; 5] = [32, 64, 128, 192, 256];
/// The largest side accepted (3 float32 arrays of 512^3 take 1.5 GiB on each side).
pub const MAX_SIDE: usize = 512;

/// What a ladder climbs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MaximumOptions {
    /// Cube sides, each a run over side^3 elements.
    pub sides: Vec<usize>,
    /// Seed of the inputs.
    pub seed: u64,
    /// Timed runs of each rung.
    pub repeats: u32,
}

impl Default for MaximumOptions {
    fn default() -> Self {
        Self {
            sides: DEFAULT_SIDES.to_vec(),
            seed: 42,
            repeats: 7,
        }
    }
}

/// One size of the ladder: every rung's timings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LadderStep {
    /// Cube side.
    pub side: usize,
    /// Elements (side^3).
    pub n: u64,
    /// The naive indexed triple loop, one thread.
    pub naive_loop: TimingStats,
    /// The loop the compiler vectorises, one thread.
    pub vectorised_loop: TimingStats,
    /// The vectorised loop on all threads (rayon).
    pub all_threads: TimingStats,
    /// Threads of the all-threads rung.
    pub cpu_threads: usize,
    /// The GPU rungs (host arrays pageable and pinned, device-resident); `None` without a GPU.
    pub gpu: Option<KernelTimings>,
    /// Whether the GPU's result equals the CPU's bit for bit (`None` without a GPU).
    pub gpu_equals_cpu: Option<bool>,
}

impl LadderStep {
    /// The fastest CPU rung's mean seconds.
    pub fn best_cpu_seconds(&self) -> f64 {
        [&self.naive_loop, &self.vectorised_loop, &self.all_threads]
            .iter()
            .map(|stats| stats.mean_s)
            .fold(f64::INFINITY, f64::min)
    }

    /// The GPU with pageable host arrays, upload + kernel + download.
    pub fn gpu_host_arrays_seconds(&self) -> Option<f64> {
        let host = self.gpu.as_ref()?.gpu_host_arrays.as_ref()?;
        Some(host.total.mean_s)
    }

    /// The GPU with device-resident arrays, kernel only.
    pub fn gpu_device_resident_seconds(&self) -> Option<f64> {
        Some(self.gpu.as_ref()?.gpu_device_resident.as_ref()?.mean_s)
    }
}

/// The whole ladder.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MaximumLadder {
    /// Seed of the inputs.
    pub seed: u64,
    /// Timed runs of each rung.
    pub repeats: u32,
    /// The GPU's name when it ran.
    pub gpu: Option<String>,
    /// One entry per size, smallest first.
    pub steps: Vec<LadderStep>,
    /// The smallest size from which the GPU with pageable host arrays beats the fastest CPU
    /// rung at every larger size measured.
    pub crossover_host_arrays: Option<u64>,
    /// The same for the GPU with device-resident arrays.
    pub crossover_device_resident: Option<u64>,
}

/// The two input arrays of `n` elements.
pub fn generate_inputs(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut generator = NumpyGenerator::new(seed);
    let a = generator.random_f32(n);
    let b = generator.random_f32(n);
    (a, b)
}

/// The notebook's `maximum_1`: three nested loops over (i, j, k), each element found by its
/// index. The bounds check of every access and the index arithmetic keep this loop scalar.
pub fn maximum_naive(a: &[f32], b: &[f32], c: &mut [f32], side: usize) {
    for i in 0..side {
        for j in 0..side {
            for k in 0..side {
                let index = (i * side + j) * side + k;
                c[index] = a[index].max(b[index]);
            }
        }
    }
}

/// `np.maximum(a, b)` as a Rust loop over zipped slices: no index and no bounds checks, so
/// the compiler turns it into SIMD instructions.
pub fn maximum_vectorised(a: &[f32], b: &[f32], c: &mut [f32]) {
    for ((out, &x), &y) in c.iter_mut().zip(a).zip(b) {
        *out = x.max(y);
    }
}

/// The vectorised loop on all threads, chunk by chunk.
pub fn maximum_all_threads(a: &[f32], b: &[f32], c: &mut [f32]) {
    c.par_chunks_mut(CPU_CHUNK)
        .zip(a.par_chunks(CPU_CHUNK))
        .zip(b.par_chunks(CPU_CHUNK))
        .for_each(|((out, x), y)| maximum_vectorised(x, y, out));
}

/// Climbs the ladder at every size of `options`, smallest first.
pub fn run(
    options: &MaximumOptions,
    gpu: Option<&BasicsGpu>,
    control: RunControl<'_>,
) -> Result<MaximumLadder> {
    check_repeats(options.repeats)?;
    if options.sides.is_empty() {
        return Err(HeatlabError::InvalidInput("no sizes to run".into()));
    }
    if let Some(&side) = options.sides.iter().find(|&&s| s == 0 || s > MAX_SIDE) {
        return Err(HeatlabError::InvalidInput(format!(
            "cube side {side} is out of range (1 to {MAX_SIDE})"
        )));
    }
    let mut sides = options.sides.clone();
    sides.sort_unstable();
    sides.dedup();
    let mut steps = Vec::with_capacity(sides.len());
    for side in sides {
        control.check()?;
        steps.push(run_side(side, options, gpu, control)?);
    }
    let crossover_host_arrays = crossover(&steps, LadderStep::gpu_host_arrays_seconds);
    let crossover_device_resident = crossover(&steps, LadderStep::gpu_device_resident_seconds);
    Ok(MaximumLadder {
        seed: options.seed,
        repeats: options.repeats,
        gpu: gpu.map(|gpu| gpu.name().to_string()),
        steps,
        crossover_host_arrays,
        crossover_device_resident,
    })
}

/// The smallest n from which `gpu_seconds` beats the fastest CPU rung at every larger size.
pub fn crossover(
    steps: &[LadderStep],
    gpu_seconds: impl Fn(&LadderStep) -> Option<f64>,
) -> Option<u64> {
    let mut from = None;
    for step in steps.iter().rev() {
        match gpu_seconds(step) {
            Some(seconds) if seconds < step.best_cpu_seconds() => from = Some(step.n),
            _ => break,
        }
    }
    from
}

/// Every rung at one cube side.
fn run_side(
    side: usize,
    options: &MaximumOptions,
    gpu: Option<&BasicsGpu>,
    control: RunControl<'_>,
) -> Result<LadderStep> {
    let n = side * side * side;
    crate::memory::ensure_host_memory(
        &format!("the maximum of two {side}^3 arrays"),
        super::super::array_bytes(if gpu.is_some() { 7 } else { 3 }, n)?,
    )?;
    let (a, b) = generate_inputs(n, options.seed);
    let mut c = vec![0.0f32; n];
    // Untimed: the output's fresh pages are faulted in here, not in the first rung's timing.
    maximum_vectorised(&a, &b, &mut c);
    let repeats = options.repeats;
    let (naive_loop, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        maximum_naive(&a, &b, &mut c, side);
        Ok(())
    })?;
    let (vectorised_loop, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        maximum_vectorised(&a, &b, &mut c);
        Ok(())
    })?;
    let (all_threads, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        maximum_all_threads(&a, &b, &mut c);
        Ok(())
    })?;
    let (gpu_timings, gpu_equals_cpu) = match gpu {
        Some(gpu) => {
            let (timings, output) = run_gpu(gpu, &a, &b, repeats, control)?;
            (Some(timings), Some(same_bits(&output, &c)))
        }
        None => (None, None),
    };
    Ok(LadderStep {
        side,
        n: n as u64,
        naive_loop,
        vectorised_loop,
        all_threads,
        cpu_threads: rayon::current_num_threads(),
        gpu: gpu_timings,
        gpu_equals_cpu,
    })
}

/// The GPU rungs through the tutorial kernels' element-wise loop.
fn run_gpu(
    gpu: &BasicsGpu,
    a: &[f32],
    b: &[f32],
    repeats: u32,
    control: RunControl<'_>,
) -> Result<(KernelTimings, Vec<f32>)> {
    let launch = |stream: &Arc<CudaStream>,
                  inputs: &[CudaView<'_, f32>],
                  output: &mut CudaViewMut<'_, f32>|
     -> Result<()> {
        let [a, b] = inputs else {
            return Err(HeatlabError::Internal(
                "maximum takes two input arrays".into(),
            ));
        };
        if a.len() != output.len() || b.len() != output.len() {
            return Err(HeatlabError::Internal(
                "maximum's arrays differ in length".into(),
            ));
        }
        let n = output.len() as u64;
        let config = one_per_thread(n, ELEMENT_BLOCK)?;
        let mut launch = stream.launch_builder(&gpu.maximum);
        launch.arg(a).arg(b).arg(output).arg(&n);
        // SAFETY: maximum(const float* a, const float* b, float* c, unsigned long long n): all
        // three views hold n floats (checked above) and the kernel touches only indices below n.
        unsafe { launch.launch(config) }.map_err(driver_error("launching maximum"))?;
        Ok(())
    };
    let job = ElementwiseJob {
        gpu: gpu.tutorial(),
        inputs: &[a, b],
        repeats,
        control,
        launch: &launch,
    };
    let what = format!("the maximum of two arrays of {} elements", a.len());
    let measured = run_elementwise(&job, &what)?;
    let mut timings = KernelTimings::none(rayon::current_num_threads());
    let (output, _) = measured.record(&[], &mut timings);
    Ok((timings, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cpu_rung_gives_numpys_maximum() {
        for side in [1, 3, 17, 32] {
            let n = side * side * side;
            let (a, b) = generate_inputs(n, 7);
            let expected: Vec<f32> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| if x >= y { x } else { y })
                .collect();
            let mut c = vec![0.0; n];
            maximum_naive(&a, &b, &mut c, side);
            assert_eq!(c, expected);
            c.fill(0.0);
            maximum_vectorised(&a, &b, &mut c);
            assert_eq!(c, expected);
            c.fill(0.0);
            maximum_all_threads(&a, &b, &mut c);
            assert_eq!(c, expected);
        }
    }
}
