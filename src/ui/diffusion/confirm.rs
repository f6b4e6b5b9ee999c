//! Asking before a regeneration replaces a heat problem: Regenerate (a preset, a new size)
//! makes a new jagged plate, and the problem on screen (its materials, heaters, held cells,
//! sides and thermostats) would be gone with no copy. A modal asks, as a document app asks
//! before closing unsaved work; Escape or a click beside it keeps the problem.

use eframe::egui;

use heatlab_engine::field::JaggedParams;

/// What the person answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    /// Regenerate with these parameters; the problem goes.
    Replace(JaggedParams),
    /// Keep the problem; nothing is generated.
    Keep,
}

/// A regeneration waiting for the person's answer.
#[derive(Debug, Clone, PartialEq)]
struct Question {
    /// The parameters to generate with.
    params: JaggedParams,
    /// The problem as the person knows it: a scenario's title, or that it was built here.
    problem: String,
}

/// The question "replace the heat problem?", while it is asked.
#[derive(Debug, Clone, Default)]
pub struct ReplaceProblem {
    question: Option<Question>,
}

impl ReplaceProblem {
    /// Asks before generating with `params` over `problem` (how the person knows it).
    pub fn ask(&mut self, params: JaggedParams, problem: String) {
        self.question = Some(Question { params, problem });
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
                    "Regenerate makes a new {} jagged plate. The heat problem on screen ({}) \
                 would be replaced: its materials, heaters, held cells, sides and \
                 thermostats are not kept anywhere.",
                    question.params.size, question.problem
                ));
                ui.weak(
                    "To keep a copy, keep it and save it first: Save scenario… or Save state… \
                 under State and import.",
                );
                ui.add_space(6.0);
                ui.horizontal(|ui| {
                    if ui
                        .button("Keep the problem")
                        .on_hover_text("nothing is generated (Escape)")
                        .clicked()
                    {
                        answer = Some(Answer::Keep);
                    }
                    if ui
                        .button("Replace the problem")
                        .on_hover_text("generate the plate; the problem is gone")
                        .clicked()
                    {
                        answer = Some(Answer::Replace(question.params));
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
