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
    // Eight lanes of compare-and-select: the compiler turns them into vector instructions
    // (f32::min/max, which must pick the non-NaN operand, do not vectorise).
    const LANES: usize = 8;
    let finite_min_max = |values: &[f32]| {
        let mut low = [f32::INFINITY; LANES];
        let mut high = [f32::NEG_INFINITY; LANES];
        let mut groups = values.chunks_exact(LANES);
        for group in &mut groups {
            for lane in 0..LANES {
                let v = group[lane];
                let finite = v.is_finite();
                low[lane] = if finite && v < low[lane] {
                    v
                } else {
                    low[lane]
                };
                high[lane] = if finite && v > high[lane] {
                    v
                } else {
                    high[lane]
                };
            }
        }
        let mut lo = low.iter().copied().fold(f32::INFINITY, f32::min);
        let mut hi = high.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for &v in groups.remainder().iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        (lo, hi)
    };
    let (min, max) = field
        .as_slice()
        .par_chunks(1 << 16)
        .map(finite_min_max)
        .reduce(
            || (f32::INFINITY, f32::NEG_INFINITY),
            |(a, b), (c, d)| (a.min(c), b.max(d)),
        );
    if min > max {
        ValueRange { min: 0.0, max: 0.0 }
    } else {
        ValueRange { min, max }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridSize;

    #[test]
    fn min_max_skips_non_finite_values_at_every_length() {
        for n in [1usize, 7, 8, 9, 100, 65_537, 200_003, 300_000] {
            let values: Vec<f32> = (0..n)
                .map(|i| match i % 11 {
                    3 => f32::NAN,
                    5 => f32::INFINITY,
                    7 => f32::NEG_INFINITY,
                    _ => ((i * 7919) % 1013) as f32 - 500.5,
                })
                .collect();
            let size = if n > 1000 {
                GridSize::new(n / 1000, 1000).unwrap()
            } else {
                GridSize::new(1, n).unwrap()
            };
            let values = values[..size.cells()].to_vec();
            let grid = Grid::from_vec(size, values.clone()).unwrap();
            let finite: Vec<f32> = values.into_iter().filter(|v| v.is_finite()).collect();
            let expected = if finite.is_empty() {
                ValueRange { min: 0.0, max: 0.0 }
            } else {
                ValueRange {
                    min: finite.iter().copied().fold(f32::INFINITY, f32::min),
                    max: finite.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                }
            };
            assert_eq!(min_max(&grid), expected, "n={n}");
        }
    }
}
