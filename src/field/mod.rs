//! The jagged initial field: NumPy's random generator, its percentile, and the FFT filter.

pub mod jagged;
pub mod numpy_rng;
pub mod percentile;

pub use jagged::{generate_jagged, JaggedParams, DEFAULT_SEED};
