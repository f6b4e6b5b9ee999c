//! Printing for the command line without panics: `println!` panics when standard output is a
//! closed pipe (`heatlab ... | head -1`) or a full device (`> /dev/full`); these report instead.
//!
//! A write error comes back as an error naming standard output; [`super::exit::exit_status`]
//! turns a closed pipe into a quiet status 141 and any other into one line and status 1.

use std::io::Write;

use heatlab_engine::error::HeatlabError;

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
