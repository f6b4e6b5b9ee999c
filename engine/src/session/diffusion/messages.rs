//! What travels between the diffusion panel and its simulation thread: commands one way,
//! events and frames the other. A new control that the simulation must know about is a new
//! [`SimCommand`] variant and one arm in `SimThread::handle`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::bench::BenchRow;
use crate::compute::{BackendChoice, BackendKind, KernelChoice, StepParams};
use crate::error::CudaUnavailable;
use crate::field::JaggedParams;
use crate::grid::GridSize;
use crate::import::LuminanceRange;
use crate::measure::TimingRecord;
use crate::problem::energy::EnergyBalance;
use crate::problem::{CellKind, HeatProblem, Shape, Side, SideCondition, Thermostat};
use crate::render::Preview;
use crate::sim::agreement::Outcome;
use crate::sim::generate::Generation;
use crate::sim::paint::Brush;
use crate::sim::FieldStats;

pub use crate::render::frame::{FramePart, ViewRequest, ViewRequests};
use crate::session::notice::Level;

/// Recording a PNG sequence while the simulation runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Folder the frames go into.
    pub dir: PathBuf,
    /// A frame every this many steps.
    pub every: u64,
    /// Whether each frame carries a colorbar.
    pub colorbar: bool,
    /// Pixels per cell of the PNG frames (`None`: automatic).
    pub cell_pixels: Option<usize>,
    /// A video file instead of PNG frames in `dir`.
    pub video: Option<VideoRecording>,
}

/// A recording into a video file (GIF or MP4) instead of PNG frames.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoRecording {
    /// The file (.gif or .mp4).
    pub path: PathBuf,
    /// Frames per second.
    pub fps: u32,
    /// What the frames show, and how large.
    pub look: crate::export::FrameLook,
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// PNG of the field as shown.
    FieldPng,
    /// PNG of the Laplacian as shown.
    LaplacianPng,
    /// Both PNGs (one frame of a recording).
    Frames,
    /// `.npy` of the current field (float32).
    FieldNpy,
    /// `.npy` of the current Laplacian (float32).
    LaplacianNpy,
    /// `timings.csv` and `timings.json`, the format of `heatlab run`: the chunks timed since
    /// the current field or problem was generated or opened.
    TimingLog,
}

impl ExportKind {
    /// The kinds the export panel offers as buttons.
    pub const ALL: [Self; 5] = [
        Self::FieldPng,
        Self::LaplacianPng,
        Self::FieldNpy,
        Self::LaplacianNpy,
        Self::TimingLog,
    ];
}

impl fmt::Display for ExportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::FieldPng => "Field PNG",
            Self::LaplacianPng => "Laplacian PNG",
            Self::Frames => "Frame PNGs",
            Self::FieldNpy => "Field .npy",
            Self::LaplacianNpy => "Laplacian .npy",
            Self::TimingLog => "Timing log",
        })
    }
}

/// An export request.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportJob {
    /// What to write.
    pub kind: ExportKind,
    /// The folder to write into (created if missing).
    pub dir: PathBuf,
    /// Whether PNGs carry a colorbar.
    pub colorbar: bool,
    /// Pixels per cell of the PNGs (`None`: automatic, see
    /// [`crate::export::frame::png_pixels_per_cell`]).
    pub cell_pixels: Option<usize>,
}

/// What the diffusion panel asks of the simulation thread.
#[derive(Debug)]
pub enum SimCommand {
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
    /// Choose the steps per frame so that stepping takes most of a frame.
    SetAutoSteps(bool),
    /// A heat problem's speed while playing: simulated seconds per wall second (`None`: as
    /// fast as the device goes).
    SetSpeed(Option<f64>),
    /// Stop playing a heat problem once its largest |dT/dt| falls under this many K/s (`None`:
    /// never): see [`crate::sim::steady`].
    SetSteadyStop(Option<f64>),
    /// The heat problem's duration, simulated seconds from the initial field (`None`: it runs
    /// until paused). Playing stops there once.
    SetDuration(Option<f64>),
    /// How the views are rendered.
    SetViews(ViewRequests),
    /// Write a file.
    Export(ExportJob),
    /// Start (`Some`) or stop (`None`) recording a PNG sequence.
    SetRecording(Option<Recording>),
    /// Check the running backend against the CPU reference while it runs (or stop checking).
    SetAgreementCheck(bool),
    /// Paint, end a stroke, undo or redo.
    Paint(PaintCommand),
    /// Cells whose values every frame carries (probes, then a line profile).
    SetSampling(Vec<u32>),
    /// The probes placed on the field (their cells are sampled through
    /// [`SimCommand::SetSampling`]); with `undoable`, undo can take the change back.
    SetProbes {
        /// Every probe, in the order placed.
        probes: Vec<crate::sim::undoable::ProbePlace>,
        /// Whether the user placed, moved or removed them (not the app for them).
        undoable: bool,
    },
    /// Save the whole state to this file.
    SaveState(PathBuf),
    /// Open a saved state, or an initial field (`.npy`, PNG or JPEG, an image's luminance
    /// mapped onto the range), told apart by the file's contents.
    Open(PathBuf, LuminanceRange),
    /// Step with this GPU kernel (kept across backend switches; ignored by the CPU).
    SetKernel(KernelChoice),
    /// Time every kernel on the current field, as `heatlab bench` does.
    MeasureKernels,
    /// Send a copy of the current field and the step parameters (for the Kernel lab).
    SnapshotField(std::sync::mpsc::Sender<Result<(crate::grid::Grid, StepParams), String>>),
    /// Load a kernel the Kernel lab validated and step with it.
    UseUserKernel(String),
    /// Pictures the views have replaced: their buffers are coloured into again, and freed on
    /// the thread that made them.
    ReturnPictures(Vec<Preview>),
    /// Build or edit the heat problem the simulation steps.
    Problem(ProblemCommand),
    /// Start over from a scenario (a gallery problem): its initial field and problem.
    OpenScenario(Box<crate::scenario::Scenario>),
}

/// Edits of the heat problem (materials, sources, held regions, sides, thermostats). Each one
/// that changes the problem is answered by [`SimEvent::Problem`] with the problem as it now
/// stands; one that cannot be applied leaves the problem as it was and says why in a notice.
#[derive(Debug, Clone, PartialEq)]
pub enum ProblemCommand {
    /// Step this problem from now on (its size must be the field's); `None`: back to the
    /// tutorial's uniform plate stepped with the coefficient. The field is kept.
    Set(Option<Box<HeatProblem>>),
    /// Paint `shape` with `kind` (added to the problem's kinds when it is new). Shapes sent
    /// until [`ProblemCommand::EndStroke`] are one step of undo. On the tutorial's plate this
    /// starts a problem (the plate becomes [`ProblemCommand::PLATE_MATERIAL`]).
    Paint {
        /// The cells to paint.
        shape: Shape,
        /// What they become.
        kind: CellKind,
    },
    /// The drag that painted kinds ended: its shapes become one step of undo.
    EndStroke,
    /// Move the part at `seed` (the connected cells of its kind) by `by` (rows, columns): one
    /// step of undo (see [`crate::sim::Simulation::move_part`]).
    MovePart {
        /// A cell of the part (row, column).
        seed: (usize, usize),
        /// Rows and columns to move it by.
        by: (i64, i64),
    },
    /// Give the part at this cell (row, column) back to the base: one step of undo.
    DeletePart((usize, usize)),
    /// Replace kind `index` (its name, material, heater or held temperature), for example to
    /// switch a heater or change its power.
    EditKind {
        /// The kind's index in the problem's kinds.
        index: u8,
        /// What it becomes.
        kind: CellKind,
    },
    /// One side's condition.
    SetSide(Side, SideCondition),
    /// The four sides' conditions (a periodic pair changes two at once).
    SetSides(crate::problem::Sides),
    /// The thermostats (replacing those there were).
    SetThermostats(Vec<Thermostat>),
    /// Replace the field by the problem's steady state, solved directly (see
    /// [`crate::solve`]); the step and time stay.
    SolveSteady,
    /// Explicit steps, or implicit ones of their own time step, from now on.
    SetStepping(crate::sim::solve::Stepping),
}

impl ProblemCommand {
    /// The material the tutorial's plate becomes when a problem is started by painting on it.
    pub const PLATE_MATERIAL: &'static str = "aluminium";
}

/// The brush's part of [`SimCommand`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PaintCommand {
    /// Extend the stroke being painted (or start one) to this point, in cells.
    StrokeTo {
        /// Row, fractions allowed.
        row: f32,
        /// Column, fractions allowed.
        col: f32,
        /// The dabs' radius, amount and edge.
        brush: Brush,
    },
    /// The button was released: the stroke is kept for undo.
    EndStroke,
    /// Take back the latest stroke.
    Undo,
    /// Paint the latest undone stroke again.
    Redo,
}

/// The values of the sampled cells at a frame's step.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    /// The cells asked for with [`SimCommand::SetSampling`].
    pub cells: Vec<u32>,
    /// Their values, in the same order.
    pub values: Vec<f32>,
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
    /// The sampled cells' values, when cells are sampled.
    pub samples: Option<Samples>,
    /// Where the heat problem stands, when one is stepped.
    pub problem: Option<ProblemFrame>,
}

/// The heat problem's part of a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemFrame {
    /// Simulated seconds since the initial field.
    pub simulated_seconds: f64,
    /// Seconds per step (the implicit steps' own under implicit stepping).
    pub dt: f64,
    /// The scenario's duration, simulated seconds from the initial field (`None`: it runs for
    /// as long as it is played).
    pub duration_seconds: Option<f64>,
    /// The largest |dT/dt| over the field, K/s, while the steady stop watches (see
    /// [`crate::sim::steady`]).
    pub change_rate: Option<f64>,
    /// The steady stop's tolerance, K/s, while it watches.
    pub steady_tolerance: Option<f64>,
    /// The energy balance (J per metre of depth) since the previous frame that carried one,
    /// when booked by the run loop (`session::run`: the stored energy summed where the field
    /// is, one number per row crossing). It is taken on the statistics' clock (every frame
    /// while paused, a few times a second while running, less often when it is costly) and its
    /// time counts as statistics; other frames carry `None`. After the field or the map changed other than by stepping (a
    /// stroke, an undo, a new problem) the next balance is skipped: it starts from there.
    pub energy: Option<EnergyBalance>,
    /// The budget since it last started (a new field, a reset, an edit), ending with
    /// `energy`'s window: the figures `heatlab run` records, carried with each frame that
    /// books a window.
    pub budget: Option<crate::session::run::EnergyBudget>,
    /// Whether each kind's heater is on now (false for kinds without one), thermostats
    /// included.
    pub heaters_on: Vec<bool>,
    /// The heaters thermostats switched since the previous frame, oldest first: the step the
    /// decision read, the kind, on or off, and the probe's temperature (for the probe plot's
    /// on/off marks). Thermostats' switches show here, not as [`SimEvent::Problem`].
    pub switches: Vec<crate::sim::thermostat::HeaterSwitch>,
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
    pub cuda_unavailable: Option<CudaUnavailable>,
    /// The kernel choice in force on the GPU (`None` on the CPU).
    pub kernel: Option<KernelChoice>,
    /// Whether a Kernel lab kernel is loaded.
    pub user_kernel: bool,
}

/// Everything but frames that the simulation thread tells the panel.
#[derive(Debug, Clone)]
pub enum SimEvent {
    /// The backend changed (or was set up).
    Backend(BackendStatus),
    /// Long work in progress: what, and the fraction done.
    Progress(String, f32),
    /// A new field is ready: its parameters and how its generation went.
    FieldReady(JaggedParams, Generation),
    /// Generating a field failed, and why (for the user); the field before it stays.
    GenerationFailed(String),
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
    /// The agreement check finished a window.
    Agreement(AgreementReport),
    /// Strokes and changes that undo and redo can take back or repeat now.
    PaintHistory(usize, usize),
    /// Undo or redo moved the probes: where they are now.
    Probes(Vec<crate::sim::undoable::ProbePlace>),
    /// The state was saved to this file, at this step.
    StateSaved(PathBuf, u64),
    /// A saved state or an initial field was opened and the simulation stands on it.
    Opened(super::files::Opened),
    /// "Measure kernels" finished (no rows when it failed; a notice says why).
    KernelTimings(Vec<BenchRow>),
    /// The heat problem changed (an edit, an opened file, a new field): the problem as it now
    /// stands, map included, or `None` for the tutorial's uniform plate.
    Problem(Option<Arc<HeatProblem>>),
    /// How the problem advances now (sent with every [`SimEvent::Problem`]: a new problem
    /// starts with explicit steps).
    Stepping(crate::sim::solve::Stepping),
}

/// One finished agreement check and the totals so far.
#[derive(Debug, Clone)]
pub struct AgreementReport {
    /// The window just checked.
    pub outcome: Outcome,
    /// Checks done since the check was turned on (or the field replaced).
    pub checks: u64,
    /// How many of them found a difference.
    pub mismatches: u64,
}
