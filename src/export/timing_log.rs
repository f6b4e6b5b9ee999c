//! Timing logs: one row per timed chunk of work, as CSV and JSON, shared by every command
//! and the GUI.

use std::path::Path;

use super::atomic::write_atomically;
use crate::error::{HeatlabError, Result};

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
    /// A diffusion chunk of `steps` steps over `cells` cells that took `seconds`.
    pub fn diffusion(
        step_start: u64,
        steps: u64,
        backend: &str,
        method: &str,
        size: crate::grid::GridSize,
        seconds: f64,
    ) -> Self {
        let per_step = if steps > 0 {
            seconds / steps as f64
        } else {
            0.0
        };
        let bytes_per_step = 2.0 * size.bytes() as f64;
        Self {
            operation: "diffusion".into(),
            step_start,
            steps,
            backend: backend.into(),
            method: method.into(),
            size: size.to_string(),
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

/// The CSV header: [`TimingRecord`]'s fields in order (the csv crate writes it only before
/// a first record, so a log of no records writes it from here).
const CSV_HEADER: [&str; 10] = [
    "operation",
    "step_start",
    "steps",
    "backend",
    "method",
    "size",
    "seconds",
    "us_per_step",
    "steps_per_s",
    "effective_gb_s",
];

/// Writes the records as CSV with a header row (the header alone when there are none).
pub fn write_timings_csv(path: &Path, records: &[TimingRecord]) -> Result<()> {
    write_atomically(path, |writer| {
        let mut csv = csv::Writer::from_writer(writer);
        if records.is_empty() {
            csv.write_record(CSV_HEADER)?;
        }
        for record in records {
            csv.serialize(record).map_err(std::io::Error::other)?;
        }
        csv.flush()
    })
}

/// Writes the records as a JSON array.
pub fn write_timings_json(path: &Path, records: &[TimingRecord]) -> Result<()> {
    let text = serde_json::to_string_pretty(records).map_err(|e| HeatlabError::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomically(path, |writer| writer.write_all(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridSize;

    #[test]
    fn csv_has_a_header_and_a_row_per_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timings.csv");
        let size = GridSize::square(1000).unwrap();
        let records = vec![
            TimingRecord::diffusion(0, 100, "cpu", "rows", size, 0.5),
            TimingRecord::diffusion(100, 100, "cpu", "rows", size, 0.25),
        ];
        write_timings_csv(&path, &records).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("operation,step_start,steps,backend"));
        // 100 steps in 0.25 s: 2500 us per step, 400 steps/s, 8 MB per step -> 3.2 GB/s.
        assert_eq!(records[1].us_per_step, 2500.0);
        assert_eq!(records[1].steps_per_s, 400.0);
        assert!((records[1].effective_gb_s - 3.2).abs() < 1e-9);

        // No records: the same header, alone.
        write_timings_csv(&path, &[]).unwrap();
        let empty = std::fs::read_to_string(&path).unwrap();
        assert_eq!(empty.lines().collect::<Vec<_>>(), [lines[0]]);
    }
}
