//! Display previews: a field (or its Laplacian) reduced to the size it is shown at, then
//! colormapped. Reducing first keeps the display cheap however large the field is. The backend
//! does the heavy part (on the GPU when there is one) from plain values; this module asks it in
//! display terms and keeps diverging maps centred on zero.

use super::{Colormap, RangeMode, ValueRange};
use crate::compute::preview::preview_on_cpu;
use crate::compute::{Backend, Boundary, Layer, PreviewPixels, PreviewSpec, ReducedPreview};
use crate::error::Result;
use crate::grid::Grid;

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PreviewRequest {
    /// Field or Laplacian.
    pub layer: Layer,
    /// Boundary for the Laplacian.
    pub boundary: Boundary,
    /// Colours.
    pub colormap: Colormap,
    /// How the colour range is chosen (from the reduced values).
    pub range_mode: RangeMode,
    /// Largest width and height in pixels; the field is block-averaged down to fit.
    pub max_size: (usize, usize),
}

impl PreviewRequest {
    /// The request in the backend's plain terms.
    pub fn spec(&self) -> PreviewSpec<'static> {
        PreviewSpec {
            layer: self.layer,
            boundary: self.boundary,
            max_size: self.max_size,
            table: self.colormap.table(),
            range: self.range_mode,
        }
    }
}

/// A reduced, colormapped picture and the values behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// Cells of the full field per preview pixel along each axis.
    pub factor: usize,
    /// The reduced values (block means), for hover readouts and colorbars.
    pub values: Grid,
    /// RGBA bytes of `values`, 4 per pixel, row-major.
    pub rgba: Vec<u8>,
    /// The colour range used.
    pub range: ValueRange,
}

impl From<PreviewPixels> for Preview {
    fn from(pixels: PreviewPixels) -> Self {
        Self {
            factor: pixels.factor,
            values: pixels.values,
            rgba: pixels.rgba,
            range: pixels.range,
        }
    }
}

/// Renders a preview of `grid` (already the requested layer) on the CPU.
pub fn render_preview(grid: &Grid, request: &PreviewRequest) -> Preview {
    preview_on_cpu(grid, &request.spec()).into()
}

/// Renders a preview of the field `backend` holds (or its Laplacian), on its device.
pub fn render_on(backend: &mut dyn Backend, request: &PreviewRequest) -> Result<Preview> {
    backend.render_preview(&request.spec()).map(Preview::from)
}

/// The range a picture is coloured over: `range` (computed from the values under
/// `range_mode`), except that a diverging colormap is only readable when its middle colour is
/// zero, so for those a computed range (min-max or percentile) is widened to be symmetric about
/// zero. Fixed ranges are left as given.
pub fn shown_range(range: ValueRange, colormap: Colormap, range_mode: RangeMode) -> ValueRange {
    if !colormap.is_diverging() || matches!(range_mode, RangeMode::Fixed(_)) {
        return range;
    }
    let half = range.min.abs().max(range.max.abs());
    ValueRange {
        min: -half,
        max: half,
    }
}

/// A preview of reduced values, its range picked as `request` says ([`shown_range`]) and
/// coloured into `rgba`'s storage (the buffer of a picture no longer shown, or a new one):
/// computed once, so a diverging map is not coloured twice.
pub fn colour_reduced(reduced: ReducedPreview, request: &PreviewRequest, rgba: Vec<u8>) -> Preview {
    colour_ranged(reduced, None, request, rgba)
}

/// [`colour_reduced`] with the range of the values under `request.range_mode` already
/// computed (`computed`: by the backend, where the values were), or `None` to compute it here.
pub fn colour_ranged(
    reduced: ReducedPreview,
    computed: Option<ValueRange>,
    request: &PreviewRequest,
    rgba: Vec<u8>,
) -> Preview {
    let computed = computed.unwrap_or_else(|| request.range_mode.resolve(&reduced.values));
    let range = shown_range(computed, request.colormap, request.range_mode);
    reduced
        .colour_over(request.colormap.table(), range, rgba)
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::preview::map_through_table;
    use crate::grid::GridSize;

    #[test]
    fn a_picture_is_coloured_over_its_shown_range() {
        let size = GridSize::new(40, 33).unwrap();
        let values: Vec<f32> = (0..size.cells())
            .map(|i| ((i * 7919) % 1013) as f32 * 0.01 - 3.0)
            .collect();
        let grid = Grid::from_vec(size, values).unwrap();
        for colormap in Colormap::ALL {
            for range_mode in [
                RangeMode::MinMax,
                RangeMode::LAPLACIAN_DEFAULT,
                RangeMode::Fixed(ValueRange {
                    min: -1.0,
                    max: 4.0,
                }),
            ] {
                let request = PreviewRequest {
                    layer: Layer::Field,
                    boundary: Boundary::Dirichlet,
                    colormap,
                    range_mode,
                    max_size: (16, 16),
                };
                let reduced = ReducedPreview::of(&grid, request.max_size);
                let computed = range_mode.resolve(&reduced.values);
                let expected = match range_mode {
                    RangeMode::Fixed(range) => range,
                    _ if colormap.is_diverging() => {
                        let half = computed.min.abs().max(computed.max.abs());
                        ValueRange {
                            min: -half,
                            max: half,
                        }
                    }
                    _ => computed,
                };
                let rgba =
                    map_through_table(reduced.values.as_slice(), colormap.table(), expected, 4);
                let picture = colour_reduced(reduced.clone(), &request, vec![9; 5]);
                assert_eq!(picture.range, expected, "{colormap} {range_mode}");
                assert!(picture.rgba == rgba, "{colormap} {range_mode}");
                assert_eq!(picture.values, reduced.values);
                assert_eq!(picture.factor, reduced.factor);
            }
        }
    }
}
