//! The simulation thread's file work for the app: saving the state (or the problem as a
//! scenario file, for a `.toml` path), and opening a saved state, a scenario (`.toml`, or a
//! gallery problem) or an initial field (`.npy`, PNG, JPEG) chosen in a dialog or dropped on
//! the window. Files are read and written here, off the UI thread; a failure is a notice and
//! leaves the field that was there.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::compute::{create_backend, BackendChoice, StepParams};
use crate::grid::GridSize;
use crate::import::LuminanceRange;
use crate::scenario::save::{save, ScenarioToSave};
use crate::scenario::Scenario;
use crate::session::start::{is_scenario_file, open, Expected, Start};
use crate::state::{FieldOrigin, SavedState};

use super::messages::SimEvent;
use super::SimThread;
use crate::session::notice::Level;

/// A field or state opened from a file, as the panel learns of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// The file.
    pub path: PathBuf,
    /// The field's size.
    pub size: GridSize,
    /// The step it stands at (0 for an initial field).
    pub step: u64,
    /// A saved state's coefficient and boundary (an initial field keeps the ones in use).
    pub params: Option<StepParams>,
    /// Where the initial field came from.
    pub origin: FieldOrigin,
}

impl SimThread {
    /// Writes the state to `path`, or the problem as a scenario file when `path` is a `.toml`.
    pub(super) fn save_state(&mut self, path: &Path) {
        if is_scenario_file(path) {
            self.save_scenario(path);
            return;
        }
        let origin = self.origin.clone();
        let Some(sim) = self.sim.as_mut() else {
            self.notice(Level::Warning, "nothing to save yet: there is no field");
            return;
        };
        let origin = origin.unwrap_or_else(|| FieldOrigin::Imported {
            file: "unknown".into(),
        });
        let saved = SavedState::of(sim, origin).and_then(|state| state.save(path));
        match saved {
            Ok(()) => {
                let step = sim.step_count();
                self.emit(SimEvent::StateSaved(path.to_path_buf(), step));
            }
            Err(error) => self.notice(Level::Error, format!("the state was not saved: {error}")),
        }
    }

    /// Writes the problem and the initial field as a scenario file (with the map and the start
    /// beside it when needed).
    fn save_scenario(&mut self, path: &Path) {
        let (title, description) = match &self.origin {
            Some(FieldOrigin::Scenario {
                title, description, ..
            }) => (title.clone(), description.clone()),
            _ => (String::new(), String::new()),
        };
        let Some(sim) = self.sim.as_mut() else {
            self.notice(Level::Warning, "nothing to save yet: there is no field");
            return;
        };
        if sim.problem().is_none() {
            self.notice(
                Level::Warning,
                "the tutorial's plate is not a heat problem: paint a material or open one \
                 from the gallery to save a scenario",
            );
            return;
        }
        // A field generated on the GPU is copied to the host here.
        let (initial, problem) = match sim.initial_and_problem() {
            Ok((initial, Some(problem))) => (initial, problem),
            Ok((_, None)) => return,
            Err(error) => {
                self.notice(Level::Error, format!("the scenario was not saved: {error}"));
                return;
            }
        };
        let scenario = ScenarioToSave {
            title: &title,
            description: &description,
            problem,
            initial,
            duration: self.duration_seconds,
        };
        match save(path, scenario) {
            Ok(saved) => {
                let mut text = format!("saved the scenario to {}", path.display());
                if !saved.left_out.is_empty() {
                    text.push_str(&format!(" (left out: {})", saved.left_out.join(", ")));
                }
                self.notice(Level::Info, text);
            }
            Err(error) => {
                self.notice(Level::Error, format!("the scenario was not saved: {error}"));
            }
        }
    }

    /// Starts over from `scenario` (a gallery problem, built by the panel).
    pub(super) fn open_scenario(&mut self, scenario: Scenario) {
        let name = scenario
            .gallery
            .map_or_else(|| scenario.title(), str::to_string);
        let path = PathBuf::from(name);
        let start = Start::of_scenario(scenario, &path);
        self.finish_open(&path, start, Instant::now());
    }

    /// Opens a saved state, a scenario file or an initial field (told apart by their
    /// contents, a scenario by its extension).
    pub(super) fn open_file(&mut self, path: &Path, range: LuminanceRange) {
        let started = Instant::now();
        let start = match open(path, range, Expected::Any, 1) {
            Ok(start) => start,
            Err(error) => {
                self.notice(Level::Error, format!("{error}; the field is unchanged"));
                return;
            }
        };
        self.finish_open(path, start, started);
    }

    /// Puts what was opened into the simulation and tells the panel.
    fn finish_open(&mut self, path: &Path, start: Start, started: Instant) {
        match self.start_from(path, start) {
            Ok(opened) => {
                let policy = self.agreement_policy();
                if let Some(sim) = self.sim.as_mut() {
                    sim.set_agreement_check(policy);
                }
                self.origin = Some(opened.origin.clone());
                self.schedule.dirty = true;
                self.stats.reset();
                self.restart_run();
                log::info!(
                    "opened {} in {:.2} s",
                    path.display(),
                    started.elapsed().as_secs_f64()
                );
                // A frame of the field replaced must not come after the news of the new one.
                self.ctx.discard_frame();
                self.emit(SimEvent::Opened(opened));
                self.emit_problem();
            }
            Err(error) => self.notice(
                Level::Error,
                format!("cannot open {}: {error}", path.display()),
            ),
        }
    }

    /// Puts `start` into the simulation (or makes the first one from it): a saved state with
    /// its coefficient and boundary, an initial field with the ones in use.
    fn start_from(&mut self, path: &Path, start: Start) -> crate::Result<Opened> {
        let opened = Opened {
            path: path.to_path_buf(),
            size: start.initial.size(),
            step: start.step,
            params: start.saved_params,
            origin: start.origin.clone(),
        };
        let params = start.saved_params.unwrap_or(self.params);
        let duration = start.duration;
        match self.sim.as_mut() {
            Some(sim) => start.load_into(sim, params)?,
            None => {
                let sim = self
                    .take_backend()
                    .and_then(|backend| start.into_simulation(backend, params))?;
                self.sim = Some(sim);
            }
        }
        self.params = params;
        self.duration_seconds = duration;
        self.duration_steps = match (duration, self.sim.as_ref()) {
            (Some(seconds), Some(sim)) => sim
                .compiled_problem()
                .map(|compiled| compiled.tables.steps_for(seconds))
                .transpose()?,
            _ => None,
        };
        self.schedule.end_step = self
            .duration_steps
            .map(|steps| opened.step.saturating_add(steps));
        Ok(opened)
    }

    /// The backend made before the first field, or a new one.
    fn take_backend(&mut self) -> crate::Result<Box<dyn crate::compute::Backend>> {
        match self.idle_backend.take() {
            Some(backend) => Ok(backend),
            None => create_backend(BackendChoice::Auto).map(|(backend, _)| backend),
        }
    }
}
