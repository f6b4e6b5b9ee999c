//! Timing logs: one row per timed chunk of work, as CSV and JSON, shared by every command
//! and the GUI.

use std::path::{Path, PathBuf};

use super::atomic::{write_atomically, write_json, AtomicFile};
use crate::error::{HeatlabError, Result};
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

/// A timing log written row by row as the chunks come, so that a long run keeps none of them
/// in memory: the rows go to a temporary file beside the target ([`AtomicFile`]), moved into
/// place by [`TimingCsvWriter::commit`].
pub struct TimingCsvWriter {
    path: PathBuf,
    csv: csv::Writer<AtomicFile>,
    rows: u64,
}

impl std::fmt::Debug for TimingCsvWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimingCsvWriter")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl TimingCsvWriter {
    /// Starts the log at `path`.
    pub fn create(path: &Path) -> Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            csv: csv::Writer::from_writer(AtomicFile::create(path)?),
            rows: 0,
        })
    }

    /// Adds a row.
    pub fn push(&mut self, record: &TimingRecord) -> Result<()> {
        self.csv
            .serialize(record)
            .map_err(|e| csv_error(&self.path, e))?;
        self.rows += 1;
        Ok(())
    }

    /// Finishes the log (the header alone when no row came) and moves it into place.
    pub fn commit(mut self) -> Result<()> {
        if self.rows == 0 {
            self.csv
                .write_record(CSV_HEADER)
                .map_err(|e| csv_error(&self.path, e))?;
        }
        let file = self
            .csv
            .into_inner()
            .map_err(|e| HeatlabError::io("writing", &self.path, e.into_error()))?;
        file.commit()
    }
}

fn csv_error(path: &Path, error: csv::Error) -> HeatlabError {
    let io = match error.into_kind() {
        csv::ErrorKind::Io(io) => io,
        other => std::io::Error::other(format!("{other:?}")),
    };
    HeatlabError::io("writing", path, io)
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

        // Row by row: the same text, and nothing at the path before the commit.
        let streamed = dir.path().join("streamed.csv");
        let mut writer = TimingCsvWriter::create(&streamed).unwrap();
        for record in &records {
            writer.push(record).unwrap();
        }
        assert!(!streamed.exists());
        writer.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&streamed).unwrap(), text);
        TimingCsvWriter::create(&streamed)
            .unwrap()
            .commit()
            .unwrap();
        assert_eq!(std::fs::read_to_string(&streamed).unwrap(), empty);
    }
}
