//! The `heatlab` binary: parse the command line, run it, report how it ended.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    heatlab::cli::exit_status(heatlab::cli::Cli::try_parse())
}
