//! The GPU runner of Monte Carlo pi (part of `mc_pi.rs`, kept in its own file): the chunked
//! launches, the GPU count of a range of samples, and the timed GPU runs.

use super::super::gpu::{
    launches_per_timing, time_device_resident, time_host_arrays, DeviceResidentTimings, TimedPart,
};
use super::super::{
    GpuHostArraysTimings, KernelTimings, PhaseProgress, RunControl, RunOptions, RunPhase,
    TutorialGpu,
};
use super::GPU_PI_CHUNK;
use crate::compute::cuda::{driver_error, GpuTimer};
use crate::error::Result;
use cudarc::driver::CudaSlice;

/// Launches the Monte Carlo kernel over samples `[0, n)` in chunks, adding to `inside`.
/// Between chunks of a long run it waits for the GPU, checks for cancellation and reports
/// progress.
fn launch_pi_chunks(
    gpu: &TutorialGpu,
    seed: u64,
    n: u64,
    inside: &mut cudarc::driver::CudaSlice<u64>,
    progress: Option<&PhaseProgress<'_>>,
) -> Result<()> {
    let stream = gpu.device().stream().clone();
    let chunks = n.div_ceil(GPU_PI_CHUNK);
    for index in 0..chunks {
        let first_sample = index * GPU_PI_CHUNK;
        let sample_count = GPU_PI_CHUNK.min(n - first_sample);
        gpu.launch_pi(&stream, seed, first_sample, sample_count, inside)?;
        if chunks > 1 {
            if let Some(progress) = progress {
                gpu.device().synchronize()?;
                progress.advance(sample_count);
                progress.check()?;
            }
        }
    }
    Ok(())
}

/// Samples `[first_sample, first_sample + sample_count)` inside the quarter circle, counted on
/// the GPU (the twin of [`count_inside_range`](super::count_inside_range)).
pub fn count_inside_range_gpu(
    gpu: &TutorialGpu,
    seed: u64,
    first_sample: u64,
    sample_count: u64,
) -> Result<u64> {
    let stream = gpu.device().stream().clone();
    let mut inside = stream
        .alloc_zeros::<u64>(1)
        .map_err(driver_error("allocating the GPU count"))?;
    let mut done = 0;
    while done < sample_count {
        let count = GPU_PI_CHUNK.min(sample_count - done);
        gpu.launch_pi(&stream, seed, first_sample + done, count, &mut inside)?;
        done += count;
    }
    let mut count = [0u64];
    stream
        .memcpy_dtoh(&inside, &mut count)
        .map_err(driver_error("downloading the GPU count"))?;
    gpu.device().synchronize()?;
    Ok(count[0])
}

/// The timed runs of pi with its "host arrays" in `words` (the count's reset, then the
/// count): reset uploaded, kernel, count downloaded. Returns the timings and the count.
fn time_pi_host(
    gpu: &TutorialGpu,
    options: &RunOptions,
    timer: &GpuTimer,
    inside: &mut CudaSlice<u64>,
    words: &mut [u64],
    progress: &PhaseProgress<'_>,
) -> Result<(GpuHostArraysTimings, u64)> {
    let stream = gpu.device().stream().clone();
    // Long runs report progress chunk by chunk inside the launches; short ones once per run.
    let small = options.n <= GPU_PI_CHUNK;
    words.fill(0);
    let (zero, count) = words.split_at_mut(1);
    let zero = &*zero;
    let measured = time_host_arrays(
        timer,
        options.repeats,
        progress,
        &mut |part| match part {
            TimedPart::Upload => stream
                .memcpy_htod(zero, &mut *inside)
                .map_err(driver_error("resetting the GPU count")),
            TimedPart::Kernel => {
                launch_pi_chunks(gpu, options.seed, options.n, &mut *inside, Some(progress))
            }
            TimedPart::Download => stream
                .memcpy_dtoh(&*inside, &mut *count)
                .map_err(driver_error("downloading the GPU count")),
        },
        &mut || {
            if small {
                progress.advance(options.n);
            }
        },
    )?;
    gpu.device().synchronize()?;
    Ok((measured, count[0]))
}

/// Counts on the GPU: `repeats` runs with the count's reset uploaded and the count downloaded
/// (the "host arrays" of pi are 8 bytes each way) from pageable memory, the same from
/// page-locked memory, then `repeats` kernel-only runs. Returns the count.
pub(super) fn run_gpu(
    gpu: &TutorialGpu,
    options: &RunOptions,
    control: RunControl<'_>,
    timings: &mut KernelTimings,
) -> Result<u64> {
    let device = gpu.device();
    let stream = device.stream().clone();
    let mut inside = stream
        .alloc_zeros::<u64>(1)
        .map_err(driver_error("allocating the GPU count"))?;
    let timer = device.timer()?;
    // Warm-up on a small count: the first launch pays for loading the module.
    launch_pi_chunks(gpu, options.seed, options.n.min(1 << 20), &mut inside, None)?;
    device.synchronize()?;

    let total = options.n.saturating_mul(u64::from(options.repeats));
    let mut counts = Vec::new();
    let mut pageable = [0u64; 2];
    // The pinned run's count and its reset live in one page-locked buffer of two words; without
    // page-locked memory the pinned run is skipped and the report says why.
    // SAFETY: both words are written below before any is read.
    let mut pinned = match unsafe { device.context().alloc_pinned_with_flags::<u64>(2, 0) } {
        Ok(pinned) => Some(pinned),
        Err(error) => {
            timings.pinned_note = Some(format!("allocating page-locked host memory: {error}"));
            None
        }
    };
    for phase in [RunPhase::GpuHostArrays, RunPhase::GpuPinnedArrays] {
        let words = match (phase, pinned.as_mut()) {
            (RunPhase::GpuPinnedArrays, Some(pinned)) => pinned
                .as_mut_slice()
                .map_err(driver_error("waiting for page-locked memory"))?,
            (RunPhase::GpuPinnedArrays, None) => continue,
            _ => &mut pageable[..],
        };
        let progress = PhaseProgress::new(control, phase, total);
        let (measured, count) = time_pi_host(gpu, options, &timer, &mut inside, words, &progress)?;
        counts.push(count);
        if phase == RunPhase::GpuPinnedArrays {
            timings.gpu_pinned_arrays = Some(measured);
        } else {
            timings.gpu_host_arrays = Some(measured);
        }
    }
    let count = counts.first().copied().unwrap_or(0);
    if counts.len() > 1 {
        timings.pinned_equals_pageable = Some(counts.iter().all(|&c| c == count));
    }

    time_pi_resident(gpu, options, control, &timer, &mut inside)?.record(timings);
    Ok(count)
}

/// The kernel-only runs of pi, the count reset on the device outside each timing.
fn time_pi_resident(
    gpu: &TutorialGpu,
    options: &RunOptions,
    control: RunControl<'_>,
    timer: &GpuTimer,
    inside: &mut CudaSlice<u64>,
) -> Result<DeviceResidentTimings> {
    let stream = gpu.device().stream().clone();
    let total = options.n.saturating_mul(u64::from(options.repeats));
    // Long runs report progress chunk by chunk inside the launches; short ones once per run.
    let small = options.n <= GPU_PI_CHUNK;
    let progress = PhaseProgress::new(control, RunPhase::GpuDeviceResident, total);
    let launches = if small {
        launches_per_timing(timer, &mut || {
            launch_pi_chunks(gpu, options.seed, options.n, &mut *inside, None)
        })?
    } else {
        1
    };
    let resident = time_device_resident(
        gpu,
        timer,
        options.repeats,
        launches,
        &progress,
        &mut |part| match part {
            // The count is reset on the device, outside the timing.
            TimedPart::Upload => stream
                .memset_zeros(&mut *inside)
                .map_err(driver_error("resetting the GPU count")),
            TimedPart::Kernel => {
                launch_pi_chunks(gpu, options.seed, options.n, &mut *inside, Some(&progress))
            }
            TimedPart::Download => Ok(()),
        },
        &mut || {
            if small {
                progress.advance(options.n);
            }
        },
    )?;
    Ok(resident)
}
