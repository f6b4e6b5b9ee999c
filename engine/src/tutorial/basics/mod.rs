//! The GPU basics: the first lessons of the other tutorial notebooks (seeds `000_...`,
//! `002_...` and `003_...`), each timed on the CPU and the GPU with the same breakdown as the
//! other tutorial kernels (upload, kernel, download; device-resident: kernel only):
//! - [`maximum`]: the element-wise maximum of two arrays, from a naive indexed loop up the
//!   ladder to device-resident arrays on the GPU, over sizes, with the size where the GPU wins;
//! - [`geometry`]: adding one to every element of 1-D and 2-D arrays, with the launch's blocks,
//!   threads, idle threads and what happens without the guard;
//! - [`sin_exp`]: `sin(x) * exp(y)` in float32 (precise and fast math) and float64;
//! - [`row_sums`]: the row sums of a matrix, one thread or one warp per row;
//! - [`reduce`]: sum and product reductions with atomics, a shared-memory tree, warp shuffles;
//! - [`device`]: the GPU itself, its peak figures against measured copies.
//!
//! The kernels are `kernels/basics.cu`; every one has a CPU twin here that the tests compare
//! it with.

pub mod device;
pub mod geometry;
pub mod maximum;
pub mod reduce;
mod request;
pub mod row_sums;
pub mod sin_exp;
mod timing;

use std::fmt;

use cudarc::driver::{CudaFunction, LaunchConfig};

pub use request::{BasicsOutcome, BasicsRequest};
pub use timing::KernelTime;

use super::gpu::line_of_blocks;
use super::TutorialGpu;
use crate::compute::BackendChoice;
use crate::error::{CudaUnavailable, HeatlabError, Result};

/// The source of the basics kernels, embedded so that the binary needs no files beside it.
pub const BASICS_SOURCE: &str = include_str!("../../../../kernels/basics.cu");

/// Threads per block of the one-element-per-thread kernels.
pub const ELEMENT_BLOCK: u32 = 256;
/// Threads per block of the reductions; must match `REDUCE_BLOCK` in `kernels/basics.cu`.
pub const REDUCE_BLOCK: u32 = 256;

/// One lesson of the GPU basics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BasicsLesson {
    /// The maximum ladder.
    #[serde(rename = "max")]
    Maximum,
    /// Launch geometry.
    Geometry,
    /// sin(x) * exp(y).
    SinExp,
    /// Row sums of a matrix.
    RowSums,
    /// Sum and product reductions.
    Reduce,
    /// The device's figures.
    Device,
}

impl BasicsLesson {
    /// Every lesson, in the order the tab lists them.
    pub const ALL: [Self; 6] = [
        Self::Maximum,
        Self::Geometry,
        Self::SinExp,
        Self::RowSums,
        Self::Reduce,
        Self::Device,
    ];

    /// A title for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::Maximum => "Maximum ladder",
            Self::Geometry => "Launch geometry",
            Self::SinExp => "sin·exp",
            Self::RowSums => "Row sums",
            Self::Reduce => "Reductions",
            Self::Device => "The device",
        }
    }
}

impl fmt::Display for BasicsLesson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Maximum => "max",
            Self::Geometry => "geometry",
            Self::SinExp => "sin-exp",
            Self::RowSums => "row-sums",
            Self::Reduce => "reduce",
            Self::Device => "device",
        })
    }
}

impl std::str::FromStr for BasicsLesson {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "lesson")
    }
}

/// An open GPU with the basics kernels loaded (and the tutorial kernels, whose timed loops and
/// page-locked buffers the basics share).
pub struct BasicsGpu {
    tutorial: TutorialGpu,
    pub(crate) maximum: CudaFunction,
    pub(crate) increment_1d: CudaFunction,
    pub(crate) increment_2d: CudaFunction,
    pub(crate) sin_exp_f32: CudaFunction,
    pub(crate) sin_exp_f32_fast: CudaFunction,
    pub(crate) sin_exp_f64: CudaFunction,
    pub(crate) row_sums_thread: CudaFunction,
    pub(crate) row_sums_warp: CudaFunction,
    pub(crate) reduce_atomic: CudaFunction,
    pub(crate) reduce_tree: CudaFunction,
    pub(crate) reduce_warp: CudaFunction,
}

impl BasicsGpu {
    /// Opens GPU 0 with the tutorial kernels and compiles `kernels/basics.cu`, or says why
    /// that is not possible.
    pub fn open() -> Result<Self> {
        let tutorial = TutorialGpu::open()?;
        let device = tutorial.device();
        let module = device.load_kernels("basics.cu", BASICS_SOURCE)?;
        let function = |name: &str| device.function(&module, name);
        Ok(Self {
            maximum: function("maximum")?,
            increment_1d: function("increment_1d")?,
            increment_2d: function("increment_2d")?,
            sin_exp_f32: function("sin_exp_f32")?,
            sin_exp_f32_fast: function("sin_exp_f32_fast")?,
            sin_exp_f64: function("sin_exp_f64")?,
            row_sums_thread: function("row_sums_thread")?,
            row_sums_warp: function("row_sums_warp")?,
            reduce_atomic: function("reduce_atomic")?,
            reduce_tree: function("reduce_tree")?,
            reduce_warp: function("reduce_warp")?,
            tutorial,
        })
    }

    /// The tutorial GPU underneath (its device, timers and page-locked buffers).
    pub fn tutorial(&self) -> &TutorialGpu {
        &self.tutorial
    }

    /// The GPU's model name.
    pub fn name(&self) -> &str {
        self.tutorial.name()
    }
}

/// Opens the GPU the user chose: `Cpu` gives none, `Cuda` the GPU or the reason it cannot be
/// used, `Auto` the GPU when it works and otherwise none with the reason.
pub fn open_basics_gpu(
    choice: BackendChoice,
) -> Result<(Option<BasicsGpu>, Option<CudaUnavailable>)> {
    match choice {
        BackendChoice::Cpu => Ok((None, None)),
        BackendChoice::Cuda => Ok((Some(BasicsGpu::open()?), None)),
        BackendChoice::Auto => match BasicsGpu::open() {
            Ok(gpu) => Ok((Some(gpu), None)),
            Err(error) => {
                let reason = CudaUnavailable::from_error(&error);
                log::info!("GPU basics on the CPU only: {reason}");
                Ok((None, Some(reason)))
            }
        },
    }
}

/// One thread per element: `ceil(n / block)` blocks of `block` threads (at least one block).
pub(crate) fn one_per_thread(n: u64, block: u32) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(u64::from(block)).max(1);
    line_of_blocks(format_args!("n = {n}"), blocks, block)
}

/// Checks that the repeat count is at least 1.
pub(crate) fn check_repeats(repeats: u32) -> Result<()> {
    if repeats == 0 {
        return Err(HeatlabError::InvalidInput(
            "repeat must be at least 1".into(),
        ));
    }
    Ok(())
}

/// NumPy's `np.linspace(start, stop, n)`: `i * step + start` with the last value set to `stop`
/// exactly (and `start` alone for n = 1).
pub fn linspace(start: f64, stop: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![start];
    }
    let step = (stop - start) / (n as f64 - 1.0);
    let mut values: Vec<f64> = (0..n).map(|i| i as f64 * step + start).collect();
    if let Some(last) = values.last_mut() {
        *last = stop;
    }
    values
}

/// The largest relative difference of `values` from `reference`: max |v - r| over
/// max |r| (the scale of the whole array, so that values near zero do not blow it up).
pub fn max_relative_difference<T: Copy + Into<f64>>(values: &[T], reference: &[f64]) -> f64 {
    if values.len() != reference.len() {
        return f64::INFINITY;
    }
    let scale = reference.iter().fold(0.0f64, |m, r| m.max(r.abs()));
    let worst = values
        .iter()
        .zip(reference)
        .map(|(&v, &r)| {
            let diff = (v.into() - r).abs();
            if diff.is_nan() {
                f64::INFINITY
            } else {
                diff
            }
        })
        .fold(0.0f64, f64::max);
    if scale > 0.0 {
        worst / scale
    } else {
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linspace_matches_numpy_ends() {
        let x = linspace(0.0, std::f64::consts::TAU, 5);
        assert_eq!(x[0], 0.0);
        assert_eq!(x[4], std::f64::consts::TAU);
        assert_eq!(x[1], std::f64::consts::TAU / 4.0);
        assert_eq!(linspace(10.0, 10.0, 3), vec![10.0; 3]);
        assert_eq!(linspace(2.0, 3.0, 1), vec![2.0]);
    }

    #[test]
    fn lessons_parse_by_name() {
        for lesson in BasicsLesson::ALL {
            assert_eq!(
                lesson.to_string().parse::<BasicsLesson>().ok(),
                Some(lesson)
            );
        }
        assert!("maximum".parse::<BasicsLesson>().is_err());
    }

    #[test]
    fn one_block_per_256_elements_rounded_up() {
        assert_eq!(
            one_per_thread(1000, 256).ok().map(|c| c.grid_dim.0),
            Some(4)
        );
        assert_eq!(
            one_per_thread(1024, 256).ok().map(|c| c.grid_dim.0),
            Some(4)
        );
        assert_eq!(one_per_thread(1, 256).ok().map(|c| c.grid_dim.0), Some(1));
    }
}
