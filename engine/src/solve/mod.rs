//! A heat problem's steady state and implicit steps, solved directly instead of marched:
//! conjugate gradients preconditioned by a matrix-free geometric multigrid V-cycle, in `f64`
//! on the CPU (the reference) and in CUDA, the two agreeing bit for bit after every iteration.
//!
//! The system is the explicit scheme's own finite-volume problem ([`system`]). One request
//! solves `(σ C + A) T = rhs` for the free cells:
//!
//! - steady: `σ = 0`, `rhs = b`;
//! - backward Euler over `dt`: `σ = 1/dt`, `rhs = σ C T_n + b`;
//! - Crank–Nicolson over `dt` (the equation doubled): `σ = 2/dt`, `rhs = σ C T_n - A T_n + 2 b`.
//!
//! Every cell's update is one fixed expression without fused multiply-adds, dot products are
//! summed in one fixed order ([`reduce`]) and the other reductions are maxima (exact in any
//! order), so the backends agree to the bit.

pub mod coarsest;
pub mod components;
pub mod cpu;
pub mod cycle;
pub mod exchange;
pub mod hierarchy;
pub mod reduce;
pub mod system;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use cycle::{run_cycles, CycleSummary, MultigridOps, SolveReport, Vector};
pub use hierarchy::Hierarchy;
pub use system::{Coefficients, ConductionSystem};

use crate::error::{HeatlabError, Result};
use crate::problem::HeatProblem;

/// An implicit time-stepping scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImplicitScheme {
    /// First order in time, unconditionally stable and free of oscillation.
    BackwardEuler,
    /// Second order in time; steps far above the explicit limit may ring at sharp fronts.
    CrankNicolson,
}

impl ImplicitScheme {
    /// Every scheme, in the order a selector lists them.
    pub const ALL: [Self; 2] = [Self::BackwardEuler, Self::CrankNicolson];
}

impl fmt::Display for ImplicitScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BackwardEuler => "backward-euler",
            Self::CrankNicolson => "crank-nicolson",
        })
    }
}

impl std::str::FromStr for ImplicitScheme {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "implicit scheme")
    }
}

/// What one solve computes from the held field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SolveRequest {
    /// The steady state.
    Steady,
    /// One implicit step of `dt` seconds.
    Implicit {
        /// The scheme.
        scheme: ImplicitScheme,
        /// The step, s.
        dt: f64,
    },
}

impl SolveRequest {
    /// `σ`, the weight of the heat capacity on the diagonal.
    pub fn sigma(self) -> f64 {
        match self {
            Self::Steady => 0.0,
            Self::Implicit {
                scheme: ImplicitScheme::BackwardEuler,
                dt,
            } => 1.0 / dt,
            Self::Implicit {
                scheme: ImplicitScheme::CrankNicolson,
                dt,
            } => 2.0 / dt,
        }
    }
}

/// How hard a solve works.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SolveOptions {
    /// Stop when the estimated error is at most this fraction of the temperature span.
    pub tolerance: f64,
    /// Give up after this many cycles.
    pub max_cycles: u32,
    /// Red-black sweeps before each coarse correction.
    pub pre_sweeps: u32,
    /// Red-black sweeps after it.
    pub post_sweeps: u32,
}

/// The default tolerance: a hundredth of the precision promised (1e-6 of the span).
pub const DEFAULT_TOLERANCE: f64 = 1e-8;

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            tolerance: DEFAULT_TOLERANCE,
            max_cycles: 200,
            pre_sweeps: 2,
            post_sweeps: 2,
        }
    }
}

impl SolveOptions {
    /// Refuses a tolerance that is not a positive fraction below 1 or a cycle limit of 0.
    pub fn check(&self) -> Result<()> {
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(HeatlabError::InvalidInput(format!(
                "a solver tolerance is a fraction of the temperature span between 0 and 1, \
                 got {}",
                self.tolerance
            )));
        }
        if self.max_cycles == 0 {
            return Err(HeatlabError::InvalidInput(
                "a solve needs at least one cycle".into(),
            ));
        }
        Ok(())
    }
}

/// A problem ready to solve: its grids, its right side and held temperatures, built once and
/// shared (behind an `Arc`) with the backend, which keeps its own copy of the grids while it
/// is handed the same solver.
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemSolver {
    /// The problem's grid (level 0) and the coarser ones.
    pub hierarchy: Hierarchy,
    /// `b` of the finest grid, W/m.
    pub rhs: Vec<f64>,
    /// The temperature of each held cell, `NaN` for free ones.
    pub held: Vec<f64>,
    /// The parts with no way out ([`components::closed_parts`]): a steady state keeps the
    /// stored energy each had in the field it starts from.
    pub closed_parts: Vec<components::ClosedPart>,
}

impl ProblemSolver {
    /// The solver of `problem` (checked first).
    pub fn of(problem: &HeatProblem) -> Result<Arc<Self>> {
        let system = ConductionSystem::of(problem)?;
        let closed_parts = components::closed_parts(&system.coefficients, &system.rhs);
        Ok(Arc::new(Self {
            hierarchy: Hierarchy::build(system.coefficients),
            rhs: system.rhs,
            held: system.held,
            closed_parts,
        }))
    }

    /// The problem's own grid.
    pub fn fine(&self) -> &Coefficients {
        &self.hierarchy.levels[0]
    }

    /// The stored energy `Σ C_i T_i` of each closed part, J/m, summed in row-major order.
    pub fn closed_energies(&self, values: &[f64]) -> Vec<f64> {
        let capacity = &self.fine().capacity;
        self.closed_parts
            .iter()
            .map(|part| {
                part.cells
                    .iter()
                    .map(|&i| capacity[i as usize] * values[i as usize])
                    .sum()
            })
            .collect()
    }

    /// Shifts each closed part of `values` by one constant so that its stored energy becomes
    /// its `targets` entry (a closed part's steady state is fixed only up to a constant).
    pub fn shift_to_energies(&self, values: &mut [f64], targets: &[f64]) {
        let capacity = &self.fine().capacity;
        let now = self.closed_energies(values);
        for ((part, &target), &energy) in self.closed_parts.iter().zip(targets).zip(&now) {
            let total: f64 = part.cells.iter().map(|&i| capacity[i as usize]).sum();
            if total <= 0.0 {
                continue;
            }
            let shift = (target - energy) / total;
            for &i in &part.cells {
                values[i as usize] += shift;
            }
        }
    }
}

/// A backend's grids for a [`ProblemSolver`], holding (or reaching) the backend's field.
pub trait SolverGrids: MultigridOps {
    /// Loads the finest grid for `request` from the held field (`T_n`, the start).
    fn load(&mut self, request: SolveRequest) -> Result<()>;
    /// A copy of the finest grid's values.
    fn fine_values(&mut self) -> Result<Vec<f64>>;
    /// Replaces the finest grid's values.
    fn set_fine_values(&mut self, values: &[f64]) -> Result<()>;
    /// Writes the finest grid's free cells into the held field, rounded to `f32`.
    fn store(&mut self) -> Result<()>;
}

/// One solve on `grids`: load, cycle to the tolerance, fix a closed steady problem's energy,
/// store. The one sequence every backend runs.
pub fn solve_on(
    grids: &mut dyn SolverGrids,
    solver: &ProblemSolver,
    request: SolveRequest,
    options: &SolveOptions,
) -> Result<SolveReport> {
    options.check()?;
    grids.load(request)?;
    let closed = request == SolveRequest::Steady && !solver.closed_parts.is_empty();
    let energies = match closed {
        true => Some(solver.closed_energies(&grids.fine_values()?)),
        false => None,
    };
    let report = run_cycles(grids, request.sigma(), options)?;
    if let Some(targets) = energies {
        let mut values = grids.fine_values()?;
        solver.shift_to_energies(&mut values, &targets);
        grids.set_fine_values(&values)?;
    }
    grids.store()?;
    Ok(report)
}

/// Refuses a problem the solver cannot take for `request`: thermostats (they switch heaters
/// over time, which a steady state does not have) and, for a steady state, a closed problem
/// into which heat flows without end.
pub fn check_solvable(
    problem: &HeatProblem,
    solver: &ProblemSolver,
    request: SolveRequest,
) -> Result<()> {
    if !problem.thermostats.is_empty() {
        return Err(HeatlabError::InvalidInput(format!(
            "this problem has {} thermostat(s): they switch heaters as the temperature changes \
             in time, so the solver cannot take it; march it with explicit steps instead",
            problem.thermostats.len()
        )));
    }
    if request != SolveRequest::Steady {
        return Ok(());
    }
    let cols = solver.fine().cols;
    let heated = solver
        .closed_parts
        .iter()
        .find(|part| part.net_source.abs() > 1e-9 * part.gross_source);
    match heated {
        Some(part) if part.cells.len() == solver.fine().cells() - held_cells(solver) => {
            Err(HeatlabError::InvalidInput(format!(
                "this problem has no steady state: {:.6e} W/m of heat enters and no side or \
                 held region lets it out (every side is insulated, a flux or periodic), so the \
                 temperature rises without end",
                part.net_source
            )))
        }
        Some(part) => {
            let first = part.cells.first().copied().unwrap_or(0) as usize;
            Err(HeatlabError::InvalidInput(format!(
                "this problem has no steady state: {} cell(s) around row {}, column {} take \
                 {:.6e} W/m of heat and conduct none of it away (they are walled in by \
                 material that conducts nothing), so they heat without end",
                part.cells.len(),
                first / cols,
                first % cols,
                part.net_source
            )))
        }
        None => Ok(()),
    }
}

/// The held cells of `solver`'s problem.
fn held_cells(solver: &ProblemSolver) -> usize {
    solver.held.iter().filter(|t| !t.is_nan()).count()
}
