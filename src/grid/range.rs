//! Which values the colormap spans.

use std::fmt;

use rayon::prelude::*;

use super::percentile::percentile_pair_finite_f32;
use super::Grid;

/// The values mapped to the first and last colour.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ValueRange {
    /// Value of the first colour.
    pub min: f32,
    /// Value of the last colour.
    pub max: f32,
}

/// How the range is chosen for each frame.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum RangeMode {
    /// The field's own minimum and maximum (the tutorial's field plot).
    MinMax,
    /// Clipped to two percentiles (the tutorial's Laplacian plot uses 5 and 95).
    Percentile {
        /// Lower percentile, 0..=100.
        low: f64,
        /// Upper percentile, 0..=100.
        high: f64,
    },
    /// Fixed values.
    Fixed(ValueRange),
}

impl RangeMode {
    /// The tutorial's Laplacian clip.
    pub const LAPLACIAN_DEFAULT: Self = Self::Percentile {
        low: 5.0,
        high: 95.0,
    };

    /// The range for `field` under this mode. Non-finite cells are ignored.
    pub fn resolve(&self, field: &Grid) -> ValueRange {
        match *self {
            Self::MinMax => min_max(field),
            Self::Fixed(range) => range,
            Self::Percentile { low, high } => {
                let (lo, hi) = percentile_pair_finite_f32(
                    field.as_slice(),
                    low.clamp(0.0, 100.0),
                    high.clamp(0.0, 100.0),
                )
                .unwrap_or((0.0, 0.0));
                ValueRange {
                    min: lo as f32,
                    max: hi as f32,
                }
            }
        }
    }
}

impl fmt::Display for RangeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MinMax => f.write_str("min-max"),
            Self::Percentile { low, high } => write!(f, "percentile {low}-{high}"),
            Self::Fixed(range) => write!(f, "fixed {}..{}", range.min, range.max),
        }
    }
}

/// The smallest and largest finite values (0..0 for a field with none).
pub fn min_max(field: &Grid) -> ValueRange {
    let finite_min_max = |values: &[f32]| {
        values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    };
    // A display-sized grid is quicker on one thread than handed out to rayon's.
    let (min, max) = if field.size().cells() <= 1 << 20 {
        finite_min_max(field.as_slice())
    } else {
        field
            .as_slice()
            .par_chunks(1 << 16)
            .map(finite_min_max)
            .reduce(
                || (f32::INFINITY, f32::NEG_INFINITY),
                |(a, b), (c, d)| (a.min(c), b.max(d)),
            )
    };
    if min > max {
        ValueRange { min: 0.0, max: 0.0 }
    } else {
        ValueRange { min, max }
    }
}
