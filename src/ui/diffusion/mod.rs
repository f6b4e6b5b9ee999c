//! The diffusion tab: the controls on the left, the status line on top, the field and its
//! Laplacian in the middle, the timings below. The simulation runs on its own thread ([`sim`]);
//! the controls push [`DiffusionCommand`]s, which [`DiffusionPanel::apply`] turns into changes
//! of the settings and commands to that thread.

pub mod agreement;
pub mod brush;
pub mod command;
pub mod controls;
pub mod files;
pub mod kernels;
pub mod probes;
pub mod profile;
pub mod sim;
pub mod timings;
pub mod timings_panel;
pub mod view;
pub mod views;

use std::path::PathBuf;
use std::time::Duration;

use eframe::egui;

use crate::compute::{BackendChoice, BackendKind};
use crate::field::JaggedParams;
use crate::grid::GridSize;
use crate::sim::generate::GenerationPlace;
use crate::sim::FieldStats;

use super::folder::FolderField;
use super::notice::{Level, Notices};
use super::settings::Settings;
pub use command::DiffusionCommand;
use controls::{CoefficientInput, Controls};
use files::{FileRequest, FilesSection};
pub use sim::{BackendStatus, ExportKind, Frame, FramePart};
use sim::{ExportJob, Recording, SimCommand, SimEvent, SimWorker, ViewRequest, ViewRequests};
pub use timings::Timings;
use view::{Viewport, MAX_PREVIEW_SIDE};
use views::Views;

/// Notices shown at once above the views (the newest).
const NOTICES_SHOWN: usize = 2;

/// What the panel knows of the simulation, as its thread last reported it.
#[derive(Debug, Clone, Default)]
pub struct SimState {
    /// The backend in use, once known.
    pub backend: Option<BackendStatus>,
    /// Long work in progress: what, and the fraction done.
    pub progress: Option<(String, f32)>,
    /// The size of the field, once there is one.
    pub field_size: Option<GridSize>,
    /// How the last jagged field was generated (where, how long).
    pub last_generation: Option<crate::sim::generate::Generation>,
    /// Whether a regeneration asked for by dragging a field parameter is on its way.
    pub live_generating: bool,
    /// Jagged fields generated since the app started.
    pub fields_generated: u64,
    /// Steps since the initial field.
    pub step: u64,
    /// Whether the simulation is playing.
    pub playing: bool,
    /// The latest statistics of the field.
    pub stats: Option<FieldStats>,
    /// Whether a PNG sequence is being recorded.
    pub recording: bool,
    /// Exports asked for and not finished.
    pub exports_pending: usize,
    /// Files written by the last export.
    pub last_exported: Vec<PathBuf>,
    /// The message of the last non-finite stop, until the next step.
    pub non_finite: Option<String>,
    /// Simulation frames shown so far.
    pub frames_shown: u64,
    /// The last "measure kernels" results, and whether a measurement is running.
    pub kernel_timings: kernels::KernelTimings,
}

/// The diffusion tab.
pub struct DiffusionPanel {
    worker: Option<SimWorker>,
    state: SimState,
    views: Views,
    timings: Timings,
    /// The live agreement check's results.
    agreement: agreement::AgreementLog,
    notices: Notices,
    coefficient: CoefficientInput,
    folder: FolderField,
    sent_views: Option<ViewRequests>,
    /// Start playing once the first field is ready.
    autoplay: bool,
    generated_with: Option<JaggedParams>,
    /// Brush, probes and line profile.
    paint: brush::PaintTools,
    /// Paint the screenshot mode's demo strokes once the field is ready.
    paint_demo: bool,
    /// Save state, Open and the image range.
    files: FilesSection,
}

impl DiffusionPanel {
    /// Starts the simulation thread and asks it for the backend and the field of `settings`.
    /// `notify` asks the UI for a repaint.
    pub fn new(settings: &Settings, notify: super::worker::Notify, autoplay: bool) -> Self {
        let mut notices = Notices::default();
        let worker = match sim::spawn(notify) {
            Ok(worker) => Some(worker),
            Err(error) => {
                log::error!("cannot start the simulation thread: {error}");
                notices.push(
                    Level::Error,
                    format!("cannot start the simulation thread: {error}"),
                );
                None
            }
        };
        let mut panel = Self {
            worker,
            state: SimState::default(),
            views: Views::default(),
            timings: Timings::default(),
            agreement: agreement::AgreementLog::default(),
            notices,
            coefficient: CoefficientInput {
                typed: settings.step.coeff,
                unlock_unstable: false,
            },
            folder: FolderField::new(&settings.export_dir),
            sent_views: None,
            autoplay,
            generated_with: None,
            paint: brush::PaintTools::default(),
            paint_demo: false,
            files: FilesSection::default(),
        };
        panel.send(SimCommand::SwitchBackend(settings.backend));
        panel.send(SimCommand::SetParams(settings.step));
        panel.send(SimCommand::SetStepsPerFrame(settings.steps_per_frame));
        panel.send(SimCommand::SetAutoSteps(settings.auto_steps));
        panel.agreement.set_enabled(settings.agreement_check);
        panel.send(SimCommand::SetAgreementCheck(settings.agreement_check));
        panel.send(SimCommand::SetKernel(settings.kernel));
        panel.regenerate(settings);
        panel
    }

    // ----- What the app, tests and the screenshot mode read. -----

    /// What the simulation thread last reported.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// The notices on screen.
    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    /// Adds a notice.
    pub fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notices.push(level, text);
    }

    /// The live timings.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// The live agreement check's results.
    pub fn agreement(&self) -> &agreement::AgreementLog {
        &self.agreement
    }

    /// The zoom of both views (1 shows the whole field).
    pub fn zoom(&self) -> f32 {
        self.views.viewport.zoom
    }

    /// Whether a field is loaded and a picture of it is on screen.
    pub fn is_ready(&self) -> bool {
        self.state.field_size.is_some()
            && self.views.field.has_picture()
            && self.state.progress.is_none()
    }

    /// Paints the demo strokes, probes and line of `heatlab gui --paint-demo` once the field is
    /// ready.
    pub fn set_paint_demo(&mut self) {
        self.paint_demo = true;
    }

    /// The brush, the probes and the line profile.
    pub fn paint_tools(&self) -> &brush::PaintTools {
        &self.paint
    }

    /// The brush, the probes and the line profile, to change (tests, the screenshot mode).
    pub fn paint_tools_mut(&mut self) -> &mut brush::PaintTools {
        &mut self.paint
    }

    /// The field view's shown value at a cell (exact when the view is not reduced).
    pub fn field_value_at(&self, row: usize, col: usize) -> Option<(f32, usize)> {
        self.views.field.value_at(row, col)
    }

    /// Whether the field view shows a picture.
    pub fn has_picture(&self) -> bool {
        self.views.field.has_picture()
    }

    /// The export folder as typed.
    pub fn export_dir(&self) -> PathBuf {
        self.folder.path()
    }

    /// The folder the chooser shows while it is open.
    pub fn folder_dialog_directory(&self) -> Option<&std::path::Path> {
        self.folder.dialog_directory()
    }

    /// Stops playing (another tab needs the cores) and does not start by itself any more.
    pub fn hold(&mut self) {
        self.autoplay = false;
        if self.state.playing {
            self.state.playing = false;
            self.send(SimCommand::Pause);
        }
    }

    /// Opens a saved state or an initial field (`.npy`, PNG, JPEG), as dropping it on the
    /// window does; the simulation thread reads it and a notice says how it went.
    pub fn open_file(&mut self, path: PathBuf) {
        self.notify(Level::Info, format!("opening {}…", path.display()));
        self.send(SimCommand::Open(path, self.files.range));
    }

    /// Opens the first of the files dropped on the window this frame, if any (the app calls
    /// this whichever tab is shown); returns whether a file was dropped.
    pub fn open_dropped(&mut self, ctx: &egui::Context) -> bool {
        let (Some(path), count) = FilesSection::dropped(ctx) else {
            return false;
        };
        if count > 1 {
            self.notify(
                Level::Warning,
                format!("{count} files dropped: opening only the first"),
            );
        }
        self.open_file(path);
        true
    }

    /// Saves the state to `path` (written by the simulation thread; a notice says how it went).
    pub fn save_state(&mut self, path: PathBuf) {
        self.send(SimCommand::SaveState(path));
    }

    fn file_request(&mut self, request: FileRequest, settings: &mut Settings) {
        match request {
            FileRequest::SaveState(path) => self.save_state(path),
            FileRequest::Open(path) => self.open_file(path),
            FileRequest::StartVideo(choice) => self.start_video(choice, settings),
            FileRequest::StopVideo => {
                self.files.video_recording = false;
                self.state.recording = false;
                self.send(SimCommand::SetRecording(None));
            }
        }
    }

    /// Records a video into the export folder, named after the step it starts at.
    fn start_video(&mut self, choice: files::VideoChoice, settings: &mut Settings) {
        let dir = self.folder.path();
        if dir.as_os_str().is_empty() {
            self.notify(Level::Error, "choose a folder to record into first");
            return;
        }
        settings.export_dir = dir.clone();
        let path = dir.join(format!(
            "recording_{:06}.{}",
            self.state.step,
            choice.format.extension()
        ));
        self.files.video_recording = true;
        self.state.recording = true;
        self.notify(
            Level::Info,
            format!(
                "recording a frame every {} steps into {}",
                choice.every,
                path.display()
            ),
        );
        self.send(SimCommand::SetRecording(Some(Recording {
            dir,
            every: choice.every.max(1),
            colorbar: settings.export_colorbar,
            video: Some(sim::VideoRecording {
                path,
                fps: choice.fps,
                look: choice.look(settings.export_colorbar),
            }),
        })));
    }

    fn opened(&mut self, opened: sim::Opened, settings: &mut Settings) {
        self.agreement.clear();
        self.timings.clear();
        self.state.progress = None;
        self.state.field_size = Some(opened.size);
        self.state.step = opened.step;
        self.state.non_finite = None;
        if let Some(params) = opened.params {
            settings.step = params;
            self.coefficient.typed = params.coeff;
            self.coefficient.unlock_unstable |= params.coeff > crate::compute::STABLE_COEFF_LIMIT;
        }
        self.generated_with = match opened.origin {
            crate::state::FieldOrigin::Jagged(params) => {
                settings.field = params;
                Some(params)
            }
            crate::state::FieldOrigin::Imported { .. }
            | crate::state::FieldOrigin::Scenario { .. } => None,
        };
        let what = match opened.params {
            Some(params) => format!(
                "opened the state of a {} field at step {} (coeff {}, {} boundary) from {}",
                opened.size,
                opened.step,
                params.coeff,
                params.boundary,
                opened.path.display()
            ),
            None => format!(
                "imported a {} initial field from {}",
                opened.size,
                opened.path.display()
            ),
        };
        self.notify(Level::Info, what);
    }

    /// Asks the simulation thread for a copy of the current field and the step parameters
    /// (the Kernel lab validates against them); the answer comes on `reply`.
    pub fn snapshot_field(
        &mut self,
        reply: std::sync::mpsc::Sender<
            Result<(crate::grid::Grid, crate::compute::StepParams), String>,
        >,
    ) {
        self.send(SimCommand::SnapshotField(reply));
    }

    /// Loads a kernel the Kernel lab validated and steps with it.
    pub fn use_user_kernel(&mut self, source: String, settings: &mut Settings) {
        settings.kernel = crate::compute::KernelChoice::User;
        self.send(SimCommand::UseUserKernel(source));
    }

    fn send(&mut self, command: SimCommand) {
        if let Some(worker) = self.worker.as_ref().filter(|w| w.is_alive()) {
            if worker.send(command) {
                return;
            }
        }
        let text = "the simulation thread has stopped; restart heatlab";
        if !self.notices.contains(text) {
            log::error!("{text}");
            self.notices.push(Level::Error, text);
        }
    }

    /// Regenerates at once when a field parameter other than the size changed and the field
    /// is generated on the GPU (milliseconds): dragging the seed, exponent, cutoff or
    /// percentile then shows each new field. One generation is in flight at a time; the
    /// latest values go next.
    fn regenerate_live(&mut self, settings: &Settings) {
        let on_gpu = self
            .state
            .last_generation
            .as_ref()
            .is_some_and(|generation| generation.place == GenerationPlace::Gpu);
        let Some(generated) = self.generated_with else {
            return;
        };
        if !settings.live_field
            || !on_gpu
            || self.state.live_generating
            || self.state.progress.is_some()
            || settings.field == generated
            || settings.field.size != generated.size
            || settings.field.validate().is_err()
        {
            return;
        }
        self.state.live_generating = true;
        self.generated_with = Some(settings.field);
        self.send(SimCommand::Generate(settings.field));
    }

    fn regenerate(&mut self, settings: &Settings) {
        match settings.field.validate() {
            Ok(()) => {
                self.state.progress =
                    Some((format!("generating the {} field", settings.field.size), 0.0));
                self.generated_with = Some(settings.field);
                self.send(SimCommand::Generate(settings.field));
            }
            Err(error) => self.notify(Level::Error, format!("cannot generate: {error}")),
        }
    }

    fn set_recording(&mut self, on: bool, settings: &mut Settings) {
        let dir = self.folder.path();
        if on && dir.as_os_str().is_empty() {
            self.notify(Level::Error, "choose a folder to record into first");
            return;
        }
        settings.export_dir = dir.clone();
        self.state.recording = on;
        // A PNG recording replaces a video being recorded (which is finished and kept).
        self.files.video_recording = false;
        let recording = on.then(|| Recording {
            dir: dir.join("frames"),
            every: settings.record_every.max(1),
            colorbar: settings.export_colorbar,
            video: None,
        });
        if on {
            self.notify(
                Level::Info,
                format!(
                    "recording a frame every {} steps into {}",
                    settings.record_every,
                    dir.join("frames").display()
                ),
            );
        }
        self.send(SimCommand::SetRecording(recording));
    }

    fn export(&mut self, kind: ExportKind, settings: &mut Settings) {
        let dir = self.folder.path();
        if dir.as_os_str().is_empty() {
            self.notify(Level::Error, "choose a folder to export into first");
            return;
        }
        settings.export_dir = dir.clone();
        self.state.exports_pending += 1;
        self.send(SimCommand::Export(ExportJob {
            kind,
            dir,
            colorbar: settings.export_colorbar,
        }));
    }

    /// Writes the probe series as CSV into the export folder.
    fn export_probes(&mut self, settings: &mut Settings) {
        let dir = self.folder.path();
        if dir.as_os_str().is_empty() {
            self.notify(Level::Error, "choose a folder to export into first");
            return;
        }
        settings.export_dir = dir.clone();
        match self.paint.export_csv(&dir, self.state.step) {
            Ok(path) => {
                self.notify(Level::Info, format!("wrote {}", path.display()));
                self.state.last_exported = vec![path];
            }
            Err(error) => self.notify(Level::Error, format!("probe export failed: {error}")),
        }
    }

    /// Applies what a control asked for.
    pub fn apply(&mut self, command: DiffusionCommand, settings: &mut Settings) {
        match command {
            DiffusionCommand::Play => {
                self.state.playing = true;
                self.state.non_finite = None;
                self.send(SimCommand::Play);
            }
            DiffusionCommand::Pause => {
                self.state.playing = false;
                self.send(SimCommand::Pause);
            }
            DiffusionCommand::Step(steps) => {
                self.state.non_finite = None;
                self.send(SimCommand::Step(steps));
            }
            DiffusionCommand::Reset => {
                self.state.non_finite = None;
                self.send(SimCommand::Reset);
                self.timings.clear();
                self.paint.restart(None);
            }
            DiffusionCommand::Regenerate => self.regenerate(settings),
            DiffusionCommand::SwitchBackend(choice) => {
                settings.backend = choice;
                self.send(SimCommand::SwitchBackend(choice));
            }
            DiffusionCommand::BoundaryChanged => self.send(SimCommand::SetParams(settings.step)),
            DiffusionCommand::CoefficientChanged => {
                let accepted = self.coefficient.accepted(settings.step.boundary);
                if let Some(params) = accepted.filter(|p| p.coeff != settings.step.coeff) {
                    settings.step = params;
                    self.send(SimCommand::SetParams(params));
                }
            }
            DiffusionCommand::StepsPerFrameChanged => {
                self.send(SimCommand::SetStepsPerFrame(settings.steps_per_frame));
            }
            DiffusionCommand::AutoStepsChanged => {
                self.send(SimCommand::SetAutoSteps(settings.auto_steps));
                self.send(SimCommand::SetStepsPerFrame(settings.steps_per_frame));
            }
            DiffusionCommand::ViewsChanged => self.sent_views = None,
            DiffusionCommand::Export(kind) => self.export(kind, settings),
            DiffusionCommand::SetRecording(on) => self.set_recording(on, settings),
            DiffusionCommand::RecordEveryChanged => {
                if self.state.recording {
                    self.set_recording(true, settings);
                }
            }
            DiffusionCommand::ZoomIn => self.views.viewport.zoom_by(2.0),
            DiffusionCommand::ZoomOut => self.views.viewport.zoom_by(0.5),
            DiffusionCommand::Fit => self.views.viewport = Viewport::default(),
            DiffusionCommand::AgreementCheckChanged => {
                self.agreement.set_enabled(settings.agreement_check);
                self.send(SimCommand::SetAgreementCheck(settings.agreement_check));
            }
            DiffusionCommand::SetKernel(kernel) => {
                settings.kernel = kernel;
                self.send(SimCommand::SetKernel(kernel));
            }
            DiffusionCommand::MeasureKernels => {
                self.state.kernel_timings.started();
                self.send(SimCommand::MeasureKernels);
            }
        }
    }

    // ----- Messages from the simulation thread. -----

    /// Takes the thread's events and its latest frame.
    pub fn poll(&mut self, ctx: &egui::Context, settings: &mut Settings) {
        let mut events = Vec::new();
        if let Some(worker) = &self.worker {
            while let Some(event) = worker.try_event() {
                events.push(event);
            }
        }
        for event in events {
            self.handle_event(event, settings);
        }
        if let Some(frame) = self.worker.as_ref().and_then(SimWorker::take_frame) {
            self.show_frame(ctx, frame, settings);
        }
        self.regenerate_live(settings);
    }

    fn handle_event(&mut self, event: SimEvent, settings: &mut Settings) {
        match event {
            SimEvent::Backend(status) => {
                self.timings.clear();
                // A refused switch leaves the old backend running: the selector shows that one.
                if settings.backend != BackendChoice::Auto {
                    settings.backend = match status.kind {
                        BackendKind::Cpu => BackendChoice::Cpu,
                        BackendKind::Cuda => BackendChoice::Cuda,
                    };
                }
                self.state.backend = Some(status);
            }
            SimEvent::GenerationFailed => {
                self.state.progress = None;
                self.state.live_generating = false;
                // The parameters on screen were not generated: "Regenerate *" says so.
                self.generated_with = None;
            }
            // A live regeneration takes milliseconds: no progress bar flickering while dragging.
            SimEvent::Progress(..) if self.state.live_generating => {}
            SimEvent::Progress(what, fraction) => {
                self.state.progress =
                    (fraction < 1.0 && !what.is_empty()).then_some((what, fraction));
            }
            SimEvent::FieldReady(params, generation) => {
                let size = params.size;
                let live = std::mem::take(&mut self.state.live_generating);
                self.agreement.clear();
                self.state.progress = None;
                self.state.field_size = Some(size);
                self.state.step = 0;
                self.timings.clear();
                self.paint.restart(Some(size));
                if std::mem::take(&mut self.paint_demo) {
                    self.paint.paint_demo(size);
                }
                if let Some(why) = generation.fallback() {
                    let text = format!("the field was generated on the CPU: {why}");
                    if !self.notices.contains(&text) {
                        self.notify(Level::Warning, text);
                    }
                }
                if !live {
                    self.notify(
                        Level::Info,
                        format!(
                            "generated the {size} field on the {} in {}",
                            generation.place,
                            generation_time(generation.wall)
                        ),
                    );
                }
                self.state.last_generation = Some(generation);
                self.state.fields_generated += 1;
                if self.autoplay {
                    self.autoplay = false;
                    self.apply(DiffusionCommand::Play, settings);
                }
            }
            SimEvent::NonFinite { message, step } => {
                self.state.playing = false;
                self.state.step = step;
                self.notify(Level::Error, message.clone());
                self.state.non_finite = Some(message);
            }
            SimEvent::Stopped => self.state.playing = false,
            SimEvent::Notice(level, text) => self.notify(level, text),
            SimEvent::RecordingStopped => {
                self.state.recording = false;
                self.files.video_recording = false;
            }
            SimEvent::Agreement(report) => self.agreement.record(report),
            SimEvent::PaintHistory(undo, redo) => self.paint.set_history(undo, redo),
            SimEvent::Opened(opened) => self.opened(opened, settings),
            SimEvent::StateSaved(path, step) => self.notify(
                Level::Info,
                format!("saved the state at step {step} to {}", path.display()),
            ),
            SimEvent::KernelTimings(rows) => self.state.kernel_timings.finished(rows),
            SimEvent::Exported(paths) => {
                self.state.exports_pending = self.state.exports_pending.saturating_sub(1);
                if !paths.is_empty() {
                    let names: Vec<String> =
                        paths.iter().map(|p| p.display().to_string()).collect();
                    self.notify(Level::Info, format!("wrote {}", names.join(", ")));
                    self.state.last_exported = paths;
                }
            }
        }
    }

    fn show_frame(&mut self, ctx: &egui::Context, mut frame: Frame, settings: &mut Settings) {
        let size = frame.size;
        // The pictures move into the views (no copies); the frame keeps the ones they replace.
        let mut upload = self
            .views
            .field
            .update(ctx, "field", &mut frame.field, size);
        upload += self
            .views
            .laplacian
            .update(ctx, "laplacian", &mut frame.laplacian, size);
        self.state.step = frame.step;
        self.state.playing = frame.playing;
        if frame.stats.is_some() {
            self.state.stats = frame.stats;
        }
        self.state.field_size = Some(size);
        if settings.auto_steps {
            settings.steps_per_frame = frame.steps_per_frame;
        }
        self.timings.record(&frame, upload);
        self.paint.record(frame.step, size, frame.samples.as_ref());
        self.state.frames_shown += 1;
        // The simulation thread colours into the replaced pictures again and frees the rest on
        // its own thread (a megabyte per picture freed here cost it page faults every frame).
        self.send(SimCommand::ReturnPictures(vec![
            frame.field,
            frame.laplacian,
        ]));
    }

    /// Tells the simulation thread the sizes and looks the views need, when they changed.
    pub fn sync_views(&mut self, settings: &Settings) {
        let clamp =
            |(w, h): (usize, usize)| (w.clamp(16, MAX_PREVIEW_SIDE), h.clamp(16, MAX_PREVIEW_SIDE));
        let views = ViewRequests {
            field: ViewRequest {
                colormap: settings.field_view.colormap,
                range_mode: settings.field_view.range_mode(),
                max_size: clamp(self.views.field.shown_pixels),
            },
            laplacian: ViewRequest {
                colormap: settings.laplacian_view.colormap,
                range_mode: settings.laplacian_view.range_mode(),
                max_size: clamp(self.views.laplacian.shown_pixels),
            },
        };
        if self.sent_views != Some(views) {
            self.sent_views = Some(views);
            self.send(SimCommand::SetViews(views));
        }
    }

    /// Space plays or pauses, S steps once, R resets (unless a text field has the keyboard).
    pub fn shortcuts(&self, ctx: &egui::Context) -> Vec<DiffusionCommand> {
        if ctx.egui_wants_keyboard_input() || self.state.field_size.is_none() {
            return Vec::new();
        }
        let (space, s, r) = ctx.input(|i| {
            (
                i.key_pressed(egui::Key::Space),
                i.key_pressed(egui::Key::S),
                i.key_pressed(egui::Key::R),
            )
        });
        let mut commands = Vec::new();
        if space {
            commands.push(if self.state.playing {
                DiffusionCommand::Pause
            } else {
                DiffusionCommand::Play
            });
        }
        if s {
            commands.push(DiffusionCommand::Step(1));
        }
        if r {
            commands.push(DiffusionCommand::Reset);
        }
        commands
    }

    /// The whole tab; returns what its controls asked for, for the app to apply.
    pub fn ui(&mut self, ui: &mut egui::Ui, settings: &mut Settings) -> Vec<DiffusionCommand> {
        let mut commands = Vec::new();
        if self.state.field_size.is_some() {
            self.paint.shortcuts(ui.ctx());
        }
        let mut file_requests = Vec::new();
        egui::Panel::top("status").show(ui, |ui| views::status_ui(ui, settings, &self.state));
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    Controls {
                        settings: &mut *settings,
                        state: &self.state,
                        coefficient: &mut self.coefficient,
                        folder: &mut self.folder,
                        generated_with: self.generated_with,
                        commands: &mut commands,
                    }
                    .ui(ui);
                    ui.separator();
                    self.paint.controls_ui(ui);
                    let ready = self.state.field_size.is_some();
                    self.files
                        .ui(ui, ready, self.state.step, &self.folder.path());
                    ui.separator();
                    if let Some(request) = self.files.video_ui(ui, ready) {
                        file_requests.push(request);
                    }
                });
            });
        // The views are as tall as their width allows; the timings take the rest of the height.
        let available = ui.available_size();
        let notices = self.notices.len().min(NOTICES_SHOWN) as f32;
        let views_height =
            view::views_height(available.x, self.state.field_size) + 22.0 * notices + 24.0;
        let timings_height = if settings.show_plots {
            (available.y - views_height).clamp(180.0, (available.y * 0.6).max(180.0))
        } else {
            90.0
        };
        egui::Panel::bottom("timings")
            .exact_size(timings_height)
            .show(ui, |ui| {
                timings_panel::timings_ui(
                    ui,
                    &self.timings,
                    &self.agreement,
                    &mut settings.show_plots,
                );
            });
        if self.paint.has_plots()
            || matches!(self.paint.tool, brush::Tool::Probe | brush::Tool::Line)
        {
            let export = egui::Panel::bottom("probes")
                .exact_size(220.0)
                .show(ui, |ui| self.paint.plots_ui(ui))
                .inner;
            if export {
                self.export_probes(settings);
            }
        }
        egui::CentralPanel::default().show(ui, |ui| {
            self.notices.ui(ui, NOTICES_SHOWN);
            let size = self.state.field_size;
            self.views
                .ui(ui, settings, &mut commands, &mut self.paint, size);
        });
        for command in self.paint.take_commands(self.state.field_size) {
            self.send(command);
        }
        for message in self.paint.take_messages() {
            self.notify(Level::Warning, message);
        }
        if let Some(dir) = self.folder.dialog_ui(ui.ctx()) {
            settings.export_dir = dir;
        }
        file_requests.extend(self.files.dialog_ui(ui.ctx()));
        for request in file_requests {
            self.file_request(request, settings);
        }
        FilesSection::hover_ui(ui);
        if self.state.progress.is_some() || self.state.exports_pending > 0 {
            // Spinners and progress bars animate.
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        commands
    }
}

/// A generation's time for people: milliseconds below a second.
pub(crate) fn generation_time(took: Duration) -> String {
    let seconds = took.as_secs_f64();
    if seconds < 1.0 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}
