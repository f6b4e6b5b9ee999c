//! Drawing one frame on the simulation thread: both previews (and the statistics when due),
//! with where the time went. On the CPU the field is downloaded once and every part is timed on
//! its own; on CUDA the backend reduces and colours on the device, so only the small pictures
//! (and a few hundred partial sums for the statistics) cross to the host.

use std::time::{Duration, Instant};

use crate::compute::{BackendKind, Layer};
use crate::render::preview::{centre_diverging, render_preview};
use crate::render::{Preview, PreviewRequest};
use crate::sim::{FieldStats, Simulation};

use super::messages::{FramePart, ViewRequest, ViewRequests};

/// The two previews and, when due, the statistics.
pub struct FramePictures {
    /// The field view's picture.
    pub field: Preview,
    /// The Laplacian view's picture.
    pub laplacian: Preview,
    /// Total heat, minimum and maximum, when they were due.
    pub stats: Option<FieldStats>,
}

/// Renders both previews (and the statistics when `stats_due`), adding each part's time to
/// `split`. Diverging colormaps come back centred on zero.
pub fn render_frame(
    sim: &mut Simulation,
    views: ViewRequests,
    stats_due: bool,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<FramePictures> {
    let boundary = sim.params().boundary;
    let request = |layer: Layer, view: ViewRequest| PreviewRequest {
        layer,
        boundary,
        colormap: view.colormap,
        range_mode: view.range_mode,
        max_size: view.max_size,
    };
    let field_request = request(Layer::Field, views.field);
    let laplacian_request = request(Layer::Laplacian, views.laplacian);
    let mut pictures = if sim.backend().kind() == BackendKind::Cpu {
        let field = timed(split, FramePart::Download, || sim.field())?;
        let laplacian = timed(split, FramePart::Laplacian, || sim.laplacian())?;
        let (field_preview, laplacian_preview) = timed(split, FramePart::Colormap, || {
            (
                render_preview(&field, &field_request),
                render_preview(&laplacian, &laplacian_request),
            )
        });
        let stats =
            stats_due.then(|| timed(split, FramePart::Statistics, || FieldStats::of(&field)));
        FramePictures {
            field: field_preview,
            laplacian: laplacian_preview,
            stats,
        }
    } else {
        let (field, laplacian) = timed(split, FramePart::DevicePreview, || {
            let field = sim.render_preview(&field_request.spec())?;
            let laplacian = sim.render_preview(&laplacian_request.spec())?;
            crate::Result::Ok((Preview::from(field), Preview::from(laplacian)))
        })?;
        let stats = if stats_due {
            Some(timed(split, FramePart::Statistics, || sim.statistics())?)
        } else {
            None
        };
        FramePictures {
            field,
            laplacian,
            stats,
        }
    };
    centre_diverging(
        &mut pictures.field,
        views.field.colormap,
        views.field.range_mode,
    );
    centre_diverging(
        &mut pictures.laplacian,
        views.laplacian.colormap,
        views.laplacian.range_mode,
    );
    Ok(pictures)
}

/// Runs `work`, adding its time to `split` as `part`.
pub fn timed<T>(
    split: &mut Vec<(FramePart, Duration)>,
    part: FramePart,
    work: impl FnOnce() -> T,
) -> T {
    let timer = Instant::now();
    let value = work();
    split.push((part, timer.elapsed()));
    value
}
