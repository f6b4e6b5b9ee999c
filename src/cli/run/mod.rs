//! `heatlab run`: the headless diffusion job.
//!
//! Once its output folder is ready, every way a run ends (completed, interrupted by a signal,
//! non-finite values, a failed export, out of memory, even a panic) leaves `run.json` with its
//! status and reason and `timings.csv` with every chunk timed so far, where there is room to
//! write them; no temporary file stays behind.

mod args;
mod backend;
mod driver;
mod ending;
mod folder;
pub mod launched;
#[cfg(feature = "distributed")]
pub mod ranks;
mod record;
mod scenario;
mod solve;
mod start;
mod video;

pub use args::RunArgs;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};

use super::interrupt::Interrupt;
use super::output::note;
use args::checked_kernel;
use backend::{open_backend, open_before_reading, open_here};
pub use backend::{OpenBackend, Opened};
use driver::{run_to_end, CliDriver};
use ending::{keep_state, keep_video, settle_agreement};
use folder::{previous_run_files, remove_previous_run, reuse_refusal};
use heatlab_engine::compute::{Backend, BackendChoice, KernelChoice, StepParams};
use heatlab_engine::distributed::OverlapChoice;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export;
use heatlab_engine::export::ShownLayers;
use heatlab_engine::field::JaggedParams;
use heatlab_engine::grid::{Grid, GridSize};
use heatlab_engine::render::Colormap;
use heatlab_engine::session::run::{FieldChecks, RunLoop, RunSchedule};
use heatlab_engine::session::start::Start;
use heatlab_engine::sim::agreement::WindowPolicy;
use heatlab_engine::sim::generate::generate_on;
use heatlab_engine::sim::Stability;
use heatlab_engine::state::FieldOrigin;
use record::{Ending, LastChunkRecord, RunRecord};
use start::StartFrom;
use video::{RunVideo, VideoPlan};

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
    /// PNG frames (all but `--no-png`).
    png: bool,
    /// The frames' layers.
    frame_layers: ShownLayers,
    colorbar: bool,
    out: PathBuf,
    check_every: u64,
    kernel: KernelChoice,
    /// Marching, the steady state or implicit steps.
    solve: solve::SolvePlan,
    /// The size of the `--initial` array when every rank reads its own rows of it.
    #[serde(skip)]
    initial_where_held: Option<GridSize>,
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
        let solve = solve::SolvePlan::from_args(args)?;
        if args.scenario.is_none() && args.resume.is_none() {
            // A field or an image holds no heat problem; a saved state is checked once read.
            solve.check_has_problem(false)?;
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
            png: !args.no_png,
            frame_layers: args.frame_layers,
            colorbar: args.colorbar,
            out: args.out.clone(),
            check_every: non_negative("--check-every", args.check_every)?,
            kernel: checked_kernel(args)?,
            solve,
            initial_where_held: None,
        })
    }

    /// Takes the size and the starting step from a field read from a file, and a resumed
    /// state's coefficient and boundary where the command line does not give them.
    fn start_at(&mut self, args: &RunArgs, start: &Start) -> Result<(), HeatlabError> {
        self.field.size = start.initial.size();
        self.start_step = start.step;
        self.solve.check_has_problem(start.problem.is_some())?;
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
                self.steps = self.solve.steps_for(problem, seconds)?;
            }
            if let Some(every) = start.output_every.filter(|_| args.save_every == 0) {
                self.save_every = self.solve.steps_for(problem, every)?.max(1);
            }
            if let solve::SolvePlan::Steady(_) = self.solve {
                // One solve, no steps: the frames hold the steady field.
                self.steps = 0;
                self.save_every = 0;
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

/// Runs `heatlab run` on one rank, or as one of the ranks mpirun started.
pub fn run_launched(args: &RunArgs) -> anyhow::Result<()> {
    if let Some(launched) = launched::Launched::from_env().filter(|l| l.ranks > 1) {
        #[cfg(feature = "distributed")]
        ranks::run(args, launched);
        #[cfg(not(feature = "distributed"))]
        return launched.refuse_undistributed();
    }
    refuse_rank_options(args)?;
    run(args, &Interrupt::install()?)
}

/// Refuses the options that only a run over ranks reads (they would do nothing here).
fn refuse_rank_options(args: &RunArgs) -> anyhow::Result<()> {
    let given = [
        (args.halo_depth.is_some(), "--halo-depth"),
        (args.host_halos, "--host-halos"),
        (args.overlap != OverlapChoice::Auto, "--overlap"),
    ];
    let names: Vec<&str> = given
        .iter()
        .filter_map(|&(given, name)| given.then_some(name))
        .collect();
    match names.as_slice() {
        [] => Ok(()),
        [name] => anyhow::bail!("{name} is for a run over ranks (started by mpirun -n 2 or more)"),
        names => anyhow::bail!(
            "{} are for a run over ranks (started by mpirun -n 2 or more)",
            names.join(" and ")
        ),
    }
}

/// Runs `heatlab run`.
pub fn run(args: &RunArgs, interrupt: &Interrupt) -> anyhow::Result<()> {
    run_on(args, interrupt, &mut open_here, None)
}

/// Runs `heatlab run` on the backend `open` gives (this process's, or a field split over
/// ranks), keeping its record after every chunk in `last_chunk` when given (rank 0's last
/// words, written if a signal finds it stranded).
fn run_on(
    args: &RunArgs,
    interrupt: &Interrupt,
    open: &mut OpenBackend<'_>,
    last_chunk: Option<&LastChunkRecord>,
) -> anyhow::Result<()> {
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
    // A record kept after every chunk is rank 0's, of a run over ranks.
    let over_ranks = last_chunk.is_some();
    let opened = open_before_reading(open, &plan, over_ranks)?;
    let start = start::read(&mut plan, over_ranks, interrupt)?;
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
    let (backend, fallback_note) = match opened {
        Some(opened) => opened,
        None => open_backend(open, &plan, plan.field.size)?,
    };
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
    if let Some(last_chunk) = last_chunk {
        last_chunk.keep(&plan, &record);
    }
    let execution = std::panic::catch_unwind(AssertUnwindSafe(|| {
        execute(
            &plan,
            backend,
            start,
            video,
            &mut record,
            (interrupt, last_chunk),
        )
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
    if !interrupt.take_back_last_words() {
        // The last words are being said for a stranded rank 0: they write the record and end
        // the process.
        loop {
            std::thread::park();
        }
    }
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
    (interrupt, last_chunk): (&Interrupt, Option<&LastChunkRecord>),
) -> anyhow::Result<Ending> {
    let uniform = start.as_ref().is_none_or(|s| s.problem.is_none());
    if let Some(warning) = Stability::of(plan.step.coeff).warning().filter(|_| uniform) {
        note(&format!("note: {warning}"));
    }
    start::ensure_host_memory(plan, last_chunk.is_some())?;
    let start = match (start, plan.initial_where_held) {
        (Some(start), _) => Some(start),
        (None, Some(_)) => None,
        (None, None) => Some(Start::generated(
            generate_field(plan, backend.as_mut(), record)?,
            FieldOrigin::Jagged(plan.field),
        )),
    };
    if let Some(signal) = interrupt.requested() {
        return Ok(Ending::Interrupted(signal));
    }
    // The GPU chooses its kernel for the field's size when the field is uploaded.
    let (mut simulation, origin) = match start {
        Some(start) => {
            let origin = start.origin.clone();
            (start.into_simulation(backend, plan.step)?, origin)
        }
        None => start::read_where_held(plan, backend)?,
    };
    record.steps_completed = simulation.step_count();
    if plan.check_every > 0 {
        simulation.set_agreement_check(Some(WindowPolicy::Every(plan.check_every)));
    }
    record.method = simulation.backend().step_method();
    record.problem = scenario::ProblemRecord::of(&simulation, &origin.to_string());
    if let Some(problem) = &record.problem {
        note(&problem.start_line());
    }
    plan.solve.start(&mut simulation, record.problem.as_mut())?;
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
        last_chunk,
    };
    let ending = run_to_end(&mut run, &mut simulation, &mut driver);
    bar.finish_and_clear();
    if let Some(problem) = record.problem.as_mut() {
        problem.simulated_seconds = simulation.simulated_seconds().unwrap_or(0.0);
        problem.ledger = run.ledger().clone();
        solve::finish(&mut simulation, problem);
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
