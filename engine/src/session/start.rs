//! Where a simulation starts from a file, for every front end: [`open`] reads a saved state,
//! a scenario file (`.toml`), a `.npy` array or an image (PNG, JPEG) into a [`Start`], which becomes a new simulation or
//! replaces what an existing one holds. The app opens whatever it is given (told apart by the
//! first bytes); `heatlab run` asks for a state with `--resume` and an initial field with
//! `--initial`, so that a file of the other kind is refused with the reader's own reason.

use std::path::Path;

use crate::compute::{Backend, StepParams};
use crate::error::HeatlabError;
use crate::grid::Grid;
use crate::import::{import_field_for, read_up_to, ImportKind, LuminanceRange};
use crate::scenario::Scenario;
use crate::sim::Simulation;
use crate::state::{FieldOrigin, SavedProblem, SavedState, MAGIC};

/// What a file to start from must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// Either, told apart by the file's first bytes (the app's open and drop).
    Any,
    /// A saved state (`--resume`).
    State,
    /// An initial field: a `.npy` array or an image (`--initial`).
    Field,
}

/// A start read from a file: the fields and where they stand.
#[derive(Debug)]
pub struct Start {
    /// The initial field (what a reset goes back to).
    pub initial: Grid,
    /// The field to continue from, when it is not the initial one (a saved state).
    pub current: Option<Grid>,
    /// The step it stands at (0 for an initial field).
    pub step: u64,
    /// Where the initial field came from.
    pub origin: FieldOrigin,
    /// A saved state's coefficient and boundary.
    pub saved_params: Option<StepParams>,
    /// How an initial field was read (`None` for a saved state).
    pub import: Option<ImportKind>,
    /// The heat problem to step (a scenario's, or a saved state's).
    pub problem: Option<Box<SavedProblem>>,
    /// Simulated seconds to run, as a scenario says.
    pub duration: Option<f64>,
    /// Simulated seconds between frames, as a scenario says.
    pub output_every: Option<f64>,
}

/// Reads `path` as `expected` (an image's luminance mapped onto `range`), checking the size its
/// header gives against the memory for `held_copies` copies of the field before reading it.
pub fn open(
    path: &Path,
    range: LuminanceRange,
    expected: Expected,
    held_copies: usize,
) -> Result<Start, HeatlabError> {
    let state = match expected {
        Expected::Any => is_state_file(path),
        Expected::State => true,
        Expected::Field => false,
    };
    if state {
        return SavedState::load_for(path, held_copies).map(Start::from);
    }
    if expected == Expected::Any && is_scenario_file(path) {
        let scenario = crate::scenario::load(path).map_err(|e| e.into_error())?;
        return Ok(Start::of_scenario(scenario, path));
    }
    let (initial, kind) = import_field_for(path, range, held_copies)?;
    let origin = FieldOrigin::Imported {
        file: path.display().to_string(),
    };
    Ok(Start {
        import: Some(kind),
        ..Start::generated(initial, origin)
    })
}

/// Whether `path` names a scenario file (TOML, by its extension: a text file has no mark).
pub fn is_scenario_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// Whether `path` starts with a saved state's mark (anything unreadable is left to the reader
/// that follows, which says why).
fn is_state_file(path: &Path) -> bool {
    let mut start = [0u8; MAGIC.len()];
    std::fs::File::open(path)
        .and_then(|mut file| read_up_to(&mut file, &mut start))
        .is_ok_and(|got| got == MAGIC.len() && start == MAGIC)
}

impl From<SavedState> for Start {
    fn from(state: SavedState) -> Self {
        Self {
            initial: state.initial,
            current: Some(state.current),
            step: state.step,
            origin: state.origin,
            saved_params: Some(state.params),
            import: None,
            problem: state.problem,
            duration: None,
            output_every: None,
        }
    }
}

impl Start {
    /// The start of a generated field.
    pub fn generated(initial: Grid, origin: FieldOrigin) -> Self {
        Self {
            initial,
            current: None,
            step: 0,
            origin,
            saved_params: None,
            import: None,
            problem: None,
            duration: None,
            output_every: None,
        }
    }

    /// The start of a scenario read from `file` (or the gallery's): its initial temperature,
    /// problem, duration and output interval.
    pub fn of_scenario(scenario: Scenario, file: &Path) -> Self {
        let origin = FieldOrigin::Scenario {
            file: file.display().to_string(),
            title: scenario.title(),
            description: scenario.file.description.clone(),
            gallery: scenario.gallery.map(str::to_string),
        };
        Self {
            duration: scenario.duration(),
            output_every: scenario.output_every(),
            problem: Some(Box::new(SavedProblem {
                problem: scenario.problem,
                simulated_seconds: 0.0,
            })),
            ..Self::generated(scenario.initial, origin)
        }
    }

    /// A simulation on `backend` standing where this start stands, stepping with `params`.
    pub fn into_simulation(
        self,
        backend: Box<dyn Backend>,
        params: StepParams,
    ) -> crate::Result<Simulation> {
        let mut sim = match self.current {
            Some(current) => {
                Simulation::resume(backend, self.initial, &current, self.step, params)?
            }
            None => Simulation::new(backend, self.initial, params)?,
        };
        if let Some(saved) = self.problem {
            sim.set_problem(Some(saved.problem), true)?;
            sim.set_simulated_seconds(saved.simulated_seconds);
        }
        Ok(sim)
    }

    /// Puts this start into a running simulation: a state with `params`; an initial field
    /// keeps the simulation's coefficient and boundary.
    pub fn load_into(self, sim: &mut Simulation, params: StepParams) -> crate::Result<()> {
        match self.current {
            Some(current) => sim.restore(self.initial, &current, self.step, params)?,
            None => sim.replace_initial(self.initial)?,
        }
        let seconds = self.problem.as_ref().map(|p| p.simulated_seconds);
        sim.set_problem(self.problem.map(|p| p.problem), true)?;
        if let Some(seconds) = seconds {
            sim.set_simulated_seconds(seconds);
        }
        Ok(())
    }
}
