//! Printing for the command line without panics: `println!` panics when standard output is a
//! closed pipe (`heatlab ... | head -1`) or a full device (`> /dev/full`); these report instead.
//!
//! A write error comes back as an error naming standard output; [`super::exit::exit_status`]
//! turns a closed pipe into a quiet status 141 and any other into one line and status 1.
//!
//! Both go through [`for_terminal`]: titles, names, paths and values from files reach these
//! messages, and a control character in one (an ESC sequence recolouring the terminal or
//! setting its title) is shown as a visible escape instead of reaching the terminal. The
//! program's own text has no control character but the newline, which is kept.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

use heatlab_engine::error::HeatlabError;

/// Writes `text` to standard output and flushes it; a failure is an error naming standard output.
pub fn print(text: &str) -> Result<(), HeatlabError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(for_terminal(text).as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| HeatlabError::io("writing to", "standard output", e))
}

/// Writes `heatlab: <text>` and a newline to standard error. Errors are ignored: there is no
/// other place to report them.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "heatlab: {}", for_terminal(text));
}

/// `text` as it may reach a terminal: every control character (C0, DEL, C1) but the newline
/// becomes a visible escape (`\e` for ESC, `\x07` for the other C0 and DEL, `\u{9b}` for C1);
/// other text, any Unicode, is left alone.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c) {
            shown.push(c);
        } else if c == '\u{1b}' {
            shown.push_str("\\e");
        } else if u32::from(c) < 0x80 {
            let _ = write!(shown, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(shown)
}

fn needs_escape(c: char) -> bool {
    c.is_control() && c != '\n'
}

#[cfg(test)]
mod tests {
    use super::for_terminal;

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(for_terminal("\u{1b}[31mred"), "\\e[31mred");
        assert_eq!(for_terminal("\u{1b}]0;title\u{7}"), "\\e]0;title\\x07");
        assert_eq!(
            for_terminal("a\tb\rc\u{7f}\u{9b}2J"),
            "a\\x09b\\x0dc\\x7f\\u{9b}2J"
        );
        assert_eq!(for_terminal("line\nnext"), "line\nnext");
        assert_eq!(for_terminal("Wärme — 熱 🔥"), "Wärme — 熱 🔥");
    }
}
