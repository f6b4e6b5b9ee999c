//! Display previews of a running simulation, so that a GPU backend can reduce and colormap on
//! the device and only the picture crosses to the host. Kept in its own file: the GUI needs it,
//! the rest of `Simulation` does not. The request holds plain values (`compute::PreviewSpec`);
//! `render` turns it into what the screen shows.

use super::Simulation;
use crate::compute::{PreviewPixels, PreviewSpec};
use crate::error::Result;

impl Simulation {
    /// The current field or its Laplacian (under `spec.boundary`) reduced to fit
    /// `spec.max_size` and coloured through `spec.table`, by the backend.
    pub fn render_preview(&mut self, spec: &PreviewSpec<'_>) -> Result<PreviewPixels> {
        self.backend.render_preview(spec)
    }
}
