//! The transient cases: a slab cooling through convective sides, a Gaussian hot spot, and
//! heaters in an insulated box. Each runs to a fixed time in whole steps of at most 0.9 of the
//! stability limit, so the time step follows `dx²` and the error falls at the scheme's order
//! in space.

use super::report::{worse, CaseReport, Check, Expected};
use super::steady::{material, strip};
use super::{
    advance, field_of, finish, largest_difference, resolution, size, start, steps_reaching,
};
use crate::compute::Backend;
use crate::error::Result;
use crate::problem::energy::{free_capacity, EnergyBalance, RoundOff};
use crate::problem::exact::{gaussian_rise, SlabSeries};
use crate::problem::{CellKind, HeatProblem, Heater, HeaterPower, SideCondition, StepTables};

/// The fraction of the stability limit the transient cases step at (at most).
const STEP_FRACTION: f64 = 0.9;

/// The energy balance's closing error allowed, relative to the energies in it: the ledger
/// books in `f64` from the same `f32` gains as the step, so what is left is the `f32` field's
/// round-off (2⁻²⁴ ≈ 6e-8 per value, accumulating over steps and cells).
const CLOSING: f64 = 1e-5;

/// Runs `problem` from `initial` for `duration` seconds with the ledger on; returns its tables,
/// the steps, the final field and the energy balance of the run.
fn run_for(
    backend: &mut dyn Backend,
    problem: &mut HeatProblem,
    initial: impl Fn(usize, usize) -> f64,
    duration: f64,
) -> Result<(StepTables, u64, crate::grid::Grid, EnergyBalance)> {
    let steps = steps_reaching(problem, duration, STEP_FRACTION)?;
    let first = field_of(problem.size, initial)?;
    let tables = start(backend, problem, first, true)?;
    let stored_before = backend.stored_energy()?;
    let magnitude_before = backend.statistics()?.largest_magnitude();
    backend.take_energy_exchange()?;
    advance(backend, steps)?;
    let exchange = backend.take_energy_exchange()?;
    let stored_after = backend.stored_energy()?;
    let magnitude = magnitude_before.max(backend.statistics()?.largest_magnitude());
    let field = backend.download()?;
    let round_off = RoundOff {
        explicit_steps: steps,
        ..RoundOff::default()
    };
    let capacity = free_capacity(&tables, &problem.kind_counts());
    let balance = EnergyBalance::new(
        stored_before,
        stored_after,
        exchange,
        round_off.bound(capacity, magnitude),
    );
    Ok((tables, steps, field, balance))
}

/// The closing error as a share of the `f32` round-off bound of the window's steps.
fn share_of_bound(balance: &EnergyBalance) -> f64 {
    balance.closing_error().abs() / balance.round_off_bound
}

/// The check that every resolution's balance closes within its round-off bound.
fn bound_check(share: f64) -> Check {
    Check::at_most(
        "energy balance closing error / its float32 round-off bound",
        share,
        1.0,
    )
}

/// A 20 cm concrete slab at 100 °C cooling for an hour through both faces into air at 20 °C
/// with `h` such that the Biot number `h L / k` (L the half-thickness) is 1, against the
/// series solution.
pub fn convective_slab(backend: &mut dyn Backend) -> Result<CaseReport> {
    const HALF: f64 = 0.1;
    const DURATION: f64 = 3600.0;
    const BIOT: f64 = 1.0;
    let (initial, ambient) = (100.0, 20.0);
    let concrete = material("concrete")?;
    let h = BIOT * concrete.conductivity / HALF;
    let fourier = concrete.diffusivity() * DURATION / (HALF * HALF);
    let series = SlabSeries::new(BIOT);
    let mut resolutions = Vec::new();
    let mut closing: f64 = 0.0;
    let mut against_bound: f64 = 0.0;
    for n in [8, 16, 32, 64] {
        let mut problem = strip(n, 2.0 * HALF, concrete.clone())?;
        let convective = SideCondition::Convective { h, ambient };
        (problem.sides.left, problem.sides.right) = (convective, convective);
        let (tables, steps, field, balance) =
            run_for(backend, &mut problem, |_, _| initial, DURATION)?;
        let dx = problem.spacing;
        let exact = |i: usize| {
            let from_middle = ((i % n) as f64 + 0.5) * dx - HALF;
            ambient + (initial - ambient) * series.theta(from_middle / HALF, fourier)
        };
        let error = largest_difference(&field, exact) / (initial - ambient);
        closing = worse(closing, balance.relative_closing_error());
        against_bound = worse(against_bound, share_of_bound(&balance));
        resolutions.push(resolution(&problem, &tables, n, steps, error));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "slab",
        "20 cm concrete slab, 100 °C, cooling 1 h through convective faces (Bi = 1, air at 20 °C)",
        "max |T - T_series| / (T_i - T_air)",
        Expected::Order(2.0),
        resolutions,
    );
    case.check_errors(1e-3);
    case.checks.push(Check::at_most(
        "energy balance closing error (relative), convective sides",
        closing,
        CLOSING,
    ));
    case.checks.push(bound_check(against_bound));
    Ok(case)
}

/// A Gaussian hot spot (peak 80 K above 20 °C, σ0 = 1 cm) in a 16 cm aluminium plate after
/// 0.5 s, against the exact Gaussian of `σ² = σ0² + 2αt`: the plate is 16 σ0 across, so the
/// spot has not reached the (insulated) sides to 1e-7 of its peak.
pub fn gaussian_spot(backend: &mut dyn Backend) -> Result<CaseReport> {
    const WIDTH: f64 = 0.16;
    const SIGMA0: f64 = 0.01;
    const DURATION: f64 = 0.5;
    let (base, peak) = (20.0, 80.0);
    let aluminium = material("aluminium")?;
    let alpha = aluminium.diffusivity();
    let mut resolutions = Vec::new();
    let mut closing: f64 = 0.0;
    let mut against_bound: f64 = 0.0;
    for n in [32, 64, 128, 256] {
        let dx = WIDTH / n as f64;
        let mut problem = HeatProblem::uniform(size(n, n)?, dx, aluminium.clone());
        let distance = |row: usize, col: usize| {
            let x = (col as f64 + 0.5) * dx - 0.5 * WIDTH;
            let y = (row as f64 + 0.5) * dx - 0.5 * WIDTH;
            x.hypot(y)
        };
        let spot = |row, col, t| base + gaussian_rise(peak, SIGMA0, alpha, t, distance(row, col));
        let (tables, steps, field, balance) =
            run_for(backend, &mut problem, |r, c| spot(r, c, 0.0), DURATION)?;
        let error = largest_difference(&field, |i| spot(i / n, i % n, DURATION)) / peak;
        // Nothing crosses the sides: the stored energy may drift only by round-off, measured
        // against the heat the spot holds above the plate.
        let plate = tables.capacity[0] * base * (n * n) as f64;
        closing = worse(
            closing,
            balance.closing_error().abs() / (balance.stored_before - plate),
        );
        against_bound = worse(against_bound, share_of_bound(&balance));
        resolutions.push(resolution(&problem, &tables, n, steps, error));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "gaussian",
        "hot spot (σ0 = 1 cm, 80 K) spreading 0.5 s in a 16 cm aluminium plate",
        "max |T - T_exact| / peak rise",
        Expected::Order(2.0),
        resolutions,
    );
    case.check_errors(2e-3);
    // The plate's 20 °C base: the smallest rises at the spreading front (below half a unit in
    // the last place, 1e-6 K) round away, a few parts in 10⁶ of the spot's heat at 256².
    case.checks.push(Check::at_most(
        "stored energy drift (relative to the spot's heat), insulated plate",
        closing,
        5e-5,
    ));
    case.checks.push(bound_check(against_bound));
    Ok(case)
}

/// Two heaters in an insulated 10 cm aluminium box at 0 °C for 5 s: a centred square of a
/// quarter of the width giving 500 W per metre of depth in total, and a square of an eighth of
/// the width in a corner at 10⁷ W/m³. The stored energy must rise by the power × time.
///
/// The box starts at 0 °C, where `f32` resolves the per-step rises finely; from 20 °C, where a
/// unit in the last place is 2e-6 K, rises at the spreading front round away and the balance
/// closes to about 6e-5 at 64² (see `docs/physics.md`).
pub fn insulated_heater(backend: &mut dyn Backend) -> Result<CaseReport> {
    const WIDTH: f64 = 0.1;
    const TOTAL: f64 = 500.0;
    const DENSITY: f64 = 1e7;
    const DURATION: f64 = 5.0;
    let aluminium = material("aluminium")?;
    let power = TOTAL + DENSITY * (WIDTH / 8.0) * (WIDTH / 8.0);
    let mut resolutions = Vec::new();
    let mut closing: f64 = 0.0;
    let mut against_bound: f64 = 0.0;
    for n in [8, 16, 32, 64] {
        let mut problem = HeatProblem::uniform(size(n, n)?, WIDTH / n as f64, aluminium.clone());
        let heater = |name: &str, power| CellKind {
            name: name.to_string(),
            heater: Some(Heater { power, on: true }),
            ..CellKind::of(aluminium.clone())
        };
        let centre = problem.kind_index(heater("centre", HeaterPower::Total(TOTAL)))?;
        let corner = problem.kind_index(heater("corner", HeaterPower::PerVolume(DENSITY)))?;
        let (low, high) = (3 * n / 8, 5 * n / 8);
        problem.paint(centre, |r, c| {
            (low..high).contains(&r) && (low..high).contains(&c)
        });
        problem.paint(corner, |r, c| r < n / 8 && c < n / 8);
        let (tables, steps, _, balance) = run_for(backend, &mut problem, |_, _| 0.0, DURATION)?;
        let supplied = power * steps as f64 * tables.dt;
        let stored = balance.stored_after - balance.stored_before;
        let error = (stored - supplied).abs() / supplied;
        closing = worse(closing, balance.relative_closing_error());
        against_bound = worse(against_bound, share_of_bound(&balance));
        resolutions.push(resolution(&problem, &tables, n, steps, error));
    }
    finish(backend)?;
    let mut case = CaseReport::new(
        "heater",
        "heaters (500 W/m in total, and 10⁷ W/m³) in an insulated aluminium box at 0 °C for 5 s",
        "|ΔE_stored - P t| / (P t)",
        Expected::Exact,
        resolutions,
    );
    case.check_errors(1e-5);
    case.checks.push(Check::at_most(
        "energy balance closing error (relative), heaters",
        closing,
        CLOSING,
    ));
    case.checks.push(bound_check(against_bound));
    Ok(case)
}
