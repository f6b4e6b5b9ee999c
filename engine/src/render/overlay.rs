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

/// Values on screen that differ by at most this share of their magnitude (about 100 units of
/// `f32` round-off) are one temperature: no isotherm or arrow would show anything but
/// rounding.
pub const UNIFORM_SHARE: f32 = 1e-5;

/// Whether the values from `lo` to `hi` are one value up to rounding (see [`UNIFORM_SHARE`]).
pub fn is_uniform(lo: f32, hi: f32) -> bool {
    hi - lo <= UNIFORM_SHARE * lo.abs().max(hi.abs()).max(1.0)
}

fn compute_here(preview: &Preview, field: GridSize, request: &OverlayRequest<'_>) -> Overlay {
    let values = &preview.values;
    let stride = request.window.stride(MAX_TRACED_SIDE);
    let range = contour::window_range(values, &request.window, stride);
    // A uniform block (20.000 °C everywhere) has no isotherms or heat flow to draw.
    if range.is_none_or(|(lo, hi)| is_uniform(lo, hi)) {
        return Overlay::default();
    }
    let levels = match (&request.levels, request.isotherms) {
        (_, false) => Vec::new(),
        (Some(typed), true) => typed.clone(),
        (None, true) => range.map_or_else(Vec::new, |(lo, hi)| nice_levels(lo, hi, AUTO_LEVELS)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    fn preview(value: impl Fn(usize, usize) -> f32) -> Preview {
        let values = Grid::from_fn(GridSize::new(16, 16).unwrap(), value);
        Preview {
            factor: 1,
            rgba: vec![0; 16 * 16 * 4],
            range: crate::grid::ValueRange { min: 0.0, max: 1.0 },
            values,
        }
    }

    #[test]
    fn a_uniform_block_draws_no_isotherms_or_arrows() {
        let conductivity = Conductivity::uniform(1.0);
        let request = |values: &Grid| OverlayRequest {
            window: Window::all(values),
            levels: None,
            isotherms: true,
            arrow_step: Some(4),
            conductivity: &conductivity,
            spacing: 1e-3,
        };
        // 20 °C with rounding noise: nothing.
        let flat = preview(|r, c| if (r + c) % 3 == 0 { 20.0 } else { 20.000_002 });
        let size = flat.values.size();
        assert_eq!(
            compute(&flat, size, &request(&flat.values)),
            Overlay::default()
        );
        // A real gradient of a tenth of a kelvin: isotherms and arrows.
        let ramp = preview(|_, c| 20.0 + 0.01 * c as f32);
        let overlay = compute(&ramp, size, &request(&ramp.values));
        assert!(!overlay.levels.is_empty() && !overlay.segments.is_empty());
        assert_eq!(overlay.arrows.len(), 16);
    }
}
