//! The run's initial field kept on the device: a new jagged field (generated there) or Reset
//! then costs a copy on the GPU instead of one through the host (at 8192², 268 MB each way).
//! The host asks for a copy only when it needs the field itself (saving, another backend).

use cudarc::driver::CudaSlice;

use super::{driver_error, CudaBackend};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

/// The kept initial field and its size.
pub(super) struct KeptInitial {
    size: GridSize,
    values: CudaSlice<f32>,
}

impl CudaBackend {
    /// Copies the held field into the kept initial field (on the device).
    pub(super) fn keep_initial_on_device(&mut self) -> Result<()> {
        self.settle()?;
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_ref().ok_or(HeatlabError::NoField)?;
        let size = buffers.size;
        if self
            .kept_initial
            .as_ref()
            .is_some_and(|kept| kept.size != size)
        {
            // Free the old one before allocating its replacement.
            self.kept_initial = None;
        }
        let kept = match self.kept_initial.take() {
            Some(kept) => kept,
            None => KeptInitial {
                size,
                values: stream
                    .alloc_zeros::<f32>(size.cells())
                    .map_err(driver_error("allocating the initial field"))?,
            },
        };
        let kept = self.kept_initial.insert(kept);
        stream
            .memcpy_dtod(&buffers.current, &mut kept.values)
            .map_err(driver_error("keeping the initial field"))
    }

    /// Makes the kept initial field the held one.
    pub(super) fn restore_initial_on_device(&mut self) -> Result<()> {
        self.settle()?;
        let kept = self.kept_initial.as_ref().ok_or_else(not_kept)?;
        let same_size = self.buffers.as_ref().is_some_and(|b| b.size == kept.size);
        if !same_size {
            // The field's buffers went with a failed generation of another size: as an upload.
            let grid = self.download_initial_from_device()?;
            return crate::compute::Backend::upload(self, &grid);
        }
        // What was computed from the field held before is stale now.
        self.lookahead = None;
        self.last_params = None;
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
        stream
            .memcpy_dtod(&kept.values, &mut buffers.current)
            .map_err(driver_error("restoring the initial field"))
    }

    /// A copy of the kept initial field on the host.
    pub(super) fn download_initial_from_device(&mut self) -> Result<Grid> {
        let stream = self.device.stream().clone();
        let kept = self.kept_initial.as_ref().ok_or_else(not_kept)?;
        let data = stream
            .clone_dtoh(&kept.values)
            .map_err(driver_error("downloading the initial field"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the initial field"))?;
        Grid::from_vec(kept.size, data)
    }
}

fn not_kept() -> HeatlabError {
    HeatlabError::Internal("no initial field is kept on the GPU".into())
}
