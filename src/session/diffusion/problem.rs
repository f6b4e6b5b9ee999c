//! The heat problem on the simulation thread: edits from the panel (painting kinds of cells,
//! heaters, held regions, sides, thermostats) applied between steps, and the problem's part of
//! each frame.

use std::sync::Arc;

use super::messages::{ProblemCommand, ProblemFrame, SimEvent};
use super::SimThread;
use crate::error::{HeatlabError, Result};
use crate::problem::{material, HeatProblem};
use crate::session::notice::Level;
use crate::sim::Simulation;

/// The side of a cell of the tutorial's plate when painting starts a problem on it, m.
pub const PLATE_SPACING: f64 = 1e-3;

impl SimThread {
    /// Applies an edit of the problem; a refused edit leaves the problem as it was.
    pub(super) fn edit_problem(&mut self, command: ProblemCommand) {
        let Some(sim) = self.sim.as_mut() else {
            self.notice(
                Level::Warning,
                "there is no field to build a problem on yet",
            );
            return;
        };
        let result = match command {
            ProblemCommand::Set(problem) => sim.set_problem(problem.map(|p| *p), true),
            ProblemCommand::Paint { shape, kind } => edit(sim, |problem| {
                let index = problem.kind_index(kind)?;
                let cells = shape.cells(problem.size, &problem.map);
                for cell in cells {
                    problem.map[cell as usize] = index;
                }
                Ok(())
            }),
            ProblemCommand::EndStroke => return,
            ProblemCommand::EditKind { index, kind } => edit(sim, |problem| {
                let slot = problem.kinds.get_mut(usize::from(index)).ok_or_else(|| {
                    HeatlabError::InvalidInput(format!("there is no kind {index} to change"))
                })?;
                *slot = kind;
                Ok(())
            }),
            ProblemCommand::SetSide(side, condition) => edit(sim, |problem| {
                problem.sides.set(side, condition);
                Ok(())
            }),
            ProblemCommand::SetThermostats(thermostats) => edit(sim, |problem| {
                problem.thermostats = thermostats;
                Ok(())
            }),
        };
        match result {
            Ok(()) => {
                self.schedule.dirty = true;
                self.stats.reset();
                self.emit_problem();
            }
            Err(error) => self.notice(
                Level::Error,
                format!("the problem was not changed: {error}"),
            ),
        }
    }

    /// Tells the panel the problem as it now stands.
    pub(super) fn emit_problem(&self) {
        let problem = self
            .sim
            .as_ref()
            .and_then(Simulation::problem)
            .map(|p| Arc::new(p.clone()));
        self.emit(SimEvent::Problem(problem));
    }

    /// The problem's part of a frame, when a problem is stepped.
    pub(super) fn problem_frame(&self) -> Option<ProblemFrame> {
        let sim = self.sim.as_ref()?;
        let problem = sim.problem()?;
        let compiled = sim.compiled_problem()?;
        Some(ProblemFrame {
            simulated_seconds: sim.simulated_seconds().unwrap_or(0.0),
            dt: compiled.tables.dt,
            energy: None,
            heaters_on: problem
                .kinds
                .iter()
                .map(|k| k.heater.is_some_and(|h| h.on))
                .collect(),
        })
    }
}

/// Applies `change` to a copy of the simulation's problem (or of the tutorial's plate as a
/// problem of [`ProblemCommand::PLATE_MATERIAL`]), checks it and steps it from now on.
fn edit(sim: &mut Simulation, change: impl FnOnce(&mut HeatProblem) -> Result<()>) -> Result<()> {
    let mut problem = match sim.problem() {
        Some(problem) => problem.clone(),
        None => {
            let plate = material::find(ProblemCommand::PLATE_MATERIAL).ok_or_else(|| {
                HeatlabError::InvalidInput(format!(
                    "the material library has no {}",
                    ProblemCommand::PLATE_MATERIAL
                ))
            })?;
            HeatProblem::uniform(sim.initial().size(), PLATE_SPACING, plate)
        }
    };
    change(&mut problem)?;
    problem.check()?;
    sim.set_problem(Some(problem), true)
}
