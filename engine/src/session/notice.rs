//! The one notice type: a message with a level, as the session's threads report it and the app
//! shows it (the app colours it by its level).

/// How serious a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something done.
    Info,
    /// Something to know.
    Warning,
    /// Something failed.
    Error,
}

/// A message for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// How serious.
    pub level: Level,
    /// What to say.
    pub text: String,
}

impl Notice {
    /// A notice of `level`.
    pub fn new(level: Level, text: impl Into<String>) -> Self {
        Self {
            level,
            text: text.into(),
        }
    }
}
