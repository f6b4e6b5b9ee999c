//! `heatlab run --video FILE`: a GIF or MP4 of the run, a frame at the first step and at every
//! multiple of `--video-every`. The field keeps the colour range of the first frame (so heat
//! visibly spreads and fades); the Laplacian's range is its 5th-95th percentile per frame. The
//! video is finished however the run ends (a signal included), so it is always playable.

use std::path::PathBuf;

use super::RunPlan;
use crate::compute::Layer;
use crate::error::HeatlabError;
use crate::export::{video_frame, FrameLook, LayerFrame, PngStyle, VideoLayers, VideoWriter};
use crate::grid::{Grid, RangeMode, ValueRange};
use crate::sim::Simulation;

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
        layers: VideoLayers,
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

/// A video being recorded by a run.
pub(super) struct RunVideo {
    writer: VideoWriter,
    plan: VideoPlan,
    /// The field's colour range, fixed by the first frame.
    field_range: Option<ValueRange>,
    last_step: Option<u64>,
}

impl RunVideo {
    /// Checks the file and ffmpeg (for MP4) before the run starts.
    pub(super) fn start(plan: &VideoPlan) -> crate::Result<Self> {
        Ok(Self {
            writer: VideoWriter::create(&plan.path, plan.fps)?,
            plan: plan.clone(),
            field_range: None,
            last_step: None,
        })
    }

    /// Whether `step` gets a frame.
    pub(super) fn is_due(&self, step: u64) -> bool {
        self.last_step != Some(step) && (self.last_step.is_none() || step % self.plan.every == 0)
    }

    /// Frames written so far.
    pub(super) fn frames(&self) -> u64 {
        self.writer.frames()
    }

    /// Adds the frame of `step`; `field` is the simulation's field there.
    pub(super) fn add(
        &mut self,
        run: &RunPlan,
        step: u64,
        field: &Grid,
        simulation: &mut Simulation,
    ) -> crate::Result<()> {
        let (needs_field, needs_laplacian) = self.plan.look.needs();
        let laplacian = if needs_laplacian {
            Some(simulation.laplacian()?)
        } else {
            None
        };
        let field_range = *self
            .field_range
            .get_or_insert_with(|| RangeMode::MinMax.resolve(field));
        let mut layers = Vec::with_capacity(2);
        if needs_field {
            layers.push(LayerFrame {
                layer: Layer::Field,
                grid: field,
                style: PngStyle {
                    colormap: run.colormap,
                    range: field_range,
                    colorbar: self.plan.look.colorbar,
                },
            });
        }
        if let Some(laplacian) = &laplacian {
            layers.push(LayerFrame {
                layer: Layer::Laplacian,
                grid: laplacian,
                style: PngStyle::resolved(
                    run.laplacian_colormap,
                    RangeMode::LAPLACIAN_DEFAULT,
                    laplacian,
                    self.plan.look.colorbar,
                ),
            });
        }
        let (rgb, width, height) = video_frame(&layers, step, &self.plan.look)?;
        self.writer.add_frame(&rgb, width, height)?;
        self.last_step = Some(step);
        Ok(())
    }

    /// Finishes the file; returns its path and a line for the terminal.
    pub(super) fn finish(self) -> crate::Result<(PathBuf, String)> {
        let fps = self.plan.fps;
        let summary = self.writer.finish()?;
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
