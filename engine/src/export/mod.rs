//! Writing what a user keeps: PNG frames (with colorbars), `.npy` arrays and timing logs, each
//! written atomically (a temporary file in the same folder, then a rename) so that an
//! interrupted run never leaves a half-written file. The GUI and the CLI both export through
//! here; a new format is a new file beside these.

pub mod atomic;
pub mod colorbar;
pub mod ffmpeg;
pub mod frame;
pub mod live_run;
pub mod npy;
pub mod png;
pub mod probes;
pub mod stdout;
pub mod timing_log;
pub mod video;

pub use crate::measure::TimingRecord;
pub use atomic::{ensure_writable_dir, write_atomically, write_json, AtomicFile};
pub use colorbar::with_colorbar;
pub use frame::ShownLayers;
pub use frame::{
    compose_frame, write_frame, write_png, write_timing_log, FrameFiles, LayerFrame, PngStyle,
};
pub use npy::{read_npy, write_npy};
pub use png::write_png_rgb;
pub use probes::{write_probe_csv, ProbeSeries};
pub use timing_log::{write_timings_csv, write_timings_json, TimingCsvWriter};
pub use video::{video_frame, FrameLook, VideoFormat, VideoSummary, VideoWriter};

use std::path::{Path, PathBuf};

/// `DIR/<kind>_<step, six digits>.<extension>`, the naming of `heatlab run`'s frames.
pub fn frame_path(dir: &Path, kind: &str, step: u64, extension: &str) -> PathBuf {
    dir.join(format!("{kind}_{step:06}.{extension}"))
}
