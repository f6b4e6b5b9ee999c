//! "Import map…" and "Export map…": the dialogs (the same `egui_file` dialogs as Open and
//! Save state), the tolerance and scaling of an import, and building the problem with an
//! imported map.

use std::path::{Path, PathBuf};

use eframe::egui;
use egui_file::{FileDialog, State};

use heatlab_engine::error::Result;
use heatlab_engine::grid::GridSize;
use heatlab_engine::import::material_map::{
    legend_path, problem_with_map, read_legend, read_map, Legend, MapOptions,
};
use heatlab_engine::problem::HeatProblem;

use super::super::files::start_dir;

/// A file chosen in one of the dialogs.
pub enum Chosen {
    /// A map to import.
    Import(PathBuf),
    /// Where to export the map.
    Export(PathBuf),
}

enum Dialog {
    Import(FileDialog),
    Export(FileDialog),
}

/// The import options and the dialog while open.
#[derive(Default)]
pub struct MapFiles {
    options: MapOptions,
    dialog: Option<Dialog>,
}

fn is_png(path: &Path) -> bool {
    path.is_dir()
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

impl MapFiles {
    /// Opens the import dialog in `dir`.
    pub fn open_import(&mut self, dir: &Path) {
        let mut dialog = FileDialog::open_file()
            .initial_path(start_dir(dir))
            .title("Import a material map (PNG)")
            .show_files_filter(Box::new(is_png))
            .show_rename(false)
            .show_new_folder(false)
            .default_size([560.0, 420.0]);
        dialog.open();
        self.dialog = Some(Dialog::Import(dialog));
    }

    /// Opens the export dialog in `dir`.
    pub fn open_export(&mut self, dir: &Path) {
        let mut dialog = FileDialog::save_file()
            .initial_path(start_dir(dir))
            .default_filename("material_map.png")
            .title("Export the material map (PNG and legend)")
            .show_rename(false)
            .default_size([560.0, 420.0]);
        dialog.open();
        self.dialog = Some(Dialog::Export(dialog));
    }

    /// The tolerance and the scaling of imports.
    pub fn options_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("colour tolerance");
            ui.add(egui::DragValue::new(&mut self.options.tolerance).range(0..=255))
                .labelled_by(label.id)
                .on_hover_text(
                    "how far (in any of red, green, blue, 0 to 255) a pixel may be from its \
                     legend colour",
                );
            ui.checkbox(&mut self.options.scale, "scale to the field")
                .on_hover_text(
                    "resize an image of another size onto the field's cells (nearest \
                     neighbour) instead of refusing it",
                );
        });
    }

    /// Shows the dialog while open; returns the file once one is chosen.
    pub fn dialog_ui(&mut self, ctx: &egui::Context) -> Option<Chosen> {
        let (dialog, import) = match self.dialog.as_mut()? {
            Dialog::Import(dialog) => (dialog, true),
            Dialog::Export(dialog) => (dialog, false),
        };
        let chosen = match dialog.show(ctx).state() {
            State::Open => return None,
            State::Selected => dialog.path().map(Path::to_path_buf),
            State::Closed | State::Cancelled => None,
        };
        self.dialog = None;
        let path = chosen?;
        Some(if import {
            Chosen::Import(path)
        } else {
            Chosen::Export(path.with_extension("png"))
        })
    }

    /// The problem with the map at `path` (through the legend beside it, or the palette's
    /// colours), and what to tell the user.
    pub fn import(
        &self,
        path: &Path,
        size: GridSize,
        problem: Option<&HeatProblem>,
    ) -> Result<(HeatProblem, String)> {
        let legend_file = legend_path(path);
        let (legend, through) = if legend_file.is_file() {
            (
                read_legend(&legend_file)?,
                format!("its legend {}", legend_file.display()),
            )
        } else {
            let kinds = problem.map_or(&[][..], |p| &p.kinds[..]);
            (Legend::palette(kinds), "the palette's colours".to_string())
        };
        let imported = read_map(path, size, &legend, self.options)?;
        let problem = problem_with_map(problem, size, &legend, &imported)?;
        let scaled = imported
            .scaled_from
            .map(|(rows, cols)| format!(", scaled from {cols}×{rows} pixels"))
            .unwrap_or_default();
        let message = format!(
            "imported the material map {} through {through}{scaled}",
            path.display()
        );
        Ok((problem, message))
    }
}
