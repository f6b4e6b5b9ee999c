//! The CPU backend: the reference implementation, multi-threaded with rayon.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{Backend, BackendKind, Boundary, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;

/// Rows of one parallel work item: enough to amortise scheduling, few enough to balance.
const ROWS_PER_TASK: usize = 8;

/// Steps and Laplacians on the CPU, with all cores by default.
pub struct CpuBackend {
    pool: Arc<rayon::ThreadPool>,
    threads: usize,
    current: Option<Grid>,
    scratch: Vec<f32>,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuBackend {
    /// A backend using every core.
    pub fn new() -> Self {
        Self::with_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// A backend with its own pool of `threads` threads (1 gives the plain single-threaded loop).
    pub fn with_threads(threads: usize) -> Self {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("heatlab-cpu-{i}"))
            .build()
            .map(Arc::new)
            .unwrap_or_else(|_| {
                // Building a pool fails only when threads cannot be spawned; run inline then.
                Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(1)
                        .use_current_thread()
                        .build()
                        .expect("a one-thread pool on the current thread always builds"),
                )
            });
        Self {
            pool,
            threads,
            current: None,
            scratch: Vec::new(),
        }
    }

    /// Number of threads stepping.
    pub fn threads(&self) -> usize {
        self.threads
    }

    fn held(&self) -> Result<&Grid> {
        self.current
            .as_ref()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn device_name(&self) -> String {
        format!("CPU ({} threads)", self.threads)
    }

    fn step_method(&self) -> String {
        if self.threads == 1 {
            "cpu-rows-1-thread".into()
        } else {
            format!("cpu-rows-{}-threads", self.threads)
        }
    }

    fn upload(&mut self, field: &Grid) -> Result<()> {
        self.scratch = vec![0.0; field.size().cells()];
        self.current = Some(field.clone());
        Ok(())
    }

    fn advance(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        let started = Instant::now();
        let Self {
            pool,
            current,
            scratch,
            ..
        } = self;
        let current = current
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))?;
        let cols = current.cols();
        let coeff = params.coeff;
        for _ in 0..steps {
            pool.install(|| {
                apply_stencil(current.as_slice(), scratch, cols, params.boundary, |center, lapl| {
                    center - coeff * lapl
                })
            });
            current.swap_values(scratch);
        }
        Ok(started.elapsed())
    }

    fn download(&mut self) -> Result<Grid> {
        self.held().cloned()
    }

    fn laplacian(&mut self, boundary: Boundary) -> Result<Grid> {
        let field = self.held()?;
        let mut out = Grid::zeros(field.size());
        let cols = field.cols();
        self.pool.install(|| {
            apply_stencil(field.as_slice(), out.as_mut_slice(), cols, boundary, |_, lapl| lapl)
        });
        Ok(out)
    }
}

/// Computes `out[i] = combine(f[i], lapl[i])` for every cell, rows in parallel, with the
/// Laplacian summed as `4*f - up - down - left - right` (NumPy's order, so results match it).
pub fn apply_stencil(
    field: &[f32],
    out: &mut [f32],
    cols: usize,
    boundary: Boundary,
    combine: impl Fn(f32, f32) -> f32 + Sync,
) {
    let rows = field.len() / cols;
    let zeros = vec![0.0f32; cols];
    out.par_chunks_mut(cols * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(task, block)| {
            for (offset, out_row) in block.chunks_mut(cols).enumerate() {
                let r = task * ROWS_PER_TASK + offset;
                let row = |index: usize| &field[index * cols..(index + 1) * cols];
                let mid = row(r);
                let up = match (r, boundary) {
                    (0, Boundary::Dirichlet) => &zeros[..],
                    (0, Boundary::Neumann) => mid,
                    (0, Boundary::Periodic) => row(rows - 1),
                    _ => row(r - 1),
                };
                let down = match (r + 1 == rows, boundary) {
                    (true, Boundary::Dirichlet) => &zeros[..],
                    (true, Boundary::Neumann) => mid,
                    (true, Boundary::Periodic) => row(0),
                    _ => row(r + 1),
                };
                stencil_row(up, mid, down, out_row, boundary, &combine);
            }
        });
}

/// One row of the stencil, given the rows above and below (ghost rows already chosen).
fn stencil_row(
    up: &[f32],
    mid: &[f32],
    down: &[f32],
    out: &mut [f32],
    boundary: Boundary,
    combine: &impl Fn(f32, f32) -> f32,
) {
    let cols = mid.len();
    let (left_ghost, right_ghost) = match boundary {
        Boundary::Dirichlet => (0.0, 0.0),
        Boundary::Neumann => (mid[0], mid[cols - 1]),
        Boundary::Periodic => (mid[cols - 1], mid[0]),
    };
    let cell = |c: usize, left: f32, right: f32| {
        let lapl = 4.0 * mid[c] - up[c] - down[c] - left - right;
        combine(mid[c], lapl)
    };
    if cols == 1 {
        out[0] = cell(0, left_ghost, right_ghost);
        return;
    }
    out[0] = cell(0, left_ghost, mid[1]);
    out[cols - 1] = cell(cols - 1, mid[cols - 2], right_ghost);
    // The interior, written over equal-length slices so the compiler drops bounds checks
    // and vectorises.
    let n = cols - 2;
    let (center, left, right) = (&mid[1..=n], &mid[..n], &mid[2..]);
    let (up, down, out) = (&up[1..=n], &down[1..=n], &mut out[1..=n]);
    for i in 0..n {
        let lapl = 4.0 * center[i] - up[i] - down[i] - left[i] - right[i];
        out[i] = combine(center[i], lapl);
    }
}
