//! `heatlab run --video FILE`: a GIF or MP4 of the run, a frame at the first step and at every
//! multiple of `--video-every`. The field keeps the colour range of the first frame (so heat
//! visibly spreads and fades); the Laplacian's range is its 5th-95th percentile per frame. The
//! video is finished however the run ends (a signal included), so it is always playable.

use std::path::PathBuf;

use super::RunPlan;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::{FrameLook, ShownLayers};
use heatlab_engine::grid::{Grid, RangeMode};
use heatlab_engine::session::recording::{FrameColours, RangeRule, VideoRecorder};
use heatlab_engine::sim::Simulation;

/// What `--video*` asked for, checked.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct VideoPlan {
    /// The file (.gif or .mp4).
    pub(super) path: PathBuf,
    /// A frame at every multiple of this step.
    pub(super) every: u64,
    /// Frames per second.
    pub(super) fps: u32,
    /// How frames are drawn.
    pub(super) look: FrameLook,
}

impl VideoPlan {
    pub(super) fn new(
        path: PathBuf,
        every: i64,
        fps: u32,
        layers: ShownLayers,
        colorbar: bool,
        step_counter: bool,
        max_side: usize,
    ) -> Result<Self, HeatlabError> {
        let every = u64::try_from(every)
            .ok()
            .filter(|&e| e > 0)
            .ok_or_else(|| {
                HeatlabError::InvalidInput(format!("--video-every must be at least 1, got {every}"))
            })?;
        if max_side < 16 {
            return Err(HeatlabError::InvalidInput(format!(
                "--video-size must be at least 16, got {max_side}"
            )));
        }
        Ok(Self {
            path,
            every,
            fps,
            look: FrameLook {
                layers,
                colorbar,
                step_counter,
                max_side,
            },
        })
    }
}

/// A video being recorded by a run, through the session's [`VideoRecorder`].
pub(super) struct RunVideo {
    recorder: VideoRecorder,
    fps: u32,
    /// The field over the range of its first frame, the Laplacian over each frame's 5th to
    /// 95th percentile.
    colours: FrameColours,
}

impl RunVideo {
    /// Checks the file and ffmpeg (for MP4) before the run starts.
    pub(super) fn start(plan: &VideoPlan, run: &RunPlan) -> heatlab_engine::Result<Self> {
        let mut colours = FrameColours::per_frame(run.colormap, run.laplacian_colormap);
        colours.field.range = RangeRule::HeldFromFirstFrame(RangeMode::MinMax);
        Ok(Self {
            recorder: VideoRecorder::start(&plan.path, plan.fps, plan.look)?,
            fps: plan.fps,
            colours,
        })
    }

    /// Frames written so far.
    pub(super) fn frames(&self) -> u64 {
        self.recorder.frames()
    }

    /// Adds the frame of `step`; `field` is the simulation's field there.
    pub(super) fn add(
        &mut self,
        step: u64,
        field: &Grid,
        simulation: &mut Simulation,
    ) -> heatlab_engine::Result<()> {
        self.recorder
            .add(simulation, step, &self.colours, Some(field))
    }

    /// Finishes the file; returns its path and a line for the terminal.
    pub(super) fn finish(self) -> heatlab_engine::Result<(PathBuf, String)> {
        let fps = self.fps;
        let summary = self.recorder.finish()?;
        let line = format!(
            "wrote {}: {} frames of {}x{} at {fps} frames/s",
            summary.path.display(),
            summary.frames,
            summary.size.0,
            summary.size.1
        );
        Ok((summary.path, line))
    }
}
