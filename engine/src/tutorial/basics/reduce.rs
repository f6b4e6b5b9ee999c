//! Sum and product reductions of a float64 array (seed `003_...`'s `@cuda.reduce`), in three
//! GPU kernels that differ in how the threads' partial results meet: atomics on one result, a
//! tree in shared memory, and warp shuffles. Each is timed and checked against the CPU.
//!
//! The sum is over `x = rng.random(n)`. The notebook multiplies those same values, whose
//! product underflows to exactly 0 after about a thousand factors (each is 0.37 on the
//! average of its logarithm), so both sides agree without checking anything; the product here
//! is over `1 + (x - 0.5) / 1024`, whose product stays near 1 at any n the lesson runs.

use std::fmt;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::super::gpu::TimedPart;
use super::super::{time_cpu_runs, RunControl, TimingStats, CPU_CHUNK};
use super::{check_repeats, BasicsGpu, KernelTime, REDUCE_BLOCK};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;

/// The notebook's n.
pub const NOTEBOOK_N: u64 = 4_000_000;
/// Blocks per multiprocessor of the first pass (enough to keep every SM busy).
const BLOCKS_PER_SM: u32 = 8;

/// What a reduction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceOp {
    /// The sum (`op` 0 in the kernels).
    Sum,
    /// The product (`op` 1).
    Product,
}

impl ReduceOp {
    /// Both operations.
    pub const ALL: [Self; 2] = [Self::Sum, Self::Product];

    fn code(self) -> i32 {
        match self {
            Self::Sum => 0,
            Self::Product => 1,
        }
    }

    fn identity(self) -> f64 {
        match self {
            Self::Sum => 0.0,
            Self::Product => 1.0,
        }
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sum => "sum",
            Self::Product => "product",
        })
    }
}

/// A GPU reduction kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceKernel {
    /// Every thread's partial combined atomically into one result.
    Atomics,
    /// A tree in shared memory per block, then one block over the blocks' partials.
    SharedTree,
    /// Warp shuffles per block, then one block over the blocks' partials.
    WarpShuffles,
}

impl ReduceKernel {
    /// Every kernel.
    pub const ALL: [Self; 3] = [Self::Atomics, Self::SharedTree, Self::WarpShuffles];
}

impl fmt::Display for ReduceKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Atomics => "atomics",
            Self::SharedTree => "shared-memory tree",
            Self::WarpShuffles => "warp shuffles",
        })
    }
}

/// One kernel's result for one operation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReduceGpu {
    /// The kernel.
    pub kernel: ReduceKernel,
    /// Its result.
    pub value: f64,
    /// |GPU - CPU| / |CPU|.
    pub relative_difference: f64,
    /// The kernel alone (both passes), the array on the device.
    pub time: KernelTime,
}

/// One operation: the CPU's value and time, and every GPU kernel's.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReduceRow {
    /// The operation.
    pub op: ReduceOp,
    /// The CPU's value (NumPy's pairwise summation for the sum, a loop for the product).
    pub cpu_value: f64,
    /// The CPU on one thread.
    pub cpu_one_thread: TimingStats,
    /// The CPU on all threads (chunks reduced in parallel).
    pub cpu_all_threads: TimingStats,
    /// The all-threads version's value (its chunks are combined in another order).
    pub cpu_all_threads_value: f64,
    /// One entry per GPU kernel, empty without a GPU.
    pub gpu: Vec<ReduceGpu>,
}

/// The whole lesson.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReduceReport {
    /// Elements.
    pub n: u64,
    /// Seed of x.
    pub seed: u64,
    /// Timed runs.
    pub repeats: u32,
    /// The GPU's name when it ran.
    pub gpu: Option<String>,
    /// Threads of the all-threads version.
    pub cpu_threads: usize,
    /// The notebook's own product, `np.prod(x)`, on the CPU (0 by underflow for n past ~1000).
    pub notebook_product: f64,
    /// The sum and the product.
    pub rows: Vec<ReduceRow>,
}

/// `x = rng.random(n)`.
pub fn generate_x(n: usize, seed: u64) -> Vec<f64> {
    let mut generator = NumpyGenerator::new(seed);
    (0..n).map(|_| generator.next_f64()).collect()
}

/// The factors of the product: `1 + (x - 0.5) / 1024`.
pub fn near_one(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| 1.0 + (v - 0.5) / 1024.0).collect()
}

/// NumPy's pairwise summation (`pairwise_sum` in its umath loops): blocks of at most 128
/// summed in 8 interleaved accumulators, larger arrays split in two halves (the first a
/// multiple of 8 long) summed recursively.
pub fn pairwise_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        values.iter().fold(0.0, |total, &v| total + v)
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&values[..8]);
        let whole = n - n % 8;
        for block in values[8..whole].chunks_exact(8) {
            for (acc, &v) in r.iter_mut().zip(block) {
                *acc += v;
            }
        }
        let mut total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &values[whole..] {
            total += v;
        }
        total
    } else {
        let mut half = n / 2;
        half -= half % 8;
        pairwise_sum(&values[..half]) + pairwise_sum(&values[half..])
    }
}

/// The CPU's reduction on one thread.
pub fn reduce_cpu(op: ReduceOp, values: &[f64]) -> f64 {
    match op {
        ReduceOp::Sum => pairwise_sum(values),
        ReduceOp::Product => values.iter().product(),
    }
}

/// The CPU's reduction on all threads: chunks reduced in parallel, then combined.
pub fn reduce_cpu_all_threads(op: ReduceOp, values: &[f64]) -> f64 {
    let partials: Vec<f64> = values
        .par_chunks(CPU_CHUNK)
        .map(|chunk| reduce_cpu(op, chunk))
        .collect();
    reduce_cpu(op, &partials)
}

/// Reduces on the CPU and, with a GPU, with every kernel; both operations.
pub fn run(
    n: u64,
    seed: u64,
    repeats: u32,
    gpu: Option<&BasicsGpu>,
    control: RunControl<'_>,
) -> Result<ReduceReport> {
    check_repeats(repeats)?;
    let len = usize::try_from(n)
        .ok()
        .filter(|n| (1..=1 << 30).contains(n))
        .ok_or_else(|| HeatlabError::InvalidInput(format!("n = {n} is outside 1 to 2^30")))?;
    crate::memory::ensure_host_memory("the reductions' arrays", len * 8 * 2)?;
    let x = generate_x(len, seed);
    let factors = near_one(&x);
    let notebook_product = reduce_cpu(ReduceOp::Product, &x);
    let mut rows = Vec::new();
    for (op, values) in [(ReduceOp::Sum, &x), (ReduceOp::Product, &factors)] {
        control.check()?;
        let (cpu_one_thread, cpu_value) = time_cpu_runs(repeats, || {
            control.check()?;
            Ok(reduce_cpu(op, values))
        })?;
        let (cpu_all_threads, cpu_all_threads_value) = time_cpu_runs(repeats, || {
            control.check()?;
            Ok(reduce_cpu_all_threads(op, values))
        })?;
        let gpu_results = match gpu {
            Some(gpu) => run_gpu(gpu, op, values, cpu_value, repeats, control)?,
            None => Vec::new(),
        };
        rows.push(ReduceRow {
            op,
            cpu_value,
            cpu_one_thread,
            cpu_all_threads,
            cpu_all_threads_value,
            gpu: gpu_results,
        });
    }
    Ok(ReduceReport {
        n,
        seed,
        repeats,
        gpu: gpu.map(|gpu| gpu.name().to_string()),
        cpu_threads: rayon::current_num_threads(),
        notebook_product,
        rows,
    })
}

/// Every kernel over `values` on the GPU.
fn run_gpu(
    gpu: &BasicsGpu,
    op: ReduceOp,
    values: &[f64],
    cpu_value: f64,
    repeats: u32,
    control: RunControl<'_>,
) -> Result<Vec<ReduceGpu>> {
    let tutorial = gpu.tutorial();
    tutorial.ensure_memory("the reduction's array", values.len() * 8)?;
    let stream = tutorial.device().stream().clone();
    let x = stream
        .clone_htod(values)
        .map_err(driver_error("uploading the array"))?;
    let first_blocks = (values.len() as u64)
        .div_ceil(u64::from(REDUCE_BLOCK))
        .min(u64::from(tutorial.multiprocessors() * BLOCKS_PER_SM))
        .max(1) as u32;
    let mut partials = stream
        .alloc_zeros::<f64>(first_blocks as usize)
        .map_err(driver_error("allocating the partial results"))?;
    let mut result = stream
        .alloc_zeros::<f64>(1)
        .map_err(driver_error("allocating the result"))?;
    let mut outcomes = Vec::new();
    for kernel in ReduceKernel::ALL {
        control.check()?;
        let passes = Passes {
            gpu,
            op,
            first_blocks,
        };
        let mut work = |part: TimedPart| -> Result<()> {
            match part {
                TimedPart::Upload => stream
                    .memcpy_htod(&[op.identity()], &mut result)
                    .map_err(driver_error("resetting the result")),
                TimedPart::Kernel => {
                    passes.launch(kernel, &x, values.len() as u64, &mut partials, &mut result)
                }
                TimedPart::Download => Ok(()),
            }
        };
        let time = super::timing::time_kernel_with_reset(gpu, repeats, control, &mut work)?;
        // The timed launches went on combining into the result: it is set back and the
        // reduction run once more for the value.
        work(TimedPart::Upload)?;
        work(TimedPart::Kernel)?;
        let mut value = [0.0f64];
        stream
            .memcpy_dtoh(&result, &mut value)
            .map_err(driver_error("downloading the result"))?;
        tutorial.device().synchronize()?;
        let value = value[0];
        let relative_difference =
            (value - cpu_value).abs() / cpu_value.abs().max(f64::MIN_POSITIVE);
        outcomes.push(ReduceGpu {
            kernel,
            value,
            relative_difference,
            time,
        });
    }
    Ok(outcomes)
}

/// The launches of one reduction.
struct Passes<'g> {
    gpu: &'g BasicsGpu,
    op: ReduceOp,
    first_blocks: u32,
}

impl Passes<'_> {
    /// Reduces `x` (n values) into `result[0]`: atomics in one pass (result preset to the
    /// identity), the tree and the shuffles in two (blocks into `partials`, then one block).
    fn launch(
        &self,
        kernel: ReduceKernel,
        x: &CudaSlice<f64>,
        n: u64,
        partials: &mut CudaSlice<f64>,
        result: &mut CudaSlice<f64>,
    ) -> Result<()> {
        let config = |blocks: u32| LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (REDUCE_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        match kernel {
            ReduceKernel::Atomics => self.one(
                &self.gpu.reduce_atomic,
                config(self.first_blocks),
                x,
                n,
                result,
            ),
            ReduceKernel::SharedTree | ReduceKernel::WarpShuffles => {
                let function = if kernel == ReduceKernel::SharedTree {
                    &self.gpu.reduce_tree
                } else {
                    &self.gpu.reduce_warp
                };
                self.one(function, config(self.first_blocks), x, n, partials)?;
                self.one(
                    function,
                    config(1),
                    partials,
                    u64::from(self.first_blocks),
                    result,
                )
            }
        }
    }

    /// One launch of `function(x, n, op, out)`.
    fn one(
        &self,
        function: &CudaFunction,
        config: LaunchConfig,
        x: &CudaSlice<f64>,
        n: u64,
        out: &mut CudaSlice<f64>,
    ) -> Result<()> {
        // The atomic kernel combines every block into out[0]; the others write one per block.
        let outputs = if std::ptr::eq(function, &self.gpu.reduce_atomic) {
            1
        } else {
            config.grid_dim.0 as usize
        };
        if (x.len() as u64) < n || out.len() < outputs {
            return Err(HeatlabError::Internal(
                "a reduction's arrays are too short".into(),
            ));
        }
        let op = self.op.code();
        let stream = self.gpu.tutorial().device().stream();
        let mut builder = stream.launch_builder(function);
        builder.arg(x).arg(&n).arg(&op).arg(out);
        // SAFETY: reduce_atomic / reduce_tree / reduce_warp(const double* x, unsigned long long
        // n, int op, double* out): x holds at least n doubles and out one per block (checked
        // above; the atomic kernel writes only out[0]); the block size is REDUCE_BLOCK, which
        // the shared arrays and __launch_bounds__ assume.
        unsafe { builder.launch(config) }.map_err(driver_error("launching a reduction"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_sum_is_close_to_the_exact_sum() {
        for n in [1, 7, 8, 9, 127, 128, 129, 1000, 100_003] {
            let x = generate_x(n, 5);
            let naive: f64 = x.iter().sum();
            let pairwise = pairwise_sum(&x);
            assert!(
                (pairwise - naive).abs() <= 1e-12 * naive,
                "{n}: {pairwise} {naive}"
            );
            let all = reduce_cpu_all_threads(ReduceOp::Sum, &x);
            assert!((all - naive).abs() <= 1e-12 * naive);
        }
        // Eight accumulators: in exact arithmetic the order does not matter.
        let whole: Vec<f64> = (1..=300).map(f64::from).collect();
        assert_eq!(pairwise_sum(&whole), 45_150.0);
    }

    #[test]
    fn the_notebooks_product_underflows_and_ours_does_not() {
        let report = run(100_000, 1, 1, None, RunControl::unattended()).unwrap();
        assert_eq!(report.notebook_product, 0.0);
        let product = report.rows[1].cpu_value;
        assert!(product > 0.1 && product < 10.0, "{product}");
        let all = reduce_cpu_all_threads(ReduceOp::Product, &near_one(&generate_x(100_000, 1)));
        assert!((all - product).abs() <= 1e-12 * product);
    }
}
