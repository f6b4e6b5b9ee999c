//! The solver's operations on the GPU (`kernels/multigrid.cu`): the same grids, expressions
//! and summation order as the CPU's ([`crate::solve::cpu`]), so a solve gives the same bits.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};

use super::{driver_error, CudaDevice};
use crate::error::{HeatlabError, Result};
use crate::solve::coarsest::{dense_matrix, SINGULAR_PIVOT};
use crate::solve::hierarchy::CORRECTION_WEIGHT;
use crate::solve::reduce::BLOCK;
use crate::solve::{
    Coefficients, CycleSummary, ImplicitScheme, MultigridOps, ProblemSolver, SolveRequest,
    SolverGrids, Vector,
};

/// The solver kernels' source.
pub const MULTIGRID_SOURCE: &str = include_str!("../../../../kernels/multigrid.cu");

/// A grid's shape as the kernels take it (`struct Grid`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct GridShape {
    rows: i32,
    cols: i32,
    periodic_rows: i32,
    periodic_cols: i32,
}

// SAFETY: four `i32`s laid out as the kernels' `struct Grid` (repr(C), no padding).
unsafe impl DeviceRepr for GridShape {}

impl GridShape {
    fn of(c: &Coefficients) -> Result<Self> {
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| {
                HeatlabError::Unsupported(format!("{v} cells on a side is too large to solve"))
            })
        };
        Ok(Self {
            rows: int(c.rows)?,
            cols: int(c.cols)?,
            periodic_rows: i32::from(c.periodic_rows),
            periodic_cols: i32::from(c.periodic_cols),
        })
    }
}

/// The solver's kernels.
pub(super) struct MultigridKernels {
    smooth: CudaFunction,
    residual: CudaFunction,
    apply: CudaFunction,
    restrict: CudaFunction,
    prolong: CudaFunction,
    coarsest: CudaFunction,
    dot_blocks: CudaFunction,
    sum_blocks: CudaFunction,
    reset_slots: CudaFunction,
    step: CudaFunction,
    norms: CudaFunction,
    direction: CudaFunction,
    load: CudaFunction,
    rhs: CudaFunction,
    store: CudaFunction,
}

impl MultigridKernels {
    fn load(device: &CudaDevice) -> Result<Self> {
        let module = device.load_kernels("multigrid.cu", MULTIGRID_SOURCE)?;
        let f = |name: &str| device.function(&module, name);
        Ok(Self {
            smooth: f("mg_smooth")?,
            residual: f("mg_residual")?,
            apply: f("mg_apply")?,
            restrict: f("mg_restrict")?,
            prolong: f("mg_prolong")?,
            coarsest: f("mg_coarsest")?,
            dot_blocks: f("mg_dot_blocks")?,
            sum_blocks: f("mg_sum_blocks")?,
            reset_slots: f("mg_reset_slots")?,
            step: f("mg_step")?,
            norms: f("mg_norms")?,
            direction: f("mg_direction")?,
            load: f("mg_load")?,
            rhs: f("mg_rhs")?,
            store: f("mg_store")?,
        })
    }
}

/// One grid's coefficients and values on the device.
struct DeviceGrid {
    shape: GridShape,
    cells: usize,
    free: CudaSlice<u8>,
    east: CudaSlice<f64>,
    south: CudaSlice<f64>,
    diagonal: CudaSlice<f64>,
    capacity: CudaSlice<f64>,
    x: CudaSlice<f64>,
    scratch: CudaSlice<f64>,
    rhs: CudaSlice<f64>,
    residual: CudaSlice<f64>,
}

/// A solver's grids on the device.
pub(super) struct DeviceMultigrid {
    solver: Arc<ProblemSolver>,
    kernels: MultigridKernels,
    grids: Vec<DeviceGrid>,
    /// `b` of the problem and of the request, the solution, `p`, `q`.
    problem_rhs: CudaSlice<f64>,
    held: CudaSlice<f64>,
    equation_rhs: CudaSlice<f64>,
    solution: CudaSlice<f64>,
    direction: CudaSlice<f64>,
    product: CudaSlice<f64>,
    partial: [CudaSlice<f64>; 2],
    slots: CudaSlice<u64>,
    coarsest_matrix: CudaSlice<f64>,
    coarsest_work: CudaSlice<f64>,
    /// The `σ` the coarsest matrix was built for.
    coarsest_sigma: Option<u64>,
    stream: Arc<CudaStream>,
}

/// Threads per block of the per-cell kernels (the block sums need exactly this).
const THREADS: u32 = BLOCK as u32;

fn per_cell(cells: usize) -> Result<LaunchConfig> {
    let blocks = u32::try_from(cells.div_ceil(THREADS as usize))
        .map_err(|_| HeatlabError::Unsupported("grid too large to solve".into()))?;
    Ok(LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    })
}

fn count(cells: usize) -> i64 {
    cells as i64
}

impl DeviceMultigrid {
    fn new(device: &CudaDevice, solver: Arc<ProblemSolver>) -> Result<Self> {
        let stream = device.stream().clone();
        let failed = driver_error("uploading the solver's grids");
        let kernels = MultigridKernels::load(device)?;
        let mut grids = Vec::with_capacity(solver.hierarchy.levels.len());
        for c in &solver.hierarchy.levels {
            let cells = c.cells();
            grids.push(DeviceGrid {
                shape: GridShape::of(c)?,
                cells,
                free: stream.clone_htod(&c.free).map_err(&failed)?,
                east: stream.clone_htod(&c.east).map_err(&failed)?,
                south: stream.clone_htod(&c.south).map_err(&failed)?,
                diagonal: stream.clone_htod(&c.diagonal).map_err(&failed)?,
                capacity: stream.clone_htod(&c.capacity).map_err(&failed)?,
                x: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
                scratch: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
                rhs: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
                residual: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
            });
        }
        let cells = solver.fine().cells();
        let coarsest_cells = solver
            .hierarchy
            .levels
            .last()
            .map_or(1, Coefficients::cells);
        let blocks = cells.div_ceil(BLOCK).max(1);
        Ok(Self {
            kernels,
            grids,
            problem_rhs: stream.clone_htod(&solver.rhs).map_err(&failed)?,
            held: stream.clone_htod(&solver.held).map_err(&failed)?,
            equation_rhs: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
            solution: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
            direction: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
            product: stream.alloc_zeros::<f64>(cells).map_err(&failed)?,
            partial: [
                stream.alloc_zeros::<f64>(blocks).map_err(&failed)?,
                stream.alloc_zeros::<f64>(blocks).map_err(&failed)?,
            ],
            slots: stream.alloc_zeros::<u64>(4).map_err(&failed)?,
            coarsest_matrix: stream
                .alloc_zeros::<f64>(coarsest_cells * coarsest_cells)
                .map_err(&failed)?,
            coarsest_work: stream
                .alloc_zeros::<f64>(coarsest_cells * coarsest_cells + 2 * coarsest_cells)
                .map_err(&failed)?,
            coarsest_sigma: None,
            solver,
            stream,
        })
    }

    /// The maxima in the slots, decoded.
    fn read_slots(&mut self) -> Result<CycleSummary> {
        let keys = self
            .stream
            .clone_dtoh(&self.slots)
            .map_err(driver_error("reading the solver's norms"))?;
        self.stream
            .synchronize()
            .map_err(driver_error("reading the solver's norms"))?;
        let value = |key: u64| {
            let bits = if key >> 63 == 1 {
                key & !(1 << 63)
            } else {
                !key
            };
            f64::from_bits(bits)
        };
        Ok(CycleSummary {
            residual: value(keys[0]),
            change: value(keys[1]),
            min: value(keys[2]),
            max: value(keys[3]),
        })
    }

    fn reset_slots(&mut self) -> Result<()> {
        let mut launch = self.stream.launch_builder(&self.kernels.reset_slots);
        launch.arg(&mut self.slots);
        // SAFETY: mg_reset_slots(unsigned long long* slots): one thread writes the 4 slots
        // allocated in `new`.
        unsafe { launch.launch(per_cell(1)?) }
            .map_err(driver_error("resetting the solver's norms"))?;
        Ok(())
    }
}

/// The GPU's grids with the field they solve for.
pub(super) struct CudaSolve<'a> {
    grids: &'a mut DeviceMultigrid,
    field: &'a mut CudaSlice<f32>,
}

impl MultigridOps for CudaSolve<'_> {
    fn levels(&self) -> usize {
        self.grids.grids.len()
    }

    fn smooth(&mut self, level: usize, colour: u32, sigma: f64) -> Result<()> {
        let g = &mut self.grids.grids[level];
        let colour = colour as i32;
        let mut launch = self.grids.stream.launch_builder(&self.grids.kernels.smooth);
        launch
            .arg(&g.shape)
            .arg(&g.free)
            .arg(&g.east)
            .arg(&g.south)
            .arg(&g.diagonal)
            .arg(&g.capacity)
            .arg(&sigma)
            .arg(&colour)
            .arg(&g.x)
            .arg(&g.rhs)
            .arg(&mut g.scratch);
        // SAFETY: mg_smooth(Grid, const u8* free, const double* east, south, diagonal,
        // capacity, double sigma, int colour, const double* x, const double* rhs, double*
        // out): every array holds the grid's rows*cols cells (allocated from its coefficients
        // in `new`); x and out are distinct buffers; threads past the cells return.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("smoothing"))?;
        std::mem::swap(&mut g.x, &mut g.scratch);
        Ok(())
    }

    fn restrict_residual(&mut self, level: usize, sigma: f64) -> Result<()> {
        let step = self.grids.solver.hierarchy.coarsenings[level];
        let (fine_grids, coarse_grids) = self.grids.grids.split_at_mut(level + 1);
        let fine = &mut fine_grids[level];
        let coarse = &mut coarse_grids[0];
        let stream = &self.grids.stream;
        let mut launch = stream.launch_builder(&self.grids.kernels.residual);
        launch
            .arg(&fine.shape)
            .arg(&fine.free)
            .arg(&fine.east)
            .arg(&fine.south)
            .arg(&fine.diagonal)
            .arg(&fine.capacity)
            .arg(&sigma)
            .arg(&fine.x)
            .arg(&fine.rhs)
            .arg(&mut fine.residual);
        // SAFETY: mg_residual(Grid, free, east, south, diagonal, capacity, sigma, x, rhs,
        // out): all arrays of the fine grid's cells; out distinct from x and rhs.
        unsafe { launch.launch(per_cell(fine.cells)?) }.map_err(driver_error("a residual"))?;
        let (row_factor, col_factor) = (step.row_factor as i32, step.col_factor as i32);
        let mut launch = stream.launch_builder(&self.grids.kernels.restrict);
        launch
            .arg(&fine.shape)
            .arg(&coarse.shape)
            .arg(&row_factor)
            .arg(&col_factor)
            .arg(&fine.residual)
            .arg(&mut coarse.rhs)
            .arg(&mut coarse.x);
        // SAFETY: mg_restrict(Grid fine, Grid coarse, int row_factor, int col_factor, const
        // double* residual, double* rhs, double* x): the coarse grid is the fine one gathered
        // by these factors (ceil division), so every child index lies inside the fine
        // residual; rhs and x hold the coarse cells.
        unsafe { launch.launch(per_cell(coarse.cells)?) }.map_err(driver_error("restricting"))?;
        Ok(())
    }

    fn solve_coarsest(&mut self, sigma: f64) -> Result<()> {
        let grids = &mut *self.grids;
        let level = grids.grids.len() - 1;
        if grids.coarsest_sigma != Some(sigma.to_bits()) {
            let matrix = dense_matrix(&grids.solver.hierarchy.levels[level], sigma);
            grids
                .stream
                .memcpy_htod(&matrix, &mut grids.coarsest_matrix)
                .map_err(driver_error("uploading the coarsest grid"))?;
            grids.coarsest_sigma = Some(sigma.to_bits());
        }
        let g = &mut grids.grids[level];
        let n = g.cells as i32;
        let mut launch = grids.stream.launch_builder(&grids.kernels.coarsest);
        launch
            .arg(&n)
            .arg(&grids.coarsest_matrix)
            .arg(&SINGULAR_PIVOT)
            .arg(&g.rhs)
            .arg(&mut g.x)
            .arg(&mut grids.coarsest_work);
        // SAFETY: mg_coarsest(int n, const double* matrix, double, const double* rhs, double*
        // x, double* work): matrix holds n*n doubles, work n*n + 2n (allocated for the
        // coarsest grid's n cells), rhs and x n; one thread runs.
        unsafe { launch.launch(per_cell(1)?) }.map_err(driver_error("the coarsest solve"))?;
        Ok(())
    }

    fn prolong(&mut self, level: usize) -> Result<()> {
        let step = self.grids.solver.hierarchy.coarsenings[level];
        let (fine_grids, coarse_grids) = self.grids.grids.split_at_mut(level + 1);
        let fine = &mut fine_grids[level];
        let coarse = &coarse_grids[0];
        let (row_factor, col_factor) = (step.row_factor as i32, step.col_factor as i32);
        let mut launch = self
            .grids
            .stream
            .launch_builder(&self.grids.kernels.prolong);
        launch
            .arg(&fine.shape)
            .arg(&coarse.shape.cols)
            .arg(&row_factor)
            .arg(&col_factor)
            .arg(&fine.free)
            .arg(&CORRECTION_WEIGHT)
            .arg(&coarse.x)
            .arg(&mut fine.x);
        // SAFETY: mg_prolong(Grid fine, int coarse_cols, int row_factor, int col_factor,
        // const u8* free, double weight, const double* correction, double* x): each fine
        // cell's parent lies in the coarse grid (ceil division); free and x hold the fine
        // cells.
        unsafe { launch.launch(per_cell(fine.cells)?) }.map_err(driver_error("correcting"))?;
        Ok(())
    }

    fn start(&mut self, sigma: f64) -> Result<CycleSummary> {
        let grids = &mut *self.grids;
        grids.reset_slots()?;
        let g = &mut grids.grids[0];
        let mut launch = grids.stream.launch_builder(&grids.kernels.residual);
        launch
            .arg(&g.shape)
            .arg(&g.free)
            .arg(&g.east)
            .arg(&g.south)
            .arg(&g.diagonal)
            .arg(&g.capacity)
            .arg(&sigma)
            .arg(&grids.solution)
            .arg(&grids.equation_rhs)
            .arg(&mut g.rhs);
        // SAFETY: as in restrict_residual: every array holds the finest grid's cells, the
        // output (grid 0's right side, the residual r) is distinct from the inputs.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("a residual"))?;
        let n = count(g.cells);
        let mut launch = grids.stream.launch_builder(&grids.kernels.norms);
        launch
            .arg(&n)
            .arg(&g.free)
            .arg(&grids.solution)
            .arg(&g.rhs)
            .arg(&mut grids.slots);
        // SAFETY: mg_norms(long long n, const u8* free, const double* x, const double* r,
        // unsigned long long* slots): n cells in each array, 4 slots.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("norms"))?;
        grids.read_slots()
    }

    fn clear_preconditioned(&mut self) -> Result<()> {
        let grids = &mut *self.grids;
        grids
            .stream
            .memset_zeros(&mut grids.grids[0].x)
            .map_err(driver_error("clearing the correction"))
    }

    fn dot(&mut self, a: Vector, b: Vector) -> Result<f64> {
        let grids = &mut *self.grids;
        let vector = |which: Vector| match which {
            Vector::Residual => &grids.grids[0].rhs,
            Vector::Preconditioned => &grids.grids[0].x,
            Vector::Direction => &grids.direction,
            Vector::Product => &grids.product,
        };
        let (a, b) = (vector(a), vector(b));
        let failed = driver_error("a dot product");
        let mut n = grids.grids[0].cells;
        let [first, second] = &mut grids.partial;
        let length = count(n);
        let mut launch = grids.stream.launch_builder(&grids.kernels.dot_blocks);
        launch.arg(&length).arg(a).arg(b).arg(&mut *first);
        // SAFETY: mg_dot_blocks(long long n, const double* a, const double* b, double*
        // partial): a and b hold n doubles, partial one per block (allocated for the finest
        // grid's blocks); blocks of exactly 256 threads, as the kernel's tree needs.
        unsafe { launch.launch(per_cell(n)?) }.map_err(&failed)?;
        n = n.div_ceil(BLOCK).max(1);
        let (mut from, mut to) = (first, second);
        while n > 1 {
            let length = count(n);
            let mut launch = grids.stream.launch_builder(&grids.kernels.sum_blocks);
            launch.arg(&length).arg(&*from).arg(&mut *to);
            // SAFETY: mg_sum_blocks(long long n, const double* values, double* partial): the
            // n partial sums of the last launch, into a distinct buffer of at least n/256.
            unsafe { launch.launch(per_cell(n)?) }.map_err(&failed)?;
            n = n.div_ceil(BLOCK);
            std::mem::swap(&mut from, &mut to);
        }
        let mut total = [0.0f64];
        grids
            .stream
            .memcpy_dtoh(&from.slice(0..1), &mut total)
            .map_err(&failed)?;
        grids.stream.synchronize().map_err(&failed)?;
        Ok(total[0])
    }

    fn apply(&mut self, sigma: f64) -> Result<()> {
        let grids = &mut *self.grids;
        let g = &grids.grids[0];
        let mut launch = grids.stream.launch_builder(&grids.kernels.apply);
        launch
            .arg(&g.shape)
            .arg(&g.free)
            .arg(&g.east)
            .arg(&g.south)
            .arg(&g.diagonal)
            .arg(&g.capacity)
            .arg(&sigma)
            .arg(&grids.direction)
            .arg(&mut grids.product);
        // SAFETY: mg_apply(Grid, free, east, south, diagonal, capacity, sigma, const double*
        // p, double* q): all of the finest grid's cells; p and q distinct.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("A p"))?;
        Ok(())
    }

    fn update_direction(&mut self, beta: f64) -> Result<()> {
        let grids = &mut *self.grids;
        let n = count(grids.grids[0].cells);
        let mut launch = grids.stream.launch_builder(&grids.kernels.direction);
        launch
            .arg(&n)
            .arg(&grids.grids[0].x)
            .arg(&beta)
            .arg(&mut grids.direction);
        // SAFETY: mg_direction(long long n, const double* z, double beta, double* p): n cells
        // in both.
        unsafe { launch.launch(per_cell(grids.grids[0].cells)?) }
            .map_err(driver_error("a direction"))?;
        Ok(())
    }

    fn step(&mut self, alpha: f64) -> Result<CycleSummary> {
        let grids = &mut *self.grids;
        grids.reset_slots()?;
        let g = &mut grids.grids[0];
        let n = count(g.cells);
        let mut launch = grids.stream.launch_builder(&grids.kernels.step);
        launch
            .arg(&n)
            .arg(&g.free)
            .arg(&alpha)
            .arg(&grids.direction)
            .arg(&grids.product)
            .arg(&mut grids.solution)
            .arg(&mut g.rhs)
            .arg(&mut grids.slots);
        // SAFETY: mg_step(long long n, free, double alpha, const double* p, const double* q,
        // double* x, double* r, slots): n cells in every array, 4 slots.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("a CG step"))?;
        grids.read_slots()
    }
}

impl SolverGrids for CudaSolve<'_> {
    fn load(&mut self, request: SolveRequest) -> Result<()> {
        let grids = &mut *self.grids;
        let g = &grids.grids[0];
        let n = count(g.cells);
        let mut launch = grids.stream.launch_builder(&grids.kernels.load);
        launch
            .arg(&n)
            .arg(&grids.held)
            .arg(&*self.field)
            .arg(&mut grids.solution);
        // SAFETY: mg_load(long long n, const double* held, const float* field, double* x):
        // the field has the problem's cells (checked by the caller), as do held and x.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("loading"))?;
        let (kind, sigma) = match request {
            SolveRequest::Steady => (0i32, 0.0),
            SolveRequest::Implicit {
                scheme: ImplicitScheme::BackwardEuler,
                ..
            } => (1, request.sigma()),
            SolveRequest::Implicit {
                scheme: ImplicitScheme::CrankNicolson,
                ..
            } => (2, request.sigma()),
        };
        let mut launch = grids.stream.launch_builder(&grids.kernels.rhs);
        launch
            .arg(&g.shape)
            .arg(&g.free)
            .arg(&g.east)
            .arg(&g.south)
            .arg(&g.diagonal)
            .arg(&g.capacity)
            .arg(&grids.problem_rhs)
            .arg(&kind)
            .arg(&sigma)
            .arg(&grids.solution)
            .arg(&mut grids.equation_rhs);
        // SAFETY: mg_rhs(Grid, free, east, south, diagonal, capacity, const double* b, int
        // request, double sigma, const double* x, double* rhs): all of the finest grid's
        // cells; rhs distinct from x.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("a right side"))?;
        Ok(())
    }

    fn fine_values(&mut self) -> Result<Vec<f64>> {
        let failed = driver_error("downloading the solution");
        let values = self
            .grids
            .stream
            .clone_dtoh(&self.grids.solution)
            .map_err(&failed)?;
        self.grids.stream.synchronize().map_err(&failed)?;
        Ok(values)
    }

    fn set_fine_values(&mut self, values: &[f64]) -> Result<()> {
        let failed = driver_error("uploading the solution");
        self.grids
            .stream
            .memcpy_htod(values, &mut self.grids.solution)
            .map_err(&failed)?;
        self.grids.stream.synchronize().map_err(&failed)
    }

    fn store(&mut self) -> Result<()> {
        let grids = &mut *self.grids;
        let g = &grids.grids[0];
        let n = count(g.cells);
        let mut launch = grids.stream.launch_builder(&grids.kernels.store);
        launch
            .arg(&n)
            .arg(&g.free)
            .arg(&grids.solution)
            .arg(&mut *self.field);
        // SAFETY: mg_store(long long n, const u8* free, const double* x, float* field): the
        // field has the problem's cells, as do free and x.
        unsafe { launch.launch(per_cell(g.cells)?) }.map_err(driver_error("storing"))?;
        grids
            .stream
            .synchronize()
            .map_err(driver_error("finishing the solve"))
    }
}

mod entry;
