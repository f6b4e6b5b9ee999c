//! Helpers shared by the test binaries (each mounts this folder as `mod common`): the embedded
//! golden files and comparisons here; the app's harness in `app`, running the binary in `cli`
//! and `process`, naming tests and running a body on each backend in `backend`.
#![allow(
    dead_code,
    unused_imports,
    unused_macros,
    reason = "each test binary uses its own part of the helpers"
)]

pub mod app;
pub mod backend;
pub mod bad_kernels;
pub mod cli;
pub mod pointer;
pub mod process;
pub mod software_renderer;

pub use cli::{heatlab_binary, heatlab_in};

use heatlab_engine::export::read_npy;
use heatlab_engine::Grid;

/// One golden case made by `tests/golden/make_golden.py`.
pub struct GoldenCase {
    pub rows: usize,
    pub cols: usize,
    pub seed: u64,
    pub steps: u64,
    pub coeff: f32,
    pub field: &'static [u8],
    /// (boundary, diffused, laplacian of diffused)
    pub stepped: [(&'static str, &'static [u8], &'static [u8]); 3],
}

macro_rules! golden {
    ($name:expr) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/", $name))
    };
}

macro_rules! case {
    ($rows:literal, $cols:literal, $seed:literal, $steps:literal, $coeff:literal) => {
        GoldenCase {
            rows: $rows,
            cols: $cols,
            seed: $seed,
            steps: $steps,
            coeff: $coeff,
            field: golden!(concat!("field_", $rows, "x", $cols, "_", $seed, ".npy")),
            stepped: [
                (
                    "dirichlet",
                    golden!(concat!(
                        "diffused_",
                        $rows,
                        "x",
                        $cols,
                        "_",
                        $seed,
                        "_dirichlet_",
                        $steps,
                        ".npy"
                    )),
                    golden!(concat!(
                        "laplacian_",
                        $rows,
                        "x",
                        $cols,
                        "_",
                        $seed,
                        "_dirichlet_",
                        $steps,
                        ".npy"
                    )),
                ),
                (
                    "neumann",
                    golden!(concat!(
                        "diffused_",
                        $rows,
                        "x",
                        $cols,
                        "_",
                        $seed,
                        "_neumann_",
                        $steps,
                        ".npy"
                    )),
                    golden!(concat!(
                        "laplacian_",
                        $rows,
                        "x",
                        $cols,
                        "_",
                        $seed,
                        "_neumann_",
                        $steps,
                        ".npy"
                    )),
                ),
                (
                    "periodic",
                    golden!(concat!(
                        "diffused_",
                        $rows,
                        "x",
                        $cols,
                        "_",
                        $seed,
                        "_periodic_",
                        $steps,
                        ".npy"
                    )),
                    golden!(concat!(
                        "laplacian_",
                        $rows,
                        "x",
                        $cols,
                        "_",
                        $seed,
                        "_periodic_",
                        $steps,
                        ".npy"
                    )),
                ),
            ],
        }
    };
}

pub fn golden_cases() -> Vec<GoldenCase> {
    vec![
        case!(64, 64, 7, 25, 0.25),
        case!(33, 47, 3966789, 10, 0.25),
        case!(40, 64, 12345, 50, 0.2),
    ]
}

#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn load(bytes: &[u8]) -> Grid {
    read_npy(bytes).expect("golden files are valid 2-D float32 .npy")
}

/// Largest absolute difference between two fields of the same size.
pub fn max_abs_diff(a: &Grid, b: &Grid) -> f32 {
    assert_eq!(a.size(), b.size(), "sizes differ");
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// What opening the GPU gave, or `None` after saying "skipped" where cargo test shows it
/// (straight to stderr, past the output capture). Under `HEATLAB_REQUIRE_CUDA=1` a GPU that
/// cannot be opened fails the test instead.
pub fn gpu_or_skip<T, E: std::fmt::Display>(test: &str, opened: Result<T, E>) -> Option<T> {
    match opened {
        Ok(gpu) => Some(gpu),
        Err(reason) => {
            assert!(
                !std::env::var("HEATLAB_REQUIRE_CUDA").is_ok_and(|v| v == "1"),
                "HEATLAB_REQUIRE_CUDA=1 but CUDA is unusable: {reason}"
            );
            skipped(test, &format!("no GPU: {reason}"));
            None
        }
    }
}

/// Says that `test` is skipped and why, on standard error where cargo test shows it (past the
/// output capture), as one write of the whole line so that tests skipping at once do not
/// interleave.
pub fn skipped(test: &str, why: &str) {
    let line = format!("{test}: skipped ({why})\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// Settings storage in memory, standing in for eframe's file (the settings round trips).
#[derive(Default)]
pub struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }

    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }

    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }

    fn flush(&mut self) {}
}

/// The bytes of a version-1 `.npy` file of `descr` values (`"<f4"`, `"<i8"`, ...) with
/// `shape` (as NumPy writes it, e.g. `"(2, 3)"`), in Fortran order when `fortran`, and `data`:
/// hand-made files for the importers' refusals.
pub fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}
