//! The simulation thread's file work for the app: saving the state, and opening a saved state
//! or an initial field (`.npy`, PNG, JPEG) chosen in a dialog or dropped on the window. Files
//! are read and written here, off the UI thread; a failure is a notice and leaves the field
//! that was there.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::compute::{create_backend, BackendChoice, StepParams};
use crate::error::HeatlabError;
use crate::grid::{Grid, GridSize};
use crate::import::{import_field, LuminanceRange};
use crate::sim::Simulation;
use crate::state::{FieldOrigin, SavedState, MAGIC};

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

/// What a file turned out to hold.
enum Contents {
    State(SavedState),
    Field(Grid),
}

/// Whether `path` starts with a saved state's mark (anything unreadable is left to the reader
/// that follows, which says why).
fn is_state_file(path: &Path) -> bool {
    let mut start = [0u8; MAGIC.len()];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| start == MAGIC)
}

fn read(path: &Path, range: LuminanceRange) -> Result<Contents, HeatlabError> {
    if is_state_file(path) {
        return SavedState::load(path).map(Contents::State);
    }
    import_field(path, range).map(|(grid, _)| Contents::Field(grid))
}

impl SimThread {
    /// Writes the state to `path`.
    pub(super) fn save_state(&mut self, path: &Path) {
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

    /// Opens a saved state or an initial field (told apart by their contents).
    pub(super) fn open_file(&mut self, path: &Path, range: LuminanceRange) {
        let started = Instant::now();
        let contents = match read(path, range) {
            Ok(contents) => contents,
            Err(error) => {
                self.notice(Level::Error, format!("{error}; the field is unchanged"));
                return;
            }
        };
        let opened = match contents {
            Contents::State(state) => {
                let params = state.params;
                let opened = Opened {
                    path: path.to_path_buf(),
                    size: state.current.size(),
                    step: state.step,
                    params: Some(state.params),
                    origin: state.origin.clone(),
                };
                let result = match self.sim.as_mut() {
                    Some(sim) => {
                        sim.restore(state.initial, &state.current, state.step, state.params)
                    }
                    None => self
                        .take_backend()
                        .and_then(|backend| state.into_simulation(backend))
                        .map(|sim| self.sim = Some(sim)),
                };
                result.map(|()| {
                    self.params = params;
                    opened
                })
            }
            Contents::Field(grid) => {
                let opened = Opened {
                    path: path.to_path_buf(),
                    size: grid.size(),
                    step: 0,
                    params: None,
                    origin: FieldOrigin::Imported {
                        file: path.display().to_string(),
                    },
                };
                let result = match self.sim.as_mut() {
                    Some(sim) => sim.replace_initial(grid),
                    None => self
                        .take_backend()
                        .and_then(|backend| Simulation::new(backend, grid, self.params))
                        .map(|sim| self.sim = Some(sim)),
                };
                result.map(|()| opened)
            }
        };
        match opened {
            Ok(opened) => {
                let policy = self.agreement_policy();
                if let Some(sim) = self.sim.as_mut() {
                    sim.set_agreement_check(policy);
                }
                self.origin = Some(opened.origin.clone());
                self.schedule.dirty = true;
                self.stats.reset();
                log::info!(
                    "opened {} in {:.2} s",
                    path.display(),
                    started.elapsed().as_secs_f64()
                );
                self.emit(SimEvent::Opened(opened));
            }
            Err(error) => self.notice(
                Level::Error,
                format!("cannot open {}: {error}", path.display()),
            ),
        }
    }

    /// The backend made before the first field, or a new one.
    fn take_backend(&mut self) -> crate::Result<Box<dyn crate::compute::Backend>> {
        match self.idle_backend.take() {
            Some(backend) => Ok(backend),
            None => create_backend(BackendChoice::Auto).map(|(backend, _)| backend),
        }
    }
}
