//! The overlays of a field picture computed together, as the app draws them each frame and
//! `heatlab bench --display` times them: isotherms at typed or automatic levels and heat-flux
//! arrows, over the part of a preview on screen.

use std::sync::LazyLock;

use super::contour::{self, nice_levels, Segment, Window};
use super::flux::{self, Arrow, Conductivity, FluxSource};
use super::Preview;
use crate::grid::GridSize;

/// About this many automatic levels over the values on screen.
pub const AUTO_LEVELS: usize = 10;

/// Isotherms are traced through at most about this many values along each side of the
/// window: a picture's pixels, or fewer for a large picture (where a square is under two
/// pixels on screen), which bounds their cost and their number of segments.
pub const MAX_TRACED_SIDE: usize = 320;

/// What to compute.
#[derive(Debug, Clone)]
pub struct OverlayRequest<'a> {
    /// The preview's values on screen.
    pub window: Window,
    /// Isotherms at these levels, or (`None`) at about [`AUTO_LEVELS`] round levels over the
    /// values on screen; no isotherms when `isotherms` is off.
    pub levels: Option<Vec<f32>>,
    /// Whether to compute isotherms.
    pub isotherms: bool,
    /// Arrows every this many preview values (`None`: no arrows).
    pub arrow_step: Option<usize>,
    /// Each cell's conductivity.
    pub conductivity: &'a Conductivity<'a>,
    /// A cell's side in metres (1 on the tutorial's plate).
    pub spacing: f64,
}

/// Isotherms and arrows, in cells of the full field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlay {
    /// The isotherms' pieces.
    pub segments: Vec<Segment>,
    /// The levels drawn.
    pub levels: Vec<f32>,
    /// The arrows.
    pub arrows: Vec<Arrow>,
}

/// Threads of the overlays' own pool.
const OVERLAY_THREADS: usize = 4;

/// The overlays' own threads: the window's thread computes them each frame while the
/// simulation thread colours the next frame on rayon's global pool, and in one pool the
/// overlays' work waited behind the colouring's. `None` (the global pool then) where threads
/// cannot be started.
static OVERLAY_POOL: LazyLock<Option<rayon::ThreadPool>> = LazyLock::new(|| {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(OVERLAY_THREADS);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("heatlab-overlays-{i}"))
        .build()
        .inspect_err(|error| log::warn!("overlays on the shared threads: {error}"))
        .ok()
});

/// Computes `request` over `preview` of a field of `field` cells, on the overlays' threads.
pub fn compute(preview: &Preview, field: GridSize, request: &OverlayRequest<'_>) -> Overlay {
    match OVERLAY_POOL.as_ref() {
        Some(pool) => pool.install(|| compute_here(preview, field, request)),
        None => compute_here(preview, field, request),
    }
}

fn compute_here(preview: &Preview, field: GridSize, request: &OverlayRequest<'_>) -> Overlay {
    let values = &preview.values;
    let stride = request.window.stride(MAX_TRACED_SIDE);
    let levels = match (&request.levels, request.isotherms) {
        (_, false) => Vec::new(),
        (Some(typed), true) => typed.clone(),
        (None, true) => contour::window_range(values, &request.window, stride)
            .map_or_else(Vec::new, |(lo, hi)| nice_levels(lo, hi, AUTO_LEVELS)),
    };
    let window = &request.window;
    let segments = contour::isotherms(values, preview.factor, field, window, &levels, stride);
    let arrows = match request.arrow_step {
        Some(step) => {
            let source = FluxSource {
                values,
                factor: preview.factor,
                field,
                conductivity: request.conductivity,
                spacing: request.spacing,
            };
            flux::arrows(&source, &request.window, step)
        }
        None => Vec::new(),
    };
    Overlay {
        segments,
        levels,
        arrows,
    }
}
