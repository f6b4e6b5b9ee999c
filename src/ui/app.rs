//! The eframe application, built as egui's demo app builds itself: each tab is a panel struct
//! with a `ui` method; the app routes the frame to the tab shown, collects the [`Command`]s the
//! panels emit and applies them. It also owns what all tabs share: the settings and their
//! persistence, the tab bar, the keyboard shortcuts and the screenshot mode.

mod summary;

use std::path::PathBuf;
use std::sync::Arc;

use eframe::egui;

use heatlab_engine::tutorial::TutorialKernel;

use super::basics::BasicsPanel;
use super::diffusion::{BackendStatus, DiffusionCommand, DiffusionPanel, Timings};
use super::lab::{LabCommand, LabContext, LabPanel};
use super::notice::{Level, Notice};
pub use super::screenshot::ScreenshotPlan;
use super::screenshot::{Readiness, Screenshot, ScreenshotResult};
use super::shutdown::StopRequest;
use super::tutorial::{recorded_elsewhere, Action, Tab, TutorialPanels};
use crate::settings::{self, Settings, STORAGE_KEY};
use heatlab_engine::session::worker::Notify;

pub use super::AppOptions;

/// What a panel asks the app to do; the app applies it after drawing the frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A control of the diffusion tab.
    Diffusion(DiffusionCommand),
    /// A control of a tutorial tab.
    Tutorial(TutorialKernel, Action),
    /// A request of the Kernel lab.
    Lab(LabCommand),
    /// Close the window (saving the settings, as closing it by hand does).
    Quit,
}

/// The heatlab desktop app.
pub struct HeatlabApp {
    settings: Settings,
    persist: bool,
    diffusion: DiffusionPanel,
    tutorial: TutorialPanels,
    lab: LabPanel,
    basics: BasicsPanel,
    screenshot: Option<Screenshot>,
    screenshot_result: ScreenshotResult,
    tutorial_demo_started: bool,
    basics_demo_started: bool,
    stop: StopRequest,
    closing: bool,
    gallery: super::gallery::GalleryStart,
    /// The file given on the command line, until it is opened.
    start_file: Option<std::path::PathBuf>,
    help: super::help::Help,
}

impl HeatlabApp {
    /// Creates the app and starts the diffusion panel's thread, which sets up the backend and
    /// generates the field.
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let (remembered, settings_problem) = match cc.storage {
            Some(storage) if options.persist => {
                let file = eframe::storage_dir(super::APP_ID).map(|dir| dir.join("app.ron"));
                settings::load_remembered(storage.get_string(STORAGE_KEY), file.as_deref())
            }
            _ => (None, None),
        };
        let mut settings = options.settings.or(remembered).unwrap_or_default();
        options.overrides.apply(&mut settings);
        let mut settings = settings.sanitized();
        if let Some(tab) = options.tab {
            settings.tab = tab;
        }
        let ctx = cc.egui_ctx.clone();
        let notify: Notify = Arc::new(move || ctx.request_repaint());
        let lab = LabPanel::new(notify.clone());
        let basics = BasicsPanel::new(notify.clone());
        let mut diffusion = DiffusionPanel::new(&settings, notify, options.autoplay);
        if let Some(problem) = settings_problem {
            diffusion.notify(Level::Warning, problem.to_string());
        }
        if options.overlays {
            let overlays = diffusion.overlays_mut();
            overlays.isotherms = true;
            overlays.arrows = true;
        }
        if options.paint_demo {
            diffusion.set_paint_demo();
        }
        if options.material_demo {
            let tools = diffusion.paint_tools_mut();
            tools.materials.demo = true;
            tools.set_tool(crate::ui::diffusion::brush::Tool::Material);
        }
        let gallery = super::gallery::GalleryStart::of(
            options.gallery.as_deref(),
            options.gallery_menu,
            &mut diffusion,
        );
        let screenshot = options.screenshot.map(Screenshot::new);
        let screenshot_result = screenshot
            .as_ref()
            .map_or_else(ScreenshotResult::default, Screenshot::result);
        options.stop.attach(&cc.egui_ctx);
        let mut app = Self {
            settings,
            persist: options.persist,
            diffusion,
            tutorial: TutorialPanels::default(),
            lab,
            basics,
            screenshot,
            screenshot_result,
            tutorial_demo_started: false,
            basics_demo_started: false,
            stop: options.stop,
            closing: false,
            gallery,
            start_file: options.open,
            help: super::help::Help::default(),
        };
        app.load_recorded_runs(&cc.egui_ctx, &options.recorded_runs, options.tab.is_none());
        app
    }

    /// Shows runs recorded with `heatlab kernel --json` in their panels. The tab shown says
    /// what became of them: a file that cannot be shown is an error there (and ends a
    /// screenshot), and runs of other kernels than its own are named with the tab they are in.
    /// With `pick_tab`, the app opens on the tab of the first run shown.
    fn load_recorded_runs(&mut self, ctx: &egui::Context, paths: &[PathBuf], pick_tab: bool) {
        let mut shown = Vec::new();
        let mut errors = Vec::new();
        for path in paths {
            match self.tutorial.load_recorded(ctx, path) {
                Ok(kernel) => shown.push((path.as_path(), kernel)),
                Err(error) => {
                    // A screenshot reports it when the command ends.
                    if self.screenshot.is_none() {
                        super::note(&format!("error: {error}"));
                    }
                    errors.push(error);
                }
            }
        }
        // A screenshot shows the recorded runs rather than one on this machine.
        self.tutorial_demo_started |= !shown.is_empty();
        if pick_tab {
            if let Some(&(_, kernel)) = shown.first() {
                self.settings.tab = Tab::of(kernel);
            }
        }
        if let (Some(screenshot), Some(error)) = (&mut self.screenshot, errors.first()) {
            screenshot.fail(ctx, format!("cannot show the recorded run: {error}"));
        }
        let tab = self.settings.tab;
        let elsewhere: Vec<String> = if shown.iter().any(|&(_, k)| tab.kernel() == Some(k)) {
            Vec::new()
        } else {
            shown
                .iter()
                .map(|&(path, kernel)| recorded_elsewhere(path, kernel))
                .collect()
        };
        match tab.kernel() {
            Some(kernel) => {
                let level = if errors.is_empty() {
                    Level::Warning
                } else {
                    Level::Error
                };
                let text = [errors, elsewhere].concat().join("; ");
                if !text.is_empty() {
                    self.tutorial.panel_state_mut(kernel).notify(level, text);
                }
            }
            None => {
                for error in errors {
                    self.diffusion.notify(Level::Error, error);
                }
                for text in elsewhere {
                    self.diffusion.notify(Level::Info, text);
                }
            }
        }
    }

    // ----- What tests and the screenshot mode read. -----

    /// Steps taken since the initial field, as last reported.
    pub fn step_count(&self) -> u64 {
        self.diffusion.state().step
    }

    /// Whether the simulation is playing.
    pub fn is_playing(&self) -> bool {
        self.diffusion.state().playing
    }

    /// The settings the controls hold.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The notices on screen.
    pub fn notices(&self) -> &[Notice] {
        self.diffusion.notices().as_slice()
    }

    /// Whether a field is loaded and a picture of it is on screen.
    pub fn is_ready(&self) -> bool {
        self.diffusion.is_ready()
    }

    /// Files written by the last export.
    pub fn last_exported(&self) -> &[PathBuf] {
        &self.diffusion.state().last_exported
    }

    /// Whether an export is still being written.
    pub fn is_exporting(&self) -> bool {
        self.diffusion.state().exports_pending > 0
    }

    /// The backend in use, once known.
    pub fn backend(&self) -> Option<&BackendStatus> {
        self.diffusion.state().backend.as_ref()
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
        self.diffusion.state().frames_shown
    }

    /// Whether a PNG sequence is being recorded.
    pub fn is_recording(&self) -> bool {
        self.diffusion.state().recording
    }

    /// The zoom of both views (1 shows the whole field).
    pub fn zoom(&self) -> f32 {
        self.diffusion.zoom()
    }

    /// The diffusion tab (its brush, probes and views; tests and the screenshot mode).
    pub fn diffusion(&self) -> &DiffusionPanel {
        &self.diffusion
    }

    /// The diffusion tab, to change.
    pub fn diffusion_mut(&mut self) -> &mut DiffusionPanel {
        &mut self.diffusion
    }

    /// The live timings.
    pub fn timings(&self) -> &Timings {
        self.diffusion.timings()
    }

    /// The folder the export folder chooser shows while it is open.
    pub fn folder_dialog_directory(&self) -> Option<&std::path::Path> {
        self.diffusion.folder_dialog_directory()
    }

    /// The message shown when the field went non-finite.
    pub fn non_finite(&self) -> Option<&str> {
        self.diffusion.state().non_finite.as_deref()
    }

    /// Whether the screenshot was written (for the command's exit status).
    pub fn screenshot_result(&self) -> ScreenshotResult {
        Arc::clone(&self.screenshot_result)
    }

    /// Whether the screenshot mode stopped waiting for the tab (the picture was asked for, or
    /// the mode gave up); `false` without a screenshot.
    pub fn screenshot_past_waiting(&self) -> bool {
        self.screenshot
            .as_ref()
            .is_some_and(Screenshot::is_past_waiting)
    }

    /// Whether the app asked its window to close because of a [`StopRequest`].
    pub fn is_closing(&self) -> bool {
        self.closing
    }

    /// Closes the window once a stop was requested (a signal): eframe then saves the settings,
    /// and dropping the app stops the worker threads. A screenshot not yet taken is abandoned.
    fn close_if_stopped(&mut self, ctx: &egui::Context) {
        let Some(signal) = self.stop.requested() else {
            return;
        };
        if self.closing {
            return;
        }
        self.closing = true;
        log::info!("signal {signal}: closing the window");
        // The tutorial thread stops between chunks instead of finishing a long run.
        self.tutorial.cancel();
        self.basics.cancel();
        if let Some(screenshot) = &mut self.screenshot {
            screenshot.fail(
                ctx,
                format!("stopped by signal {signal} before the screenshot was taken"),
            );
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    // ----- Commands. -----

    /// Applies what a panel asked for.
    pub fn apply(&mut self, ctx: &egui::Context, command: Command) {
        match command {
            Command::Diffusion(command) => self.diffusion.apply(command, &mut self.settings),
            Command::Tutorial(kernel, action) => {
                let export_dir = self.diffusion.export_dir();
                self.tutorial.apply(ctx, kernel, action, &export_dir);
            }
            Command::Lab(LabCommand::Validate(source)) => {
                let (reply, field) = std::sync::mpsc::channel();
                self.diffusion.snapshot_field(reply);
                self.lab.start_validation(source, field);
            }
            Command::Lab(LabCommand::UseInSimulation(source)) => {
                self.diffusion.use_user_kernel(source, &mut self.settings);
            }
            Command::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
        }
    }

    /// The Kernel lab, for tests.
    pub fn lab(&mut self) -> &mut LabPanel {
        &mut self.lab
    }

    /// The Kernel lab tab.
    fn lab_ui(&mut self, ui: &mut egui::Ui) -> Vec<Command> {
        let state = self.diffusion.state();
        let cuda_unavailable = state
            .backend
            .as_ref()
            .and_then(|b| b.cuda_unavailable.as_ref())
            .map(ToString::to_string);
        let context = LabContext {
            cuda_unavailable: cuda_unavailable.as_deref(),
            chosen: self.settings.kernel,
            timings: &state.kernel_timings,
            user_in_use: state.backend.as_ref().is_some_and(|b| {
                b.kernel == Some(heatlab_engine::compute::KernelChoice::User) && b.user_kernel
            }),
        };
        self.lab
            .ui(ui, &context)
            .into_iter()
            .map(Command::Lab)
            .collect()
    }

    /// The GPU basics tab.
    pub fn basics(&self) -> &BasicsPanel {
        &self.basics
    }

    /// The GPU basics tab, to change (tests).
    pub fn basics_mut(&mut self) -> &mut BasicsPanel {
        &mut self.basics
    }

    /// The GPU basics tab: the simulation pauses (the timings need the cores to themselves).
    /// The screenshot mode runs every lesson once the initial field is ready.
    fn basics_ui(&mut self, ui: &mut egui::Ui) {
        self.diffusion.hold();
        let field_ready = self.diffusion.state().field_size.is_some()
            && self.diffusion.state().progress.is_none();
        if self.screenshot.is_some() && !self.basics_demo_started && field_ready {
            self.basics_demo_started = true;
            self.basics.run(
                &heatlab_engine::tutorial::basics::BasicsLesson::ALL,
                self.settings.backend,
            );
        }
        self.basics.ui(ui, self.settings.backend);
    }

    /// Ctrl+Q quits; on the diffusion tab, Space, S and R drive the simulation.
    fn shortcuts(&self, ctx: &egui::Context) -> Vec<Command> {
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Q)) {
            return vec![Command::Quit];
        }
        if self.settings.tab != Tab::Diffusion {
            return Vec::new();
        }
        self.diffusion
            .shortcuts(ctx)
            .into_iter()
            .map(Command::Diffusion)
            .collect()
    }

    fn tabs_ui(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("tabs").show(ui, |ui| {
            ui.horizontal(|ui| {
                for tab in Tab::ALL {
                    ui.selectable_value(&mut self.settings.tab, tab, tab.to_string());
                }
                if let Some(choice) = super::gallery::menu_ui(ui, self.gallery.menu_open()) {
                    self.settings.tab = Tab::Diffusion;
                    match choice {
                        super::gallery::GalleryChoice::Entry(entry) => {
                            self.diffusion.open_gallery(entry);
                        }
                        super::gallery::GalleryChoice::NewProblem => {
                            self.diffusion.show_new_problem();
                        }
                        super::gallery::GalleryChoice::Plate => {
                            self.diffusion.open_plate(&mut self.settings);
                        }
                    }
                }
                ui.separator();
                self.help.menu_ui(ui);
            });
        });
    }

    /// A tutorial tab: the simulation pauses (the timings need the cores to themselves).
    fn tutorial_ui(&mut self, ui: &mut egui::Ui, kernel: TutorialKernel) -> Vec<Command> {
        self.diffusion.hold();
        // The screenshot's run waits for the initial field, whose generation takes the cores.
        let field_ready = self.diffusion.state().field_size.is_some()
            && self.diffusion.state().progress.is_none();
        if self.screenshot.is_some() && !self.tutorial_demo_started && field_ready {
            self.tutorial_demo_started = true;
            self.tutorial.start_demo(ui.ctx(), kernel);
        }
        match self.tutorial.panel_ui(ui, kernel) {
            Action::None => Vec::new(),
            action => vec![Command::Tutorial(kernel, action)],
        }
    }

    fn screenshot_step(&mut self, ctx: &egui::Context) {
        let Some(mut screenshot) = self.screenshot.take() else {
            return;
        };
        screenshot.step(ctx, |frames| {
            let basics_tab = self.settings.tab == Tab::GpuBasics;
            let (ready, timed_work, waiting_for) = match self.settings.tab.kernel() {
                None if basics_tab => (
                    self.basics_demo_started && !self.basics.is_busy(),
                    true,
                    "the GPU basics' lessons to finish".to_string(),
                ),
                None => (
                    self.frames_shown() >= frames && self.diffusion.has_picture(),
                    false,
                    format!(
                        "{frames} simulation frames ({} shown{})",
                        self.frames_shown(),
                        if self.diffusion.has_picture() {
                            ""
                        } else {
                            ", the field not yet"
                        }
                    ),
                ),
                Some(kernel) => (
                    self.tutorial.demo_done(kernel),
                    true,
                    format!("the {} runs to finish", kernel.title()),
                ),
            };
            let impossible = (self.settings.tab == Tab::Diffusion)
                .then(|| self.diffusion.no_field_because())
                .flatten()
                .map(|why| format!("no screenshot: {why}"));
            Readiness {
                ready,
                timed_work,
                waiting_for,
                impossible,
                summary: match self.settings.tab.kernel() {
                    None if basics_tab => self.basics.summary(),
                    None => self.timing_summary(),
                    Some(kernel) => self.tutorial_summary(kernel),
                },
            }
        });
        self.screenshot = Some(screenshot);
    }
}

impl eframe::App for HeatlabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.close_if_stopped(&ctx);
        self.diffusion.poll(&ctx, &mut self.settings);
        // A state or a field dropped on the window opens in the diffusion tab.
        if self.diffusion.open_dropped(&ctx) {
            self.settings.tab = Tab::Diffusion;
        }
        let mut commands = self.shortcuts(&ctx);
        if let Some(entry) = self.gallery.take_when(self.diffusion.is_ready()) {
            self.diffusion.open_gallery(entry);
        }
        if self.diffusion.is_ready() {
            if let Some(path) = self.start_file.take() {
                self.settings.tab = Tab::Diffusion;
                if self.screenshot.is_some() {
                    self.diffusion.play_when_opened();
                }
                self.diffusion.open_file(path);
            }
        }
        self.tabs_ui(ui);
        self.help.ui(&ctx);
        match self.settings.tab.kernel() {
            Some(kernel) => commands.extend(self.tutorial_ui(ui, kernel)),
            None if self.settings.tab == Tab::KernelLab => commands.extend(self.lab_ui(ui)),
            None if self.settings.tab == Tab::GpuBasics => self.basics_ui(ui),
            None => commands.extend(
                self.diffusion
                    .ui(ui, &mut self.settings)
                    .into_iter()
                    .map(Command::Diffusion),
            ),
        }
        for command in commands {
            self.apply(&ctx, command);
        }
        self.diffusion.sync_views(&self.settings);
        self.screenshot_step(&ctx);
    }

    fn persist_egui_memory(&self) -> bool {
        self.persist
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.persist {
            self.settings.export_dir = self.diffusion.export_dir();
            eframe::set_value(storage, STORAGE_KEY, &self.settings);
        }
    }
}
