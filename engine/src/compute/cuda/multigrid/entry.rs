//! The backend's way into the solver: the device grids built once per solver and kept, the
//! field checked against the problem, then the solve on them.

use std::sync::Arc;

use super::super::CudaBackend;
use super::{CudaSolve, DeviceMultigrid};
use crate::error::{HeatlabError, Result};
use crate::solve::{solve_on, ProblemSolver, SolveOptions, SolveReport, SolveRequest};

impl CudaBackend {
    /// [`crate::compute::Backend::solve_problem`] on the device.
    pub(in crate::compute::cuda) fn solve_on_device(
        &mut self,
        solver: &Arc<ProblemSolver>,
        request: SolveRequest,
        options: &SolveOptions,
    ) -> Result<SolveReport> {
        self.settle()?;
        self.lookahead = None;
        self.last_params = None;
        let grids = match self.solver_grids.take() {
            Some(grids) if Arc::ptr_eq(&grids.solver, solver) => grids,
            Some(_) | None => DeviceMultigrid::new(&self.device, solver.clone())?,
        };
        let grids = self.solver_grids.insert(grids);
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
        if buffers.size.cells() != solver.fine().cells() {
            return Err(HeatlabError::InvalidInput(format!(
                "the solver's problem has {} cells but the field has {}",
                solver.fine().cells(),
                buffers.size.cells()
            )));
        }
        let mut solve = CudaSolve {
            grids,
            field: &mut buffers.current,
        };
        solve_on(&mut solve, solver, request, options)
    }
}
