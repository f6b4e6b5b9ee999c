//! What a tutorial run reports: `%timeit`-style statistics of every version, a summary of what
//! the kernel computed, and the GPU-vs-CPU agreement, as `heatlab kernel --json` writes them.

use rayon::prelude::*;

use super::{mc_pi, TutorialKernel};
use crate::measure::{MeanStd, TimingRecord};

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
    /// Host-to-device copies of the inputs.
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

/// The GPU with page-locked host arrays in chunks over two streams: the copies of one chunk
/// overlap the kernel and the copies of another, so only the whole run is timed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuOverlappedTimings {
    /// Upload + kernel + download of all chunks, between CUDA events.
    pub total: TimingStats,
    /// Host wall-clock time of each whole run.
    pub wall: TimingStats,
    /// Chunks the arrays were split into.
    pub chunks: u32,
    /// Streams the chunks alternate between.
    pub streams: u32,
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
    /// The GPU with host arrays (upload + kernel + download), in pageable memory as NumPy's.
    pub gpu_host_arrays: Option<GpuHostArraysTimings>,
    /// The same with page-locked (pinned) host arrays, the tutorial's next lesson.
    #[serde(default)]
    pub gpu_pinned_arrays: Option<GpuHostArraysTimings>,
    /// Page-locked host arrays in chunks over two streams (element-wise kernels only).
    #[serde(default)]
    pub gpu_pinned_overlapped: Option<GpuOverlappedTimings>,
    /// Whether the pinned runs gave the pageable run's output bit for bit (`None` when they
    /// did not run).
    #[serde(default)]
    pub pinned_equals_pageable: Option<bool>,
    /// Why the pinned versions did not run on a GPU that ran the others (no page-locked
    /// memory to be had).
    #[serde(default)]
    pub pinned_note: Option<String>,
    /// The GPU with the arrays already on the device (kernel only): seconds per launch.
    pub gpu_device_resident: Option<TimingStats>,
    /// Host wall-clock time of each device-resident run: the launches and the wait for them,
    /// per launch.
    pub gpu_device_resident_wall: Option<TimingStats>,
    /// Launches back to back in each device-resident timing (each run's time is the timing
    /// divided by this); 1 in runs recorded before it was measured.
    #[serde(default = "one_launch")]
    pub device_resident_launches_per_timing: u32,
}

fn one_launch() -> u32 {
    1
}

impl KernelTimings {
    /// No version timed yet; `cpu_threads` threads for the all-threads version.
    pub fn none(cpu_threads: usize) -> Self {
        Self {
            cpu_one_thread: None,
            cpu_all_threads: None,
            cpu_threads,
            gpu_host_arrays: None,
            gpu_pinned_arrays: None,
            gpu_pinned_overlapped: None,
            pinned_equals_pageable: None,
            pinned_note: None,
            gpu_device_resident: None,
            gpu_device_resident_wall: None,
            device_resident_launches_per_timing: 1,
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
    /// The GPU kernel that ran when there is a choice (Monte Carlo pi: the fastest of three
    /// kernels that count the same samples the same way, on this GPU).
    #[serde(default)]
    pub gpu_kernel: Option<String>,
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
        for (arrays, timed) in [
            ("host-arrays", &timings.gpu_host_arrays),
            ("pinned-arrays", &timings.gpu_pinned_arrays),
        ] {
            if let Some(timed) = timed {
                push("cuda", &format!("{arrays}-upload"), &timed.upload, 0.0);
                push("cuda", &format!("{arrays}-kernel"), &timed.kernel, bytes);
                push("cuda", &format!("{arrays}-download"), &timed.download, 0.0);
                push("cuda", &format!("{arrays}-total"), &timed.total, bytes);
                push("cuda", &format!("{arrays}-wall"), &timed.wall, bytes);
            }
        }
        if let Some(overlapped) = &timings.gpu_pinned_overlapped {
            push("cuda", "pinned-overlapped-total", &overlapped.total, bytes);
            push("cuda", "pinned-overlapped-wall", &overlapped.wall, bytes);
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
