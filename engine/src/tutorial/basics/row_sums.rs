//! Row sums of a float32 matrix (seed `003_...`'s `@guvectorize` `sum_row`): `s[i] = sum_j
//! A[i, j]`, each row summed in float64 (the notebook's `tmp = 0.` is a float64) and rounded to
//! float32 once. On the GPU one thread per row (the notebook's loop) or one warp per row
//! (coalesced reads, shuffles). The matrix is `rng.random(rows * cols).astype(np.float32)`.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};
use rayon::prelude::*;

use super::super::{time_cpu_runs, CpuThreads, GpuHostArraysTimings, RunControl, TimingStats};
use super::timing::{time_with_host_arrays, HostArraysRun};
use super::{check_repeats, line_of_blocks, BasicsGpu, KernelTime, ELEMENT_BLOCK};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;

/// The notebook's matrix side.
pub const NOTEBOOK_SIDE: u32 = 1000;
/// The most elements the lesson takes.
pub const MAX_ELEMENTS: u64 = 1 << 28;

/// A GPU version of the row sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowSumKernel {
    /// One thread per row, as the notebook's loop.
    ThreadPerRow,
    /// One warp per row.
    WarpPerRow,
}

impl RowSumKernel {
    /// Both kernels.
    pub const ALL: [Self; 2] = [Self::ThreadPerRow, Self::WarpPerRow];
}

impl fmt::Display for RowSumKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ThreadPerRow => "one thread per row",
            Self::WarpPerRow => "one warp per row",
        })
    }
}

/// One GPU kernel's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowSumsGpu {
    /// The kernel.
    pub kernel: RowSumKernel,
    /// Upload of the matrix, kernel, download of the sums.
    pub host_arrays: GpuHostArraysTimings,
    /// The kernel alone.
    pub device_resident: KernelTime,
    /// Largest |GPU - CPU| over the sums, relative to the sum.
    pub max_relative_difference: f64,
    /// Rows whose sum equals the CPU's bit for bit.
    pub rows_equal: u64,
}

/// The whole lesson.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowSumsReport {
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Seed of the matrix.
    pub seed: u64,
    /// Timed runs.
    pub repeats: u32,
    /// The GPU's name when it ran.
    pub gpu: Option<String>,
    /// The CPU on one thread.
    pub cpu_one_thread: TimingStats,
    /// The CPU on all threads.
    pub cpu_all_threads: TimingStats,
    /// Threads of the all-threads version.
    pub cpu_threads: usize,
    /// The first few sums (the CPU's).
    pub first_sums: Vec<f32>,
    /// One entry per GPU kernel, empty without a GPU.
    pub kernels: Vec<RowSumsGpu>,
}

/// The matrix: `rng.random(rows * cols).astype(np.float32)`, row-major.
pub fn generate_matrix(rows: u32, cols: u32, seed: u64) -> Vec<f32> {
    let mut generator = NumpyGenerator::new(seed);
    let n = rows as usize * cols as usize;
    (0..n).map(|_| generator.next_f64() as f32).collect()
}

/// The row sums on the CPU, each row summed in float64 from its first column to its last.
pub fn row_sums_cpu(matrix: &[f32], cols: u32, sums: &mut [f32], threads: CpuThreads) {
    let cols = cols.max(1) as usize;
    let sum_row = |(sum, row): (&mut f32, &[f32])| {
        *sum = row.iter().fold(0.0f64, |total, &v| total + f64::from(v)) as f32;
    };
    match threads {
        CpuThreads::One => sums.iter_mut().zip(matrix.chunks(cols)).for_each(sum_row),
        CpuThreads::All => sums
            .par_iter_mut()
            .zip(matrix.par_chunks(cols))
            .for_each(sum_row),
    }
}

/// Sums the rows on the CPU and, with a GPU, with both kernels.
pub fn run(
    rows: u32,
    cols: u32,
    seed: u64,
    repeats: u32,
    gpu: Option<&BasicsGpu>,
    control: RunControl<'_>,
) -> Result<RowSumsReport> {
    check_repeats(repeats)?;
    let elements = u64::from(rows) * u64::from(cols);
    if elements == 0 || elements > MAX_ELEMENTS {
        return Err(HeatlabError::InvalidInput(format!(
            "a {rows} x {cols} matrix is outside 1 to {MAX_ELEMENTS} elements"
        )));
    }
    crate::memory::ensure_host_memory("the row sums' matrix", elements as usize * 4 * 2)?;
    let matrix = generate_matrix(rows, cols, seed);
    let mut sums = vec![0.0f32; rows as usize];
    let (cpu_one_thread, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        row_sums_cpu(&matrix, cols, &mut sums, CpuThreads::One);
        Ok(())
    })?;
    let (cpu_all_threads, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        row_sums_cpu(&matrix, cols, &mut sums, CpuThreads::All);
        Ok(())
    })?;
    let mut kernels = Vec::new();
    if let Some(gpu) = gpu {
        for kernel in RowSumKernel::ALL {
            control.check()?;
            kernels.push(run_gpu(
                gpu,
                kernel,
                &matrix,
                (rows, cols),
                &sums,
                repeats,
                control,
            )?);
        }
    }
    Ok(RowSumsReport {
        rows,
        cols,
        seed,
        repeats,
        gpu: gpu.map(|gpu| gpu.name().to_string()),
        cpu_one_thread,
        cpu_all_threads,
        cpu_threads: rayon::current_num_threads(),
        first_sums: sums.iter().take(8).copied().collect(),
        kernels,
    })
}

/// One kernel on the GPU, timed and compared with the CPU's sums.
fn run_gpu(
    gpu: &BasicsGpu,
    kernel: RowSumKernel,
    matrix: &[f32],
    (rows, cols): (u32, u32),
    expected: &[f32],
    repeats: u32,
    control: RunControl<'_>,
) -> Result<RowSumsGpu> {
    let block = ELEMENT_BLOCK;
    let threads = match kernel {
        RowSumKernel::ThreadPerRow => u64::from(rows),
        RowSumKernel::WarpPerRow => u64::from(rows) * 32,
    };
    let config = line_of_blocks(
        format_args!("a matrix of {rows} rows"),
        threads.div_ceil(u64::from(block)),
        block,
    )?;
    let (function, name) = match kernel {
        RowSumKernel::ThreadPerRow => (&gpu.row_sums_thread, "row_sums_thread"),
        RowSumKernel::WarpPerRow => (&gpu.row_sums_warp, "row_sums_warp"),
    };
    let launch =
        |stream: &Arc<CudaStream>, inputs: &[CudaSlice<f32>], output: &mut CudaSlice<f32>| {
            let [a] = inputs else {
                return Err(HeatlabError::Internal(format!("{name} takes one matrix")));
            };
            if a.len() != rows as usize * cols as usize || output.len() != rows as usize {
                return Err(HeatlabError::Internal(format!(
                    "{name}'s arrays have the wrong length"
                )));
            }
            let mut builder = stream.launch_builder(function);
            builder.arg(a).arg(output).arg(&rows).arg(&cols);
            // SAFETY: row_sums_thread / row_sums_warp(const float* a, float* sums, unsigned int
            // rows, unsigned int cols): a holds rows * cols floats and sums holds rows (checked
            // above); the block size is a multiple of 32 (the warp kernel's lanes share a row) and
            // threads past the last row (or warp) return before reading.
            unsafe { builder.launch(config) }.map_err(driver_error("launching the row sums"))?;
            Ok(())
        };
    let what = format!("the row sums of a {rows} x {cols} matrix");
    let HostArraysRun {
        output,
        host_arrays,
        device_resident,
    } = time_with_host_arrays(
        gpu,
        &what,
        &[matrix],
        rows as usize,
        repeats,
        control,
        &launch,
    )?;
    let (rows_equal, max_relative_difference) = compare(&output, expected);
    Ok(RowSumsGpu {
        kernel,
        host_arrays,
        device_resident,
        max_relative_difference,
        rows_equal,
    })
}

/// Rows equal to the CPU's bit for bit, and the largest difference relative to the sum.
fn compare(gpu: &[f32], cpu: &[f32]) -> (u64, f64) {
    let equal = gpu
        .iter()
        .zip(cpu)
        .filter(|(g, c)| g.to_bits() == c.to_bits())
        .count() as u64;
    let largest = gpu
        .iter()
        .zip(cpu)
        .map(|(&g, &c)| {
            let diff =
                (f64::from(g) - f64::from(c)).abs() / f64::from(c.abs()).max(f64::MIN_POSITIVE);
            if diff.is_nan() {
                f64::INFINITY
            } else {
                diff
            }
        })
        .fold(0.0f64, f64::max);
    (equal, largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_and_all_threads_sum_every_row_as_numpy_would() {
        let (rows, cols) = (37, 101);
        let matrix = generate_matrix(rows, cols, 3);
        let mut one = vec![0.0; rows as usize];
        let mut all = vec![0.0; rows as usize];
        row_sums_cpu(&matrix, cols, &mut one, CpuThreads::One);
        row_sums_cpu(&matrix, cols, &mut all, CpuThreads::All);
        assert_eq!(one, all);
        let row_5: f64 = matrix[5 * 101..6 * 101].iter().map(|&v| f64::from(v)).sum();
        assert!((f64::from(one[5]) - row_5).abs() < 1e-5 * row_5);
        assert!(run(0, 5, 1, 1, None, RunControl::unattended()).is_err());
    }
}
