//! heatlab: GPU heat diffusion, the jagged field of the Numba tutorials, measured and exported.
//!
//! The library holds everything; `main.rs` only parses arguments and starts the GUI or a
//! headless command. Compute (`field`, `compute`, `sim`) never depends on the GUI.

pub mod bench;
pub mod choice;
pub mod cli;
pub mod compute;
pub mod error;
pub mod export;
pub mod field;
pub mod grid;
pub mod import;
pub mod lab;
pub mod measure;
pub mod memory;
pub mod problem;
pub mod render;
pub mod scenario;
pub mod session;
pub mod settings;
pub mod sim;
pub mod state;
pub mod tutorial;
pub mod ui;
pub mod verify;

pub use error::{CudaUnavailable, HeatlabError, Result};
pub use grid::{Grid, GridSize};
