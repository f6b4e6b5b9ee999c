//! How a command's result becomes the process's exit status, after the message the user needs:
//! 0 on success; 130/143 after a SIGINT/SIGTERM; 141, silently, when an output pipe closed (as
//! a process killed by SIGPIPE); 1 with `heatlab: error: ...` otherwise.
//!
//! It sits above [`super::interrupt`] and [`super::output`], which know nothing of it: the
//! signal watcher prints through `output`, and only this mapping needs to know both.

use std::process::ExitCode;

use super::interrupt::Interrupted;
use super::output::note;
use heatlab_engine::error::HeatlabError;

/// Exit status of a command whose output pipe was closed: 128 + SIGPIPE, as the shell reports
/// a process that the signal killed.
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// The exit status for a command's result, after printing what the user needs to see
/// (the conventions are in the module's documentation).
pub fn exit_status(result: anyhow::Result<()>) -> ExitCode {
    ExitCode::from(report(result))
}

/// Says how `result` ended (nothing for a success or a closed pipe) and returns the exit
/// status that [`exit_status`] gives it.
pub fn report(result: anyhow::Result<()>) -> u8 {
    let Err(error) = result else {
        return 0;
    };
    if let Some(Interrupted(signal)) = error.chain().find_map(|e| e.downcast_ref::<Interrupted>()) {
        note(&format!("{error:#}"));
        return signal.exit_status();
    }
    if is_broken_pipe(&error) {
        return BROKEN_PIPE_STATUS;
    }
    note(&format!("error: {error:#}"));
    1
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
