//! The Gaussian PDF of seed `001_...`: `exp(-((x - mean) / sigma)^2 / 2) / (sigma * sqrt(2 pi))`
//! over `x ~ uniform(-3, 3)`, float32, up to 100 million points and more.
//!
//! `x` is bit for bit `np.random.default_rng(seed).uniform(-3, 3, n).astype(np.float32)`.

use std::sync::Arc;

use cudarc::driver::{CudaStream, CudaView, CudaViewMut, PushKernelArg};

use super::elementwise::{run_kernel, ElementwiseKernel};
use super::gpu::GAUSSIAN_GROUPS;
use super::{
    fill_in_chunks, ArrayStats, CpuThreads, KernelRun, KernelSummary, PhaseProgress, RunControl,
    RunOptions, RunPhase, TutorialGpu, TutorialKernel, CPU_CHUNK,
};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;

/// `sqrt(2 pi)` rounded to float32, the constant `SQRT_2PI_F` of `kernels/tutorial.cu`.
pub const SQRT_2PI: f32 = 2.506_628_3;
/// The lower end of the points.
pub const X_LOW: f64 = -3.0;
/// The upper end of the points (excluded).
pub const X_HIGH: f64 = 3.0;

/// The Gaussian's parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GaussianParams {
    /// Mean.
    pub mean: f32,
    /// Standard deviation, positive.
    pub sigma: f32,
}

impl Default for GaussianParams {
    fn default() -> Self {
        Self {
            mean: 0.0,
            sigma: 1.0,
        }
    }
}

impl GaussianParams {
    /// Checks that the mean is finite and sigma positive and finite.
    pub fn validate(&self) -> Result<()> {
        if !self.mean.is_finite() {
            return Err(HeatlabError::InvalidInput(format!(
                "mean must be a finite number, got {}",
                self.mean
            )));
        }
        if !self.sigma.is_finite() || self.sigma <= 0.0 {
            return Err(HeatlabError::InvalidInput(format!(
                "sigma must be a positive number, got {}",
                self.sigma
            )));
        }
        Ok(())
    }
}

/// The PDF at `x`, the float32 formula every version evaluates in this order.
pub fn pdf(x: f32, params: GaussianParams) -> f32 {
    let z = (x - params.mean) / params.sigma;
    (-0.5 * (z * z)).exp() / (params.sigma * SQRT_2PI)
}

/// The PDF at `x` in float64, the exact curve the float32 results are compared with.
pub fn pdf_f64(x: f64, params: GaussianParams) -> f64 {
    let (mean, sigma) = (f64::from(params.mean), f64::from(params.sigma));
    let z = (x - mean) / sigma;
    (-0.5 * z * z).exp() / (sigma * std::f64::consts::TAU.sqrt())
}

/// Draws `n` points of `uniform(-3, 3)` as float32, exactly as NumPy's `default_rng(seed)`.
pub fn generate_x(n: usize, seed: u64, control: RunControl<'_>) -> Result<Vec<f32>> {
    let progress = PhaseProgress::new(control, RunPhase::GeneratingInputs, n as u64);
    let mut generator = NumpyGenerator::new(seed);
    let mut x = Vec::with_capacity(n);
    while x.len() < n {
        progress.check()?;
        let count = CPU_CHUNK.min(n - x.len());
        x.extend((0..count).map(|_| (X_LOW + (X_HIGH - X_LOW) * generator.next_f64()) as f32));
        progress.advance(count as u64);
    }
    Ok(x)
}

/// The PDF on the CPU, on one thread or all, into `out` (same length as `x`).
pub fn pdf_cpu(
    x: &[f32],
    params: GaussianParams,
    out: &mut [f32],
    threads: CpuThreads,
    control: RunControl<'_>,
) -> Result<()> {
    fill_in_chunks(out, threads, control, |first, chunk| {
        let points = &x[first..first + chunk.len()];
        for (value, &point) in chunk.iter_mut().zip(points) {
            *value = pdf(point, params);
        }
    })
}

/// Largest |float32 PDF - float64 formula| over the points.
pub fn max_error_vs_f64(x: &[f32], values: &[f32], params: GaussianParams) -> f64 {
    use rayon::prelude::*;
    x.par_iter()
        .zip(values.par_iter())
        .map(|(&point, &value)| (f64::from(value) - pdf_f64(f64::from(point), params)).abs())
        .reduce(|| 0.0, f64::max)
}

/// A Gaussian run: the points, the PDF values (the GPU's when the GPU ran) and the report.
#[derive(Debug, Clone)]
pub struct GaussianOutput {
    /// The parameters.
    pub params: GaussianParams,
    /// The points.
    pub x: Vec<f32>,
    /// The PDF at each point.
    pub pdf: Vec<f32>,
    /// Timings, agreement and summary.
    pub run: KernelRun,
}

/// Draws the points and runs the CPU versions that `options.cpu` asks for and, with a GPU, the
/// GPU with host arrays and with device-resident arrays, `options.repeats` times each.
pub fn run(
    options: &RunOptions,
    params: GaussianParams,
    gpu: Option<&TutorialGpu>,
    control: RunControl<'_>,
) -> Result<GaussianOutput> {
    params.validate()?;
    let launch = |gpu: &TutorialGpu,
                  stream: &Arc<CudaStream>,
                  inputs: &[CudaView<'_, f32>],
                  output: &mut CudaViewMut<'_, f32>|
     -> Result<()> {
        let [x] = inputs else {
            return Err(HeatlabError::Internal(
                "gaussian_pdf takes one input array".into(),
            ));
        };
        if x.len() != output.len() {
            return Err(HeatlabError::Internal(
                "gaussian_pdf's arrays differ in length".into(),
            ));
        }
        let n = output.len() as u64;
        let (mean, sigma) = (params.mean, params.sigma);
        let config = gpu.elementwise_config(n, GAUSSIAN_GROUPS)?;
        let mut launch = stream.launch_builder(&gpu.gaussian_pdf);
        launch.arg(x).arg(output).arg(&n).arg(&mean).arg(&sigma);
        // SAFETY: gaussian_pdf(const float* x, float* pdf, unsigned long long n,
        // float mean, float sigma): both views hold n floats (checked above) and start
        // 16-byte aligned (whole allocations, or chunks at multiples of 4096 elements), and
        // the kernel touches only indices below n.
        unsafe { launch.launch(config) }.map_err(driver_error("launching gaussian_pdf"))?;
        Ok(())
    };
    let kernel = ElementwiseKernel {
        what: format!("Gaussian PDF of {} points", options.n),
        input_arrays: 1,
        generate: &|n, control| generate_x(n, options.seed, control),
        cpu: &|x: &Vec<f32>, out: &mut [f32], threads, control| {
            pdf_cpu(x, params, out, threads, control)
        },
        device_inputs: &|x: &Vec<f32>| vec![x.as_slice()],
        launch: &launch,
    };
    let measured = run_kernel(options, gpu, &kernel, control)?;
    let result = KernelSummary::Gaussian {
        mean: params.mean,
        sigma: params.sigma,
        pdf: ArrayStats::of(&measured.outputs),
        max_abs_error_vs_f64: max_error_vs_f64(&measured.inputs, &measured.outputs, params),
    };
    let (x, pdf, run) =
        measured.into_report(TutorialKernel::Gaussian, options, result, 2 * 4 * options.n);
    Ok(GaussianOutput {
        params,
        x,
        pdf,
        run,
    })
}
