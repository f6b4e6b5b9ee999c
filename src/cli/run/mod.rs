//! `heatlab run`: the headless diffusion job.
//!
//! Once its output folder is ready, every way a run ends (completed, interrupted by a signal,
//! non-finite values, a failed export, out of memory, even a panic) leaves `run.json` with its
//! status and reason and `timings.csv` with every chunk timed so far, where there is room to
//! write them; no temporary file stays behind.

mod driver;
mod ending;
mod folder;
mod record;
mod scenario;
mod start;
mod video;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};

use super::interrupt::Interrupt;
use super::output::note;
use driver::{run_to_end, CliDriver};
use ending::{keep_state, keep_video, settle_agreement};
use folder::{previous_run_files, remove_previous_run, reuse_refusal};
use heatlab_engine::compute::{
    create_backend, Backend, BackendChoice, Boundary, KernelChoice, StepParams,
};
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export;
use heatlab_engine::export::VideoLayers;
use heatlab_engine::field::{JaggedParams, DEFAULT_SEED};
use heatlab_engine::grid::{Grid, GridSize};
use heatlab_engine::import::LuminanceRange;
use heatlab_engine::render::Colormap;
use heatlab_engine::session::run::{FieldChecks, RunLoop, RunSchedule};
use heatlab_engine::session::start::Start;
use heatlab_engine::sim::agreement::WindowPolicy;
use heatlab_engine::sim::generate::generate_on;
use heatlab_engine::sim::Stability;
use heatlab_engine::state::FieldOrigin;
use record::{Ending, RunRecord};
use start::StartFrom;
use video::{RunVideo, VideoPlan};

/// Arguments of `heatlab run`.
#[derive(Debug, Clone, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// Field size: N for N x N, or ROWSxCOLS.
    #[arg(long, default_value = "2000")]
    pub size: GridSize,
    /// Seed of NumPy's default_rng for the jagged field.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Power of the radial FFT filter (radius ** exponent).
    #[arg(long, default_value_t = -1.7)]
    pub exponent: f64,
    /// Cells farther than cutoff * rows from the centre are zero.
    #[arg(long, default_value_t = 0.45)]
    pub cutoff: f64,
    /// Values not above this percentile are zero.
    #[arg(long, default_value_t = 70.0)]
    pub percentile: f64,
    /// Start from this file instead of the jagged field: a 2-D float32/float64 .npy array, or
    /// a PNG or JPEG image whose luminance is mapped onto --initial-range (the file gives the
    /// size; the jagged field's --size, --seed, --exponent, --cutoff and --percentile cannot be
    /// given with it).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["resume", "size", "seed", "exponent", "cutoff", "percentile"]
    )]
    pub initial: Option<PathBuf>,
    /// Run a heat problem written as a scenario file (TOML: materials, heaters, held parts,
    /// the four sides, the time step; see `heatlab scenario check`), or a gallery problem by
    /// name (`heatlab scenario list`). Its duration and output interval replace --steps and
    /// --save-every unless --duration or --save-every is given.
    #[arg(
        long,
        value_name = "FILE|NAME",
        conflicts_with_all = [
            "initial", "resume", "size", "seed", "exponent", "cutoff", "percentile", "coeff",
            "boundary", "initial_range", "allow_unstable"
        ]
    )]
    pub scenario: Option<PathBuf>,
    /// Simulated seconds to run a heat problem (a scenario, or a resumed state with one);
    /// instead of --steps.
    #[arg(long, value_name = "SECONDS", conflicts_with = "steps")]
    pub duration: Option<f64>,
    /// The values of black and white when --initial is an image.
    #[arg(
        long,
        value_name = "LO,HI",
        default_value = "0,1",
        allow_hyphen_values = true
    )]
    pub initial_range: LuminanceRange,
    /// Continue a state saved with --save-state (or the app's Save state), bit for bit: its
    /// field, step, initial field, coefficient and boundary (--coeff and --boundary, when
    /// given, change them from now on). --steps more steps are taken. The state's field is
    /// kept: --size, --seed, --exponent, --cutoff, --percentile and --initial-range cannot be
    /// given with it.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["size", "seed", "exponent", "cutoff", "percentile", "initial_range"]
    )]
    pub resume: Option<PathBuf>,
    /// Save the state the run ends in (completed, interrupted or stopped at the last finite
    /// step) to this file, to continue it later with --resume. Not a file the run writes.
    #[arg(long, value_name = "FILE")]
    pub save_state: Option<PathBuf>,
    /// Diffusion steps to take [default: 1000, or a scenario's duration].
    #[arg(long)]
    pub steps: Option<i64>,
    /// Diffusion coefficient, in (0, 0.25] [default: 0.25, or the resumed state's].
    #[arg(long)]
    pub coeff: Option<f32>,
    /// Boundary condition: dirichlet (0 outside), neumann (insulated) or periodic
    /// [default: dirichlet, or the resumed state's].
    #[arg(long)]
    pub boundary: Option<Boundary>,
    /// auto (CUDA when it works, else CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendChoice,
    /// Save frames every this many steps (0: only the first and the last).
    #[arg(long, default_value_t = 0)]
    pub save_every: i64,
    /// Colormap of the field PNGs.
    #[arg(long, default_value = "viridis")]
    pub colormap: Colormap,
    /// Colormap of the Laplacian PNGs.
    #[arg(long, default_value = "inferno")]
    pub laplacian_colormap: Colormap,
    /// Also write float32 .npy arrays of the field and its Laplacian.
    #[arg(long)]
    pub npy: bool,
    /// Draw a colorbar with values beside each PNG, as the app's exports do.
    #[arg(long)]
    pub colorbar: bool,
    /// Output folder (created if missing). A run holds it while it runs: no other run, state,
    /// video or export writes there meanwhile.
    #[arg(long, default_value = "heatlab-run")]
    pub out: PathBuf,
    /// Accept a coefficient above 0.25 (the field will blow up).
    #[arg(long)]
    pub allow_unstable: bool,
    /// Steps per timed chunk (one row of timings.csv each).
    #[arg(long, default_value_t = 1000)]
    pub chunk: i64,
    /// Write into a folder that holds another run's files, removing those files first
    /// (only heatlab's: run.json, timings.csv, field_*/laplacian_* frames).
    #[arg(long)]
    pub overwrite: bool,
    /// Record a video of the run: FILE.gif (encoded by heatlab) or FILE.mp4 (H.264, needs
    /// ffmpeg on PATH). A frame at the first step and at every multiple of --video-every.
    #[arg(long, value_name = "FILE")]
    pub video: Option<PathBuf>,
    /// A video frame every this many steps.
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub video_every: i64,
    /// Frames per second of the video.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub video_fps: u32,
    /// What the video shows: field, laplacian or both (side by side).
    #[arg(long, default_value = "field")]
    pub video_layer: VideoLayers,
    /// Fields larger than this many cells on a side are reduced (block means) in the video.
    #[arg(long, value_name = "PIXELS", default_value_t = 512)]
    pub video_size: usize,
    /// A colorbar beside each layer of the video.
    #[arg(long)]
    pub video_colorbar: bool,
    /// "step N" written below each video frame (a heat problem's with its simulated time:
    /// "t = 12.500 s · step N").
    #[arg(long)]
    pub video_step_counter: bool,
    /// Check the run against the CPU reference every this many steps (0: never): a background
    /// CPU thread steps each window from the run's own field and compares bit for bit; the
    /// run waits for it when it falls behind. The results go into run.json.
    #[arg(long, default_value_t = 0)]
    pub check_every: i64,
    /// The GPU kernel that steps (needs CUDA unless auto): auto (the fastest exact one for the
    /// size), tutorial (the notebook's racing kernel, Dirichlet only), shared, jacobi-rows,
    /// jacobi-vec4-rows8/16, temporal-k4/k8-rows16/32/64/128. run.json records it.
    #[arg(long, default_value = "auto")]
    pub kernel: KernelChoice,
}

/// Steps a run takes unless told otherwise.
const DEFAULT_STEPS: i64 = 1000;

/// A run's parameters after every check.
#[derive(Debug, Clone, serde::Serialize)]
struct RunPlan {
    /// The jagged field's parameters (and the size of any field); run.json records them
    /// through [`RecordedPlan`], only where they were used.
    #[serde(skip)]
    field: JaggedParams,
    /// What the run starts from.
    start: StartFrom,
    /// The step it starts at (a resumed state's).
    start_step: u64,
    /// Where the final state goes.
    save_state: Option<PathBuf>,
    /// The video to record.
    video: Option<VideoPlan>,
    steps: u64,
    /// The tutorial's plate's coefficient and boundary (recorded as `field` is).
    #[serde(skip)]
    step: StepParams,
    backend_choice: BackendChoice,
    save_every: u64,
    chunk: u64,
    colormap: Colormap,
    laplacian_colormap: Colormap,
    npy: bool,
    colorbar: bool,
    out: PathBuf,
    check_every: u64,
    kernel: KernelChoice,
}

/// `--kernel`, refused before any work when it cannot step this run.
fn checked_kernel(args: &RunArgs) -> Result<KernelChoice, HeatlabError> {
    let kernel = args.kernel;
    if kernel == KernelChoice::Auto {
        return Ok(kernel);
    }
    if kernel == KernelChoice::User {
        return Err(HeatlabError::InvalidInput(
            "--kernel user: user kernels are compiled and validated in the app's Kernel lab".into(),
        ));
    }
    if args.backend == BackendChoice::Cpu {
        return Err(HeatlabError::InvalidInput(format!(
            "--kernel {kernel} is a GPU kernel; it cannot be used with --backend cpu"
        )));
    }
    // With --initial or --resume the field's size (and a resumed run's boundary) are known only
    // once the file is read; the backend refuses then, before the first step.
    let size_known = args.initial.is_none() && args.resume.is_none();
    let reason = if size_known {
        kernel.unsupported_reason(args.size, args.boundary.unwrap_or_default())
    } else {
        None
    };
    if let Some(reason) = reason {
        return Err(HeatlabError::InvalidInput(format!(
            "--kernel {kernel} cannot run this: {reason}"
        )));
    }
    Ok(kernel)
}

/// The first option given that only the tutorial's plate uses.
fn plate_option(args: &RunArgs) -> Option<&'static str> {
    [
        (args.coeff.is_some(), "--coeff"),
        (args.boundary.is_some(), "--boundary"),
        (args.allow_unstable, "--allow-unstable"),
    ]
    .into_iter()
    .find_map(|(given, name)| given.then_some(name))
}

fn duration_refusal() -> HeatlabError {
    HeatlabError::InvalidInput(
        "--duration is for heat problems (--scenario, or --resume of a state with one); give \
         --steps for the tutorial's plate"
            .into(),
    )
}

fn non_negative(name: &str, value: i64) -> Result<u64, HeatlabError> {
    u64::try_from(value)
        .map_err(|_| HeatlabError::InvalidInput(format!("{name} must be 0 or more, got {value}")))
}

impl RunPlan {
    fn from_args(args: &RunArgs) -> Result<Self, HeatlabError> {
        let field = JaggedParams {
            size: args.size,
            seed: args.seed,
            exponent: args.exponent,
            cutoff: args.cutoff,
            percentile: args.percentile,
        };
        field.validate()?;
        let step = StepParams {
            coeff: args.coeff.unwrap_or(StepParams::default().coeff),
            boundary: args.boundary.unwrap_or_default(),
        };
        step.validate(args.allow_unstable)?;
        let start = match (&args.initial, &args.resume) {
            _ if args.scenario.is_some() => StartFrom::Scenario {
                file: args.scenario.clone().unwrap_or_default(),
            },
            (Some(file), _) => StartFrom::Initial {
                file: file.clone(),
                range: args.initial_range,
            },
            (None, Some(file)) => StartFrom::Resume { file: file.clone() },
            (None, None) => StartFrom::Jagged,
        };
        if args.duration.is_some() && args.scenario.is_none() && args.resume.is_none() {
            return Err(duration_refusal());
        }
        let chunk = non_negative("--chunk", args.chunk)?;
        if chunk == 0 {
            return Err(HeatlabError::InvalidInput(
                "--chunk must be at least 1".into(),
            ));
        }
        Ok(Self {
            field,
            start,
            start_step: 0,
            save_state: args.save_state.clone(),
            video: match &args.video {
                Some(path) => Some(VideoPlan::new(
                    path.clone(),
                    args.video_every,
                    args.video_fps,
                    args.video_layer,
                    args.video_colorbar,
                    args.video_step_counter,
                    args.video_size,
                )?),
                None => None,
            },
            steps: non_negative("--steps", args.steps.unwrap_or(DEFAULT_STEPS))?,
            step,
            backend_choice: args.backend,
            save_every: non_negative("--save-every", args.save_every)?,
            chunk,
            colormap: args.colormap,
            laplacian_colormap: args.laplacian_colormap,
            npy: args.npy,
            colorbar: args.colorbar,
            out: args.out.clone(),
            check_every: non_negative("--check-every", args.check_every)?,
            kernel: checked_kernel(args)?,
        })
    }

    /// Takes the size and the starting step from a field read from a file, and a resumed
    /// state's coefficient and boundary where the command line does not give them.
    fn start_at(&mut self, args: &RunArgs, start: &Start) -> Result<(), HeatlabError> {
        self.field.size = start.initial.size();
        self.start_step = start.step;
        if let Some(saved) = &start.problem {
            if let Some(option) = plate_option(args) {
                return Err(HeatlabError::InvalidInput(format!(
                    "{option} is for the tutorial's plate; this state holds a heat problem, \
                     whose materials and sides set how heat moves"
                )));
            }
            let problem = &saved.problem;
            let scenario_duration = start.duration.filter(|_| args.steps.is_none());
            if let Some(seconds) = args.duration.or(scenario_duration) {
                self.steps = scenario::steps_for(problem, seconds)?;
            }
            if let Some(every) = start.output_every.filter(|_| args.save_every == 0) {
                self.save_every = scenario::steps_for(problem, every)?.max(1);
            }
        } else if args.duration.is_some() {
            return Err(duration_refusal());
        }
        if start.step.checked_add(self.steps).is_none() {
            return Err(HeatlabError::InvalidInput(format!(
                "the state stands at step {}: {} more steps would pass the largest step count \
                 heatlab can keep ({}); resume it with --steps {} at most",
                start.step,
                self.steps,
                u64::MAX,
                u64::MAX - start.step
            )));
        }
        if let Some(saved) = start.saved_params {
            self.step = StepParams {
                coeff: args.coeff.unwrap_or(saved.coeff),
                boundary: args.boundary.unwrap_or(saved.boundary),
            };
            // A saved state above 0.25 was allowed when it was made.
            self.step
                .validate(args.allow_unstable || args.coeff.is_none())?;
        }
        Ok(())
    }

    /// The step the run ends at.
    fn end_step(&self) -> u64 {
        self.start_step.saturating_add(self.steps)
    }

    /// The run's steps and when its outputs are due, for the engine's run loop.
    fn schedule(&self) -> RunSchedule {
        RunSchedule {
            start_step: self.start_step,
            end_step: self.end_step(),
            chunk: self.chunk,
            save_every: self.save_every,
            video_every: self.video.as_ref().map_or(0, |v| v.every),
            check_every: self.check_every,
        }
    }
}

/// A run's parameters as run.json records them: only what the run used.
#[derive(Debug, serde::Serialize)]
struct RecordedPlan {
    /// The field's size.
    size: heatlab_engine::grid::GridSize,
    /// The jagged field's parameters, when the run generated it.
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<JaggedParams>,
    /// The coefficient and boundary, when the run stepped the tutorial's plate (a heat
    /// problem's materials and sides are in `problem`).
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<StepParams>,
    #[serde(flatten)]
    plan: RunPlan,
}

impl RecordedPlan {
    /// What `plan` used, `with_problem` when it stepped a heat problem.
    fn of(plan: &RunPlan, with_problem: bool) -> Self {
        Self {
            size: plan.field.size,
            field: (plan.start == StartFrom::Jagged).then_some(plan.field),
            step: (!with_problem && !matches!(plan.start, StartFrom::Scenario { .. }))
                .then_some(plan.step),
            plan: plan.clone(),
        }
    }
}

fn progress_bar(from: u64, to: u64) -> ProgressBar {
    let bar = ProgressBar::new(to);
    bar.set_position(from);
    let style = ProgressStyle::with_template(
        "{spinner} {msg} [{bar:40}] {pos}/{len} steps ({per_sec}, eta {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Runs `heatlab run`.
pub fn run(args: &RunArgs, interrupt: &Interrupt) -> anyhow::Result<()> {
    let mut plan = RunPlan::from_args(args)?;
    // Before anything is written: a live run's folder, a state on the run's own files.
    folder::ensure_not_live(&plan.out)?;
    if let Some(path) = &plan.save_state {
        let video = plan.video.as_ref().map(|video| video.path.as_path());
        folder::check_state_path(path, &plan.out, video)?;
        export::atomic::check_output(path)?;
    }
    let video = plan
        .video
        .as_ref()
        .map(|video| RunVideo::start(video, &plan))
        .transpose()?;
    // Reading a FIFO with no writer blocks: a signal meanwhile stops at once.
    let start = interrupt.at_once_while(|| start::load(&plan.start))?;
    if let Some(start) = &start {
        plan.start_at(args, start)?;
    }
    // Held to the end, so that a second run on this folder is refused.
    let _claim = folder::claim(&plan.out)?;
    let previous = previous_run_files(&plan.out);
    if !previous.is_empty() && !args.overwrite {
        return Err(reuse_refusal(&plan.out, &previous).into());
    }
    // Opening the backend belongs to checking the input: `--backend cuda` without a GPU is
    // refused before anything is written.
    // A fixed kernel needs the GPU: it is not silently replaced by the CPU.
    let backend_choice = match (plan.backend_choice, plan.kernel) {
        (BackendChoice::Auto, kernel) if kernel != KernelChoice::Auto => BackendChoice::Cuda,
        (choice, _) => choice,
    };
    let (mut backend, fallback) = create_backend(backend_choice).map_err(|error| {
        if backend_choice == plan.backend_choice {
            anyhow::Error::from(error)
        } else {
            anyhow::anyhow!("--kernel {} steps on the GPU: {error}", plan.kernel)
        }
    })?;
    if let Some(cuda) = backend.cuda_mut() {
        cuda.set_kernel_choice(plan.kernel)?;
    }
    let fallback_note = fallback.map(|fallback| fallback.to_string());
    if let Some(note_text) = &fallback_note {
        note(note_text);
    }
    remove_previous_run(&plan.out, &previous)?;
    export::ensure_writable_dir(&plan.out)?;
    // The record must have its place before the run, not be found missing after it.
    for record_file in [record::RUN_JSON, record::TIMINGS_CSV] {
        export::atomic::check_output(&plan.out.join(record_file))?;
    }

    let mut record = RunRecord::new(backend.as_ref(), fallback_note, &plan.out);
    let execution = std::panic::catch_unwind(AssertUnwindSafe(|| {
        execute(&plan, backend, start, video, &mut record, interrupt)
    }));
    let ending = match (execution, interrupt.requested()) {
        (Ok(Ok(ending)), _) => ending,
        // A stop was asked for: what failed after it (an ffmpeg stopped for not finishing)
        // is said, and the run counts as stopped by the signal.
        (Ok(Err(error)), Some(signal)) => {
            note(&format!("after {signal}: {error:#}"));
            Ending::Interrupted(signal)
        }
        (Ok(Err(error)), None) => Ending::Failed(error),
        (Err(panic), _) => Ending::Failed(anyhow::anyhow!(
            "internal error (a panic): {}",
            panic_message(panic.as_ref())
        )),
    };
    record.finish(&plan, ending)
}

/// Host memory a run needs beside the field's generation: copies of the field held by the
/// simulation and its backend (initial, current, scratch, last good, downloaded) and a frame's
/// Laplacian and pixels.
const HOST_FIELD_COPIES: usize = 7;

/// Generates the field, starts the simulation, saves the first frame and steps to the end.
fn execute(
    plan: &RunPlan,
    mut backend: Box<dyn Backend>,
    start: Option<Start>,
    mut video: Option<RunVideo>,
    record: &mut RunRecord,
    interrupt: &Interrupt,
) -> anyhow::Result<Ending> {
    let uniform = start.as_ref().is_none_or(|s| s.problem.is_none());
    if let Some(warning) = Stability::of(plan.step.coeff).warning().filter(|_| uniform) {
        note(&format!("note: {warning}"));
    }
    heatlab_engine::memory::ensure_host_memory(
        &format!(
            "{} run ({HOST_FIELD_COPIES} copies of the field)",
            plan.field.size
        ),
        HOST_FIELD_COPIES.saturating_mul(plan.field.size.bytes()),
    )?;
    let start = match start {
        Some(start) => start,
        None => Start::generated(
            generate_field(plan, backend.as_mut(), record)?,
            FieldOrigin::Jagged(plan.field),
        ),
    };
    if let Some(signal) = interrupt.requested() {
        return Ok(Ending::Interrupted(signal));
    }
    let origin = start.origin.clone();
    // The GPU chooses its kernel for the field's size when the field is uploaded.
    let mut simulation = start.into_simulation(backend, plan.step)?;
    record.steps_completed = simulation.step_count();
    if plan.check_every > 0 {
        simulation.set_agreement_check(Some(WindowPolicy::Every(plan.check_every)));
    }
    record.method = simulation.backend().step_method();
    record.problem = scenario::ProblemRecord::of(&simulation, &origin.to_string());
    if let Some(problem) = &record.problem {
        note(&problem.start_line());
    }
    let physics = match &record.problem {
        Some(_) => "materials and sides as above".to_string(),
        None => format!("coeff {}, {} boundary", plan.step.coeff, plan.step.boundary),
    };
    note(&format!(
        "{} field, {} steps, {physics} on {} ({})",
        plan.field.size, plan.steps, record.device, record.method
    ));
    let bar = progress_bar(plan.start_step, plan.end_step());
    bar.set_message(record.backend.clone());
    let mut run = RunLoop::new(FieldChecks::EveryAdvance, true);
    run.restart(&mut simulation)?;
    let mut driver = CliDriver {
        plan,
        record,
        interrupt,
        bar: &bar,
        video: &mut video,
    };
    let ending = run_to_end(&mut run, &mut simulation, &mut driver);
    bar.finish_and_clear();
    if let Some(problem) = record.problem.as_mut() {
        problem.simulated_seconds = simulation.simulated_seconds().unwrap_or(0.0);
        problem.ledger = run.ledger().clone();
    }
    let ending = settle_agreement(&mut simulation, record, ending);
    let ending = match video {
        Some(video) => keep_video(video, record, ending),
        None => ending,
    };
    match &plan.save_state {
        Some(path) => keep_state(path, &mut simulation, &origin, record, ending),
        None => ending,
    }
}

/// Generates the jagged field, timing it, and warns when it is zero everywhere.
/// The field is generated where the backend runs (on the GPU with cuFFT when it can).
fn generate_field(
    plan: &RunPlan,
    backend: &mut dyn Backend,
    record: &mut RunRecord,
) -> anyhow::Result<Grid> {
    let generating = ProgressBar::new_spinner();
    generating.set_message(format!("generating the {} jagged field", plan.field.size));
    let generated = generate_on(backend, &plan.field, &|_| generating.tick());
    generating.finish_and_clear();
    let (field, generation) = generated?;
    if let Some(why) = generation.fallback() {
        note(&format!("note: the field is generated on the CPU: {why}"));
    }
    record.generation_seconds = generation.wall.as_secs_f64();
    record.generated_on = Some(generation.place.to_string());
    if let Some((row, col)) = field.first_non_finite() {
        return Err(HeatlabError::InvalidInput(format!(
            "the generated field is not finite (first at row {row}, column {col}): exponent {} \
             makes values beyond float32's range; try an exponent nearer 0",
            plan.field.exponent
        ))
        .into());
    }
    if field.as_slice().iter().all(|&value| value == 0.0) {
        note(&format!(
            "warning: the generated field is zero everywhere (exponent {}, cutoff {}, \
             percentile {}): there is nothing to diffuse",
            plan.field.exponent, plan.field.cutoff, plan.field.percentile
        ));
    }
    Ok(field)
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
