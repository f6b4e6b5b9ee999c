//! Timing logs: one row per timed chunk of work, as CSV and JSON, shared by every command
//! and the GUI.

use std::path::Path;

use super::atomic::{write_atomically, write_json};
use crate::error::Result;
use crate::measure::TimingRecord;

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
    write_json(path, &records)
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
