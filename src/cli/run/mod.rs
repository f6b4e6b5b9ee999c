//! `heatlab run`: the headless diffusion job.
//!
//! Once its output folder is ready, every way a run ends (completed, interrupted by a signal,
//! non-finite values, a failed export, out of memory, even a panic) leaves `run.json` with its
//! status and reason and `timings.csv` with every chunk timed so far, where there is room to
//! write them; no temporary file stays behind.

mod folder;
mod record;
mod scenario;
mod start;
mod video;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::interrupt::Interrupt;
use super::output::note;
use crate::compute::{
    create_backend, Backend, BackendChoice, Boundary, KernelChoice, Layer, StepParams,
};
use crate::error::HeatlabError;
use crate::export::{self, FrameFiles, LayerFrame, PngStyle, TimingRecord};
use crate::field::{JaggedParams, DEFAULT_SEED};
use crate::grid::{Grid, GridSize};
use crate::render::{Colormap, RangeMode};
use crate::sim::agreement::WindowPolicy;
use crate::sim::generate::generate_on;
use crate::sim::{Simulation, Stability};
use folder::{previous_run_files, remove_previous_run, reuse_refusal};
use record::{AgreementRecord, Ending, RunRecord};
use start::{LoadedStart, StartFrom};
use video::{RunVideo, VideoPlan};

use crate::export::VideoLayers;
use crate::import::LuminanceRange;
use crate::state::FieldOrigin;

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
    /// a PNG or JPEG image whose luminance is mapped onto --initial-range (the field's
    /// parameters --size, --seed, ... are then not used).
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub initial: Option<PathBuf>,
    /// Run a heat problem written as a scenario file (TOML: materials, heaters, held parts,
    /// the four sides, the time step; see `heatlab scenario check`). Its duration and output
    /// interval replace --steps and --save-every unless --duration or --save-every is given.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["initial", "resume"])]
    pub scenario: Option<PathBuf>,
    /// Simulated seconds to run a heat problem (a scenario, or a resumed state with one);
    /// replaces --steps.
    #[arg(long, value_name = "SECONDS")]
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
    /// given, change them from now on). --steps more steps are taken.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Save the state the run ends in (completed, interrupted or stopped at the last finite
    /// step) to this file, to continue it later with --resume.
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
    /// Output folder (created if missing).
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
    /// "step N" written below each video frame.
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
    fn start_at(&mut self, args: &RunArgs, start: &LoadedStart) -> Result<(), HeatlabError> {
        self.field.size = start.initial.size();
        self.start_step = start.step;
        if let Some(saved) = &start.problem {
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

    /// The step at which the next chunk should stop: a save point, a chunk's end, or the last step.
    fn next_stop(&self, step: u64) -> u64 {
        let mut stop = (step + self.chunk).min(self.end_step());
        let video_every = self.video.as_ref().map_or(0, |v| v.every);
        for every in [self.save_every, self.check_every, video_every] {
            if let Some(blocks) = step.checked_div(every) {
                stop = stop.min((blocks + 1) * every);
            }
        }
        stop
    }

    fn is_save_point(&self, step: u64) -> bool {
        step == self.start_step
            || step == self.end_step()
            || (self.save_every > 0 && step % self.save_every == 0)
    }
}

/// Writes the field and Laplacian frames of one step; returns the paths written.
fn save_frame(
    plan: &RunPlan,
    step: u64,
    field: &Grid,
    laplacian: &Grid,
) -> crate::Result<Vec<PathBuf>> {
    let layer = |layer, grid, colormap, mode| LayerFrame {
        layer,
        grid,
        style: PngStyle::resolved(colormap, mode, grid, plan.colorbar),
    };
    let layers = [
        layer(Layer::Field, field, plan.colormap, RangeMode::MinMax),
        layer(
            Layer::Laplacian,
            laplacian,
            plan.laplacian_colormap,
            RangeMode::LAPLACIAN_DEFAULT,
        ),
    ];
    let files = FrameFiles {
        png: true,
        npy: plan.npy,
    };
    export::write_frame(&plan.out, step, &layers, files)
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
    if let Some(path) = &plan.save_state {
        export::atomic::check_output(path)?;
    }
    let video = plan.video.as_ref().map(RunVideo::start).transpose()?;
    let start = start::load(&plan.start)?;
    if let Some(start) = &start {
        plan.start_at(args, start)?;
    }
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

    let mut record = RunRecord::new(backend.as_ref(), fallback_note);
    let execution = std::panic::catch_unwind(AssertUnwindSafe(|| {
        execute(&plan, backend, start, video, &mut record, interrupt)
    }));
    let ending = match execution {
        Ok(Ok(ending)) => ending,
        Ok(Err(error)) => Ending::Failed(error),
        Err(panic) => Ending::Failed(anyhow::anyhow!(
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

/// Seconds one advance call aims at, so that a stop asked for in the middle of a long chunk
/// comes within about this long.
const PIECE_SECONDS: f64 = 0.25;

/// Generates the field, starts the simulation, saves the first frame and steps to the end.
fn execute(
    plan: &RunPlan,
    mut backend: Box<dyn Backend>,
    start: Option<LoadedStart>,
    mut video: Option<RunVideo>,
    record: &mut RunRecord,
    interrupt: &Interrupt,
) -> anyhow::Result<Ending> {
    let uniform = start.as_ref().is_none_or(|s| s.problem.is_none());
    if let Some(warning) = Stability::of(plan.step.coeff).warning().filter(|_| uniform) {
        note(&format!("note: {warning}"));
    }
    crate::memory::ensure_host_memory(
        &format!(
            "{} run ({HOST_FIELD_COPIES} copies of the field)",
            plan.field.size
        ),
        HOST_FIELD_COPIES.saturating_mul(plan.field.size.bytes()),
    )?;
    let start = match start {
        Some(start) => start,
        None => LoadedStart::fresh(
            generate_field(plan, backend.as_mut(), record)?,
            FieldOrigin::Jagged(plan.field),
        ),
    };
    if let Some(signal) = interrupt.requested() {
        return Ok(Ending::Interrupted(signal));
    }
    let origin = start.origin.clone();
    // The GPU chooses its kernel for the field's size when the field is uploaded.
    let mut simulation = start::simulation(plan, backend, start)?;
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
    let laplacian = simulation.laplacian()?;
    let first = simulation.field()?;
    record
        .files
        .extend(save_frame(plan, plan.start_step, &first, &laplacian)?);
    drop(laplacian);
    if let Some(video) = video.as_mut() {
        video.add(plan, plan.start_step, &first, &mut simulation)?;
    }
    drop(first);
    let bar = progress_bar(plan.start_step, plan.end_step());
    bar.set_message(record.backend.clone());
    let ending = step_loop(plan, &mut simulation, record, interrupt, &bar, &mut video);
    bar.finish_and_clear();
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

/// Finishes the video, however the run ended (a stopped run leaves a shorter video). A failure
/// fails a completed run; after another ending it is noted and the ending kept.
fn keep_video(
    video: RunVideo,
    record: &mut RunRecord,
    ending: anyhow::Result<Ending>,
) -> anyhow::Result<Ending> {
    match video.finish() {
        Ok((path, line)) => {
            note(&line);
            record.files.push(path);
            ending
        }
        Err(error) => match ending {
            Ok(Ending::Completed) => Err(anyhow::Error::new(error).context("finishing the video")),
            other => {
                note(&format!("the video could not be finished: {error}"));
                other
            }
        },
    }
}

/// Saves the state the run ended in, however it ended. A failure fails a completed run; after
/// another ending it is noted and the ending kept.
fn keep_state(
    path: &std::path::Path,
    simulation: &mut Simulation,
    origin: &FieldOrigin,
    record: &mut RunRecord,
    ending: anyhow::Result<Ending>,
) -> anyhow::Result<Ending> {
    match start::save_state(path, simulation, origin) {
        Ok(()) => {
            record.files.push(path.to_path_buf());
            ending
        }
        Err(error) => match ending {
            Ok(Ending::Completed) => Err(anyhow::Error::new(error).context("saving the state")),
            other => {
                note(&format!("the state could not be saved: {error}"));
                other
            }
        },
    }
}

/// Waits for the agreement checks (checking the last, partial window of a completed run) and
/// keeps their outcomes in the record.
fn settle_agreement(
    simulation: &mut Simulation,
    record: &mut RunRecord,
    ending: anyhow::Result<Ending>,
) -> anyhow::Result<Ending> {
    if simulation.agreement().is_none() {
        return ending;
    }
    let settled = match &ending {
        Ok(Ending::Completed) => simulation.finish_agreement(),
        _ => {
            simulation.cancel_agreement();
            Ok(())
        }
    };
    if let Some(watch) = simulation.agreement() {
        record.agreement = Some(AgreementRecord::of(watch));
    }
    settled?;
    ending
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

/// Steps chunk by chunk to the last step, saving frames at the save points; stops early on a
/// signal or a non-finite field. Errors (a failed export) come back as they are.
fn step_loop(
    plan: &RunPlan,
    simulation: &mut Simulation,
    record: &mut RunRecord,
    interrupt: &Interrupt,
    bar: &ProgressBar,
    video: &mut Option<RunVideo>,
) -> anyhow::Result<Ending> {
    let mut pacer = Pacer::default();
    loop {
        let step = simulation.step_count();
        if step >= plan.end_step() {
            return Ok(Ending::Completed);
        }
        if let Some(signal) = interrupt.requested() {
            return Ok(Ending::Interrupted(signal));
        }
        let stop = plan.next_stop(step);
        let chunk = advance_chunk(plan, simulation, stop, &mut pacer, interrupt, record);
        bar.set_position(simulation.step_count());
        match chunk {
            Ok(Some(field)) => {
                if plan.is_save_point(stop) {
                    let laplacian = simulation.laplacian()?;
                    record
                        .files
                        .extend(save_frame(plan, stop, &field, &laplacian)?);
                }
                if let Some(video) = video.as_mut().filter(|v| v.is_due(stop)) {
                    video.add(plan, stop, &field, simulation)?;
                    bar.set_message(format!(
                        "{}, {} video frames",
                        record.backend,
                        video.frames()
                    ));
                }
            }
            Ok(None) => {}
            Err(error @ HeatlabError::NonFinite { .. }) => {
                let good_step = simulation.step_count();
                let field = simulation.field()?;
                let laplacian = simulation.laplacian()?;
                record
                    .files
                    .extend(save_frame(plan, good_step, &field, &laplacian)?);
                return Ok(Ending::NonFinite(error));
            }
            Err(other) => return Err(other.into()),
        }
    }
}

/// Advances to `stop` in pieces of about [`PIECE_SECONDS`], checking for a signal between
/// them, and records the chunk as one timing row. Returns the field at `stop`, or `None`
/// when a signal stopped the chunk early.
fn advance_chunk(
    plan: &RunPlan,
    simulation: &mut Simulation,
    stop: u64,
    pacer: &mut Pacer,
    interrupt: &Interrupt,
    record: &mut RunRecord,
) -> Result<Option<Grid>, HeatlabError> {
    let start = simulation.step_count();
    let first_timing = simulation.timings().len();
    let mut energy = scenario::EnergyBook::start(simulation)?;
    let mut outcome = Ok(None);
    while simulation.step_count() < stop && interrupt.requested().is_none() {
        let piece = pacer.next_piece(stop - simulation.step_count());
        let began = Instant::now();
        match simulation.advance_checked(piece) {
            Ok((_, field)) => {
                pacer.learn(piece, began.elapsed());
                if let Some(book) = energy.as_mut() {
                    book.piece(simulation, &field)?;
                }
                if simulation.step_count() == stop {
                    outcome = Ok(Some(field));
                }
            }
            Err(error) => {
                outcome = Err(error);
                break;
            }
        }
    }
    if let Some(book) = energy {
        book.finish(simulation, record);
    }
    let pieces = &simulation.timings()[first_timing..];
    record.timings.extend(merge_timings(plan, start, pieces));
    record.steps_completed = simulation.step_count();
    outcome
}

/// One timing row for the pieces of one chunk (none when no piece ran).
fn merge_timings(plan: &RunPlan, start: u64, pieces: &[TimingRecord]) -> Option<TimingRecord> {
    let first = pieces.first()?;
    let steps = pieces.iter().map(|t| t.steps).sum();
    let seconds = pieces.iter().fold(0.0, |sum, t| sum + t.seconds);
    Some(TimingRecord::diffusion(
        start,
        steps,
        &first.backend,
        &first.method,
        plan.field.size,
        seconds,
    ))
}

/// Sizes the advance calls within a chunk from the speed of the last one.
#[derive(Debug, Default)]
struct Pacer {
    seconds_per_step: Option<f64>,
}

impl Pacer {
    /// Steps for the next call: one step until the speed is known, then about
    /// [`PIECE_SECONDS`] worth, at most `remaining`.
    fn next_piece(&self, remaining: u64) -> u64 {
        match self.seconds_per_step {
            Some(per_step) if per_step > 0.0 => {
                ((PIECE_SECONDS / per_step) as u64).clamp(1, remaining.max(1))
            }
            Some(_) => remaining,
            None => remaining.min(1),
        }
    }

    fn learn(&mut self, steps: u64, elapsed: Duration) {
        if steps > 0 {
            self.seconds_per_step = Some(elapsed.as_secs_f64() / steps as f64);
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_aim_at_a_quarter_second() {
        let mut pacer = Pacer::default();
        assert_eq!(pacer.next_piece(1000), 1);
        pacer.learn(1, Duration::from_millis(10));
        assert_eq!(pacer.next_piece(1000), 25);
        pacer.learn(25, Duration::from_micros(250));
        assert_eq!(pacer.next_piece(1000), 1000);
    }
}
