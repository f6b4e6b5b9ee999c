//! `heatlab run`: the headless diffusion job.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::compute::Layer;
use crate::compute::{create_backend, BackendChoice, Boundary, StepParams};
use crate::error::HeatlabError;
use crate::export::{self, FrameFiles, LayerFrame, PngStyle, TimingRecord};
use crate::field::{generate_jagged, JaggedParams, DEFAULT_SEED};
use crate::grid::{Grid, GridSize};
use crate::render::{Colormap, RangeMode};
use crate::sim::{Simulation, Stability};

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
    /// Diffusion steps to take.
    #[arg(long, default_value_t = 1000)]
    pub steps: i64,
    /// Diffusion coefficient, in (0, 0.25].
    #[arg(long, default_value_t = 0.25)]
    pub coeff: f32,
    /// Boundary condition: dirichlet (0 outside), neumann (insulated) or periodic.
    #[arg(long, default_value = "dirichlet")]
    pub boundary: Boundary,
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
}

/// A run's parameters after every check.
#[derive(Debug, Clone, serde::Serialize)]
struct RunPlan {
    field: JaggedParams,
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
            coeff: args.coeff,
            boundary: args.boundary,
        };
        step.validate(args.allow_unstable)?;
        let chunk = non_negative("--chunk", args.chunk)?;
        if chunk == 0 {
            return Err(HeatlabError::InvalidInput(
                "--chunk must be at least 1".into(),
            ));
        }
        Ok(Self {
            field,
            steps: non_negative("--steps", args.steps)?,
            step,
            backend_choice: args.backend,
            save_every: non_negative("--save-every", args.save_every)?,
            chunk,
            colormap: args.colormap,
            laplacian_colormap: args.laplacian_colormap,
            npy: args.npy,
            colorbar: args.colorbar,
            out: args.out.clone(),
        })
    }

    /// The step at which the next chunk should stop: a save point, a chunk's end, or the last step.
    fn next_stop(&self, step: u64) -> u64 {
        let mut stop = (step + self.chunk).min(self.steps);
        if let Some(blocks) = step.checked_div(self.save_every) {
            stop = stop.min((blocks + 1) * self.save_every);
        }
        stop
    }

    fn is_save_point(&self, step: u64) -> bool {
        step == 0 || step == self.steps || (self.save_every > 0 && step % self.save_every == 0)
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

fn progress_bar(steps: u64) -> ProgressBar {
    let bar = ProgressBar::new(steps);
    let style = ProgressStyle::with_template(
        "{spinner} {msg} [{bar:40}] {pos}/{len} steps ({per_sec}, eta {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Runs `heatlab run`.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let plan = RunPlan::from_args(args)?;
    export::ensure_writable_dir(&plan.out)?;
    if let Some(warning) = Stability::of(plan.step.coeff).warning() {
        eprintln!("heatlab: note: {warning}");
    }

    let generating = ProgressBar::new_spinner();
    generating.set_message(format!("generating the {} jagged field", plan.field.size));
    let generation_started = Instant::now();
    let field = generate_jagged(&plan.field, &|_| generating.tick())?;
    let generation_seconds = generation_started.elapsed().as_secs_f64();
    generating.finish_and_clear();

    let (backend, fallback_note) = create_backend(plan.backend_choice)?;
    if let Some(note) = &fallback_note {
        eprintln!("heatlab: {note}");
    }
    let backend_name = backend.kind().to_string();
    let device = backend.device_name();
    // The GPU chooses its kernel for the field's size when the field is uploaded.
    let mut simulation = Simulation::new(backend, field, plan.step)?;
    let method = simulation.backend().step_method();
    eprintln!(
        "heatlab: {} field, {} steps, coeff {}, {} boundary on {device} ({method})",
        plan.field.size, plan.steps, plan.step.coeff, plan.step.boundary
    );
    let mut files = Vec::new();
    let initial = simulation.initial().clone();
    let laplacian = simulation.laplacian()?;
    files.extend(save_frame(&plan, 0, &initial, &laplacian)?);

    let bar = progress_bar(plan.steps);
    bar.set_message(backend_name.clone());
    let mut failure: Option<HeatlabError> = None;
    while simulation.step_count() < plan.steps {
        let step = simulation.step_count();
        let stop = plan.next_stop(step);
        match simulation.advance_checked(stop - step) {
            Ok((_, field)) => {
                bar.set_position(stop);
                if plan.is_save_point(stop) {
                    let laplacian = simulation.laplacian()?;
                    files.extend(save_frame(&plan, stop, &field, &laplacian)?);
                }
            }
            Err(error @ HeatlabError::NonFinite { .. }) => {
                let good_step = simulation.step_count();
                let field = simulation.field()?;
                let laplacian = simulation.laplacian()?;
                files.extend(save_frame(&plan, good_step, &field, &laplacian)?);
                failure = Some(error);
                break;
            }
            Err(other) => return Err(other.into()),
        }
    }
    bar.finish_and_clear();

    let timings = simulation.timings().to_vec();
    let timings_path = plan.out.join("timings.csv");
    export::write_timings_csv(&timings_path, &timings)?;
    files.push(timings_path);
    let summary = RunSummary::new(
        &plan,
        &backend_name,
        &device,
        &method,
        fallback_note.map(|fallback| fallback.to_string()),
        &timings,
        simulation.step_count(),
        generation_seconds,
        started.elapsed().as_secs_f64(),
        failure.as_ref(),
        &files,
    );
    let json_path = plan.out.join("run.json");
    write_json(&json_path, &summary)?;

    if let Some(error) = failure {
        return Err(anyhow::Error::new(error)).with_context(|| {
            format!(
                "stopped; the last good frame (step {}) is in {}",
                simulation.step_count(),
                plan.out.display()
            )
        });
    }
    eprintln!(
        "heatlab: {} steps in {:.3} s stepping ({:.2} us/step, {:.1} GB/s effective); wrote {} files to {}",
        summary.steps_completed,
        summary.stepping_seconds,
        summary.us_per_step,
        summary.effective_gb_s,
        files.len() + 1,
        plan.out.display()
    );
    Ok(())
}

/// What `run.json` holds.
#[derive(Debug, serde::Serialize)]
struct RunSummary {
    heatlab_version: &'static str,
    status: String,
    parameters: RunPlan,
    backend: String,
    device: String,
    method: String,
    fallback_note: Option<String>,
    steps_completed: u64,
    field_generation_seconds: f64,
    stepping_seconds: f64,
    us_per_step: f64,
    steps_per_s: f64,
    effective_gb_s: f64,
    wall_seconds: f64,
    files: Vec<String>,
}

impl RunSummary {
    #[expect(clippy::too_many_arguments)]
    fn new(
        plan: &RunPlan,
        backend: &str,
        device: &str,
        method: &str,
        fallback_note: Option<String>,
        timings: &[TimingRecord],
        steps_completed: u64,
        field_generation_seconds: f64,
        wall_seconds: f64,
        failure: Option<&HeatlabError>,
        files: &[PathBuf],
    ) -> Self {
        let stepping_seconds: f64 = timings.iter().map(|t| t.seconds).sum();
        let timed_steps: u64 = timings.iter().map(|t| t.steps).sum();
        let total = TimingRecord::diffusion(
            0,
            timed_steps,
            backend,
            method,
            plan.field.size,
            stepping_seconds,
        );
        Self {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            status: failure.map_or_else(|| "completed".to_string(), ToString::to_string),
            parameters: plan.clone(),
            backend: backend.to_string(),
            device: device.to_string(),
            method: method.to_string(),
            fallback_note,
            steps_completed,
            field_generation_seconds,
            stepping_seconds,
            us_per_step: total.us_per_step,
            steps_per_s: total.steps_per_s,
            effective_gb_s: total.effective_gb_s,
            wall_seconds,
            files: files.iter().map(|p| display_name(p)).collect(),
        }
    }
}

fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> crate::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| HeatlabError::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    export::write_atomically(path, |w| w.write_all(text.as_bytes()))
}
