//! Small statistics for timings, in the notebooks' `%timeit` style.

use std::fmt;

/// Mean and (sample) standard deviation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeanStd {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one sample).
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
        let mean = samples.iter().sum::<f64>() / runs as f64;
        let var = if runs > 1 {
            samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (runs - 1) as f64
        } else {
            0.0
        };
        Self {
            mean,
            std: var.sqrt(),
            runs,
        }
    }
}

impl fmt::Display for MeanStd {
    /// `12.3 ± 0.4` with a precision that suits the size of the numbers.
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

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`, without a date crate.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_std() {
        let s = MeanStd::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert!((s.std - 1.290_994_448_7).abs() < 1e-9);
        assert_eq!(MeanStd::of(&[5.0]).std, 0.0);
        assert_eq!(format!("{}", MeanStd::of(&[41.44, 41.46])), "41.5 ± 0.0");
    }

    #[test]
    fn utc_now_is_well_formed() {
        let now = utc_now();
        assert_eq!(now.len(), 20);
        assert!(now.starts_with("20"));
        assert!(now.ends_with('Z'));
    }
}
