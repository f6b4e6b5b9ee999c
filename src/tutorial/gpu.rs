//! The GPU side of the tutorial kernels: `kernels/tutorial.cu` compiled once, and the timed
//! upload / kernel / download loop that the element-wise kernels share.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{sys, CudaFunction, CudaSlice, CudaStream, LaunchConfig};

use super::{
    GpuHostArraysTimings, PhaseProgress, RunControl, RunPhase, TimingStats, TUTORIAL_SOURCE,
};
use crate::compute::cuda::{driver_error, CudaDevice, GpuTimer};
use crate::compute::BackendChoice;
use crate::error::{CudaUnavailable, Result};

/// Threads per block of the element-wise kernels.
const ELEMENTWISE_BLOCK: u32 = 256;
/// Blocks per multiprocessor of a grid-stride launch: enough to fill every SM several times.
const BLOCKS_PER_SM: u32 = 16;

/// An open GPU with the tutorial kernels loaded.
pub struct TutorialGpu {
    device: CudaDevice,
    pub(crate) hidden_layer: CudaFunction,
    pub(crate) gaussian_pdf: CudaFunction,
    pub(crate) monte_carlo_pi: CudaFunction,
    multiprocessors: u32,
}

impl TutorialGpu {
    /// Opens GPU 0 and compiles `kernels/tutorial.cu`, or says why that is not possible.
    pub fn open() -> Result<Self> {
        let device = CudaDevice::open()?;
        let module = device.load_kernels("tutorial.cu", TUTORIAL_SOURCE)?;
        let multiprocessors = device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver_error("querying the multiprocessor count"))?;
        Ok(Self {
            hidden_layer: device.function(&module, "hidden_layer")?,
            gaussian_pdf: device.function(&module, "gaussian_pdf")?,
            monte_carlo_pi: device.function(&module, "monte_carlo_pi")?,
            multiprocessors: u32::try_from(multiprocessors).unwrap_or(1).max(1),
            device,
        })
    }

    /// The device, for its name, memory and timers.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    /// The GPU's model name.
    pub fn name(&self) -> &str {
        self.device.name()
    }

    /// Streaming multiprocessors of the GPU.
    pub fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    /// A grid-stride launch of `block` threads per block over `work_items` items: one thread
    /// per item up to `blocks_per_sm` blocks per SM, then each thread loops.
    pub(crate) fn grid_stride_config(
        &self,
        work_items: u64,
        block: u32,
        blocks_per_sm: u32,
    ) -> LaunchConfig {
        let cap = u64::from(self.multiprocessors) * u64::from(blocks_per_sm);
        let blocks = work_items.div_ceil(u64::from(block)).clamp(1, cap);
        LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The configuration of the element-wise kernels for `n` elements.
    pub(crate) fn elementwise_config(&self, n: u64) -> LaunchConfig {
        self.grid_stride_config(n, ELEMENTWISE_BLOCK, BLOCKS_PER_SM)
    }

    /// Fails with the size needed when `bytes` do not fit in the GPU's free memory.
    pub(crate) fn ensure_memory(&self, what: &str, bytes: usize) -> Result<()> {
        let (free, _) = self.device.memory_info()?;
        crate::memory::ensure_gpu_memory(what, bytes, free)
    }
}

/// Opens the GPU the user chose: `Cpu` gives none, `Cuda` the GPU or the reason it cannot be
/// used, `Auto` the GPU when it works and otherwise none with the reason.
pub fn open_gpu(choice: BackendChoice) -> Result<(Option<TutorialGpu>, Option<CudaUnavailable>)> {
    match choice {
        BackendChoice::Cpu => Ok((None, None)),
        BackendChoice::Cuda => Ok((Some(TutorialGpu::open()?), None)),
        BackendChoice::Auto => match TutorialGpu::open() {
            Ok(gpu) => Ok((Some(gpu), None)),
            Err(error) => {
                let reason = CudaUnavailable::from_error(&error);
                log::info!("tutorial kernels on the CPU only: {reason}");
                Ok((None, Some(reason)))
            }
        },
    }
}

/// What the shared element-wise loop measured, and the output of its last run.
pub(crate) struct ElementwiseGpuRun {
    pub(crate) output: Vec<f32>,
    pub(crate) host_arrays: GpuHostArraysTimings,
    pub(crate) device_resident: TimingStats,
    pub(crate) device_resident_wall: TimingStats,
}

impl ElementwiseGpuRun {
    /// Records the GPU timings in `timings` and returns the GPU's output with its largest
    /// difference from the CPU's `reference` (none when the CPU did not run).
    pub(crate) fn record(
        self,
        reference: &[f32],
        timings: &mut super::KernelTimings,
    ) -> (Vec<f32>, Option<f64>) {
        let difference =
            (!reference.is_empty()).then(|| super::max_abs_difference(&self.output, reference));
        timings.gpu_host_arrays = Some(self.host_arrays);
        timings.gpu_device_resident = Some(self.device_resident);
        timings.gpu_device_resident_wall = Some(self.device_resident_wall);
        (self.output, difference)
    }
}

/// Launches one element-wise kernel: (stream, device inputs, device output).
pub(crate) type ElementwiseLaunch<'a> =
    dyn Fn(&Arc<CudaStream>, &[CudaSlice<f32>], &mut CudaSlice<f32>) -> Result<()> + 'a;

/// Times an element-wise kernel over `inputs` (all of one length) `repeats` times with host
/// arrays (upload, kernel, download, each between CUDA events) and then `repeats` times with
/// the arrays left on the device (kernel only). One untimed warm-up run comes first. Device
/// memory is allocated once, before any timing, and checked against the free memory first.
pub(crate) fn run_elementwise(
    gpu: &TutorialGpu,
    what: &str,
    inputs: &[&[f32]],
    repeats: u32,
    control: RunControl<'_>,
    launch: &ElementwiseLaunch<'_>,
) -> Result<ElementwiseGpuRun> {
    let n = inputs.first().map_or(0, |input| input.len());
    gpu.ensure_memory(what, super::array_bytes(inputs.len() + 1, n)?)?;
    let device = gpu.device();
    let stream = device.stream().clone();
    let mut device_inputs = inputs
        .iter()
        .map(|input| {
            stream
                .alloc_zeros::<f32>(input.len())
                .map_err(driver_error("allocating a GPU input array"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut device_output = stream
        .alloc_zeros::<f32>(n)
        .map_err(driver_error("allocating the GPU output array"))?;
    let mut output = vec![0.0f32; n];
    let timer = device.timer()?;

    let upload = |device_inputs: &mut [CudaSlice<f32>]| -> Result<()> {
        for (host, dev) in inputs.iter().zip(device_inputs.iter_mut()) {
            stream
                .memcpy_htod(*host, dev)
                .map_err(driver_error("uploading an input array"))?;
        }
        Ok(())
    };

    // Warm-up, one whole untimed run: the first launch of a module pays for loading it, and
    // the first download into `output` pays for faulting in its fresh host pages.
    upload(&mut device_inputs)?;
    launch(&stream, &device_inputs, &mut device_output)?;
    stream
        .memcpy_dtoh(&device_output, output.as_mut_slice())
        .map_err(driver_error("downloading the output array"))?;
    device.synchronize()?;

    let progress = PhaseProgress::new(control, RunPhase::GpuHostArrays, u64::from(repeats));
    let host_arrays = time_host_arrays(
        &timer,
        repeats,
        &progress,
        &mut |part| match part {
            TimedPart::Upload => upload(&mut device_inputs),
            TimedPart::Kernel => launch(&stream, &device_inputs, &mut device_output),
            TimedPart::Download => stream
                .memcpy_dtoh(&device_output, output.as_mut_slice())
                .map_err(driver_error("downloading the output array")),
        },
        &mut || progress.advance(1),
    )?;
    device.synchronize()?;

    let progress = PhaseProgress::new(control, RunPhase::GpuDeviceResident, u64::from(repeats));
    let (device_resident, device_resident_wall) = time_device_resident(
        &timer,
        repeats,
        &progress,
        &mut |part| match part {
            TimedPart::Kernel => launch(&stream, &device_inputs, &mut device_output),
            // The inputs stay on the device and the kernel overwrites the whole output.
            TimedPart::Upload | TimedPart::Download => Ok(()),
        },
        &mut || progress.advance(1),
    )?;
    Ok(ElementwiseGpuRun {
        output,
        host_arrays,
        device_resident,
        device_resident_wall,
    })
}

/// A timed part of a run with host arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimedPart {
    /// Inputs to the device.
    Upload,
    /// The kernel.
    Kernel,
    /// Outputs back to the host.
    Download,
}

/// Times `repeats` runs with host arrays: `run` does each [`TimedPart`] in turn, each between
/// the CUDA events of `timer`, and each whole run is also timed on the host's wall clock.
/// `after` runs untimed after each run (progress); the cancel flag is checked before each.
pub(crate) fn time_host_arrays(
    timer: &GpuTimer,
    repeats: u32,
    progress: &PhaseProgress<'_>,
    run: &mut dyn FnMut(TimedPart) -> Result<()>,
    after: &mut dyn FnMut(),
) -> Result<GpuHostArraysTimings> {
    let mut parts: [Vec<f64>; 3] = Default::default();
    let (mut totals, mut walls) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        progress.check()?;
        let wall_started = Instant::now();
        let mut total = 0.0;
        for (times, part) in
            parts
                .iter_mut()
                .zip([TimedPart::Upload, TimedPart::Kernel, TimedPart::Download])
        {
            timer.start()?;
            run(part)?;
            let seconds = timer.stop()?.as_secs_f64();
            times.push(seconds);
            total += seconds;
        }
        walls.push(wall_started.elapsed().as_secs_f64());
        totals.push(total);
        after();
    }
    let [uploads, kernels, downloads] = parts;
    Ok(GpuHostArraysTimings {
        upload: TimingStats::from_runs(uploads),
        kernel: TimingStats::from_runs(kernels),
        download: TimingStats::from_runs(downloads),
        total: TimingStats::from_runs(totals),
        wall: TimingStats::from_runs(walls),
    })
}

/// Times `repeats` kernel-only runs with the data left on the device: `run` does
/// [`TimedPart::Upload`] untimed first (a reset of the output, or nothing), then
/// [`TimedPart::Kernel`] between the CUDA events of `timer` (and on the wall clock); `after`
/// runs untimed after each. Returns the event timings and the wall-clock timings.
pub(crate) fn time_device_resident(
    timer: &GpuTimer,
    repeats: u32,
    progress: &PhaseProgress<'_>,
    run: &mut dyn FnMut(TimedPart) -> Result<()>,
    after: &mut dyn FnMut(),
) -> Result<(TimingStats, TimingStats)> {
    let (mut events, mut walls) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        progress.check()?;
        run(TimedPart::Upload)?;
        let wall_started = Instant::now();
        timer.start()?;
        run(TimedPart::Kernel)?;
        events.push(timer.stop()?.as_secs_f64());
        walls.push(wall_started.elapsed().as_secs_f64());
        after();
    }
    Ok((
        TimingStats::from_runs(events),
        TimingStats::from_runs(walls),
    ))
}
