//! The "State and import" section of the diffusion panel: Save state…, Open…, the range an
//! image's luminance is mapped onto, and files dropped on the window. The dialogs are
//! `egui_file`'s (drawn with egui, as the export folder's chooser); the files are read and
//! written by the simulation thread.

use std::path::{Path, PathBuf};

use eframe::egui;
use egui_file::{FileDialog, State};

use crate::import::LuminanceRange;

/// The extension heatlab gives saved states.
pub const STATE_EXTENSION: &str = "hlstate";

/// What the section asks the panel to do.
#[derive(Debug, Clone, PartialEq)]
pub enum FileRequest {
    /// Save the state to this file.
    SaveState(PathBuf),
    /// Open a saved state or an initial field.
    Open(PathBuf),
}

/// Which dialog is open.
enum Dialog {
    Save(FileDialog),
    Open(FileDialog),
}

/// The section's own state: the image range and the dialog while open.
#[derive(Default)]
pub struct FilesSection {
    /// The values of black and white when an image is opened.
    pub range: LuminanceRange,
    dialog: Option<Dialog>,
}

/// Where a dialog starts: `dir` when it exists, else the current folder.
fn start_dir(dir: &Path) -> PathBuf {
    let absolute = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| dir.to_path_buf(), |cwd| cwd.join(dir))
    };
    absolute
        .ancestors()
        .find(|p| p.is_dir())
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

impl FilesSection {
    /// The buttons and the image range. `ready`: a field is loaded; `step` names the file.
    pub fn ui(&mut self, ui: &mut egui::Ui, ready: bool, step: u64, dir: &Path) {
        ui.heading("State and import");
        ui.horizontal(|ui| {
            let save = ui
                .add_enabled(ready, egui::Button::new("Save state…"))
                .on_hover_text(
                    "the field, step, coefficient, boundary and initial field in one file, \
                     to continue later bit for bit (here or with heatlab run --resume)",
                );
            if save.clicked() {
                let mut dialog = FileDialog::save_file()
                    .initial_path(start_dir(dir))
                    .default_filename(format!("state_{step:06}.{STATE_EXTENSION}"))
                    .title("Save state")
                    .show_rename(false)
                    .default_size([560.0, 420.0]);
                dialog.open();
                self.dialog = Some(Dialog::Save(dialog));
            }
            let open = ui.button("Open…").on_hover_text(
                "a saved state, or an initial field: a 2-D .npy array or a PNG/JPEG image \
                 (its luminance mapped onto the range below); or drop a file on the window",
            );
            if open.clicked() {
                let mut dialog = FileDialog::open_file()
                    .initial_path(start_dir(dir))
                    .title("Open a state or an initial field")
                    .show_rename(false)
                    .show_new_folder(false)
                    .default_size([560.0, 420.0]);
                dialog.open();
                self.dialog = Some(Dialog::Open(dialog));
            }
        });
        ui.horizontal(|ui| {
            let label = ui.label("image: black");
            ui.add(egui::DragValue::new(&mut self.range.black).speed(0.01))
                .labelled_by(label.id)
                .on_hover_text("the value a black pixel becomes");
            let label = ui.label("white");
            ui.add(egui::DragValue::new(&mut self.range.white).speed(0.01))
                .labelled_by(label.id)
                .on_hover_text("the value a white pixel becomes");
        });
    }

    /// Shows the open dialog; returns what was chosen in it.
    pub fn dialog_ui(&mut self, ctx: &egui::Context) -> Option<FileRequest> {
        let (dialog, save) = match self.dialog.as_mut()? {
            Dialog::Save(dialog) => (dialog, true),
            Dialog::Open(dialog) => (dialog, false),
        };
        let chosen = match dialog.show(ctx).state() {
            State::Open => return None,
            State::Selected => dialog.path().map(Path::to_path_buf),
            State::Closed | State::Cancelled => None,
        };
        self.dialog = None;
        let path = chosen?;
        Some(if save {
            FileRequest::SaveState(path)
        } else {
            FileRequest::Open(path)
        })
    }

    /// Files dropped on the window this frame: the first is opened (one field at a time).
    pub fn dropped(ctx: &egui::Context) -> (Option<PathBuf>, usize) {
        ctx.input(|input| {
            let paths: Vec<PathBuf> = input
                .raw
                .dropped_files
                .iter()
                .map(|file| file.path().to_path_buf())
                .filter(|path| !path.as_os_str().is_empty())
                .collect();
            (paths.first().cloned(), paths.len())
        })
    }

    /// While files are dragged over the window, says what dropping them does.
    pub fn hover_ui(ui: &egui::Ui) {
        let hovering = ui.ctx().input(|input| !input.raw.hovered_files.is_empty());
        if !hovering {
            return;
        }
        let rect = ui.max_rect();
        let painter = ui.painter();
        painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(160));
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "drop to open: a saved state, a .npy array or a PNG/JPEG image",
            egui::FontId::proportional(20.0),
            egui::Color32::WHITE,
        );
    }
}
