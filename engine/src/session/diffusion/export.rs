//! Exports from the app, written on the simulation thread through `crate::export`: PNGs of the
//! field and the Laplacian as shown (full resolution, the view's colormap and the colour range
//! on screen, optionally with a colorbar), `.npy` arrays and the timing log (of the current
//! field or problem); and the colours
//! the app's recordings use ([`colours`]).

use std::path::PathBuf;

use crate::compute::Layer;
use crate::export::{self, FrameFiles, LayerFrame, PngStyle};
use crate::grid::ValueRange;
use crate::session::recording::{FrameColours, LayerColours, RangeRule};
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

/// The colours of recorded frames and exported PNGs: the views' colormaps over the ranges on
/// screen (a view not shown yet: its range mode on the frame's own values).
pub fn colours(views: ViewRequests, shown: ShownRanges) -> FrameColours {
    let layer = |view: ViewRequest, range: Option<ValueRange>| LayerColours {
        colormap: view.colormap,
        range: range.map_or(RangeRule::PerFrame(view.range_mode), RangeRule::Fixed),
        unit: None,
    };
    FrameColours {
        field: layer(views.field, shown.field),
        laplacian: layer(views.laplacian, shown.laplacian),
    }
}

/// Writes `job` for the simulation's current state (at `step`), with the colours the screen
/// shows (and a heat problem's units on the colorbars), and returns the files written. The
/// timing log holds the simulation's records from `timings_from` on: those of the field or
/// problem opened last, not of the whole session.
pub fn write(
    job: &ExportJob,
    sim: &mut Simulation,
    views: ViewRequests,
    shown: ShownRanges,
    step: u64,
    timings_from: usize,
) -> crate::Result<Vec<PathBuf>> {
    export::ensure_writable_dir(&job.dir)?;
    let layers: &[Layer] = match job.kind {
        ExportKind::FieldPng | ExportKind::FieldNpy => &[Layer::Field],
        ExportKind::LaplacianPng | ExportKind::LaplacianNpy => &[Layer::Laplacian],
        ExportKind::Frames => &Layer::ALL,
        ExportKind::TimingLog => {
            let timings = sim.timings();
            let current = timings.get(timings_from..).unwrap_or(timings);
            return export::write_timing_log(&job.dir, current);
        }
    };
    let npy = matches!(job.kind, ExportKind::FieldNpy | ExportKind::LaplacianNpy);
    let mut grids = Vec::with_capacity(layers.len());
    for &layer in layers {
        grids.push(match layer {
            Layer::Field => sim.field()?,
            Layer::Laplacian => sim.laplacian()?,
        });
    }
    let colours = colours(views, shown).in_units_of(sim);
    let frames: Vec<LayerFrame<'_>> = layers
        .iter()
        .zip(&grids)
        .map(|(&layer, grid)| match npy {
            // An array needs no colours: its style is never resolved.
            true => LayerFrame {
                layer,
                grid,
                style: PngStyle {
                    colormap: colours.of(layer).colormap,
                    range: ValueRange { min: 0.0, max: 0.0 },
                    colorbar: job.colorbar,
                    unit: None,
                    cell_pixels: job.cell_pixels,
                },
            },
            false => {
                let mut frame = colours.layer_frame(layer, grid, job.colorbar);
                frame.style.cell_pixels = job.cell_pixels;
                frame
            }
        })
        .collect();
    let files = FrameFiles { png: !npy, npy };
    export::write_frame(&job.dir, step, &frames, files)
}
