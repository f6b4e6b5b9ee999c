//! The "Problem" section of the diffusion panel and the Material tool: a palette of kinds of
//! cells (the library's materials and the problem's own kinds) to paint with the brush or with
//! shapes (rectangle, ellipse, wall, flood fill), importing and exporting the material map as a
//! picture, and outlines of the material regions over the pictures.
//!
//! Everything here only sends [`ProblemCommand`]s; the simulation thread paints, keeps the
//! undo history and answers with the problem as it now stands, which
//! [`MaterialTools::section_ui`] takes from the panel's state every frame.

mod map_files;
pub mod material_editor;
mod outline;
mod palette;
mod shapes;

use std::path::Path;
use std::sync::Arc;

use eframe::egui;

use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::demo::{DemoStroke, HeatSinkDemo};
use heatlab_engine::problem::{material, CellKind, HeatProblem};
use heatlab_engine::session::diffusion::ProblemCommand;

use super::super::notice::Level;
use super::brush::{PaintTools, Tool};
use super::SimState;

pub use shapes::MaterialShape;

/// The Material tool's and the Problem section's state.
pub struct MaterialTools {
    /// The kind the Material tool paints.
    pub kind: Option<CellKind>,
    /// What a drag paints: brush dabs or a shape.
    pub shape: MaterialShape,
    /// Thickness of a wall, in cells.
    pub wall_width: f32,
    /// Whether the boundaries between kinds are drawn over the pictures.
    pub outlines: bool,
    /// Paint the screenshot mode's demo problem once the field is ready.
    pub demo: bool,
    /// The palette's filter.
    search: String,
    /// The problem as the simulation last reported it, and the field's size.
    problem: Option<Arc<HeatProblem>>,
    field_size: Option<GridSize>,
    /// The drag under way.
    gesture: Option<shapes::Gesture>,
    /// The picture and the point (shape coordinates) under the pointer, between drags.
    hover: Option<(usize, (f32, f32))>,
    outline: outline::OutlineCache,
    /// The region the flood fill being dragged would paint.
    fill_outline: outline::OutlineCache,
    files: map_files::MapFiles,
    /// The folder of a map file just chosen in a dialog.
    chosen_folder: Option<std::path::PathBuf>,
    /// A material of the user's own being made.
    own_material: material_editor::MaterialEditor,
    outgoing: Vec<ProblemCommand>,
    notices: Vec<(Level, String)>,
}

impl Default for MaterialTools {
    fn default() -> Self {
        Self {
            kind: material::library().into_iter().next().map(CellKind::of),
            shape: MaterialShape::default(),
            wall_width: 3.0,
            outlines: true,
            demo: false,
            search: String::new(),
            problem: None,
            field_size: None,
            gesture: None,
            hover: None,
            outline: outline::OutlineCache::default(),
            fill_outline: outline::OutlineCache::default(),
            files: map_files::MapFiles::default(),
            chosen_folder: None,
            own_material: material_editor::MaterialEditor::new("problem section"),
            outgoing: Vec::new(),
            notices: Vec::new(),
        }
    }
}

impl std::fmt::Debug for MaterialTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaterialTools")
            .field("kind", &self.kind.as_ref().map(|k| &k.name))
            .field("shape", &self.shape)
            .field("wall_width", &self.wall_width)
            .field("outlines", &self.outlines)
            .field("gesture", &self.gesture)
            .finish_non_exhaustive()
    }
}

/// The "Problem" section in the side panel: choosing a kind or a shape takes up the Material
/// tool.
pub fn section_ui(ui: &mut egui::Ui, tools: &mut PaintTools, state: &SimState, export_dir: &Path) {
    if tools.materials.section_ui(ui, state, export_dir) && tools.tool != Tool::Material {
        tools.set_tool(Tool::Material);
    }
}

impl MaterialTools {
    /// The problem as the simulation last reported it (`None`: the tutorial's plate).
    pub fn problem(&self) -> Option<&HeatProblem> {
        self.problem.as_deref()
    }

    /// Takes the problem and the field's size the simulation reported; returns whether the
    /// demo was queued now.
    pub fn sync(&mut self, state: &SimState) -> bool {
        self.problem.clone_from(&state.problem);
        self.field_size = state.field_size;
        let demo = self.demo && self.field_size.is_some();
        if let (true, Some(size)) = (demo, self.field_size) {
            self.demo = false;
            self.paint_demo(size);
        }
        demo
    }

    /// Queues the heat sink demo's strokes on a field of `size` (each one stroke, as a drag
    /// sends it), with its hot chip chosen in the palette.
    fn paint_demo(&mut self, size: GridSize) {
        let demo = HeatSinkDemo::new(size);
        for DemoStroke { shape, kind } in demo.strokes {
            self.outgoing.push(ProblemCommand::Paint { shape, kind });
            self.outgoing.push(ProblemCommand::EndStroke);
        }
        if let Some(chip) = demo.chip {
            self.kind = Some(chip);
        }
        self.shape = MaterialShape::Rectangle;
    }

    /// The "Problem" section. Returns whether a kind or a shape was chosen (the Material tool
    /// should be taken up).
    pub fn section_ui(&mut self, ui: &mut egui::Ui, state: &SimState, export_dir: &Path) -> bool {
        let demo = self.sync(state);
        let heading = ui.heading("Problem");
        if demo {
            // The demo's screenshot shows this section rather than the top of the panel.
            heading.scroll_to_me(Some(egui::Align::TOP));
        }
        match self.problem() {
            Some(problem) => ui.weak(format!(
                "{} kinds of cells · cells of {} mm",
                problem.kinds.len(),
                problem.spacing * 1e3
            )),
            None => ui.weak("the tutorial's uniform plate: painting a material starts a problem"),
        };
        let mut chosen = false;
        ui.horizontal_wrapped(|ui| {
            ui.label("paint with");
            for shape in MaterialShape::ALL {
                let selected = self.shape == shape;
                if ui
                    .selectable_label(selected, shape.to_string())
                    .on_hover_text(shape.hint())
                    .clicked()
                {
                    self.shape = shape;
                    chosen = true;
                }
            }
        });
        match self.shape {
            MaterialShape::Wall => {
                ui.horizontal(|ui| {
                    let label = ui.label("wall width (cells)");
                    ui.add(
                        egui::DragValue::new(&mut self.wall_width)
                            .range(1.0..=512.0)
                            .speed(0.25)
                            .max_decimals(1),
                    )
                    .labelled_by(label.id);
                });
            }
            MaterialShape::Brush => {
                ui.weak("the brush's radius is the Brush section's");
            }
            _ => {}
        }
        let problem = self.problem.clone();
        chosen |= palette::palette_ui(ui, &mut self.kind, &mut self.search, problem.as_deref());
        chosen |= self.own_material_ui(ui);
        ui.checkbox(&mut self.outlines, "outline the material regions")
            .on_hover_text("draw the boundaries between kinds of cells over the pictures");
        self.files_ui(ui, export_dir);
        chosen
    }

    /// "Your own material", folded: one made is chosen to paint with. Returns whether it was.
    fn own_material_ui(&mut self, ui: &mut egui::Ui) -> bool {
        let mut made = None;
        let mut refused = Vec::new();
        egui::CollapsingHeader::new("your own material")
            .id_salt("own material")
            .show(ui, |ui| {
                let hint = "paint with it: it becomes a kind of the problem where painted, and \
                            Save scenario writes it with the problem";
                made = self.own_material.ui(ui, hint, &mut refused);
            });
        for why in refused {
            self.notices
                .push((Level::Warning, format!("material not made: {why}")));
        }
        let Some(material) = made else {
            return false;
        };
        self.notices.push((
            Level::Info,
            format!(
                "painting with {}: k = {} W/(m·K), ρ = {} kg/m³, c_p = {} J/(kg·K)",
                material.name, material.conductivity, material.density, material.specific_heat
            ),
        ));
        self.kind = Some(CellKind::of(material));
        true
    }

    fn files_ui(&mut self, ui: &mut egui::Ui, export_dir: &Path) {
        let ready = self.field_size.is_some();
        let has_problem = self.problem.is_some();
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(ready, egui::Button::new("Import map…"))
                .on_hover_text(
                    "a PNG with one pixel per cell whose colours are the palette's (or those \
                     of the legend file beside it, NAME.legend.toml)",
                )
                .clicked()
            {
                self.files.open_import(export_dir);
            }
            if ui
                .add_enabled(has_problem, egui::Button::new("Export map…"))
                .on_hover_text(
                    "the material map as a PNG (one pixel per cell) and its legend beside it, \
                     to edit in a paint program and import again",
                )
                .clicked()
            {
                self.files.open_export(export_dir);
            }
            if ui
                .add_enabled(has_problem, egui::Button::new("Plate"))
                .on_hover_text("back to the tutorial's uniform plate (the field is kept)")
                .clicked()
            {
                self.outgoing.push(ProblemCommand::Set(None));
            }
        });
        self.files.options_ui(ui);
        self.files_dialog(ui.ctx());
    }

    /// Reads the PNG at `path` as the material map and asks the simulation to step the problem
    /// with it; a bad image leaves the problem as it is and says why in a notice.
    pub fn import_map(&mut self, path: &Path) {
        let Some(size) = self.field_size else {
            self.notices.push((
                Level::Warning,
                "there is no field to import a map onto yet".into(),
            ));
            return;
        };
        match self.files.import(path, size, self.problem.as_deref()) {
            Ok((problem, message)) => {
                self.outgoing
                    .push(ProblemCommand::Set(Some(Box::new(problem))));
                self.notices.push((Level::Info, message));
            }
            Err(error) => {
                log::warn!("material map not imported: {error}");
                self.notices
                    .push((Level::Error, format!("map not imported: {error}")));
            }
        }
    }

    /// Writes the current material map and its legend to `path` (a PNG).
    pub fn export_map(&mut self, path: &Path) {
        let Some(problem) = self.problem.clone() else {
            self.notices
                .push((Level::Warning, "there is no material map to export".into()));
            return;
        };
        match heatlab_engine::import::material_map::write_map(path, &problem) {
            Ok(legend) => self.notices.push((
                Level::Info,
                format!(
                    "wrote the material map {} and its legend {}",
                    path.display(),
                    legend.display()
                ),
            )),
            Err(error) => {
                log::warn!("material map not exported: {error}");
                self.notices
                    .push((Level::Error, format!("map not exported: {error}")));
            }
        }
    }

    fn files_dialog(&mut self, ctx: &egui::Context) {
        let chosen = self.files.dialog_ui(ctx);
        let path = match &chosen {
            Some(map_files::Chosen::Import(path) | map_files::Chosen::Export(path)) => path,
            None => return,
        };
        self.chosen_folder = path.parent().map(std::path::Path::to_path_buf);
        match chosen {
            Some(map_files::Chosen::Import(path)) => self.import_map(&path),
            Some(map_files::Chosen::Export(path)) => self.export_map(&path),
            None => {}
        }
    }

    /// The folder of the last map file chosen in a dialog, once (the panel remembers it).
    pub fn take_chosen_folder(&mut self) -> Option<std::path::PathBuf> {
        self.chosen_folder.take()
    }

    /// The commands for the simulation thread.
    pub fn take_commands(&mut self) -> Vec<ProblemCommand> {
        std::mem::take(&mut self.outgoing)
    }

    /// Messages for the notice area.
    pub fn take_notices(&mut self) -> Vec<(Level, String)> {
        std::mem::take(&mut self.notices)
    }
}
