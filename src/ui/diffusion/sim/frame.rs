//! Drawing one frame on the simulation thread, in two halves. [`reduce_frame`] asks the backend
//! for both layers reduced to the size they are shown at (on CUDA: kernels and a copy of the
//! reduced values, through page-locked memory) and, when due, the statistics (reduced on the
//! device too). [`colour_frame`] then picks each view's range and colours it on the host. The
//! GPU is needed only for the first half, so while stepping overlaps drawing the next frame's
//! steps are queued between the two. Each part's time goes into the frame's split.

use std::time::{Duration, Instant};

use crate::compute::{BackendKind, Layer, ReducedPreview};
use crate::render::preview::centre_diverging;
use crate::render::{Preview, PreviewRequest};
use crate::sim::{FieldStats, Simulation};

use super::messages::{FramePart, ViewRequest, ViewRequests};

/// Both layers reduced to their views' sizes and, when due, the statistics.
pub struct ReducedFrame {
    field: ReducedPreview,
    laplacian: ReducedPreview,
    stats: Option<FieldStats>,
    requests: [PreviewRequest; 2],
}

/// The two previews and, when due, the statistics.
pub struct FramePictures {
    /// The field view's picture.
    pub field: Preview,
    /// The Laplacian view's picture.
    pub laplacian: Preview,
    /// Total heat, minimum and maximum, when they were due.
    pub stats: Option<FieldStats>,
}

/// The backend's half of a frame: both layers reduced (and the statistics when `stats_due`),
/// adding each part's time to `split`.
pub fn reduce_frame(
    sim: &mut Simulation,
    views: ViewRequests,
    stats_due: bool,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<ReducedFrame> {
    let boundary = sim.params().boundary;
    let request = |layer: Layer, view: ViewRequest| PreviewRequest {
        layer,
        boundary,
        colormap: view.colormap,
        range_mode: view.range_mode,
        max_size: view.max_size,
    };
    let requests = [
        request(Layer::Field, views.field),
        request(Layer::Laplacian, views.laplacian),
    ];
    let (field, laplacian) = if sim.backend().kind() == BackendKind::Cpu {
        // On the CPU the Laplacian is computed at full resolution: its own part.
        let field = timed(split, FramePart::Reduce, || {
            sim.reduce_preview(&requests[0].spec())
        })?;
        let laplacian = timed(split, FramePart::Laplacian, || {
            sim.reduce_preview(&requests[1].spec())
        })?;
        (field, laplacian)
    } else {
        timed(split, FramePart::DevicePreview, || {
            let field = sim.reduce_preview(&requests[0].spec())?;
            let laplacian = sim.reduce_preview(&requests[1].spec())?;
            crate::Result::Ok((field, laplacian))
        })?
    };
    let stats = if stats_due {
        Some(timed(split, FramePart::Statistics, || sim.statistics())?)
    } else {
        None
    };
    Ok(ReducedFrame {
        field,
        laplacian,
        stats,
        requests,
    })
}

/// The host's half of a frame: each view's range picked and its values coloured (diverging
/// colormaps centred on zero), timed as colormapping.
pub fn colour_frame(
    reduced: ReducedFrame,
    views: ViewRequests,
    split: &mut Vec<(FramePart, Duration)>,
) -> FramePictures {
    let ReducedFrame {
        field,
        laplacian,
        stats,
        requests: [field_request, laplacian_request],
    } = reduced;
    timed(split, FramePart::Colour, || {
        let (mut field, mut laplacian) = rayon::join(
            || Preview::from(field.colour(&field_request.spec())),
            || Preview::from(laplacian.colour(&laplacian_request.spec())),
        );
        centre_diverging(&mut field, views.field.colormap, views.field.range_mode);
        centre_diverging(
            &mut laplacian,
            views.laplacian.colormap,
            views.laplacian.range_mode,
        );
        FramePictures {
            field,
            laplacian,
            stats,
        }
    })
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
