//! Exports from the app, written on the simulation thread through `crate::export`: PNGs of the
//! field and the Laplacian as shown (full resolution, the view's colormap and the colour range
//! on screen, optionally with a colorbar), `.npy` arrays and the timing log.

use std::path::PathBuf;

use crate::compute::Layer;
use crate::export::{self, FrameFiles, LayerFrame, PngStyle};
use crate::grid::{Grid, ValueRange};
use crate::sim::Simulation;

use super::messages::{ExportJob, ExportKind, ViewRequest, ViewRequests};

/// The colour ranges of the last frame shown, so that exports match the screen.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShownRanges {
    /// The field view's range.
    pub field: Option<ValueRange>,
    /// The Laplacian view's range.
    pub laplacian: Option<ValueRange>,
}

/// The picture of one video frame of the simulation's current state (at `step`), drawn with
/// the views' colours and the ranges on screen, as the PNG recording draws its frames.
pub fn video_frame_of(
    sim: &mut Simulation,
    views: ViewRequests,
    shown: ShownRanges,
    step: u64,
    look: &export::FrameLook,
) -> crate::Result<(Vec<u8>, usize, usize)> {
    let (needs_field, needs_laplacian) = look.needs();
    let field = if needs_field {
        Some(sim.field()?)
    } else {
        None
    };
    let laplacian = if needs_laplacian {
        Some(sim.laplacian()?)
    } else {
        None
    };
    let mut layers = Vec::with_capacity(2);
    if let Some(grid) = &field {
        layers.push(video_layer(
            Layer::Field,
            grid,
            views.field,
            shown.field,
            look.colorbar,
        ));
    }
    if let Some(grid) = &laplacian {
        layers.push(video_layer(
            Layer::Laplacian,
            grid,
            views.laplacian,
            shown.laplacian,
            look.colorbar,
        ));
    }
    export::video_frame(&layers, step, look)
}

/// A layer of a video frame in the view's colours, the range on screen when there is one.
fn video_layer<'a>(
    layer: Layer,
    grid: &'a Grid,
    view: ViewRequest,
    range: Option<ValueRange>,
    colorbar: bool,
) -> LayerFrame<'a> {
    LayerFrame {
        layer,
        grid,
        style: PngStyle {
            colormap: view.colormap,
            range: range.unwrap_or_else(|| view.range_mode.resolve(grid)),
            colorbar,
        },
    }
}

/// Writes `job` for the simulation's current state (at `step`), with the colours the screen
/// shows, and returns the files written.
pub fn write(
    job: &ExportJob,
    sim: &mut Simulation,
    views: ViewRequests,
    shown: ShownRanges,
    step: u64,
) -> crate::Result<Vec<PathBuf>> {
    export::ensure_writable_dir(&job.dir)?;
    let layers: &[Layer] = match job.kind {
        ExportKind::FieldPng | ExportKind::FieldNpy => &[Layer::Field],
        ExportKind::LaplacianPng | ExportKind::LaplacianNpy => &[Layer::Laplacian],
        ExportKind::Frames => &Layer::ALL,
        ExportKind::TimingLog => return export::write_timing_log(&job.dir, sim.timings()),
    };
    let npy = matches!(job.kind, ExportKind::FieldNpy | ExportKind::LaplacianNpy);
    let mut grids = Vec::with_capacity(layers.len());
    for &layer in layers {
        grids.push(match layer {
            Layer::Field => sim.field()?,
            Layer::Laplacian => sim.laplacian()?,
        });
    }
    let frames: Vec<LayerFrame<'_>> = layers
        .iter()
        .zip(&grids)
        .map(|(&layer, grid)| {
            let (view, range) = match layer {
                Layer::Field => (views.field, shown.field),
                Layer::Laplacian => (views.laplacian, shown.laplacian),
            };
            LayerFrame {
                layer,
                grid,
                style: PngStyle {
                    colormap: view.colormap,
                    // An array needs no colours: its style is never resolved.
                    range: match (npy, range) {
                        (false, None) => view.range_mode.resolve(grid),
                        (_, range) => range.unwrap_or(ValueRange { min: 0.0, max: 0.0 }),
                    },
                    colorbar: job.colorbar,
                },
            }
        })
        .collect();
    let files = FrameFiles { png: !npy, npy };
    export::write_frame(&job.dir, step, &frames, files)
}
