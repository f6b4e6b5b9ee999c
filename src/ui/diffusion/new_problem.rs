//! The "New problem" window: a heat problem built without a scenario file. The grid's size in
//! cells and the side of a cell, one material filling it (from the library, or one the user
//! makes here from k, ρ and c_p), a uniform initial temperature, a title, a description and a
//! duration. "Create" builds it with the same checks as a scenario file: every error is listed
//! in the window and nothing changes; a problem that builds opens like a gallery problem (and
//! saves as a scenario file with its own materials).

use eframe::egui;

use heatlab_engine::problem::material;
use heatlab_engine::scenario::new::NewProblem;
use heatlab_engine::scenario::Scenario;

use super::super::notice::ERROR;
use super::problem::material_editor::MaterialEditor;
use super::run_control::duration_field;
use super::sources::typed::{Typed, TypedNumbers};

/// Copies of the field a run holds (current, next and the initial field): checked to fit
/// before the problem is built.
const HELD_COPIES: usize = 3;

/// The window and what it holds between frames.
#[derive(Debug)]
pub struct NewProblemForm {
    /// Whether the window is shown.
    pub open: bool,
    problem: NewProblem,
    /// The duration as typed (empty: no end).
    duration_text: String,
    material: MaterialEditor,
    typed: TypedNumbers,
    /// Why the last value typed or the last Create was refused.
    errors: Vec<String>,
}

impl Default for NewProblemForm {
    fn default() -> Self {
        Self {
            open: false,
            problem: NewProblem {
                title: String::new(),
                description: String::new(),
                rows: 100,
                cols: 200,
                spacing: 1e-3,
                material: "aluminium".into(),
                own_materials: Vec::new(),
                initial_temperature: 20.0,
                duration: None,
            },
            duration_text: String::new(),
            material: MaterialEditor::new("new problem"),
            typed: TypedNumbers::default(),
            errors: Vec::new(),
        }
    }
}

impl NewProblemForm {
    /// Draws the window while it is open; returns the scenario "Create" built.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<Scenario> {
        if !self.open {
            return None;
        }
        let mut open = true;
        let mut created = None;
        // Scrolls only where the window would not fit (800x600).
        let max_height = (ctx.content_rect().height() - 140.0).max(200.0);
        egui::Window::new("New problem")
            .open(&mut open)
            .resizable(false)
            .default_width(360.0)
            .show(ctx, |ui| {
                egui::ScrollArea::vertical()
                    .max_height(max_height)
                    .show(ui, |ui| {
                        created = self.form_ui(ui);
                    });
            });
        self.open = open && created.is_none();
        created
    }

    fn form_ui(&mut self, ui: &mut egui::Ui) -> Option<Scenario> {
        ui.horizontal(|ui| {
            let label = ui.label("title");
            ui.add(egui::TextEdit::singleline(&mut self.problem.title).desired_width(240.0))
                .labelled_by(label.id);
        });
        let label = ui.label("description (what to look for)");
        ui.add(
            egui::TextEdit::multiline(&mut self.problem.description)
                .desired_rows(2)
                .desired_width(320.0),
        )
        .labelled_by(label.id);
        ui.separator();
        self.grid_ui(ui);
        self.material_ui(ui);
        ui.separator();
        self.own_material_ui(ui);
        ui.separator();
        for error in &self.errors {
            ui.colored_label(ERROR, error);
        }
        ui.weak("the sides start insulated: set them above the views once it is open");
        if ui
            .button("Create")
            .on_hover_text("build the problem and open it in place of the one on screen")
            .clicked()
        {
            return self.create();
        }
        None
    }

    /// Rows, columns, the cell's side, the initial temperature and the duration.
    fn grid_ui(&mut self, ui: &mut egui::Ui) {
        let mut refused = Vec::new();
        ui.horizontal(|ui| {
            let typed = self
                .typed
                .field(ui, "rows", "rows", self.problem.rows as f64, 56.0);
            take_count(typed, "rows", &mut self.problem.rows, &mut refused);
            let typed = self
                .typed
                .field(ui, "cols", "columns", self.problem.cols as f64, 56.0);
            take_count(typed, "columns", &mut self.problem.cols, &mut refused);
        });
        ui.horizontal(|ui| {
            let millimetres = self.problem.spacing * 1e3;
            match self
                .typed
                .field(ui, "cell", "cell side (mm)", millimetres, 72.0)
            {
                Typed::Value(mm) if mm > 0.0 => self.problem.spacing = mm * 1e-3,
                Typed::Value(mm) => {
                    refused.push(format!("a cell's side must be positive, not {mm} mm"))
                }
                Typed::Refused(text) => refused.push(format!("\"{text}\" is not a length")),
                Typed::Unchanged => {}
            }
            let (rows, cols) = (self.problem.rows as f64, self.problem.cols as f64);
            let (height, width) = (rows * self.problem.spacing, cols * self.problem.spacing);
            ui.weak(format!("{:.4} m x {:.4} m", width, height));
        });
        ui.horizontal(|ui| {
            let t = self.problem.initial_temperature;
            match self
                .typed
                .field(ui, "initial", "initial temperature (°C)", t, 72.0)
            {
                Typed::Value(t) => self.problem.initial_temperature = t,
                Typed::Refused(text) => refused.push(format!("\"{text}\" is not a temperature")),
                Typed::Unchanged => {}
            }
        });
        let hover = "simulated time, such as 30 min, 2 h or 90 s; empty: no end";
        match duration_field(ui, &mut self.duration_text, hover).0 {
            Some(Ok(seconds)) => self.problem.duration = seconds,
            Some(Err(error)) => refused.push(format!("duration not changed: {error}")),
            None => {}
        }
        if !refused.is_empty() {
            self.errors = refused;
        }
    }

    /// The material that fills the grid: the library's and the user's own.
    fn material_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("material");
            egui::ComboBox::from_id_salt("new problem material")
                .selected_text(self.problem.material.as_str())
                .width(180.0)
                .show_ui(ui, |ui| {
                    let library = material::library();
                    let own = self.problem.own_materials.iter().map(|m| m.name.clone());
                    let names: Vec<String> =
                        own.chain(library.iter().map(|m| m.name.clone())).collect();
                    for name in names {
                        let text = name.clone();
                        ui.selectable_value(&mut self.problem.material, name, text);
                    }
                })
                .response
                .labelled_by(label.id);
        });
    }

    /// "Your own material": added to the choices (and written into the scenario) once valid.
    fn own_material_ui(&mut self, ui: &mut egui::Ui) {
        ui.strong("your own material");
        let mut refused = Vec::new();
        let hint = "add it to the choices above and fill the grid with it";
        if let Some(made) = self.material.ui(ui, hint, &mut refused) {
            self.problem.own_materials.retain(|m| m.name != made.name);
            self.problem.material.clone_from(&made.name);
            self.problem.own_materials.push(made);
            self.errors.clear();
        }
        if !refused.is_empty() {
            self.errors = refused;
        }
    }

    /// Builds the problem; its errors stay in the window.
    fn create(&mut self) -> Option<Scenario> {
        match self.problem.build(HELD_COPIES) {
            Ok(scenario) => {
                self.errors.clear();
                Some(scenario)
            }
            Err(errors) => {
                self.errors = errors.errors;
                None
            }
        }
    }
}

/// A committed count of cells: a whole number from 1.
fn take_count(typed: Typed, what: &str, count: &mut usize, refused: &mut Vec<String>) {
    match typed {
        Typed::Value(v) if v >= 1.0 && v.fract() == 0.0 && v <= u32::MAX as f64 => {
            *count = v as usize;
        }
        Typed::Value(v) => refused.push(format!("{what} must be a whole number from 1, not {v}")),
        Typed::Refused(text) => refused.push(format!("\"{text}\" is not a number of {what}")),
        Typed::Unchanged => {}
    }
}
