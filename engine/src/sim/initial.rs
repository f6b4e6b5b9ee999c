//! Where a run's initial field is kept: on the host, or (a field generated on the GPU) only
//! on the device, copied to the host the first time something needs it there (saving a state
//! or a scenario, another backend). Dragging a field parameter at 8192² then regenerates
//! without the field crossing the bus twice per field; Reset copies it on the device.

use super::problem::ActiveProblem;
use super::Simulation;
use crate::compute::Backend;
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::problem::HeatProblem;

/// The initial field of a run.
pub(super) struct InitialField {
    size: GridSize,
    /// The field on the host; `None` while only the backend keeps it.
    host: Option<Grid>,
}

impl InitialField {
    /// A field held on the host.
    pub(super) fn on_host(grid: Grid) -> Self {
        Self {
            size: grid.size(),
            host: Some(grid),
        }
    }

    /// The field `backend` holds now, of `size`: kept where it is when the backend can (no
    /// copy to the host), downloaded otherwise.
    pub(super) fn held_by(backend: &mut dyn Backend, size: GridSize) -> Result<Self> {
        match backend.keep_initial() {
            Ok(true) => return Ok(Self { size, host: None }),
            Ok(false) => {}
            // A rank of a split field could not keep its rows: the whole field may be more
            // than this host holds, so the failure is the run's.
            Err(error @ HeatlabError::OnRank { .. }) => return Err(error),
            // No room for a second copy on the device, say: the host keeps it instead.
            Err(error) => log::warn!("the initial field is kept on the host: {error}"),
        }
        Ok(Self::on_host(backend.download()?))
    }

    /// Its size.
    pub(super) fn size(&self) -> GridSize {
        self.size
    }

    /// The field on the host, if it is there.
    fn host(&self) -> Option<&Grid> {
        self.host.as_ref()
    }
}

impl Simulation {
    /// Starts a simulation of the field of `size` that `backend` holds now (read where it is
    /// held, as [`Backend::load_npy_where_held`] reads one), kept as the initial field where
    /// it is when the backend can.
    pub fn of_held(
        mut backend: Box<dyn Backend>,
        size: GridSize,
        params: crate::compute::StepParams,
    ) -> Result<Self> {
        let initial = InitialField::held_by(backend.as_mut(), size)?;
        Ok(Self::holding(backend, initial, params, 0))
    }

    /// The size of the initial field (and of the current one).
    pub fn initial_size(&self) -> GridSize {
        self.initial.size()
    }

    /// The initial field, for Reset; copied from the device the first time it is asked for
    /// when it was generated there.
    pub fn initial(&mut self) -> Result<&Grid> {
        if self.initial.host.is_none() {
            // Queued on the device's stream after any steps in flight, which it does not wait for.
            self.initial.host = Some(self.backend.download_initial()?);
        }
        self.initial
            .host()
            .ok_or_else(|| HeatlabError::Internal("the initial field went missing".into()))
    }

    /// The initial field and the heat problem stepped, if any (what a saved scenario holds).
    pub fn initial_and_problem(&mut self) -> Result<(&Grid, Option<&HeatProblem>)> {
        self.initial()?;
        let initial = self
            .initial
            .host()
            .ok_or_else(|| HeatlabError::Internal("the initial field went missing".into()))?;
        Ok((initial, self.problem.as_ref().map(|a| &a.problem)))
    }

    /// Whether the initial field is (also) on the host.
    pub fn initial_on_host(&self) -> bool {
        self.initial.host.is_some()
    }

    /// Makes `grid` the initial field, kept on the host.
    pub(super) fn set_initial(&mut self, grid: Grid) {
        self.backend.forget_initial();
        self.initial = InitialField::on_host(grid);
    }

    /// Makes the field the backend holds now the initial field: kept where it is when the
    /// backend can (no copy to the host), downloaded otherwise.
    pub(super) fn keep_held_as_initial(&mut self, size: GridSize) -> Result<()> {
        self.initial = InitialField::held_by(self.backend.as_mut(), size)?;
        Ok(())
    }

    /// Puts the initial field back as the held one: on the device when it is kept there.
    pub(super) fn restore_initial_field(&mut self) -> Result<()> {
        let size = self.initial.size();
        match self.initial.host.take() {
            Some(grid) => {
                let uploaded = self.upload_with_problem(&grid);
                self.initial.host = Some(grid);
                uploaded
            }
            None => self.with_problem_after(size, |backend| backend.restore_initial()),
        }
    }

    /// The initial field on the host before the backend is replaced (the next one does not
    /// hold the old one's copy).
    pub(super) fn initial_to_host(&mut self) -> Result<()> {
        self.initial()?;
        self.backend.forget_initial();
        Ok(())
    }

    /// Runs `replace`, which leaves the backend holding a field of `size`, and gives the
    /// backend the simulation's problem again (a problem of another size is dropped), as
    /// [`Simulation::upload_with_problem`] does for an upload.
    pub(super) fn with_problem_after(
        &mut self,
        size: GridSize,
        replace: impl FnOnce(&mut dyn Backend) -> Result<()>,
    ) -> Result<()> {
        let active: Option<ActiveProblem> = self.problem.take();
        let result =
            replace(self.backend.as_mut()).and_then(|()| self.give_problem(size, active.as_ref()));
        self.problem = active.filter(|a| a.problem.size == size);
        self.invalidate_energy_mark();
        result
    }
}
