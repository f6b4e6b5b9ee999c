//! The hidden layer of seed `001_...`: `activation = tanh(greyscale / 255 * weight)` over n
//! neurons, float32.
//!
//! Inputs, drawn from `np.random.default_rng(seed)` in the seed's order:
//! - `greyscales = np.floor(rng.uniform(0, 255, n).astype(np.float32))`: bit for bit NumPy's;
//! - `weights = normal(0.5, 0.1, n).astype(np.float32)`: NumPy draws normals with a ziggurat
//!   that heatlab does not reproduce, so the weights come from Box-Muller on the same
//!   generator's next doubles (`u1, u2 -> sqrt(-2 ln(1 - u1)) * (cos, sin)(2 pi u2)`, both used).
//!   They have the same distribution as NumPy's but not the same values; `--npy` writes them so
//!   that Python can check the activations anyway.

use std::sync::Arc;

use cudarc::driver::{CudaStream, CudaView, CudaViewMut, PushKernelArg};

use super::elementwise::{run_kernel, ElementwiseKernel};
use super::gpu::HIDDEN_GROUPS;
use super::{
    fill_in_chunks, ArrayStats, CpuThreads, KernelRun, KernelSummary, PhaseProgress, RunControl,
    RunOptions, RunPhase, TutorialGpu, TutorialKernel, CPU_CHUNK,
};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;

/// Mean of the weights (the seed's `normal(.5, .1)`).
pub const WEIGHT_MEAN: f64 = 0.5;
/// Standard deviation of the weights.
pub const WEIGHT_SIGMA: f64 = 0.1;

/// The layer's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenLayerInputs {
    /// Whole numbers 0..=255 (as float32), one per neuron.
    pub greyscales: Vec<f32>,
    /// Weights around 0.5, one per neuron.
    pub weights: Vec<f32>,
}

/// One activation, the formula every version evaluates: `tanh((greyscale / 255) * weight)` in
/// float32.
pub fn activation(greyscale: f32, weight: f32) -> f32 {
    let normalized = greyscale / 255.0;
    (normalized * weight).tanh()
}

/// Draws the inputs for `n` neurons (see the module documentation for what matches NumPy).
pub fn generate_inputs(n: usize, seed: u64, control: RunControl<'_>) -> Result<HiddenLayerInputs> {
    let progress = PhaseProgress::new(control, RunPhase::GeneratingInputs, 2 * n as u64);
    let mut generator = NumpyGenerator::new(seed);
    let mut greyscales = Vec::with_capacity(n);
    while greyscales.len() < n {
        progress.check()?;
        let count = CPU_CHUNK.min(n - greyscales.len());
        greyscales.extend((0..count).map(|_| ((255.0 * generator.next_f64()) as f32).floor()));
        progress.advance(count as u64);
    }
    let mut weights = Vec::with_capacity(n);
    while weights.len() < n {
        progress.check()?;
        let count = CPU_CHUNK.min(n - weights.len());
        let target = weights.len() + count;
        while weights.len() < target {
            let (first, second) = box_muller(&mut generator);
            weights.push((WEIGHT_MEAN + WEIGHT_SIGMA * first) as f32);
            if weights.len() < target {
                weights.push((WEIGHT_MEAN + WEIGHT_SIGMA * second) as f32);
            }
        }
        progress.advance(count as u64);
    }
    Ok(HiddenLayerInputs {
        greyscales,
        weights,
    })
}

/// Two standard normals from two uniform doubles (Box-Muller). `1 - u1` lies in (0, 1], so the
/// logarithm is finite.
pub fn box_muller(generator: &mut NumpyGenerator) -> (f64, f64) {
    let u1 = generator.next_f64();
    let u2 = generator.next_f64();
    let radius = (-2.0 * (1.0 - u1).ln()).sqrt();
    let angle = std::f64::consts::TAU * u2;
    (radius * angle.cos(), radius * angle.sin())
}

/// The activations on the CPU, on one thread or all, into `activations` (same length as the
/// inputs).
pub fn activate_cpu(
    inputs: &HiddenLayerInputs,
    activations: &mut [f32],
    threads: CpuThreads,
    control: RunControl<'_>,
) -> Result<()> {
    fill_in_chunks(activations, threads, control, |first, chunk| {
        let greys = &inputs.greyscales[first..first + chunk.len()];
        let weights = &inputs.weights[first..first + chunk.len()];
        for ((out, &grey), &weight) in chunk.iter_mut().zip(greys).zip(weights) {
            *out = activation(grey, weight);
        }
    })
}

/// A hidden-layer run: its inputs, its activations (the GPU's when the GPU ran) and the report.
#[derive(Debug, Clone)]
pub struct HiddenLayerOutput {
    /// The inputs.
    pub inputs: HiddenLayerInputs,
    /// The activations.
    pub activations: Vec<f32>,
    /// Timings, agreement and summary.
    pub run: KernelRun,
}

/// Draws the inputs and runs the CPU versions that `options.cpu` asks for and, with a GPU, the
/// GPU with host arrays and with device-resident arrays, `options.repeats` times each.
pub fn run(
    options: &RunOptions,
    gpu: Option<&TutorialGpu>,
    control: RunControl<'_>,
) -> Result<HiddenLayerOutput> {
    let launch = |gpu: &TutorialGpu,
                  stream: &Arc<CudaStream>,
                  inputs: &[CudaView<'_, f32>],
                  output: &mut CudaViewMut<'_, f32>|
     -> Result<()> {
        let [greyscales, weights] = inputs else {
            return Err(HeatlabError::Internal(
                "hidden_layer takes two input arrays".into(),
            ));
        };
        let n = output.len() as u64;
        if greyscales.len() != output.len() || weights.len() != output.len() {
            return Err(HeatlabError::Internal(
                "hidden_layer's arrays differ in length".into(),
            ));
        }
        let config = gpu.elementwise_config(n, HIDDEN_GROUPS)?;
        let mut launch = stream.launch_builder(&gpu.hidden_layer);
        launch.arg(greyscales).arg(weights).arg(output).arg(&n);
        // SAFETY: hidden_layer(const float* greyscales, const float* weights,
        // float* activations, unsigned long long n): all three views hold n floats (checked
        // above) and start 16-byte aligned (whole allocations, or chunks at multiples of 4096
        // elements), and the kernel touches only indices below n.
        unsafe { launch.launch(config) }.map_err(driver_error("launching hidden_layer"))?;
        Ok(())
    };
    let kernel = ElementwiseKernel {
        what: format!("hidden layer of {} neurons", options.n),
        input_arrays: 2,
        generate: &|n, control| generate_inputs(n, options.seed, control),
        cpu: &|inputs: &HiddenLayerInputs, out: &mut [f32], threads, control| {
            activate_cpu(inputs, out, threads, control)
        },
        device_inputs: &|inputs: &HiddenLayerInputs| {
            vec![inputs.greyscales.as_slice(), inputs.weights.as_slice()]
        },
        launch: &launch,
    };
    let measured = run_kernel(options, gpu, &kernel, control)?;
    let result = KernelSummary::HiddenLayer {
        activations: ArrayStats::of(&measured.outputs),
    };
    let (inputs, activations, run) = measured.into_report(
        TutorialKernel::HiddenLayer,
        options,
        result,
        3 * 4 * options.n,
    );
    Ok(HiddenLayerOutput {
        inputs,
        activations,
        run,
    })
}
