//! Where `heatlab run` starts: the jagged field (generated in the run), an imported file
//! (`--initial`) or a saved state (`--resume`), and the state it leaves (`--save-state`).
//! Files are read before the output folder is touched, so that a bad one is refused before
//! anything is written.

use std::path::{Path, PathBuf};

use super::HOST_FIELD_COPIES;
use crate::cli::output::note;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::import::{ImportKind, LuminanceRange};
use heatlab_engine::session::start::{open, Expected, Start};
use heatlab_engine::sim::Simulation;
use heatlab_engine::state::{FieldOrigin, SavedState};

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

/// Reads the file the run starts from (none for the jagged field), through the session's one
/// [`open`], and says what it holds.
pub(super) fn load(start: &StartFrom) -> Result<Option<Start>, HeatlabError> {
    match start {
        StartFrom::Jagged => Ok(None),
        StartFrom::Initial { file, range } => {
            let start = open(file, *range, Expected::Field, HOST_FIELD_COPIES)?;
            let how = match start.import {
                Some(ImportKind::Image) => format!("image, luminance mapped onto {range}"),
                Some(ImportKind::Npy) | None => "array".to_string(),
            };
            note(&format!(
                "initial field: {} from {} ({how})",
                start.initial.size(),
                file.display()
            ));
            Ok(Some(start))
        }
        StartFrom::Scenario { file } => {
            // The memory the run holds is checked from the file's [grid], before the build.
            let scenario =
                heatlab_engine::scenario::gallery::load_file_or_named_for(file, HOST_FIELD_COPIES)
                    .map_err(|e| e.into_error())?;
            let from = match scenario.gallery {
                Some(name) => format!("the gallery ({name})"),
                None => file.display().to_string(),
            };
            note(&format!("scenario \"{}\" from {from}", scenario.title()));
            Ok(Some(Start::of_scenario(scenario, file)))
        }
        StartFrom::Resume { file } => {
            let start = open(
                file,
                LuminanceRange::default(),
                Expected::State,
                HOST_FIELD_COPIES,
            )?;
            let params = start.saved_params.unwrap_or_default();
            note(&format!(
                "resuming {} at step {} (coeff {}, {} boundary; {}) from {}",
                start.initial.size(),
                start.step,
                params.coeff,
                params.boundary,
                start.origin,
                file.display()
            ));
            Ok(Some(start))
        }
    }
}

/// Writes the state the run ended in to `path` (`--save-state`).
pub(super) fn save_state(
    path: &Path,
    simulation: &mut Simulation,
    origin: &FieldOrigin,
) -> heatlab_engine::Result<()> {
    SavedState::of(simulation, origin.clone())?.save(path)?;
    note(&format!(
        "saved the state at step {} to {} (continue it with --resume)",
        simulation.step_count(),
        path.display()
    ));
    Ok(())
}
