//! The headless command line: `heatlab run`, `heatlab bench`, and the GUI's entry.

pub mod basics;
pub mod bench;
#[cfg(feature = "distributed")]
pub mod bench_ranks;
pub mod exit;
pub mod gui;
pub mod interrupt;
pub mod kernel;
pub mod lab_check;
pub mod output;
pub mod run;
pub mod scenario;
pub mod verify;
pub mod verify_physics;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use interrupt::Interrupt;

/// heatlab: GPU heat diffusion, measured against the CPU.
#[derive(Debug, Parser)]
#[command(name = "heatlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do; with none, the desktop app opens.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate the jagged field, step the diffusion and export frames, arrays and timings.
    Run(run::RunArgs),
    /// Time every diffusion variant against the baselines run beside it.
    Bench(bench::BenchArgs),
    /// Run a tutorial kernel (hidden-layer, gaussian, mc-pi) or a lesson of the GPU basics (max,
    /// geometry, sin-exp, row-sums, reduce, device) on the CPU and the GPU and time it.
    Kernel(kernel::KernelArgs),
    /// Open the desktop app (the default), or take a screenshot of it with --screenshot.
    Gui(gui::GuiArgs),
    /// Check the GPU (or the CPU's fast methods) against the CPU reference, bit for bit, over
    /// random sequences of what users do.
    Verify(verify::VerifyArgs),
    /// Check a scenario file (a heat problem with materials, heaters and sides), or list the
    /// material library.
    Scenario(scenario::ScenarioArgs),
    /// The Kernel lab's validation of a user kernel, run by the app as a child process.
    #[command(hide = true)]
    LabCheck(lab_check::LabCheckArgs),
}

/// Runs a parsed command line. The headless commands watch SIGINT and SIGTERM
/// ([`interrupt`]). Errors come back for [`exit_status`] to report.
pub fn run_cli(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Run(args)) => run::run_launched(&args),
        Some(Command::Bench(args)) => bench::bench(&args, &Interrupt::install()?),
        Some(Command::Kernel(args)) => kernel::run(&args, &Interrupt::install()?),
        Some(Command::Gui(args)) => gui::run(&args),
        Some(Command::Verify(args)) => verify::run_launched(&args),
        Some(Command::Scenario(args)) => scenario::run(&args),
        Some(Command::LabCheck(args)) => lab_check::run(&args),
        None => gui::run(&gui::GuiArgs::default()),
    }
}

/// Runs the command line that clap parsed (or explains why it could not) and reports how it
/// ended: the process's exit status, after any message ([`exit::exit_status`] lists the
/// conventions). Help and version text go through the same checked printing as any output.
pub fn exit_status(parsed: Result<Cli, clap::Error>) -> ExitCode {
    // Under mpirun every rank parses the same command line: rank 0 alone says what is wrong
    // with it (or prints the help asked for) and ends with its status; the others end with 0,
    // as after a run (a rank ending first with a failure would have mpirun end rank 0 before
    // it said why).
    let other_rank = run::launched::Launched::from_env().is_some_and(|launched| launched.rank != 0);
    match parsed {
        Ok(cli) => exit::exit_status(run_cli(cli)),
        Err(_) if other_rank => ExitCode::SUCCESS,
        Err(error) if error.use_stderr() || std::io::stdout().is_terminal() => {
            let _ = error.print();
            ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
        }
        Err(help) => exit::exit_status(
            output::print(&help.render().to_string()).map_err(anyhow::Error::from),
        ),
    }
}
