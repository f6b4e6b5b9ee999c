//! `heatlab bench`: the diffusion variants against their baselines, as a table and JSON.

use std::path::PathBuf;

use indicatif::ProgressBar;

use super::interrupt::Interrupt;
use super::output::{note, print};
use heatlab_engine::bench::display::{bench_display, format_display, DisplayRow};
use heatlab_engine::bench::regeneration::{
    bench_regeneration, format_regeneration, RegenerationRow,
};
use heatlab_engine::bench::{
    bench_cpu, bench_cuda, bench_field_generation, parse_sizes, BenchConfig, BenchReport,
    FieldGenerationRow,
};
use heatlab_engine::compute::{Backend, BackendChoice, CpuBackend, CudaBackend, KernelChoice};
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::atomic::{check_output, remove_live_temp_files};
use heatlab_engine::export::write_json;
use heatlab_engine::grid::GridSize;

/// Arguments of `heatlab bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Field sizes, comma-separated (N or ROWSxCOLS); sizes that do not fit are skipped.
    #[arg(long, default_value = "2000,8192,16384")]
    pub sizes: String,
    /// auto (CUDA when it works, else CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendChoice,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Timed repetitions per variant (after a warm-up).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Seconds per repetition (default: 0.05 on the GPU, 0.3 on the CPU).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Do not time NumPy beside the CPU variants.
    #[arg(long)]
    pub no_numpy: bool,
    /// Do not time the jagged field's generation.
    #[arg(long)]
    pub no_field: bool,
    /// Time the app's display path instead, call by call (previews of at most PIXELS x PIXELS,
    /// the field's statistics, whole frames by both paths) and, on the GPU, live regeneration
    /// beside its baseline; on the CPU backend, the display's host part.
    #[arg(long, value_name = "PIXELS")]
    pub display: Option<usize>,
    /// Time only these GPU kernels, comma-separated (auto, tutorial, shared, jacobi-rows, ...;
    /// `heatlab run --help` lists them), beside the device copy and the tutorial's kernel.
    #[arg(long, value_delimiter = ',')]
    pub kernel: Option<Vec<KernelChoice>>,
    /// Time the steady state of a heat sink (copper, FR-4 and air) solved directly at each
    /// of --sizes, beside explicit marching to the same tolerance, on --backend.
    #[arg(long, conflicts_with_all = ["display", "kernel", "basics"])]
    pub steady: bool,
    /// Time the GPU basics' maximum ladder at these cube sides instead (e.g. 32,128,256),
    /// beside the notebook's own Python rungs (NumPy, and Numba where it is installed).
    #[arg(long, value_delimiter = ',', value_name = "SIDES")]
    pub basics: Option<Vec<usize>>,
    /// Under mpirun (a build with the `distributed` feature): weak scaling (--rank-size on
    /// each rank) and strong scaling (--strong-size split over the ranks), with the
    /// single-GPU rate of each size and the share of time spent exchanging halos.
    #[arg(long, conflicts_with_all = ["display", "kernel", "basics", "steady"])]
    pub ranks: bool,
    /// With --ranks: the field each rank holds for weak scaling.
    #[arg(long, default_value = "16384", requires = "ranks")]
    pub rank_size: heatlab_engine::grid::GridSize,
    /// With --ranks: the field split over the ranks for strong scaling.
    #[arg(long, default_value = "32768", requires = "ranks")]
    pub strong_size: heatlab_engine::grid::GridSize,
    /// With --ranks: steps timed per round (--repeats rounds, alternating with the single
    /// GPU).
    #[arg(long, default_value_t = 2560, requires = "ranks")]
    pub rank_steps: u64,
    /// With --ranks: halo rows (steps between exchanges).
    #[arg(long, default_value_t = 64, requires = "ranks")]
    pub halo_depth: usize,
    /// With --ranks: exchange halos through the host and MPI instead of NCCL.
    #[arg(long, requires = "ranks")]
    pub host_halos: bool,
}

/// Runs `heatlab bench`. A signal stops it before the next measurement, with nothing written
/// (a partial benchmark is not a result).
pub fn bench(args: &BenchArgs, interrupt: &Interrupt) -> anyhow::Result<()> {
    check_args(args)?;
    if args.ranks {
        #[cfg(feature = "distributed")]
        return super::bench_ranks::bench_ranks(args);
        #[cfg(not(feature = "distributed"))]
        anyhow::bail!(
            "--ranks needs a build with the `distributed` feature (cargo build --release \
             --features distributed), started by mpirun"
        );
    }
    let sizes = parse_sizes(&args.sizes)?;
    if let Some(sides) = &args.basics {
        return super::basics::bench::bench_basics(args, sides, interrupt);
    }
    if let Some(path) = &args.json {
        check_output(path)?;
    }
    let use_cuda = cuda_benchmarked(args)?;
    let config = BenchConfig {
        sizes,
        repeats: args.repeats,
        seconds_per_repeat: args.seconds.unwrap_or(if use_cuda { 0.05 } else { 0.3 }),
        with_numpy: !args.no_numpy,
    };
    if let Some(pixels) = args.display {
        return bench_display_path(args, &config, pixels, use_cuda);
    }
    if args.steady {
        return bench_steady_state(args, &config.sizes, use_cuda);
    }
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let progress = |message: &str| {
        if let Some(signal) = interrupt.requested() {
            // The benchmark's measurements cannot be stopped from here and a partial report is
            // no result: the process ends now, as a signal would end it, with no file half written.
            spinner.finish_and_clear();
            remove_live_temp_files();
            note(&format!("bench interrupted by {signal}; nothing written"));
            std::process::exit(i32::from(signal.exit_status()));
        }
        spinner.set_message(message.to_string());
    };
    let mut report = if use_cuda {
        bench_cuda(&config, args.kernel.as_deref(), &progress)?
    } else {
        bench_cpu(&config, &progress)?
    };
    if !args.no_field {
        report.field_generation = bench_field_generation(&config, use_cuda, &progress)?;
    }
    spinner.finish_and_clear();
    print(&format_table(&report))?;
    if let Some(path) = &args.json {
        write_json(path, &report)?;
        note(&format!("wrote {}", path.display()));
    }
    Ok(())
}

/// The longest `--seconds`: an hour a repetition.
const MAX_SECONDS_PER_REPEAT: f64 = 3600.0;

/// Refuses arguments that cannot make a benchmark, before anything is measured.
fn check_args(args: &BenchArgs) -> Result<(), HeatlabError> {
    if args.repeats == 0 {
        return Err(HeatlabError::InvalidInput(
            "--repeats must be at least 1".into(),
        ));
    }
    if let Some(seconds) = args.seconds {
        if !(seconds > 0.0 && seconds.is_finite()) {
            return Err(HeatlabError::InvalidInput(format!(
                "--seconds must be positive, got {seconds}"
            )));
        }
        // Each variant is timed `repeats` times for this long: beyond an hour a repetition is
        // a mistake (1e300), not a measurement.
        if seconds > MAX_SECONDS_PER_REPEAT {
            return Err(HeatlabError::InvalidInput(format!(
                "--seconds is the time of one repetition, at most {MAX_SECONDS_PER_REPEAT} \
                 (an hour), got {seconds:e}"
            )));
        }
    }
    if let Some(kernels) = &args.kernel {
        if kernels.contains(&KernelChoice::User) {
            return Err(HeatlabError::InvalidInput(
                "--kernel user: user kernels are timed in the app's Kernel lab \
                 (\"measure kernels\" in the diffusion view)"
                    .into(),
            ));
        }
        if args.backend == BackendChoice::Cpu {
            return Err(HeatlabError::InvalidInput(
                "--kernel chooses GPU kernels; it cannot be used with --backend cpu".into(),
            ));
        }
    }
    Ok(())
}

/// Whether the GPU is benchmarked: when asked for (refused when it does not work), or when it
/// works.
fn cuda_benchmarked(args: &BenchArgs) -> anyhow::Result<bool> {
    Ok(match args.backend {
        BackendChoice::Cpu => false,
        BackendChoice::Cuda => {
            CudaBackend::new()?;
            true
        }
        BackendChoice::Auto if args.kernel.is_some() => {
            CudaBackend::new()?;
            true
        }
        BackendChoice::Auto => match CudaBackend::new() {
            Ok(_) => true,
            Err(reason) => {
                note(&format!("benchmarking the CPU: {reason}"));
                false
            }
        },
    })
}

/// What `heatlab bench --display` writes as JSON.
#[derive(serde::Serialize)]
struct DisplayReport {
    /// The display path, call by call, and whole frames.
    display: Vec<DisplayRow>,
    /// Live regeneration (GPU only).
    regeneration: Vec<RegenerationRow>,
}

/// `heatlab bench --display PIXELS`: the display path, call by call, on the GPU (the host's
/// part alone on the CPU).
fn bench_display_path(
    args: &BenchArgs,
    config: &BenchConfig,
    pixels: usize,
    use_cuda: bool,
) -> anyhow::Result<()> {
    if !(1..=16384).contains(&pixels) {
        return Err(HeatlabError::InvalidInput(format!(
            "--display takes a preview size of 1 to 16384 pixels, got {pixels}"
        ))
        .into());
    }
    let backend: Box<dyn Backend> = if use_cuda {
        Box::new(CudaBackend::new()?)
    } else {
        Box::new(CpuBackend::new())
    };
    let device = backend.device_name();
    let rows = bench_display(
        backend,
        &config.sizes,
        (pixels, pixels),
        config.repeats.max(20),
    )?;
    print(&format!(
        "heatlab bench --display on {}\n{}",
        device,
        format_display(&rows)
    ))?;
    // Live regeneration: on the GPU only (on the CPU a field takes seconds at these sizes).
    let regeneration = if use_cuda {
        let regeneration = bench_regeneration(&config.sizes, config.repeats.max(10))?;
        print(&format_regeneration(&regeneration))?;
        regeneration
    } else {
        Vec::new()
    };
    if let Some(path) = &args.json {
        let report = DisplayReport {
            display: rows,
            regeneration,
        };
        write_json(path, &report)?;
        note(&format!("wrote {}", path.display()));
    }
    Ok(())
}

/// The report as a fixed-width table.
pub fn format_table(report: &BenchReport) -> String {
    let mut out = format!(
        "heatlab bench {} on {} at {}\n",
        report.heatlab_version, report.device, report.date_utc
    );
    out.push_str(&format!(
        "{:<12} {:<26} {:>18} {:>12} {:>11} {:>7} {:>9} {:>6}\n",
        "size", "variant", "us/step", "steps/s", "T_eff GB/s", "% copy", "speedup", "exact"
    ));
    for row in &report.rows {
        let percent = row
            .percent_of_copy
            .map_or_else(|| "-".into(), |p| format!("{p:.0}%"));
        let speedup = row
            .speedup
            .map_or_else(|| "-".into(), |s| format!("{s:.1}x"));
        let exact = match row.exact {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let marker = if row.selected { " <- used" } else { "" };
        out.push_str(&format!(
            "{:<12} {:<26} {:>18} {:>12.0} {:>11.1} {:>7} {:>9} {:>6}{marker}\n",
            row.size,
            row.variant,
            row.us_per_step.to_string(),
            row.steps_per_s,
            row.t_eff_gb_s,
            percent,
            speedup,
            exact,
        ));
    }
    let baselines: Vec<&str> = report
        .rows
        .iter()
        .filter_map(|r| r.baseline.as_deref())
        .collect();
    if let Some(first) = baselines.first() {
        out.push_str(&format!(
            "speedup: steps/s over {first}, measured in this run\n"
        ));
    }
    if !report.field_generation.is_empty() {
        out.push_str(&format_field_generation(&report.field_generation));
    }
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// The field generation rows of the table.
fn format_field_generation(rows: &[FieldGenerationRow]) -> String {
    let mut out = String::from("field generation (jagged, seconds):\n");
    for row in rows {
        let numpy = row
            .numpy_seconds
            .map_or_else(|| "-".into(), |n| n.to_string());
        let speedup = row
            .speedup
            .map_or_else(|| "-".into(), |s| format!("{s:.1}x"));
        out.push_str(&format!(
            "{:<12} heatlab ({} threads) {:>16}   numpy {:>16}   {:>7} faster\n",
            row.size,
            row.threads,
            row.heatlab_seconds.to_string(),
            numpy,
            speedup
        ));
        if let Some(gpu) = &row.gpu {
            out.push_str(&format!(
                "{:<12} GPU (cuFFT) {} ms wall, {} ms on the GPU: {:.0}x the CPU's; \
                 max |GPU - CPU| {:.2e} ({} of {} cells differ)\n",
                "",
                gpu.wall_ms,
                gpu.device_ms,
                gpu.speedup_over_cpu,
                gpu.max_abs_difference,
                gpu.cells_differing,
                gpu.cells,
            ));
        }
        if let Some(why) = &row.gpu_unavailable {
            out.push_str(&format!("{:<12} GPU: {why}\n", ""));
        }
    }
    out
}

/// `heatlab bench --steady`: one table row per size.
fn bench_steady_state(args: &BenchArgs, sizes: &[GridSize], use_cuda: bool) -> anyhow::Result<()> {
    let choice = if use_cuda {
        BackendChoice::Cuda
    } else {
        BackendChoice::Cpu
    };
    let (mut backend, _) = heatlab_engine::compute::create_backend(choice)?;
    let options = heatlab_engine::solve::SolveOptions {
        tolerance: 1e-6,
        ..Default::default()
    };
    let sides: Vec<usize> = sizes.iter().map(|size| size.rows.max(size.cols)).collect();
    let rows =
        heatlab_engine::bench::steady::bench_steady(backend.as_mut(), &sides, &options, 200)?;
    let mut table = format!(
        "steady state of a heat sink (copper, FR-4, air; contrast 1.5e4) to 1e-6 of the span \
         on {}\n| size | grids | iterations | solve ms | setup ms | explicit step us | \
         marching steps (lower bound) | speed-up over marching | implicit step ms (iterations) |\n|---|---|---|---|---|---|---|---|---|\n",
        backend.device_name()
    );
    for row in &rows {
        table.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.1} | {:.2} | {:.3e} | {:.3e} | {:.2} ({}) |\n",
            row.size,
            row.levels,
            row.iterations,
            row.solve_ms,
            row.setup_ms,
            row.explicit_step_us,
            row.marching_steps,
            row.speedup,
            row.implicit_step_ms,
            row.implicit_iterations
        ));
    }
    print(&table)?;
    if let Some(path) = &args.json {
        let json = serde_json::to_vec_pretty(&rows)?;
        heatlab_engine::export::write_atomically(path, |out| out.write_all(&json))?;
        note(&format!("wrote {}", path.display()));
    }
    Ok(())
}
