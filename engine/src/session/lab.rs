//! The Kernel lab's thread (a [`Worker`]): compiles with NVRTC for the device's architecture
//! and runs validations in a child process, so that the window never waits for either.

use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use crate::compute::cuda::user_kernel::compile_user_kernel;
use crate::compute::cuda::CudaDevice;
use crate::compute::StepParams;
use crate::error::HeatlabError;
use crate::grid::Grid;
use crate::lab::{validate_in_child, ChildLimits, ValidationJob, Verdict};

use crate::session::worker::{Notify, Received, Worker, WorkerContext};

/// How long a validation waits for the simulation's copy of the field.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(10);

/// What the lab asks of its thread.
#[derive(Debug)]
pub enum LabJob {
    /// Compile this source.
    Compile(String),
    /// Validate this source in a child process, against the field that arrives on the
    /// receiver (or against the small fields alone if none comes).
    Validate {
        /// The source.
        source: String,
        /// The simulation's answer: its field and step parameters.
        field: Receiver<Result<(Grid, StepParams), String>>,
    },
}

/// Why a compile did not give a module.
#[derive(Debug, Clone, PartialEq)]
pub enum CompileFailure {
    /// NVRTC's log.
    Nvrtc(String),
    /// No NVIDIA GPU with NVRTC here (or it could not be opened).
    Unavailable(String),
}

/// What the lab's thread reports.
#[derive(Debug, Clone)]
pub enum LabEvent {
    /// A compile of `source` ended; on success, the architecture it was compiled for.
    Compiled {
        /// The source compiled.
        source: String,
        /// The outcome.
        result: Result<(i32, i32), CompileFailure>,
        /// How long NVRTC took.
        took: Duration,
    },
    /// A validation of `source` ended.
    Validated {
        /// The source validated.
        source: String,
        /// The verdict.
        verdict: Verdict,
        /// A note on the field it used ("no field": only the small fields).
        field_note: Option<String>,
    },
}

/// The lab's handle on its thread.
pub type LabWorker = Worker<LabJob, LabEvent, ()>;

/// The program whose hidden `lab-check` subcommand validates: `HEATLAB_BIN` when set (tests
/// run from a test executable), else this executable.
pub fn checker_program() -> std::io::Result<PathBuf> {
    match std::env::var_os("HEATLAB_BIN") {
        Some(path) => Ok(PathBuf::from(path)),
        None => std::env::current_exe(),
    }
}

/// Starts the lab's thread.
pub fn spawn(notify: Notify) -> std::io::Result<LabWorker> {
    Worker::spawn("heatlab-lab", notify, run)
}

fn run(ctx: WorkerContext<LabJob, LabEvent, ()>) {
    // The device's architecture, asked once (NVRTC compiles for it; nothing runs on it here).
    let mut architecture: Option<Result<(i32, i32), String>> = None;
    loop {
        match ctx.recv() {
            Received::Shutdown => return,
            Received::Nothing => {}
            Received::Command(LabJob::Compile(source)) => {
                let arch = architecture
                    .get_or_insert_with(|| {
                        CudaDevice::open()
                            .map(|device| device.compute_capability())
                            .map_err(|error| error.to_string())
                    })
                    .clone();
                let started = std::time::Instant::now();
                let result = match arch {
                    Err(reason) => Err(CompileFailure::Unavailable(reason)),
                    Ok(arch) => match compile_user_kernel(&source, arch) {
                        Ok(_) => Ok(arch),
                        Err(HeatlabError::KernelCompile { log, .. }) => {
                            Err(CompileFailure::Nvrtc(log))
                        }
                        Err(error) => Err(CompileFailure::Unavailable(error.to_string())),
                    },
                };
                ctx.emit(LabEvent::Compiled {
                    source,
                    result,
                    took: started.elapsed(),
                });
            }
            Received::Command(LabJob::Validate { source, field }) => {
                let (current, params, field_note) = match field.recv_timeout(SNAPSHOT_WAIT) {
                    Ok(Ok((grid, params))) => (Some(grid), params, None),
                    Ok(Err(reason)) => (
                        None,
                        StepParams::default(),
                        Some(format!("small fields only: {reason}")),
                    ),
                    Err(_) => (
                        None,
                        StepParams::default(),
                        Some("small fields only: the simulation did not answer".into()),
                    ),
                };
                let verdict = match checker_program() {
                    Ok(program) => validate_in_child(
                        &program,
                        &ValidationJob {
                            source: source.clone(),
                            current,
                            params,
                        },
                        ChildLimits::default(),
                    ),
                    Err(error) => Verdict::Failed(format!("cannot find heatlab's binary: {error}")),
                };
                ctx.emit(LabEvent::Validated {
                    source,
                    verdict,
                    field_note,
                });
            }
        }
    }
}
