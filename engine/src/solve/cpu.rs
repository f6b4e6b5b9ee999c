//! The multigrid operations on the CPU: the reference CUDA's kernels (`kernels/multigrid.cu`)
//! repeat expression by expression, in `f64` without fused multiply-adds.

use std::sync::Arc;

use rayon::prelude::*;

use super::cycle::{CycleSummary, MultigridOps, Vector};
use super::system::Coefficients;
use super::{ImplicitScheme, ProblemSolver, SolveRequest, SolverGrids};
use crate::error::Result;

/// `((G_w T_w + G_e T_e) + G_n T_n) + G_s T_s` of cell `(row, col)`; a missing neighbour's
/// term is 0.
#[inline(always)]
pub fn neighbour_sum(c: &Coefficients, x: &[f64], row: usize, col: usize) -> f64 {
    let here = row * c.cols + col;
    if row > 0 && col > 0 && row + 1 < c.rows && col + 1 < c.cols {
        // Inside: every neighbour is there (the same expression, without the edge cases).
        let (w, e, n, s) = (here - 1, here + 1, here - c.cols, here + c.cols);
        return ((c.east[w] * x[w] + c.east[here] * x[e]) + c.south[n] * x[n])
            + c.south[here] * x[s];
    }
    let west = c.west(row, col).map_or(0.0, |w| c.east[w] * x[w]);
    let east = c.east_of(row, col).map_or(0.0, |e| c.east[here] * x[e]);
    let north = c.north(row, col).map_or(0.0, |n| c.south[n] * x[n]);
    let south = c.south_of(row, col).map_or(0.0, |s| c.south[here] * x[s]);
    ((west + east) + north) + south
}

/// The values of one grid: the unknowns, a second buffer for out-of-place half-sweeps, the
/// right side and the residual.
#[derive(Debug, Clone)]
struct GridValues {
    x: Vec<f64>,
    scratch: Vec<f64>,
    rhs: Vec<f64>,
    residual: Vec<f64>,
}

impl GridValues {
    fn zeros(cells: usize) -> Self {
        Self {
            x: vec![0.0; cells],
            scratch: vec![0.0; cells],
            rhs: vec![0.0; cells],
            residual: vec![0.0; cells],
        }
    }
}

/// The CPU's grids for one solver. Grid 0's values are the preconditioned residual `z` and its
/// right side the residual `r`; the solution, `b`, `p` and `q` live beside them.
#[derive(Debug, Clone)]
pub struct CpuMultigrid {
    solver: Arc<ProblemSolver>,
    grids: Vec<GridValues>,
    solution: Vec<f64>,
    rhs: Vec<f64>,
    direction: Vec<f64>,
    product: Vec<f64>,
}

impl CpuMultigrid {
    /// Zeroed grids for `solver`.
    pub fn new(solver: Arc<ProblemSolver>) -> Self {
        let hierarchy = &solver.hierarchy;
        let grids = hierarchy
            .levels
            .iter()
            .map(|c| GridValues::zeros(c.cells()))
            .collect();
        let cells = hierarchy.levels.first().map_or(0, Coefficients::cells);
        Self {
            solver,
            grids,
            solution: vec![0.0; cells],
            rhs: vec![0.0; cells],
            direction: vec![0.0; cells],
            product: vec![0.0; cells],
        }
    }

    /// The solver these grids are for.
    pub fn solver(&self) -> &Arc<ProblemSolver> {
        &self.solver
    }

    /// Loads the finest grid for `request` from `field` (`T_n`, the start): free cells take
    /// its values, held cells their temperatures, and the right side is formed.
    pub fn load(&mut self, field: &[f32], request: SolveRequest) {
        let system = &*self.solver;
        let c = &system.hierarchy.levels[0];
        let sigma = request.sigma();
        let cols = c.cols.max(1);
        self.solution
            .par_iter_mut()
            .zip(field.par_iter().zip(&system.held))
            .for_each(|(x, (&t, &held))| {
                *x = if held.is_nan() { f64::from(t) } else { held };
            });
        let x = &self.solution;
        self.rhs
            .par_chunks_mut(cols)
            .enumerate()
            .for_each(|(row, out)| {
                for (col, rhs) in out.iter_mut().enumerate() {
                    let here = row * cols + col;
                    *rhs = if c.free[here] == 0 {
                        0.0
                    } else {
                        implicit_rhs(c, &system.rhs, x, request, sigma, row, col)
                    };
                }
            });
    }

    /// Writes the free cells of the finest grid into `field`, rounded to `f32`.
    pub fn store(&self, field: &mut [f32]) {
        let c = self.solver.fine();
        field
            .par_iter_mut()
            .zip(self.solution.par_iter().zip(&c.free))
            .for_each(|(t, (&x, &free))| {
                if free == 1 {
                    *t = x as f32;
                }
            });
    }

    /// The finest grid's values.
    pub fn values(&self) -> &[f64] {
        &self.solution
    }

    /// Replaces the finest grid's values.
    pub fn set_values(&mut self, values: &[f64]) {
        self.solution.copy_from_slice(values);
    }

    fn vector(&self, which: Vector) -> &[f64] {
        match which {
            Vector::Residual => &self.grids[0].rhs,
            Vector::Preconditioned => &self.grids[0].x,
            Vector::Direction => &self.direction,
            Vector::Product => &self.product,
        }
    }
}

/// The CPU's grids with the field they solve for: what [`super::solve_on`] runs on.
#[derive(Debug)]
pub struct CpuSolve<'a> {
    /// The grids.
    pub grids: &'a mut CpuMultigrid,
    /// The held field, row-major.
    pub field: &'a mut [f32],
}

impl MultigridOps for CpuSolve<'_> {
    fn levels(&self) -> usize {
        self.grids.levels()
    }
    fn smooth(&mut self, level: usize, colour: u32, sigma: f64) -> Result<()> {
        self.grids.smooth(level, colour, sigma)
    }
    fn restrict_residual(&mut self, level: usize, sigma: f64) -> Result<()> {
        self.grids.restrict_residual(level, sigma)
    }
    fn solve_coarsest(&mut self, sigma: f64) -> Result<()> {
        self.grids.solve_coarsest(sigma)
    }
    fn prolong(&mut self, level: usize) -> Result<()> {
        self.grids.prolong(level)
    }
    fn start(&mut self, sigma: f64) -> Result<CycleSummary> {
        self.grids.start(sigma)
    }
    fn clear_preconditioned(&mut self) -> Result<()> {
        self.grids.clear_preconditioned()
    }
    fn dot(&mut self, a: Vector, b: Vector) -> Result<f64> {
        self.grids.dot(a, b)
    }
    fn apply(&mut self, sigma: f64) -> Result<()> {
        self.grids.apply(sigma)
    }
    fn update_direction(&mut self, beta: f64) -> Result<()> {
        self.grids.update_direction(beta)
    }
    fn step(&mut self, alpha: f64) -> Result<CycleSummary> {
        self.grids.step(alpha)
    }
}

impl SolverGrids for CpuSolve<'_> {
    fn load(&mut self, request: SolveRequest) -> Result<()> {
        self.grids.load(self.field, request);
        Ok(())
    }
    fn fine_values(&mut self) -> Result<Vec<f64>> {
        Ok(self.grids.values().to_vec())
    }
    fn set_fine_values(&mut self, values: &[f64]) -> Result<()> {
        self.grids.set_values(values);
        Ok(())
    }
    fn store(&mut self) -> Result<()> {
        self.grids.store(self.field);
        Ok(())
    }
}

/// The right side of a free cell for `request`, from the problem's `b` and `T_n` in `x`.
#[inline(always)]
pub fn implicit_rhs(
    c: &Coefficients,
    b: &[f64],
    x: &[f64],
    request: SolveRequest,
    sigma: f64,
    row: usize,
    col: usize,
) -> f64 {
    let here = row * c.cols + col;
    match request {
        SolveRequest::Steady => b[here],
        SolveRequest::Implicit {
            scheme: ImplicitScheme::BackwardEuler,
            ..
        } => (sigma * c.capacity[here]) * x[here] + b[here],
        SolveRequest::Implicit {
            scheme: ImplicitScheme::CrankNicolson,
            ..
        } => {
            let s = neighbour_sum(c, x, row, col);
            ((sigma * c.capacity[here]) * x[here] - ((c.diagonal[here] * x[here]) - s))
                + 2.0 * b[here]
        }
    }
}

impl MultigridOps for CpuMultigrid {
    fn levels(&self) -> usize {
        self.solver.hierarchy.levels.len()
    }

    fn smooth(&mut self, level: usize, colour: u32, sigma: f64) -> Result<()> {
        let c = &self.solver.hierarchy.levels[level];
        let grid = &mut self.grids[level];
        let cols = c.cols.max(1);
        let (x, rhs) = (&grid.x, &grid.rhs);
        grid.scratch
            .par_chunks_mut(cols)
            .enumerate()
            .for_each(|(row, out)| {
                for (col, next) in out.iter_mut().enumerate() {
                    let here = row * cols + col;
                    let denominator = c.diagonal[here] + sigma * c.capacity[here];
                    let updated =
                        c.free[here] == 1 && (row + col) as u32 % 2 == colour && denominator > 0.0;
                    *next = if updated {
                        (rhs[here] + neighbour_sum(c, x, row, col)) / denominator
                    } else {
                        x[here]
                    };
                }
            });
        std::mem::swap(&mut grid.x, &mut grid.scratch);
        Ok(())
    }

    fn restrict_residual(&mut self, level: usize, sigma: f64) -> Result<()> {
        let c = &self.solver.hierarchy.levels[level];
        let step = self.solver.hierarchy.coarsenings[level];
        let (fine_grids, coarse_grids) = self.grids.split_at_mut(level + 1);
        let fine = &mut fine_grids[level];
        let coarse = &mut coarse_grids[0];
        residual_into(c, &fine.x, &fine.rhs, sigma, &mut fine.residual);
        let coarse_c = &self.solver.hierarchy.levels[level + 1];
        let coarse_cols = coarse_c.cols.max(1);
        let residual = &fine.residual;
        coarse
            .rhs
            .par_chunks_mut(coarse_cols)
            .enumerate()
            .for_each(|(row, out)| {
                for (col, rhs) in out.iter_mut().enumerate() {
                    let mut sum = 0.0;
                    let rows = step.row_factor * row..(step.row_factor * (row + 1)).min(c.rows);
                    for fine_row in rows {
                        let cols = step.col_factor * col..(step.col_factor * (col + 1)).min(c.cols);
                        for fine_col in cols {
                            sum += residual[fine_row * c.cols + fine_col];
                        }
                    }
                    *rhs = sum;
                }
            });
        coarse.x.fill(0.0);
        Ok(())
    }

    fn solve_coarsest(&mut self, sigma: f64) -> Result<()> {
        let level = self.solver.hierarchy.levels.len() - 1;
        let c = &self.solver.hierarchy.levels[level];
        let mut a = super::coarsest::dense_matrix(c, sigma);
        let grid = &mut self.grids[level];
        grid.x.copy_from_slice(&grid.rhs);
        super::coarsest::eliminate(&mut a, &mut grid.x, c.cells());
        Ok(())
    }

    fn prolong(&mut self, level: usize) -> Result<()> {
        let c = &self.solver.hierarchy.levels[level];
        let step = self.solver.hierarchy.coarsenings[level];
        let coarse_cols = self.solver.hierarchy.levels[level + 1].cols;
        let (fine_grids, coarse_grids) = self.grids.split_at_mut(level + 1);
        let correction = &coarse_grids[0].x;
        let weight = super::hierarchy::CORRECTION_WEIGHT;
        let cols = c.cols.max(1);
        fine_grids[level]
            .x
            .par_chunks_mut(cols)
            .enumerate()
            .for_each(|(row, out)| {
                for (col, x) in out.iter_mut().enumerate() {
                    if c.free[row * cols + col] == 1 {
                        let parent = (row / step.row_factor) * coarse_cols + col / step.col_factor;
                        *x += weight * correction[parent];
                    }
                }
            });
        Ok(())
    }

    fn start(&mut self, sigma: f64) -> Result<CycleSummary> {
        let c = &self.solver.hierarchy.levels[0];
        residual_into(c, &self.solution, &self.rhs, sigma, &mut self.grids[0].rhs);
        let residual = &self.grids[0].rhs;
        Ok(summarise(c, &self.solution, |i| (residual[i].abs(), 0.0)))
    }

    fn clear_preconditioned(&mut self) -> Result<()> {
        self.grids[0].x.fill(0.0);
        Ok(())
    }

    fn dot(&mut self, a: Vector, b: Vector) -> Result<f64> {
        Ok(super::reduce::dot(self.vector(a), self.vector(b)))
    }

    fn apply(&mut self, sigma: f64) -> Result<()> {
        let c = &self.solver.hierarchy.levels[0];
        let cols = c.cols.max(1);
        let p = &self.direction;
        self.product
            .par_chunks_mut(cols)
            .enumerate()
            .for_each(|(row, out)| {
                for (col, q) in out.iter_mut().enumerate() {
                    let here = row * cols + col;
                    *q = if c.free[here] == 1 {
                        let denominator = c.diagonal[here] + sigma * c.capacity[here];
                        denominator * p[here] - neighbour_sum(c, p, row, col)
                    } else {
                        0.0
                    };
                }
            });
        Ok(())
    }

    fn update_direction(&mut self, beta: f64) -> Result<()> {
        let z = &self.grids[0].x;
        self.direction
            .par_iter_mut()
            .zip(z.par_iter())
            .for_each(|(p, &z)| *p = z + beta * *p);
        Ok(())
    }

    fn step(&mut self, alpha: f64) -> Result<CycleSummary> {
        let c = &self.solver.hierarchy.levels[0];
        let (p, q) = (&self.direction, &self.product);
        self.solution
            .par_iter_mut()
            .zip(self.grids[0].rhs.par_iter_mut())
            .enumerate()
            .for_each(|(i, (x, r))| {
                if c.free[i] == 1 {
                    *x += alpha * p[i];
                    *r -= alpha * q[i];
                }
            });
        let residual = &self.grids[0].rhs;
        Ok(summarise(c, &self.solution, |i| {
            (residual[i].abs(), (alpha * p[i]).abs())
        }))
    }
}

/// The max norms of grid `c` with values `x`: `norms(i)` gives a free cell's |r| and change.
fn summarise(
    c: &Coefficients,
    x: &[f64],
    norms: impl Fn(usize) -> (f64, f64) + Sync,
) -> CycleSummary {
    let start = CycleSummary {
        residual: 0.0,
        change: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
    };
    (0..c.cells())
        .into_par_iter()
        .with_min_len(4096)
        .fold(
            || start,
            |mut s, i| {
                s.min = s.min.min(x[i]);
                s.max = s.max.max(x[i]);
                if c.free[i] == 1 {
                    let (residual, change) = norms(i);
                    s.residual = s.residual.max(residual);
                    s.change = s.change.max(change);
                }
                s
            },
        )
        .reduce(
            || start,
            |a, b| CycleSummary {
                residual: a.residual.max(b.residual),
                change: a.change.max(b.change),
                min: a.min.min(b.min),
                max: a.max.max(b.max),
            },
        )
}

/// `rhs - ((diag + σ C) x - Σ G x_neighbour)` of every free cell (0 elsewhere) into `out`.
fn residual_into(c: &Coefficients, x: &[f64], rhs: &[f64], sigma: f64, out: &mut [f64]) {
    let cols = c.cols.max(1);
    out.par_chunks_mut(cols).enumerate().for_each(|(row, out)| {
        for (col, r) in out.iter_mut().enumerate() {
            let here = row * cols + col;
            *r = if c.free[here] == 1 {
                let denominator = c.diagonal[here] + sigma * c.capacity[here];
                rhs[here] - (denominator * x[here] - neighbour_sum(c, x, row, col))
            } else {
                0.0
            };
        }
    });
}
