//! The headless command line: `heatlab run`, `heatlab bench`, and the GUI's entry.

pub mod bench;
pub mod gui;
pub mod kernel;
pub mod run;
pub mod verify;

use clap::{Parser, Subcommand};

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
    /// Run a tutorial kernel (hidden-layer, gaussian, mc-pi) on the CPU and the GPU and time it.
    Kernel(kernel::KernelArgs),
    /// Open the desktop app (the default), or take a screenshot of it with --screenshot.
    Gui(gui::GuiArgs),
    /// Check the GPU (or the CPU's fast methods) against the CPU reference, bit for bit, over
    /// random sequences of what users do.
    Verify(verify::VerifyArgs),
}

/// Parses the command line and runs it. Errors come back for `main` to print.
pub fn run_cli(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Bench(args)) => bench::bench(&args),
        Some(Command::Kernel(args)) => kernel::run(&args),
        Some(Command::Gui(args)) => gui::run(&args),
        Some(Command::Verify(args)) => verify::run(&args),
        None => gui::run(&gui::GuiArgs::default()),
    }
}
