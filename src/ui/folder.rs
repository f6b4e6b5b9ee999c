//! The export folder: a text field, a "Browse…" button and a folder chooser drawn with egui
//! itself (`egui_file`), so it works the same everywhere, under Xvfb and over SSH included, and
//! a missing desktop portal cannot crash the app.

use std::path::{Path, PathBuf};

use eframe::egui;
use egui_file::{FileDialog, State};

/// The export folder as typed, with its chooser while open.
pub struct FolderField {
    text: String,
    dialog: Option<FileDialog>,
}

impl FolderField {
    /// A field holding `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            text: dir.display().to_string(),
            dialog: None,
        }
    }

    /// The folder as typed (surrounding space ignored); empty when nothing is typed.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(self.text.trim())
    }

    /// The label, the text field and the "Browse…" button on one row.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("folder");
            if ui
                .button("Browse…")
                .on_hover_text("choose the export folder")
                .clicked()
            {
                self.open_dialog();
            }
            ui.add(egui::TextEdit::singleline(&mut self.text).desired_width(f32::INFINITY))
                .labelled_by(label.id)
                .on_hover_text("created if missing; files are named like heatlab run's");
        });
    }

    /// Opens the chooser at the typed folder, or at its nearest existing ancestor.
    fn open_dialog(&mut self) {
        let typed = self.path();
        let absolute = if typed.is_absolute() {
            typed
        } else {
            match std::env::current_dir() {
                Ok(dir) => dir.join(typed),
                Err(error) => {
                    log::warn!("no current folder to start the folder chooser in: {error}");
                    PathBuf::from("/")
                }
            }
        };
        let start = absolute
            .ancestors()
            .find(|p| p.is_dir())
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        let mut dialog = FileDialog::select_folder()
            .initial_path(start)
            .title("Export folder")
            .open_button_text("Use this folder".into())
            .show_rename(false)
            .default_size([560.0, 420.0]);
        dialog.open();
        self.dialog = Some(dialog);
    }

    /// Shows the chooser while it is open; returns the folder once one is chosen.
    pub fn dialog_ui(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        let dialog = self.dialog.as_mut()?;
        let chosen = match dialog.show(ctx).state() {
            State::Open => return None,
            State::Selected => dialog.path().map(Path::to_path_buf),
            State::Closed | State::Cancelled => None,
        };
        self.dialog = None;
        if let Some(dir) = &chosen {
            self.text = dir.display().to_string();
        }
        chosen
    }

    /// The folder the chooser shows while it is open.
    pub fn dialog_directory(&self) -> Option<&Path> {
        self.dialog.as_ref().map(FileDialog::directory)
    }
}
