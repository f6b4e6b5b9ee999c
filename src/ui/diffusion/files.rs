//! The "State, import, video" section of the diffusion panel: Save state…, Save scenario…,
//! Open…, the range an
//! image's luminance is mapped onto, files dropped on the window, and Record video (GIF or MP4,
//! frames per second, a frame every K steps, layers, step counter). The dialogs are
//! `egui_file`'s (drawn with egui, as the export folder's chooser); the files are read and
//! written by the simulation thread.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use eframe::egui;
use egui_file::{FileDialog, State};

use heatlab_engine::export::{FrameLook, ShownLayers, VideoFormat};
use heatlab_engine::import::LuminanceRange;

use super::command::DiffusionCommand;

/// The extension heatlab gives saved states.
pub const STATE_EXTENSION: &str = "hlstate";

/// The video the user set up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoChoice {
    /// GIF or MP4.
    pub format: VideoFormat,
    /// Frames per second.
    pub fps: u32,
    /// A frame every this many steps.
    pub every: u64,
    /// Field, Laplacian or both.
    pub layers: ShownLayers,
    /// "step N" below each frame.
    pub step_counter: bool,
}

impl Default for VideoChoice {
    fn default() -> Self {
        Self {
            format: VideoFormat::Gif,
            fps: 20,
            every: 10,
            layers: ShownLayers::Field,
            step_counter: true,
        }
    }
}

impl VideoChoice {
    /// How frames are drawn (`colorbar` from the export settings).
    pub fn look(&self, colorbar: bool) -> FrameLook {
        FrameLook {
            layers: self.layers,
            colorbar,
            step_counter: self.step_counter,
            max_side: 512,
        }
    }
}

/// The text of the open dialog's Open button (the click is found by it).
const OPEN_BUTTON: &str = "Open";

/// Which dialog is open.
enum Dialog {
    Save(FileDialog),
    SaveScenario(FileDialog),
    /// With the file name as typed in it, kept by its name filter (which sees every edit).
    Open(FileDialog, Arc<Mutex<String>>),
}

/// The section's own state: the image range and the dialog while open.
#[derive(Default)]
pub struct FilesSection {
    /// The values of black and white when an image is opened.
    pub range: LuminanceRange,
    /// The video to record.
    pub video: VideoChoice,
    /// Whether a video is being recorded.
    pub video_recording: bool,
    /// The notice of the file being opened, until it is opened or refused.
    pub opening: Option<String>,
    dialog: Option<Dialog>,
}

/// Where a dialog starts: `dir` when it exists, else the current folder.
pub(crate) fn start_dir(dir: &Path) -> PathBuf {
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
    /// Record video: format, layers, pace, step counter and the Record / Stop button.
    pub fn video_ui(&mut self, ui: &mut egui::Ui, ready: bool) -> Option<DiffusionCommand> {
        ui.heading("Video");
        let video = &mut self.video;
        let idle = !self.video_recording;
        ui.add_enabled_ui(idle, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("format");
                egui::ComboBox::from_id_salt("video format")
                    .selected_text(video.format.to_string())
                    .show_ui(ui, |ui| {
                        for format in VideoFormat::ALL {
                            ui.selectable_value(&mut video.format, format, format.to_string());
                        }
                    })
                    .response
                    .labelled_by(label.id)
                    .on_hover_text("MP4 is encoded by ffmpeg, which must be on PATH");
                let label = ui.label("show");
                egui::ComboBox::from_id_salt("video layers")
                    .selected_text(video.layers.to_string())
                    .show_ui(ui, |ui| {
                        for layers in ShownLayers::ALL {
                            ui.selectable_value(&mut video.layers, layers, layers.to_string());
                        }
                    })
                    .response
                    .labelled_by(label.id);
            });
            ui.horizontal(|ui| {
                ui.checkbox(&mut video.step_counter, "step counter");
                let label = ui.label("fps");
                ui.add(egui::DragValue::new(&mut video.fps).range(1..=100))
                    .labelled_by(label.id);
                let label = ui.label("frame every");
                ui.add(
                    egui::DragValue::new(&mut video.every)
                        .range(1..=1_000_000)
                        .suffix(" steps"),
                )
                .labelled_by(label.id);
            });
        });
        let mut request = None;
        ui.horizontal(|ui| {
            if self.video_recording {
                if ui
                    .button("Stop video")
                    .on_hover_text("finish the video file (it is kept and playable)")
                    .clicked()
                {
                    request = Some(DiffusionCommand::StopVideo);
                }
                ui.spinner();
                ui.label("recording…");
            } else if ui
                .add_enabled(ready, egui::Button::new("Record video"))
                .on_hover_text(
                    "records the views while the simulation runs, into the export folder; colorbars follow \"colorbar in PNGs\"",
                )
                .clicked()
            {
                request = Some(DiffusionCommand::StartVideo(self.video));
            }
        });
        request
    }

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
            if ui
                .add_enabled(ready, egui::Button::new("Save scenario…"))
                .on_hover_text(
                    "the heat problem and its initial field as a scenario file (.toml, with the \
                     material map and the start as .npy beside it when needed)",
                )
                .clicked()
            {
                let mut dialog = FileDialog::save_file()
                    .initial_path(start_dir(dir))
                    .default_filename("scenario.toml")
                    .title("Save scenario")
                    .show_rename(false)
                    .default_size([560.0, 420.0]);
                dialog.open();
                self.dialog = Some(Dialog::SaveScenario(dialog));
            }
            let open = ui.button("Open…").on_hover_text(
                "a saved state, a scenario (.toml), or an initial field: a 2-D .npy array or a \
                 PNG/JPEG image (its luminance mapped onto the range below); or drop a file on \
                 the window",
            );
            if open.clicked() {
                let typed = Arc::new(Mutex::new(String::new()));
                let seen = Arc::clone(&typed);
                // The dialog asks its name filter about the typed name every frame: that is how
                // the typed name reaches the Open button's click (the dialog itself opens only
                // a file clicked in its list).
                let keep_typed = move |name: &str| {
                    let mut kept = seen.lock().unwrap_or_else(PoisonError::into_inner);
                    name.clone_into(&mut kept);
                    true
                };
                let mut dialog = FileDialog::open_file()
                    .initial_path(start_dir(dir))
                    .title("Open a state, a scenario or an initial field")
                    .open_button_text(OPEN_BUTTON.into())
                    .filename_filter(Box::new(keep_typed))
                    .show_rename(false)
                    .show_new_folder(false)
                    .default_size([560.0, 420.0]);
                dialog.open();
                self.dialog = Some(Dialog::Open(dialog, typed));
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

    /// The folder the open or save dialog shows, while one is open.
    pub fn dialog_directory(&self) -> Option<&Path> {
        match self.dialog.as_ref()? {
            Dialog::Save(dialog) | Dialog::SaveScenario(dialog) | Dialog::Open(dialog, _) => {
                Some(dialog.directory())
            }
        }
    }

    /// Shows the open dialog; returns what was chosen in it.
    pub fn dialog_ui(&mut self, ctx: &egui::Context) -> Option<DiffusionCommand> {
        let (dialog, typed, scenario) = match self.dialog.as_mut()? {
            Dialog::Save(dialog) => (dialog, None, false),
            Dialog::SaveScenario(dialog) => (dialog, None, true),
            Dialog::Open(dialog, typed) => (dialog, Some(typed), false),
        };
        let state = dialog.show(ctx).state();
        let mut chosen = match state {
            State::Open => None,
            State::Selected => dialog.path().map(Path::to_path_buf),
            State::Closed | State::Cancelled => None,
        };
        if let Some(typed) = typed.filter(|_| open_clicked(ctx)) {
            // Open with a typed name opens what is typed (a folder: the dialog goes there), as
            // Enter does; a name that is not there is the simulation thread's notice.
            let name = typed.lock().unwrap_or_else(PoisonError::into_inner).clone();
            let path = dialog.directory().join(name.trim());
            if !name.trim().is_empty() && path.is_dir() {
                dialog.set_path(path);
                return None;
            }
            if !name.trim().is_empty() {
                chosen = Some(path);
            }
        }
        if state == State::Open && chosen.is_none() {
            return None;
        }
        let save = matches!(self.dialog, Some(Dialog::Save(_) | Dialog::SaveScenario(_)));
        self.dialog = None;
        let mut path = chosen?;
        // The simulation thread writes a scenario for a `.toml` path.
        if scenario && !heatlab_engine::session::start::is_scenario_file(&path) {
            path.set_extension("toml");
        }
        Some(if save {
            DiffusionCommand::SaveState(path)
        } else {
            DiffusionCommand::Open(path)
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
            "drop to open: a saved state, a scenario (.toml), a .npy array or a PNG/JPEG image",
            egui::FontId::proportional(20.0),
            egui::Color32::WHITE,
        );
    }
}

/// Whether the open dialog's Open button was clicked this frame.
fn open_clicked(ctx: &egui::Context) -> bool {
    ctx.output(|output| {
        output.events.iter().any(|event| {
            matches!(event, egui::output::OutputEvent::Clicked(info)
                if info.label.as_deref() == Some(OPEN_BUTTON))
        })
    })
}
