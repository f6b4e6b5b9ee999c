//! A folder chooser drawn with egui itself: no native dialog, so it works the same everywhere,
//! under Xvfb and over SSH included, and a missing desktop portal cannot crash the app.

use std::path::{Path, PathBuf};

use eframe::egui::{self, RichText};

/// What the dialog did this frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogOutcome {
    /// Still open.
    Open,
    /// The user chose this folder.
    Chosen(PathBuf),
    /// The user closed it without choosing.
    Cancelled,
}

/// A modal-like window listing the sub-folders of the current folder.
pub struct FolderDialog {
    current: PathBuf,
    entries: Vec<PathBuf>,
    error: Option<String>,
    new_folder: String,
}

impl FolderDialog {
    /// Opens at `start` (made absolute), or at its nearest existing ancestor.
    pub fn new(start: &Path) -> Self {
        let absolute = if start.is_absolute() {
            start.to_path_buf()
        } else {
            std::env::current_dir()
                .unwrap_or_else(|_| PathBuf::from("/"))
                .join(start)
        };
        let existing = absolute
            .ancestors()
            .find(|p| p.is_dir())
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        let mut dialog = Self {
            current: existing,
            entries: Vec::new(),
            error: None,
            new_folder: String::new(),
        };
        dialog.refresh();
        dialog
    }

    /// The folder shown.
    pub fn current(&self) -> &Path {
        &self.current
    }

    fn refresh(&mut self) {
        self.error = None;
        match std::fs::read_dir(&self.current) {
            Ok(read) => {
                let mut dirs: Vec<PathBuf> = read
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| path.is_dir())
                    .filter(|path| {
                        path.file_name()
                            .is_some_and(|name| !name.to_string_lossy().starts_with('.'))
                    })
                    .collect();
                dirs.sort();
                self.entries = dirs;
            }
            Err(error) => {
                self.entries.clear();
                self.error = Some(format!("cannot list {}: {error}", self.current.display()));
            }
        }
    }

    fn go(&mut self, path: PathBuf) {
        self.current = path;
        self.refresh();
    }

    /// Draws the dialog; returns what the user did.
    pub fn show(&mut self, ctx: &egui::Context) -> DialogOutcome {
        let mut outcome = DialogOutcome::Open;
        let mut open = true;
        egui::Window::new("Choose a folder")
            .open(&mut open)
            .collapsible(false)
            .default_size([460.0, 380.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    let parent = self.current.parent().map(Path::to_path_buf);
                    if ui
                        .add_enabled(parent.is_some(), egui::Button::new("Up"))
                        .clicked()
                    {
                        if let Some(parent) = parent {
                            self.go(parent);
                        }
                    }
                    ui.label(RichText::new(self.current.display().to_string()).monospace());
                });
                ui.separator();
                egui::ScrollArea::vertical()
                    .max_height(240.0)
                    .auto_shrink([false, true])
                    .show(ui, |ui| {
                        let mut next = None;
                        for entry in &self.entries {
                            let name = entry
                                .file_name()
                                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                            if ui.selectable_label(false, format!("{name}/")).clicked() {
                                next = Some(entry.clone());
                            }
                        }
                        if self.entries.is_empty() && self.error.is_none() {
                            ui.weak("no sub-folders");
                        }
                        if let Some(next) = next {
                            self.go(next);
                        }
                    });
                if let Some(error) = &self.error {
                    ui.colored_label(egui::Color32::from_rgb(240, 90, 80), error);
                }
                ui.separator();
                ui.horizontal(|ui| {
                    let label = ui.label("new folder");
                    ui.add(egui::TextEdit::singleline(&mut self.new_folder).desired_width(160.0))
                        .labelled_by(label.id);
                    let name = self.new_folder.trim().to_string();
                    if ui
                        .add_enabled(!name.is_empty(), egui::Button::new("Create"))
                        .clicked()
                    {
                        let path = self.current.join(&name);
                        match std::fs::create_dir_all(&path) {
                            Ok(()) => {
                                self.new_folder.clear();
                                self.go(path);
                            }
                            Err(error) => {
                                self.error =
                                    Some(format!("cannot create {}: {error}", path.display()));
                            }
                        }
                    }
                });
                ui.horizontal(|ui| {
                    if ui.button("Use this folder").clicked() {
                        outcome = DialogOutcome::Chosen(self.current.clone());
                    }
                    if ui.button("Cancel").clicked() {
                        outcome = DialogOutcome::Cancelled;
                    }
                });
            });
        if !open {
            outcome = DialogOutcome::Cancelled;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_the_nearest_existing_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let dialog = FolderDialog::new(&dir.path().join("missing/deeper"));
        assert_eq!(dialog.current(), dir.path());
        assert_eq!(dialog.entries, vec![dir.path().join("sub")]);
    }
}
