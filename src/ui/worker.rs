//! The simulation thread. It owns the [`Simulation`]; the UI sends it [`Command`]s and takes
//! [`Frame`]s (previews, statistics, timings) and [`Event`]s back, so the UI never waits on
//! compute. A frame is only computed once the UI has taken the previous one, so stepping runs
//! as fast as the display shows it and never piles up frames nobody sees.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::compute::{
    create_backend, Backend, BackendChoice, BackendKind, CudaBackend, StepParams,
};
use crate::error::HeatlabError;
use crate::export::TimingRecord;
use crate::field::{generate_jagged, JaggedParams};
use crate::grid::{Grid, GridSize};
use crate::render::preview::render_preview;
use crate::render::{Colormap, Layer, Preview, PreviewRequest, RangeMode, ValueRange};
use crate::sim::{FieldStats, Simulation, Stability};

use super::export::{self, ExportJob};

/// How one view should be rendered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewRequest {
    /// Colours.
    pub colormap: Colormap,
    /// How the colour range is chosen.
    pub range_mode: RangeMode,
    /// Largest preview in pixels (the on-screen size, times the zoom).
    pub max_size: (usize, usize),
}

/// Field and Laplacian view requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewRequests {
    /// The field view.
    pub field: ViewRequest,
    /// The Laplacian view.
    pub laplacian: ViewRequest,
}

/// Recording a PNG sequence while the simulation runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Folder the frames go into.
    pub dir: PathBuf,
    /// A frame every this many steps.
    pub every: u64,
    /// Whether each frame carries a colorbar.
    pub colorbar: bool,
}

/// What the UI asks of the worker.
#[derive(Debug)]
pub enum Command {
    /// Use this backend (keeps the current field).
    SwitchBackend(BackendChoice),
    /// Generate a new jagged field and start over from it.
    Generate(JaggedParams),
    /// Step continuously.
    Play,
    /// Stop stepping (also cancels pending "step N" steps).
    Pause,
    /// Take this many steps, then stop.
    Step(u64),
    /// Back to the initial field, step 0.
    Reset,
    /// New coefficient and boundary (already checked by the UI).
    SetParams(StepParams),
    /// Steps per frame while playing.
    SetStepsPerFrame(u64),
    /// Choose the steps per frame so that stepping takes [`AUTO_STEPPING_SHARE`] of a frame.
    SetAutoSteps(bool),
    /// How the views are rendered.
    SetViews(ViewRequests),
    /// Write a file.
    Export(ExportJob),
    /// Start (`Some`) or stop (`None`) recording a PNG sequence.
    SetRecording(Option<Recording>),
    /// End the thread.
    Shutdown,
}

/// A named part of a frame's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FramePart {
    /// Advancing the field (device time on CUDA).
    Stepping,
    /// Computing the Laplacian.
    Laplacian,
    /// Reducing to the display size and colormapping.
    Colormap,
    /// Copying the field to the host.
    Download,
    /// Previews rendered by the backend itself (on CUDA: Laplacian, reduction, colormap, copy).
    DevicePreview,
    /// Total heat, minimum and maximum.
    Statistics,
    /// Writing recorded frames.
    Recording,
    /// Handing the pictures to the GPU of the display (measured on the UI thread).
    TextureUpload,
}

impl FramePart {
    /// Every part, in the order the timings panel lists them.
    pub const ALL: [Self; 8] = [
        Self::Stepping,
        Self::Laplacian,
        Self::Colormap,
        Self::Download,
        Self::DevicePreview,
        Self::Statistics,
        Self::Recording,
        Self::TextureUpload,
    ];
}

impl std::fmt::Display for FramePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Stepping => "stepping",
            Self::Laplacian => "Laplacian",
            Self::Colormap => "reduce + colormap",
            Self::Download => "download",
            Self::DevicePreview => "GPU preview + copy",
            Self::Statistics => "statistics",
            Self::Recording => "recording",
            Self::TextureUpload => "texture upload",
        })
    }
}

/// One displayed frame: the pictures and what it cost.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Steps since the initial field.
    pub step: u64,
    /// Size of the full field.
    pub size: GridSize,
    /// The field, reduced and colormapped.
    pub field: Preview,
    /// The Laplacian, reduced and colormapped.
    pub laplacian: Preview,
    /// Total heat, minimum and maximum of the full field (computed a few times a second).
    pub stats: Option<FieldStats>,
    /// Steps taken for this frame (0 when only the view changed).
    pub steps: u64,
    /// The timing of those steps, as `heatlab run` logs it.
    pub record: Option<TimingRecord>,
    /// Where the frame's time went on the worker.
    pub split: Vec<(FramePart, Duration)>,
    /// Wall time the worker spent on the frame.
    pub wall: Duration,
    /// Whether the simulation is playing.
    pub playing: bool,
    /// Steps per frame now in use (it changes by itself in the automatic mode).
    pub steps_per_frame: u64,
}

/// The backend in use, for the panel.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendStatus {
    /// CPU or CUDA.
    pub kind: BackendKind,
    /// The device's name.
    pub device: String,
    /// The kernel or loop that steps.
    pub method: String,
    /// Why CUDA is not used, when it is not.
    pub cuda_unavailable: Option<String>,
}

/// How serious a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something done.
    Info,
    /// Something to know.
    Warning,
    /// Something failed.
    Error,
}

/// Everything but frames that the worker tells the UI.
#[derive(Debug, Clone)]
pub enum Event {
    /// The backend changed (or was set up).
    Backend(BackendStatus),
    /// Long work in progress: what, and the fraction done.
    Progress(String, f32),
    /// A new field is ready: its size and how long it took.
    FieldReady(GridSize, Duration),
    /// The field went non-finite and the simulation stopped at the last good state.
    NonFinite {
        /// What happened, for the user.
        message: String,
        /// The step of the last finite state, where the simulation now stands.
        step: u64,
    },
    /// Playing stopped (pause, end of "step N", or an error).
    Stopped,
    /// A message for the notice area.
    Notice(Level, String),
    /// An export finished: the files written (none when it failed; a notice says why).
    Exported(Vec<PathBuf>),
    /// Recording could not start or had to stop (a notice says why).
    RecordingStopped,
}

/// The UI's end of the worker.
pub struct WorkerHandle {
    commands: Sender<Command>,
    events: Receiver<Event>,
    slot: Arc<Mutex<Option<Frame>>>,
    thread: Option<JoinHandle<()>>,
}

/// Locks the frame slot; a panic elsewhere cannot leave a frame half-written, so a poisoned
/// lock is still usable.
fn lock(slot: &Mutex<Option<Frame>>) -> MutexGuard<'_, Option<Frame>> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl WorkerHandle {
    /// Starts the worker. `notify` is called whenever there is something new (a repaint request).
    pub fn spawn(notify: Arc<dyn Fn() + Send + Sync>) -> std::io::Result<Self> {
        let (commands, command_rx) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        let slot = Arc::new(Mutex::new(None));
        let worker = Worker::new(command_rx, event_tx, Arc::clone(&slot), notify);
        let thread = std::thread::Builder::new()
            .name("heatlab-sim".into())
            .spawn(move || worker.run())?;
        Ok(Self {
            commands,
            events,
            slot,
            thread: Some(thread),
        })
    }

    /// Sends a command; if the worker has died, the UI learns it from [`Self::is_alive`].
    pub fn send(&self, command: Command) {
        // A send only fails when the thread has ended, which `is_alive` reports.
        let _ = self.commands.send(command);
    }

    /// The next event, if any.
    pub fn try_event(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    /// The newest frame, if one came since the last call.
    pub fn take_frame(&self) -> Option<Frame> {
        lock(&self.slot).take()
    }

    /// Whether the thread is still running.
    pub fn is_alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for WorkerHandle {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How often the full-field statistics are recomputed while playing.
const STATS_INTERVAL: Duration = Duration::from_millis(200);

/// The largest chunk of a "step N" request taken between two frames.
const STEP_N_CHUNK: u64 = 1000;

struct Worker {
    commands: Receiver<Command>,
    events: Sender<Event>,
    slot: Arc<Mutex<Option<Frame>>>,
    notify: Arc<dyn Fn() + Send + Sync>,
    sim: Option<Simulation>,
    /// A backend made before the first field exists.
    idle_backend: Option<Box<dyn Backend>>,
    cuda_unavailable: Option<String>,
    /// Whether CUDA has been tried (a CUDA context is costly to make just to ask).
    cuda_checked: bool,
    params: StepParams,
    playing: bool,
    pending_steps: u64,
    steps_per_frame: u64,
    auto_steps: bool,
    views: ViewRequests,
    /// A frame is owed although no step was taken (view or parameters changed).
    dirty: bool,
    recording: Option<Recording>,
    last_stats: Option<Instant>,
    /// What the statistics cost last time (with their download on a GPU).
    stats_cost: Duration,
    /// Ranges of the last frame, so that exports match what is shown.
    shown_ranges: (Option<ValueRange>, Option<ValueRange>),
}

impl Worker {
    fn new(
        commands: Receiver<Command>,
        events: Sender<Event>,
        slot: Arc<Mutex<Option<Frame>>>,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let view = ViewRequest {
            colormap: Colormap::Viridis,
            range_mode: RangeMode::MinMax,
            max_size: (512, 512),
        };
        Self {
            commands,
            events,
            slot,
            notify,
            sim: None,
            idle_backend: None,
            cuda_unavailable: None,
            cuda_checked: false,
            params: StepParams::default(),
            playing: false,
            pending_steps: 0,
            steps_per_frame: 10,
            auto_steps: false,
            views: ViewRequests {
                field: view,
                laplacian: ViewRequest {
                    range_mode: RangeMode::LAPLACIAN_DEFAULT,
                    ..view
                },
            },
            dirty: false,
            recording: None,
            last_stats: None,
            stats_cost: Duration::ZERO,
            shown_ranges: (None, None),
        }
    }

    fn emit(&self, event: Event) {
        // The UI may already be gone while shutting down; nothing to do then.
        let _ = self.events.send(event);
        (self.notify)();
    }

    fn notice(&self, level: Level, text: impl Into<String>) {
        self.emit(Event::Notice(level, text.into()));
    }

    fn has_work(&self) -> bool {
        self.sim.is_some() && (self.playing || self.pending_steps > 0 || self.dirty)
    }

    fn slot_is_full(&self) -> bool {
        lock(&self.slot).is_some()
    }

    fn run(mut self) {
        loop {
            let command = if self.has_work() && !self.slot_is_full() {
                match self.commands.try_recv() {
                    Ok(command) => Some(command),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return,
                }
            } else {
                // Waiting for the UI to take the last frame, or for something to do.
                let wait = if self.has_work() {
                    Duration::from_millis(2)
                } else {
                    Duration::from_millis(100)
                };
                match self.commands.recv_timeout(wait) {
                    Ok(command) => Some(command),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            match command {
                Some(Command::Shutdown) => return,
                Some(command) => self.handle(command),
                None => {
                    if self.has_work() && !self.slot_is_full() {
                        self.frame();
                    }
                }
            }
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::SwitchBackend(choice) => self.switch_backend(choice),
            Command::Generate(params) => self.generate(&params),
            Command::Play => {
                if self.sim.is_some() {
                    self.playing = true;
                }
            }
            Command::Pause => {
                let was_running = self.playing || self.pending_steps > 0;
                self.playing = false;
                self.pending_steps = 0;
                // A frame made before the pause must not tell the UI it is still playing.
                if let Some(frame) = lock(&self.slot).as_mut() {
                    frame.playing = false;
                }
                if was_running {
                    self.emit(Event::Stopped);
                }
            }
            Command::Step(steps) => self.pending_steps = self.pending_steps.saturating_add(steps),
            Command::Reset => {
                if let Some(sim) = self.sim.as_mut() {
                    match sim.reset() {
                        Ok(()) => self.dirty = true,
                        Err(error) => self.notice(Level::Error, format!("reset failed: {error}")),
                    }
                }
            }
            Command::SetParams(params) => {
                self.params = params;
                if let Some(sim) = self.sim.as_mut() {
                    sim.set_params(params);
                }
                self.dirty = true;
            }
            Command::SetStepsPerFrame(steps) => self.steps_per_frame = steps.max(1),
            Command::SetAutoSteps(auto) => self.auto_steps = auto,
            Command::SetViews(views) => {
                if views != self.views {
                    self.views = views;
                    self.dirty = true;
                }
            }
            Command::Export(job) => self.export(&job),
            Command::SetRecording(recording) => {
                if let Some(recording) = &recording {
                    if let Err(error) = crate::export::ensure_writable_dir(&recording.dir) {
                        self.notice(Level::Error, format!("cannot record: {error}"));
                        self.emit(Event::RecordingStopped);
                        return;
                    }
                }
                self.recording = recording;
            }
            Command::Shutdown => {}
        }
    }

    fn backend_status(&self) -> Option<BackendStatus> {
        let backend = match (&self.sim, &self.idle_backend) {
            (Some(sim), _) => sim.backend(),
            (None, Some(backend)) => backend.as_ref(),
            (None, None) => return None,
        };
        Some(BackendStatus {
            kind: backend.kind(),
            device: backend.device_name(),
            method: backend.step_method(),
            cuda_unavailable: self.cuda_unavailable.clone(),
        })
    }

    fn switch_backend(&mut self, choice: BackendChoice) {
        let created = match choice {
            BackendChoice::Cpu => {
                // Find out once whether CUDA would work, so the panel can say why it is not used.
                if !self.cuda_checked {
                    self.cuda_checked = true;
                    if let Err(reason) = CudaBackend::new() {
                        self.cuda_unavailable = Some(reason.to_string());
                    }
                }
                create_backend(choice)
            }
            _ => create_backend(choice),
        };
        let backend = match created {
            Ok((backend, note)) => {
                if choice != BackendChoice::Cpu {
                    self.cuda_checked = true;
                }
                if let Some(note) = note {
                    self.cuda_unavailable =
                        Some(note.trim_start_matches("using the CPU: ").to_string());
                } else if backend.kind() == BackendKind::Cuda {
                    self.cuda_unavailable = None;
                }
                backend
            }
            Err(error) => {
                if choice == BackendChoice::Cuda {
                    self.cuda_unavailable = Some(error.to_string());
                }
                self.notice(Level::Error, format!("cannot switch to {choice}: {error}"));
                if let Some(status) = self.backend_status() {
                    self.emit(Event::Backend(status));
                }
                return;
            }
        };
        match self.sim.as_mut() {
            Some(sim) => {
                if let Err(error) = sim.switch_backend(backend) {
                    self.notice(Level::Error, format!("cannot switch to {choice}: {error}"));
                }
                self.dirty = true;
            }
            None => self.idle_backend = Some(backend),
        }
        if let Some(status) = self.backend_status() {
            self.emit(Event::Backend(status));
        }
    }

    fn generate(&mut self, params: &JaggedParams) {
        let started = Instant::now();
        let what = format!("generating the {} field", params.size);
        self.emit(Event::Progress(what.clone(), 0.0));
        let events = self.events.clone();
        let notify = Arc::clone(&self.notify);
        let progress = move |fraction: f32| {
            let _ = events.send(Event::Progress(what.clone(), fraction));
            notify();
        };
        let field = match generate_jagged(params, &progress) {
            Ok(field) => field,
            Err(error) => {
                self.emit(Event::Progress(String::new(), 1.0));
                self.notice(Level::Error, format!("cannot generate the field: {error}"));
                return;
            }
        };
        let result = match self.sim.as_mut() {
            Some(sim) => sim.replace_initial(field),
            None => {
                let backend = match self.idle_backend.take() {
                    Some(backend) => Ok(backend),
                    None => create_backend(BackendChoice::Auto).map(|(backend, _)| backend),
                };
                backend
                    .and_then(|backend| Simulation::new(backend, field, self.params))
                    .map(|sim| {
                        self.sim = Some(sim);
                    })
            }
        };
        match result {
            Ok(()) => {
                self.dirty = true;
                self.last_stats = None;
                self.emit(Event::FieldReady(params.size, started.elapsed()));
                if let Some(status) = self.backend_status() {
                    self.emit(Event::Backend(status));
                }
            }
            Err(error) => {
                self.emit(Event::Progress(String::new(), 1.0));
                self.notice(Level::Error, format!("cannot load the field: {error}"));
            }
        }
    }

    /// Steps for the next frame: a frame's worth while playing, a chunk of a "step N" request,
    /// cut at the next recording point so that every recorded step is exactly on the grid of K.
    fn steps_for_frame(&self, step: u64) -> u64 {
        let mut steps = if self.pending_steps > 0 {
            self.pending_steps
                .min(STEP_N_CHUNK.max(self.steps_per_frame))
        } else if self.playing {
            self.steps_per_frame
        } else {
            0
        };
        if let Some(recording) = &self.recording {
            let every = recording.every.max(1);
            steps = steps.min(every - step % every);
        }
        steps
    }

    fn frame(&mut self) {
        let started = Instant::now();
        let Some(step) = self.sim.as_ref().map(Simulation::step_count) else {
            return;
        };
        let steps = self.steps_for_frame(step);
        let mut split = Vec::new();
        let mut record = None;
        if steps > 0 {
            match self.advance(steps) {
                Ok(timing) => {
                    split.push((FramePart::Stepping, Duration::from_secs_f64(timing.seconds)));
                    record = Some(timing);
                    if self.pending_steps > 0 {
                        self.pending_steps -= steps.min(self.pending_steps);
                        if self.pending_steps == 0 && !self.playing {
                            self.emit(Event::Stopped);
                        }
                    }
                }
                Err(()) => {
                    self.playing = false;
                    self.pending_steps = 0;
                    self.emit(Event::Stopped);
                }
            }
        }
        self.dirty = false;
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        // A few times a second, and never more than a tenth of the time (large fields).
        let interval = STATS_INTERVAL.max(self.stats_cost * 10);
        let stats_due = !self.playing || self.last_stats.is_none_or(|at| at.elapsed() >= interval);
        let rendered = render_frame(sim, self.views, stats_due, &mut split);
        let (mut field, mut laplacian, stats) = match rendered {
            Ok(parts) => parts,
            Err(error) => {
                self.playing = false;
                self.pending_steps = 0;
                self.notice(Level::Error, format!("cannot draw the field: {error}"));
                self.emit(Event::Stopped);
                return;
            }
        };
        if stats.is_some() {
            self.last_stats = Some(Instant::now());
            let on_gpu = sim.backend().kind() != BackendKind::Cpu;
            self.stats_cost = split
                .iter()
                .filter(|(part, _)| {
                    *part == FramePart::Statistics || (on_gpu && *part == FramePart::Download)
                })
                .map(|(_, time)| *time)
                .sum();
        }
        centre_diverging(&mut field, self.views.field);
        centre_diverging(&mut laplacian, self.views.laplacian);
        self.shown_ranges = (Some(field.range), Some(laplacian.range));
        let step = sim.step_count();
        let size = sim.initial().size();
        if let Some(recording) = self.recording.clone() {
            if steps > 0 && step % recording.every.max(1) == 0 {
                let recorded = Instant::now();
                self.record_frame(&recording, step);
                split.push((FramePart::Recording, recorded.elapsed()));
            }
        }
        let wall = started.elapsed();
        if self.auto_steps && self.playing && self.pending_steps == 0 {
            if let Some(record) = &record {
                self.steps_per_frame = auto_steps_per_frame(self.steps_per_frame, record, wall);
            }
        }
        let frame = Frame {
            step,
            size,
            field,
            laplacian,
            stats,
            steps: record.as_ref().map_or(0, |r| r.steps),
            record,
            split,
            wall,
            playing: self.playing || self.pending_steps > 0,
            steps_per_frame: self.steps_per_frame,
        };
        *lock(&self.slot) = Some(frame);
        (self.notify)();
    }

    /// Advances, checking for non-finite values when the coefficient is unstable (below 0.25
    /// each step is an average of neighbours, so a finite field stays finite).
    fn advance(&mut self, steps: u64) -> Result<TimingRecord, ()> {
        let Some(sim) = self.sim.as_mut() else {
            return Err(());
        };
        let result = if Stability::of(sim.params().coeff) == Stability::Unstable {
            sim.advance_checked(steps).map(|(record, _)| record)
        } else {
            sim.advance(steps)
        };
        match result {
            Ok(record) => Ok(record),
            Err(error @ HeatlabError::NonFinite { .. }) => {
                let good = sim.step_count();
                self.emit(Event::NonFinite {
                    message: format!("{error}; paused at step {good}, the last finite state"),
                    step: good,
                });
                self.dirty = true;
                Err(())
            }
            Err(error) => {
                self.notice(Level::Error, format!("stepping failed: {error}"));
                Err(())
            }
        }
    }

    fn record_frame(&mut self, recording: &Recording, step: u64) {
        let job = ExportJob {
            kind: export::ExportKind::Frames,
            dir: recording.dir.clone(),
            colorbar: recording.colorbar,
        };
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        if let Err(error) = export::write(&job, sim, self.views, self.shown_ranges, step) {
            self.recording = None;
            self.notice(Level::Error, format!("recording stopped: {error}"));
            self.emit(Event::RecordingStopped);
        }
    }

    fn export(&mut self, job: &ExportJob) {
        let Some(sim) = self.sim.as_mut() else {
            self.notice(
                Level::Warning,
                "nothing to export yet: the field is still being generated",
            );
            self.emit(Event::Exported(Vec::new()));
            return;
        };
        let step = sim.step_count();
        match export::write(job, sim, self.views, self.shown_ranges, step) {
            Ok(paths) => self.emit(Event::Exported(paths)),
            Err(error) => {
                self.notice(Level::Error, format!("export failed: {error}"));
                self.emit(Event::Exported(Vec::new()));
            }
        }
    }
}

/// Share of a frame's time that the automatic steps-per-frame gives to stepping.
pub const AUTO_STEPPING_SHARE: f64 = 0.75;

/// Longest frame the automatic steps-per-frame aims for (10 frames per second).
pub const AUTO_MAX_FRAME_SECONDS: f64 = 0.1;

/// The next steps per frame in the automatic mode: enough steps that stepping takes
/// [`AUTO_STEPPING_SHARE`] of the frame (within [`AUTO_MAX_FRAME_SECONDS`]), given what the display took this frame, moving a
/// quarter of the way there each frame so that one slow frame does not swing it.
pub fn auto_steps_per_frame(current: u64, record: &TimingRecord, wall: Duration) -> u64 {
    let stepping = record.seconds;
    if record.steps == 0 || stepping <= 0.0 {
        return current;
    }
    let per_step = stepping / record.steps as f64;
    let display = (wall.as_secs_f64() - stepping).max(0.0);
    let share = (AUTO_STEPPING_SHARE / (1.0 - AUTO_STEPPING_SHARE) * display / per_step).ceil();
    // ... but never so many that the animation drops below 10 frames per second.
    let smooth = ((AUTO_MAX_FRAME_SECONDS - display) / per_step)
        .floor()
        .max(1.0);
    let wanted = share.min(smooth);
    let next = (current as f64 * 0.75 + wanted * 0.25).round();
    (next as u64).clamp(1, super::settings::MAX_STEPS_PER_FRAME)
}

/// A diverging colormap is only readable when its middle colour is zero: for those, a
/// computed range (min-max or percentile) is widened to be symmetric about zero and the
/// (already reduced, so cheap) preview is coloured again. Fixed ranges are left as given.
pub fn centre_diverging(preview: &mut Preview, view: ViewRequest) {
    if !view.colormap.is_diverging() || matches!(view.range_mode, RangeMode::Fixed(_)) {
        return;
    }
    let half = preview.range.min.abs().max(preview.range.max.abs());
    let centred = ValueRange {
        min: -half,
        max: half,
    };
    if centred != preview.range {
        preview.range = centred;
        preview.rgba = crate::render::field_to_rgba(&preview.values, view.colormap, centred);
    }
}

type FrameParts = (Preview, Preview, Option<FieldStats>);

/// Renders both previews (and the statistics when due), recording where the time goes.
/// On the CPU the field is downloaded once and every part is timed on its own; on CUDA the
/// backend reduces and colormaps on the device, so only the small pictures cross to the host.
fn render_frame(
    sim: &mut Simulation,
    views: ViewRequests,
    stats_due: bool,
    split: &mut Vec<(FramePart, Duration)>,
) -> crate::Result<FrameParts> {
    let boundary = sim.params().boundary;
    let request = |layer: Layer, view: ViewRequest| PreviewRequest {
        layer,
        boundary,
        colormap: view.colormap,
        range_mode: view.range_mode,
        max_size: view.max_size,
    };
    let field_request = request(Layer::Field, views.field);
    let laplacian_request = request(Layer::Laplacian, views.laplacian);
    if sim.backend().kind() == BackendKind::Cpu {
        let timer = Instant::now();
        let field = sim.field()?;
        split.push((FramePart::Download, timer.elapsed()));
        let timer = Instant::now();
        let laplacian = sim.laplacian()?;
        split.push((FramePart::Laplacian, timer.elapsed()));
        let timer = Instant::now();
        let field_preview = render_preview(&field, &field_request);
        let laplacian_preview = render_preview(&laplacian, &laplacian_request);
        split.push((FramePart::Colormap, timer.elapsed()));
        let stats =
            stats_due.then(|| timed(split, FramePart::Statistics, || FieldStats::of(&field)));
        Ok((field_preview, laplacian_preview, stats))
    } else {
        let timer = Instant::now();
        let field_preview = sim.render_preview(&field_request)?;
        let laplacian_preview = sim.render_preview(&laplacian_request)?;
        split.push((FramePart::DevicePreview, timer.elapsed()));
        let stats = if stats_due {
            let timer = Instant::now();
            let field: Grid = sim.field()?;
            split.push((FramePart::Download, timer.elapsed()));
            Some(timed(split, FramePart::Statistics, || {
                FieldStats::of(&field)
            }))
        } else {
            None
        };
        Ok((field_preview, laplacian_preview, stats))
    }
}

fn timed<T>(
    split: &mut Vec<(FramePart, Duration)>,
    part: FramePart,
    work: impl FnOnce() -> T,
) -> T {
    let timer = Instant::now();
    let value = work();
    split.push((part, timer.elapsed()));
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_steps_move_towards_three_quarters_stepping() {
        let size = GridSize::square(100).unwrap();
        // 10 steps took 10 ms, drawing 30 ms. Stepping 3/4 of the frame would be 90 steps,
        // but 10 frames/s leave 70 ms: 70 steps. A quarter of the way from 10: 25.
        let record = TimingRecord::diffusion(0, 10, "cpu", "test", size, 0.010);
        assert_eq!(
            auto_steps_per_frame(10, &record, Duration::from_millis(40)),
            25
        );
        // Drawing takes 80 ms: only 20 ms are left for steps within 10 frames per second.
        assert_eq!(
            auto_steps_per_frame(10, &record, Duration::from_millis(90)),
            13
        );
        // Already there (60 ms of steps, 20 ms drawing): stays.
        let record = TimingRecord::diffusion(0, 60, "cpu", "test", size, 0.060);
        assert_eq!(
            auto_steps_per_frame(60, &record, Duration::from_millis(80)),
            60
        );
    }
}
