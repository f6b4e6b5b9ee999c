//! Printing for the command line without panics: `println!` panics when standard output is a
//! closed pipe (`heatlab ... | head -1`) or a full device (`> /dev/full`); these report instead.
//!
//! The conventions (see [`exit_status`]): a closed pipe on standard output ends the command
//! quietly with status 141, as a process killed by SIGPIPE; any other write error is one line
//! on standard error and status 1.

use std::io::Write;
use std::process::ExitCode;

use crate::error::HeatlabError;

use super::interrupt::Interrupted;

/// Exit status of a command whose output pipe was closed: 128 + SIGPIPE, as the shell reports
/// a process that the signal killed.
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// Writes `text` to standard output and flushes it; a failure is an error naming standard output.
pub fn print(text: &str) -> Result<(), HeatlabError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| HeatlabError::io("writing to", "standard output", e))
}

/// Writes `heatlab: <text>` and a newline to standard error. Errors are ignored: there is no
/// other place to report them.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "heatlab: {text}");
}

/// The exit status for a command's result, after printing what the user needs to see:
/// 0 on success; 130/143 after a SIGINT/SIGTERM; 141, silently, when an output pipe closed;
/// 1 with `heatlab: error: ...` otherwise.
pub fn exit_status(result: anyhow::Result<()>) -> ExitCode {
    let Err(error) = result else {
        return ExitCode::SUCCESS;
    };
    if let Some(Interrupted(signal)) = error.chain().find_map(|e| e.downcast_ref::<Interrupted>()) {
        note(&format!("{error:#}"));
        return ExitCode::from(signal.exit_status());
    }
    if is_broken_pipe(&error) {
        return ExitCode::from(BROKEN_PIPE_STATUS);
    }
    note(&format!("error: {error:#}"));
    ExitCode::FAILURE
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    let broken = |io: &std::io::Error| io.kind() == std::io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(broken)
            || matches!(
                cause.downcast_ref::<HeatlabError>(),
                Some(HeatlabError::Io { reason, .. }) if broken(reason)
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_recognised_through_context() {
        let io = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let error = anyhow::Error::new(HeatlabError::io("writing to", "standard output", io))
            .context("printing the table");
        assert!(is_broken_pipe(&error));
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert!(!is_broken_pipe(&anyhow::Error::new(full)));
    }
}
