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
    let style = |view: ViewRequest, range: Option<ValueRange>, grid: &Grid| PngStyle {
        colormap: view.colormap,
        range: range.unwrap_or_else(|| view.range_mode.resolve(grid)),
        colorbar: job.colorbar,
    };
    let png = FrameFiles {
        png: true,
        npy: false,
    };
    let field = |sim: &mut Simulation| sim.field();
    let laplacian = |sim: &mut Simulation| sim.laplacian();
    match job.kind {
        ExportKind::FieldPng => {
            let grid = field(sim)?;
            let layer = LayerFrame {
                layer: Layer::Field,
                grid: &grid,
                style: style(views.field, shown.field, &grid),
            };
            export::write_frame(&job.dir, step, &[layer], png)
        }
        ExportKind::LaplacianPng => {
            let grid = laplacian(sim)?;
            let layer = LayerFrame {
                layer: Layer::Laplacian,
                grid: &grid,
                style: style(views.laplacian, shown.laplacian, &grid),
            };
            export::write_frame(&job.dir, step, &[layer], png)
        }
        ExportKind::Frames => {
            let (field, laplacian) = (field(sim)?, laplacian(sim)?);
            let layers = [
                LayerFrame {
                    layer: Layer::Field,
                    grid: &field,
                    style: style(views.field, shown.field, &field),
                },
                LayerFrame {
                    layer: Layer::Laplacian,
                    grid: &laplacian,
                    style: style(views.laplacian, shown.laplacian, &laplacian),
                },
            ];
            export::write_frame(&job.dir, step, &layers, png)
        }
        ExportKind::FieldNpy | ExportKind::LaplacianNpy => {
            let (layer, grid) = if job.kind == ExportKind::FieldNpy {
                (Layer::Field, field(sim)?)
            } else {
                (Layer::Laplacian, laplacian(sim)?)
            };
            let path = export::frame_path(&job.dir, layer.file_stem(), step, "npy");
            export::write_npy(&path, &grid)?;
            Ok(vec![path])
        }
        ExportKind::TimingLog => export::write_timing_log(&job.dir, sim.timings()),
    }
}
