//! Printing for the command line without panics: `println!` panics when standard output is a
//! closed pipe (`heatlab ... | head -1`) or a full device (`> /dev/full`); these report instead.
//!
//! A write error comes back as an error naming standard output; [`super::exit::exit_status`]
//! turns a closed pipe into a quiet status 141 and any other into one line and status 1.
//!
//! Both go through [`for_terminal`] (in the engine, which the app's notes share): titles,
//! names, paths and values from files reach these messages, and a control character in one
//! (an ESC sequence recolouring the terminal or setting its title) is shown as a visible escape
//! instead of reaching the terminal. The program's own text has no control character but the
//! newline, which is kept.

use std::io::Write;

use heatlab_engine::error::{for_terminal, HeatlabError};

/// Writes `text` to standard output and flushes it; a failure is an error naming standard
/// output, as is a standard output closed when heatlab started (`>&-`: the docs promise
/// status 1 on a write error, and nothing would be written).
pub fn print(text: &str) -> Result<(), HeatlabError> {
    if let Some(closed) = heatlab_engine::export::stdout::closed_at_start() {
        return Err(HeatlabError::io("writing to", "standard output", closed));
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(for_terminal(text).as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| HeatlabError::io("writing to", "standard output", e))
}

/// Writes `heatlab: <text>` and a newline to standard error. Errors are ignored: there is no
/// other place to report them.
pub fn note(text: &str) {
    // Trailing blank lines (a library's message ending in a newline) are not the message's.
    let text = text.trim_end();
    let _ = writeln!(std::io::stderr().lock(), "heatlab: {}", for_terminal(text));
}
