//! The `heatlab` binary: parse the command line, run it, report how it ended.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    heatlab_engine::memory::bound_malloc_arenas();
    // Warnings and errors by default; RUST_LOG=info (or debug) says more.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    heatlab::cli::exit_status(heatlab::cli::Cli::try_parse())
}
