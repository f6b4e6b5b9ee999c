//! Display previews of a running simulation, so that a GPU backend can reduce on the device
//! and only the reduced values cross to the host. Kept in its own file: the GUI needs it,
//! the rest of `Simulation` does not. The request holds plain values (`compute::PreviewSpec`);
//! `render` turns it into what the screen shows.

use super::Simulation;
use crate::compute::{PreviewPixels, PreviewSpec, RangedPreview, ReducedPreview};
use crate::error::Result;

impl Simulation {
    /// The current field or its Laplacian (under `spec.boundary`) reduced to fit
    /// `spec.max_size` and coloured through `spec.table`, by the backend.
    pub fn render_preview(&mut self, spec: &PreviewSpec<'_>) -> Result<PreviewPixels> {
        self.backend.render_preview(spec)
    }

    /// The current field or its Laplacian reduced to fit `spec.max_size` by the backend, not
    /// yet coloured (the app colours on its own time while the GPU steps on).
    pub fn reduce_preview(&mut self, spec: &PreviewSpec<'_>) -> Result<ReducedPreview> {
        self.backend.reduce_preview(spec)
    }

    /// [`Self::reduce_preview`], the values written into `storage` (reused when it is large
    /// enough: the values of a picture no longer shown).
    pub fn reduce_preview_into(
        &mut self,
        spec: &PreviewSpec<'_>,
        storage: Vec<f32>,
    ) -> Result<ReducedPreview> {
        self.backend.reduce_preview_into(spec, storage)
    }

    /// Both views of a frame reduced by the backend at once, with their ranges when it picks
    /// them (see [`crate::compute::Backend::reduce_previews_into`]).
    pub fn reduce_previews_into(
        &mut self,
        specs: [&PreviewSpec<'_>; 2],
        storage: [Vec<f32>; 2],
    ) -> Result<[RangedPreview; 2]> {
        self.backend.reduce_previews_into(specs, storage)
    }

    /// Queues both views of a frame on the device without waiting (see
    /// [`crate::compute::Backend::queue_previews`]); `false` where the backend reduces at once.
    pub fn queue_previews(&mut self, specs: [&PreviewSpec<'_>; 2]) -> Result<bool> {
        self.backend.queue_previews(specs)
    }

    /// The views queued by [`Self::queue_previews`].
    pub fn take_queued_previews(&mut self, storage: [Vec<f32>; 2]) -> Result<[RangedPreview; 2]> {
        self.backend.take_queued_previews(storage)
    }
}
