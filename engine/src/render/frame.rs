//! Drawing one frame of a running simulation, in two halves (the app's simulation thread and
//! `heatlab bench --display` run these). [`reduce_frame`] asks the backend
//! for both layers reduced to the size they are shown at (on CUDA: kernels, each view's colour
//! range picked where the values are, and one copy of each view's values through page-locked
//! memory, behind one wait) and, when due, the statistics (reduced on the device too).
//! [`colour_frame`] then picks each view's range where the backend did not and colours it on
//! the host, into the pixel buffers of pictures the UI has finished with ([`SpareBuffers`]): a
//! new megabyte per picture, freed on the UI's thread, cost page faults on every frame. The GPU is needed only
//! for the first half, so while stepping overlaps drawing the next frame's steps are queued
//! between the two. Each part's time goes into the frame's split.

use std::fmt;
use std::time::{Duration, Instant};

use super::preview::colour_ranged;
use super::{Colormap, Preview, PreviewRequest};
use crate::compute::{BackendKind, Boundary, Layer, ReducedPreview};
use crate::grid::{RangeMode, ValueRange};
use crate::sim::{FieldStats, Simulation};

/// How one view should be rendered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewRequest {
    /// Colours.
    pub colormap: Colormap,
    /// How the colour range is chosen.
    pub range_mode: RangeMode,
    /// Largest preview in pixels (the on-screen size, times the zoom).
    pub max_size: (usize, usize),
}

/// Field and Laplacian view requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewRequests {
    /// The field view.
    pub field: ViewRequest,
    /// The Laplacian view.
    pub laplacian: ViewRequest,
}

impl Default for ViewRequests {
    fn default() -> Self {
        let view = ViewRequest {
            colormap: Colormap::Viridis,
            range_mode: RangeMode::MinMax,
            max_size: (512, 512),
        };
        Self {
            field: view,
            laplacian: ViewRequest {
                range_mode: RangeMode::LAPLACIAN_DEFAULT,
                ..view
            },
        }
    }
}

/// A named part of a frame's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FramePart {
    /// Advancing the field (device time on CUDA).
    Stepping,
    /// Computing the Laplacian and reducing it to the display size (CPU).
    Laplacian,
    /// Reducing the field to the display size (CPU).
    Reduce,
    /// Both layers reduced on the device and the reduced values copied to the host (CUDA:
    /// block-mean kernels, the Laplacian's computing it as it reads the field, the views'
    /// colour ranges, copy through page-locked memory).
    DevicePreview,
    /// Picking each view's range and colouring the reduced values (host).
    Colour,
    /// Total heat, minimum and maximum.
    Statistics,
    /// Writing recorded frames.
    Recording,
    /// Reading the probes' and the line profile's cells.
    Sampling,
    /// Handing the pictures to the GPU of the display (measured on the UI thread).
    TextureUpload,
    /// Isotherms, heat-flux arrows and the scale bar over the field (on the UI thread).
    Overlays,
}

impl FramePart {
    /// Every part, in the order the timings panel lists them.
    pub const ALL: [Self; 10] = [
        Self::Stepping,
        Self::Laplacian,
        Self::Reduce,
        Self::DevicePreview,
        Self::Colour,
        Self::Statistics,
        Self::Recording,
        Self::Sampling,
        Self::TextureUpload,
        Self::Overlays,
    ];
}

impl fmt::Display for FramePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Stepping => "stepping",
            Self::Laplacian => "Laplacian",
            Self::Reduce => "reduce",
            Self::DevicePreview => "GPU reduce + copy",
            Self::Colour => "range + colours",
            Self::Statistics => "statistics",
            Self::Recording => "recording",
            Self::Sampling => "probes",
            Self::TextureUpload => "texture upload",
            Self::Overlays => "overlays",
        })
    }
}

/// How a GPU backend's half of a frame runs (a CPU backend reduces each layer in turn either
/// way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramePath {
    /// Both layers queued at once with their colour ranges picked on the device, one wait
    /// ([`crate::compute::Backend::reduce_previews_into`]): what the app does.
    Batched,
    /// One layer after the other, a wait for each, the ranges picked on the host (the path
    /// before the batched one, kept as the bench's baseline).
    OneByOne,
}

/// Both layers reduced to their views' sizes (with their colour ranges when the backend
/// picked them) and, when due, the statistics.
pub struct ReducedFrame {
    field: ReducedPreview,
    laplacian: ReducedPreview,
    ranges: [Option<ValueRange>; 2],
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
    spares: &mut SpareBuffers,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<ReducedFrame> {
    reduce_frame_by(FramePath::Batched, sim, views, stats_due, spares, split)
}

/// A frame whose two previews are queued on the device (see [`queue_frame`]).
pub struct QueuedFrame {
    requests: [PreviewRequest; 2],
}

/// Queues the frame's two previews on the device without waiting for them, where the backend
/// can (a GPU), so that the next steps can be queued behind them before [`take_queued_frame`]
/// waits for the previews alone; `None` where the backend reduces at once (then use
/// [`reduce_frame`]). No statistics: a frame that owes them reduces with [`reduce_frame`].
pub fn queue_frame(
    sim: &mut Simulation,
    views: ViewRequests,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<Option<QueuedFrame>> {
    let requests = preview_requests(sim.params().boundary, views);
    let queued = timed(split, FramePart::DevicePreview, || {
        let specs = requests.each_ref().map(PreviewRequest::spec);
        sim.queue_previews([&specs[0], &specs[1]])
    })?;
    Ok(queued.then_some(QueuedFrame { requests }))
}

/// The previews of a [`queue_frame`], once the device has them.
pub fn take_queued_frame(
    sim: &mut Simulation,
    queued: QueuedFrame,
    spares: &mut SpareBuffers,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<ReducedFrame> {
    let [field, laplacian] = timed(split, FramePart::DevicePreview, || {
        sim.take_queued_previews([spares.values(), spares.values()])
    })?;
    Ok(ReducedFrame {
        field: field.reduced,
        laplacian: laplacian.reduced,
        ranges: [field.range, laplacian.range],
        stats: None,
        requests: queued.requests,
    })
}

/// [`reduce_frame`] by the given path.
pub fn reduce_frame_by(
    path: FramePath,
    sim: &mut Simulation,
    views: ViewRequests,
    stats_due: bool,
    spares: &mut SpareBuffers,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<ReducedFrame> {
    let requests = preview_requests(sim.params().boundary, views);
    let mut ranges = [None, None];
    let (field, laplacian) = if sim.backend().kind() == BackendKind::Cpu {
        // On the CPU the Laplacian is computed at full resolution: its own part.
        let field = timed(split, FramePart::Reduce, || {
            sim.reduce_preview_into(&requests[0].spec(), spares.values())
        })?;
        let laplacian = timed(split, FramePart::Laplacian, || {
            sim.reduce_preview_into(&requests[1].spec(), spares.values())
        })?;
        (field, laplacian)
    } else if path == FramePath::Batched {
        let [field, laplacian] = timed(split, FramePart::DevicePreview, || {
            let specs = requests.map(|request| request.spec());
            sim.reduce_previews_into([&specs[0], &specs[1]], [spares.values(), spares.values()])
        })?;
        ranges = [field.range, laplacian.range];
        (field.reduced, laplacian.reduced)
    } else {
        timed(split, FramePart::DevicePreview, || {
            let field = sim.reduce_preview_into(&requests[0].spec(), spares.values())?;
            let laplacian = sim.reduce_preview_into(&requests[1].spec(), spares.values())?;
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
        ranges,
        stats,
        requests,
    })
}

/// What the two views ask the backend for: the field and its Laplacian (at `boundary`).
pub fn preview_requests(boundary: Boundary, views: ViewRequests) -> [PreviewRequest; 2] {
    let request = |layer: Layer, view: ViewRequest| PreviewRequest {
        layer,
        boundary,
        colormap: view.colormap,
        range_mode: view.range_mode,
        max_size: view.max_size,
    };
    [
        request(Layer::Field, views.field),
        request(Layer::Laplacian, views.laplacian),
    ]
}

/// What the statistics cost in a frame's `split`.
pub fn statistics_cost(split: &[(FramePart, Duration)]) -> Duration {
    split
        .iter()
        .filter(|(part, _)| *part == FramePart::Statistics)
        .map(|(_, time)| *time)
        .sum()
}

/// Buffers of pictures the UI no longer shows (their values and pixels), handed back to be
/// reduced and coloured into again.
#[derive(Default)]
pub struct SpareBuffers {
    values: Vec<Vec<f32>>,
    rgba: Vec<Vec<u8>>,
}

impl SpareBuffers {
    /// At most this many buffers of each kind are kept: one per view.
    const KEPT: usize = 2;

    /// Takes back pictures the UI has replaced: their buffers are kept for reuse and the rest
    /// is freed here, on the thread that allocated it. A buffer much larger than its picture
    /// (left from a larger view, zoomed out since) is freed rather than kept.
    pub fn take_back(&mut self, pictures: Vec<Preview>) {
        fn fits<T>(buffer: &Vec<T>) -> bool {
            buffer.capacity() <= 2 * buffer.len().max(1)
        }
        for picture in pictures {
            if self.rgba.len() < Self::KEPT && fits(&picture.rgba) {
                self.rgba.push(picture.rgba);
            }
            let values = picture.values.into_vec();
            if self.values.len() < Self::KEPT && fits(&values) {
                self.values.push(values);
            }
        }
    }

    /// A buffer to reduce into: a spare one when there is one (its length does not matter).
    fn values(&mut self) -> Vec<f32> {
        self.values.pop().unwrap_or_default()
    }

    /// A buffer to colour into: a spare one when there is one (its length does not matter).
    fn rgba(&mut self) -> Vec<u8> {
        self.rgba.pop().unwrap_or_default()
    }
}

/// The host's half of a frame: each view's range picked and its values coloured (diverging
/// colormaps centred on zero) into spare buffers, timed as colormapping.
pub fn colour_frame(
    reduced: ReducedFrame,
    spares: &mut SpareBuffers,
    split: &mut Vec<(FramePart, Duration)>,
) -> FramePictures {
    let ReducedFrame {
        field,
        laplacian,
        ranges: [field_range, laplacian_range],
        stats,
        requests: [field_request, laplacian_request],
    } = reduced;
    let (field_rgba, laplacian_rgba) = (spares.rgba(), spares.rgba());
    timed(split, FramePart::Colour, || {
        let (field, laplacian) = rayon::join(
            || colour_ranged(field, field_range, &field_request, field_rgba),
            || {
                colour_ranged(
                    laplacian,
                    laplacian_range,
                    &laplacian_request,
                    laplacian_rgba,
                )
            },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::Boundary;
    use crate::grid::{Grid, GridSize};
    use crate::render::preview::colour_reduced;
    use crate::render::Colormap;

    fn reduced_frame() -> ReducedFrame {
        let size = GridSize::new(64, 48).unwrap();
        let grid = |scale: f32| {
            let values = (0..size.cells())
                .map(|i| ((i * 7919) % 1013) as f32 * scale - 1.0)
                .collect();
            Grid::from_vec(size, values).unwrap()
        };
        let views = ViewRequests::default();
        let request = |layer, view: ViewRequest| PreviewRequest {
            layer,
            boundary: Boundary::Neumann,
            colormap: Colormap::Coolwarm,
            range_mode: view.range_mode,
            max_size: (32, 32),
        };
        ReducedFrame {
            field: ReducedPreview::of(&grid(0.01), (32, 32)),
            laplacian: ReducedPreview::of(&grid(-0.3), (32, 32)),
            ranges: [None, None],
            stats: None,
            requests: [
                request(Layer::Field, views.field),
                request(Layer::Laplacian, views.laplacian),
            ],
        }
    }

    #[test]
    fn a_frame_is_coloured_into_the_buffers_given_back() {
        let mut spares = SpareBuffers::default();
        let mut split = Vec::new();
        let first = colour_frame(reduced_frame(), &mut spares, &mut split);
        assert_eq!(split.len(), 1);
        // Each picture as it is coloured on its own, into a new buffer.
        let ReducedFrame {
            field,
            laplacian,
            requests,
            ..
        } = reduced_frame();
        assert_eq!(first.field, colour_reduced(field, &requests[0], Vec::new()));
        assert_eq!(
            first.laplacian,
            colour_reduced(laplacian, &requests[1], Vec::new())
        );
        // The UI hands the pictures back (with stale pixels, as after another colormap): the
        // next frame is coloured in their storage and is the same picture.
        let mut storage = vec![first.field.rgba.as_ptr(), first.laplacian.rgba.as_ptr()];
        let expected = (first.field.clone(), first.laplacian.clone());
        spares.take_back(vec![first.field, first.laplacian]);
        spares.rgba.iter_mut().for_each(|rgba| rgba.fill(0));
        let second = colour_frame(reduced_frame(), &mut spares, &mut split);
        assert!(spares.rgba.is_empty());
        let mut used = vec![second.field.rgba.as_ptr(), second.laplacian.rgba.as_ptr()];
        used.sort();
        storage.sort();
        assert_eq!(used, storage);
        assert_eq!((second.field, second.laplacian), expected);
    }

    #[test]
    fn a_frame_is_reduced_into_the_values_given_back() {
        let size = GridSize::new(90, 70).unwrap();
        let initial = Grid::from_vec(
            size,
            (0..size.cells())
                .map(|i| ((i * 7919) % 1013) as f32 - 500.0)
                .collect(),
        )
        .unwrap();
        let backend = Box::new(crate::compute::CpuBackend::with_threads(2));
        let mut sim = Simulation::new(backend, initial, Default::default()).unwrap();
        let views = ViewRequests {
            field: ViewRequest {
                max_size: (32, 32),
                ..ViewRequests::default().field
            },
            laplacian: ViewRequest {
                max_size: (32, 32),
                ..ViewRequests::default().laplacian
            },
        };
        let mut spares = SpareBuffers::default();
        let mut split = Vec::new();
        let first = reduce_frame(&mut sim, views, false, &mut spares, &mut split).unwrap();
        let first = colour_frame(first, &mut spares, &mut split);
        // Spare buffers of another size, with stale values in them.
        spares.take_back(vec![first.field.clone(), first.laplacian.clone()]);
        spares.values.iter_mut().for_each(|values| {
            values.fill(f32::NAN);
            values.extend([1.0; 3000]);
        });
        let mut storage: Vec<*const f32> = spares.values.iter().map(|v| v.as_ptr()).collect();
        let second = reduce_frame(&mut sim, views, false, &mut spares, &mut split).unwrap();
        assert!(spares.values.is_empty());
        let mut used = vec![
            second.field.values.as_slice().as_ptr(),
            second.laplacian.values.as_slice().as_ptr(),
        ];
        used.sort();
        storage.sort();
        assert_eq!(used, storage);
        let second = colour_frame(second, &mut spares, &mut split);
        assert_eq!(
            (second.field, second.laplacian),
            (first.field, first.laplacian)
        );
    }

    #[test]
    fn only_a_few_buffers_are_kept() {
        let mut spares = SpareBuffers::default();
        let pictures = colour_frame(reduced_frame(), &mut spares, &mut Vec::new());
        for _ in 0..5 {
            spares.take_back(vec![pictures.field.clone(), pictures.laplacian.clone()]);
        }
        assert_eq!(spares.rgba.len(), SpareBuffers::KEPT);
        assert_eq!(spares.values.len(), SpareBuffers::KEPT);
        // Buffers left from a much larger picture are not kept.
        let mut spares = SpareBuffers::default();
        let mut shrunk = pictures.field.clone();
        shrunk.rgba.reserve(10 * shrunk.rgba.len());
        spares.take_back(vec![shrunk]);
        assert!(spares.rgba.is_empty());
        assert_eq!(spares.values.len(), 1);
    }
}
