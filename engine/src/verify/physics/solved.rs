//! The cases the solver answers directly ([`crate::solve`]): steady states solved instead of
//! marched (the rectangle to finer grids than marching can reach, a held region under a flux)
//! and implicit steps against their orders in time.

use super::report::{worse, CaseReport, Check, Expected, Resolution};
use super::steady::material;
use super::{field_of, size};
use crate::compute::Backend;
use crate::error::Result;
use crate::grid::Grid;
use crate::problem::exact::rectangle_theta;
use crate::problem::{CellKind, HeatProblem, SideCondition, Sides};
use crate::solve::{ImplicitScheme, ProblemSolver, SolveOptions, SolveReport, SolveRequest};

/// Cells across the solved steady cases, coarsest first.
const ACROSS: [usize; 5] = [16, 32, 64, 128, 256];

/// A tolerance well below the errors measured.
const OPTIONS: SolveOptions = SolveOptions {
    tolerance: 1e-10,
    max_cycles: 400,
    pre_sweeps: 2,
    post_sweeps: 2,
};

/// Solves `problem`'s steady state on `backend` from `start` (held cells set).
fn solve_steady(
    backend: &mut dyn Backend,
    problem: &HeatProblem,
    start: Grid,
) -> Result<(Grid, SolveReport)> {
    let solver = ProblemSolver::of(problem)?;
    let mut start = start;
    problem.apply_held(&mut start)?;
    backend.upload(&start)?;
    let report = backend.solve_problem(&solver, SolveRequest::Steady, &OPTIONS)?;
    Ok((backend.download()?, report))
}

fn solved_resolution(
    problem: &HeatProblem,
    across: usize,
    report: &SolveReport,
    error: f64,
) -> Resolution {
    Resolution {
        across,
        rows: problem.size.rows,
        cols: problem.size.cols,
        steps: u64::from(report.cycles),
        dt_s: 0.0,
        error,
        order: None,
        error_from_exact: None,
    }
}

/// The rectangle of [`super::rectangle`] solved directly, to 256 cells across.
pub fn solved_rectangle(backend: &mut dyn Backend) -> Result<CaseReport> {
    const WIDTH: f64 = 0.1;
    const HEIGHT: f64 = 0.05;
    let (hot, cold) = (100.0, 0.0);
    let mut resolutions = Vec::new();
    for n in ACROSS {
        let dx = WIDTH / n as f64;
        let mut problem = HeatProblem::uniform(size(n / 2, n)?, dx, material("aluminium")?);
        problem.sides = Sides::all(SideCondition::Fixed { temperature: cold });
        problem.sides.top = SideCondition::Fixed { temperature: hot };
        let (field, report) =
            solve_steady(backend, &problem, field_of(problem.size, |_, _| cold)?)?;
        let far_from_corners = |x: f64, y: f64| {
            let (top_left, top_right) = (x.hypot(HEIGHT - y), (WIDTH - x).hypot(HEIGHT - y));
            top_left.min(top_right) >= 0.25 * WIDTH
        };
        let mut error: f64 = 0.0;
        for (i, &value) in field.as_slice().iter().enumerate() {
            let x = ((i % n) as f64 + 0.5) * dx;
            let y = HEIGHT - ((i / n) as f64 + 0.5) * dx;
            if far_from_corners(x, y) {
                let exact = cold + (hot - cold) * rectangle_theta(WIDTH, HEIGHT, x, y);
                error = worse(error, (f64::from(value) - exact).abs() / (hot - cold));
            }
        }
        resolutions.push(solved_resolution(&problem, n, &report, error));
    }
    let mut case = CaseReport::new(
        "solved-rectangle",
        "the rectangle with one hot side, its steady state solved directly (multigrid CG) to 256 cells across",
        "max |T - T_exact| / ΔT over cells ≥ W/4 from the hot corners",
        Expected::Order(2.0),
        resolutions,
    );
    case.check_errors(1e-4);
    Ok(case)
}

/// A flux `q` into the left side of a granite strip whose right part is held at `T_h`: the
/// held region's boundary is its outline, so the exact answer `T_h + q (L - x) / k` (`L` the
/// held region's left face) is linear and the scheme reproduces it to round-off. With the held
/// temperature at the held cells' centres (the harmonic mean of the two k's) the error was
/// `q dx / 2k`, first order.
pub fn held_region_under_flux(backend: &mut dyn Backend) -> Result<CaseReport> {
    const LENGTH: f64 = 0.0512;
    const FLUX: f64 = 2710.0;
    const HELD: f64 = 14.6;
    let mut resolutions = Vec::new();
    let k = material("granite")?.conductivity;
    let face = 0.75 * LENGTH;
    let scale = FLUX * face / k;
    for n in [8usize, 16, 32, 64] {
        let dx = LENGTH / n as f64;
        let mut problem = HeatProblem::uniform(size(3, n)?, dx, material("granite")?);
        let mut held = CellKind::of(material("granite")?);
        held.name = "held".into();
        held.held_temperature = Some(HELD);
        let held = problem.kind_index(held)?;
        let first_held = n * 3 / 4;
        problem.paint(held, |_, col| col >= first_held);
        problem.sides.left = SideCondition::Flux { flux: FLUX };
        let (field, report) =
            solve_steady(backend, &problem, field_of(problem.size, |_, _| HELD)?)?;
        let mut error: f64 = 0.0;
        for (i, &value) in field.as_slice().iter().enumerate() {
            let col = i % n;
            if col < first_held {
                let x = (col as f64 + 0.5) * dx;
                let exact = HELD + FLUX * (face - x) / k;
                error = worse(error, (f64::from(value) - exact).abs() / scale);
            }
        }
        resolutions.push(solved_resolution(&problem, n, &report, error));
    }
    let mut case = CaseReport::new(
        "held-flux",
        "2710 W/m² into a granite strip whose last quarter is held at 14.6 °C, solved directly",
        "max |T - T_exact| / (q L / k) over free cells",
        Expected::Exact,
        resolutions,
    );
    // f32 rounding of values near 30 °C against a 15 K scale.
    case.check_errors(1e-6);
    Ok(case)
}

/// A 32-cell copper strip between sides at 0 °C, starting as `100 sin(π x / L)`, stepped
/// implicitly to one time constant with 100, 50, 25 and 12.5 times the explicit step; the
/// error against Crank–Nicolson at 1/64 of the smallest step.
fn implicit_slab(backend: &mut dyn Backend, scheme: ImplicitScheme) -> Result<Vec<Resolution>> {
    const CELLS: usize = 32;
    const LENGTH: f64 = 0.032;
    let dx = LENGTH / CELLS as f64;
    let mut problem = HeatProblem::uniform(size(1, CELLS)?, dx, material("copper")?);
    problem.sides.left = SideCondition::Fixed { temperature: 0.0 };
    problem.sides.right = SideCondition::Fixed { temperature: 0.0 };
    let explicit = problem.tables()?.dt;
    let alpha = problem.kinds[0].material.diffusivity();
    let end = LENGTH * LENGTH / (std::f64::consts::PI.powi(2) * alpha);
    let start = field_of(problem.size, |_, col| {
        100.0 * (std::f64::consts::PI * (col as f64 + 0.5) * dx / LENGTH).sin()
    })?;
    let solver = ProblemSolver::of(&problem)?;
    let mut march = |scheme: ImplicitScheme, steps: u64| -> Result<Grid> {
        backend.upload(&start)?;
        let request = SolveRequest::Implicit {
            scheme,
            dt: end / steps as f64,
        };
        for _ in 0..steps {
            backend.solve_problem(&solver, request, &OPTIONS)?;
        }
        backend.download()
    };
    let coarsest = (end / (100.0 * explicit)).ceil() as u64;
    let reference = march(ImplicitScheme::CrankNicolson, coarsest * 8 * 64)?;
    let mut resolutions = Vec::new();
    for refinement in [1u64, 2, 4, 8] {
        let steps = coarsest * refinement;
        let field = march(scheme, steps)?;
        let error = field
            .as_slice()
            .iter()
            .zip(reference.as_slice())
            .map(|(a, b)| f64::from((a - b).abs()) / 100.0)
            .fold(0.0, worse);
        resolutions.push(Resolution {
            across: steps as usize,
            rows: 1,
            cols: CELLS,
            steps,
            dt_s: end / steps as f64,
            error,
            order: None,
            error_from_exact: None,
        });
    }
    Ok(resolutions)
}

/// Backward Euler: first order in time at 100× the explicit step.
pub fn implicit_backward_euler(backend: &mut dyn Backend) -> Result<CaseReport> {
    let resolutions = implicit_slab(backend, ImplicitScheme::BackwardEuler)?;
    let mut case = CaseReport::new(
        "implicit-be",
        "a copper strip's sine mode decaying for one time constant in backward-Euler steps of 100, 50, 25, 12.5 explicit steps",
        "max |T - T_ref| / 100 K against Crank-Nicolson at 1/512 of the largest step (rows: steps taken)",
        Expected::Order(1.0),
        resolutions,
    );
    case.check_errors(1e-2);
    Ok(case)
}

/// Crank–Nicolson: second order in time at 100× the explicit step.
pub fn implicit_crank_nicolson(backend: &mut dyn Backend) -> Result<CaseReport> {
    let resolutions = implicit_slab(backend, ImplicitScheme::CrankNicolson)?;
    let mut case = CaseReport::new(
        "implicit-cn",
        "the same in Crank-Nicolson steps",
        "max |T - T_ref| / 100 K against Crank-Nicolson at 1/512 of the largest step (rows: steps taken)",
        Expected::Order(2.0),
        resolutions,
    );
    case.checks.push(Check::at_most(
        "error at 100 explicit steps (of 100 K)",
        case.resolutions.first().map_or(f64::NAN, |r| r.error),
        1e-2,
    ));
    case.check_errors(1e-4);
    Ok(case)
}
