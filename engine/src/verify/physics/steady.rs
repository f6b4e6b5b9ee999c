//! The steady cases: a linear profile between fixed sides, a fixed flux into a wall, a composite
//! wall, and a rectangle with one hot side.

use super::report::{worse, CaseReport, Check, Expected, Resolution};
use super::{
    field_of, finish, largest_difference, resolution, size, start, step_to_steady, Steady,
};
use crate::compute::Backend;
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;
use crate::problem::exact::rectangle_theta;
use crate::problem::material::find;
use crate::problem::{CellKind, HeatProblem, Material, Side, SideCondition, Sides, StepTables};

/// Cells across the 1-D strips and the rectangle, coarsest first.
const ACROSS: [usize; 4] = [8, 16, 32, 64];

/// A steady state is reached when no cell moves more than this fraction of the problem's
/// temperature scale over a window at least as long as the slowest mode's decay time.
const STEADY_TOLERANCE: f64 = 1e-6;

/// Windows past which a case gives up waiting for a steady state (the check then fails).
const MAX_WINDOWS: u64 = 200;

/// The f32 stall allowed for the exact cases started cold, in units of `2⁻²⁴ N²` of the
/// temperature scale (see [`CaseReport::check_stall`]): the slowest mode's share of the stall
/// is `ulp(T)/(2 a λ_min)`, below 4 units for these cases, and this leaves a margin of 2.
const STALL: f64 = 8.0;

/// The error allowed started from the exact answer: a few units in the last place of the
/// temperatures (2⁻²⁴ × 100 °C is 6e-6 °C, 6e-8 of a 100 K scale).
const FROM_EXACT: f64 = 1e-6;

/// The same for a flux the ledger reads from the edge cells' `f32` temperatures: rounding the
/// hot edge cell (up to 2⁻²⁵ × 100 K = 3e-6 K) against the drop of about 0.25 K across half
/// a granite cell at 64 cells is up to 1.5e-5 of the flux.
const FLUX_FROM_EXACT: f64 = 1e-4;

/// A library material, or an internal error if the library lost it.
pub(super) fn material(name: &str) -> Result<Material> {
    find(name)
        .ok_or_else(|| HeatlabError::Internal(format!("the material library has no \"{name}\"")))
}

/// A strip `length` m long of `n` cells by 2 (sides top and bottom insulated), of `material`.
pub(super) fn strip(n: usize, length: f64, material: Material) -> Result<HeatProblem> {
    Ok(HeatProblem::uniform(
        size(2, n)?,
        length / n as f64,
        material,
    ))
}

/// Steps `problem` from a uniform `initial` to a steady state in windows of `window` steps,
/// with the steady tolerance on `scale` (°C).
fn steady_state(
    backend: &mut dyn Backend,
    problem: &HeatProblem,
    initial: f64,
    window: u64,
    scale: f64,
    book_energy: bool,
) -> Result<(StepTables, Steady)> {
    let tables = start(
        backend,
        problem,
        field_of(problem.size, |_, _| initial)?,
        book_energy,
    )?;
    let steady = step_to_steady(
        backend,
        window,
        STEADY_TOLERANCE * scale,
        window * MAX_WINDOWS,
    )?;
    Ok((tables, steady))
}

/// The check that every resolution reached its steady state.
fn steady_check(largest_change: f64, scale: f64) -> Check {
    Check::at_most(
        "largest change over the last window (of the temperature scale)",
        largest_change / scale,
        STEADY_TOLERANCE,
    )
}

/// What an exact steady case measured at one resolution.
struct ExactRun {
    tables: StepTables,
    /// Steps from the cold start to the steady state.
    steps: u64,
    /// The largest change of a cell over the last window, °C.
    last_change: f64,
    /// The steady state reached from the cold start, and the fluxes over one more window.
    cold: Measured,
    /// The field and fluxes after one window started from the exact answer.
    from_exact: Measured,
}

/// A field and the heat fluxes (W/m², in the +x direction) through the left and right sides
/// over a window.
struct Measured {
    field: Grid,
    left: f64,
    right: f64,
}

/// Runs `problem` to its steady state from a uniform `cold` plate, then again for one window
/// from `exact(col)`, measuring the side fluxes with the energy ledger.
fn run_exact(
    backend: &mut dyn Backend,
    problem: &HeatProblem,
    exact: impl Fn(usize) -> f64,
    cold: f64,
    window: u64,
    scale: f64,
) -> Result<ExactRun> {
    let (tables, steady) = steady_state(backend, problem, cold, window, scale, true)?;
    let (left, right) = side_fluxes(backend, problem, &tables, window)?;
    let cold = Measured {
        field: steady.field,
        left,
        right,
    };
    start(
        backend,
        problem,
        field_of(problem.size, |_, col| exact(col))?,
        true,
    )?;
    let (left, right) = side_fluxes(backend, problem, &tables, window)?;
    let from_exact = Measured {
        field: backend.download()?,
        left,
        right,
    };
    Ok(ExactRun {
        tables,
        steps: steady.steps,
        last_change: steady.last_change,
        cold,
        from_exact,
    })
}

/// The mean heat fluxes in through the left side and out through the right over the next
/// `window` steps, from the energy ledger, W/m².
fn side_fluxes(
    backend: &mut dyn Backend,
    problem: &HeatProblem,
    tables: &StepTables,
    window: u64,
) -> Result<(f64, f64)> {
    backend.take_energy_exchange()?;
    super::advance(backend, window)?;
    let exchange = backend.take_energy_exchange()?;
    let area_time = problem.size.rows as f64 * problem.spacing * window as f64 * tables.dt;
    Ok((
        exchange.side(Side::Left) / area_time,
        -exchange.side(Side::Right) / area_time,
    ))
}

/// The largest temperature error of a 1-D `field` against `exact(col)`, over `scale`.
fn profile_error(field: &Grid, exact: &impl Fn(usize) -> f64, scale: f64) -> f64 {
    let cols = field.cols();
    largest_difference(field, |i| exact(i % cols)) / scale
}

/// An exact case's row.
fn exact_resolution(
    problem: &HeatProblem,
    run: &ExactRun,
    across: usize,
    errors: (f64, f64),
) -> Resolution {
    Resolution {
        error_from_exact: Some(errors.1),
        ..resolution(problem, &run.tables, across, run.steps, errors.0)
    }
}

/// The checks of an exact steady case.
fn exact_checks(case: &mut CaseReport, largest_change: f64, scale: f64, from_exact: f64) {
    case.check_stall(STALL);
    case.check_from_exact(from_exact);
    case.checks.push(steady_check(largest_change, scale));
}

/// Steady conduction between a left side at 100 °C and a right side at 0 °C, top and bottom
/// insulated: the profile is linear, and the scheme (the fixed sides half a cell from the edge
/// cells' centres) reproduces it exactly.
pub fn linear_profile(backend: &mut dyn Backend) -> Result<CaseReport> {
    const LENGTH: f64 = 0.1;
    let (hot, cold) = (100.0, 0.0);
    let mut resolutions = Vec::new();
    let mut largest_change: f64 = 0.0;
    for n in ACROSS {
        let mut problem = strip(n, LENGTH, material("stainless-steel")?)?;
        problem.sides.left = SideCondition::Fixed { temperature: hot };
        problem.sides.right = SideCondition::Fixed { temperature: cold };
        let dx = problem.spacing;
        let exact = |col: usize| hot + (cold - hot) * (col as f64 + 0.5) * dx / LENGTH;
        // The slowest mode decays in about 0.45 N² steps at 0.9 of the limit.
        let window = (n * n) as u64;
        let run = run_exact(backend, &problem, exact, cold, window, hot - cold)?;
        let errors = (
            profile_error(&run.cold.field, &exact, hot - cold),
            profile_error(&run.from_exact.field, &exact, hot - cold),
        );
        largest_change = worse(largest_change, run.last_change);
        resolutions.push(exact_resolution(&problem, &run, n, errors));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "linear",
        "steady conduction between two fixed sides (stainless steel, 100 °C to 0 °C)",
        "max |T - T_exact| / ΔT",
        Expected::Exact,
        resolutions,
    );
    exact_checks(&mut case, largest_change, hot - cold, FROM_EXACT);
    Ok(case)
}

/// A fixed heat flux q into the left side of a wall whose right side is held at 20 °C: the
/// steady profile is `T = 20 + q (L - x) / k`, exact in the scheme; the ledger books `q` per
/// square metre of side exactly (up to the `f32` rounding of the side's constant).
pub fn flux_wall(backend: &mut dyn Backend) -> Result<CaseReport> {
    const LENGTH: f64 = 0.1;
    const FLUX: f64 = 5000.0;
    const OUTSIDE: f64 = 20.0;
    let steel = material("stainless-steel")?;
    let rise = FLUX * LENGTH / steel.conductivity;
    let mut resolutions = Vec::new();
    let (mut largest_change, mut ledger_error): (f64, f64) = (0.0, 0.0);
    for n in ACROSS {
        let mut problem = strip(n, LENGTH, steel.clone())?;
        problem.sides.left = SideCondition::Flux { flux: FLUX };
        problem.sides.right = SideCondition::Fixed {
            temperature: OUTSIDE,
        };
        let dx = problem.spacing;
        let exact =
            |col: usize| OUTSIDE + FLUX * (LENGTH - (col as f64 + 0.5) * dx) / steel.conductivity;
        // One side fixed, one insulated from conduction: the slowest mode is a quarter wave,
        // four times slower than between two fixed sides (about 1.8 N² steps).
        let window = 2 * (n * n) as u64;
        let run = run_exact(backend, &problem, exact, OUTSIDE, window, rise)?;
        let errors = (
            profile_error(&run.cold.field, &exact, rise),
            profile_error(&run.from_exact.field, &exact, rise),
        );
        // The flux side's constant gives exactly q in, whatever the temperatures.
        for booked in [run.cold.left, run.from_exact.left] {
            ledger_error = worse(ledger_error, (booked - FLUX).abs() / FLUX);
        }
        largest_change = worse(largest_change, run.last_change);
        resolutions.push(exact_resolution(&problem, &run, n, errors));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "flux",
        "fixed heat flux 5000 W/m² into a stainless-steel wall, far side at 20 °C",
        "max |T - T_exact| / (qL/k)",
        Expected::Exact,
        resolutions,
    );
    exact_checks(&mut case, largest_change, rise, FROM_EXACT);
    case.checks.push(Check::at_most(
        "flux booked through the flux side against q (relative)",
        ledger_error,
        1e-6,
    ));
    Ok(case)
}

/// Granite (5 cm) and brick (15 cm) in series between 100 °C and 0 °C, the interface on a
/// cell face: the steady flux through both sides (from the energy ledger) equals
/// `ΔT / (L_1/k_1 + L_2/k_2)`, exactly in the scheme thanks to the harmonic-mean face.
pub fn composite_wall(backend: &mut dyn Backend) -> Result<CaseReport> {
    const GRANITE: f64 = 0.05;
    const BRICK: f64 = 0.15;
    let (hot, cold) = (100.0, 0.0);
    let (granite, brick) = (material("granite")?, material("brick")?);
    let flux = (hot - cold) / (GRANITE / granite.conductivity + BRICK / brick.conductivity);
    let exact = |x: f64| {
        if x < GRANITE {
            hot - flux * x / granite.conductivity
        } else {
            hot - flux * (GRANITE / granite.conductivity + (x - GRANITE) / brick.conductivity)
        }
    };
    let flux_error = |m: &Measured| worse((m.left - flux).abs(), (m.right - flux).abs()) / flux;
    let mut resolutions = Vec::new();
    let mut largest_change: f64 = 0.0;
    for n in ACROSS {
        let mut problem = strip(n, GRANITE + BRICK, granite.clone())?;
        let brick_kind = problem.kind_index(CellKind::of(brick.clone()))?;
        let interface = n / 4;
        problem.paint(brick_kind, |_, col| col >= interface);
        problem.sides.left = SideCondition::Fixed { temperature: hot };
        problem.sides.right = SideCondition::Fixed { temperature: cold };
        let dx = problem.spacing;
        // The brick's diffusivity is a third of the granite's, which sets the step: its modes
        // take about three times as long as a uniform wall's.
        let window = 2 * (n * n) as u64;
        let at_column = |col: usize| exact((col as f64 + 0.5) * dx);
        let run = run_exact(backend, &problem, at_column, cold, window, hot - cold)?;
        let errors = (flux_error(&run.cold), flux_error(&run.from_exact));
        largest_change = worse(largest_change, run.last_change);
        resolutions.push(exact_resolution(&problem, &run, n, errors));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "composite",
        "granite 5 cm + brick 15 cm in series, 100 °C to 0 °C: steady flux = ΔT / Σ(L/k)",
        "max over both sides |q - q_exact| / q_exact",
        Expected::Exact,
        resolutions,
    );
    exact_checks(&mut case, largest_change, hot - cold, FLUX_FROM_EXACT);
    Ok(case)
}

/// A 10 cm × 5 cm plate with its top (long) side at 100 °C and the others at 0 °C, steady,
/// against the Fourier series. The temperature jumps at the two hot corners, where no grid
/// resolves it; the error is measured over the cells at least a quarter of the width from
/// them, where the scheme converges at second order.
pub fn rectangle(backend: &mut dyn Backend) -> Result<CaseReport> {
    const WIDTH: f64 = 0.1;
    const HEIGHT: f64 = 0.05;
    let (hot, cold) = (100.0, 0.0);
    let mut resolutions = Vec::new();
    let mut largest_change: f64 = 0.0;
    for n in ACROSS {
        let dx = WIDTH / n as f64;
        let mut problem = HeatProblem::uniform(size(n / 2, n)?, dx, material("aluminium")?);
        problem.sides = Sides::all(SideCondition::Fixed { temperature: cold });
        problem.sides.top = SideCondition::Fixed { temperature: hot };
        // The slowest mode decays in about 0.09 N² steps.
        let window = (n * n / 4) as u64;
        let (tables, steady) = steady_state(backend, &problem, cold, window, hot - cold, false)?;
        let far_from_corners = |x: f64, y: f64| {
            let (top_left, top_right) = (x.hypot(HEIGHT - y), (WIDTH - x).hypot(HEIGHT - y));
            top_left.min(top_right) >= 0.25 * WIDTH
        };
        let mut error: f64 = 0.0;
        for (i, &value) in steady.field.as_slice().iter().enumerate() {
            // y from the cold bottom side: row 0 is the top.
            let x = ((i % n) as f64 + 0.5) * dx;
            let y = HEIGHT - ((i / n) as f64 + 0.5) * dx;
            if far_from_corners(x, y) {
                let exact = cold + (hot - cold) * rectangle_theta(WIDTH, HEIGHT, x, y);
                error = worse(error, (f64::from(value) - exact).abs() / (hot - cold));
            }
        }
        largest_change = worse(largest_change, steady.last_change);
        resolutions.push(resolution(&problem, &tables, n, steady.steps, error));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "rectangle",
        "10 x 5 cm plate, long top side at 100 °C, the others at 0 °C, steady, against its Fourier series",
        "max |T - T_exact| / ΔT over cells ≥ W/4 from the hot corners",
        Expected::Order(2.0),
        resolutions,
    );
    case.check_errors(1e-3);
    case.checks.push(steady_check(largest_change, hot - cold));
    Ok(case)
}
