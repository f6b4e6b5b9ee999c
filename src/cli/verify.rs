//! `heatlab verify`: the differential harness. Random, reproducible sequences of what users do,
//! run on CUDA (or the CPU's fast methods) and on the CPU reference, compared bit for bit after
//! every operation. Exits non-zero at the first divergence, naming the sequence seed, the
//! operation, the kernel, the cell and both values.

use std::path::PathBuf;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::interrupt::{Interrupt, Interrupted};
use super::output;
use heatlab_engine::compute::{BackendChoice, CpuBackend, CudaBackend};
use heatlab_engine::verify::{verify, Subject, VerifyOptions, VerifyReport};

/// Arguments of `heatlab verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// Seed of the first sequence; sequence i uses SEED + i, so any one can be rerun alone.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of sequences to run.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub sequences: u64,
    /// Operations per sequence.
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u64).range(2..=10_000))]
    pub operations: u64,
    /// Largest field, in cells.
    #[arg(long, default_value_t = 160_000, value_parser = clap::value_parser!(u64).range(1..=64_000_000))]
    pub max_cells: u64,
    /// cuda: the GPU against the CPU; cpu: the CPU's fast methods against the plain loop;
    /// auto: cuda when a GPU works, else cpu.
    #[arg(long, default_value = "auto")]
    pub backend: BackendChoice,
    /// Write the report (coverage, timings, the divergence if any) as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Instead of the sequences: check the heat-problem physics against exact answers (errors
    /// and orders of convergence per case) on the chosen backend.
    #[arg(long)]
    pub physics: bool,
}

/// The subject the user chose; with `auto` and no GPU, the CPU methods and a note why.
fn open_subject(choice: BackendChoice) -> anyhow::Result<Subject> {
    let cpu = || Subject::Cpu(CpuBackend::new());
    Ok(match choice {
        BackendChoice::Cpu => cpu(),
        BackendChoice::Cuda => Subject::Cuda(Box::new(CudaBackend::new()?)),
        BackendChoice::Auto => match CudaBackend::new() {
            Ok(cuda) => Subject::Cuda(Box::new(cuda)),
            Err(reason) => {
                output::note(&format!(
                    "{reason}; checking the CPU methods against the plain loop instead"
                ));
                cpu()
            }
        },
    })
}

fn progress_bar(sequences: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(sequences);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} sequences  {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    bar
}

fn summary(report: &VerifyReport) -> String {
    let coverage = &report.coverage;
    let methods: Vec<String> = coverage
        .steps_by_method
        .iter()
        .map(|(method, steps)| format!("{method} {steps}"))
        .collect();
    let graphs = if report.subject == "cuda" {
        format!(
            "; CUDA graph replays {}; steps with graphs off {}",
            coverage.graph_replays, coverage.steps_without_graphs
        )
    } else {
        String::new()
    };
    format!(
        "{} sequences, {} operations, {} steps on {} ({}) against {} in {:.1} s: {}\n\
         steps by method: {}\n\
         steps by boundary: {:?}{graphs}; {} sizes",
        report.sequences_passed,
        report.operations_run,
        report.steps_run,
        report.subject,
        report.device,
        report.reference,
        report.elapsed_s,
        if report.passed() {
            "bit-identical after every operation"
        } else {
            "DIVERGED"
        },
        methods.join(", "),
        coverage.steps_by_boundary,
        coverage.sizes,
    )
}

/// Runs `heatlab verify`. Ctrl-C or SIGTERM stops after the current sequence; the report of
/// the sequences run is still printed and written.
pub fn run(args: &VerifyArgs, interrupt: &Interrupt) -> anyhow::Result<()> {
    if args.physics {
        return super::verify_physics::run(args.backend, args.json.as_deref());
    }
    let options = VerifyOptions {
        seed: args.seed,
        sequences: args.sequences,
        operations: usize::try_from(args.operations)?,
        max_cells: usize::try_from(args.max_cells)?,
    };
    // The report must have somewhere to go before the sequences run, not after.
    if let Some(path) = &args.json {
        heatlab_engine::export::atomic::check_output(path).context("--json")?;
    }
    let mut subject = open_subject(args.backend)?;
    let bar = progress_bar(args.sequences, args.quiet);
    let report = verify(&mut subject, &options, interrupt.flag(), &|done| {
        bar.set_position(done)
    })?;
    bar.finish_and_clear();
    if let Some(path) = &args.json {
        heatlab_engine::export::write_json(path, &report)
            .with_context(|| "writing the verify report")?;
    }
    output::print(&format!("{}\n", summary(&report)))?;
    if let Some(divergence) = &report.divergence {
        return Err(anyhow::anyhow!("divergence found: {divergence}"));
    }
    if let Some(signal) = interrupt.requested() {
        return Err(Interrupted(signal).into());
    }
    Ok(())
}
