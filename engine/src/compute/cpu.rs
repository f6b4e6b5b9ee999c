//! The CPU backend: the reference implementation, multi-threaded with rayon.

use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use super::brush::{check_cells, BrushStamp};
use super::cpu_problem::CpuProblem;
use super::cpu_stencil::plain_pass;
pub use super::cpu_stencil::{apply_stencil, blocked_pass};
use super::preview::{Layer, PreviewSpec, ReducedPreview};
use super::{Backend, BackendKind, Boundary, FieldStats, ProblemUpload, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, RowSpan};
use crate::problem::EnergyExchange;
use crate::solve::cpu::{CpuMultigrid, CpuSolve};
use crate::solve::{solve_on, ProblemSolver, SolveOptions, SolveReport, SolveRequest};

/// How the CPU steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CpuMethod {
    /// One cell at a time on one thread, neighbours found by index arithmetic: the textbook
    /// loop, written independently of the others so that it can check them.
    Plain,
    /// One pass over the field per step, row bands in parallel.
    Rows,
    /// Temporal blocking: each thread takes a band of `band_rows` rows plus `steps_per_pass`
    /// halo rows on each side into a cache-sized buffer and advances it `steps_per_pass` steps
    /// there, so the field crosses main memory once per `steps_per_pass` steps.
    Blocked {
        /// Steps per pass over the field.
        steps_per_pass: usize,
        /// Rows each task owns.
        band_rows: usize,
    },
}

impl std::fmt::Display for CpuMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Plain => f.write_str("plain"),
            Self::Rows => f.write_str("rows"),
            Self::Blocked {
                steps_per_pass,
                band_rows,
            } => write!(f, "blocked-k{steps_per_pass}-band{band_rows}"),
        }
    }
}

impl CpuMethod {
    /// The method used for a field of `cells` cells. Blocking only pays once the two buffers
    /// are far larger than the last-level cache: below that, a single pass per step streams
    /// through the cache and the blocked buffers' copies and halos cost more than they save
    /// (measured with `examples/cpu_blocking_sweep.rs` on a 2-core machine: 2000x2000 rows
    /// 1.3 ms/step vs 1.8 ms blocked; 6000x6000 rows 18.7 ms vs 16.3 ms blocked).
    pub fn for_cells(cells: usize) -> Self {
        if cells >= 32 << 20 {
            Self::Blocked {
                steps_per_pass: 8,
                band_rows: 64,
            }
        } else {
            Self::Rows
        }
    }
}

/// Steps and Laplacians on the CPU, with all cores by default.
pub struct CpuBackend {
    pool: Option<Arc<rayon::ThreadPool>>,
    threads: usize,
    current: Option<Grid>,
    scratch: Vec<f32>,
    /// `None`: chosen per field size by [`CpuMethod::for_cells`].
    method: Option<CpuMethod>,
    /// The heat problem stepped instead of the uniform stencil, if any.
    problem: Option<Box<CpuProblem>>,
    /// The solver's grids, kept for the solver they were made for.
    solver_grids: Option<Box<CpuMultigrid>>,
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
        // Building a pool fails only when threads cannot be spawned; the work then runs on
        // rayon's global pool instead, said once in the log (backends are made often).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("heatlab-cpu-{i}"))
            .build()
            .map(Arc::new)
            .inspect_err(|error| {
                static WARNED: Once = Once::new();
                WARNED.call_once(|| {
                    log::warn!(
                        "could not start a pool of {threads} CPU threads ({error}); \
                         stepping on rayon's global pool instead"
                    );
                });
            })
            .ok();
        Self {
            pool,
            threads,
            current: None,
            scratch: Vec::new(),
            method: None,
            problem: None,
            solver_grids: None,
        }
    }

    /// Fixes the stepping method instead of choosing it per size.
    pub fn with_method(mut self, method: CpuMethod) -> Self {
        self.method = Some(method);
        self
    }

    /// Fixes the stepping method (`None`: chosen per field size). Every method gives the same
    /// field bit for bit.
    pub fn set_method(&mut self, method: Option<CpuMethod>) {
        self.method = method;
    }

    /// The method used for the held field.
    pub fn method(&self) -> CpuMethod {
        self.method.unwrap_or_else(|| {
            CpuMethod::for_cells(self.current.as_ref().map_or(0, |g| g.size().cells()))
        })
    }

    /// Number of threads stepping.
    pub fn threads(&self) -> usize {
        self.threads
    }

    fn held(&self) -> Result<&Grid> {
        self.current.as_ref().ok_or(HeatlabError::NoField)
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
        let threads = if self.threads == 1 {
            "1-thread".to_string()
        } else {
            format!("{}-threads", self.threads)
        };
        if self.problem.is_some() {
            return format!("cpu-materials-{threads}");
        }
        format!("cpu-{}-{threads}", self.method())
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
            method,
            problem,
            ..
        } = self;
        let current = current.as_mut().ok_or(HeatlabError::NoField)?;
        if let Some(problem) = problem {
            install(pool, || problem.advance(current, scratch, steps))?;
            return Ok(started.elapsed());
        }
        let cols = current.cols();
        let coeff = params.coeff;
        let step = |center: f32, lapl: f32| center - coeff * lapl;
        let method = method.unwrap_or_else(|| CpuMethod::for_cells(current.size().cells()));
        if method == CpuMethod::Plain {
            for _ in 0..steps {
                plain_pass(current, scratch, params.boundary, |center, lapl| {
                    center - coeff * lapl
                });
                current.swap_values(scratch);
            }
            return Ok(started.elapsed());
        }
        let mut remaining = steps;
        if let CpuMethod::Blocked {
            steps_per_pass,
            band_rows,
        } = method
        {
            let per_pass = steps_per_pass as u64;
            while remaining >= per_pass {
                install(pool, || {
                    blocked_pass(
                        current.as_slice(),
                        scratch,
                        cols,
                        params.boundary,
                        steps_per_pass,
                        band_rows,
                        &step,
                    )
                });
                current.swap_values(scratch);
                remaining -= per_pass;
            }
        }
        for _ in 0..remaining {
            install(pool, || {
                apply_stencil(current.as_slice(), scratch, cols, params.boundary, step)
            });
            current.swap_values(scratch);
        }
        Ok(started.elapsed())
    }

    fn download(&mut self) -> Result<Grid> {
        self.held().cloned()
    }

    fn solve_problem(
        &mut self,
        solver: &Arc<ProblemSolver>,
        request: SolveRequest,
        options: &SolveOptions,
    ) -> Result<SolveReport> {
        let field = self.current.as_mut().ok_or(HeatlabError::NoField)?;
        if field.size().cells() != solver.fine().cells() {
            return Err(HeatlabError::InvalidInput(format!(
                "the solver's problem has {} cells but the field has {}",
                solver.fine().cells(),
                field.size().cells()
            )));
        }
        let grids = match self.solver_grids.take() {
            Some(grids) if Arc::ptr_eq(grids.solver(), solver) => grids,
            Some(_) | None => Box::new(CpuMultigrid::new(solver.clone())),
        };
        let grids = self.solver_grids.insert(grids);
        install(&self.pool, || {
            let mut solve = CpuSolve {
                grids,
                field: field.as_mut_slice(),
            };
            solve_on(&mut solve, solver, request, options)
        })
    }

    fn set_problem(&mut self, problem: Option<ProblemUpload<'_>>) -> Result<()> {
        self.problem = match problem {
            Some(upload) => Some(Box::new(CpuProblem::new(&upload, self.held()?.size())?)),
            None => None,
        };
        Ok(())
    }

    fn set_problem_tables(&mut self, tables: &crate::problem::StepTables) -> Result<()> {
        self.problem
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no heat problem is held".into()))?
            .retable(tables)
    }

    fn take_energy_exchange(&mut self) -> Result<EnergyExchange> {
        self.problem
            .as_mut()
            .map(|problem| problem.take_exchange())
            .ok_or_else(|| HeatlabError::InvalidInput("no heat problem is held".into()))
    }

    fn stored_energy_by_row(&mut self) -> Result<Vec<f64>> {
        let field = self.held()?;
        self.problem
            .as_ref()
            .map(|problem| install(&self.pool, || problem.stored_energy_by_row(field)))
            .ok_or_else(|| HeatlabError::InvalidInput("no heat problem is held".into()))
    }

    fn apply_brush(&mut self, stamp: &BrushStamp) -> Result<()> {
        stamp.check()?;
        let field = self.current.as_mut().ok_or(HeatlabError::NoField)?;
        stamp.apply(field);
        Ok(())
    }

    fn gather(&mut self, cells: &[u32]) -> Result<Vec<f32>> {
        let field = self.held()?;
        check_cells(field.size(), cells, None)?;
        let values = field.as_slice();
        Ok(cells.iter().map(|&cell| values[cell as usize]).collect())
    }

    fn scatter(&mut self, cells: &[u32], values: &[f32]) -> Result<()> {
        let field = self.current.as_mut().ok_or(HeatlabError::NoField)?;
        check_cells(field.size(), cells, Some(values))?;
        let held = field.as_mut_slice();
        for (&cell, &value) in cells.iter().zip(values) {
            held[cell as usize] = value;
        }
        Ok(())
    }

    fn read_rows(&mut self, first_row: usize, values: &mut [f32]) -> Result<()> {
        let field = self.held()?;
        let range = super::brush::row_range(field.size(), first_row, values.len())?;
        values.copy_from_slice(&field.as_slice()[range]);
        Ok(())
    }

    fn write_rows(&mut self, first_row: usize, values: &[f32]) -> Result<()> {
        let field = self.current.as_mut().ok_or(HeatlabError::NoField)?;
        let range = super::brush::row_range(field.size(), first_row, values.len())?;
        field.as_mut_slice()[range].copy_from_slice(values);
        Ok(())
    }

    fn reduce_preview_into(
        &mut self,
        spec: &PreviewSpec<'_>,
        storage: Vec<f32>,
    ) -> Result<ReducedPreview> {
        // The held field is reduced in place: no full-resolution copy per frame.
        match spec.layer {
            Layer::Field => Ok(ReducedPreview::of_into(
                self.held()?,
                spec.max_size,
                storage,
            )),
            Layer::Laplacian => Ok(ReducedPreview::of_into(
                &self.laplacian(spec.boundary)?,
                spec.max_size,
                storage,
            )),
        }
    }

    fn statistics(&mut self) -> Result<FieldStats> {
        // On the held field: no copy.
        let field = self.held()?;
        Ok(install(&self.pool, || FieldStats::of(field)))
    }

    fn statistics_of_rows(&mut self, rows: RowSpan) -> Result<FieldStats> {
        let field = self.held()?;
        let cells = super::brush::row_range(field.size(), rows.first, rows.count * field.cols())?;
        Ok(install(&self.pool, || {
            FieldStats::of_values(&field.as_slice()[cells])
        }))
    }

    fn laplacian(&mut self, boundary: Boundary) -> Result<Grid> {
        let field = self.held()?;
        let mut out = Grid::zeros(field.size());
        if self.method == Some(CpuMethod::Plain) {
            plain_pass(field, out.as_mut_slice(), boundary, |_, lapl| lapl);
            return Ok(out);
        }
        let cols = field.cols();
        install(&self.pool, || {
            apply_stencil(
                field.as_slice(),
                out.as_mut_slice(),
                cols,
                boundary,
                |_, lapl| lapl,
            )
        });
        Ok(out)
    }
}

/// Runs `work` on `pool`, or on rayon's global pool when there is none.
fn install<R: Send>(pool: &Option<Arc<rayon::ThreadPool>>, work: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}
