//! Monte Carlo pi (seed `001_...`): the fraction of random points of the unit square that fall
//! inside the quarter circle, times 4, over billions of samples and no sample array.
//!
//! The generator is PCG32 (M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient
//! Statistically Good Algorithms for Random Number Generation", HMC-CS-2014-0905, 2014), the
//! XSH RR 64/32 generator of `pcg_basic.c`, which passes TestU01's BigCrush and PractRand in that
//! report; it is seeded as `pcg32_srandom_r(seed, 54)`. Sample `j` takes outputs `2j` (x) and
//! `2j + 1` (y) of that one sequence; any part of it is reached in O(log n) steps with the LCG's
//! jump-ahead (F. B. Brown, "Random number generation with arbitrary strides", 1994), so any
//! split of the work over threads (CPU or GPU) draws the same samples. A coordinate is the top
//! 24 bits of its word, `X / 2^24`, and a point is inside when `X^2 + Y^2 < 2^48`, which is
//! exactly `x^2 + y^2 < 1` for those float32 coordinates. The CPU and the GPU agree exactly.
//!
//! Until 2026-11-23 the samples came from Philox4x32-10 (Random123), kept here as
//! [`philox4x32_10`] with its known-answer test; counts of runs recorded before then differ from
//! today's for the same seed. PCG32 costs two 64-bit multiply-adds per sample where Philox cost
//! ten rounds of two 32x32 -> 64-bit products per two samples, which kept the GPU below 1e12
//! samples a second.

use std::time::Duration;

use rayon::prelude::*;

use super::gpu::{launches_per_timing, time_device_resident, time_host_arrays, TimedPart};
use super::{
    time_cpu_versions, CpuThreads, KernelRun, KernelSummary, KernelTimings, PhaseProgress,
    RunControl, RunOptions, RunPhase, TutorialGpu, TutorialKernel,
};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// Samples per chunk of CPU work.
const CPU_PI_CHUNK: u64 = 1 << 16;
/// Samples per GPU launch: long runs are split so that they can be cancelled and report
/// progress; a few hundredths of a second on an H100. The kernel needs at most 2^35.
const GPU_PI_CHUNK: u64 = 1 << 35;
/// Points kept for the scatter plot.
pub const SCATTER_POINTS: usize = 4000;

/// Philox4x32-10: ten rounds of the Random123 bijection of `counter` under `key` (the generator
/// of runs recorded before 2026-11-23).
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mulhilo = |a: u32, b: u32| {
        let product = u64::from(a) * u64::from(b);
        ((product >> 32) as u32, product as u32)
    };
    let mut ctr = counter;
    let mut key = key;
    for _ in 0..10 {
        let (hi0, lo0) = mulhilo(PHILOX_M0, ctr[0]);
        let (hi1, lo1) = mulhilo(PHILOX_M1, ctr[2]);
        ctr = [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0];
        key = [
            key[0].wrapping_add(PHILOX_W0),
            key[1].wrapping_add(PHILOX_W1),
        ];
    }
    ctr
}

/// The multiplier of PCG32's LCG (`PCG_MULTIPLIER` in `kernels/tutorial.cu`).
pub const PCG_MULTIPLIER: u64 = 6_364_136_223_846_793_005;
/// The sequence selector of the Monte Carlo samples (`PCG_STREAM` in `kernels/tutorial.cu`):
/// the one of `pcg32-demo.c`, so that seed 42 gives that demo's first numbers.
pub const PCG_STREAM: u64 = 54;

/// PCG32 (XSH RR 64/32), as `pcg_basic.c`: a 64-bit LCG whose state is permuted into each
/// 32-bit output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pcg32 {
    state: u64,
    increment: u64,
}

impl Pcg32 {
    /// `pcg32_srandom_r(initstate, initseq)`.
    pub fn new(initstate: u64, initseq: u64) -> Self {
        let mut generator = Self {
            state: 0,
            increment: (initseq << 1) | 1,
        };
        generator.next_u32();
        generator.state = generator.state.wrapping_add(initstate);
        generator.next_u32();
        generator
    }

    /// The next output (`pcg32_random_r`).
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old
            .wrapping_mul(PCG_MULTIPLIER)
            .wrapping_add(self.increment);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// Skips `delta` outputs in O(log delta) steps (`pcg32_advance_r`); the period is 2^64, so
    /// `delta` counts modulo 2^64.
    pub fn advance(&mut self, delta: u64) {
        let (mut multiplier, mut plus) = (PCG_MULTIPLIER, self.increment);
        let (mut acc_multiplier, mut acc_plus) = (1u64, 0u64);
        let mut delta = delta;
        while delta > 0 {
            if delta & 1 == 1 {
                acc_multiplier = acc_multiplier.wrapping_mul(multiplier);
                acc_plus = acc_plus.wrapping_mul(multiplier).wrapping_add(plus);
            }
            plus = multiplier.wrapping_add(1).wrapping_mul(plus);
            multiplier = multiplier.wrapping_mul(multiplier);
            delta >>= 1;
        }
        self.state = acc_multiplier
            .wrapping_mul(self.state)
            .wrapping_add(acc_plus);
    }
}

/// The generator of the samples of `seed`, positioned at sample `first` (output `2 first`).
fn samples_from(seed: u64, first: u64) -> Pcg32 {
    let mut generator = Pcg32::new(seed, PCG_STREAM);
    generator.advance(first.wrapping_mul(2));
    generator
}

fn inside_quarter_circle(word_x: u32, word_y: u32) -> bool {
    let x = u64::from(word_x >> 8);
    let y = u64::from(word_y >> 8);
    x * x + y * y < 1 << 48
}

/// Samples `[first_sample, first_sample + sample_count)` inside the quarter circle, counted on
/// the calling thread.
pub fn count_inside_range(seed: u64, first_sample: u64, sample_count: u64) -> u64 {
    let mut generator = samples_from(seed, first_sample);
    let mut count = 0;
    for _ in 0..sample_count {
        let word_x = generator.next_u32();
        let word_y = generator.next_u32();
        count += u64::from(inside_quarter_circle(word_x, word_y));
    }
    count
}

/// Samples among the first `n` inside the quarter circle, on one thread or all, in chunks
/// that check the cancel flag and report progress.
pub fn count_inside_cpu(
    n: u64,
    seed: u64,
    threads: CpuThreads,
    control: RunControl<'_>,
) -> Result<u64> {
    let progress = PhaseProgress::new(control, threads.phase(), n);
    let chunks = n.div_ceil(CPU_PI_CHUNK);
    let chunk = |index: u64| -> Result<u64> {
        progress.check()?;
        let first = index * CPU_PI_CHUNK;
        let count = CPU_PI_CHUNK.min(n - first);
        let inside = count_inside_range(seed, first, count);
        progress.advance(count);
        Ok(inside)
    };
    match threads {
        CpuThreads::One => (0..chunks).map(chunk).sum(),
        CpuThreads::All => (0..chunks).into_par_iter().map(chunk).sum(),
    }
}

/// One sample point for the scatter plot.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PiPoint {
    /// x in [0, 1).
    pub x: f32,
    /// y in [0, 1).
    pub y: f32,
    /// Whether the point counts as inside the quarter circle.
    pub inside: bool,
}

/// The first `count` sample points of `seed`, the very points the count starts with.
pub fn first_points(seed: u64, count: usize) -> Vec<PiPoint> {
    const SCALE: f32 = 1.0 / 16_777_216.0;
    let point = |word_x: u32, word_y: u32| PiPoint {
        x: (word_x >> 8) as f32 * SCALE,
        y: (word_y >> 8) as f32 * SCALE,
        inside: inside_quarter_circle(word_x, word_y),
    };
    let mut generator = samples_from(seed, 0);
    (0..count)
        .map(|_| {
            let word_x = generator.next_u32();
            let word_y = generator.next_u32();
            point(word_x, word_y)
        })
        .collect()
}

/// The estimate of pi from a count.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PiEstimate {
    /// Samples inside the quarter circle.
    pub inside: u64,
    /// Samples drawn.
    pub samples: u64,
    /// `4 * inside / samples`.
    pub estimate: f64,
    /// Its standard error, `4 * sqrt(p (1 - p) / n)` with `p = inside / samples`.
    pub standard_error: f64,
    /// `estimate - pi`.
    pub error: f64,
}

impl PiEstimate {
    /// The estimate from `inside` of `samples`.
    pub fn new(inside: u64, samples: u64) -> Self {
        let n = samples.max(1) as f64;
        let p = inside as f64 / n;
        let estimate = 4.0 * p;
        Self {
            inside,
            samples,
            estimate,
            standard_error: 4.0 * (p * (1.0 - p) / n).sqrt(),
            error: estimate - std::f64::consts::PI,
        }
    }
}

/// A Monte Carlo pi run: the estimate, the first points for a scatter plot, and the report.
#[derive(Debug, Clone)]
pub struct PiOutput {
    /// The estimate (the GPU's count when the GPU ran; the CPU's is the same).
    pub estimate: PiEstimate,
    /// The first [`SCATTER_POINTS`] samples (fewer when n is smaller).
    pub points: Vec<PiPoint>,
    /// Timings, agreement and summary.
    pub run: KernelRun,
}

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
/// the GPU (the twin of [`count_inside_range`]).
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

/// Counts on the GPU: `repeats` runs with the count's reset uploaded and the count downloaded
/// (the "host arrays" of pi are 8 bytes each way) from pageable memory, the same from
/// page-locked memory, then `repeats` kernel-only runs. Returns the count.
fn run_gpu(
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
    // Long runs report progress chunk by chunk inside the launches; short ones once per run.
    let small = options.n <= GPU_PI_CHUNK;
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
        words.fill(0);
        let (zero, count) = words.split_at_mut(1);
        let zero = &*zero;
        let progress = PhaseProgress::new(control, phase, total);
        let measured = time_host_arrays(
            &timer,
            options.repeats,
            &progress,
            &mut |part| match part {
                TimedPart::Upload => stream
                    .memcpy_htod(zero, &mut inside)
                    .map_err(driver_error("resetting the GPU count")),
                TimedPart::Kernel => {
                    launch_pi_chunks(gpu, options.seed, options.n, &mut inside, Some(&progress))
                }
                TimedPart::Download => stream
                    .memcpy_dtoh(&inside, &mut *count)
                    .map_err(driver_error("downloading the GPU count")),
            },
            &mut || {
                if small {
                    progress.advance(options.n);
                }
            },
        )?;
        device.synchronize()?;
        counts.push(count[0]);
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

    let progress = PhaseProgress::new(control, RunPhase::GpuDeviceResident, total);
    let launches = if small {
        launches_per_timing(&timer, &mut || {
            launch_pi_chunks(gpu, options.seed, options.n, &mut inside, None)
        })?
    } else {
        1
    };
    let resident = time_device_resident(
        gpu,
        &timer,
        options.repeats,
        launches,
        &progress,
        &mut |part| match part {
            // The count is reset on the device, outside the timing.
            TimedPart::Upload => stream
                .memset_zeros(&mut inside)
                .map_err(driver_error("resetting the GPU count")),
            TimedPart::Kernel => {
                launch_pi_chunks(gpu, options.seed, options.n, &mut inside, Some(&progress))
            }
            TimedPart::Download => Ok(()),
        },
        &mut || {
            if small {
                progress.advance(options.n);
            }
        },
    )?;
    resident.record(timings);
    Ok(count)
}

/// Runs the CPU versions that `options.cpu` asks for and, with a GPU, the GPU counts,
/// `options.repeats` times each. Nothing of size n is stored anywhere.
pub fn run(
    options: &RunOptions,
    gpu: Option<&TutorialGpu>,
    control: RunControl<'_>,
) -> Result<PiOutput> {
    options.validate()?;
    let cpu_runs = options.cpu.one_thread() || options.cpu.all_threads();
    if !cpu_runs && gpu.is_none() {
        return Err(HeatlabError::InvalidInput(
            "nothing to run: no GPU and the CPU runs are skipped".into(),
        ));
    }
    let mut timings = KernelTimings::none(rayon::current_num_threads());
    let cpu_count = time_cpu_versions(options, &mut timings, |threads| {
        count_inside_cpu(options.n, options.seed, threads, control)
    })?;

    let mut gpu_count = None;
    let mut gpu_name = None;
    if let Some(gpu) = gpu {
        gpu_count = Some(run_gpu(gpu, options, control, &mut timings)?);
        gpu_name = Some(gpu.name().to_string());
    }
    let difference = match (gpu_count, cpu_count) {
        (Some(gpu), Some(cpu)) => Some(gpu.abs_diff(cpu) as f64),
        _ => None,
    };
    let inside = gpu_count.or(cpu_count).unwrap_or(0);
    let estimate = PiEstimate::new(inside, options.n);
    let scatter = usize::try_from(options.n).map_or(SCATTER_POINTS, |n| n.min(SCATTER_POINTS));
    let run = KernelRun {
        kernel: TutorialKernel::MonteCarloPi,
        n: options.n,
        seed: options.seed,
        repeats: options.repeats,
        gpu: gpu_name,
        result: KernelSummary::MonteCarloPi(estimate),
        timings,
        max_abs_difference_gpu_cpu: difference,
        transfer_bytes: 16,
        gpu_kernel: gpu.map(|gpu| gpu.monte_carlo_pi_kernel().to_string()),
    };
    Ok(PiOutput {
        estimate,
        points: first_points(options.seed, scatter),
        run,
    })
}

/// Seconds per sample on one CPU thread, measured on 65536 samples: a quick figure for
/// warning before a one-thread run of billions of samples.
pub fn estimate_cpu_seconds_per_sample() -> Duration {
    let started = std::time::Instant::now();
    let count = count_inside_range(0, 0, 1 << 16);
    std::hint::black_box(count);
    started.elapsed() / (1 << 16)
}
