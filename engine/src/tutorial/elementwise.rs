//! What the element-wise kernels (the hidden layer and the Gaussian PDF) share: draw the inputs,
//! time the CPU versions, time the GPU with host arrays and device-resident arrays, and compare.
//! Each kernel only says how to draw its inputs, compute one output on the CPU and launch its
//! GPU kernel.

use std::sync::Arc;

use cudarc::driver::{CudaStream, CudaView, CudaViewMut};

use super::gpu::{run_elementwise, ElementwiseJob};
use super::{
    array_bytes, time_cpu_versions, CpuThreads, KernelRun, KernelSummary, KernelTimings,
    RunControl, RunOptions, TutorialGpu, TutorialKernel,
};
use crate::error::{HeatlabError, Result};

/// Draws the inputs of `n` elements.
pub(crate) type Generate<'k, I> = dyn Fn(usize, RunControl<'_>) -> Result<I> + 'k;
/// Computes the outputs on the CPU, on one thread or all.
pub(crate) type ComputeOnCpu<'k, I> =
    dyn Fn(&I, &mut [f32], CpuThreads, RunControl<'_>) -> Result<()> + 'k;
/// The input arrays the GPU kernel reads, in its argument order.
pub(crate) type DeviceInputs<'k, I> = dyn for<'i> Fn(&'i I) -> Vec<&'i [f32]> + 'k;
/// Launches the kernel on (stream, device inputs, device output): views of equal length, the
/// whole arrays or one chunk of them.
pub(crate) type LaunchOnGpu<'k> = dyn Fn(
        &TutorialGpu,
        &Arc<CudaStream>,
        &[CudaView<'_, f32>],
        &mut CudaViewMut<'_, f32>,
    ) -> Result<()>
    + 'k;

/// One element-wise kernel: how its inputs are drawn and how each version computes it.
pub(crate) struct ElementwiseKernel<'k, I> {
    /// What a run of `n` is, for memory messages: "Gaussian PDF of 1000 points".
    pub(crate) what: String,
    /// Input arrays per run (all of length n).
    pub(crate) input_arrays: usize,
    pub(crate) generate: &'k Generate<'k, I>,
    pub(crate) cpu: &'k ComputeOnCpu<'k, I>,
    pub(crate) device_inputs: &'k DeviceInputs<'k, I>,
    pub(crate) launch: &'k LaunchOnGpu<'k>,
}

/// A finished element-wise run: its inputs, its outputs (the GPU's when the GPU ran) and what
/// was measured.
pub(crate) struct ElementwiseRun<I> {
    pub(crate) inputs: I,
    pub(crate) outputs: Vec<f32>,
    pub(crate) timings: KernelTimings,
    /// Largest |GPU - CPU| when both ran.
    pub(crate) difference: Option<f64>,
    /// The GPU's name when it ran.
    pub(crate) gpu_name: Option<String>,
}

impl<I> ElementwiseRun<I> {
    /// The inputs, the outputs and the report of this run of `kernel`: `result` summarises
    /// what it computed; `transfer_bytes` are moved by one host-arrays run.
    pub(crate) fn into_report(
        self,
        kernel: TutorialKernel,
        options: &RunOptions,
        result: KernelSummary,
        transfer_bytes: u64,
    ) -> (I, Vec<f32>, KernelRun) {
        let run = KernelRun {
            kernel,
            n: options.n,
            seed: options.seed,
            repeats: options.repeats,
            gpu: self.gpu_name,
            result,
            timings: self.timings,
            max_abs_difference_gpu_cpu: self.difference,
            transfer_bytes,
            gpu_kernel: None,
        };
        (self.inputs, self.outputs, run)
    }
}

/// Draws the inputs and runs the CPU versions that `options.cpu` asks for and, with a GPU, the
/// GPU with host arrays and with device-resident arrays, `options.repeats` times each.
pub(crate) fn run_kernel<I>(
    options: &RunOptions,
    gpu: Option<&TutorialGpu>,
    kernel: &ElementwiseKernel<'_, I>,
    control: RunControl<'_>,
) -> Result<ElementwiseRun<I>> {
    options.validate()?;
    let n = options.n_elements()?;
    let cpu_outputs = usize::from(options.cpu.one_thread() || options.cpu.all_threads());
    let gpu_outputs = usize::from(gpu.is_some());
    if cpu_outputs + gpu_outputs == 0 {
        return Err(HeatlabError::InvalidInput(
            "nothing to run: no GPU and the CPU runs are skipped".into(),
        ));
    }
    // With a GPU, the pinned runs hold a page-locked copy of every input and of the output.
    let pinned_arrays = gpu_outputs * (kernel.input_arrays + 1);
    crate::memory::ensure_host_memory(
        &format!("{} (inputs and outputs)", kernel.what),
        array_bytes(
            kernel.input_arrays + cpu_outputs + gpu_outputs + pinned_arrays,
            n,
        )?,
    )?;
    let inputs = (kernel.generate)(n, control)?;

    let mut timings = KernelTimings::none(rayon::current_num_threads());
    let mut outputs = if cpu_outputs > 0 {
        vec![0.0f32; n]
    } else {
        Vec::new()
    };
    time_cpu_versions(options, &mut timings, |threads| {
        (kernel.cpu)(&inputs, &mut outputs, threads, control)
    })?;

    let mut difference = None;
    let mut gpu_name = None;
    if let Some(gpu) = gpu {
        let launch = |stream: &Arc<CudaStream>,
                      device_inputs: &[CudaView<'_, f32>],
                      output: &mut CudaViewMut<'_, f32>| {
            (kernel.launch)(gpu, stream, device_inputs, output)
        };
        let arrays = match kernel.input_arrays {
            1 => "1 input".to_string(),
            count => format!("{count} inputs"),
        };
        let device_inputs = (kernel.device_inputs)(&inputs);
        let job = ElementwiseJob {
            gpu,
            inputs: &device_inputs,
            repeats: options.repeats,
            control,
            launch: &launch,
        };
        let measured = run_elementwise(&job, &format!("{} ({arrays} and 1 output)", kernel.what))?;
        (outputs, difference) = measured.record(&outputs, &mut timings);
        gpu_name = Some(gpu.name().to_string());
    }
    Ok(ElementwiseRun {
        inputs,
        outputs,
        timings,
        difference,
        gpu_name,
    })
}
