//! One run of a lesson, as the command line and the app ask for it, and its outcome.

use super::geometry::{GeometryOptions, GeometryOutcome};
use super::maximum::{MaximumLadder, MaximumOptions};
use super::{device, geometry, maximum, reduce, row_sums, sin_exp, BasicsGpu, BasicsLesson};
use super::{
    device::DeviceReport, reduce::ReduceReport, row_sums::RowSumsReport, sin_exp::SinExpReport,
};
use crate::error::{HeatlabError, Result};
use crate::tutorial::RunControl;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "lesson", rename_all = "kebab-case")]
pub enum BasicsRequest {
    /// The maximum ladder.
    #[serde(rename = "max")]
    Maximum(MaximumOptions),
    /// One launch of an increment kernel.
    Geometry(GeometryOptions),
    /// sin(x) * exp(y) over n elements.
    SinExp {
        /// Elements.
        n: u64,
        /// Timed runs.
        repeats: u32,
    },
    /// Row sums of a rows x cols matrix.
    RowSums {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
        /// Seed of the matrix.
        seed: u64,
        /// Timed runs.
        repeats: u32,
    },
    /// Sum and product of n values.
    Reduce {
        /// Elements.
        n: u64,
        /// Seed of the values.
        seed: u64,
        /// Timed runs.
        repeats: u32,
    },
    /// The device's figures.
    Device,
}

impl BasicsRequest {
    /// The notebook's run of `lesson`, with `repeats` timed runs.
    pub fn notebook(lesson: BasicsLesson, repeats: u32) -> Self {
        match lesson {
            BasicsLesson::Maximum => Self::Maximum(MaximumOptions {
                repeats,
                ..MaximumOptions::default()
            }),
            BasicsLesson::Geometry => Self::Geometry(GeometryOptions {
                repeats,
                ..GeometryOptions::notebook_1d()
            }),
            BasicsLesson::SinExp => Self::SinExp {
                n: sin_exp::NOTEBOOK_N,
                repeats,
            },
            BasicsLesson::RowSums => Self::RowSums {
                rows: row_sums::NOTEBOOK_SIDE,
                cols: row_sums::NOTEBOOK_SIDE,
                seed: 42,
                repeats,
            },
            BasicsLesson::Reduce => Self::Reduce {
                n: reduce::NOTEBOOK_N,
                seed: 42,
                repeats,
            },
            BasicsLesson::Device => Self::Device,
        }
    }

    /// The lesson this runs.
    pub fn lesson(&self) -> BasicsLesson {
        match self {
            Self::Maximum(_) => BasicsLesson::Maximum,
            Self::Geometry(_) => BasicsLesson::Geometry,
            Self::SinExp { .. } => BasicsLesson::SinExp,
            Self::RowSums { .. } => BasicsLesson::RowSums,
            Self::Reduce { .. } => BasicsLesson::Reduce,
            Self::Device => BasicsLesson::Device,
        }
    }

    /// Runs it on the CPU and, with `gpu`, on the GPU.
    pub fn run(&self, gpu: Option<&BasicsGpu>, control: RunControl<'_>) -> Result<BasicsOutcome> {
        Ok(match self {
            Self::Maximum(options) => BasicsOutcome::Maximum(maximum::run(options, gpu, control)?),
            Self::Geometry(options) => {
                BasicsOutcome::Geometry(geometry::run(options, gpu, control)?)
            }
            Self::SinExp { n, repeats } => {
                BasicsOutcome::SinExp(sin_exp::run(*n, *repeats, gpu, control)?)
            }
            Self::RowSums {
                rows,
                cols,
                seed,
                repeats,
            } => {
                BasicsOutcome::RowSums(row_sums::run(*rows, *cols, *seed, *repeats, gpu, control)?)
            }
            Self::Reduce { n, seed, repeats } => {
                BasicsOutcome::Reduce(reduce::run(*n, *seed, *repeats, gpu, control)?)
            }
            Self::Device => match gpu {
                Some(gpu) => BasicsOutcome::Device(Box::new(device::run(gpu)?)),
                None => {
                    return Err(HeatlabError::Unsupported(
                        "the device lesson needs a GPU".into(),
                    ))
                }
            },
        })
    }
}

/// What a run of a lesson gave.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "lesson", content = "report", rename_all = "kebab-case")]
pub enum BasicsOutcome {
    /// The maximum ladder.
    #[serde(rename = "max")]
    Maximum(MaximumLadder),
    /// A launch of an increment kernel.
    Geometry(GeometryOutcome),
    /// sin(x) * exp(y).
    SinExp(SinExpReport),
    /// Row sums.
    RowSums(RowSumsReport),
    /// Reductions.
    Reduce(ReduceReport),
    /// The device.
    Device(Box<DeviceReport>),
}

impl BasicsOutcome {
    /// The lesson it belongs to.
    pub fn lesson(&self) -> BasicsLesson {
        match self {
            Self::Maximum(_) => BasicsLesson::Maximum,
            Self::Geometry(_) => BasicsLesson::Geometry,
            Self::SinExp(_) => BasicsLesson::SinExp,
            Self::RowSums(_) => BasicsLesson::RowSums,
            Self::Reduce(_) => BasicsLesson::Reduce,
            Self::Device(_) => BasicsLesson::Device,
        }
    }
}
