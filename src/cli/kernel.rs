//! `heatlab kernel hidden-layer|gaussian|mc-pi`: one tutorial kernel on the CPU and the GPU,
//! its result and its timings as a table or as one JSON object.

use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::compute::BackendChoice;
use crate::error::HeatlabError;
use crate::export;
use crate::tutorial::{
    self, gaussian::GaussianParams, open_gpu, CpuRuns, KernelRun, KernelSummary, RunControl,
    RunOptions, RunProgress, TimingStats, TutorialKernel,
};

/// Arguments of `heatlab kernel`.
#[derive(Debug, Clone, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct KernelArgs {
    /// Which kernel: hidden-layer, gaussian or mc-pi.
    pub kernel: TutorialKernel,
    /// Elements (hidden-layer, gaussian) or samples (mc-pi); `1e8` and `100_000_000` work too.
    #[arg(long, default_value = "1000000", value_parser = parse_count)]
    pub n: u64,
    /// Seed of the inputs (NumPy's default_rng) or of the Philox generator (mc-pi).
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
}

/// Parses a count such as `1000000`, `1_000_000` or `1e10` (a whole number at least 1).
fn parse_count(text: &str) -> Result<u64, String> {
    let cleaned = text.trim().replace('_', "");
    if let Ok(value) = cleaned.parse::<u64>() {
        return if value == 0 {
            Err("must be at least 1".into())
        } else {
            Ok(value)
        };
    }
    let value: f64 = cleaned
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number"))?;
    if !(1.0..=u64::MAX as f64).contains(&value) || value.fract() != 0.0 {
        return Err(format!("'{text}' is not a whole number of at least 1"));
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

/// Runs `heatlab kernel`.
pub fn run(args: &KernelArgs) -> anyhow::Result<()> {
    let repeats = u32::try_from(args.repeat)
        .ok()
        .filter(|&r| r >= 1)
        .ok_or_else(|| {
            HeatlabError::InvalidInput(format!("--repeat must be at least 1, got {}", args.repeat))
        })?;
    if args.kernel != TutorialKernel::Gaussian && (args.mean.is_some() || args.sigma.is_some()) {
        return Err(HeatlabError::InvalidInput(format!(
            "--mean and --sigma are for the gaussian kernel, not {}",
            args.kernel
        ))
        .into());
    }
    let params = GaussianParams {
        mean: args.mean.unwrap_or(0.0),
        sigma: args.sigma.unwrap_or(1.0),
    };
    params.validate()?;
    let options = RunOptions {
        n: args.n,
        seed: args.seed,
        repeats,
        cpu: args.cpu,
    };
    options.validate()?;
    if let Some(dir) = &args.npy {
        export::ensure_writable_dir(dir)?;
    }

    let (gpu, reason) = open_gpu(args.backend)?;
    let note = reason.map(|reason| format!("using the CPU only: {reason}"));
    if let Some(note) = &note {
        eprintln!("heatlab: {note}");
    }
    if args.kernel == TutorialKernel::MonteCarloPi
        && args.cpu.one_thread()
        && args.n > 1_000_000_000
    {
        let per_sample = tutorial::mc_pi::estimate_cpu_seconds_per_sample().as_secs_f64();
        eprintln!(
            "heatlab: note: one CPU thread needs about {:.0} s per run for {} samples; \
             --cpu all-threads skips it",
            per_sample * args.n as f64,
            args.n
        );
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
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let control = RunControl {
        cancel: &cancel,
        progress: &show_progress,
    };

    let mut files = Vec::new();
    let run = match args.kernel {
        TutorialKernel::HiddenLayer => {
            let output = tutorial::hidden_layer::run(&options, gpu.as_ref(), control)?;
            bar.finish_and_clear();
            if let Some(dir) = &args.npy {
                let n = output.activations.len() as u64;
                for (name, values) in [
                    ("greyscales.npy", &output.inputs.greyscales),
                    ("weights.npy", &output.inputs.weights),
                    ("activations.npy", &output.activations),
                ] {
                    files.push(write_npy(dir, name, &[n], values)?);
                }
            }
            output.run
        }
        TutorialKernel::Gaussian => {
            let output = tutorial::gaussian::run(&options, params, gpu.as_ref(), control)?;
            bar.finish_and_clear();
            if let Some(dir) = &args.npy {
                let n = output.pdf.len() as u64;
                files.push(write_npy(dir, "x.npy", &[n], &output.x)?);
                files.push(write_npy(dir, "pdf.npy", &[n], &output.pdf)?);
            }
            output.run
        }
        TutorialKernel::MonteCarloPi => {
            let output = tutorial::mc_pi::run(&options, gpu.as_ref(), control)?;
            bar.finish_and_clear();
            if let Some(dir) = &args.npy {
                let points: Vec<f32> = output.points.iter().flat_map(|p| [p.x, p.y]).collect();
                let shape = [output.points.len() as u64, 2];
                files.push(write_npy(dir, "points.npy", &shape, &points)?);
            }
            output.run
        }
    };

    if let Some(path) = &args.timings {
        let records = run.timing_records();
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_json {
            export::write_timings_json(path, &records)?;
        } else {
            export::write_timings_csv(path, &records)?;
        }
        files.push(path.display().to_string());
    }

    if args.json {
        let report = JsonReport {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            run: &run,
            cpu: args.cpu,
            note,
            files,
        };
        let text = serde_json::to_string_pretty(&report).context("encoding the JSON report")?;
        println!("{text}");
    } else {
        print!("{}", format_table(&run, note.as_deref()));
        for file in &files {
            println!("wrote {file}");
        }
    }
    Ok(())
}

fn write_npy(dir: &Path, name: &str, shape: &[u64], values: &[f32]) -> crate::Result<String> {
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
    let mut rows: Vec<(String, &TimingStats)> = Vec::new();
    if let Some(stats) = &timings.cpu_one_thread {
        rows.push(("CPU, one thread".into(), stats));
    }
    if let Some(stats) = &timings.cpu_all_threads {
        rows.push((format!("CPU, all {} threads", timings.cpu_threads), stats));
    }
    if let Some(host) = &timings.gpu_host_arrays {
        rows.push(("GPU, host arrays (total)".into(), &host.total));
        rows.push(("  upload".into(), &host.upload));
        rows.push(("  kernel".into(), &host.kernel));
        rows.push(("  download".into(), &host.download));
        rows.push(("  host wall clock".into(), &host.wall));
    }
    if let Some(stats) = &timings.gpu_device_resident {
        rows.push(("GPU, device-resident (kernel)".into(), stats));
    }
    if let Some(stats) = &timings.gpu_device_resident_wall {
        rows.push(("  host wall clock".into(), stats));
    }
    text.push_str(&format!(
        "{:<32} {:>26} {:>10}\n",
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
            "{label:<32} {:>26} {speedup:>10}\n",
            stats.display()
        ));
    }
    if let Some(difference) = run.max_abs_difference_gpu_cpu {
        text.push_str(&format!("max |GPU - CPU| = {difference:e}\n"));
    }
    text
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
    }
}
