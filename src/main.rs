//! The `heatlab` binary: parse the command line, run it, report how it ended.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = heatlab::cli::Cli::parse();
    heatlab::cli::exit_status(cli)
}
