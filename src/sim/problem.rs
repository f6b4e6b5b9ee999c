//! A heat problem held by a simulation: it steps with the problem's scheme, keeps its
//! simulated time in seconds and books its energy.

use std::sync::Arc;

use super::Simulation;
use crate::compute::ProblemUpload;
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;
use crate::problem::energy::{stored_energy, EnergyBalance};
use crate::problem::{CompiledProblem, EnergyExchange, HeatProblem};

/// The problem a simulation steps.
#[derive(Debug, Clone)]
pub struct ActiveProblem {
    /// The problem as the user built it.
    pub problem: HeatProblem,
    /// Its tables and map, shared with the live check.
    pub compiled: Arc<CompiledProblem>,
    /// Whether the backend books the energy every step.
    pub book_energy: bool,
    /// Simulated seconds since the initial field (the time steps may change with the map).
    pub elapsed_seconds: f64,
}

impl Simulation {
    /// Steps a heat problem from now on (`None`: back to the uniform stencil of the step
    /// parameters). With `book_energy` the backend also books the energy that enters each step
    /// (see [`Simulation::energy_balance`]). The field is kept; held cells are set to their
    /// temperatures.
    pub fn set_problem(&mut self, problem: Option<HeatProblem>, book_energy: bool) -> Result<()> {
        self.settle()?;
        let elapsed_seconds = self.problem.as_ref().map_or(0.0, |p| p.elapsed_seconds);
        let active = match problem {
            Some(problem) => {
                if problem.size != self.initial.size() {
                    return Err(HeatlabError::InvalidInput(format!(
                        "the problem is {} but the field is {}",
                        problem.size,
                        self.initial.size()
                    )));
                }
                let compiled = Arc::new(problem.compile()?);
                Some(ActiveProblem {
                    problem,
                    compiled,
                    book_energy,
                    elapsed_seconds,
                })
            }
            None => None,
        };
        if let Some(active) = &active {
            let mut field = self.backend.download()?;
            active.problem.apply_held(&mut field)?;
            self.upload_field(&field, Some(active))?;
        } else {
            self.backend.set_problem(None)?;
        }
        if let Some(watch) = self.agreement.as_mut() {
            watch.record_problem(active.as_ref().map(|a| a.compiled.clone()));
        }
        self.problem = active;
        Ok(())
    }

    /// The heat problem stepped, if any.
    pub fn problem(&self) -> Option<&HeatProblem> {
        self.problem.as_ref().map(|a| &a.problem)
    }

    /// The problem's tables and map, if any.
    pub fn compiled_problem(&self) -> Option<&CompiledProblem> {
        self.problem.as_ref().map(|a| a.compiled.as_ref())
    }

    /// Seconds simulated since the initial field, when a problem is stepped.
    pub fn simulated_seconds(&self) -> Option<f64> {
        self.problem.as_ref().map(|a| a.elapsed_seconds)
    }

    /// Sets the simulated time (a resumed state's).
    pub fn set_simulated_seconds(&mut self, seconds: f64) {
        if let Some(active) = self.problem.as_mut() {
            active.elapsed_seconds = seconds;
        }
    }

    /// The energy balance between `before` and `after` (fields of this problem), with what the
    /// backend booked since the last call. `None` without a problem that books energy.
    pub fn energy_balance(&mut self, before: &Grid, after: &Grid) -> Result<Option<EnergyBalance>> {
        self.settle()?;
        let Some(active) = self.problem.as_ref().filter(|a| a.book_energy) else {
            return Ok(None);
        };
        let compiled = active.compiled.clone();
        let exchange: EnergyExchange = self.backend.take_energy_exchange()?;
        Ok(Some(EnergyBalance {
            stored_before: stored_energy(&compiled.tables, &compiled.map, before.as_slice()),
            stored_after: stored_energy(&compiled.tables, &compiled.map, after.as_slice()),
            exchange,
        }))
    }

    /// Adds the simulated time of `steps` steps.
    pub(super) fn count_problem_time(&mut self, steps: u64) {
        if let Some(active) = self.problem.as_mut() {
            active.elapsed_seconds += steps as f64 * active.compiled.tables.dt;
        }
    }

    /// Uploads `field` and gives the backend `problem` again (a backend may drop its problem
    /// with its buffers when a field is uploaded).
    pub(super) fn upload_field(
        &mut self,
        field: &Grid,
        problem: Option<&ActiveProblem>,
    ) -> Result<()> {
        self.backend.upload(field)?;
        match problem {
            Some(active) if active.problem.size == field.size() => self.backend.set_problem(Some(
                ProblemUpload::of(&active.compiled, active.book_energy),
            )),
            _ => self.backend.set_problem(None),
        }
    }

    /// Uploads `field` with the simulation's own problem; a problem of another size is dropped.
    pub(super) fn upload_with_problem(&mut self, field: &Grid) -> Result<()> {
        let active = self.problem.take();
        let result = self.upload_field(field, active.as_ref());
        self.problem = active.filter(|a| a.problem.size == field.size());
        result
    }
}
