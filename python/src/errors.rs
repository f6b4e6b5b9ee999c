//! heatlab's errors as Python exceptions, with heatlab's messages: `ValueError` for what the
//! caller can fix with other arguments, `RuntimeError` for a device or heatlab itself failing,
//! `MemoryError`, `OSError` for files, and `heatlab.SimulationHalted` (a `RuntimeError`) when a
//! run stops on its own (non-finite values, below absolute zero).

use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::{create_exception, PyErr};

use heatlab_engine::error::HeatlabError;

create_exception!(
    heatlab,
    SimulationHalted,
    PyRuntimeError,
    "A step stopped before its last step: the field went non-finite or a heat problem fell \
     below absolute zero. The message says where; the simulation stands at the last state it \
     reached (the last finite one, when that is known)."
);

/// The Python exception for `error`, its message heatlab's own.
pub fn to_python(error: HeatlabError) -> PyErr {
    let message = error.to_string();
    match error {
        HeatlabError::InvalidInput(_)
        | HeatlabError::Unsupported(_)
        | HeatlabError::StateFile { .. }
        | HeatlabError::OutputCollision { .. }
        | HeatlabError::FolderInUse { .. } => PyValueError::new_err(message),
        HeatlabError::OutOfMemory { .. } => PyMemoryError::new_err(message),
        // With an errno, Python picks the subclass (FileNotFoundError, PermissionError, ...).
        HeatlabError::Io { reason, .. } => match reason.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, message)),
            None => PyOSError::new_err(message),
        },
        HeatlabError::Encode { .. } => PyOSError::new_err(message),
        HeatlabError::NonFinite { .. }
        | HeatlabError::NonFiniteWithin { .. }
        | HeatlabError::BelowAbsoluteZero { .. } => SimulationHalted::new_err(message),
        HeatlabError::NoField
        | HeatlabError::Internal(_)
        | HeatlabError::OnRank { .. }
        | HeatlabError::CudaUnavailable(_)
        | HeatlabError::Cuda { .. }
        | HeatlabError::KernelCompile { .. }
        | HeatlabError::AgreementCheckPanicked
        | HeatlabError::NotConverged { .. }
        | HeatlabError::Cancelled => PyRuntimeError::new_err(message),
    }
}

/// A `ValueError` with `message`.
pub fn invalid(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}
