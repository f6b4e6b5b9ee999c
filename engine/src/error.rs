//! The library's error type. The binary wraps it in `anyhow` at the top.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Everything that can go wrong inside heatlab, with a message a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum HeatlabError {
    /// A value the user typed or passed (a flag, a field in the app, a file they named) is out of
    /// range or malformed. Only for what a person can fix by giving another value.
    #[error("{0}")]
    InvalidInput(String),
    /// An operation needs a field on the backend and none has been uploaded yet.
    #[error("no field has been uploaded")]
    NoField,
    /// What was asked cannot be done here, whatever the user types: a kernel that cannot step a
    /// field of this shape, an array larger than this machine can address.
    #[error("{0}")]
    Unsupported(String),
    /// One of heatlab's own invariants did not hold: a bug, reported instead of a panic.
    #[error("internal error: {0}")]
    Internal(String),
    /// Another rank of a field split over ranks failed; what it said.
    #[error("rank {rank}: {reason}")]
    OnRank {
        /// The rank that failed.
        rank: usize,
        /// Its error, as it said it.
        reason: String,
    },
    /// CUDA was asked for but cannot be used.
    #[error("CUDA is not available: {0}")]
    CudaUnavailable(CudaUnavailable),
    /// The multigrid solver did not reach its tolerance within its cycle limit.
    #[error(
        "the solver did not converge in {cycles} iterations: the residual reached {residual:.3e} W/m \
         and the estimated error {estimated_error:.3e} °C of a {span:.3e} °C span; raise \
         --max-iterations or loosen --tolerance"
    )]
    NotConverged {
        /// Cycles taken.
        cycles: u32,
        /// The max residual reached, W/m.
        residual: f64,
        /// The estimated error left, °C.
        estimated_error: f64,
        /// The temperature span, °C.
        span: f64,
    },
    /// A CUDA call failed after the device was set up.
    #[error("CUDA error while {context}: {message}")]
    Cuda {
        /// What heatlab was doing.
        context: String,
        /// The driver's message.
        message: String,
    },
    /// NVRTC rejected a kernel source; `log` is its compile log.
    #[error("NVRTC could not compile {kernel}:\n{log}")]
    KernelCompile {
        /// The `.cu` file.
        kernel: String,
        /// NVRTC's log.
        log: String,
    },
    /// A buffer does not fit in the memory that is there.
    #[error(
        "a {what} needs {needed_mib:.1} MiB but only {available_mib:.1} MiB {place} memory is free"
    )]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// How much it needed.
        needed_mib: f64,
        /// How much there is.
        available_mib: f64,
        /// "GPU" or "host".
        place: &'static str,
    },
    /// The field went NaN or infinite.
    #[error("values became non-finite at step {step} (first at row {row}, column {col})")]
    NonFinite {
        /// The step whose result was first non-finite.
        step: u64,
        /// Row of the first non-finite cell.
        row: usize,
        /// Column of the first non-finite cell.
        col: usize,
    },
    /// The field went NaN or infinite somewhere in a stretch of steps checked only at its end
    /// (a scheme that keeps a finite field finite, overflowed by its sources).
    #[error(
        "values became non-finite between step {from} and step {to} (first at row {row}, column \
         {col})"
    )]
    NonFiniteWithin {
        /// The last step known finite.
        from: u64,
        /// The step found non-finite.
        to: u64,
        /// Row of the first non-finite cell.
        row: usize,
        /// Column of the first non-finite cell.
        col: usize,
    },
    /// A heat problem's field fell below absolute zero: a heater or a side draws out more
    /// heat than the cells hold.
    #[error(
        "the temperature fell below absolute zero (-273.15 °C) by step {step}: the coldest cell \
         is at {coldest} °C (a heater or a side takes out more heat than the cells hold)"
    )]
    BelowAbsoluteZero {
        /// The step at which the field was found so (the end of a chunk).
        step: u64,
        /// The coldest cell's temperature, °C.
        coldest: f32,
    },
    /// Reading or writing a file failed. The message includes the operating system's reason
    /// (so it is not repeated as a separate cause).
    #[error("{action} {path}: {reason}")]
    Io {
        /// What heatlab was doing ("writing", "creating folder", ...).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        reason: std::io::Error,
    },
    /// Encoding an image failed.
    #[error("encoding {path}: {message}")]
    Encode {
        /// The file.
        path: PathBuf,
        /// The encoder's message.
        message: String,
    },
    /// A file given as a saved state is not one this heatlab can read.
    #[error("cannot open the state file {path}: {reason}")]
    StateFile {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        reason: StateFileError,
    },
    /// The background agreement check's thread panicked (a bug in heatlab).
    #[error("the agreement check stopped unexpectedly")]
    AgreementCheckPanicked,
    /// A long job was cancelled by the user.
    #[error("cancelled")]
    Cancelled,
    /// A folder is the output folder of a live `heatlab run` of another process: nothing else
    /// writes there while it runs.
    #[error(
        "{} is being written by a live heatlab run ({holder}); wait for it to end or choose \
         another folder",
        folder.display()
    )]
    FolderInUse {
        /// The folder.
        folder: PathBuf,
        /// The run that holds it.
        holder: RunHolder,
    },
    /// A file that heatlab writes was named as another output: it would be replaced, or would
    /// replace the output.
    #[error("cannot write {}: {why}", path.display())]
    OutputCollision {
        /// The file named.
        path: PathBuf,
        /// Whose file it is.
        why: String,
    },
}

/// The `heatlab run` that holds a folder, as its lock file names it (what could be read of it;
/// see `export::live_run`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunHolder {
    /// Its process id.
    pub pid: Option<u32>,
    /// When it claimed the folder (RFC 3339, UTC).
    pub started: Option<String>,
    /// Its command line.
    pub command: Option<String>,
}

impl std::fmt::Display for RunHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "pid {pid}")?,
            None => write!(f, "pid unknown")?,
        }
        if let Some(started) = &self.started {
            write!(f, ", started {started}")?;
        }
        Ok(())
    }
}

/// Why a file is not a state heatlab can read.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// The file does not start with [`MAGIC`].
    #[error("it is not a heatlab state file (it does not start with heatlab's mark)")]
    WrongMagic,
    /// A newer heatlab wrote it.
    #[error(
        "it was saved by a newer heatlab (state format version {found}; this heatlab {ours} \
         reads versions up to {supported}): update heatlab to open it"
    )]
    NewerVersion {
        /// The file's format version.
        found: u32,
        /// This heatlab's version.
        ours: &'static str,
        /// The newest format version this heatlab reads.
        supported: u32,
    },
    /// The file is shorter than its header says.
    #[error("it is truncated: {found} bytes where the header needs {expected}")]
    Truncated {
        /// Bytes the header implies.
        expected: u64,
        /// Bytes in the file.
        found: u64,
    },
    /// The file is longer than its header says.
    #[error("it has {extra} bytes after its end: not a file heatlab wrote")]
    TrailingBytes {
        /// Bytes past the end.
        extra: u64,
    },
    /// The header is not what heatlab writes.
    #[error("its header is damaged: {0}")]
    BadHeader(String),
    /// The checksum does not match: some bytes changed since it was written.
    #[error("it is corrupt: its checksum does not match its contents")]
    ChecksumMismatch,
    /// A field it holds has NaN or infinite values: nothing can be stepped from it.
    #[error("its {field} holds {cells} non-finite values (of {total} cells)")]
    NonFinite {
        /// "field" (the current one) or "initial field".
        field: &'static str,
        /// The cells that are NaN or infinite.
        cells: usize,
        /// The cells of the field.
        total: usize,
    },
    /// Its heat problem, intact, cannot be stepped (a time step above its stability limit).
    #[error("its heat problem cannot be stepped: {0}")]
    Unsteppable(String),
}

/// Why CUDA cannot be used on this machine, for the user (and the GUI, which shows it beside
/// the backend selector without parsing text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaUnavailable {
    /// `libcuda` could not be loaded: no NVIDIA driver.
    DriverMissing,
    /// `libnvrtc` could not be loaded: the CUDA toolkit's runtime compiler is not installed.
    NvrtcMissing,
    /// The driver is there but no GPU could be opened; the driver's message.
    NoUsableGpu(String),
    /// Opening the GPU or compiling the kernels failed after the libraries were found.
    SetupFailed(String),
}

impl std::fmt::Display for CudaUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::DriverMissing => {
                f.write_str("the NVIDIA driver library (libcuda) was not found")
            }
            Self::NvrtcMissing => f.write_str(
                "the NVRTC runtime compiler (libnvrtc) was not found; install the CUDA toolkit's nvrtc",
            ),
            Self::NoUsableGpu(reason) => write!(f, "no usable GPU: {reason}"),
            Self::SetupFailed(reason) => f.write_str(reason),
        }
    }
}

impl CudaUnavailable {
    /// A few words for a narrow place (a table cell).
    pub fn summary(&self) -> &'static str {
        match self {
            Self::DriverMissing => "no NVIDIA driver",
            Self::NvrtcMissing => "no NVRTC",
            Self::NoUsableGpu(_) => "no usable GPU",
            Self::SetupFailed(_) => "GPU setup failed",
        }
    }

    /// The reason behind any error of opening CUDA: the typed reason when the libraries or
    /// the GPU are missing, otherwise the error's own message.
    pub fn from_error(error: &HeatlabError) -> Self {
        match error {
            HeatlabError::CudaUnavailable(reason) => reason.clone(),
            other => Self::SetupFailed(other.to_string()),
        }
    }
}

impl HeatlabError {
    /// An `Io` error for `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            reason: source,
        }
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = HeatlabError> = std::result::Result<T, E>;

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
