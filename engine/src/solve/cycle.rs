//! The one solve: conjugate gradients preconditioned by a multigrid V-cycle, over the
//! operations a backend provides.
//!
//! The V-cycle on grid `l`: `pre` red-black sweeps (red first), the residual restricted to
//! grid `l + 1` (whose correction starts at zero), the cycle on `l + 1`, its correction added
//! back, `post` sweeps (black first); the coarsest grid (at most
//! [`super::hierarchy::COARSEST_CELLS`] cells) is solved exactly ([`super::coarsest`]). Coarse
//! grids are Galerkin's (sums of the fine coefficients), the sweeps mirror each other and the
//! restriction is the transpose of the correction, so the cycle is a symmetric positive
//! definite preconditioner and conjugate gradients may take it: that makes the solve robust to
//! conductivity contrasts where a cycle alone stalls.
//!
//! Dot products are summed in one fixed order ([`super::reduce`]) and every other reduction is
//! a maximum (exact in any order), so the CPU and CUDA take the same iterations to the bit.
//! After each iteration the error left is estimated from the change of the solution and the
//! rate at which the changes shrink, `change · rate / (1 - rate)`; the solve stops when that is
//! at most the tolerance times the temperature span.

use std::time::Instant;

use serde::Serialize;

use super::SolveOptions;
use crate::error::{HeatlabError, Result};

/// The smallest span the tolerance is taken of, °C (a uniform solution has none).
pub const SPAN_FLOOR: f64 = 1e-3;

/// The smallest span as a fraction of the largest temperature's magnitude: a nearly uniform
/// field is solved to 1e-3 of this times the tolerance, far below the `f32` rounding (6e-8 of
/// the magnitude) of the field it is stored in, where `f64` round-off would stall it first.
pub const MAGNITUDE_FLOOR: f64 = 1e-3;

/// The span the tolerance is taken of: the temperatures' span, at least [`SPAN_FLOOR`] and
/// [`MAGNITUDE_FLOOR`] of the largest magnitude.
fn tolerance_span(summary: &CycleSummary) -> f64 {
    let magnitude = summary.min.abs().max(summary.max.abs());
    (summary.max - summary.min)
        .max(SPAN_FLOOR)
        .max(MAGNITUDE_FLOOR * magnitude)
}

/// The largest rate the error estimate assumes (an iteration that shrank the change less, or
/// grew it, is taken to shrink it this much).
const RATE_CEILING: f64 = 0.95;

/// Max norms of the finest grid after an iteration (exact: maxima do not depend on order).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CycleSummary {
    /// `max |r|` of the free cells, W/m.
    pub residual: f64,
    /// `max |change of T|` of the free cells in the iteration, °C.
    pub change: f64,
    /// The least temperature (free and held cells), °C.
    pub min: f64,
    /// The greatest temperature, °C.
    pub max: f64,
}

impl CycleSummary {
    /// Whether every figure is a number.
    pub fn is_finite(&self) -> bool {
        [self.residual, self.change, self.min, self.max]
            .iter()
            .all(|v| v.is_finite())
    }
}

/// The finest grid's vectors of conjugate gradients (all 0 on held cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vector {
    /// `r = rhs - (σ C + A) T`.
    Residual,
    /// `z`, the V-cycle's answer to `r`.
    Preconditioned,
    /// `p`, the search direction.
    Direction,
    /// `q = (σ C + A) p`.
    Product,
}

/// What a backend does for the solve, on the grids of its [`super::Hierarchy`] (0 the finest).
/// Each operation is one fixed expression per cell, evaluated alike by every backend.
pub trait MultigridOps {
    /// The number of grids.
    fn levels(&self) -> usize;
    /// One red-black half-sweep on grid `level`: every free cell of `colour` ((row + col) % 2)
    /// takes `(rhs + Σ G T_neighbour) / (diag + σ C)` from the values before the half-sweep.
    /// Grid 0's right side is [`Vector::Residual`], its values [`Vector::Preconditioned`].
    fn smooth(&mut self, level: usize, colour: u32, sigma: f64) -> Result<()>;
    /// The residual of grid `level` summed over each coarse cell into the right side of grid
    /// `level + 1`, whose values become 0.
    fn restrict_residual(&mut self, level: usize, sigma: f64) -> Result<()>;
    /// Solves the coarsest grid exactly for its right side ([`super::coarsest::eliminate`]).
    fn solve_coarsest(&mut self, sigma: f64) -> Result<()>;
    /// Adds grid `level + 1`'s values, times [`super::hierarchy::CORRECTION_WEIGHT`], to its
    /// fine cells of grid `level` (free ones).
    fn prolong(&mut self, level: usize) -> Result<()>;
    /// `r = rhs - (σ C + A) T` of the loaded problem; the summary with no change.
    fn start(&mut self, sigma: f64) -> Result<CycleSummary>;
    /// Sets [`Vector::Preconditioned`] to 0 before a V-cycle.
    fn clear_preconditioned(&mut self) -> Result<()>;
    /// `Σ a_i b_i` in [`super::reduce`]'s order.
    fn dot(&mut self, a: Vector, b: Vector) -> Result<f64>;
    /// `q = (σ C + A) p`.
    fn apply(&mut self, sigma: f64) -> Result<()>;
    /// `p = z + β p`.
    fn update_direction(&mut self, beta: f64) -> Result<()>;
    /// `T += α p`, `r -= α q`; the summary, with the change `max |α p|`.
    fn step(&mut self, alpha: f64) -> Result<CycleSummary>;
}

/// How a solve went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolveReport {
    /// Iterations of conjugate gradients taken (one V-cycle each).
    pub cycles: u32,
    /// Grids in the hierarchy.
    pub levels: usize,
    /// The max residual before the first iteration and after each, W/m.
    pub residual_history: Vec<f64>,
    /// The max change of the solution in each iteration, °C.
    pub change_history: Vec<f64>,
    /// The estimated error left, °C.
    pub estimated_error: f64,
    /// The temperature span the tolerance is taken of, °C (at least [`SPAN_FLOOR`] and
    /// [`MAGNITUDE_FLOOR`] of the largest temperature's magnitude).
    pub span: f64,
    /// The solve's wall time, s.
    pub seconds: f64,
}

/// Runs preconditioned conjugate gradients on `ops` from the values it holds until the
/// estimated error is at most `options.tolerance` of the span; refused (with the residual
/// reached) when it is not after `options.max_cycles` iterations, or when the values stop
/// being numbers.
pub fn run_cycles(
    ops: &mut dyn MultigridOps,
    sigma: f64,
    options: &SolveOptions,
) -> Result<SolveReport> {
    options.check()?;
    let started = Instant::now();
    let first = ops.start(sigma)?;
    let mut report = SolveReport {
        cycles: 0,
        levels: ops.levels(),
        residual_history: vec![first.residual],
        change_history: Vec::new(),
        estimated_error: f64::INFINITY,
        span: tolerance_span(&first),
        seconds: 0.0,
    };
    if first.residual == 0.0 {
        report.estimated_error = 0.0;
        return Ok(report);
    }
    precondition(ops, sigma, options)?;
    ops.update_direction(0.0)?;
    let mut rz = ops.dot(Vector::Residual, Vector::Preconditioned)?;
    let mut rates = [RATE_CEILING; 2];
    let mut previous_change: Option<f64> = None;
    while report.cycles < options.max_cycles {
        ops.apply(sigma)?;
        let pq = ops.dot(Vector::Direction, Vector::Product)?;
        if pq.is_nan() || pq <= 0.0 || !rz.is_finite() {
            // No direction left to search (the residual is already zero to rounding).
            report.estimated_error = 0.0;
            break;
        }
        let summary = ops.step(rz / pq)?;
        report.cycles += 1;
        report.residual_history.push(summary.residual);
        report.change_history.push(summary.change);
        if !summary.is_finite() {
            return Err(HeatlabError::InvalidInput(format!(
                "the solver's values stopped being numbers after {} iterations (residual {:e} \
                 W/m): the problem's coefficients are out of range",
                report.cycles, summary.residual
            )));
        }
        report.span = tolerance_span(&summary);
        if let Some(before) = previous_change.filter(|&before| before > 0.0) {
            rates = [rates[1], (summary.change / before).min(RATE_CEILING)];
        }
        let rate = rates[0].max(rates[1]);
        report.estimated_error = match previous_change {
            _ if summary.change == 0.0 || summary.residual == 0.0 => 0.0,
            Some(_) => summary.change * rate / (1.0 - rate),
            None => f64::INFINITY,
        };
        if report.estimated_error <= options.tolerance * report.span {
            break;
        }
        previous_change = Some(summary.change);
        precondition(ops, sigma, options)?;
        let rz_next = ops.dot(Vector::Residual, Vector::Preconditioned)?;
        ops.update_direction(rz_next / rz)?;
        rz = rz_next;
    }
    report.seconds = started.elapsed().as_secs_f64();
    if report.estimated_error <= options.tolerance * report.span {
        return Ok(report);
    }
    Err(HeatlabError::NotConverged {
        cycles: report.cycles,
        residual: report.residual_history.last().copied().unwrap_or(f64::NAN),
        estimated_error: report.estimated_error,
        span: report.span,
    })
}

/// `z` = one V-cycle on `r` from zero.
fn precondition(ops: &mut dyn MultigridOps, sigma: f64, options: &SolveOptions) -> Result<()> {
    ops.clear_preconditioned()?;
    v_cycle(ops, 0, sigma, options)
}

/// One V-cycle from grid `level` down.
fn v_cycle(
    ops: &mut dyn MultigridOps,
    level: usize,
    sigma: f64,
    options: &SolveOptions,
) -> Result<()> {
    let sweep = |ops: &mut dyn MultigridOps, first: u32| -> Result<()> {
        ops.smooth(level, first, sigma)?;
        ops.smooth(level, 1 - first, sigma)
    };
    if level + 1 >= ops.levels() {
        return ops.solve_coarsest(sigma);
    }
    for _ in 0..options.pre_sweeps {
        sweep(ops, 0)?;
    }
    ops.restrict_residual(level, sigma)?;
    v_cycle(ops, level + 1, sigma, options)?;
    ops.prolong(level)?;
    for _ in 0..options.post_sweeps {
        sweep(ops, 1)?;
    }
    Ok(())
}
