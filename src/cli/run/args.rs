//! The arguments of `heatlab run`, as clap reads them (checked into a plan in `mod.rs`).

use std::path::PathBuf;

use heatlab_engine::compute::{BackendChoice, Boundary, KernelChoice, KernelRefusal};
use heatlab_engine::distributed::OverlapChoice;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::ShownLayers;
use heatlab_engine::field::DEFAULT_SEED;
use heatlab_engine::grid::GridSize;
use heatlab_engine::import::LuminanceRange;
use heatlab_engine::render::Colormap;
use heatlab_engine::solve::{ImplicitScheme, DEFAULT_TOLERANCE};

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
    /// Write no PNG frames: with --npy, the frames are .npy arrays alone (a field too large to
    /// picture on one host; over ranks, each rank writes its rows and none holds the field).
    #[arg(long, requires = "npy")]
    pub no_png: bool,
    /// Which layers the frames hold: field, laplacian or both (PNG and .npy alike).
    #[arg(long, default_value = "both")]
    pub frame_layers: ShownLayers,
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
    pub video_layer: ShownLayers,
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
    /// Under mpirun (a build with the `distributed` feature): halo rows each band holds of its
    /// neighbours, which is also the most steps between two exchanges (default: 4 on the CPU,
    /// 64 on GPUs, or the most that the thinnest band allows).
    #[arg(long, value_name = "ROWS", value_parser = clap::value_parser!(u64).range(1..))]
    pub halo_depth: Option<u64>,
    /// Under mpirun with GPUs: exchange the halos through the host and MPI instead of GPU to
    /// GPU with NCCL (to compare the two).
    #[arg(long)]
    pub host_halos: bool,
    /// Under mpirun with GPUs: send the halos while the band's interior steps (on), after each
    /// round of steps (off), or auto: overlapped where they go through the host, not over NCCL
    /// (there the exchange costs less than the edge strips stepped aside). The same field.
    #[arg(long, default_value = "auto")]
    pub overlap: OverlapChoice,
    /// Solve a heat problem's steady state directly (multigrid-preconditioned conjugate
    /// gradients, on the CPU or the GPU) instead of stepping: the frames and run.json hold the
    /// steady field and the solver's iterations, residuals and time.
    #[arg(long, conflicts_with_all = ["steps", "duration", "kernel", "implicit", "save_every", "video", "check_every"])]
    pub steady: bool,
    /// Step a heat problem with implicit steps (backward-euler, first order and free of
    /// oscillation, or crank-nicolson, second order), each solved by the same solver, at
    /// --dt seconds, far above the explicit limit.
    #[arg(
        long,
        value_name = "SCHEME",
        num_args = 0..=1,
        default_missing_value = "backward-euler",
        conflicts_with_all = ["kernel", "check_every"]
    )]
    pub implicit: Option<ImplicitScheme>,
    /// The implicit step, seconds [default: 100 explicit time steps].
    #[arg(long, value_name = "SECONDS", requires = "implicit")]
    pub dt: Option<f64>,
    /// The solver stops when its estimated error is at most this fraction of the temperature
    /// span (--steady, --implicit).
    #[arg(long, value_name = "FRACTION", default_value_t = DEFAULT_TOLERANCE)]
    pub tolerance: f64,
    /// The most iterations one solve may take (--steady, --implicit); a solve that has not
    /// converged by then stops the run with the residual it reached.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_iterations: u32,
    /// The GPU kernel that steps (needs CUDA unless auto): auto (the fastest exact one for the
    /// size), tutorial (the notebook's racing kernel, Dirichlet only), shared, jacobi-rows,
    /// jacobi-vec4-rows8/16, temporal-k4/k8-rows16/32/64/128. run.json records it.
    #[arg(long, default_value = "auto")]
    pub kernel: KernelChoice,
}

/// `--kernel`, refused before any work when it cannot step this run.
pub(super) fn checked_kernel(args: &RunArgs) -> Result<KernelChoice, HeatlabError> {
    let kernel = args.kernel;
    match kernel.backend_for(args.backend) {
        Ok(_) if kernel == KernelChoice::Auto => return Ok(kernel),
        Ok(_) => {}
        Err(KernelRefusal::UserKernel) => {
            return Err(HeatlabError::InvalidInput(
                "--kernel user: user kernels are compiled and validated in the app's Kernel lab"
                    .into(),
            ))
        }
        Err(KernelRefusal::GpuKernelOnCpu) => {
            return Err(HeatlabError::InvalidInput(format!(
                "--kernel {kernel} is a GPU kernel; it cannot be used with --backend cpu"
            )))
        }
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
