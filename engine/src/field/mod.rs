//! The jagged initial field: NumPy's random generator, its percentile, and the FFT filter.

pub mod jagged;
pub mod numpy_rng;

/// NumPy's percentile, used by the field's threshold (it lives with the shared types).
pub use crate::grid::percentile;
pub use jagged::{generate_jagged, JaggedParams, DEFAULT_SEED};
