//! The GPU side of the tutorial kernels: `kernels/tutorial.cu` compiled once, the page-locked
//! host buffers kept between runs, and the timed upload / kernel / download loops that the
//! element-wise kernels share (pageable, pinned, and pinned in chunks over two streams).

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig, PinnedHostSlice,
};

use super::{
    GpuHostArraysTimings, GpuOverlappedTimings, PhaseProgress, RunControl, RunPhase, TimingStats,
    TUTORIAL_SOURCE,
};
use crate::compute::cuda::{driver_error, CudaDevice};
use crate::compute::BackendChoice;
use crate::error::{CudaUnavailable, HeatlabError, Result};

mod timing;
use timing::time_pinned;
pub(crate) use timing::{
    launches_per_timing, same_bits, time_device_resident, time_host_arrays, TimedPart,
};

/// Threads per block of the element-wise kernels.
const ELEMENTWISE_BLOCK: u32 = 256;
/// Elements per float4 group of the element-wise kernels.
const GROUP: u64 = 4;
/// Float4 groups per thread of `hidden_layer` (`HIDDEN_GROUPS` in `kernels/tutorial.cu`).
pub(crate) const HIDDEN_GROUPS: u64 = 1;
/// Float4 groups per thread of `gaussian_pdf` (`GAUSSIAN_GROUPS` in `kernels/tutorial.cu`).
pub(crate) const GAUSSIAN_GROUPS: u64 = 2;
/// Threads per block of the Monte Carlo kernels; must match `PI_BLOCK` in `kernels/tutorial.cu`.
pub(crate) const PI_BLOCK: u32 = 256;
/// Samples of each timed launch when `open` picks the fastest Monte Carlo kernel.
const PI_TUNING_SAMPLES: u64 = 1 << 27;
/// A device-resident timing launches the kernel back to back until about this long has passed,
/// so that what is timed is the kernel and not the host's submission of one launch.
const DEVICE_RESIDENT_BATCH_SECONDS: f64 = 1e-3;
/// At most this many back-to-back launches per device-resident timing.
const MAX_LAUNCHES_PER_TIMING: u32 = 1000;
/// The pinned runs in chunks split the arrays into about this many chunks.
const OVERLAP_CHUNKS: u64 = 16;

/// An open GPU with the tutorial kernels loaded.
pub struct TutorialGpu {
    device: CudaDevice,
    /// A second stream for the chunked pinned runs (copies of one chunk overlap the kernel and
    /// copies of the next).
    second_stream: Arc<CudaStream>,
    pub(crate) hidden_layer: CudaFunction,
    pub(crate) gaussian_pdf: CudaFunction,
    /// Holds a stream for a while, so that a batch of launches queues behind it.
    hold_stream: CudaFunction,
    /// The Monte Carlo kernel used: the fastest of [`PI_KERNELS`] on this GPU.
    pub(crate) monte_carlo_pi: CudaFunction,
    monte_carlo_pi_name: &'static str,
    /// Blocks of the Monte Carlo kernel that fit on the GPU at once.
    pi_blocks_per_wave: u32,
    multiprocessors: u32,
    /// Page-locked host arrays, kept between runs: allocating them takes far longer than
    /// copying through them, so a run reuses them when they are large enough.
    pinned: Mutex<Vec<PinnedHostSlice<f32>>>,
}

/// The Monte Carlo kernels of `kernels/tutorial.cu`: the same count, the hit test on the
/// integer units, on the FP64 units, or on both in turn.
const PI_KERNELS: [&str; 3] = [
    "monte_carlo_pi",
    "monte_carlo_pi_double_test",
    "monte_carlo_pi_alternating_test",
];
/// Samples per thread below which a Monte Carlo launch uses fewer blocks (each thread's jump
/// to its share, one Montgomery product per set bit of its word index, costs about as much as
/// some tens of samples).
const PI_SAMPLES_PER_THREAD: u64 = 64;

/// A launch of `blocks` blocks of `block` threads in a line, or an error saying that `what`
/// (such as `n = 5`) needs more blocks than one launch has (a grid's x dimension takes at most
/// 2³¹ - 1 blocks).
pub(crate) fn line_of_blocks(
    what: std::fmt::Arguments<'_>,
    blocks: u64,
    block: u32,
) -> Result<LaunchConfig> {
    let blocks = u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| {
            HeatlabError::InvalidInput(format!("{what} needs more blocks than one launch has"))
        })?;
    Ok(LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

impl TutorialGpu {
    /// Opens GPU 0 and compiles `kernels/tutorial.cu`, or says why that is not possible; then
    /// times the Monte Carlo kernels once and keeps the fastest (their counts must be equal).
    pub fn open() -> Result<Self> {
        let device = CudaDevice::open()?;
        let module = device.load_kernels("tutorial.cu", TUTORIAL_SOURCE)?;
        let context = device.context();
        let multiprocessors = context
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver_error("querying the multiprocessor count"))?;
        let multiprocessors = u32::try_from(multiprocessors).unwrap_or(1).max(1);
        let second_stream = context
            .new_stream()
            .map_err(driver_error("creating a second stream"))?;
        let mut candidates = Vec::new();
        for name in PI_KERNELS {
            let function = device.function(&module, name)?;
            let per_sm = function
                .occupancy_max_active_blocks_per_multiprocessor(PI_BLOCK, 0, None)
                .map_err(driver_error("querying the occupancy of monte_carlo_pi"))?
                .max(1);
            candidates.push((name, function, per_sm.saturating_mul(multiprocessors)));
        }
        let mut candidates = candidates.into_iter();
        let (name, function, wave) = candidates
            .next()
            .ok_or_else(|| HeatlabError::Internal("no Monte Carlo kernel".into()))?;
        let mut gpu = Self {
            hidden_layer: device.function(&module, "hidden_layer")?,
            gaussian_pdf: device.function(&module, "gaussian_pdf")?,
            hold_stream: device.function(&module, "hold_stream")?,
            monte_carlo_pi: function,
            monte_carlo_pi_name: name,
            pi_blocks_per_wave: wave,
            multiprocessors,
            second_stream,
            pinned: Mutex::new(Vec::new()),
            device,
        };
        let (mut best, first_count) = gpu.time_pi_kernel()?;
        log::info!("{name}: {PI_TUNING_SAMPLES} samples in {best:e} s");
        for (name, function, wave) in candidates {
            let kept = (
                gpu.monte_carlo_pi.clone(),
                gpu.monte_carlo_pi_name,
                gpu.pi_blocks_per_wave,
            );
            (
                gpu.monte_carlo_pi,
                gpu.monte_carlo_pi_name,
                gpu.pi_blocks_per_wave,
            ) = (function, name, wave);
            let (seconds, count) = gpu.time_pi_kernel()?;
            log::info!("{name}: {PI_TUNING_SAMPLES} samples in {seconds:e} s");
            if count != first_count {
                return Err(HeatlabError::Internal(format!(
                    "the Monte Carlo kernels disagree on {PI_TUNING_SAMPLES} samples: \
                     {first_count} and {count} ({name})"
                )));
            }
            if seconds < best {
                best = seconds;
            } else {
                (
                    gpu.monte_carlo_pi,
                    gpu.monte_carlo_pi_name,
                    gpu.pi_blocks_per_wave,
                ) = kept;
            }
        }
        Ok(gpu)
    }

    /// The best of three timed launches of this GPU's Monte Carlo kernel over
    /// [`PI_TUNING_SAMPLES`] samples, and their count.
    fn time_pi_kernel(&self) -> Result<(f64, u64)> {
        let stream = self.device.stream().clone();
        let mut inside = stream
            .alloc_zeros::<u64>(1)
            .map_err(driver_error("allocating the GPU count"))?;
        let timer = self.device.timer()?;
        self.launch_pi(&stream, 1, 0, PI_TUNING_SAMPLES, &mut inside)?;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            timer.start()?;
            self.launch_pi(&stream, 1, 0, PI_TUNING_SAMPLES, &mut inside)?;
            best = best.min(timer.stop()?.as_secs_f64());
        }
        stream
            .memset_zeros(&mut inside)
            .map_err(driver_error("resetting the GPU count"))?;
        self.launch_pi(&stream, 1, 0, PI_TUNING_SAMPLES, &mut inside)?;
        let mut count = [0u64];
        stream
            .memcpy_dtoh(&inside, &mut count)
            .map_err(driver_error("downloading the GPU count"))?;
        self.device.synchronize()?;
        Ok((best, count[0]))
    }

    /// Launches the Monte Carlo kernel over samples `[first_sample, first_sample +
    /// sample_count)` of `seed`, adding their count to `inside`; `sample_count` at most 2^35
    /// (a thread's share must stay below 2^32 samples).
    pub(crate) fn launch_pi(
        &self,
        stream: &Arc<CudaStream>,
        seed: u64,
        first_sample: u64,
        sample_count: u64,
        inside: &mut CudaSlice<u64>,
    ) -> Result<()> {
        use cudarc::driver::PushKernelArg;
        if sample_count > 1 << 35 {
            return Err(HeatlabError::Internal(format!(
                "monte_carlo_pi takes at most 2^35 samples per launch, got {sample_count}"
            )));
        }
        let blocks = sample_count
            .div_ceil(u64::from(PI_BLOCK) * PI_SAMPLES_PER_THREAD)
            .clamp(1, u64::from(self.pi_blocks_per_wave));
        let config = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (PI_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.monte_carlo_pi);
        launch
            .arg(&seed)
            .arg(&first_sample)
            .arg(&sample_count)
            .arg(inside);
        // SAFETY: monte_carlo_pi(_double_test)(unsigned long long seed, unsigned long long
        // first_sample, unsigned long long sample_count, unsigned long long* inside): `inside`
        // is a live device buffer of one u64, the block size is PI_BLOCK (the kernel's shared
        // array and __launch_bounds__ assume it), and sample_count is at most 2^35 as checked
        // above, so that a thread's share fits its 32-bit loop.
        unsafe { launch.launch(config) }.map_err(driver_error("launching monte_carlo_pi"))?;
        Ok(())
    }

    /// Holds `stream` for `seconds` with a one-thread kernel, so that the launches queued next
    /// wait for it and then run back to back.
    pub(crate) fn hold(&self, stream: &Arc<CudaStream>, seconds: f64) -> Result<()> {
        use cudarc::driver::PushKernelArg;
        let nanoseconds = (seconds.clamp(0.0, 1.0) * 1e9) as u64;
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.hold_stream);
        launch.arg(&nanoseconds);
        // SAFETY: hold_stream(unsigned long long nanoseconds) reads only the GPU's timer.
        unsafe { launch.launch(config) }.map_err(driver_error("launching hold_stream"))?;
        Ok(())
    }

    /// The name of the Monte Carlo kernel this GPU uses (the fastest of the equivalent ones).
    pub fn monte_carlo_pi_kernel(&self) -> &'static str {
        self.monte_carlo_pi_name
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

    /// The launch of an element-wise kernel over `n` elements whose threads each take
    /// `groups_per_thread` float4 groups: one grid that covers every whole group, at least one
    /// block (block 0 also takes the n % 4 tail).
    pub(crate) fn elementwise_config(
        &self,
        n: u64,
        groups_per_thread: u64,
    ) -> Result<LaunchConfig> {
        let per_block = u64::from(ELEMENTWISE_BLOCK) * groups_per_thread;
        let blocks = (n / GROUP).div_ceil(per_block).max(1);
        line_of_blocks(format_args!("n = {n}"), blocks, ELEMENTWISE_BLOCK)
    }

    /// `count` page-locked host arrays of at least `len` floats each, from the pool: reused
    /// when those of the last run are large enough, else freed and allocated anew (outside
    /// any timing). `what` names the run for a memory message.
    pub(crate) fn pinned_buffers(
        &self,
        what: &str,
        count: usize,
        len: usize,
    ) -> Result<MutexGuard<'_, Vec<PinnedHostSlice<f32>>>> {
        let mut pool = self.pinned.lock().unwrap_or_else(PoisonError::into_inner);
        let large_enough = pool.len() >= count && pool.iter().all(|buffer| buffer.len() >= len);
        if !large_enough {
            pool.clear();
            crate::memory::ensure_host_memory(
                &format!("{what} (page-locked copies)"),
                super::array_bytes(count, len)?,
            )?;
            for _ in 0..count {
                // SAFETY: the memory is uninitialised; every caller writes a buffer's first
                // `len` floats (inputs) or copies into them (outputs) before reading them.
                let buffer =
                    unsafe { self.device.context().alloc_pinned_with_flags::<f32>(len, 0) }
                        .map_err(driver_error("allocating page-locked host memory"))?;
                pool.push(buffer);
            }
        }
        Ok(pool)
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
    /// The pinned runs, or why they could not run (no page-locked memory to be had).
    pub(crate) pinned: std::result::Result<PinnedTimings, String>,
    pub(crate) device_resident: DeviceResidentTimings,
}

/// What the pinned runs measured.
pub(crate) struct PinnedTimings {
    pub(crate) whole: GpuHostArraysTimings,
    pub(crate) overlapped: GpuOverlappedTimings,
    /// Whether the pinned runs (whole and in chunks) gave the pageable run's output bit for bit.
    pub(crate) equal_to_pageable: bool,
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
        match self.pinned {
            Ok(pinned) => {
                timings.gpu_pinned_arrays = Some(pinned.whole);
                timings.gpu_pinned_overlapped = Some(pinned.overlapped);
                timings.pinned_equals_pageable = Some(pinned.equal_to_pageable);
            }
            Err(reason) => timings.pinned_note = Some(reason),
        }
        self.device_resident.record(timings);
        (self.output, difference)
    }
}

/// What the device-resident timing measured: seconds per launch by the events and by the wall
/// clock, and how many launches ran back to back in each timing.
pub(crate) struct DeviceResidentTimings {
    pub(crate) events: TimingStats,
    pub(crate) wall: TimingStats,
    pub(crate) launches_per_timing: u32,
}

impl DeviceResidentTimings {
    /// Records these timings in `timings`.
    pub(crate) fn record(self, timings: &mut super::KernelTimings) {
        timings.gpu_device_resident = Some(self.events);
        timings.gpu_device_resident_wall = Some(self.wall);
        timings.device_resident_launches_per_timing = self.launches_per_timing;
    }
}

/// Launches one element-wise kernel on a stream over device views of equal length (the whole
/// arrays, or one chunk of them): (stream, inputs, output).
pub(crate) type ElementwiseLaunch<'a> =
    dyn Fn(&Arc<CudaStream>, &[CudaView<'_, f32>], &mut CudaViewMut<'_, f32>) -> Result<()> + 'a;

/// An element-wise kernel to time on the GPU: what [`run_elementwise`] and its pinned runs
/// share.
#[derive(Clone, Copy)]
pub(crate) struct ElementwiseJob<'a> {
    pub(crate) gpu: &'a TutorialGpu,
    /// The input arrays, all of one length.
    pub(crate) inputs: &'a [&'a [f32]],
    /// Timed runs of each way.
    pub(crate) repeats: u32,
    pub(crate) control: RunControl<'a>,
    pub(crate) launch: &'a ElementwiseLaunch<'a>,
}

/// The device arrays of an element-wise run: its inputs and its output, all of n floats.
struct DeviceArrays {
    inputs: Vec<CudaSlice<f32>>,
    output: CudaSlice<f32>,
}

impl DeviceArrays {
    /// Device arrays for `inputs` and an output of `n` values, zeroed.
    fn alloc(stream: &Arc<CudaStream>, inputs: &[&[f32]], n: usize) -> Result<Self> {
        Ok(Self {
            inputs: inputs
                .iter()
                .map(|input| {
                    stream
                        .alloc_zeros::<f32>(input.len())
                        .map_err(driver_error("allocating a GPU input array"))
                })
                .collect::<Result<Vec<_>>>()?,
            output: stream
                .alloc_zeros::<f32>(n)
                .map_err(driver_error("allocating the GPU output array"))?,
        })
    }

    /// Launches the kernel over `range` of every array on `stream`.
    fn launch(
        &mut self,
        launch: &ElementwiseLaunch<'_>,
        stream: &Arc<CudaStream>,
        range: Range<usize>,
    ) -> Result<()> {
        let inputs: Vec<CudaView<'_, f32>> = self
            .inputs
            .iter()
            .map(|input| input.slice(range.clone()))
            .collect();
        launch(stream, &inputs, &mut self.output.slice_mut(range))
    }

    /// Copies `range` of each host input to the device on `stream`.
    fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        hosts: &[&[f32]],
        range: Range<usize>,
    ) -> Result<()> {
        for (host, device) in hosts.iter().zip(self.inputs.iter_mut()) {
            stream
                .memcpy_htod(&host[range.clone()], &mut device.slice_mut(range.clone()))
                .map_err(driver_error("uploading an input array"))?;
        }
        Ok(())
    }

    /// Copies `range` of the output to `host` on `stream`.
    fn download(
        &self,
        stream: &Arc<CudaStream>,
        host: &mut [f32],
        range: Range<usize>,
    ) -> Result<()> {
        stream
            .memcpy_dtoh(&self.output.slice(range.clone()), &mut host[range])
            .map_err(driver_error("downloading the output array"))
    }
}

/// Times an element-wise kernel over `inputs` (all of one length), `repeats` times each way:
/// with pageable host arrays (upload, kernel, download, each between CUDA events), with
/// page-locked host arrays (the same three parts), with page-locked arrays in chunks over two
/// streams (the copies of one chunk overlap the kernel and copies of another; timed as a
/// whole), and with the arrays left on the device (kernel only, many launches back to back per
/// timing). One untimed warm-up run comes first for each. Device memory is allocated once,
/// before any timing, and checked against the free memory first; the page-locked arrays come
/// from the GPU's pool.
pub(crate) fn run_elementwise(job: &ElementwiseJob<'_>, what: &str) -> Result<ElementwiseGpuRun> {
    let ElementwiseJob {
        gpu,
        inputs,
        repeats,
        control,
        launch,
    } = *job;
    let n = inputs.first().map_or(0, |input| input.len());
    gpu.ensure_memory(what, super::array_bytes(inputs.len() + 1, n)?)?;
    let device = gpu.device();
    let stream = device.stream().clone();
    let mut arrays = DeviceArrays::alloc(&stream, inputs, n)?;
    let mut output = crate::memory::try_filled_vec("the GPU's output", n, 0.0f32)?;
    let timer = device.timer()?;
    let whole = 0..n;

    // Warm-up, one whole untimed run: the first launch of a module pays for loading it, and
    // the first download into `output` pays for faulting in its fresh host pages.
    arrays.upload(&stream, inputs, whole.clone())?;
    arrays.launch(launch, &stream, whole.clone())?;
    arrays.download(&stream, &mut output, whole.clone())?;
    device.synchronize()?;
    let progress = PhaseProgress::new(control, RunPhase::GpuHostArrays, u64::from(repeats));
    let host_arrays = time_host_arrays(
        &timer,
        repeats,
        &progress,
        &mut |part| match part {
            TimedPart::Upload => arrays.upload(&stream, inputs, whole.clone()),
            TimedPart::Kernel => arrays.launch(launch, &stream, whole.clone()),
            TimedPart::Download => arrays.download(&stream, &mut output, whole.clone()),
        },
        &mut || progress.advance(1),
    )?;
    device.synchronize()?;

    // Without page-locked memory (a host that refuses to pin this much) the other versions
    // still run, and the report says why the pinned ones did not.
    let pinned = match gpu.pinned_buffers(what, inputs.len() + 1, n) {
        Ok(mut pool) => Ok(time_pinned(job, &mut pool, &output, &mut arrays)?),
        Err(error) => {
            log::warn!("pinned host arrays not timed: {error}");
            Err(error.to_string())
        }
    };

    let progress = PhaseProgress::new(control, RunPhase::GpuDeviceResident, u64::from(repeats));
    let launches = launches_per_timing(&timer, &mut || {
        arrays.launch(launch, &stream, whole.clone())
    })?;
    let device_resident = time_device_resident(
        gpu,
        &timer,
        repeats,
        launches,
        &progress,
        &mut |part| match part {
            TimedPart::Kernel => arrays.launch(launch, &stream, whole.clone()),
            // The inputs stay on the device and the kernel overwrites the whole output.
            TimedPart::Upload | TimedPart::Download => Ok(()),
        },
        &mut || progress.advance(1),
    )?;
    Ok(ElementwiseGpuRun {
        output,
        host_arrays,
        pinned,
        device_resident,
    })
}
