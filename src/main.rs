//! The `heatlab` binary: parse the command line, run it, print any error on one line.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Warnings and errors by default; RUST_LOG=info (or debug) says more.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = heatlab::cli::Cli::parse();
    match heatlab::cli::run_cli(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("heatlab: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
