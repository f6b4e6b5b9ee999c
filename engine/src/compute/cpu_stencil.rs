//! The CPU's stencil passes: one step of every row in parallel ([`apply_stencil`]), the plain
//! loop it is checked against, and several steps in one pass over bands ([`blocked_pass`]).

use rayon::prelude::*;

use super::Boundary;
use crate::grid::Grid;

/// Rows of one parallel work item: enough to amortise scheduling, few enough to balance.
const ROWS_PER_TASK: usize = 8;

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
                let up = if r == 0 {
                    ghost_row(boundary, &zeros, mid, row(rows - 1))
                } else {
                    row(r - 1)
                };
                let down = if r + 1 == rows {
                    ghost_row(boundary, &zeros, mid, row(0))
                } else {
                    row(r + 1)
                };
                stencil_row(up, mid, down, out_row, boundary, &combine);
            }
        });
}

/// The ghost row beside the edge row `mid`: `zeros`, `mid` itself, or `wrapped`, the grid's row
/// at the opposite edge.
fn ghost_row<'a>(
    boundary: Boundary,
    zeros: &'a [f32],
    mid: &'a [f32],
    wrapped: &'a [f32],
) -> &'a [f32] {
    match boundary {
        Boundary::Dirichlet => zeros,
        Boundary::Neumann => mid,
        Boundary::Periodic => wrapped,
    }
}

/// `out[i] = combine(f[i], lapl[i])` for every cell, one cell at a time on this thread. Each
/// neighbour is looked up by its own index rule (zero, the cell itself, or the wrapped cell),
/// sharing no code with [`apply_stencil`], so the two check each other.
pub(super) fn plain_pass(
    field: &Grid,
    out: &mut [f32],
    boundary: Boundary,
    combine: impl Fn(f32, f32) -> f32,
) {
    let (rows, cols) = (field.rows(), field.cols());
    let values = field.as_slice();
    let at = |r: isize, c: isize, center: f32| -> f32 {
        let inside = (0..rows as isize).contains(&r) && (0..cols as isize).contains(&c);
        if inside {
            return values[r as usize * cols + c as usize];
        }
        match boundary {
            Boundary::Dirichlet => 0.0,
            Boundary::Neumann => center,
            Boundary::Periodic => {
                let (r, c) = (r.rem_euclid(rows as isize), c.rem_euclid(cols as isize));
                values[r as usize * cols + c as usize]
            }
        }
    };
    for r in 0..rows {
        for c in 0..cols {
            let center = values[r * cols + c];
            let (ri, ci) = (r as isize, c as isize);
            let lapl = 4.0 * center
                - at(ri - 1, ci, center)
                - at(ri + 1, ci, center)
                - at(ri, ci - 1, center)
                - at(ri, ci + 1, center);
            out[r * cols + c] = combine(center, lapl);
        }
    }
}

/// `steps` steps in one pass: every band of `band_rows` rows is advanced in a private buffer
/// that also holds `steps` halo rows above and below, recomputed redundantly. Each cell's
/// arithmetic is the single step's, so the result is identical to `steps` calls of
/// [`apply_stencil`].
pub fn blocked_pass(
    field: &[f32],
    out: &mut [f32],
    cols: usize,
    boundary: Boundary,
    steps: usize,
    band_rows: usize,
    combine: &(impl Fn(f32, f32) -> f32 + Sync),
) {
    let rows = field.len() / cols;
    let zeros = vec![0.0f32; cols];
    // Periodic bands load wrapped rows and step them as the torus would; the others give the
    // grid's first and last rows a ghost row.
    let periodic = match boundary {
        Boundary::Periodic => true,
        Boundary::Dirichlet | Boundary::Neumann => false,
    };
    out.par_chunks_mut(band_rows * cols)
        .enumerate()
        .for_each_init(
            || (Vec::new(), Vec::new()),
            |(level, next), (band, out_band)| {
                let start = (band * band_rows) as isize;
                let len = out_band.len() / cols;
                let extended = len + 2 * steps;
                level.resize(extended * cols, 0.0);
                next.resize(extended * cols, 0.0);
                let global = |i: usize| start - steps as isize + i as isize;
                for i in 0..extended {
                    let target = &mut level[i * cols..(i + 1) * cols];
                    let g = global(i);
                    if periodic {
                        let r = g.rem_euclid(rows as isize) as usize;
                        target.copy_from_slice(&field[r * cols..(r + 1) * cols]);
                    } else if (0..rows as isize).contains(&g) {
                        let r = g as usize;
                        target.copy_from_slice(&field[r * cols..(r + 1) * cols]);
                    }
                }
                for k in 1..=steps {
                    for i in k..extended - k {
                        let g = global(i);
                        if !periodic && !(0..rows as isize).contains(&g) {
                            continue; // outside the grid: never read, the edge rows use ghosts
                        }
                        let mid = &level[i * cols..(i + 1) * cols];
                        let ghost = match boundary {
                            Boundary::Dirichlet => &zeros[..],
                            Boundary::Neumann | Boundary::Periodic => mid,
                        };
                        let up = if !periodic && g == 0 {
                            ghost
                        } else {
                            &level[(i - 1) * cols..i * cols]
                        };
                        let down = if !periodic && g == rows as isize - 1 {
                            ghost
                        } else {
                            &level[(i + 1) * cols..(i + 2) * cols]
                        };
                        stencil_row(
                            up,
                            mid,
                            down,
                            &mut next[i * cols..(i + 1) * cols],
                            boundary,
                            combine,
                        );
                    }
                    std::mem::swap(level, next);
                }
                out_band.copy_from_slice(&level[steps * cols..(steps + len) * cols]);
            },
        );
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
