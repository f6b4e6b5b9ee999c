//! The library's error type. The binary wraps it in `anyhow` at the top.

use std::path::PathBuf;

/// Everything that can go wrong inside heatlab, with a message a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum HeatlabError {
    /// A parameter the user gave is out of range or malformed.
    #[error("{0}")]
    InvalidInput(String),
    /// CUDA was asked for but cannot be used; the text says why.
    #[error("CUDA is not available: {0}")]
    CudaUnavailable(String),
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
    /// The background agreement check's thread panicked (a bug in heatlab).
    #[error("the agreement check stopped unexpectedly")]
    AgreementCheckPanicked,
    /// A long job was cancelled by the user.
    #[error("cancelled")]
    Cancelled,
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
