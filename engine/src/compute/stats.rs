//! Total heat, minimum and maximum of a field: what the app's statistics show. A backend may
//! compute them on its device (the GPU reduces there, so only a few hundred partial results
//! cross to the host instead of the field).

use rayon::prelude::*;

use crate::grid::Grid;

/// Total heat, minimum and maximum of a field.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FieldStats {
    /// Sum of all cells (in f64).
    pub total: f64,
    /// Smallest value.
    pub min: f32,
    /// Largest value.
    pub max: f32,
}

impl FieldStats {
    /// Statistics of `field`.
    pub fn of(field: &Grid) -> Self {
        Self::of_values(field.as_slice())
    }

    /// The largest magnitude of a value, in the values' unit (°C for a heat problem).
    pub fn largest_magnitude(&self) -> f64 {
        f64::from(self.min.abs().max(self.max.abs()))
    }

    /// Statistics of `values`.
    pub fn of_values(values: &[f32]) -> Self {
        let (total, min, max) = values
            .par_chunks(1 << 14)
            .map(|chunk| {
                chunk.iter().fold(
                    (0.0f64, f32::INFINITY, f32::NEG_INFINITY),
                    |(s, lo, hi), &v| (s + f64::from(v), lo.min(v), hi.max(v)),
                )
            })
            .reduce(
                || (0.0, f32::INFINITY, f32::NEG_INFINITY),
                |(s1, lo1, hi1), (s2, lo2, hi2)| (s1 + s2, lo1.min(lo2), hi1.max(hi2)),
            );
        Self { total, min, max }
    }
}
