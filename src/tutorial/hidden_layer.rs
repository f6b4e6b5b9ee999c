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

use cudarc::driver::PushKernelArg;

use super::gpu::run_elementwise;
use super::{
    array_bytes, fill_in_chunks, time_cpu_versions, ArrayStats, CpuThreads, KernelRun,
    KernelSummary, KernelTimings, PhaseProgress, RunControl, RunOptions, RunPhase, TutorialGpu,
    TutorialKernel, CPU_CHUNK,
};
use crate::compute::cuda::driver_error;
use crate::error::Result;
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
    let phase = match threads {
        CpuThreads::One => RunPhase::CpuOneThread,
        CpuThreads::All => RunPhase::CpuAllThreads,
    };
    let progress = PhaseProgress::new(control, phase, activations.len() as u64);
    fill_in_chunks(activations, threads, &progress, |first, chunk| {
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
    options.validate()?;
    let n = options.n_elements()?;
    let cpu_outputs = usize::from(options.cpu.one_thread() || options.cpu.all_threads());
    let gpu_outputs = usize::from(gpu.is_some());
    crate::memory::ensure_host_memory(
        &format!("hidden layer of {n} neurons (inputs and outputs)"),
        array_bytes(2 + cpu_outputs + gpu_outputs, n)?,
    )?;
    if cpu_outputs + gpu_outputs == 0 {
        return Err(crate::HeatlabError::InvalidInput(
            "nothing to run: no GPU and the CPU runs are skipped".into(),
        ));
    }
    let inputs = generate_inputs(n, options.seed, control)?;

    let mut cpu_activations = Vec::new();
    let mut timings = KernelTimings {
        cpu_one_thread: None,
        cpu_all_threads: None,
        cpu_threads: rayon::current_num_threads(),
        gpu_host_arrays: None,
        gpu_device_resident: None,
        gpu_device_resident_wall: None,
    };
    if cpu_outputs > 0 {
        cpu_activations = vec![0.0f32; n];
    }
    time_cpu_versions(options, &mut timings, |threads| {
        activate_cpu(&inputs, &mut cpu_activations, threads, control)
    })?;

    let mut activations = cpu_activations;
    let mut difference = None;
    let mut gpu_name = None;
    if let Some(gpu) = gpu {
        let config = gpu.elementwise_config(options.n);
        let n_arg = options.n;
        let launch = |stream: &std::sync::Arc<cudarc::driver::CudaStream>,
                      inputs: &[cudarc::driver::CudaSlice<f32>],
                      output: &mut cudarc::driver::CudaSlice<f32>|
         -> Result<()> {
            let [greyscales, weights] = inputs else {
                return Err(crate::HeatlabError::InvalidInput(
                    "hidden_layer takes two input arrays".into(),
                ));
            };
            let mut launch = stream.launch_builder(&gpu.hidden_layer);
            launch.arg(greyscales).arg(weights).arg(output).arg(&n_arg);
            // SAFETY: hidden_layer(const float* greyscales, const float* weights,
            // float* activations, unsigned long long n): all three buffers hold n floats
            // (run_elementwise allocates them from inputs of length n) and the grid-stride
            // loop reads and writes only indices below n.
            unsafe { launch.launch(config) }.map_err(driver_error("launching hidden_layer"))?;
            Ok(())
        };
        let measured = run_elementwise(
            gpu,
            &format!("hidden layer of {n} neurons (2 inputs and 1 output)"),
            &[&inputs.greyscales, &inputs.weights],
            options.repeats,
            control,
            &launch,
        )?;
        (activations, difference) = measured.record(&activations, &mut timings);
        gpu_name = Some(gpu.name().to_string());
    }

    let run = KernelRun {
        kernel: TutorialKernel::HiddenLayer,
        n: options.n,
        seed: options.seed,
        repeats: options.repeats,
        gpu: gpu_name,
        result: KernelSummary::HiddenLayer {
            activations: ArrayStats::of(&activations),
        },
        timings,
        max_abs_difference_gpu_cpu: difference,
        transfer_bytes: 3 * 4 * options.n,
    };
    Ok(HiddenLayerOutput {
        inputs,
        activations,
        run,
    })
}
