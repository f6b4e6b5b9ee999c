//! Display previews: a field (or its Laplacian) reduced to the size it is shown at, then
//! colormapped. Reducing first keeps the display cheap however large the field is. The backend
//! does the heavy part (on the GPU when there is one) from plain values; this module asks it in
//! display terms and keeps diverging maps centred on zero.

use super::{field_to_rgba, Colormap, RangeMode, ValueRange};
use crate::compute::preview::preview_on_cpu;
use crate::compute::{Backend, Boundary, Layer, PreviewPixels, PreviewSpec};
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

/// A diverging colormap is only readable when its middle colour is zero: for those, a
/// computed range (min-max or percentile) is widened to be symmetric about zero and the
/// (already reduced, so cheap) preview is coloured again. Fixed ranges are left as given.
pub fn centre_diverging(preview: &mut Preview, colormap: Colormap, range_mode: RangeMode) {
    if !colormap.is_diverging() || matches!(range_mode, RangeMode::Fixed(_)) {
        return;
    }
    let half = preview.range.min.abs().max(preview.range.max.abs());
    let centred = ValueRange {
        min: -half,
        max: half,
    };
    if centred != preview.range {
        preview.range = centred;
        preview.rgba = field_to_rgba(&preview.values, colormap, centred);
    }
}
