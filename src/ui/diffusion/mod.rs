//! The diffusion tab: the controls on the left, the status line on top, the field and its
//! Laplacian in the middle, the timings below. The simulation runs on its own thread (the
//! session's [`heatlab_engine::session::diffusion`]); the controls push [`DiffusionCommand`]s, which
//! [`DiffusionPanel::apply`] turns into changes of the settings and commands to that thread.

mod actions;
pub mod agreement;
pub mod brush;
pub mod command;
pub mod confirm;
pub mod controls;
pub mod energy;
mod events;
pub mod exact_history;
pub mod export_options;
pub mod files;
mod hover;
pub mod kernels;
pub mod line_flow;
pub mod new_problem;
pub mod overlays;
pub mod probes;
pub mod problem;
pub mod profile;
pub mod run_control;
pub mod scenario;
pub mod sides;
pub mod sources;
pub mod splitter;
pub mod step_clock;
pub mod timings;
pub mod timings_panel;
pub mod view;
pub mod views;

use std::path::PathBuf;
use std::time::Duration;

use eframe::egui;

use heatlab_engine::field::JaggedParams;
use heatlab_engine::grid::GridSize;
use heatlab_engine::sim::FieldStats;

use super::folder::FolderField;
use super::notice::{Level, Notices};
use crate::settings::Settings;
pub use command::DiffusionCommand;
use controls::{CoefficientInput, Controls};
use files::FilesSection;
use heatlab_engine::session::diffusion::{self as sim, SimCommand, SimWorker, ViewRequests};
pub use heatlab_engine::session::diffusion::{BackendStatus, ExportKind, Frame, FramePart};
pub use timings::Timings;
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
    pub last_generation: Option<heatlab_engine::sim::generate::Generation>,
    /// Whether a regeneration asked for by dragging a field parameter is on its way.
    pub live_generating: bool,
    /// Why the last generation failed, until a field is ready again.
    pub generation_failed: Option<String>,
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
    /// The heat problem stepped, as the simulation thread last reported it (`None`: the
    /// tutorial's uniform plate).
    pub problem: Option<std::sync::Arc<heatlab_engine::problem::HeatProblem>>,
    /// The problem's part of the latest frame.
    pub problem_frame: Option<heatlab_engine::session::diffusion::ProblemFrame>,
    /// How the problem advances, as the simulation thread last reported it.
    pub stepping: heatlab_engine::sim::solve::Stepping,
    /// The simulated seconds per wall second the problem's run reaches, while playing.
    pub simulated_rate: Option<f64>,
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
    /// The problem's kinds, new heaters and held regions, thermostats.
    sources: sources::SourcesPanel,
    /// The four sides' editor above the views.
    sides: sides::SideEditor,
    /// The problem's energy budget over simulated time.
    energy: energy::EnergyBudget,
    /// The simulated seconds per wall second the run reaches.
    simulated_rate: run_control::SimulatedRate,
    /// The run's duration as typed.
    run_control: run_control::RunControl,
    /// The "New problem" window.
    new_problem: new_problem::NewProblemForm,
    /// The height the person gave the plots under the views.
    splitter: splitter::PlotsSplitter,
    /// The folder of the file last chosen in a dialog (kept in the settings).
    file_folder: Option<PathBuf>,
    /// The scenario the field stands on (its description and exact answer), if any.
    scenario: Option<scenario::OpenedScenario>,
    /// The question before a regeneration replaces a heat problem.
    replace: confirm::ReplaceProblem,
}

impl DiffusionPanel {
    /// Starts the simulation thread and asks it for the backend and the field of `settings`.
    /// `notify` asks the UI for a repaint.
    pub fn new(
        settings: &Settings,
        notify: heatlab_engine::session::worker::Notify,
        autoplay: bool,
    ) -> Self {
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
            coefficient: CoefficientInput::new(settings.step.coeff),
            folder: FolderField::new(&settings.export_dir),
            sent_views: None,
            autoplay,
            generated_with: None,
            paint: brush::PaintTools::default(),
            paint_demo: false,
            files: FilesSection::default(),
            sources: sources::SourcesPanel::default(),
            sides: sides::SideEditor::default(),
            energy: energy::EnergyBudget::default(),
            simulated_rate: run_control::SimulatedRate::default(),
            run_control: run_control::RunControl::default(),
            new_problem: new_problem::NewProblemForm::default(),
            splitter: splitter::PlotsSplitter::default(),
            file_folder: settings.file_folder.clone(),
            scenario: None,
            replace: confirm::ReplaceProblem::default(),
        };
        panel.send(SimCommand::SwitchBackend(settings.backend));
        panel.send(SimCommand::SetParams(settings.step));
        panel.send(SimCommand::SetStepsPerFrame(settings.steps_per_frame));
        panel.send(SimCommand::SetAutoSteps(settings.auto_steps));
        panel.send(SimCommand::SetSpeed(settings.speed.limit()));
        panel.send(SimCommand::SetSteadyStop(settings.steady_stop.tolerance()));
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

    /// The isotherms and heat-flux arrows over the field (what they last drew).
    pub fn overlays(&self) -> &overlays::Overlays {
        &self.views.overlays
    }

    /// The isotherms and heat-flux arrows over the field, to switch (tests, screenshots).
    pub fn overlays_mut(&mut self) -> &mut overlays::Overlays {
        &mut self.views.overlays
    }

    /// The field view's shown value at a cell (exact when the view is not reduced).
    pub fn field_value_at(&self, row: usize, col: usize) -> Option<(f32, usize)> {
        self.views.field.value_at(row, col)
    }

    /// Whether the field view shows a picture.
    pub fn has_picture(&self) -> bool {
        self.views.field.has_picture()
    }

    /// Why there is no field to show: the generation failed and no picture came before.
    pub fn no_field_because(&self) -> Option<&str> {
        self.state
            .generation_failed
            .as_deref()
            .filter(|_| !self.has_picture())
    }

    /// The export folder as typed.
    pub fn export_dir(&self) -> PathBuf {
        self.folder.path()
    }

    /// Where file dialogs start: the folder of the file last chosen in one, else the export
    /// folder.
    pub fn dialog_dir(&self) -> PathBuf {
        self.file_folder
            .clone()
            .unwrap_or_else(|| self.folder.path())
    }

    /// The folder the open or save dialog shows while one is open.
    pub fn file_dialog_directory(&self) -> Option<&std::path::Path> {
        self.files.dialog_directory()
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

    /// Asks the simulation thread for a copy of the current field and the step parameters
    /// (the Kernel lab validates against them); the answer comes on `reply`.
    pub fn snapshot_field(
        &mut self,
        reply: std::sync::mpsc::Sender<
            Result<
                (
                    heatlab_engine::grid::Grid,
                    heatlab_engine::compute::StepParams,
                ),
                String,
            >,
        >,
    ) {
        self.send(SimCommand::SnapshotField(reply));
    }

    /// Loads a kernel the Kernel lab validated and steps with it.
    pub fn use_user_kernel(&mut self, source: String, settings: &mut Settings) {
        settings.kernel = heatlab_engine::compute::KernelChoice::User;
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

    /// Whether the question "replace the heat problem?" is on screen.
    pub fn is_asking_to_replace(&self) -> bool {
        self.replace.is_asking()
    }

    /// What the keyboard asked for this frame (see [`command::shortcuts`]).
    pub fn shortcuts(&self, ctx: &egui::Context) -> Vec<DiffusionCommand> {
        if self.state.field_size.is_none() || self.replace.is_asking() {
            return Vec::new();
        }
        command::shortcuts(ctx, self.state.playing)
    }

    /// The controls, the paint tools and the files, down the left side.
    fn side_panel_ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut Settings,
        commands: &mut Vec<DiffusionCommand>,
    ) {
        if let Some(scenario) = &self.scenario {
            scenario.about_ui(ui);
        }
        Controls {
            settings,
            state: &self.state,
            coefficient: &self.coefficient,
            folder: &mut self.folder,
            generated_with: self.generated_with,
            video_recording: self.files.video_recording,
            seconds_per_step: self.timings.latest_step_timing().map(|(us, _)| us * 1e-6),
            commands,
            tools: &mut self.paint,
            run_control: &mut self.run_control,
        }
        .ui(ui);
        ui.separator();
        self.paint.controls_ui(ui);
        let ready = self.state.field_size.is_some();
        let dialogs = self.dialog_dir();
        self.files.ui(ui, ready, self.state.step, &dialogs);
        ui.separator();
        commands.extend(self.files.video_ui(ui, ready));
        // The problem's sections come last, so that the tutorial's controls keep their places.
        ui.separator();
        problem::section_ui(ui, &mut self.paint, &self.state, &dialogs);
        if let Some(folder) = self.paint.materials.take_chosen_folder() {
            self.file_folder = Some(folder);
        }
        if settings.file_folder != self.file_folder {
            settings.file_folder.clone_from(&self.file_folder);
        }
        ui.separator();
        self.sources
            .ui(ui, &self.state, &self.paint.probes, commands);
    }

    /// The whole tab; returns what its controls asked for, for the app to apply.
    pub fn ui(&mut self, ui: &mut egui::Ui, settings: &mut Settings) -> Vec<DiffusionCommand> {
        let mut commands = Vec::new();
        if self.state.field_size.is_some() {
            self.paint.shortcuts(ui.ctx());
        }
        self.update_exact_line();
        egui::Panel::top("status").show(ui, |ui| views::status_ui(ui, settings, &self.state));
        // In a narrow window the controls (which scroll) leave the views most of the width.
        let most = (ui.available_width() * 0.4).max(220.0);
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(300.0_f32.min(most))
            .max_size(most)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .show(ui, |ui| self.side_panel_ui(ui, settings, &mut commands));
            });
        // A heater or held region made in the sources section is painted with the Material tool.
        if let Some(kind) = self.sources.take_paint_kind() {
            self.paint.materials.kind = Some(kind);
            self.paint.set_tool(brush::Tool::Material);
        }
        if self.timings_row_ui(ui, settings) {
            // Applied at once, before the notices are drawn, so that its notice shows in this
            // frame's layout.
            self.apply(DiffusionCommand::ExportProbes, settings);
        }
        egui::CentralPanel::default().show(ui, |ui| {
            // In a short window the pictures keep a least height and the tool row under them
            // is scrolled to.
            egui::ScrollArea::vertical()
                .id_salt("views scroll")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    self.notices.ui(ui, NOTICES_SHOWN);
                    self.sides.ui(ui, &self.state, &mut commands);
                    self.views.shown_sides = self.state.problem.as_ref().map(|p| p.sides);
                    let size = self.state.field_size;
                    self.views
                        .ui(ui, settings, &mut commands, &mut self.paint, size);
                });
        });
        self.record_overlay_cost();
        self.forward_tool_output();
        if let Some(dir) = self.folder.dialog_ui(ui.ctx()) {
            settings.export_dir = dir;
        }
        commands.extend(self.files.dialog_ui(ui.ctx()));
        if let Some(scenario) = self.new_problem.ui(ui.ctx()) {
            self.open_new_problem(scenario);
        }
        if let Some(answer) = self.replace.ui(ui.ctx()) {
            self.replace_answered(answer, settings);
        }
        FilesSection::hover_ui(ui);
        if self.state.progress.is_some() || self.state.exports_pending > 0 {
            // Spinners and progress bars animate.
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        commands
    }

    /// The row under the views: the timings (or the probes' plots) and, while a heat problem
    /// books energy, its budget. Returns whether the probes' export was asked for.
    fn timings_row_ui(&mut self, ui: &mut egui::Ui, settings: &mut Settings) -> bool {
        // The views are as tall as their width allows; the timings take the rest of the height.
        // Nothing here depends on the notices or the probes: the layout never moves under the
        // pointer (the notices have a strip of their own, the probe and line plots take the
        // place of the timing plots).
        let available = ui.available_size();
        let views_height = view::views_height(available.x, self.state.field_size)
            + Notices::strip_height(NOTICES_SHOWN)
            + 24.0
            + sides::STRIP_HEIGHT;
        let traces = self.sources.thermostat_traces(&self.state);
        self.paint.probes.set_thermostat_traces(traces);
        let energy = self.state.problem.is_some() && self.energy.latest().is_some();
        let probe_plots = timings_panel::probe_plots_wanted(&self.paint);
        let automatic = if settings.show_plots || energy || probe_plots {
            splitter::plots_height(available.y, views_height, self.state.problem.is_some())
        } else {
            90.0
        };
        let range = 90.0..=(available.y - 150.0).max(90.0);
        let timings_height = self.splitter.height(automatic, range.clone());
        // Not egui's own resizable panel: its handle would compete with the splitter's.
        let plots = egui::Panel::bottom("timings")
            .resizable(false)
            .exact_size(timings_height)
            .show(ui, |ui| {
                if energy {
                    // The energy budget takes a third of the row, beside the timings or probes.
                    egui::Panel::right("energy")
                        .exact_size(ui.available_width() / 3.0)
                        .show(ui, |ui| {
                            // Small text: its legend of seven lines (drawn in energy.rs with the
                            // body style) then covers less of the plot.
                            if let Some(body) =
                                ui.style_mut().text_styles.get_mut(&egui::TextStyle::Body)
                            {
                                body.size = (body.size * 0.8).max(10.0);
                            }
                            self.energy.ui(ui, timings_height - 8.0);
                        });
                }
                // In a short window the plots keep their least height and the area scrolls.
                egui::ScrollArea::vertical()
                    .id_salt("timings scroll")
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        timings_panel::timings_ui(
                            ui,
                            &self.timings,
                            &self.agreement,
                            &mut settings.show_plots,
                            &mut self.paint,
                        )
                    })
                    .inner
            });
        self.splitter
            .ui(ui, plots.response.rect, timings_height, range);
        plots.inner
    }

    /// Sends the paint tools' commands to the simulation and shows the tools' messages.
    fn forward_tool_output(&mut self) {
        for command in self.paint.take_commands(self.state.field_size) {
            self.send(command);
        }
        for message in self.paint.take_messages() {
            self.notify(Level::Warning, message);
        }
        for (level, text) in self.paint.materials.take_notices() {
            self.notify(level, text);
        }
        for (level, message) in self.sources.take_messages() {
            self.notify(level, message);
        }
        for message in self.sides.take_messages() {
            self.notify(Level::Warning, message);
        }
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
