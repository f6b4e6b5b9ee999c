//! `heatlab kernel max|geometry|sin-exp|row-sums|reduce|device`: the GPU basics' lessons, run
//! on the CPU and the GPU, as a table or as one JSON object.

use std::fmt;

use anyhow::Context;

use super::interrupt::{Interrupt, Interrupted};
use super::kernel::KernelArgs;
use super::output::{note, print};
use heatlab_engine::error::HeatlabError;
use heatlab_engine::tutorial::basics::geometry::{Dimensions, GeometryOptions};
use heatlab_engine::tutorial::basics::maximum::MaximumOptions;
use heatlab_engine::tutorial::basics::{
    open_basics_gpu, BasicsLesson, BasicsOutcome, BasicsRequest,
};
use heatlab_engine::tutorial::{RunControl, TutorialKernel};

pub mod bench;
mod table;

/// A kernel `heatlab kernel` runs: a tutorial kernel or a lesson of the GPU basics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelName {
    /// hidden-layer, gaussian, mc-pi.
    Tutorial(TutorialKernel),
    /// max, geometry, sin-exp, row-sums, reduce, device.
    Basics(BasicsLesson),
}

impl fmt::Display for KernelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tutorial(kernel) => kernel.fmt(f),
            Self::Basics(lesson) => lesson.fmt(f),
        }
    }
}

impl std::str::FromStr for KernelName {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let all: Vec<Self> = TutorialKernel::ALL
            .into_iter()
            .map(Self::Tutorial)
            .chain(BasicsLesson::ALL.into_iter().map(Self::Basics))
            .collect();
        heatlab_engine::choice::parse_choice(&all, text, "kernel")
    }
}

/// The options of the GPU basics' lessons.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BasicsArgs {
    /// max: cube sides to climb the ladder at, e.g. 32,64,128,256 (default 32,64,128,192,256).
    #[arg(long, value_delimiter = ',')]
    pub sides: Vec<usize>,
    /// geometry: 1 (an array of --n elements) or 2 (--rows x --cols).
    #[arg(long, default_value_t = 1)]
    pub dims: u8,
    /// geometry: threads per block, `256` or `16x16` (default: the notebook's).
    #[arg(long)]
    pub block: Option<String>,
    /// geometry: blocks in the grid, `256` or `16x16` (default: just enough to cover the array).
    #[arg(long)]
    pub grid: Option<String>,
    /// geometry: leave out the `if i < n` guard (writes past the end are caught and counted).
    #[arg(long)]
    pub unguarded: bool,
    /// geometry, 2-D: let the grid's x walk the columns (coalesced) instead of the rows.
    #[arg(long)]
    pub x_along_cols: bool,
    /// geometry (2-D) and row-sums: rows (default 256 and 1000).
    #[arg(long)]
    pub rows: Option<u32>,
    /// geometry (2-D) and row-sums: columns (default 256 and 1000).
    #[arg(long)]
    pub cols: Option<u32>,
}

impl BasicsArgs {
    /// Whether any of these options was given.
    pub fn is_set(&self) -> bool {
        !self.sides.is_empty()
            || self.dims != 1
            || self.block.is_some()
            || self.grid.is_some()
            || self.unguarded
            || self.x_along_cols
            || self.rows.is_some()
            || self.cols.is_some()
    }
}

/// Parses `256` or `16x16` into (x, y).
fn parse_pair(text: &str, what: &str) -> Result<[u32; 2], HeatlabError> {
    let bad = || HeatlabError::InvalidInput(format!("--{what} '{text}' is not N or NxM"));
    let mut parts = text
        .split(['x', 'X'])
        .map(|part| part.trim().parse::<u32>());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(x)), None, None) => Ok([x, 1]),
        (Some(Ok(x)), Some(Ok(y)), None) => Ok([x, y]),
        _ => Err(bad()),
    }
}

/// The run that the arguments ask for, refused with a message before any work.
fn request(lesson: BasicsLesson, args: &KernelArgs, repeats: u32) -> anyhow::Result<BasicsRequest> {
    let basics = &args.basics;
    if args.mean.is_some() || args.sigma.is_some() || args.npy.is_some() || args.timings.is_some() {
        return Err(HeatlabError::InvalidInput(format!(
            "--mean, --sigma, --npy and --timings are for the tutorial kernels, not {lesson}"
        ))
        .into());
    }
    let seed = args.seed;
    let mut request = BasicsRequest::notebook(lesson, repeats);
    match &mut request {
        BasicsRequest::Maximum(options) => {
            if args.n.is_some() {
                return Err(HeatlabError::InvalidInput("max takes --sides, not --n".into()).into());
            }
            *options = MaximumOptions {
                sides: if basics.sides.is_empty() {
                    options.sides.clone()
                } else {
                    basics.sides.clone()
                },
                seed,
                repeats,
            };
        }
        BasicsRequest::Geometry(options) => *options = geometry_options(args, repeats)?,
        BasicsRequest::SinExp { n, .. } => *n = args.n.unwrap_or(*n),
        BasicsRequest::RowSums {
            rows,
            cols,
            seed: matrix_seed,
            ..
        } => {
            *rows = basics.rows.unwrap_or(*rows);
            *cols = basics.cols.unwrap_or(*cols);
            *matrix_seed = seed;
        }
        BasicsRequest::Reduce {
            n,
            seed: values_seed,
            ..
        } => {
            *n = args.n.unwrap_or(*n);
            *values_seed = seed;
        }
        BasicsRequest::Device => {}
    }
    Ok(request)
}

/// The launch of `heatlab kernel geometry`.
fn geometry_options(args: &KernelArgs, repeats: u32) -> anyhow::Result<GeometryOptions> {
    let basics = &args.basics;
    let mut options = match basics.dims {
        1 => GeometryOptions::notebook_1d(),
        2 => GeometryOptions::notebook_2d(),
        other => {
            return Err(
                HeatlabError::InvalidInput(format!("--dims must be 1 or 2, not {other}")).into(),
            )
        }
    };
    options.repeats = repeats;
    options.guarded = !basics.unguarded;
    options.x_along_rows = !basics.x_along_cols;
    if let Some(n) = args.n {
        options.n = n;
    }
    options.rows = basics.rows.unwrap_or(options.rows);
    options.cols = basics.cols.unwrap_or(options.cols);
    if let Some(block) = &basics.block {
        options.block = parse_pair(block, "block")?;
    }
    options.grid = match &basics.grid {
        Some(grid) => parse_pair(grid, "grid")?,
        None => options.fitting_grid(),
    };
    if options.dimensions == Dimensions::One && (options.block[1] != 1 || options.grid[1] != 1) {
        return Err(HeatlabError::InvalidInput(
            "a 1-D launch takes one number for --block and --grid (use --dims 2 for NxM)".into(),
        )
        .into());
    }
    options.validate()?;
    Ok(options)
}

/// What `--json` prints.
#[derive(Debug, serde::Serialize)]
struct JsonReport<'a> {
    heatlab_version: &'static str,
    #[serde(flatten)]
    outcome: &'a BasicsOutcome,
    note: Option<String>,
}

/// Runs one lesson of the GPU basics for `heatlab kernel`.
pub fn run(
    lesson: BasicsLesson,
    args: &KernelArgs,
    repeats: u32,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    let request = request(lesson, args, repeats)?;
    let (gpu, reason) = open_basics_gpu(args.backend)?;
    let gpu_note = reason.map(|reason| format!("using the CPU only: {reason}"));
    if let Some(text) = &gpu_note {
        note(text);
    }
    if lesson == BasicsLesson::Device && gpu.is_none() {
        return Err(HeatlabError::Unsupported(format!(
            "the device lesson needs a GPU ({})",
            gpu_note.as_deref().unwrap_or("the CPU was chosen")
        ))
        .into());
    }
    let control = RunControl {
        cancel: interrupt.flag(),
        progress: &|_| {},
    };
    let outcome = request.run(gpu.as_ref(), control).map_err(|error| {
        match (&error, interrupt.requested()) {
            (HeatlabError::Cancelled, Some(signal)) => anyhow::Error::from(Interrupted(signal)),
            _ => error.into(),
        }
    })?;
    if args.json {
        let report = JsonReport {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            outcome: &outcome,
            note: gpu_note,
        };
        let text = serde_json::to_string_pretty(&report).context("encoding the JSON report")?;
        print(&format!("{text}\n"))?;
    } else {
        print(&table::format(&outcome, gpu_note.as_deref()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_pairs_parse() {
        assert_eq!(
            "sin-exp".parse::<KernelName>().ok(),
            Some(KernelName::Basics(BasicsLesson::SinExp))
        );
        assert_eq!(
            "mc-pi".parse::<KernelName>().ok(),
            Some(KernelName::Tutorial(TutorialKernel::MonteCarloPi))
        );
        assert!("maximum".parse::<KernelName>().is_err());
        assert_eq!(parse_pair("16x8", "block").ok(), Some([16, 8]));
        assert_eq!(parse_pair("256", "block").ok(), Some([256, 1]));
        assert!(parse_pair("16x", "block").is_err());
    }
}
