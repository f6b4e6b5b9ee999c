//! Replacing the current field from outside a run (a notebook's `set_temperature`): the step,
//! the simulated time, the initial field and the heat problem stay; the field's buffers stay
//! where the size is the same, so that views other libraries hold of them stay valid.

use super::Simulation;
use crate::compute::cuda::ForeignDeviceArray;
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

impl Simulation {
    /// Makes `field` (of the simulation's size) the current field.
    pub fn overwrite_field(&mut self, field: &Grid) -> Result<()> {
        self.check_overwrite_size(field.size())?;
        self.before_overwrite()?;
        self.backend.upload(field)
    }

    /// Makes a device array of another library in this process (of the simulation's size, on
    /// its GPU) the current field, copied on the GPU; only the CUDA backend can.
    pub fn overwrite_field_from_device(&mut self, source: &ForeignDeviceArray) -> Result<()> {
        self.check_overwrite_size(source.size)?;
        self.before_overwrite()?;
        match self.backend.cuda_mut() {
            Some(cuda) => cuda.overwrite_from_device(source),
            None => Err(HeatlabError::InvalidInput(
                "this simulation runs on the CPU: pass a NumPy array (or copy the device array \
                 to the host first)"
                    .into(),
            )),
        }
    }

    fn check_overwrite_size(&self, size: GridSize) -> Result<()> {
        let ours = self.initial_size();
        if size == ours {
            return Ok(());
        }
        Err(HeatlabError::InvalidInput(format!(
            "the array is {size} (rows × columns); this simulation's field is {ours}"
        )))
    }

    /// Settles queued work and drops what the old field's values were part of: the window of
    /// the agreement check, the strokes' undo, the last good state, the energy mark.
    fn before_overwrite(&mut self) -> Result<()> {
        self.settle()?;
        self.interrupt_agreement();
        self.paint.clear();
        self.last_good = None;
        self.invalidate_energy_mark();
        Ok(())
    }
}
