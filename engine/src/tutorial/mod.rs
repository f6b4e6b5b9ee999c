//! The other kernels of the Numba tutorial (seed `001_...`): a hidden layer of a neural network,
//! a Gaussian PDF over 100 million points and Monte Carlo pi, each on the CPU (one thread and
//! all threads) and on the GPU (with host arrays: upload + kernel + download, and with
//! device-resident arrays: kernel only), timed `%timeit`-style as mean ± std over repeats.
//!
//! The library never imports egui: the GUI and `heatlab kernel` are both clients of the `run`
//! functions of [`hidden_layer`], [`gaussian`] and [`mc_pi`]. Long runs report progress through
//! a callback and stop between chunks when a cancel flag is set ([`RunControl`]).

pub mod basics;
mod control;
mod elementwise;
pub mod gaussian;
pub mod gpu;
pub mod hidden_layer;
pub mod mc_pi;
mod report;

use std::fmt;
use std::time::{Duration, Instant};

use rayon::prelude::*;

pub(crate) use control::PhaseProgress;
pub use control::{RunControl, RunPhase, RunProgress};
pub use gpu::{open_gpu, TutorialGpu};
pub use report::{
    ArrayStats, GpuHostArraysTimings, GpuOverlappedTimings, KernelRun, KernelSummary,
    KernelTimings, TimingStats,
};

use crate::error::{HeatlabError, Result};
pub use crate::measure::format_seconds;

/// The source of the tutorial kernels, embedded so that the binary needs no files beside it.
pub const TUTORIAL_SOURCE: &str = include_str!("../../../kernels/tutorial.cu");

/// Elements per chunk of CPU work: the cancel flag is checked and progress reported between
/// chunks, and the all-threads version hands chunks to rayon, so a chunk must be small enough
/// that a million elements still make work for every core.
const CPU_CHUNK: usize = 1 << 16;

/// How long short CPU runs are repeated untimed before the timed ones: the pool's threads wake
/// and the caches fill, and a window's redraw started by the same click (a software renderer
/// takes both cores of a small machine for some milliseconds) ends before the clock starts.
const CPU_WARM_UP: Duration = Duration::from_millis(50);

/// A first run at least this long is timed, not repeated as a warm-up: whatever shared the
/// cores with it is a small part of its time, and a second run of billions of samples would
/// cost the user seconds.
const CPU_RUN_TIMED_FIRST: Duration = Duration::from_millis(250);

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

impl CpuThreads {
    /// The phase of a run that times this CPU version.
    pub fn phase(self) -> RunPhase {
        match self {
            Self::One => RunPhase::CpuOneThread,
            Self::All => RunPhase::CpuAllThreads,
        }
    }
}

/// What every run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunOptions {
    /// Elements (hidden layer, Gaussian) or samples (Monte Carlo pi).
    pub n: u64,
    /// Seed of the inputs (NumPy's `default_rng`) or of the MWC64X generator (Monte Carlo pi).
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

/// Times `repeats` runs of `work` with the wall clock, after a warm-up of untimed runs lasting
/// [`CPU_WARM_UP`] unless the first run takes [`CPU_RUN_TIMED_FIRST`] or longer (then it is the
/// first timed run).
pub(crate) fn time_cpu_runs<T>(
    repeats: u32,
    mut work: impl FnMut() -> Result<T>,
) -> Result<(TimingStats, T)> {
    if repeats == 0 {
        return Err(HeatlabError::Internal(
            "timed zero runs (repeats is checked first)".into(),
        ));
    }
    let mut runs = Vec::with_capacity(repeats as usize);
    let warm_up_started = Instant::now();
    let mut value = work()?;
    let first_run = warm_up_started.elapsed();
    if first_run >= CPU_RUN_TIMED_FIRST {
        runs.push(first_run.as_secs_f64());
    } else {
        while warm_up_started.elapsed() < CPU_WARM_UP {
            value = work()?;
        }
    }
    while runs.len() < repeats as usize {
        let started = Instant::now();
        value = work()?;
        runs.push(started.elapsed().as_secs_f64());
    }
    Ok((TimingStats::from_runs(runs), value))
}

/// Fills `out` chunk by chunk with `fill(first_index, chunk)`, on one thread or all, checking
/// for cancellation and reporting progress between chunks.
pub(crate) fn fill_in_chunks(
    out: &mut [f32],
    threads: CpuThreads,
    control: RunControl<'_>,
    fill: impl Fn(usize, &mut [f32]) + Sync,
) -> Result<()> {
    let progress = PhaseProgress::new(control, threads.phase(), out.len() as u64);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_runs_are_warmed_up_untimed_and_the_timed_ones_counted() {
        let mut calls = 0_u32;
        let started = Instant::now();
        let (stats, last) = time_cpu_runs(3, || {
            calls += 1;
            Ok(calls)
        })
        .unwrap();
        assert!(
            started.elapsed() >= CPU_WARM_UP,
            "the warm-up lasts its time"
        );
        assert_eq!(stats.runs_s.len(), 3, "only the timed runs are recorded");
        assert!(calls > 3, "warm-up runs came first ({calls} calls)");
        assert_eq!(last, calls, "the result is the last run's");
    }

    #[test]
    fn a_long_first_run_is_timed_not_repeated() {
        let mut calls = 0_u32;
        let (stats, _) = time_cpu_runs(1, || {
            calls += 1;
            std::thread::sleep(CPU_RUN_TIMED_FIRST);
            Ok(())
        })
        .unwrap();
        assert_eq!(calls, 1);
        assert_eq!(stats.runs_s.len(), 1);
        assert!(stats.runs_s[0] >= CPU_RUN_TIMED_FIRST.as_secs_f64());
    }

    #[test]
    fn zero_repeats_and_a_failing_run_are_errors() {
        assert!(time_cpu_runs(0, || Ok(())).is_err());
        let failed = time_cpu_runs(2, || -> Result<()> {
            Err(HeatlabError::InvalidInput("no".into()))
        });
        assert!(matches!(failed, Err(HeatlabError::InvalidInput(_))));
    }
}
