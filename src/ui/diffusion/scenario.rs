//! The scenario the diffusion tab stands on: opening a gallery problem, "About this problem"
//! (its title and what to look for), and its exact answer drawn on the line plot with the
//! current error, while the problem is the one the answer describes.

use std::sync::Arc;

use eframe::egui;

use crate::ui::notice::Level;
use heatlab_engine::problem::HeatProblem;
use heatlab_engine::scenario::exact::ExactAnswer;
use heatlab_engine::scenario::gallery::{self, GalleryEntry};
use heatlab_engine::scenario::Scenario;
use heatlab_engine::session::diffusion::{Opened, SimCommand};
use heatlab_engine::state::FieldOrigin;

use super::profile::ExactLine;
use super::DiffusionPanel;

/// The scenario opened last, while the field stands on it.
#[derive(Debug, Clone, Default)]
pub struct OpenedScenario {
    /// Its title.
    pub title: String,
    /// What to look for.
    pub description: String,
    /// Its exact answer and the problem it describes, for a gallery problem with one.
    exact: Option<(ExactAnswer, Arc<HeatProblem>)>,
    /// Whether its thermostats' probes were placed (once its problem arrived).
    thermostat_probes_placed: bool,
    /// Its problem as it arrived, to tell whether it was changed since.
    pub(super) original: Option<Arc<HeatProblem>>,
}

impl OpenedScenario {
    /// The scenario `origin` names, if it is one (a gallery problem's exact answer included).
    fn of(origin: &FieldOrigin) -> Option<Self> {
        let FieldOrigin::Scenario {
            title,
            description,
            gallery,
            ..
        } = origin
        else {
            return None;
        };
        let exact = gallery
            .as_deref()
            .and_then(gallery::find)
            .and_then(exact_of);
        Some(Self {
            title: title.clone(),
            description: heatlab_engine::scenario::reflow(description),
            exact,
            thermostat_probes_placed: false,
            original: None,
        })
    }

    /// The exact answer, while `problem` is the one it describes.
    pub fn exact_for(&self, problem: Option<&HeatProblem>) -> Option<&ExactAnswer> {
        let (answer, described) = self.exact.as_ref()?;
        (problem == Some(described.as_ref())).then_some(answer)
    }

    /// "About this problem": the title and what to look for, folded.
    pub fn about_ui(&self, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new(egui::RichText::new("About this problem").strong())
            .default_open(true)
            .show(ui, |ui| {
                ui.label(egui::RichText::new(&self.title).strong());
                ui.label(&self.description);
                if let Some((answer, _)) = &self.exact {
                    ui.label(format!(
                        "exact answer: {} (dashed on the line plot)",
                        answer.kind().name()
                    ));
                }
            });
        ui.separator();
    }
}

/// A gallery problem's exact answer, built from its own scenario.
fn exact_of(entry: &GalleryEntry) -> Option<(ExactAnswer, Arc<HeatProblem>)> {
    let kind = entry.exact?;
    let scenario = entry
        .scenario()
        .map_err(|e| log::error!("gallery problem {}: {e}", entry.name))
        .ok()?;
    let answer = ExactAnswer::new(kind, &scenario.problem, &scenario.initial)
        .map_err(|e| log::error!("gallery problem {}: {e}", entry.name))
        .ok()?;
    Some((answer, Arc::new(scenario.problem)))
}

impl DiffusionPanel {
    /// Opens a gallery problem: its initial field and problem replace what the tab holds. Over
    /// a heat problem built or changed in the app, asks first.
    pub fn open_gallery(&mut self, entry: &'static GalleryEntry) {
        if let Some(problem) = self.edited_problem() {
            self.replace
                .ask(super::confirm::Replacement::Gallery(entry), problem);
            return;
        }
        self.open_gallery_now(entry);
    }

    /// Opens a gallery problem without asking.
    pub(super) fn open_gallery_now(&mut self, entry: &'static GalleryEntry) {
        match entry.scenario() {
            Ok(scenario) => self.open_scenario_now(scenario),
            Err(error) => self.notify(Level::Error, error.to_string()),
        }
    }

    /// Opens a problem made in the "New problem" window. Over a heat problem built or changed
    /// in the app, asks first.
    pub fn open_new_problem(&mut self, scenario: Scenario) {
        if let Some(problem) = self.edited_problem() {
            self.replace.ask(
                super::confirm::Replacement::NewProblem(Box::new(scenario)),
                problem,
            );
            return;
        }
        self.open_scenario_now(scenario);
    }

    /// Starts over from `scenario` (its initial field and problem) without asking.
    pub(super) fn open_scenario_now(&mut self, scenario: Scenario) {
        // The probes and the line belong to the problem on screen, not to this one.
        self.clear_plots("cleared the probes and the line: they belonged to the previous problem");
        self.opening_done();
        let opening = format!("opening \"{}\"…", scenario.title());
        self.notify(Level::Info, opening.clone());
        self.files.opening = Some(opening);
        self.send(SimCommand::OpenScenario(Box::new(scenario)));
    }

    /// Shows the "New problem" window.
    pub fn show_new_problem(&mut self) {
        self.new_problem.open = true;
    }

    /// The scenario the field stands on, if any.
    pub fn opened_scenario(&self) -> Option<&OpenedScenario> {
        self.scenario.as_ref()
    }

    /// A field was opened: remembers the scenario it is, draws the line its exact answer is
    /// compared along; returns the notice for a scenario opened at its start.
    pub(super) fn scenario_opened(&mut self, opened: &Opened) -> Option<String> {
        self.scenario = OpenedScenario::of(&opened.origin);
        let scenario = self.scenario.as_ref()?;
        if let Some((answer, _)) = &scenario.exact {
            let (start, end) = answer.line();
            self.paint.profile.set(start, end, opened.size);
        }
        (opened.params.is_none()).then(|| {
            format!(
                "opened \"{}\": a {} grid; About this problem says what to look for",
                scenario.title, opened.size
            )
        })
    }

    /// Once the problem of a scenario just opened arrives: a probe on each thermostat's probe
    /// cell, where none is placed, so that the probe plot shows what the thermostats read and
    /// when their heaters were on.
    pub(super) fn place_thermostat_probes(&mut self) {
        let (Some(scenario), Some(problem)) =
            (self.scenario.as_mut(), self.state.problem.as_deref())
        else {
            return;
        };
        if scenario.original.is_none() {
            scenario.original.clone_from(&self.state.problem);
        }
        if std::mem::replace(&mut scenario.thermostat_probes_placed, true)
            || !self.paint.probes.is_empty()
        {
            return;
        }
        for thermostat in &problem.thermostats {
            let (row, col) = thermostat.probe;
            self.paint.probes.add(row, col);
        }
    }

    /// The exact answer along the line plot's cells at the time of its values (each frame).
    pub(super) fn update_exact_line(&mut self) {
        let answer = self
            .scenario
            .as_ref()
            .and_then(|s| s.exact_for(self.state.problem.as_deref()));
        let seconds = self
            .state
            .problem_frame
            .as_ref()
            .map(|f| f.simulated_seconds);
        let line = match (answer, seconds, self.paint.profile.values()) {
            (Some(answer), Some(seconds), Some((_, values))) => {
                let cols = answer.size().cols;
                let cells = self.paint.profile.cells();
                let exact = cells
                    .iter()
                    .map(|&c| answer.temperature(c as usize / cols, c as usize % cols, seconds))
                    .collect();
                Some(ExactLine {
                    name: answer.kind().name(),
                    values: exact,
                    error: answer.error_at(cells, values, seconds),
                    seconds,
                    window: answer.window(),
                })
            }
            _ => None,
        };
        self.paint.profile.set_exact(line);
    }
}
