//! What the diffusion tab does for its commands ([`DiffusionPanel::apply`]): the settings it
//! changes and what it asks of the simulation thread, files and recordings included.

use std::path::PathBuf;

use eframe::egui;

use crate::settings::{Settings, MAX_STEPS_PER_FRAME};
use crate::ui::notice::Level;
use heatlab_engine::grid::GridSize;
use heatlab_engine::session::diffusion::{self as sim, ExportJob, Recording, SimCommand};
use heatlab_engine::sim::generate::GenerationPlace;

use super::controls::CoefficientInput;
use super::files::{self, FilesSection};
use super::view::Viewport;
use super::{DiffusionCommand, DiffusionPanel, ExportKind};

/// How the simulation thread's notice of probes that could not be sampled starts (the session's
/// `paint.rs` words it); such a notice belongs to the field it was about.
pub(super) const PROBES_STOPPED: &str = "probes stopped:";

/// How the notice of a generated field starts: it belongs to that field.
pub(super) const FIELD_GENERATED: &str = "generated the ";

impl DiffusionPanel {
    /// Opens a saved state or an initial field (`.npy`, PNG, JPEG), as dropping it on the
    /// window does; the simulation thread reads it and a notice says how it went. Over a heat
    /// problem built or changed in the app, asks first.
    pub fn open_file(&mut self, path: PathBuf) {
        self.remember_folder(&path);
        if let Some(problem) = self.edited_problem() {
            self.replace
                .ask(super::confirm::Replacement::File(path), problem);
            return;
        }
        self.open_file_now(path);
    }

    /// Opens `path` (see [`DiffusionPanel::open_file`]) without asking.
    pub(super) fn open_file_now(&mut self, path: PathBuf) {
        self.field_replaced(None);
        self.opening_done();
        let opening = format!("opening {}…", path.display());
        self.notify(Level::Info, opening.clone());
        self.files.opening = Some(opening);
        self.send(SimCommand::Open(path, self.files.range));
    }

    /// The "opening …" notice goes once the file is opened (or refused: the error says so).
    pub(super) fn opening_done(&mut self) {
        if let Some(opening) = self.files.opening.take() {
            self.notices.remove(&opening);
        }
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
    /// The next file dialog starts in `path`'s folder (the settings keep it for the next
    /// start).
    pub(super) fn remember_folder(&mut self, path: &std::path::Path) {
        if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
            self.file_folder = Some(folder.to_path_buf());
        }
    }

    pub fn save_state(&mut self, path: PathBuf) {
        self.remember_folder(&path);
        self.send(SimCommand::SaveState(path));
    }

    /// Records a video into the export folder, named after the step it starts at.
    pub(super) fn start_video(&mut self, choice: files::VideoChoice, settings: &mut Settings) {
        let Some(dir) = self.export_folder("record into", settings) else {
            return;
        };
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
            cell_pixels: settings.png_cell_pixels,
            video: Some(sim::VideoRecording {
                path,
                fps: choice.fps,
                look: choice.look(settings.export_colorbar),
            }),
        })));
    }

    pub(super) fn opened(&mut self, opened: sim::Opened, settings: &mut Settings) {
        // The tools start afresh on the new field: nothing sampled on the old one survives,
        // and the news of how the old field was generated goes with it.
        self.notices.remove_starting_with(PROBES_STOPPED);
        self.notices.remove_starting_with(FIELD_GENERATED);
        self.paint.restart(Some(opened.size));
        let scenario_notice = self.scenario_opened(&opened);
        self.scale_steps_per_frame(opened.size, settings);
        self.opening_done();
        // A field of another size is shown whole, not at the old field's zoom.
        if self.state.field_size != Some(opened.size) {
            self.views.viewport = Viewport::default();
        }
        self.agreement.clear();
        self.timings.clear();
        self.state.progress = None;
        self.state.field_size = Some(opened.size);
        self.state.step = opened.step;
        self.state.non_finite = None;
        if let Some(params) = opened.params {
            settings.step = params;
            self.coefficient.typed = params.coeff;
            self.coefficient.refused = None;
            self.coefficient.unlock_unstable |=
                params.coeff > heatlab_engine::compute::STABLE_COEFF_LIMIT;
        }
        self.generated_with = match opened.origin {
            heatlab_engine::state::FieldOrigin::Jagged(params) => {
                settings.field = params;
                Some(params)
            }
            heatlab_engine::state::FieldOrigin::Imported { .. }
            | heatlab_engine::state::FieldOrigin::Scenario { .. } => None,
        };
        let what = match (opened.params, &opened.origin) {
            // A problem's state steps with its own sides and time step: the plate's coefficient
            // and boundary saved with it say nothing about it.
            (Some(_), heatlab_engine::state::FieldOrigin::Scenario { title, .. }) => format!(
                "opened the state of \"{title}\" ({} grid) at step {} from {}",
                opened.size,
                opened.step,
                opened.path.display()
            ),
            (Some(params), _) => format!(
                "opened the state of a {} field at step {} (coeff {}, {} boundary) from {}",
                opened.size,
                opened.step,
                params.coeff,
                params.boundary,
                opened.path.display()
            ),
            (None, _) => scenario_notice.unwrap_or_else(|| {
                format!(
                    "imported a {} initial field from {}",
                    opened.size,
                    opened.path.display()
                )
            }),
        };
        self.notify(Level::Info, what);
        if self.autoplay {
            self.autoplay = false;
            self.apply(DiffusionCommand::Play, settings);
        }
    }

    /// Plays once the file being opened is open (`heatlab gui FILE --screenshot`: the shot
    /// shows the file's run, as it shows the first field's).
    pub fn play_when_opened(&mut self) {
        self.autoplay = true;
    }

    /// Regenerates at once when a field parameter other than the size changed and the field
    /// is generated on the GPU (milliseconds): dragging the seed, exponent, cutoff or
    /// percentile then shows each new field. One generation is in flight at a time; the
    /// latest values go next.
    pub(super) fn regenerate_live(&mut self, settings: &Settings) {
        let on_gpu = self
            .state
            .last_generation
            .as_ref()
            .is_some_and(|generation| generation.place == GenerationPlace::Gpu);
        let Some(generated) = self.generated_with else {
            return;
        };
        // A live regeneration would replace a heat problem without asking: Regenerate asks.
        if !settings.live_field
            || self.state.problem.is_some()
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

    pub(super) fn regenerate(&mut self, settings: &Settings) {
        match settings.field.validate() {
            Ok(()) => {
                self.field_replaced(Some(settings.field.size));
                self.state.progress =
                    Some((format!("generating the {} field", settings.field.size), 0.0));
                self.generated_with = Some(settings.field);
                self.send(SimCommand::Generate(settings.field));
            }
            Err(error) => self.notify(Level::Error, format!("cannot generate: {error}")),
        }
    }

    /// Before a field of another size (`None`: not known yet, a file to open) replaces the one
    /// on screen: the probes and the line, which belong to the old field, are cleared with a
    /// notice, and the thread stops sampling before the new field arrives (it must never
    /// sample cells of the old one).
    fn field_replaced(&mut self, new_size: Option<GridSize>) {
        if new_size.is_some() && new_size == self.state.field_size {
            return;
        }
        self.clear_plots("cleared the probes and the line: they belonged to the previous field");
    }

    /// Clears the probes and the line (saying `why` when there were any) and the notice of
    /// probes stopped on them, and stops the thread sampling before anything new arrives.
    pub(super) fn clear_plots(&mut self, why: &str) {
        self.notices.remove_starting_with(PROBES_STOPPED);
        if self.paint.has_plots() {
            self.paint.probes.clear();
            self.paint.profile.clear();
            self.send(SimCommand::SetSampling(Vec::new()));
            self.notify(Level::Info, why);
        }
    }

    /// The steps per frame scaled to a field of `new_size`, so that a frame takes about as
    /// long as before (398 steps of 512² are 1 step of 8192²); automatic steps start there.
    pub(super) fn scale_steps_per_frame(&mut self, new_size: GridSize, settings: &mut Settings) {
        let Some(old_size) = self.state.field_size else {
            return;
        };
        let scaled =
            settings.steps_per_frame as f64 * old_size.cells() as f64 / new_size.cells() as f64;
        let steps = (scaled.round() as u64).clamp(1, MAX_STEPS_PER_FRAME);
        if steps != settings.steps_per_frame {
            settings.steps_per_frame = steps;
            self.send(SimCommand::SetStepsPerFrame(steps));
        }
    }

    pub(super) fn set_recording(&mut self, on: bool, settings: &mut Settings) {
        let recording = if on {
            let Some(dir) = self.export_folder("record into", settings) else {
                return;
            };
            self.notify(
                Level::Info,
                format!(
                    "recording a frame every {} steps into {}",
                    settings.record_every,
                    dir.join("frames").display()
                ),
            );
            Some(Recording {
                dir: dir.join("frames"),
                every: settings.record_every.max(1),
                colorbar: settings.export_colorbar,
                cell_pixels: settings.png_cell_pixels,
                video: None,
            })
        } else {
            settings.export_dir = self.folder.path();
            None
        };
        self.state.recording = on;
        // A PNG recording replaces a video being recorded (which is finished and kept).
        self.files.video_recording = false;
        self.send(SimCommand::SetRecording(recording));
    }

    pub(super) fn export(&mut self, kind: ExportKind, settings: &mut Settings) {
        let Some(dir) = self.export_folder("export into", settings) else {
            return;
        };
        self.state.exports_pending += 1;
        self.send(SimCommand::Export(ExportJob {
            kind,
            dir,
            colorbar: settings.export_colorbar,
            cell_pixels: settings.png_cell_pixels,
        }));
    }

    /// Writes the probe series as CSV into the export folder.
    pub(super) fn export_probes(&mut self, settings: &mut Settings) {
        let Some(dir) = self.export_folder("export into", settings) else {
            return;
        };
        match self.paint.export_csv(&dir, self.state.step) {
            Ok(path) => {
                self.notify(Level::Info, format!("wrote {}", path.display()));
                self.state.last_exported = vec![path];
            }
            Err(error) => self.notify(Level::Error, format!("probe export failed: {error}")),
        }
    }

    /// The export folder as typed, remembered in the settings; `None`, with a notice saying
    /// what it is needed to do (`into`: "export into", "record into"), while there is none.
    fn export_folder(&mut self, into: &str, settings: &mut Settings) -> Option<PathBuf> {
        let dir = self.folder.path();
        if dir.as_os_str().is_empty() {
            self.notify(Level::Error, format!("choose a folder to {into} first"));
            return None;
        }
        settings.export_dir = dir.clone();
        Some(dir)
    }

    /// Applies what a control asked for.
    pub fn apply(&mut self, command: DiffusionCommand, settings: &mut Settings) {
        match command {
            DiffusionCommand::Play => self.play(),
            DiffusionCommand::Pause => {
                self.state.playing = false;
                self.send(SimCommand::Pause);
            }
            DiffusionCommand::Step(steps) => {
                self.state.non_finite = None;
                self.send(SimCommand::Step(steps));
            }
            DiffusionCommand::Reset => self.reset(),
            DiffusionCommand::Problem(command) => self.send(SimCommand::Problem(command)),
            DiffusionCommand::Regenerate => self.ask_to_regenerate(settings),
            DiffusionCommand::SwitchBackend(choice) => {
                settings.backend = choice;
                self.send(SimCommand::SwitchBackend(choice));
            }
            DiffusionCommand::SetBoundary(boundary) => {
                settings.step.boundary = boundary;
                self.send(SimCommand::SetParams(settings.step));
            }
            DiffusionCommand::SetCoefficient(input) => self.set_coefficient(input, settings),
            DiffusionCommand::SetStepsPerFrame(steps) => {
                settings.steps_per_frame = steps;
                self.send(SimCommand::SetStepsPerFrame(steps));
            }
            DiffusionCommand::SetAutoSteps(auto) => self.set_auto_steps(auto, settings),
            DiffusionCommand::SetSpeed(speed) => {
                settings.speed = speed;
                self.send(SimCommand::SetSpeed(speed.limit()));
            }
            DiffusionCommand::SetSteadyStop(stop) => {
                settings.steady_stop = stop;
                self.send(SimCommand::SetSteadyStop(stop.tolerance()));
            }
            DiffusionCommand::SetDuration(seconds) => self.send(SimCommand::SetDuration(seconds)),
            DiffusionCommand::SetViews { field, laplacian } => {
                (settings.field_view, settings.laplacian_view) = (field, laplacian);
                self.sent_views = None;
            }
            DiffusionCommand::Export(kind) => self.export(kind, settings),
            DiffusionCommand::SetRecording(on) => self.set_recording(on, settings),
            DiffusionCommand::SetRecordEvery(every) => self.set_record_every(every, settings),
            DiffusionCommand::SaveState(path) => self.save_state(path),
            DiffusionCommand::Open(path) => self.open_file(path),
            DiffusionCommand::StartVideo(choice) => self.start_video(choice, settings),
            DiffusionCommand::StopVideo => self.stop_video(),
            DiffusionCommand::ExportProbes => self.export_probes(settings),
            DiffusionCommand::ZoomIn => self.views.viewport.zoom_by(2.0),
            DiffusionCommand::ZoomOut => self.views.viewport.zoom_by(0.5),
            DiffusionCommand::Fit => self.views.viewport = Viewport::default(),
            DiffusionCommand::SetAgreementCheck(on) => self.set_agreement_check(on, settings),
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

    fn play(&mut self) {
        self.state.playing = true;
        self.state.non_finite = None;
        self.send(SimCommand::Play);
    }

    fn reset(&mut self) {
        self.state.non_finite = None;
        self.send(SimCommand::Reset);
        self.timings.clear();
        self.energy.clear();
        self.paint.restart(None);
    }

    /// Takes the committed coefficient when the guard allows it; a refused one leaves the box
    /// showing the coefficient in use, and the control says what was refused.
    fn set_coefficient(&mut self, input: CoefficientInput, settings: &mut Settings) {
        self.coefficient = CoefficientInput {
            refused: None,
            ..input
        };
        match self.coefficient.accepted(settings.step.boundary) {
            Some(params) => {
                if params.coeff != settings.step.coeff {
                    settings.step = params;
                    self.send(SimCommand::SetParams(params));
                }
            }
            None => {
                self.coefficient.refused = Some(input.typed);
                self.coefficient.typed = settings.step.coeff;
            }
        }
    }

    fn set_auto_steps(&mut self, auto: bool, settings: &mut Settings) {
        settings.auto_steps = auto;
        self.send(SimCommand::SetAutoSteps(auto));
        self.send(SimCommand::SetStepsPerFrame(settings.steps_per_frame));
    }

    /// A new interval; a recording under way restarts with it.
    fn set_record_every(&mut self, every: u64, settings: &mut Settings) {
        settings.record_every = every;
        if self.state.recording {
            self.set_recording(true, settings);
        }
    }

    /// Stops the video being recorded (the thread finishes and keeps it).
    fn stop_video(&mut self) {
        self.files.video_recording = false;
        self.state.recording = false;
        self.send(SimCommand::SetRecording(None));
    }

    fn set_agreement_check(&mut self, on: bool, settings: &mut Settings) {
        settings.agreement_check = on;
        self.agreement.set_enabled(on);
        self.send(SimCommand::SetAgreementCheck(on));
    }
}
