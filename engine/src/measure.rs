//! Measurements shared by every layer: one timed chunk of work ([`TimingRecord`]), the one
//! mean ± standard deviation ([`MeanStd`]), the one `%timeit`-style time formatter
//! ([`format_seconds`]) and the time stamp of a measurement ([`utc_now`]).
//!
//! It sits at the bottom with `grid`: the simulation records timings, the tutorial kernels and the
//! benchmarks summarise them, and the exports, the CLI and the GUI write and show them.

use std::fmt;

use crate::grid::GridSize;

/// One timed chunk of work.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimingRecord {
    /// What was timed: "diffusion", "hidden-layer", ...
    pub operation: String,
    /// Step (or run) count before the chunk.
    pub step_start: u64,
    /// Steps (or repetitions) in the chunk.
    pub steps: u64,
    /// "cpu" or "cuda".
    pub backend: String,
    /// The kernel or loop that did the work.
    pub method: String,
    /// Rows x columns of the field, or the element count.
    pub size: String,
    /// Seconds the chunk took (GPU events on CUDA).
    pub seconds: f64,
    /// Microseconds per step.
    pub us_per_step: f64,
    /// Steps per second.
    pub steps_per_s: f64,
    /// Effective bandwidth: one read and one write of the field per step, in GB/s (1e9 bytes).
    pub effective_gb_s: f64,
}

impl TimingRecord {
    /// A diffusion chunk of `steps` steps over a field of `size` that took `seconds`.
    pub fn diffusion(
        step_start: u64,
        steps: u64,
        backend: &str,
        method: &str,
        size: GridSize,
        seconds: f64,
    ) -> Self {
        Self::chunk(
            "diffusion",
            step_start,
            steps,
            (backend, method),
            &size.to_string(),
            2.0 * size.bytes() as f64,
            seconds,
        )
    }

    /// A chunk of `steps` repetitions of `operation` that moved `bytes_per_step` each and took
    /// `seconds`; `device` is the backend and the method.
    pub fn chunk(
        operation: &str,
        step_start: u64,
        steps: u64,
        device: (&str, &str),
        size: &str,
        bytes_per_step: f64,
        seconds: f64,
    ) -> Self {
        let per_step = if steps > 0 {
            seconds / steps as f64
        } else {
            0.0
        };
        Self {
            operation: operation.into(),
            step_start,
            steps,
            backend: device.0.into(),
            method: device.1.into(),
            size: size.into(),
            seconds,
            us_per_step: per_step * 1e6,
            steps_per_s: if per_step > 0.0 { 1.0 / per_step } else { 0.0 },
            effective_gb_s: if per_step > 0.0 {
                bytes_per_step / per_step / 1e9
            } else {
                0.0
            },
        }
    }
}

/// Mean and standard deviation of repeated measurements.
///
/// The standard deviation divides by the number of samples `n` (the population formula), as
/// IPython's `%timeit` does; this is the only mean/std in heatlab, so the GUI, the CLI, the
/// benchmarks and the tutorial tables all agree.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeanStd {
    /// Mean.
    pub mean: f64,
    /// Population standard deviation (divided by `n`; 0 for one sample).
    pub std: f64,
    /// Number of samples.
    pub runs: usize,
}

impl MeanStd {
    /// Statistics of `samples` (all zero when empty).
    pub fn of(samples: &[f64]) -> Self {
        let runs = samples.len();
        if runs == 0 {
            return Self {
                mean: 0.0,
                std: 0.0,
                runs,
            };
        }
        let n = runs as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let variance = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
        Self {
            mean,
            std: variance.sqrt(),
            runs,
        }
    }

    /// `1.230 ms ± 4.500 µs`: mean and standard deviation of seconds, as `%timeit` prints them.
    pub fn seconds_text(&self) -> String {
        format!(
            "{} ± {}",
            format_seconds(self.mean),
            format_seconds(self.std)
        )
    }
}

impl fmt::Display for MeanStd {
    /// `12.3 ± 0.4` with a precision that suits the size of the numbers (no unit).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = if self.mean >= 100.0 {
            0
        } else if self.mean >= 10.0 {
            1
        } else {
            2
        };
        write!(f, "{:.*} ± {:.*}", digits, self.mean, digits, self.std)
    }
}

/// Seconds in the unit `%timeit` would choose (s, ms, µs, ns): `1.230 ms`, `12.345 µs`.
pub fn format_seconds(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.3} µs", seconds * 1e6)
    } else {
        format!("{:.1} ns", seconds * 1e9)
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, whole seconds).
pub fn utc_now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_population_std() {
        let s = MeanStd::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert!((s.std - 1.118_033_988_7).abs() < 1e-9);
        assert_eq!(MeanStd::of(&[5.0]).std, 0.0);
        assert_eq!(format!("{}", MeanStd::of(&[41.44, 41.46])), "41.5 ± 0.0");
        assert_eq!(MeanStd::of(&[]).runs, 0);
    }

    #[test]
    fn seconds_read_like_timeit() {
        assert_eq!(format_seconds(0.00123), "1.230 ms");
        assert_eq!(format_seconds(12.345e-6), "12.345 µs");
        assert_eq!(format_seconds(5e-7), "500.0 ns");
        assert_eq!(format_seconds(2.0), "2.000 s");
    }

    #[test]
    fn utc_now_is_well_formed() {
        let now = utc_now();
        assert_eq!(now.len(), 20);
        assert!(now.starts_with("20"));
        assert!(now.ends_with('Z'));
    }

    #[test]
    fn records_derive_rates() {
        // 100 steps in 0.25 s: 2500 us per step, 400 steps/s, 8 MB per step -> 3.2 GB/s.
        let size = GridSize::square(1000).unwrap();
        let record = TimingRecord::diffusion(100, 100, "cpu", "rows", size, 0.25);
        assert_eq!(record.us_per_step, 2500.0);
        assert_eq!(record.steps_per_s, 400.0);
        assert!((record.effective_gb_s - 3.2).abs() < 1e-9);
    }
}
