//! The coarsest grid's exact solve: Gaussian elimination without pivoting on its (at most
//! [`super::hierarchy::COARSEST_CELLS`]) cells, the order CUDA's one-thread kernel repeats.
//!
//! The matrix is symmetric and weakly diagonally dominant, so elimination needs no pivoting.
//! A closed problem's is singular (constants are in its null space): a pivot that falls to
//! round-off ([`SINGULAR_PIVOT`] of the row's original diagonal) leaves its unknown at 0,
//! which picks one of the solutions; the constant is fixed on the finest grid.

use super::system::Coefficients;

/// A pivot at most this fraction of its row's diagonal counts as zero.
pub const SINGULAR_PIVOT: f64 = 1e-12;

/// The dense matrix of grid `c` under `sigma`, row-major `cells × cells`: for a free cell its
/// diagonal `diag + σ C` and `-G` to each free neighbour; for a held (or empty) cell the
/// identity row, so that its value stays 0.
pub fn dense_matrix(c: &Coefficients, sigma: f64) -> Vec<f64> {
    let n = c.cells();
    let mut a = vec![0.0; n * n];
    for here in 0..n {
        let (row, col) = (here / c.cols, here % c.cols);
        let denominator = c.diagonal[here] + sigma * c.capacity[here];
        if c.free[here] == 0 || denominator <= 0.0 {
            a[here * n + here] = 1.0;
            continue;
        }
        a[here * n + here] = denominator;
        let mut couple = |other: Option<usize>, g: f64| {
            if let Some(other) = other {
                if c.free[other] == 1 && other != here {
                    a[here * n + other] -= g;
                }
            }
        };
        couple(
            c.west(row, col),
            c.west(row, col).map_or(0.0, |w| c.east[w]),
        );
        couple(c.east_of(row, col), c.east[here]);
        couple(
            c.north(row, col),
            c.north(row, col).map_or(0.0, |n| c.south[n]),
        );
        couple(c.south_of(row, col), c.south[here]);
    }
    a
}

/// Solves `a x = b` in place (`a` is destroyed, `b` becomes `x`), `n` unknowns; held rows
/// (`b` = 0 there) give 0.
pub fn eliminate(a: &mut [f64], b: &mut [f64], n: usize) {
    let diagonal: Vec<f64> = (0..n).map(|k| a[k * n + k]).collect();
    let mut zero = vec![false; n];
    for k in 0..n {
        let pivot = a[k * n + k];
        if pivot.abs() <= SINGULAR_PIVOT * diagonal[k].abs() {
            zero[k] = true;
            continue;
        }
        for r in k + 1..n {
            let factor = a[r * n + k] / pivot;
            if factor == 0.0 {
                continue;
            }
            for j in k..n {
                a[r * n + j] -= factor * a[k * n + j];
            }
            b[r] -= factor * b[k];
        }
    }
    for k in (0..n).rev() {
        if zero[k] {
            b[k] = 0.0;
            continue;
        }
        let mut sum = b[k];
        for j in k + 1..n {
            sum -= a[k * n + j] * b[j];
        }
        b[k] = sum / a[k * n + k];
    }
}
