//! `heatlab verify`: the differential harness. Random, reproducible sequences of what users do,
//! run on CUDA (or the CPU's fast methods) and on the CPU reference, compared bit for bit after
//! every operation. Exits non-zero at the first divergence, naming the sequence seed, the
//! operation, the kernel, the cell and both values.

use std::path::PathBuf;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::interrupt::{Interrupt, Interrupted};
use super::output;
use super::run::launched::Launched;
#[cfg(feature = "distributed")]
use heatlab_engine::compute::KernelChoice;
use heatlab_engine::compute::{BackendChoice, CpuBackend, CudaBackend};
#[cfg(feature = "distributed")]
use heatlab_engine::distributed::{OpenRequest, OverlapChoice, SplitOptions};
use heatlab_engine::error::HeatlabError;
use heatlab_engine::verify::{verify, Subject, VerifyOptions, VerifyReport};

/// The first sequence's seed unless `--seed` says.
const DEFAULT_SEED: u64 = 1;
/// Sequences unless `--sequences` says.
const DEFAULT_SEQUENCES: u64 = 100;
/// Operations per sequence unless `--operations` says.
const DEFAULT_OPERATIONS: u64 = 24;
/// The largest field, in cells, unless `--max-cells` says.
const DEFAULT_MAX_CELLS: u64 = 160_000;

/// Arguments of `heatlab verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// Seed of the first sequence; sequence i uses SEED + i, so any one can be rerun alone
    /// (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of sequences to run (default 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub sequences: Option<u64>,
    /// Operations per sequence (default 24).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=10_000))]
    pub operations: Option<u64>,
    /// Largest field, in cells (default 160000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64_000_000))]
    pub max_cells: Option<u64>,
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
    /// Started by mpirun: halos between GPUs through the host (MPI) instead of NCCL (ranks
    /// that share a GPU do so by themselves).
    #[arg(long)]
    pub host_halos: bool,
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

/// Runs `heatlab verify` on one rank, or, started by mpirun, on a field split over the ranks
/// (rank 0 runs the sequences; the other ranks hold their bands).
pub fn run_launched(args: &VerifyArgs) -> anyhow::Result<()> {
    if let Some(launched) = Launched::from_env().filter(|l| l.ranks > 1) {
        #[cfg(feature = "distributed")]
        super::run::ranks::on_ranks(args.backend, launched, |ranks, interrupt| {
            if args.physics {
                ranks.release()?;
                anyhow::bail!(
                    "--physics does not run across ranks: run it without mpirun (one rank)"
                );
            }
            let options = SplitOptions {
                open: OpenRequest {
                    backend: args.backend,
                    kernel: KernelChoice::Auto,
                    overlap: OverlapChoice::Auto,
                },
                halo_depth: None,
                host_halos: args.host_halos,
            };
            let ranks_count = ranks.ranks();
            let opened = ranks.open(options);
            let subject = opened.map(|split| Subject::Ranks(Box::new(split)));
            run_sequences(args, interrupt, subject, ranks_count)
        });
        #[cfg(not(feature = "distributed"))]
        return launched.refuse_undistributed();
    }
    if args.host_halos {
        anyhow::bail!("--host-halos is for verify over ranks (started by mpirun -n 2 or more)");
    }
    run(args, &Interrupt::install()?)
}

/// Runs `heatlab verify`. Ctrl-C or SIGTERM stops after the current sequence; the report of
/// the sequences run is still printed and written.
pub fn run(args: &VerifyArgs, interrupt: &Interrupt) -> anyhow::Result<()> {
    let sequence_options = [
        args.seed.is_some(),
        args.sequences.is_some(),
        args.operations.is_some(),
        args.max_cells.is_some(),
    ];
    if args.physics {
        // The physics cases are fixed: options of the random sequences would be ignored.
        if sequence_options.contains(&true) {
            return Err(HeatlabError::InvalidInput(
                "--seed, --sequences, --operations and --max-cells are for the random \
                 sequences, not --physics"
                    .into(),
            )
            .into());
        }
        return super::verify_physics::run(args.backend, args.json.as_deref());
    }
    run_sequences(args, interrupt, open_subject(args.backend), 1)
}

/// The random sequences on `subject`, fields of at least `min_rows` rows.
fn run_sequences(
    args: &VerifyArgs,
    interrupt: &Interrupt,
    subject: anyhow::Result<Subject>,
    min_rows: usize,
) -> anyhow::Result<()> {
    let options = VerifyOptions {
        seed: args.seed.unwrap_or(DEFAULT_SEED),
        sequences: args.sequences.unwrap_or(DEFAULT_SEQUENCES),
        operations: usize::try_from(args.operations.unwrap_or(DEFAULT_OPERATIONS))?,
        max_cells: usize::try_from(args.max_cells.unwrap_or(DEFAULT_MAX_CELLS))?,
        min_rows,
    };
    // The report must have somewhere to go before the sequences run, not after.
    if let Some(path) = &args.json {
        heatlab_engine::export::atomic::check_output(path).context("--json")?;
    }
    let mut subject = subject?;
    let bar = progress_bar(options.sequences, args.quiet);
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
