//! Display previews of a running simulation, so that a GPU backend can reduce and colormap on
//! the device and only the picture crosses to the host. Kept in its own file: the GUI needs it,
//! the rest of `Simulation` does not.

use super::Simulation;
use crate::error::Result;
use crate::render::{Preview, PreviewRequest};

impl Simulation {
    /// A colormapped picture of the current field or its Laplacian (under `request.boundary`),
    /// reduced to fit `request.max_size`, rendered by the backend.
    pub fn render_preview(&mut self, request: &PreviewRequest) -> Result<Preview> {
        self.backend.render_preview(request)
    }
}
