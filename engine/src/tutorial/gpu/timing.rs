//! The timed loops of the tutorial's GPU runs (part of `gpu.rs`, kept in its own file): the
//! pinned runs (whole and in chunks over two streams), runs with host arrays, and
//! device-resident runs of back-to-back launches.

use std::ops::Range;
use std::time::Instant;

use cudarc::driver::PinnedHostSlice;

use super::super::{
    GpuHostArraysTimings, GpuOverlappedTimings, PhaseProgress, RunPhase, TimingStats,
};
use super::{
    DeviceArrays, DeviceResidentTimings, ElementwiseJob, PinnedTimings, TutorialGpu,
    DEVICE_RESIDENT_BATCH_SECONDS, MAX_LAUNCHES_PER_TIMING, OVERLAP_CHUNKS,
};
use crate::compute::cuda::{driver_error, GpuTimer};
use crate::error::{HeatlabError, Result};

/// The pinned runs of [`run_elementwise`](super::run_elementwise): the job's inputs are copied
/// into the page-locked arrays `pool` (from the GPU's pool) first (untimed: in a program that
/// uses pinned memory the arrays live there from the start), then `repeats` timed runs of
/// upload / kernel / download through them, then `repeats` runs in chunks over two streams.
/// Returns both timings and whether both gave `pageable_output` bit for bit.
pub(super) fn time_pinned(
    job: &ElementwiseJob<'_>,
    pool: &mut [PinnedHostSlice<f32>],
    pageable_output: &[f32],
    arrays: &mut DeviceArrays,
) -> Result<PinnedTimings> {
    let (gpu, repeats, launch) = (job.gpu, job.repeats, job.launch);
    let n = pageable_output.len();
    let device = gpu.device();
    let stream = device.stream().clone();
    let timer = device.timer()?;
    let (pinned_inputs, pinned_output) = pinned_views(pool, job.inputs, n)?;
    let whole = 0..n;

    // Warm-up through the pinned arrays, then the timed runs.
    pinned_output.fill(f32::NAN);
    arrays.upload(&stream, &pinned_inputs, whole.clone())?;
    arrays.launch(launch, &stream, whole.clone())?;
    arrays.download(&stream, pinned_output, whole.clone())?;
    device.synchronize()?;
    let progress = PhaseProgress::new(
        job.control,
        RunPhase::GpuPinnedArrays,
        2 * u64::from(repeats),
    );
    let pinned = time_host_arrays(
        &timer,
        repeats,
        &progress,
        &mut |part| match part {
            TimedPart::Upload => arrays.upload(&stream, &pinned_inputs, whole.clone()),
            TimedPart::Kernel => arrays.launch(launch, &stream, whole.clone()),
            TimedPart::Download => arrays.download(&stream, pinned_output, whole.clone()),
        },
        &mut || progress.advance(1),
    )?;
    device.synchronize()?;
    let mut equal = same_bits(pinned_output, pageable_output);

    // In chunks: chunk c goes to stream c % 2, so that one stream's copies overlap the other's.
    let chunks = overlap_chunks(n);
    let streams = [stream.clone(), gpu.second_stream.clone()];
    let mut run_in_chunks = |output: &mut [f32]| -> Result<()> {
        // The second stream starts after everything queued on the first (the timer's start
        // event and the buffers' allocation), and the first ends after the second.
        let started = stream
            .record_event(None)
            .map_err(driver_error("recording an event"))?;
        streams[1]
            .wait(&started)
            .map_err(driver_error("ordering the streams"))?;
        for (index, range) in chunks.iter().enumerate() {
            let on = &streams[index % 2];
            arrays.upload(on, &pinned_inputs, range.clone())?;
            arrays.launch(launch, on, range.clone())?;
            arrays.download(on, output, range.clone())?;
        }
        stream
            .join(&streams[1])
            .map_err(driver_error("ordering the streams"))
    };
    pinned_output.fill(f32::NAN);
    run_in_chunks(pinned_output)?;
    device.synchronize()?;
    equal &= same_bits(pinned_output, pageable_output);
    let (totals, walls) =
        time_repeats(&timer, repeats, &progress, || run_in_chunks(pinned_output))?;
    device.synchronize()?;
    equal &= same_bits(pinned_output, pageable_output);
    let overlapped = GpuOverlappedTimings {
        total: TimingStats::from_runs(totals),
        wall: TimingStats::from_runs(walls),
        chunks: chunks.len() as u32,
        streams: streams.len() as u32,
    };
    Ok(PinnedTimings {
        whole: pinned,
        overlapped,
        equal_to_pageable: equal,
    })
}

/// Copies `inputs` into the first page-locked arrays of `pool` and returns views of their
/// first `n` values, with the next array (the output) as a mutable view.
fn pinned_views<'a>(
    pool: &'a mut [PinnedHostSlice<f32>],
    inputs: &[&[f32]],
    n: usize,
) -> Result<(Vec<&'a [f32]>, &'a mut [f32])> {
    let (input_buffers, output_buffers) = pool.split_at_mut(inputs.len());
    let output_buffer = output_buffers
        .first_mut()
        .ok_or_else(|| HeatlabError::Internal("no page-locked output array".into()))?;
    for (buffer, input) in input_buffers.iter_mut().zip(inputs) {
        buffer
            .as_mut_slice()
            .map_err(driver_error("waiting for a page-locked array"))?[..n]
            .copy_from_slice(input);
    }
    let input_buffers: &'a [PinnedHostSlice<f32>] = input_buffers;
    let pinned_inputs = input_buffers
        .iter()
        .map(|buffer| {
            buffer
                .as_slice()
                .map(|all| &all[..n])
                .map_err(driver_error("waiting for a page-locked array"))
        })
        .collect::<Result<Vec<&[f32]>>>()?;
    let pinned_output = &mut output_buffer
        .as_mut_slice()
        .map_err(driver_error("waiting for a page-locked array"))?[..n];
    Ok((pinned_inputs, pinned_output))
}

/// The chunks of `n` elements the overlapped runs copy and launch: [`OVERLAP_CHUNKS`] of them,
/// starting at multiples of 4096 elements, which keeps every float4 aligned.
fn overlap_chunks(n: usize) -> Vec<Range<usize>> {
    let chunk = (n as u64)
        .div_ceil(OVERLAP_CHUNKS)
        .next_multiple_of(4096)
        .max(4096) as usize;
    (0..n)
        .step_by(chunk)
        .map(|start| start..(start + chunk).min(n))
        .collect()
}

/// `repeats` timed runs of `run`: the GPU timer's and the host's wall-clock seconds of each.
fn time_repeats(
    timer: &GpuTimer,
    repeats: u32,
    progress: &PhaseProgress<'_>,
    mut run: impl FnMut() -> Result<()>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut totals = Vec::new();
    let mut walls = Vec::new();
    for _ in 0..repeats {
        progress.check()?;
        let wall_started = Instant::now();
        timer.start()?;
        run()?;
        totals.push(timer.stop()?.as_secs_f64());
        walls.push(wall_started.elapsed().as_secs_f64());
        progress.advance(1);
    }
    Ok((totals, walls))
}

/// Whether two arrays hold the same bits (NaN included).
pub(crate) fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// How many back-to-back launches make a device-resident timing last about
/// [`DEVICE_RESIDENT_BATCH_SECONDS`]: one launch is timed (after the warm-up) and the rest
/// follows from it, between 1 and [`MAX_LAUNCHES_PER_TIMING`].
pub(crate) fn launches_per_timing(
    timer: &GpuTimer,
    launch: &mut dyn FnMut() -> Result<()>,
) -> Result<u32> {
    timer.start()?;
    launch()?;
    let one = timer.stop()?.as_secs_f64();
    let launches = (DEVICE_RESIDENT_BATCH_SECONDS / one.max(1e-9)).ceil();
    Ok((launches as u32).clamp(1, MAX_LAUNCHES_PER_TIMING))
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

/// Host time to queue one launch, generously: a batch of launches is queued behind a hold of
/// this much per launch (at most [`MAX_HOLD_SECONDS`]).
const HOLD_SECONDS_PER_LAUNCH: f64 = 20e-6;
/// The longest hold before a batch.
const MAX_HOLD_SECONDS: f64 = 0.05;

/// Times `repeats` kernel-only runs with the data left on the device: `run` does
/// [`TimedPart::Upload`] untimed first (a reset of the output, or nothing), then
/// [`TimedPart::Kernel`] `launches` times back to back between the CUDA events of `timer`; each
/// timing divided by `launches` is one run's time. When `launches` > 1 the stream is first held
/// by `gpu` while the host queues the batch, so that the batch runs at the GPU's pace: a timing
/// holds the kernels and the gaps between them, not the host's submission of each launch
/// (which a fast kernel would otherwise wait for). The wall clock is timed apart, over the same
/// number of launches without a hold (what a caller that launches and waits sees), per launch.
/// `after` runs untimed after each timing.
pub(crate) fn time_device_resident(
    gpu: &TutorialGpu,
    timer: &GpuTimer,
    repeats: u32,
    launches: u32,
    progress: &PhaseProgress<'_>,
    run: &mut dyn FnMut(TimedPart) -> Result<()>,
    after: &mut dyn FnMut(),
) -> Result<DeviceResidentTimings> {
    let launches = launches.max(1);
    let stream = gpu.device().stream().clone();
    let (mut events, mut walls) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        progress.check()?;
        run(TimedPart::Upload)?;
        if launches == 1 {
            // One long launch: the host's submission is lost in it; one run gives both.
            let wall_started = Instant::now();
            timer.start()?;
            run(TimedPart::Kernel)?;
            events.push(timer.stop()?.as_secs_f64());
            walls.push(wall_started.elapsed().as_secs_f64());
            after();
            continue;
        }
        let hold = (f64::from(launches) * HOLD_SECONDS_PER_LAUNCH).min(MAX_HOLD_SECONDS);
        gpu.hold(&stream, hold)?;
        timer.start()?;
        for _ in 0..launches {
            run(TimedPart::Kernel)?;
        }
        events.push(timer.stop()?.as_secs_f64() / f64::from(launches));
        run(TimedPart::Upload)?;
        gpu.device().synchronize()?;
        let wall_started = Instant::now();
        for _ in 0..launches {
            run(TimedPart::Kernel)?;
        }
        gpu.device().synchronize()?;
        walls.push(wall_started.elapsed().as_secs_f64() / f64::from(launches));
        after();
    }
    Ok(DeviceResidentTimings {
        events: TimingStats::from_runs(events),
        wall: TimingStats::from_runs(walls),
        launches_per_timing: launches,
    })
}
