//! Where `heatlab run` starts: the jagged field (generated in the run), an imported file
//! (`--initial`) or a saved state (`--resume`), and the state it leaves (`--save-state`).
//! Files are read before the output folder is touched, so that a bad one is refused before
//! anything is written.

use std::path::{Path, PathBuf};

use super::RunPlan;
use crate::cli::output::note;
use crate::compute::{Backend, StepParams};
use crate::error::HeatlabError;
use crate::grid::Grid;
use crate::import::{import_field, ImportKind, LuminanceRange};
use crate::sim::Simulation;
use crate::state::{FieldOrigin, SavedProblem, SavedState};

/// What the run starts from, as asked.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum StartFrom {
    /// The jagged field of `plan.field`.
    Jagged,
    /// A `.npy` array or an image (`--initial`), with the image's range.
    Initial {
        /// The file.
        file: PathBuf,
        /// Values of black and white for an image.
        range: LuminanceRange,
    },
    /// A scenario file (`--scenario`): its problem and initial temperature.
    Scenario {
        /// The scenario file.
        file: PathBuf,
    },
    /// A saved state (`--resume`).
    Resume {
        /// The state file.
        file: PathBuf,
    },
}

/// A start read from a file: the fields and where they stand.
#[derive(Debug)]
pub(super) struct LoadedStart {
    pub(super) initial: Grid,
    /// The field to continue from, when it is not the initial one (a resumed state).
    pub(super) current: Option<Grid>,
    pub(super) step: u64,
    pub(super) origin: FieldOrigin,
    /// Coefficient and boundary saved with the state.
    pub(super) saved_params: Option<StepParams>,
    /// The heat problem to step (a scenario's, or a resumed state's).
    pub(super) problem: Option<Box<SavedProblem>>,
    /// Simulated seconds to run, as the scenario says.
    pub(super) duration: Option<f64>,
    /// Simulated seconds between frames, as the scenario says.
    pub(super) output_every: Option<f64>,
}

impl LoadedStart {
    /// A start from `initial` at step 0, with no problem.
    pub(super) fn fresh(initial: Grid, origin: FieldOrigin) -> Self {
        Self {
            initial,
            current: None,
            step: 0,
            origin,
            saved_params: None,
            problem: None,
            duration: None,
            output_every: None,
        }
    }
}

/// Reads the file the run starts from (none for the jagged field).
pub(super) fn load(start: &StartFrom) -> Result<Option<LoadedStart>, HeatlabError> {
    match start {
        StartFrom::Jagged => Ok(None),
        StartFrom::Initial { file, range } => {
            let (initial, kind) = import_field(file, *range)?;
            let how = match kind {
                ImportKind::Npy => "array".to_string(),
                ImportKind::Image => format!("image, luminance mapped onto {range}"),
            };
            note(&format!(
                "initial field: {} from {} ({how})",
                initial.size(),
                file.display()
            ));
            Ok(Some(LoadedStart::fresh(
                initial,
                FieldOrigin::Imported {
                    file: file.display().to_string(),
                },
            )))
        }
        StartFrom::Scenario { file } => {
            let scenario = crate::scenario::load(file).map_err(|e| e.into_error())?;
            note(&format!(
                "scenario \"{}\" from {}",
                scenario.title(),
                file.display()
            ));
            let origin = FieldOrigin::Scenario {
                file: file.display().to_string(),
                title: scenario.title(),
            };
            Ok(Some(LoadedStart {
                duration: scenario.duration(),
                output_every: scenario.output_every(),
                problem: Some(Box::new(SavedProblem {
                    problem: scenario.problem,
                    simulated_seconds: 0.0,
                })),
                ..LoadedStart::fresh(scenario.initial, origin)
            }))
        }
        StartFrom::Resume { file } => {
            let state = SavedState::load(file)?;
            note(&format!(
                "resuming {} at step {} (coeff {}, {} boundary; {}) from {}",
                state.current.size(),
                state.step,
                state.params.coeff,
                state.params.boundary,
                state.origin,
                file.display()
            ));
            Ok(Some(LoadedStart {
                initial: state.initial,
                current: Some(state.current),
                step: state.step,
                origin: state.origin,
                saved_params: Some(state.params),
                problem: state.problem,
                duration: None,
                output_every: None,
            }))
        }
    }
}

/// A simulation standing where `start` stands, on `backend`.
pub(super) fn simulation(
    plan: &RunPlan,
    backend: Box<dyn Backend>,
    start: LoadedStart,
) -> crate::Result<Simulation> {
    let mut sim = match start.current {
        Some(current) => {
            Simulation::resume(backend, start.initial, &current, start.step, plan.step)?
        }
        None => Simulation::new(backend, start.initial, plan.step)?,
    };
    if let Some(saved) = start.problem {
        sim.set_problem(Some(saved.problem), true)?;
        sim.set_simulated_seconds(saved.simulated_seconds);
    }
    Ok(sim)
}

/// Writes the state the run ended in to `path` (`--save-state`).
pub(super) fn save_state(
    path: &Path,
    simulation: &mut Simulation,
    origin: &FieldOrigin,
) -> crate::Result<()> {
    SavedState::of(simulation, origin.clone())?.save(path)?;
    note(&format!(
        "saved the state at step {} to {} (continue it with --resume)",
        simulation.step_count(),
        path.display()
    ));
    Ok(())
}
