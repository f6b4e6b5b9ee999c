//! What travels between the tutorial panels and their thread: [`Job`]s one way, [`TutorialEvent`]s
//! and the [`JobProgress`] of the running job the other. Only small summaries travel back (a
//! histogram, a few thousand points), never the arrays of size n.

use std::path::PathBuf;

use crate::error::{CudaUnavailable, HeatlabError};
use crate::tutorial::gaussian::GaussianParams;
use crate::tutorial::mc_pi::{PiEstimate, PiPoint};
use crate::tutorial::{ArrayStats, KernelRun, RunOptions, RunProgress, TutorialKernel};

/// Bins of the hidden layer's histogram.
pub const HISTOGRAM_BINS: usize = 60;
/// Points of the Gaussian sent back for the plot of the sampled curve.
pub const CURVE_SAMPLES: usize = 3000;

/// What the UI asks the tutorial thread to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// One run of a kernel.
    Run {
        /// Which kernel.
        kernel: TutorialKernel,
        /// Size, seed, repeats and CPU versions.
        options: RunOptions,
        /// The Gaussian's parameters (ignored by the other kernels).
        params: GaussianParams,
    },
    /// The kernel over several sizes, one short run each.
    Sweep {
        /// Which kernel.
        kernel: TutorialKernel,
        /// The sizes, smallest first.
        sizes: Vec<u64>,
        /// Seed, repeats and CPU versions of every size (`n` is replaced).
        options: RunOptions,
        /// The Gaussian's parameters (ignored by the other kernels).
        params: GaussianParams,
    },
    /// Show a run recorded elsewhere (`heatlab kernel --json`, say on a GPU machine): its
    /// result plots are recomputed on this CPU from the same seed.
    Recorded {
        /// The recorded run.
        run: Box<KernelRun>,
        /// The file it came from.
        source: PathBuf,
    },
}

impl Job {
    /// The kernel the job runs.
    pub fn kernel(&self) -> TutorialKernel {
        match self {
            Self::Run { kernel, .. } | Self::Sweep { kernel, .. } => *kernel,
            Self::Recorded { run, .. } => run.kernel,
        }
    }

    /// Whether this is a sweep.
    pub fn is_sweep(&self) -> bool {
        matches!(self, Self::Sweep { .. })
    }
}

/// The results of a run that the panel draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Visual {
    /// The hidden layer's activations as a histogram over `[low, high]`.
    Histogram {
        /// Lower end of the first bin.
        low: f32,
        /// Upper end of the last bin.
        high: f32,
        /// Count of each bin.
        counts: Vec<u64>,
        /// Minimum, maximum and mean of the activations.
        stats: ArrayStats,
    },
    /// The first points of the Gaussian PDF as computed (x, pdf).
    Curve {
        /// Mean and sigma.
        params: GaussianParams,
        /// The sampled points.
        samples: Vec<[f64; 2]>,
    },
    /// The Monte Carlo estimate and the first sample points.
    Pi {
        /// The estimate with its standard error.
        estimate: PiEstimate,
        /// The first few thousand points.
        points: Vec<PiPoint>,
    },
}

/// A finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Timings, agreement and summary.
    pub run: KernelRun,
    /// What the results plots draw.
    pub visual: Visual,
    /// The file of a recorded run; `None` for a run on this machine.
    pub recorded: Option<PathBuf>,
}

/// Why a job ended without a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The user pressed Cancel.
    pub cancelled: bool,
    /// What went wrong, for people (includes the size needed when memory ran short).
    pub message: String,
}

impl From<HeatlabError> for Failure {
    fn from(error: HeatlabError) -> Self {
        Self {
            cancelled: matches!(error, HeatlabError::Cancelled),
            message: error.to_string(),
        }
    }
}

/// What the tutorial thread reports.
#[derive(Debug, Clone)]
pub enum TutorialEvent {
    /// The GPU it opened (its name), or why it runs on the CPU only.
    Gpu {
        /// The GPU's name.
        name: Option<String>,
        /// Why there is no GPU (none when the CPU was chosen).
        unavailable: Option<CudaUnavailable>,
    },
    /// A run ended.
    RunFinished {
        /// Which kernel.
        kernel: TutorialKernel,
        /// The result, or why there is none.
        result: std::result::Result<Box<Outcome>, Failure>,
    },
    /// One size of a sweep is done.
    SweepPoint {
        /// Which kernel.
        kernel: TutorialKernel,
        /// The run at that size.
        run: Box<KernelRun>,
    },
    /// A sweep ended (all sizes, or stopped early by `failure`).
    SweepFinished {
        /// Which kernel.
        kernel: TutorialKernel,
        /// Why it stopped early.
        failure: Option<Failure>,
    },
}

/// Where the running job stands, shared with the UI.
#[derive(Debug, Clone, PartialEq)]
pub struct JobProgress {
    /// The latest report of the library.
    pub progress: RunProgress,
    /// For a sweep: the size being run, its index and the number of sizes.
    pub sweep: Option<(u64, usize, usize)>,
}

impl JobProgress {
    /// A line for the progress bar.
    pub fn text(&self) -> String {
        match self.sweep {
            Some((n, index, count)) => format!(
                "sweep {}/{count}, n = {}: {}",
                index + 1,
                super::format_count(n),
                self.progress.phase
            ),
            None => self.progress.phase.to_string(),
        }
    }

    /// Progress in [0, 1]: of the phase for a run, of the whole sweep for a sweep.
    pub fn fraction(&self) -> f32 {
        let phase = self.progress.fraction();
        let fraction = match self.sweep {
            Some((_, index, count)) => (index as f64 + phase) / count.max(1) as f64,
            None => phase,
        };
        fraction as f32
    }
}
