//! The other kernels of the Numba tutorial (seed `001_...`): a hidden layer of a neural network,
//! a Gaussian PDF over 100 million points and Monte Carlo pi, each on the CPU (one thread and
//! all threads) and on the GPU (with host arrays: upload + kernel + download, and with
//! device-resident arrays: kernel only), timed `%timeit`-style as mean ± std over repeats.
//!
//! The library never imports egui: the GUI and `heatlab kernel` are both clients of the `run`
//! functions of [`hidden_layer`], [`gaussian`] and [`mc_pi`]. Long runs report progress through
//! a callback and stop between chunks when a cancel flag is set ([`RunControl`]).

mod elementwise;
pub mod gaussian;
pub mod gpu;
pub mod hidden_layer;
pub mod mc_pi;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

pub use gpu::{open_gpu, TutorialGpu};

use crate::error::{HeatlabError, Result};
pub use crate::measure::format_seconds;
use crate::measure::{MeanStd, TimingRecord};

/// The source of the tutorial kernels, embedded so that the binary needs no files beside it.
pub const TUTORIAL_SOURCE: &str = include_str!("../../kernels/tutorial.cu");

/// Elements per chunk of CPU work: the cancel flag is checked and progress reported between
/// chunks, and the all-threads version hands chunks to rayon, so a chunk must be small enough
/// that a million elements still make work for every core.
const CPU_CHUNK: usize = 1 << 16;

/// One of the tutorial kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TutorialKernel {
    /// `tanh(greyscale / 255 * weight)` over a layer of neurons.
    #[serde(rename = "hidden-layer")]
    HiddenLayer,
    /// The Gaussian probability density over uniform points in [-3, 3).
    #[serde(rename = "gaussian")]
    Gaussian,
    /// The fraction of random points of the unit square inside the quarter circle, times 4.
    #[serde(rename = "mc-pi")]
    MonteCarloPi,
}

impl TutorialKernel {
    /// Every kernel, in the order the app lists them.
    pub const ALL: [Self; 3] = [Self::HiddenLayer, Self::Gaussian, Self::MonteCarloPi];

    /// A title for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::HiddenLayer => "Hidden layer",
            Self::Gaussian => "Gaussian PDF",
            Self::MonteCarloPi => "Monte Carlo pi",
        }
    }
}

impl fmt::Display for TutorialKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::HiddenLayer => "hidden-layer",
            Self::Gaussian => "gaussian",
            Self::MonteCarloPi => "mc-pi",
        })
    }
}

impl std::str::FromStr for TutorialKernel {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "kernel")
    }
}

/// Which CPU versions a run times.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum CpuRuns {
    /// One thread and all threads.
    #[default]
    Both,
    /// All threads only (one thread can take minutes at billions of samples).
    AllThreads,
    /// One thread only.
    OneThread,
    /// No CPU run: then there is no GPU-vs-CPU comparison either.
    Skip,
}

impl CpuRuns {
    /// Every choice, in the order a selector lists them.
    pub const ALL: [Self; 4] = [Self::Both, Self::AllThreads, Self::OneThread, Self::Skip];

    /// Whether the one-thread version runs.
    pub fn one_thread(self) -> bool {
        matches!(self, Self::Both | Self::OneThread)
    }

    /// Whether the all-threads version runs.
    pub fn all_threads(self) -> bool {
        matches!(self, Self::Both | Self::AllThreads)
    }
}

impl fmt::Display for CpuRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Both => "both",
            Self::AllThreads => "all-threads",
            Self::OneThread => "one-thread",
            Self::Skip => "skip",
        })
    }
}

impl std::str::FromStr for CpuRuns {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "CPU choice")
    }
}

/// How many CPU threads a CPU version uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuThreads {
    /// The calling thread only.
    One,
    /// Rayon's global pool (all cores).
    All,
}

/// What every run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunOptions {
    /// Elements (hidden layer, Gaussian) or samples (Monte Carlo pi).
    pub n: u64,
    /// Seed of the inputs (NumPy's `default_rng`) or of the Philox generator.
    pub seed: u64,
    /// Timed repetitions of each version (`%timeit`'s runs).
    pub repeats: u32,
    /// Which CPU versions to time.
    pub cpu: CpuRuns,
}

impl RunOptions {
    /// Checks that n and repeats are at least 1.
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 {
            return Err(HeatlabError::InvalidInput("n must be at least 1".into()));
        }
        if self.repeats == 0 {
            return Err(HeatlabError::InvalidInput(
                "repeat must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// `n` as a `usize` for array kernels, or an error when it cannot be addressed here.
    pub fn n_elements(&self) -> Result<usize> {
        usize::try_from(self.n).map_err(|_| {
            HeatlabError::InvalidInput(format!("n = {} is too large for this machine", self.n))
        })
    }
}

/// The stage a run is in, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum RunPhase {
    /// Drawing the inputs on the CPU.
    GeneratingInputs,
    /// The one-thread CPU version.
    CpuOneThread,
    /// The all-threads CPU version.
    CpuAllThreads,
    /// The GPU with host arrays: upload, kernel, download.
    GpuHostArrays,
    /// The GPU with device-resident arrays: kernel only.
    GpuDeviceResident,
}

impl RunPhase {
    /// Every phase, in the order a run goes through them.
    pub const ALL: [Self; 5] = [
        Self::GeneratingInputs,
        Self::CpuOneThread,
        Self::CpuAllThreads,
        Self::GpuHostArrays,
        Self::GpuDeviceResident,
    ];
}

impl fmt::Display for RunPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::GeneratingInputs => "generating inputs",
            Self::CpuOneThread => "CPU, one thread",
            Self::CpuAllThreads => "CPU, all threads",
            Self::GpuHostArrays => "GPU, host arrays",
            Self::GpuDeviceResident => "GPU, device-resident",
        })
    }
}

/// A progress report: `done` of `total` units (elements or samples, over all repeats) of `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunProgress {
    /// The stage.
    pub phase: RunPhase,
    /// Units done so far in this stage.
    pub done: u64,
    /// Units this stage will do.
    pub total: u64,
}

impl RunProgress {
    /// `done / total` in [0, 1].
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            (self.done as f64 / self.total as f64).min(1.0)
        }
    }
}

static NEVER_CANCELLED: AtomicBool = AtomicBool::new(false);

fn ignore_progress(_: RunProgress) {}

/// How a caller follows and stops a run: a cancel flag checked between chunks, and a progress
/// callback (called from worker threads too, hence `Sync`).
#[derive(Clone, Copy)]
pub struct RunControl<'a> {
    /// When set, the run stops at the next chunk with [`HeatlabError::Cancelled`].
    pub cancel: &'a AtomicBool,
    /// Called after each chunk.
    pub progress: &'a (dyn Fn(RunProgress) + Sync),
}

impl RunControl<'static> {
    /// A control that never cancels and ignores progress.
    pub fn unattended() -> Self {
        Self {
            cancel: &NEVER_CANCELLED,
            progress: &ignore_progress,
        }
    }
}

impl RunControl<'_> {
    /// `Err(Cancelled)` once the cancel flag is set.
    pub fn check(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(HeatlabError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Counts the units of one phase and reports them; shared by the threads of a parallel run.
pub(crate) struct PhaseProgress<'a> {
    control: RunControl<'a>,
    phase: RunPhase,
    done: AtomicU64,
    total: u64,
}

impl<'a> PhaseProgress<'a> {
    pub(crate) fn new(control: RunControl<'a>, phase: RunPhase, total: u64) -> Self {
        (control.progress)(RunProgress {
            phase,
            done: 0,
            total,
        });
        Self {
            control,
            phase,
            done: AtomicU64::new(0),
            total,
        }
    }

    pub(crate) fn check(&self) -> Result<()> {
        self.control.check()
    }

    pub(crate) fn advance(&self, units: u64) {
        let done = self.done.fetch_add(units, Ordering::Relaxed) + units;
        (self.control.progress)(RunProgress {
            phase: self.phase,
            done,
            total: self.total,
        });
    }
}

/// `%timeit`-style statistics of repeated timings.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimingStats {
    /// Mean seconds per run.
    pub mean_s: f64,
    /// Standard deviation of the runs in seconds (population, as `%timeit` reports it).
    pub std_s: f64,
    /// Every run's seconds, in order.
    pub runs_s: Vec<f64>,
}

impl TimingStats {
    /// Statistics of the given runs (all zero for none), by [`MeanStd`].
    pub fn from_runs(runs_s: Vec<f64>) -> Self {
        let stats = MeanStd::of(&runs_s);
        Self {
            mean_s: stats.mean,
            std_s: stats.std,
            runs_s,
        }
    }

    /// `1.23 ms ± 4.5 µs`, as `%timeit` prints it.
    pub fn display(&self) -> String {
        MeanStd {
            mean: self.mean_s,
            std: self.std_s,
            runs: self.runs_s.len(),
        }
        .seconds_text()
    }
}

/// The GPU with host arrays: each run uploads the inputs, runs the kernel and downloads the
/// output, each part timed with CUDA events (device memory is allocated once, before timing).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuHostArraysTimings {
    /// Host-to-device copies of the inputs (pageable host memory, as NumPy arrays are).
    pub upload: TimingStats,
    /// The kernel.
    pub kernel: TimingStats,
    /// Device-to-host copy of the output.
    pub download: TimingStats,
    /// Upload + kernel + download of each run.
    pub total: TimingStats,
    /// Host wall-clock time of each whole run (what a Python caller's `%timeit` would see:
    /// it adds the launch overhead and the waits that the events leave out). Empty in runs
    /// recorded before it was measured.
    #[serde(default)]
    pub wall: TimingStats,
}

/// Every timing of a run; `None` for a version that did not run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelTimings {
    /// The CPU on one thread.
    pub cpu_one_thread: Option<TimingStats>,
    /// The CPU on all threads (rayon).
    pub cpu_all_threads: Option<TimingStats>,
    /// Threads of the all-threads version.
    pub cpu_threads: usize,
    /// The GPU with host arrays (upload + kernel + download).
    pub gpu_host_arrays: Option<GpuHostArraysTimings>,
    /// The GPU with the arrays already on the device (kernel only).
    pub gpu_device_resident: Option<TimingStats>,
    /// Host wall-clock time of each device-resident run: the launch and the wait for it.
    pub gpu_device_resident_wall: Option<TimingStats>,
}

impl KernelTimings {
    /// No version timed yet; `cpu_threads` threads for the all-threads version.
    pub fn none(cpu_threads: usize) -> Self {
        Self {
            cpu_one_thread: None,
            cpu_all_threads: None,
            cpu_threads,
            gpu_host_arrays: None,
            gpu_device_resident: None,
            gpu_device_resident_wall: None,
        }
    }
}

/// Minimum, maximum and mean of an output array.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ArrayStats {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Mean value (summed in f64).
    pub mean: f64,
}

impl ArrayStats {
    /// The statistics of `values` (zeros for an empty slice).
    pub fn of(values: &[f32]) -> Self {
        if values.is_empty() {
            return Self {
                min: 0.0,
                max: 0.0,
                mean: 0.0,
            };
        }
        let (min, max, sum) = values
            .par_iter()
            .fold(
                || (f64::INFINITY, f64::NEG_INFINITY, 0.0f64),
                |(min, max, sum), &v| {
                    let v = f64::from(v);
                    (min.min(v), max.max(v), sum + v)
                },
            )
            .reduce(
                || (f64::INFINITY, f64::NEG_INFINITY, 0.0f64),
                |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 + b.2),
            );
        Self {
            min,
            max,
            mean: sum / values.len() as f64,
        }
    }
}

/// What a kernel computed, summarised.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum KernelSummary {
    /// The activations of the hidden layer.
    HiddenLayer {
        /// Statistics of the activations.
        activations: ArrayStats,
    },
    /// The PDF values.
    Gaussian {
        /// Mean of the Gaussian.
        mean: f32,
        /// Standard deviation of the Gaussian.
        sigma: f32,
        /// Statistics of the PDF values.
        pdf: ArrayStats,
        /// Largest |float32 result - the formula in float64| over all points.
        max_abs_error_vs_f64: f64,
    },
    /// The Monte Carlo estimate.
    MonteCarloPi(mc_pi::PiEstimate),
}

/// The outcome of one run: what was computed, every timing, and the GPU-vs-CPU agreement.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelRun {
    /// Which kernel.
    pub kernel: TutorialKernel,
    /// Elements or samples.
    pub n: u64,
    /// The seed.
    pub seed: u64,
    /// Timed repetitions of each version.
    pub repeats: u32,
    /// The GPU's name when the GPU ran.
    pub gpu: Option<String>,
    /// The result.
    pub result: KernelSummary,
    /// Every timing.
    pub timings: KernelTimings,
    /// Largest |GPU - CPU| over the outputs (the difference of the counts for pi); `None`
    /// unless both ran.
    pub max_abs_difference_gpu_cpu: Option<f64>,
    /// Bytes of inputs copied to the GPU and of outputs copied back in one host-arrays run.
    pub transfer_bytes: u64,
}

impl KernelRun {
    /// One timing-log row per timed run, in the format of the rest of the app
    /// (`operation` is the kernel, `method` the version, `step_start` the run's index).
    pub fn timing_records(&self) -> Vec<TimingRecord> {
        let mut records = Vec::new();
        let operation = self.kernel.to_string();
        let size = self.n.to_string();
        let mut push = |backend: &str, method: &str, stats: &TimingStats, bytes: f64| {
            for (index, &seconds) in stats.runs_s.iter().enumerate() {
                records.push(TimingRecord::chunk(
                    &operation,
                    index as u64,
                    1,
                    (backend, method),
                    &size,
                    bytes,
                    seconds,
                ));
            }
        };
        let bytes = self.transfer_bytes as f64;
        let timings = &self.timings;
        if let Some(stats) = &timings.cpu_one_thread {
            push("cpu", "one-thread", stats, bytes);
        }
        if let Some(stats) = &timings.cpu_all_threads {
            push("cpu", "all-threads", stats, bytes);
        }
        if let Some(host) = &timings.gpu_host_arrays {
            push("cuda", "host-arrays-upload", &host.upload, 0.0);
            push("cuda", "host-arrays-kernel", &host.kernel, bytes);
            push("cuda", "host-arrays-download", &host.download, 0.0);
            push("cuda", "host-arrays-total", &host.total, bytes);
            push("cuda", "host-arrays-wall", &host.wall, bytes);
        }
        if let Some(stats) = &timings.gpu_device_resident {
            push("cuda", "device-resident-kernel", stats, bytes);
        }
        if let Some(stats) = &timings.gpu_device_resident_wall {
            push("cuda", "device-resident-wall", stats, bytes);
        }
        records
    }
}

/// Times the CPU versions `options.cpu` asks for (one thread, all threads), recording each in
/// `timings`; returns the last run's result.
pub(crate) fn time_cpu_versions<T>(
    options: &RunOptions,
    timings: &mut KernelTimings,
    mut work: impl FnMut(CpuThreads) -> Result<T>,
) -> Result<Option<T>> {
    let mut last = None;
    for (wanted, threads) in [
        (options.cpu.one_thread(), CpuThreads::One),
        (options.cpu.all_threads(), CpuThreads::All),
    ] {
        if !wanted {
            continue;
        }
        let (stats, result) = time_cpu_runs(options.repeats, || work(threads))?;
        last = Some(result);
        match threads {
            CpuThreads::One => timings.cpu_one_thread = Some(stats),
            CpuThreads::All => timings.cpu_all_threads = Some(stats),
        }
    }
    Ok(last)
}

/// Times `repeats` runs of `work` with the wall clock.
pub(crate) fn time_cpu_runs<T>(
    repeats: u32,
    mut work: impl FnMut() -> Result<T>,
) -> Result<(TimingStats, T)> {
    let mut runs = Vec::with_capacity(repeats as usize);
    let mut last = None;
    for _ in 0..repeats {
        let started = Instant::now();
        let value = work()?;
        runs.push(started.elapsed().as_secs_f64());
        last = Some(value);
    }
    let value = last.ok_or_else(|| {
        HeatlabError::Internal("timed zero runs (repeats is checked first)".into())
    })?;
    Ok((TimingStats::from_runs(runs), value))
}

/// Fills `out` chunk by chunk with `fill(first_index, chunk)`, on one thread or all, checking
/// for cancellation and reporting progress between chunks.
pub(crate) fn fill_in_chunks(
    out: &mut [f32],
    threads: CpuThreads,
    progress: &PhaseProgress<'_>,
    fill: impl Fn(usize, &mut [f32]) + Sync,
) -> Result<()> {
    let work = |(index, chunk): (usize, &mut [f32])| -> Result<()> {
        progress.check()?;
        fill(index * CPU_CHUNK, chunk);
        progress.advance(chunk.len() as u64);
        Ok(())
    };
    match threads {
        CpuThreads::One => out.chunks_mut(CPU_CHUNK).enumerate().try_for_each(work),
        CpuThreads::All => out.par_chunks_mut(CPU_CHUNK).enumerate().try_for_each(work),
    }
}

/// Largest |a - b| over two equally long arrays (NaN counts as infinitely different).
pub fn max_abs_difference(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.par_iter()
        .zip(b.par_iter())
        .map(|(&x, &y)| {
            let diff = (f64::from(x) - f64::from(y)).abs();
            if diff.is_nan() {
                f64::INFINITY
            } else {
                diff
            }
        })
        .reduce(|| 0.0, f64::max)
}

/// Counts of `values` in `bins` equal bins over `[low, high]` (values outside are left out;
/// `high` itself falls in the last bin). For the GUI's histogram of the activations.
pub fn histogram(values: &[f32], bins: usize, low: f32, high: f32) -> Vec<u64> {
    let bins = bins.max(1);
    let width = (high - low) / bins as f32;
    let place = |v: f32| -> Option<usize> {
        if !(v >= low && v <= high) || width <= 0.0 {
            return None;
        }
        Some((((v - low) / width) as usize).min(bins - 1))
    };
    values
        .par_chunks(CPU_CHUNK)
        .map(|chunk| {
            let mut counts = vec![0u64; bins];
            for bin in chunk.iter().filter_map(|&v| place(v)) {
                counts[bin] += 1;
            }
            counts
        })
        .reduce(
            || vec![0u64; bins],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// Sizes for a log-log sweep: `per_decade` sizes per power of ten from `min` to `max`
/// (both included), rounded to whole numbers and without repeats.
pub fn sweep_sizes(min: u64, max: u64, per_decade: u32) -> Vec<u64> {
    let min = min.max(1);
    let max = max.max(min);
    let per_decade = per_decade.max(1);
    let (low, high) = ((min as f64).log10(), (max as f64).log10());
    let steps = ((high - low) * f64::from(per_decade)).ceil() as u64;
    let mut sizes: Vec<u64> = (0..=steps)
        .map(|i| {
            let exponent = low + (high - low) * i as f64 / steps.max(1) as f64;
            (10f64.powf(exponent).round() as u64).clamp(min, max)
        })
        .collect();
    sizes.push(max);
    sizes.dedup();
    sizes
}

/// Host bytes for `count` float32 arrays of `n` elements, or an error when that overflows.
pub(crate) fn array_bytes(count: usize, n: usize) -> Result<usize> {
    n.checked_mul(4 * count)
        .ok_or_else(|| HeatlabError::InvalidInput(format!("n = {n} is too large for this machine")))
}
