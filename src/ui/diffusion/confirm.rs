//! Asking before a heat problem is replaced: Regenerate (a preset, a new size) makes a new
//! jagged plate, and opening a gallery problem or a file over a problem built or changed in the
//! app replaces it; the problem on screen (its materials, heaters, held cells, sides and
//! thermostats) would be gone with no copy. A modal asks, as a document app asks before
//! closing unsaved work; Escape or a click beside it keeps the problem.

use std::path::PathBuf;

use eframe::egui;

use crate::settings::Settings;
use crate::ui::notice::Level;
use heatlab_engine::field::JaggedParams;
use heatlab_engine::scenario::gallery::GalleryEntry;

use super::DiffusionPanel;

/// What would replace the problem.
#[derive(Debug, Clone)]
pub enum Replacement {
    /// A jagged plate generated with these parameters.
    Plate(JaggedParams),
    /// A gallery problem.
    Gallery(&'static GalleryEntry),
    /// A file (a scenario, a state or an initial field).
    File(PathBuf),
    /// A problem made in the "New problem" window.
    NewProblem(Box<heatlab_engine::scenario::Scenario>),
}

impl Replacement {
    /// What happens, for the question.
    fn describe(&self) -> String {
        match self {
            Self::Plate(params) => format!("Regenerate makes a new {} jagged plate", params.size),
            Self::Gallery(entry) => format!("Opening \"{}\" starts that problem", entry.title()),
            Self::File(path) => format!("Opening {} starts what it holds", path.display()),
            Self::NewProblem(scenario) => {
                format!("Creating \"{}\" starts a new problem", scenario.title())
            }
        }
    }

    /// The button that goes ahead.
    fn action(&self) -> &'static str {
        match self {
            Self::Plate(_) => "Replace the problem",
            Self::Gallery(_) | Self::File(_) => "Open it anyway",
            Self::NewProblem(_) => "Create it anyway",
        }
    }
}

/// What the person answered.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Go ahead; the problem goes.
    Replace(Replacement),
    /// Keep the problem; nothing changes.
    Keep,
}

/// A replacement waiting for the person's answer.
#[derive(Debug, Clone)]
struct Question {
    /// What would replace the problem.
    replacement: Replacement,
    /// The problem as the person knows it: a scenario's title, or that it was built here.
    problem: String,
}

/// The question "replace the heat problem?", while it is asked.
#[derive(Debug, Clone, Default)]
pub struct ReplaceProblem {
    question: Option<Question>,
}

impl ReplaceProblem {
    /// Asks before `replacement` replaces `problem` (how the person knows it).
    pub fn ask(&mut self, replacement: Replacement, problem: String) {
        self.question = Some(Question {
            replacement,
            problem,
        });
    }

    /// Whether the question is on screen.
    pub fn is_asking(&self) -> bool {
        self.question.is_some()
    }

    /// The modal, while asking; returns the answer once given.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<Answer> {
        let question = self.question.as_ref()?;
        let mut answer = None;
        let modal =
            egui::Modal::new(egui::Id::unique("replace the heat problem")).show(ctx, |ui| {
                ui.set_max_width(420.0);
                ui.heading("Replace the heat problem?");
                ui.label(format!(
                "{}. The heat problem on screen ({}) would be replaced: its materials, heaters, \
                 held cells, sides and thermostats are not kept anywhere.",
                question.replacement.describe(),
                question.problem
            ));
                ui.weak(
                    "To keep a copy, keep it and save it first: Save scenario… or Save state… \
                 under State and import.",
                );
                ui.add_space(6.0);
                ui.horizontal(|ui| {
                    if ui
                        .button("Keep the problem")
                        .on_hover_text("nothing changes (Escape)")
                        .clicked()
                    {
                        answer = Some(Answer::Keep);
                    }
                    if ui
                        .button(question.replacement.action())
                        .on_hover_text("the problem on screen is gone")
                        .clicked()
                    {
                        answer = Some(Answer::Replace(question.replacement.clone()));
                    }
                });
            });
        if answer.is_none() && modal.should_close() {
            answer = Some(Answer::Keep);
        }
        if answer.is_some() {
            self.question = None;
        }
        answer
    }
}

impl DiffusionPanel {
    /// The Gallery's first entry: the notebook's plate, generated afresh from the field
    /// parameters (asking first over a heat problem on screen).
    pub fn open_plate(&mut self, settings: &mut Settings) {
        match self.edited_problem() {
            Some(problem) if settings.field.validate().is_ok() => {
                self.replace
                    .ask(Replacement::Plate(settings.field), problem);
            }
            _ => self.regenerate_replacing(settings),
        }
    }

    /// Regenerates, or first asks whether the heat problem on screen may go: regenerating
    /// replaces it with the tutorial's plate and nothing keeps it.
    pub(super) fn ask_to_regenerate(&mut self, settings: &mut Settings) {
        if self.state.problem.is_none() || settings.field.validate().is_err() {
            self.regenerate_replacing(settings);
            return;
        }
        let problem = self.problem_name();
        self.replace
            .ask(Replacement::Plate(settings.field), problem);
    }

    /// The problem on screen as the person knows it.
    fn problem_name(&self) -> String {
        match &self.scenario {
            Some(scenario) => format!("\"{}\", with your changes if any", scenario.title),
            None => "built in the app".to_string(),
        }
    }

    /// The problem's name when a heat problem runs that was built or changed in the app (a
    /// scenario's problem changed since it arrived, or painted on): opening another would lose
    /// that work. `None` on the plate and on a scenario as it was opened.
    pub(super) fn edited_problem(&self) -> Option<String> {
        let problem = self.state.problem.as_deref()?;
        let original = self.scenario.as_ref().and_then(|s| s.original.as_deref());
        let edited = original != Some(problem) || self.paint.history().0 > 0;
        edited.then(|| self.problem_name())
    }

    /// The answer to "replace the heat problem?".
    pub(super) fn replace_answered(&mut self, answer: Answer, settings: &mut Settings) {
        match answer {
            Answer::Replace(Replacement::Plate(params)) => {
                settings.field = params;
                self.regenerate_replacing(settings);
                self.notify(
                    Level::Info,
                    "replaced the heat problem with the tutorial's plate",
                );
            }
            Answer::Replace(Replacement::Gallery(entry)) => self.open_gallery_now(entry),
            Answer::Replace(Replacement::File(path)) => self.open_file_now(path),
            Answer::Replace(Replacement::NewProblem(scenario)) => {
                self.open_scenario_now(*scenario);
            }
            Answer::Keep => self.notify(Level::Info, "kept the heat problem: nothing was replaced"),
        }
    }

    /// Regenerates with the settings' field parameters, the steps per frame scaled to its size.
    fn regenerate_replacing(&mut self, settings: &mut Settings) {
        if settings.field.validate().is_ok() {
            self.scale_steps_per_frame(settings.field.size, settings);
        }
        self.regenerate(settings);
    }
}
