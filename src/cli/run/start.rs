//! Where `heatlab run` starts: the jagged field (generated in the run), an imported file
//! (`--initial`) or a saved state (`--resume`), and the state it leaves (`--save-state`).
//! Files are read before the output folder is touched, so that a bad one is refused before
//! anything is written.

use std::path::{Path, PathBuf};

use super::{RunPlan, HOST_FIELD_COPIES};
use crate::cli::output::note;
use crate::compute::{Backend, StepParams};
use crate::error::HeatlabError;
use crate::grid::Grid;
use crate::import::{import_field_for, ImportKind, LuminanceRange};
use crate::sim::Simulation;
use crate::state::{FieldOrigin, SavedState};

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
}

/// Reads the file the run starts from (none for the jagged field).
pub(super) fn load(start: &StartFrom) -> Result<Option<LoadedStart>, HeatlabError> {
    match start {
        StartFrom::Jagged => Ok(None),
        StartFrom::Initial { file, range } => {
            // The header's size is checked against the run's copies before the data is read.
            let (initial, kind) = import_field_for(file, *range, HOST_FIELD_COPIES)?;
            let how = match kind {
                ImportKind::Npy => "array".to_string(),
                ImportKind::Image => format!("image, luminance mapped onto {range}"),
            };
            note(&format!(
                "initial field: {} from {} ({how})",
                initial.size(),
                file.display()
            ));
            Ok(Some(LoadedStart {
                initial,
                current: None,
                step: 0,
                origin: FieldOrigin::Imported {
                    file: file.display().to_string(),
                },
                saved_params: None,
            }))
        }
        StartFrom::Resume { file } => {
            let state = SavedState::load_for(file, HOST_FIELD_COPIES)?;
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
    match start.current {
        Some(current) => {
            Simulation::resume(backend, start.initial, &current, start.step, plan.step)
        }
        None => Simulation::new(backend, start.initial, plan.step),
    }
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
