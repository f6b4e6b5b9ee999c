//! `heatlab kernel hidden-layer|gaussian|mc-pi`: one tutorial kernel on the CPU and the GPU,
//! its result and its timings as a table or as one JSON object. The GPU basics' lessons
//! (`max`, `geometry`, `sin-exp`, `row-sums`, `reduce`, `device`) go to [`super::basics`].

use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::basics::{BasicsArgs, KernelName};
use super::interrupt::{Interrupt, Interrupted};
use super::output::{note, print};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export;
use heatlab_engine::tutorial::{
    self, gaussian::GaussianParams, open_gpu, CpuRuns, KernelRun, KernelSummary, KernelTimings,
    RunControl, RunOptions, RunProgress, TimingStats, TutorialGpu, TutorialKernel,
};

/// Arguments of `heatlab kernel`.
#[derive(Debug, Clone, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct KernelArgs {
    /// Which kernel: hidden-layer, gaussian, mc-pi, or a lesson of the GPU basics: max,
    /// geometry, sin-exp, row-sums, reduce, device.
    pub kernel: KernelName,
    /// Elements (hidden-layer, gaussian, geometry, sin-exp, reduce) or samples (mc-pi); `1e8`
    /// and `100_000_000` work too. Default 1000000, or the notebook's for a lesson.
    #[arg(long, value_parser = parse_count)]
    pub n: Option<u64>,
    /// Seed of the inputs (NumPy's default_rng) or of the MWC64X generator (mc-pi).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// auto (the GPU when it works, else the CPU only), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendChoice,
    /// Timed runs of each version (mean ± std over them, as %timeit).
    #[arg(long, default_value_t = 7)]
    pub repeat: i64,
    /// CPU versions to time: both, all-threads, one-thread or skip.
    #[arg(long, default_value = "both")]
    pub cpu: CpuRuns,
    /// Mean of the Gaussian (gaussian only; default 0).
    #[arg(long)]
    pub mean: Option<f32>,
    /// Standard deviation of the Gaussian (gaussian only; default 1).
    #[arg(long)]
    pub sigma: Option<f32>,
    /// Write the inputs and outputs as float32 .npy files into this folder.
    #[arg(long)]
    pub npy: Option<PathBuf>,
    /// Write one timing-log row per timed run to this file (.csv or .json).
    #[arg(long)]
    pub timings: Option<PathBuf>,
    /// Print one JSON object (result and every timing) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The options of the GPU basics' lessons.
    #[command(flatten)]
    pub basics: BasicsArgs,
}

/// Elements or samples when `--n` is not given (tutorial kernels).
const DEFAULT_N: u64 = 1_000_000;

/// Parses a count such as `1000000`, `1_000_000` or `1e10`: a whole number from 1 to
/// `u64::MAX`. Too large is "too large", never saturated.
fn parse_count(text: &str) -> Result<u64, String> {
    let cleaned = text.trim().replace('_', "");
    let too_large = || format!("'{text}' is too large (at most {})", u64::MAX);
    match cleaned.parse::<u64>() {
        Ok(0) => return Err("must be at least 1".into()),
        Ok(value) => return Ok(value),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => return Err(too_large()),
        Err(_) => {}
    }
    let value: f64 = cleaned
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number"))?;
    if value.is_nan() {
        return Err(format!("'{text}' is not a whole number"));
    }
    // 2^64 is the first whole f64 above u64::MAX; every whole f64 below it converts exactly.
    if value >= 18_446_744_073_709_551_616.0 {
        return Err(too_large());
    }
    if value < 1.0 {
        return Err(format!("'{text}' must be at least 1"));
    }
    if value.fract() != 0.0 {
        return Err(format!("'{text}' is not a whole number"));
    }
    Ok(value as u64)
}

/// What `--json` prints: the run, and why the GPU was not used when it was not.
#[derive(Debug, serde::Serialize)]
struct JsonReport<'a> {
    heatlab_version: &'static str,
    #[serde(flatten)]
    run: &'a KernelRun,
    cpu: CpuRuns,
    note: Option<String>,
    files: Vec<String>,
}

/// Runs `heatlab kernel`. A signal stops it at the next chunk of work, or before the next file.
pub fn run(args: &KernelArgs, interrupt: &Interrupt) -> anyhow::Result<()> {
    let kernel = match args.kernel {
        KernelName::Tutorial(kernel) => kernel,
        KernelName::Basics(lesson) => {
            return super::basics::run(lesson, args, checked_repeats(args)?, interrupt)
        }
    };
    let (options, params) = checked_options(args, kernel)?;
    let (gpu, reason) = open_gpu(args.backend)?;
    let gpu_note = reason.map(|reason| format!("using the CPU only: {reason}"));
    if let Some(text) = &gpu_note {
        note(text);
    }
    if kernel == TutorialKernel::MonteCarloPi && args.cpu.one_thread() && options.n > 1_000_000_000
    {
        let per_sample = tutorial::mc_pi::estimate_cpu_seconds_per_sample().as_secs_f64();
        note(&format!(
            "note: one CPU thread needs about {:.0} s per run for {} samples; \
             --cpu all-threads skips it",
            per_sample * options.n as f64,
            options.n
        ));
    }

    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg:>22} [{bar:40}] {percent:>3}% ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let show_progress = |progress: RunProgress| {
        bar.set_message(progress.phase.to_string());
        bar.set_length(progress.total);
        bar.set_position(progress.done);
    };
    let control = RunControl {
        cancel: interrupt.flag(),
        progress: &show_progress,
    };
    let outcome = run_kernel(
        args,
        kernel,
        &options,
        params,
        gpu.as_ref(),
        control,
        interrupt,
    );
    bar.finish_and_clear();
    let (run, mut files) = outcome.map_err(|error| signal_instead_of_cancel(error, interrupt))?;
    if let Some(path) = &args.timings {
        interrupt.check()?;
        let records = run.timing_records();
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        // A FIFO with no reader holds the open until one comes: a signal then stops at once,
        // there being nothing left to finish.
        interrupt.at_once_while(|| {
            if is_json {
                export::write_timings_json(path, &records)
            } else {
                export::write_timings_csv(path, &records)
            }
        })?;
        files.push(path.display().to_string());
    }
    report(args, &run, gpu_note, files)
}

/// `--repeat` as a count of at least 1.
fn checked_repeats(args: &KernelArgs) -> anyhow::Result<u32> {
    Ok(u32::try_from(args.repeat)
        .ok()
        .filter(|&r| r >= 1)
        .ok_or_else(|| {
            HeatlabError::InvalidInput(format!("--repeat must be at least 1, got {}", args.repeat))
        })?)
}

/// The run's options after every check, refused with a message before any work.
fn checked_options(
    args: &KernelArgs,
    kernel: TutorialKernel,
) -> anyhow::Result<(RunOptions, GaussianParams)> {
    let repeats = checked_repeats(args)?;
    if kernel != TutorialKernel::Gaussian && (args.mean.is_some() || args.sigma.is_some()) {
        return Err(HeatlabError::InvalidInput(format!(
            "--mean and --sigma are for the gaussian kernel, not {kernel}"
        ))
        .into());
    }
    if args.basics.is_set() {
        return Err(HeatlabError::InvalidInput(format!(
            "--sides, --dims, --block, --grid, --unguarded, --x-along-cols, --rows and --cols \
             are for the GPU basics' lessons, not {kernel}"
        ))
        .into());
    }
    let params = GaussianParams {
        mean: args.mean.unwrap_or(0.0),
        sigma: args.sigma.unwrap_or(1.0),
    };
    params.validate()?;
    let options = RunOptions {
        n: args.n.unwrap_or(DEFAULT_N),
        seed: args.seed,
        repeats,
        cpu: args.cpu,
    };
    options.validate()?;
    if let Some(dir) = &args.npy {
        export::ensure_writable_dir(dir)?;
    }
    if let Some(path) = &args.timings {
        export::atomic::check_output(path)?;
    }
    Ok((options, params))
}

/// The kernel's run, and its arrays written to `--npy`, checking for a signal between files.
fn run_kernel(
    args: &KernelArgs,
    kernel: TutorialKernel,
    options: &RunOptions,
    params: GaussianParams,
    gpu: Option<&TutorialGpu>,
    control: RunControl<'_>,
    interrupt: &Interrupt,
) -> anyhow::Result<(KernelRun, Vec<String>)> {
    let mut files = Vec::new();
    let mut write = |dir: &Path, name: &str, shape: &[u64], values: &[f32]| {
        interrupt.check()?;
        files.push(write_npy(dir, name, shape, values)?);
        anyhow::Ok(())
    };
    let run = match kernel {
        TutorialKernel::HiddenLayer => {
            let output = tutorial::hidden_layer::run(options, gpu, control)?;
            if let Some(dir) = &args.npy {
                let n = output.activations.len() as u64;
                write(dir, "greyscales.npy", &[n], &output.inputs.greyscales)?;
                write(dir, "weights.npy", &[n], &output.inputs.weights)?;
                write(dir, "activations.npy", &[n], &output.activations)?;
            }
            output.run
        }
        TutorialKernel::Gaussian => {
            let output = tutorial::gaussian::run(options, params, gpu, control)?;
            if let Some(dir) = &args.npy {
                let n = output.pdf.len() as u64;
                write(dir, "x.npy", &[n], &output.x)?;
                write(dir, "pdf.npy", &[n], &output.pdf)?;
            }
            output.run
        }
        TutorialKernel::MonteCarloPi => {
            let output = tutorial::mc_pi::run(options, gpu, control)?;
            if let Some(dir) = &args.npy {
                let points: Vec<f32> = output.points.iter().flat_map(|p| [p.x, p.y]).collect();
                let shape = [output.points.len() as u64, 2];
                write(dir, "points.npy", &shape, &points)?;
            }
            output.run
        }
    };
    Ok((run, files))
}

/// A run cancelled through the interrupt's flag stopped because of its signal.
fn signal_instead_of_cancel(error: anyhow::Error, interrupt: &Interrupt) -> anyhow::Error {
    match (error.downcast_ref::<HeatlabError>(), interrupt.requested()) {
        (Some(HeatlabError::Cancelled), Some(signal)) => Interrupted(signal).into(),
        _ => error,
    }
}

/// Prints the table (or the JSON report) and the files written.
fn report(
    args: &KernelArgs,
    run: &KernelRun,
    gpu_note: Option<String>,
    files: Vec<String>,
) -> anyhow::Result<()> {
    if args.json {
        let report = JsonReport {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            run,
            cpu: args.cpu,
            note: gpu_note,
            files,
        };
        let text = serde_json::to_string_pretty(&report).context("encoding the JSON report")?;
        print(&format!("{text}\n"))?;
    } else {
        let mut text = format_table(run, gpu_note.as_deref());
        for file in &files {
            text.push_str(&format!("wrote {file}\n"));
        }
        print(&text)?;
    }
    Ok(())
}

fn write_npy(
    dir: &Path,
    name: &str,
    shape: &[u64],
    values: &[f32],
) -> heatlab_engine::Result<String> {
    let path = dir.join(name);
    export::npy::write_f32_array(&path, shape, values)?;
    Ok(path.display().to_string())
}

/// The readable report: the result, then one row per version with mean ± std and the
/// speed-up against one CPU thread.
pub fn format_table(run: &KernelRun, note: Option<&str>) -> String {
    let mut text = String::new();
    let device = match (&run.gpu, note) {
        (Some(gpu), _) => format!("GPU {gpu}"),
        (None, Some(note)) => note.to_string(),
        (None, None) => "CPU only".to_string(),
    };
    text.push_str(&format!(
        "{}: n = {}, seed {}, {} runs each, {}\n",
        run.kernel, run.n, run.seed, run.repeats, device
    ));
    text.push_str(&format!("result: {}\n", describe_result(&run.result)));
    let timings = &run.timings;
    let baseline = timings
        .cpu_one_thread
        .as_ref()
        .or(timings.cpu_all_threads.as_ref())
        .map(|s| s.mean_s);
    let rows = timing_rows(timings);
    text.push_str(&format!(
        "{:<52} {:>26} {:>10}\n",
        "version", "mean ± std", "speed-up"
    ));
    for (label, stats) in rows {
        let speedup = match baseline {
            Some(base) if stats.mean_s > 0.0 && !label.starts_with("  ") => {
                format!("{:.1}x", base / stats.mean_s)
            }
            _ => String::new(),
        };
        text.push_str(&format!(
            "{label:<52} {:>26} {speedup:>10}\n",
            stats.display()
        ));
    }
    if let Some(difference) = run.max_abs_difference_gpu_cpu {
        text.push_str(&format!("max |GPU - CPU| = {difference:e}\n"));
    }
    if let Some(note) = &timings.pinned_note {
        text.push_str(&format!("GPU, pinned host arrays: not run: {note}\n"));
    }
    match timings.pinned_equals_pageable {
        Some(true) => text.push_str("pinned results = pageable results, bit for bit\n"),
        Some(false) => text.push_str("WARNING: pinned results differ from pageable results\n"),
        None => {}
    }
    if let Some(kernel) = &run.gpu_kernel {
        text.push_str(&format!("GPU kernel: {kernel}\n"));
    }
    if run.kernel == TutorialKernel::MonteCarloPi {
        text.push_str(&samples_per_second(run));
    }
    text
}

/// One row per version that ran, in the table's order (indented rows are parts of the row
/// above them).
fn timing_rows(timings: &KernelTimings) -> Vec<(String, &TimingStats)> {
    let mut rows: Vec<(String, &TimingStats)> = Vec::new();
    if let Some(stats) = &timings.cpu_one_thread {
        rows.push(("CPU, one thread".into(), stats));
    }
    if let Some(stats) = &timings.cpu_all_threads {
        rows.push((format!("CPU, all {} threads", timings.cpu_threads), stats));
    }
    for (label, host) in [
        ("GPU, pageable host arrays", &timings.gpu_host_arrays),
        ("GPU, pinned host arrays", &timings.gpu_pinned_arrays),
    ] {
        if let Some(host) = host {
            rows.push((format!("{label} (total)"), &host.total));
            rows.push(("  upload".into(), &host.upload));
            rows.push(("  kernel".into(), &host.kernel));
            rows.push(("  download".into(), &host.download));
            rows.push(("  host wall clock".into(), &host.wall));
        }
    }
    if let Some(overlapped) = &timings.gpu_pinned_overlapped {
        rows.push((
            format!(
                "GPU, pinned, {} chunks on {} streams",
                overlapped.chunks, overlapped.streams
            ),
            &overlapped.total,
        ));
        rows.push(("  host wall clock".into(), &overlapped.wall));
    }
    if let Some(stats) = &timings.gpu_device_resident {
        let label = match timings.device_resident_launches_per_timing {
            0 | 1 => "GPU, device-resident (kernel)".to_string(),
            launches => format!("GPU, device-resident (kernel; {launches} launches/timing)"),
        };
        rows.push((label, stats));
    }
    if let Some(stats) = &timings.gpu_device_resident_wall {
        rows.push(("  host wall clock".into(), stats));
    }
    rows
}

/// Monte Carlo pi's rates, `samples/s: GPU kernel (device-resident) 1.23e12; ...`: the samples
/// of one run over each version's mean time (the target of issue 11 is the GPU's kernel rate).
fn samples_per_second(run: &KernelRun) -> String {
    let timings = &run.timings;
    let all_threads = format!("CPU, all {} threads", timings.cpu_threads);
    let versions = [
        (
            "GPU kernel (device-resident)",
            timings.gpu_device_resident.as_ref(),
        ),
        (
            "GPU with pinned host arrays (total)",
            timings.gpu_pinned_arrays.as_ref().map(|host| &host.total),
        ),
        (all_threads.as_str(), timings.cpu_all_threads.as_ref()),
        ("CPU, one thread", timings.cpu_one_thread.as_ref()),
    ];
    let rates: Vec<String> = versions
        .iter()
        .filter_map(|(label, stats)| {
            stats
                .filter(|stats| stats.mean_s > 0.0)
                .map(|stats| format!("{label} {:.3e}", run.n as f64 / stats.mean_s))
        })
        .collect();
    if rates.is_empty() {
        String::new()
    } else {
        format!("samples/s: {}\n", rates.join("; "))
    }
}

fn describe_result(result: &KernelSummary) -> String {
    match result {
        KernelSummary::HiddenLayer { activations } => format!(
            "activations in [{:.6}, {:.6}], mean {:.6}",
            activations.min, activations.max, activations.mean
        ),
        KernelSummary::Gaussian {
            mean,
            sigma,
            pdf,
            max_abs_error_vs_f64,
        } => format!(
            "pdf(mean {mean}, sigma {sigma}) in [{:.6e}, {:.6}], mean {:.6}; \
             max |float32 - float64 formula| = {max_abs_error_vs_f64:e}",
            pdf.min, pdf.max, pdf.mean
        ),
        KernelSummary::MonteCarloPi(estimate) => format!(
            "pi ≈ {:.8} ± {:.2e} (standard error; {} of {} inside; error {:+.2e} = {:+.2} standard errors)",
            estimate.estimate,
            estimate.standard_error,
            estimate.inside,
            estimate.samples,
            estimate.error,
            if estimate.standard_error > 0.0 {
                estimate.error / estimate.standard_error
            } else {
                0.0
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts_parse_in_every_spelling() {
        assert_eq!(parse_count("1000000"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert_eq!(parse_count("1e10"), Ok(10_000_000_000));
        assert!(parse_count("0").is_err());
        assert!(parse_count("-5").is_err());
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("many").is_err());
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("18446744073709551615"), Ok(u64::MAX));
        for too_large in [
            "18446744073709551616",
            "1e30",
            "2e19",
            "18_446_744_073_709_551_616",
        ] {
            let error = parse_count(too_large).unwrap_err();
            assert!(error.contains("too large"), "{too_large}: {error}");
        }
        assert!(parse_count("1.5")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_count("-5").unwrap_err().contains("at least 1"));
        assert!(parse_count("NaN")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_count("inf").unwrap_err().contains("too large"));
    }
}
