//! Where `heatlab run` starts: the jagged field (generated in the run), an imported file
//! (`--initial`) or a saved state (`--resume`), and the state it leaves (`--save-state`).
//! Files are read before the output folder is touched, so that a bad one is refused before
//! anything is written.

use std::path::{Path, PathBuf};

use super::{RunPlan, HOST_FIELD_COPIES};
use crate::cli::interrupt::Interrupt;
use crate::cli::output::note;
use heatlab_engine::compute::Backend;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::grid::GridSize;
use heatlab_engine::import::{
    is_npy_file, npy_field_size, npy_header_size, ImportKind, LuminanceRange,
};
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

/// Reads what the run starts from, and takes its size into `plan`: the file's header alone when
/// every rank reads its own rows of it (`over_ranks`, an array in a regular file), else the
/// whole file here (none for the jagged field).
pub(super) fn read(
    plan: &mut RunPlan,
    over_ranks: bool,
    interrupt: &Interrupt,
) -> anyhow::Result<Option<Start>> {
    plan.initial_where_held = size_read_where_held(&plan.start, over_ranks)?;
    if let Some(size) = plan.initial_where_held {
        plan.field.size = size;
        return Ok(None);
    }
    // Reading a FIFO with no writer blocks: a signal meanwhile stops at once.
    Ok(interrupt.at_once_while(|| load(&plan.start))?)
}

impl RunPlan {
    /// Copies of the whole field this process holds on the host: none over ranks when every
    /// rank reads its rows of the initial array and writes its rows of the `.npy` frames, with
    /// nothing else asking for the whole field here (PNG frames, a video, a state, a live check).
    fn host_field_copies(&self) -> usize {
        let nothing_whole = self.initial_where_held.is_some()
            && !self.png
            && self.video.is_none()
            && self.save_state.is_none()
            && self.check_every == 0;
        match nothing_whole {
            true => 0,
            false => HOST_FIELD_COPIES,
        }
    }
}

/// Checks the host memory for the copies of the field this process holds (see
/// [`RunPlan::host_field_copies`]); over ranks, a refusal says how rank 0 holds none.
pub(super) fn ensure_host_memory(plan: &RunPlan, over_ranks: bool) -> anyhow::Result<()> {
    let copies = plan.host_field_copies();
    if copies == 0 {
        return Ok(());
    }
    let size = plan.field.size;
    let needed = copies.saturating_mul(size.bytes());
    let what = format!("{size} run ({copies} copies of the field)");
    if let Err(error) = heatlab_engine::memory::ensure_host_memory(&what, needed) {
        if over_ranks {
            note(
                "over ranks, rank 0 holds no copy of the field when every rank reads its rows \
                 of an --initial .npy and writes its rows of --npy --no-png frames (no video, \
                 --save-state or --check-every)",
            );
        }
        return Err(error.into());
    }
    Ok(())
}

/// The simulation of the `--initial` array each rank reads its own rows of.
pub(super) fn read_where_held(
    plan: &RunPlan,
    mut backend: Box<dyn Backend>,
) -> anyhow::Result<(heatlab_engine::sim::Simulation, FieldOrigin)> {
    let (StartFrom::Initial { file, .. }, Some(size)) = (&plan.start, plan.initial_where_held)
    else {
        anyhow::bail!("internal error: no array to read where the field is held");
    };
    if !backend.load_npy_where_held(file, size)? {
        anyhow::bail!("internal error: this backend reads no array where it holds the field");
    }
    let origin = FieldOrigin::Imported {
        file: file.display().to_string(),
    };
    let simulation = heatlab_engine::sim::Simulation::of_held(backend, size, plan.step)?;
    Ok((simulation, origin))
}

/// The `--initial` file the run starts from, where it is a regular file holding a `.npy`
/// array (its rows can be read where they are held, its size from its header alone).
fn initial_array(start: &StartFrom) -> Option<&Path> {
    let StartFrom::Initial { file, .. } = start else {
        return None;
    };
    is_npy_file(file).then_some(file.as_path())
}

/// The size of the `.npy` array the run starts from when every rank reads its own rows of it
/// (a run over ranks from a regular file that holds an array), from its header alone; `None`
/// when the file is read whole here (one rank, an image, a pipe, a state, a scenario).
pub(super) fn size_read_where_held(
    start: &StartFrom,
    over_ranks: bool,
) -> Result<Option<GridSize>, HeatlabError> {
    let Some(file) = initial_array(start).filter(|_| over_ranks) else {
        return Ok(None);
    };
    let size = npy_field_size(file)?;
    note(&format!(
        "initial field: {size} from {} (array, each rank reads its own rows)",
        file.display()
    ));
    Ok(Some(size))
}

/// The size of the `--initial` array in a regular `.npy` file that this process reads whole
/// (not over ranks: there each rank checks its own band), from its header alone: the run
/// checks it against the GPU's memory before it reads the array.
pub(super) fn array_size_before_reading(
    start: &StartFrom,
    over_ranks: bool,
) -> Result<Option<GridSize>, HeatlabError> {
    match initial_array(start).filter(|_| !over_ranks) {
        Some(file) => Ok(Some(npy_header_size(file)?)),
        None => Ok(None),
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
