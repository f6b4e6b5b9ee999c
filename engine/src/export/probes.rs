//! Probe series as CSV: one row per sample, in long form (`probe,row,col,step,value`, with
//! `time_s` before the value when the samples have a simulated time: a heat problem), which
//! loads straight into pandas or a spreadsheet and needs no empty cells when probes were placed
//! at different times.

use std::path::Path;

use super::atomic::write_atomically;
use crate::error::Result;

/// The CSV header.
pub const PROBE_CSV_HEADER: [&str; 5] = ["probe", "row", "col", "step", "value"];

/// The CSV header of samples with a simulated time.
pub const PROBE_CSV_HEADER_TIMED: [&str; 6] = ["probe", "row", "col", "step", "time_s", "value"];

/// One probe's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSeries {
    /// The probe's name (P1..P8).
    pub name: String,
    /// Its row in the field.
    pub row: usize,
    /// Its column.
    pub col: usize,
    /// (step, value) pairs, oldest first.
    pub points: Vec<(u64, f32)>,
    /// The simulated time of each point, s (a heat problem's), as many as `points`.
    pub seconds: Option<Vec<f64>>,
}

/// Writes every probe's samples to `path`, atomically. Values are written in the shortest
/// form that reads back to the same `f32` (times to the same `f64`); the `time_s` column is
/// written when every series has its times.
pub fn write_probe_csv(path: &Path, series: &[ProbeSeries]) -> Result<()> {
    let timed = !series.is_empty() && series.iter().all(|p| p.seconds.is_some());
    write_atomically(path, |writer| {
        let mut csv = csv::Writer::from_writer(writer);
        if timed {
            csv.write_record(PROBE_CSV_HEADER_TIMED)?;
        } else {
            csv.write_record(PROBE_CSV_HEADER)?;
        }
        for probe in series {
            let (row, col) = (probe.row.to_string(), probe.col.to_string());
            let times = probe.seconds.as_deref().filter(|_| timed);
            for (i, (step, value)) in probe.points.iter().enumerate() {
                let step = step.to_string();
                let value = value.to_string();
                match times.and_then(|t| t.get(i)) {
                    Some(seconds) => csv.write_record([
                        probe.name.as_str(),
                        &row,
                        &col,
                        &step,
                        &seconds.to_string(),
                        &value,
                    ])?,
                    None => csv.write_record([probe.name.as_str(), &row, &col, &step, &value])?,
                }
            }
        }
        csv.flush()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_series_round_trip_through_the_csv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probes.csv");
        let series = [
            ProbeSeries {
                name: "P1".into(),
                row: 3,
                col: 4,
                points: vec![(0, 0.1), (10, 1.0e-7), (20, -0.0)],
                seconds: None,
            },
            ProbeSeries {
                name: "P2".into(),
                row: 0,
                col: 9,
                points: vec![(20, 0.333_333_34)],
                seconds: None,
            },
        ];
        write_probe_csv(&path, &series).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "probe,row,col,step,value");
        assert_eq!(lines[1], "P1,3,4,0,0.1");
        assert_eq!(lines[2], "P1,3,4,10,0.0000001");
        assert_eq!(lines[3], "P1,3,4,20,-0");
        assert_eq!(lines.len(), 5);
        let value: f32 = lines[4].rsplit(',').next().unwrap().parse().unwrap();
        assert_eq!(value, 0.333_333_34);
    }

    #[test]
    fn samples_with_a_simulated_time_carry_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probes.csv");
        let series = [ProbeSeries {
            name: "P1".into(),
            row: 1,
            col: 2,
            points: vec![(0, 20.0), (400, 21.5)],
            seconds: Some(vec![0.0, 0.926_4]),
        }];
        write_probe_csv(&path, &series).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "probe,row,col,step,time_s,value",
                "P1,1,2,0,0,20",
                "P1,1,2,400,0.9264,21.5"
            ]
        );
    }
}
