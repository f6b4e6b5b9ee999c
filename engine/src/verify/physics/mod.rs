//! Validation of the heat-problem scheme ([`crate::problem`]) against exact answers, on any
//! backend: each case runs at several resolutions, measures its error against the exact
//! answer and the observed order of convergence, and checks both against stated tolerances.
//!
//! The cases (see `docs/physics.md` for the results):
//! - `linear`: steady conduction between two sides at fixed temperatures (exact);
//! - `flux`: a fixed heat flux into one side, the other fixed (exact);
//! - `composite`: two materials in series, the steady flux against `ΔT / Σ(L/k)` (exact);
//! - `slab`: a slab cooling through convective sides against the series solution (order 2);
//! - `gaussian`: a hot spot spreading as the analytic Gaussian (order 2);
//! - `heater`: heaters in an insulated box store power × time (exact);
//! - `rectangle`: the steady state of a rectangle with one hot side against its Fourier series
//!   (order 2);
//! - `solved-rectangle`: the same solved directly ([`crate::solve`]) to 256 cells (order 2);
//! - `held-flux`: a flux into a strip whose end is held, solved directly: exact, since a held
//!   region's temperature lies on its faces;
//! - `implicit-be`, `implicit-cn`: a decaying mode in implicit steps of 12.5 to 100 explicit
//!   steps (order 1 and 2 in time).
//!
//! Every case steps through [`Backend::set_problem`] or solves through
//! [`Backend::solve_problem`], so it runs on the CPU and CUDA alike.

pub mod markdown;
pub mod report;
mod solved;
mod steady;
mod transient;

use std::time::Instant;

use report::worse;
pub use report::{Bound, CaseReport, Check, Expected, PhysicsReport, Resolution};
pub use solved::{
    held_region_under_flux, implicit_backward_euler, implicit_crank_nicolson, solved_rectangle,
};
pub use steady::{composite_wall, flux_wall, linear_profile, rectangle};
pub use transient::{convective_slab, gaussian_spot, insulated_heater};

use crate::compute::{Backend, ProblemUpload, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::problem::{HeatProblem, StepTables, TimeStep};

/// A validation case: it runs itself on a backend.
pub type Case = fn(&mut dyn Backend) -> Result<CaseReport>;

/// Every case, in the order `heatlab verify --physics` runs them.
pub const CASES: [Case; 11] = [
    linear_profile,
    flux_wall,
    composite_wall,
    convective_slab,
    gaussian_spot,
    insulated_heater,
    rectangle,
    solved_rectangle,
    held_region_under_flux,
    implicit_backward_euler,
    implicit_crank_nicolson,
];

/// Runs every case on `backend`.
pub fn validate(backend: &mut dyn Backend) -> Result<PhysicsReport> {
    let started = Instant::now();
    let mut cases = Vec::with_capacity(CASES.len());
    for case in CASES {
        cases.push(case(backend)?);
    }
    Ok(PhysicsReport {
        backend: backend.kind().to_string(),
        device: backend.device_name(),
        cases,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// A field of `size` with `value(row, col)` in every cell (°C).
fn field_of(size: GridSize, value: impl Fn(usize, usize) -> f64) -> Result<Grid> {
    let values = (0..size.cells())
        .map(|i| value(i / size.cols, i % size.cols) as f32)
        .collect();
    Grid::from_vec(size, values)
}

/// Uploads `initial` (held cells set) and `problem` to `backend`; returns the step tables.
fn start(
    backend: &mut dyn Backend,
    problem: &HeatProblem,
    mut initial: Grid,
    book_energy: bool,
) -> Result<StepTables> {
    let tables = problem.tables()?;
    problem.apply_held(&mut initial)?;
    backend.upload(&initial)?;
    backend.set_problem(Some(ProblemUpload {
        tables: &tables,
        map: &problem.map,
        book_energy,
        booked_rows: None,
    }))?;
    Ok(tables)
}

/// Sets the time step of `problem` to the largest that is at most `fraction` of the stability
/// limit and divides `duration` into whole steps; returns the number of steps.
fn steps_reaching(problem: &mut HeatProblem, duration: f64, fraction: f64) -> Result<u64> {
    problem.time_step = TimeStep::Fraction(fraction);
    let limit = problem.tables()?.stability_limit;
    let steps = (duration / (fraction * limit)).ceil().max(1.0);
    problem.time_step = TimeStep::Seconds(duration / steps);
    Ok(steps as u64)
}

/// One resolution's row: the problem's size and step, the steps taken and the error.
fn resolution(
    problem: &HeatProblem,
    tables: &StepTables,
    across: usize,
    steps: u64,
    error: f64,
) -> Resolution {
    Resolution {
        across,
        rows: problem.size.rows,
        cols: problem.size.cols,
        steps,
        dt_s: tables.dt,
        error,
        order: None,
        error_from_exact: None,
    }
}

/// Advances `steps` steps.
fn advance(backend: &mut dyn Backend, steps: u64) -> Result<()> {
    // The problem's tables replace the stencil's parameters while a problem is set.
    backend.advance(steps, &StepParams::default()).map(|_| ())
}

/// Where stepping to a steady state ended.
struct Steady {
    /// The field.
    field: Grid,
    /// Steps taken.
    steps: u64,
    /// The largest change of a cell over the last window, °C.
    last_change: f64,
}

/// Steps in windows of `window` steps until no cell changes by more than `tolerance` (°C) over
/// a window, or `max_steps` are taken. A window at least as long as the slowest mode's decay
/// time makes the last change a bound on the distance to the steady state (up to a factor
/// `e/(e-1)`).
fn step_to_steady(
    backend: &mut dyn Backend,
    window: u64,
    tolerance: f64,
    max_steps: u64,
) -> Result<Steady> {
    let mut previous = backend.download()?;
    let mut steps = 0;
    loop {
        advance(backend, window)?;
        steps += window;
        let field = backend.download()?;
        let last_change = largest_difference(&field, |i| f64::from(previous.as_slice()[i]));
        if last_change <= tolerance || steps >= max_steps {
            return Ok(Steady {
                field,
                steps,
                last_change,
            });
        }
        previous = field;
    }
}

/// The largest `|field - exact|` over the cells, `exact` by row-major index.
fn largest_difference(field: &Grid, exact: impl Fn(usize) -> f64) -> f64 {
    field
        .as_slice()
        .iter()
        .enumerate()
        .map(|(i, &v)| (f64::from(v) - exact(i)).abs())
        .fold(0.0, worse)
}

/// Returns the backend to the uniform stencil after a case.
fn finish(backend: &mut dyn Backend) -> Result<()> {
    backend.set_problem(None)
}

/// A case's grid size (its tables are fixed, so a failure is a bug).
fn size(rows: usize, cols: usize) -> Result<GridSize> {
    GridSize::new(rows, cols)
        .map_err(|e| HeatlabError::Internal(format!("a validation case's grid: {e}")))
}
