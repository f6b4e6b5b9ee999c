//! What the child process reports, one JSON object per line on its standard output, and the
//! verdict the parent makes of it.

use std::time::Duration;

/// How one case compared with the CPU reference.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum CaseOutcome {
    /// Every cell of the field and the Laplacian equal the reference's bit for bit, after
    /// every step.
    Identical,
    /// The first step where an array differed, and where it differed most.
    Differs {
        /// "field" or "Laplacian".
        array: String,
        /// The step (1-based) whose result differed first.
        step: u64,
        /// Row of the largest difference in that step.
        row: usize,
        /// Column of the largest difference in that step.
        col: usize,
        /// The reference's value there.
        expected: f32,
        /// The kernel's value there.
        got: f32,
        /// The largest absolute difference in that step (NaN counts as infinite).
        max_abs_difference: f64,
        /// How many cells differed in that step.
        cells_differing: usize,
    },
    /// The kernel wrote outside its buffers: guard cells around them changed.
    OutOfBounds {
        /// Which buffer's guard was hit ("out", "lapl" or "in").
        buffer: String,
        /// Offset of the first changed guard cell from the buffer's start (negative: before it).
        offset: i64,
        /// The step (1-based) after which it was seen.
        step: u64,
    },
}

/// One case: its name ("7x5 neumann, 4 steps") and outcome.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CaseResult {
    /// What was run.
    pub case: String,
    /// How it compared.
    pub outcome: CaseOutcome,
}

/// How the child's work ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ChildEnding {
    /// Every case ran (each has its line).
    Completed,
    /// The source breaks the contract's defines.
    Contract {
        /// The contract's complaint.
        message: String,
    },
    /// NVRTC rejected the source.
    Compile {
        /// NVRTC's log.
        log: String,
    },
    /// A CUDA call failed while a case ran: the kernel faulted (or the launch was refused).
    Fault {
        /// The case that was running.
        case: String,
        /// The driver's message.
        message: String,
    },
    /// The child could not do its work (no GPU, unreadable input).
    Failed {
        /// Why.
        message: String,
    },
}

/// One line of the child's output.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ChildLine {
    /// The kernel compiled and loaded; cases follow.
    Ready {
        /// The device's name.
        device: String,
    },
    /// A case starts; it must end within `limit_seconds`.
    Start {
        /// Its name.
        case: String,
        /// How long it may take.
        limit_seconds: f64,
    },
    /// A case ended.
    Case(CaseResult),
    /// The end.
    End(ChildEnding),
}

/// The verdict on a user kernel.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Bit-identical to the CPU reference in every case: the simulation may use it.
    Identical {
        /// Every case.
        cases: Vec<CaseResult>,
        /// The GPU it ran on.
        device: String,
        /// How long the validation took.
        elapsed: Duration,
    },
    /// Ran, but some case differed (or wrote out of bounds).
    Differs {
        /// Every case.
        cases: Vec<CaseResult>,
        /// How long the validation took.
        elapsed: Duration,
    },
    /// The source breaks the contract.
    Contract(String),
    /// NVRTC rejected it.
    Compile(String),
    /// The kernel faulted the child's CUDA context.
    Fault {
        /// The case that was running.
        case: String,
        /// The CUDA error.
        message: String,
        /// How long until the fault was reported.
        elapsed: Duration,
    },
    /// A case (or the start) took longer than its limit: the child was killed.
    Timeout {
        /// What was running ("compiling and loading" before the first case).
        case: String,
        /// The limit that passed.
        limit: Duration,
        /// How long until the child was killed.
        elapsed: Duration,
    },
    /// The child ended without a verdict (crashed), or could not work.
    Failed(String),
}

impl Verdict {
    /// Whether the simulation may step with the kernel.
    pub fn is_identical(&self) -> bool {
        matches!(self, Self::Identical { .. })
    }

    /// One line for the user.
    pub fn summary(&self) -> String {
        let secs = |d: &Duration| format!("{:.1} s", d.as_secs_f64());
        match self {
            Self::Identical {
                cases,
                device,
                elapsed,
            } => format!(
                "bit-identical to the CPU reference in all {} cases on {device} ({})",
                cases.len(),
                secs(elapsed)
            ),
            Self::Differs { cases, elapsed } => {
                let differing: Vec<&CaseResult> = cases
                    .iter()
                    .filter(|c| c.outcome != CaseOutcome::Identical)
                    .collect();
                let first = differing
                    .first()
                    .map(|case| describe_case(case))
                    .unwrap_or_default();
                format!(
                    "NOT exact: {} of {} cases differ ({}); first: {first}",
                    differing.len(),
                    cases.len(),
                    secs(elapsed)
                )
            }
            Self::Contract(message) => format!("breaks the contract: {message}"),
            Self::Compile(_) => "NVRTC could not compile it (see the log)".into(),
            Self::Fault {
                case,
                message,
                elapsed,
            } => format!(
                "faulted in case {case} after {}: {message} (only the check's process was affected)",
                secs(elapsed)
            ),
            Self::Timeout {
                case,
                limit,
                elapsed,
            } => format!(
                "no answer: {case} took more than {} and the check's process was killed after {}",
                secs(limit),
                secs(elapsed)
            ),
            Self::Failed(message) => format!("the check could not finish: {message}"),
        }
    }
}

/// A case's outcome in words.
pub fn describe_case(case: &CaseResult) -> String {
    match &case.outcome {
        CaseOutcome::Identical => format!("{}: bit-identical", case.case),
        CaseOutcome::Differs {
            array,
            step,
            row,
            col,
            expected,
            got,
            max_abs_difference,
            cells_differing,
        } => format!(
            "{}: {array} differs after step {step} in {cells_differing} cells, max |difference| \
             {max_abs_difference:.3e} at row {row}, column {col} (expected {expected}, got {got})",
            case.case
        ),
        CaseOutcome::OutOfBounds {
            buffer,
            offset,
            step,
        } => format!(
            "{}: wrote outside `{buffer}` (offset {offset}) in step {step}",
            case.case
        ),
    }
}
