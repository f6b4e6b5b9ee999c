//! The eframe application: panels of controls, the two views and the timings. Every action is a
//! [`Command`] to the worker thread; the UI only draws what comes back.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui;

use crate::compute::{BackendChoice, BackendKind, StepParams};
use crate::field::JaggedParams;
use crate::grid::GridSize;
use crate::sim::FieldStats;

use super::export::{ExportJob, ExportKind};
use super::folder_dialog::{DialogOutcome, FolderDialog};
use super::settings::{Overrides, Settings, STORAGE_KEY};
use super::timings::{format_us, Timings};
use super::tutorial::{Tab, TutorialPanels};
use super::view::{self, Hover, ViewState, Viewport, MAX_PREVIEW_SIDE};
use super::worker::{
    BackendStatus, Command, Event, Frame, Level, Recording, ViewRequest, ViewRequests, WorkerHandle,
};

mod panels;

/// Notices shown at once above the views (the newest).
const MAX_NOTICES_SHOWN: usize = 2;

/// A screenshot to take after some frames, then quit.
#[derive(Debug, Clone)]
pub struct ScreenshotPlan {
    /// Where the PNG goes.
    pub path: PathBuf,
    /// Simulation frames to show first.
    pub frames: u64,
}

/// How the app starts.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// Settings to start with instead of the remembered ones (tests, screenshots).
    pub settings: Option<Settings>,
    /// Values for this session only, applied over the settings it starts with.
    pub overrides: Overrides,
    /// Whether settings are loaded from and saved to eframe's storage.
    pub persist: bool,
    /// Start playing as soon as the field is ready.
    pub autoplay: bool,
    /// Take a screenshot and quit.
    pub screenshot: Option<ScreenshotPlan>,
    /// Tutorial runs recorded with `heatlab kernel --json` to show in their panels.
    pub recorded_runs: Vec<PathBuf>,
    /// The tab to open on instead of the remembered one.
    pub tab: Option<Tab>,
}

/// A message in the notice area.
#[derive(Debug, Clone)]
pub struct Notice {
    /// How serious.
    pub level: Level,
    /// What to say.
    pub text: String,
}

/// Where the screenshot mode stands.
enum ScreenshotState {
    Waiting(ScreenshotPlan),
    Requested(PathBuf, Instant),
    Done,
}

/// The heatlab desktop app.
pub struct HeatlabApp {
    settings: Settings,
    persist: bool,
    worker: Option<WorkerHandle>,
    field_view: ViewState,
    laplacian_view: ViewState,
    viewport: Viewport,
    backend: Option<BackendStatus>,
    progress: Option<(String, f32)>,
    field_size: Option<GridSize>,
    generated_with: Option<JaggedParams>,
    step: u64,
    playing: bool,
    autoplay: bool,
    stats: Option<FieldStats>,
    timings: Timings,
    notices: Vec<Notice>,
    /// The coefficient as typed; `settings.step.coeff` is the one in use.
    coeff_input: f32,
    unlock_unstable: bool,
    sent_views: Option<ViewRequests>,
    export_dir_text: String,
    recording: bool,
    exports_pending: usize,
    last_exported: Vec<PathBuf>,
    non_finite: Option<String>,
    frames_shown: u64,
    hovered: Hover,
    screenshot: Option<ScreenshotState>,
    screenshot_result: Arc<Mutex<Option<Result<(), String>>>>,
    folder_dialog: Option<FolderDialog>,
    tutorial: TutorialPanels,
    tutorial_demo_started: bool,
}

impl HeatlabApp {
    /// Creates the app and starts its worker, which sets up the backend and generates the field.
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let (remembered, settings_problem) = match cc.storage {
            Some(storage) if options.persist => super::settings::load_remembered(storage),
            _ => (None, None),
        };
        let mut settings = options.settings.or(remembered).unwrap_or_default();
        options.overrides.apply(&mut settings);
        let mut settings = settings.sanitized();
        if let Some(tab) = options.tab {
            settings.tab = tab;
        }
        let ctx = cc.egui_ctx.clone();
        let notify: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx.request_repaint());
        let mut notices = Vec::new();
        notices.extend(settings_problem.map(|p| Notice {
            level: Level::Warning,
            text: p.to_string(),
        }));
        let worker = match WorkerHandle::spawn(notify) {
            Ok(worker) => Some(worker),
            Err(error) => {
                notices.push(Notice {
                    level: Level::Error,
                    text: format!("cannot start the simulation thread: {error}"),
                });
                None
            }
        };
        let mut app = Self {
            coeff_input: settings.step.coeff,
            export_dir_text: settings.export_dir.display().to_string(),
            settings,
            persist: options.persist,
            worker,
            field_view: ViewState::default(),
            laplacian_view: ViewState::default(),
            viewport: Viewport::default(),
            backend: None,
            progress: None,
            field_size: None,
            generated_with: None,
            step: 0,
            playing: false,
            autoplay: options.autoplay,
            stats: None,
            timings: Timings::default(),
            notices,
            unlock_unstable: false,
            sent_views: None,
            recording: false,
            exports_pending: 0,
            last_exported: Vec::new(),
            non_finite: None,
            frames_shown: 0,
            hovered: None,
            screenshot: options.screenshot.map(ScreenshotState::Waiting),
            screenshot_result: Arc::new(Mutex::new(None)),
            folder_dialog: None,
            tutorial: TutorialPanels::default(),
            tutorial_demo_started: false,
        };
        app.send(Command::SwitchBackend(app.settings.backend));
        app.send(Command::SetParams(app.settings.step));
        app.send(Command::SetStepsPerFrame(app.settings.steps_per_frame));
        app.send(Command::SetAutoSteps(app.settings.auto_steps));
        app.regenerate();
        for path in &options.recorded_runs {
            match app.tutorial.load_recorded(&cc.egui_ctx, path) {
                // A screenshot shows the recorded run rather than one on this machine.
                Ok(_) => app.tutorial_demo_started = true,
                Err(error) => {
                    eprintln!("heatlab: error: {error}");
                    app.notify(Level::Error, error);
                }
            }
        }
        app
    }

    fn send(&mut self, command: Command) {
        match &self.worker {
            Some(worker) if worker.is_alive() => worker.send(command),
            _ => {
                if !self
                    .notices
                    .iter()
                    .any(|n| n.text.starts_with("the simulation thread"))
                {
                    self.notify(
                        Level::Error,
                        "the simulation thread has stopped; restart heatlab",
                    );
                }
            }
        }
    }

    fn notify(&mut self, level: Level, text: impl Into<String>) {
        let text = text.into();
        // Keep the newest few; repeated messages collapse into one.
        self.notices.retain(|n| n.text != text);
        self.notices.push(Notice { level, text });
        if self.notices.len() > 6 {
            self.notices.remove(0);
        }
    }

    // ----- What tests and the screenshot mode read. -----

    /// Steps taken since the initial field, as last reported.
    pub fn step_count(&self) -> u64 {
        self.step
    }

    /// Whether the simulation is playing.
    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// The settings the controls hold.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The notices on screen.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Whether a field is loaded and a picture of it is on screen.
    pub fn is_ready(&self) -> bool {
        self.field_size.is_some() && self.field_view.has_picture() && self.progress.is_none()
    }

    /// Files written by the last export.
    pub fn last_exported(&self) -> &[PathBuf] {
        &self.last_exported
    }

    /// Whether an export is still being written.
    pub fn is_exporting(&self) -> bool {
        self.exports_pending > 0
    }

    /// The backend in use, once known.
    pub fn backend(&self) -> Option<&BackendStatus> {
        self.backend.as_ref()
    }

    /// The tutorial panels (hidden layer, Gaussian PDF, Monte Carlo pi).
    pub fn tutorial(&self) -> &TutorialPanels {
        &self.tutorial
    }

    /// The tutorial panels, to change a panel's inputs (tests).
    pub fn tutorial_mut(&mut self) -> &mut TutorialPanels {
        &mut self.tutorial
    }

    /// Simulation frames shown so far.
    pub fn frames_shown(&self) -> u64 {
        self.frames_shown
    }

    /// Whether a PNG sequence is being recorded.
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// The zoom of both views (1 shows the whole field).
    pub fn zoom(&self) -> f32 {
        self.viewport.zoom
    }

    /// The live timings.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// A one-line summary of the live timings, as the screenshot mode prints it.
    pub fn timing_summary(&self) -> String {
        let mut text = format!(
            "{} field on {}: {:.1} frames/s, {:.0} steps/s wall",
            self.field_size
                .map_or_else(|| "no".to_string(), |s| s.to_string()),
            self.backend
                .as_ref()
                .map_or_else(|| "?".to_string(), |b| b.device.clone()),
            self.timings.frames_per_second(),
            self.timings.wall_steps_per_second(),
        );
        if let Some((us, gb_s)) = self.timings.latest_step_timing() {
            text += &format!(", {} per step, {gb_s:.1} GB/s effective", format_us(us));
        }
        if let Some(summary) = self.timings.timeit() {
            text += &format!("; {summary}");
        }
        let split: Vec<String> = self
            .timings
            .mean_split()
            .iter()
            .map(|(part, ms)| format!("{part} {ms:.2} ms"))
            .collect();
        if !split.is_empty() {
            text += &format!("; per frame: {}", split.join(", "));
        }
        text
    }

    /// The message shown when the field went non-finite.
    pub fn non_finite(&self) -> Option<&str> {
        self.non_finite.as_deref()
    }

    // ----- Commands. -----

    fn regenerate(&mut self) {
        match self.settings.field.validate() {
            Ok(()) => {
                self.progress = Some((
                    format!("generating the {} field", self.settings.field.size),
                    0.0,
                ));
                self.generated_with = Some(self.settings.field);
                self.send(Command::Generate(self.settings.field));
            }
            Err(error) => self.notify(Level::Error, format!("cannot generate: {error}")),
        }
    }

    fn play(&mut self) {
        self.playing = true;
        self.non_finite = None;
        self.send(Command::Play);
    }

    fn pause(&mut self) {
        self.playing = false;
        self.send(Command::Pause);
    }

    fn step_by(&mut self, steps: u64) {
        self.non_finite = None;
        self.send(Command::Step(steps));
    }

    fn reset(&mut self) {
        self.non_finite = None;
        self.send(Command::Reset);
        self.timings.clear();
    }

    /// Applies the typed coefficient if the guard allows it; otherwise keeps the one in use.
    fn apply_coefficient(&mut self) {
        let coeff = self.coeff_input;
        let params = StepParams {
            coeff,
            boundary: self.settings.step.boundary,
        };
        match params.validate(self.unlock_unstable) {
            Ok(()) => {
                if self.settings.step.coeff != coeff {
                    self.settings.step.coeff = coeff;
                    self.send(Command::SetParams(self.settings.step));
                }
            }
            Err(_) => {
                // The refusal is shown next to the control; the running coefficient is kept.
            }
        }
    }

    fn export(&mut self, kind: ExportKind) {
        let dir = PathBuf::from(self.export_dir_text.trim());
        if dir.as_os_str().is_empty() {
            self.notify(Level::Error, "choose a folder to export into first");
            return;
        }
        self.settings.export_dir = dir.clone();
        self.exports_pending += 1;
        self.send(Command::Export(ExportJob {
            kind,
            dir,
            colorbar: self.settings.export_colorbar,
        }));
    }

    fn set_recording(&mut self, on: bool) {
        let dir = PathBuf::from(self.export_dir_text.trim());
        if on && dir.as_os_str().is_empty() {
            self.notify(Level::Error, "choose a folder to record into first");
            return;
        }
        self.settings.export_dir = dir.clone();
        self.recording = on;
        let recording = on.then(|| Recording {
            dir: dir.join("frames"),
            every: self.settings.record_every.max(1),
            colorbar: self.settings.export_colorbar,
        });
        if on {
            self.notify(
                Level::Info,
                format!(
                    "recording a frame every {} steps into {}",
                    self.settings.record_every,
                    dir.join("frames").display()
                ),
            );
        }
        self.send(Command::SetRecording(recording));
    }

    // ----- Messages from the worker. -----

    fn poll_worker(&mut self, ctx: &egui::Context) {
        let mut events = Vec::new();
        if let Some(worker) = &self.worker {
            while let Some(event) = worker.try_event() {
                events.push(event);
            }
        }
        for event in events {
            self.handle_event(event);
        }
        let frame = self.worker.as_ref().and_then(WorkerHandle::take_frame);
        if let Some(frame) = frame {
            self.show_frame(ctx, frame);
        }
    }

    fn handle_event(&mut self, event: Event) {
        match event {
            Event::Backend(status) => {
                self.timings.clear();
                // A refused switch leaves the old backend running: the selector shows that one.
                if self.settings.backend != BackendChoice::Auto
                    && status.kind.to_string() != self.settings.backend.to_string()
                {
                    self.settings.backend = match status.kind {
                        BackendKind::Cpu => BackendChoice::Cpu,
                        BackendKind::Cuda => BackendChoice::Cuda,
                    };
                }
                self.backend = Some(status);
            }
            Event::Progress(what, fraction) => {
                self.progress = (fraction < 1.0 && !what.is_empty()).then_some((what, fraction));
            }
            Event::FieldReady(size, took) => {
                self.progress = None;
                self.field_size = Some(size);
                self.step = 0;
                self.timings.clear();
                self.notify(
                    Level::Info,
                    format!("generated the {size} field in {:.2} s", took.as_secs_f64()),
                );
                if self.autoplay {
                    self.autoplay = false;
                    self.play();
                }
            }
            Event::NonFinite { message, step } => {
                self.playing = false;
                self.step = step;
                self.notify(Level::Error, message.clone());
                self.non_finite = Some(message);
            }
            Event::Stopped => self.playing = false,
            Event::Notice(level, text) => self.notify(level, text),
            Event::RecordingStopped => self.recording = false,
            Event::Exported(paths) => {
                self.exports_pending = self.exports_pending.saturating_sub(1);
                if !paths.is_empty() {
                    let names: Vec<String> =
                        paths.iter().map(|p| p.display().to_string()).collect();
                    self.notify(Level::Info, format!("wrote {}", names.join(", ")));
                    self.last_exported = paths;
                }
            }
        }
    }

    fn show_frame(&mut self, ctx: &egui::Context, frame: Frame) {
        let mut upload = self
            .field_view
            .update(ctx, "field", frame.field.clone(), frame.size);
        upload += self
            .laplacian_view
            .update(ctx, "laplacian", frame.laplacian.clone(), frame.size);
        self.step = frame.step;
        self.playing = frame.playing;
        if frame.stats.is_some() {
            self.stats = frame.stats;
        }
        self.field_size = Some(frame.size);
        if self.settings.auto_steps {
            self.settings.steps_per_frame = frame.steps_per_frame;
        }
        self.timings.record(&frame, upload);
        self.frames_shown += 1;
    }

    /// Tells the worker the sizes and looks the views need, when they changed.
    fn sync_views(&mut self) {
        let clamp =
            |(w, h): (usize, usize)| (w.clamp(16, MAX_PREVIEW_SIDE), h.clamp(16, MAX_PREVIEW_SIDE));
        let views = ViewRequests {
            field: ViewRequest {
                colormap: self.settings.field_view.colormap,
                range_mode: self.settings.field_view.range_mode(),
                max_size: clamp(self.field_view.shown_pixels),
            },
            laplacian: ViewRequest {
                colormap: self.settings.laplacian_view.colormap,
                range_mode: self.settings.laplacian_view.range_mode(),
                max_size: clamp(self.laplacian_view.shown_pixels),
            },
        };
        if self.sent_views != Some(views) {
            self.sent_views = Some(views);
            self.send(Command::SetViews(views));
        }
    }

    /// Space plays or pauses, S steps once, R resets (unless a text field has the keyboard);
    /// Ctrl+Q quits (saving the settings, as closing the window does).
    fn shortcuts(&mut self, ctx: &egui::Context) {
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Q)) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if ctx.egui_wants_keyboard_input() || self.field_size.is_none() {
            return;
        }
        let (space, s, r) = ctx.input(|i| {
            (
                i.key_pressed(egui::Key::Space),
                i.key_pressed(egui::Key::S),
                i.key_pressed(egui::Key::R),
            )
        });
        if space {
            if self.playing {
                self.pause();
            } else {
                self.play();
            }
        }
        if s {
            self.step_by(1);
        }
        if r {
            self.reset();
        }
    }

    fn screenshot_step(&mut self, ctx: &egui::Context) {
        let Some(state) = self.screenshot.take() else {
            return;
        };
        self.screenshot = Some(match state {
            ScreenshotState::Waiting(plan) => {
                let ready = match self.settings.tab.kernel() {
                    None => self.frames_shown >= plan.frames && self.field_view.has_picture(),
                    Some(kernel) => self.tutorial.demo_done(kernel),
                };
                if ready {
                    let slot = Arc::clone(&self.screenshot_result);
                    let path = plan.path.clone();
                    ctx.request_screenshot(move |image| {
                        let result = save_screenshot(&path, &image).map_err(|e| e.to_string());
                        if let Ok(mut slot) = slot.lock() {
                            *slot = Some(result);
                        }
                    });
                    eprintln!("heatlab: {}", self.timing_summary());
                    ScreenshotState::Requested(plan.path, Instant::now())
                } else if self.settings.tab.kernel().is_some() {
                    // The tutorial thread asks for a repaint when it is done; meanwhile the
                    // window must not take the cores from the timed runs.
                    ctx.request_repaint_after(Duration::from_millis(250));
                    ScreenshotState::Waiting(plan)
                } else {
                    ctx.request_repaint();
                    ScreenshotState::Waiting(plan)
                }
            }
            ScreenshotState::Requested(path, at) => {
                let result = self
                    .screenshot_result
                    .lock()
                    .ok()
                    .and_then(|slot| slot.clone());
                match result {
                    Some(result) => {
                        match result {
                            Ok(()) => {
                                eprintln!("heatlab: saved a screenshot to {}", path.display())
                            }
                            Err(error) => {
                                eprintln!("heatlab: error: could not save the screenshot: {error}")
                            }
                        }
                        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                        ScreenshotState::Done
                    }
                    None if at.elapsed() > Duration::from_secs(20) => {
                        eprintln!("heatlab: error: the renderer never delivered the screenshot");
                        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                        ScreenshotState::Done
                    }
                    None => {
                        ctx.request_repaint_after(Duration::from_millis(16));
                        ScreenshotState::Requested(path, at)
                    }
                }
            }
            ScreenshotState::Done => ScreenshotState::Done,
        });
    }

    /// Whether the screenshot was written (for the command's exit status).
    pub fn screenshot_result(&self) -> Arc<Mutex<Option<Result<(), String>>>> {
        Arc::clone(&self.screenshot_result)
    }
}

fn save_screenshot(path: &std::path::Path, image: &egui::ColorImage) -> crate::Result<()> {
    let [width, height] = image.size;
    let rgb: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| [c.r(), c.g(), c.b()])
        .collect();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| crate::HeatlabError::io("creating folder", parent, e))?;
    }
    crate::export::write_png_rgb(path, width, height, &rgb)
}

impl eframe::App for HeatlabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.poll_worker(&ctx);
        if self.settings.tab == Tab::Diffusion {
            self.shortcuts(&ctx);
        }

        egui::Panel::top("tabs").show(ui, |ui| {
            ui.horizontal(|ui| {
                for tab in Tab::ALL {
                    ui.selectable_value(&mut self.settings.tab, tab, tab.to_string());
                }
            });
        });
        if let Some(kernel) = self.settings.tab.kernel() {
            // The tutorial's timings need the cores to themselves.
            self.autoplay = false;
            if self.playing {
                self.pause();
            }
            // The screenshot's run waits for the initial field, whose generation takes the cores.
            if self.screenshot.is_some()
                && !self.tutorial_demo_started
                && self.field_size.is_some()
                && self.progress.is_none()
            {
                self.tutorial_demo_started = true;
                self.tutorial.start_demo(&ctx, kernel);
            }
            self.tutorial
                .panel_ui(ui, kernel, &PathBuf::from(self.export_dir_text.trim()));
            self.sync_views();
            self.screenshot_step(&ctx);
            return;
        }
        egui::Panel::top("status").show(ui, |ui| self.status_ui(ui));
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    self.backend_ui(ui);
                    ui.separator();
                    self.field_ui(ui);
                    ui.separator();
                    self.simulation_ui(ui);
                    ui.separator();
                    self.export_ui(ui);
                });
            });
        // The views are as tall as their width allows; the timings take the rest of the height.
        let available = ui.available_size();
        let notices = self.notices.len().min(MAX_NOTICES_SHOWN) as f32;
        let views_height = view::views_height(available.x, self.field_size) + 22.0 * notices + 24.0;
        let timings_height = if self.settings.show_plots {
            (available.y - views_height).clamp(180.0, (available.y * 0.6).max(180.0))
        } else {
            90.0
        };
        egui::Panel::bottom("timings")
            .exact_size(timings_height)
            .show(ui, |ui| self.timings_ui(ui));
        egui::CentralPanel::default().show(ui, |ui| {
            self.notices_ui(ui);
            self.views_ui(ui);
        });
        if let Some(dialog) = &mut self.folder_dialog {
            match dialog.show(&ctx) {
                DialogOutcome::Open => {}
                DialogOutcome::Chosen(dir) => {
                    self.export_dir_text = dir.display().to_string();
                    self.settings.export_dir = dir;
                    self.folder_dialog = None;
                }
                DialogOutcome::Cancelled => self.folder_dialog = None,
            }
        }
        self.sync_views();
        self.screenshot_step(&ctx);
        if self.progress.is_some() || self.exports_pending > 0 {
            // Spinners and progress bars animate.
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }

    fn persist_egui_memory(&self) -> bool {
        self.persist
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.persist {
            self.settings.export_dir = PathBuf::from(self.export_dir_text.trim());
            eframe::set_value(storage, STORAGE_KEY, &self.settings);
        }
    }
}
