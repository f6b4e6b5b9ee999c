//! heatlab's engine: GPU heat diffusion without a window. The jagged field of the Numba
//! tutorials, heat problems in physical units, the CPU reference and CUDA backends, running
//! simulations, colormaps, files, benchmarks, the tutorial kernels and the session both front
//! ends drive.
//!
//! Nothing here depends on egui, eframe or winit (`cargo tree -p heatlab-engine` shows it); the
//! app crate at the repository's root (`ui`, `settings`, `cli` and the `heatlab` binary) is one
//! front end of it. The rooms and the one direction data flows through them are in
//! ARCHITECTURE.md, and `engine/tests/layering.rs` fails when an import runs against it.

pub mod bench;
pub mod choice;
pub mod compute;
pub mod distributed;
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
pub mod sim;
pub mod solve;
pub mod state;
pub mod tutorial;
pub mod verify;

pub use error::{CudaUnavailable, HeatlabError, Result};
pub use grid::{Grid, GridSize};
