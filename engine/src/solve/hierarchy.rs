//! The grids of a multigrid cycle: the problem's own and ever coarser ones, each cell of a
//! coarse grid the union of (up to) 2×2 cells of the finer one.
//!
//! A coarse grid is Galerkin's: the correction of a coarse cell is the same on all its fine
//! cells (piecewise-constant transfer), its right side the sum of theirs, and its coefficients
//! are the sums of the fine ones (`Pᵀ A P`): a coarse face conducts the sum of the fine faces
//! it is made of, faces inside a coarse cell drop out, the diagonal's extras (sides, held
//! neighbours) and the heat capacities add. That keeps every coarse grid as positive definite
//! as the problem, whatever its contrasts, so the V-cycle is a sound preconditioner. The
//! correction is added back with a weight ([`CORRECTION_WEIGHT`]).

use rayon::prelude::*;

use super::system::Coefficients;

/// The weight of a coarse correction when it is added back. A piecewise-constant correction
/// of a Galerkin grid is about half as large as the smooth error it stands for (its energy is
/// twice a smooth function's), so the cycle over-corrects by this factor, below 2 so that
/// the V-cycle stays a positive definite preconditioner (1.8 took the fewest iterations on a
/// heat sink of copper, FR-4 and air from 64² to 512²: 17, 20, 25, 27 against 33, 50, 65, 96
/// at 1).
pub const CORRECTION_WEIGHT: f64 = 1.8;

/// A grid is not coarsened further once it has at most this many cells.
pub const COARSEST_CELLS: usize = 16;

/// How a coarse grid gathers the fine one: the fine rows (columns) of coarse row (column) `i`
/// are `factor * i .. min(factor * i + factor, fine)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coarsening {
    /// Fine rows per coarse row (1 or 2).
    pub row_factor: usize,
    /// Fine columns per coarse column (1 or 2).
    pub col_factor: usize,
}

impl Coarsening {
    /// The coarsening of a `rows × cols` grid, or `None` for the coarsest.
    pub fn of(rows: usize, cols: usize) -> Option<Self> {
        if rows * cols <= COARSEST_CELLS || (rows == 1 && cols == 1) {
            return None;
        }
        Some(Self {
            row_factor: if rows > 1 { 2 } else { 1 },
            col_factor: if cols > 1 { 2 } else { 1 },
        })
    }

    /// The coarse size of `fine` cells along an axis coarsened by `factor`.
    pub fn coarse(fine: usize, factor: usize) -> usize {
        fine.div_ceil(factor)
    }
}

/// The coefficients of every grid, finest first, and how each coarse one gathers the one
/// before it (`coarsenings[l]` takes grid `l` to `l + 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct Hierarchy {
    /// Grid 0 is the problem's.
    pub levels: Vec<Coefficients>,
    /// One fewer than the levels.
    pub coarsenings: Vec<Coarsening>,
}

impl Hierarchy {
    /// The grids coarsened from `fine` until [`Coarsening::of`] says stop.
    pub fn build(fine: Coefficients) -> Self {
        let mut levels = vec![fine];
        let mut coarsenings = Vec::new();
        while let Some(step) = levels
            .last()
            .and_then(|last| Coarsening::of(last.rows, last.cols))
        {
            let Some(last) = levels.last() else { break };
            let coarse = coarsen(last, step);
            coarsenings.push(step);
            levels.push(coarse);
        }
        Self {
            levels,
            coarsenings,
        }
    }
}

/// The coarse grid of `fine` under `step`.
fn coarsen(fine: &Coefficients, step: Coarsening) -> Coefficients {
    let rows = Coarsening::coarse(fine.rows, step.row_factor);
    let cols = Coarsening::coarse(fine.cols, step.col_factor);
    let (fr, fc) = (step.row_factor, step.col_factor);
    let periodic_cols = fine.periodic_cols && cols > 1;
    let periodic_rows = fine.periodic_rows && rows > 1;
    let mut coarse = Coefficients::empty(rows, cols, periodic_rows, periodic_cols);
    let fine_rows = |r: usize| fr * r..(fr * r + fr).min(fine.rows);
    let fine_cols = |c: usize| fc * c..(fc * c + fc).min(fine.cols);
    let parts = (
        coarse.free.par_chunks_mut(cols),
        coarse.east.par_chunks_mut(cols),
        coarse.south.par_chunks_mut(cols),
        coarse.extra_x.par_chunks_mut(cols),
        coarse.extra_y.par_chunks_mut(cols),
        coarse.capacity.par_chunks_mut(cols),
    );
    parts.into_par_iter().enumerate().for_each(
        |(r, (free, east, south, extra_x, extra_y, capacity))| {
            for c in 0..cols {
                let (mut any_free, mut e, mut s, mut ex, mut ey, mut cap) =
                    (false, 0.0, 0.0, 0.0, 0.0, 0.0);
                let last_row = fine_rows(r).end - 1;
                let last_col = fine_cols(c).end - 1;
                for fr_ in fine_rows(r) {
                    for fc_ in fine_cols(c) {
                        let f = fr_ * fine.cols + fc_;
                        any_free |= fine.free[f] == 1;
                        ex += fine.extra_x[f];
                        ey += fine.extra_y[f];
                        cap += fine.capacity[f];
                        // A face inside the coarse cell joins two of its own cells; one on its
                        // east (south) edge joins it to the next coarse cell, unless the grid
                        // is one coarse cell wide and the face wraps onto itself.
                        if fc_ != last_col {
                            continue;
                        }
                        if cols > 1 || !fine.periodic_cols {
                            e += fine.east[f];
                        }
                    }
                }
                for fc_ in fine_cols(c) {
                    let f = last_row * fine.cols + fc_;
                    if rows > 1 || !fine.periodic_rows {
                        s += fine.south[f];
                    }
                }
                free[c] = u8::from(any_free);
                east[c] = e;
                south[c] = s;
                extra_x[c] = ex;
                extra_y[c] = ey;
                capacity[c] = cap;
            }
        },
    );
    coarse.sum_diagonal();
    coarse
}
