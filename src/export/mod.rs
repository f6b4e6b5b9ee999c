//! Writing what a user keeps: PNG frames, `.npy` arrays and timing logs, each written
//! atomically (a temporary file in the same folder, then a rename) so that an interrupted
//! run never leaves a half-written file.

pub mod atomic;
pub mod npy;
pub mod png;
pub mod timing_log;

pub use atomic::{ensure_writable_dir, write_atomically};
pub use npy::{read_npy, write_npy};
pub use png::write_png_rgb;
pub use timing_log::{write_timings_csv, write_timings_json, TimingRecord};

use std::path::{Path, PathBuf};

/// `DIR/<kind>_<step, six digits>.<extension>`, the naming of `heatlab run`'s frames.
pub fn frame_path(dir: &Path, kind: &str, step: u64, extension: &str) -> PathBuf {
    dir.join(format!("{kind}_{step:06}.{extension}"))
}
