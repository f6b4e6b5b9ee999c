//! How a caller follows and stops a tutorial run: the phases a run goes through, progress
//! reports, and a cancel flag checked between chunks.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{HeatlabError, Result};

/// The stage a run is in, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum RunPhase {
    /// Drawing the inputs on the CPU.
    GeneratingInputs,
    /// The one-thread CPU version.
    CpuOneThread,
    /// The all-threads CPU version.
    CpuAllThreads,
    /// The GPU with host arrays: upload, kernel, download.
    GpuHostArrays,
    /// The GPU with page-locked host arrays: upload, kernel, download, whole and in chunks.
    GpuPinnedArrays,
    /// The GPU with device-resident arrays: kernel only.
    GpuDeviceResident,
}

impl RunPhase {
    /// Every phase, in the order a run goes through them.
    pub const ALL: [Self; 6] = [
        Self::GeneratingInputs,
        Self::CpuOneThread,
        Self::CpuAllThreads,
        Self::GpuHostArrays,
        Self::GpuPinnedArrays,
        Self::GpuDeviceResident,
    ];
}

impl fmt::Display for RunPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::GeneratingInputs => "generating inputs",
            Self::CpuOneThread => "CPU, one thread",
            Self::CpuAllThreads => "CPU, all threads",
            Self::GpuHostArrays => "GPU, host arrays",
            Self::GpuPinnedArrays => "GPU, pinned host arrays",
            Self::GpuDeviceResident => "GPU, device-resident",
        })
    }
}

/// A progress report: `done` of `total` units (elements or samples, over all repeats) of `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunProgress {
    /// The stage.
    pub phase: RunPhase,
    /// Units done so far in this stage.
    pub done: u64,
    /// Units this stage will do.
    pub total: u64,
}

impl RunProgress {
    /// `done / total` in [0, 1].
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            (self.done as f64 / self.total as f64).min(1.0)
        }
    }
}

static NEVER_CANCELLED: AtomicBool = AtomicBool::new(false);

fn ignore_progress(_: RunProgress) {}

/// How a caller follows and stops a run: a cancel flag checked between chunks, and a progress
/// callback (called from worker threads too, hence `Sync`).
#[derive(Clone, Copy)]
pub struct RunControl<'a> {
    /// When set, the run stops at the next chunk with [`HeatlabError::Cancelled`].
    pub cancel: &'a AtomicBool,
    /// Called after each chunk.
    pub progress: &'a (dyn Fn(RunProgress) + Sync),
}

impl RunControl<'static> {
    /// A control that never cancels and ignores progress.
    pub fn unattended() -> Self {
        Self {
            cancel: &NEVER_CANCELLED,
            progress: &ignore_progress,
        }
    }
}

impl RunControl<'_> {
    /// `Err(Cancelled)` once the cancel flag is set.
    pub fn check(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(HeatlabError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Counts the units of one phase and reports them; shared by the threads of a parallel run.
pub(crate) struct PhaseProgress<'a> {
    control: RunControl<'a>,
    phase: RunPhase,
    done: AtomicU64,
    total: u64,
}

impl<'a> PhaseProgress<'a> {
    pub(crate) fn new(control: RunControl<'a>, phase: RunPhase, total: u64) -> Self {
        (control.progress)(RunProgress {
            phase,
            done: 0,
            total,
        });
        Self {
            control,
            phase,
            done: AtomicU64::new(0),
            total,
        }
    }

    pub(crate) fn check(&self) -> Result<()> {
        self.control.check()
    }

    pub(crate) fn advance(&self, units: u64) {
        let done = self.done.fetch_add(units, Ordering::Relaxed) + units;
        (self.control.progress)(RunProgress {
            phase: self.phase,
            done,
            total: self.total,
        });
    }
}
