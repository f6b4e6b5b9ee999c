//! The CPU solver ([`crate::solve`]) against a dense `f64` solve of the same system on
//! random problems (here, beside the generator of random problems), the explicit step's own
//! tables and exact answers.

use std::sync::Arc;

use crate::grid::GridSize;
use crate::problem::material::find;
use crate::problem::step::step_field;
use crate::problem::{CellKind, HeatProblem, Heater, HeaterPower, SideCondition};
use crate::solve::cpu::{implicit_rhs, neighbour_sum, CpuMultigrid, CpuSolve};
use crate::solve::*;
use crate::verify::problems::random_problem;

/// Solves `(σ C + A) x = rhs` by Gaussian elimination with partial pivoting over the free
/// cells (the reference of a small system).
fn dense_solve(solver: &ProblemSolver, field: &[f32], request: SolveRequest) -> Vec<f64> {
    let c = solver.fine();
    let sigma = request.sigma();
    let mut grids = CpuMultigrid::new(Arc::new(solver.clone()));
    grids.load(field, request);
    let start = grids.values().to_vec();
    let rhs: Vec<f64> = (0..c.cells())
        .map(|i| match c.free[i] {
            1 => implicit_rhs(
                c,
                &solver.rhs,
                &start,
                request,
                sigma,
                i / c.cols,
                i % c.cols,
            ),
            _ => 0.0,
        })
        .collect();
    let unknowns: Vec<usize> = (0..c.cells()).filter(|&i| c.free[i] == 1).collect();
    let n = unknowns.len();
    let index = |cell: usize| unknowns.iter().position(|&u| u == cell);
    let mut a = vec![vec![0.0f64; n + 1]; n];
    for (row_index, &cell) in unknowns.iter().enumerate() {
        let (row, col) = (cell / c.cols, cell % c.cols);
        a[row_index][row_index] += c.diagonal[cell] + sigma * c.capacity[cell];
        let mut couple = |other: Option<usize>, g: f64| {
            if let Some(other) = other {
                if let Some(j) = index(other) {
                    a[row_index][j] -= g;
                }
            }
        };
        couple(
            c.west(row, col),
            c.west(row, col).map_or(0.0, |w| c.east[w]),
        );
        couple(c.east_of(row, col), c.east[cell]);
        couple(
            c.north(row, col),
            c.north(row, col).map_or(0.0, |w| c.south[w]),
        );
        couple(c.south_of(row, col), c.south[cell]);
        a[row_index][n] = rhs[cell];
    }
    for k in 0..n {
        let pivot = (k..n)
            .max_by(|&p, &q| a[p][k].abs().total_cmp(&a[q][k].abs()))
            .unwrap();
        a.swap(k, pivot);
        let pivot_row = a[k].clone();
        for row in a.iter_mut().skip(k + 1) {
            let f = row[k] / pivot_row[k];
            for (value, &above) in row.iter_mut().zip(&pivot_row).skip(k) {
                *value -= f * above;
            }
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        let mut s = a[k][n];
        for j in k + 1..n {
            s -= a[k][j] * x[j];
        }
        x[k] = s / a[k][k];
    }
    let mut values = start;
    for (k, &cell) in unknowns.iter().enumerate() {
        values[cell] = x[k];
    }
    values
}

/// Solves on the CPU and returns the `f64` values with the report.
fn cpu_solve(
    solver: &Arc<ProblemSolver>,
    field: &mut [f32],
    request: SolveRequest,
    options: &SolveOptions,
) -> (Vec<f64>, SolveReport) {
    let mut grids = CpuMultigrid::new(solver.clone());
    let report = {
        let mut solve = CpuSolve {
            grids: &mut grids,
            field,
        };
        match solve_on(&mut solve, solver, request, options) {
            Ok(report) => report,
            Err(error) => panic!(
                "{request:?} on {}x{}: {error}",
                solver.fine().rows,
                solver.fine().cols
            ),
        }
    };
    (grids.values().to_vec(), report)
}

fn max_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn span(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    max - min
}

#[test]
fn random_problems_match_a_dense_solve_steady_and_implicit() {
    let requests = [
        SolveRequest::Steady,
        SolveRequest::Implicit {
            scheme: ImplicitScheme::BackwardEuler,
            dt: 0.5,
        },
        SolveRequest::Implicit {
            scheme: ImplicitScheme::CrankNicolson,
            dt: 0.5,
        },
    ];
    let mut checked = 0;
    for seed in 0..24u64 {
        let size = GridSize::new(5 + (seed as usize % 7), 4 + (seed as usize * 5 % 9)).unwrap();
        let mut problem = random_problem(seed, size).unwrap();
        problem.thermostats.clear();
        let solver = ProblemSolver::of(&problem).unwrap();
        let field: Vec<f32> = (0..size.cells())
            .map(|i| 20.0 + ((i * 37 + seed as usize) % 23) as f32)
            .collect();
        for request in requests {
            if check_solvable(&problem, &solver, request).is_err() {
                continue;
            }
            let mut solved = field.clone();
            let (values, report) =
                cpu_solve(&solver, &mut solved, request, &SolveOptions::default());
            if !solver.closed_parts.is_empty() && request == SolveRequest::Steady {
                // Singular: a dense solve is no reference. The residual must vanish and the
                // energy stay (the other test checks that).
                let residual = report.residual_history.last().copied().unwrap_or(0.0);
                let gross: f64 = solver.rhs.iter().map(|b| b.abs()).sum::<f64>().max(1.0);
                assert!(
                    residual <= 1e-6 * gross,
                    "seed {seed}: residual {residual:e}"
                );
                checked += 1;
                continue;
            }
            let expected = dense_solve(&solver, &field, request);
            // The dense solve's own round-off grows with the magnitudes and contrasts.
            let magnitude = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let scale = span(&expected).max(1e-3) + 1e-4 * magnitude;
            let error = max_difference(&values, &expected);
            assert!(
                error <= 1e-6 * scale,
                "seed {seed} {request:?}: error {error:e} of span {scale:e} after {} cycles",
                report.cycles
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} solves checked");
}

fn heat_sink_like(rows: usize, cols: usize) -> HeatProblem {
    let size = GridSize::new(rows, cols).unwrap();
    let mut problem = HeatProblem::uniform(size, 1e-3, find("air").unwrap());
    let copper = problem
        .kind_index(CellKind::of(find("copper").unwrap()))
        .unwrap();
    let board = problem
        .kind_index(CellKind::of(find("fr4").unwrap()))
        .unwrap();
    let mut chip = CellKind::of(find("silicon").unwrap());
    chip.name = "chip".into();
    chip.heater = Some(Heater {
        power: HeaterPower::Total(20.0),
        on: true,
    });
    let chip = problem.kind_index(chip).unwrap();
    let base = rows * 3 / 4;
    problem.paint(board, |r, _| r >= base + rows / 16);
    problem.paint(copper, |r, c| {
        (r >= base - rows / 16 && r < base)
            || (r < base && r > rows / 8 && (c / (cols / 16).max(1)) % 2 == 1)
    });
    problem.paint(chip, |r, c| {
        r >= base && r < base + rows / 16 && c > cols * 2 / 5 && c < cols * 3 / 5
    });
    problem.sides = crate::problem::Sides::all(SideCondition::Convective {
        h: 25.0,
        ambient: 20.0,
    });
    problem
}

#[test]
fn a_steady_state_is_a_fixed_point_of_the_explicit_step() {
    let problem = heat_sink_like(48, 64);
    let solver = ProblemSolver::of(&problem).unwrap();
    let mut field = vec![20.0f32; problem.size.cells()];
    let (values, report) = cpu_solve(
        &solver,
        &mut field,
        SolveRequest::Steady,
        &SolveOptions::default(),
    );
    assert!(report.cycles < 40, "{report:?}");
    let tables = problem.tables().unwrap();
    let mut stepped = vec![0.0f32; field.len()];
    step_field(
        &tables,
        &problem.map,
        &field,
        &mut stepped,
        problem.size.cols,
    );
    let scale = span(&values);
    let moved = field
        .iter()
        .zip(&stepped)
        .map(|(a, b)| f64::from((a - b).abs()))
        .fold(0.0, f64::max);
    // One explicit step from the steady state moves no cell by more than f32 rounding.
    assert!(moved <= 1e-5 * scale, "moved {moved:e} of span {scale:e}");
    // The residual of the f64 solution is tiny against the heat flowing.
    let c = solver.fine();
    let flowing: f64 = solver.rhs.iter().map(|b| b.abs()).sum();
    let worst = (0..c.cells())
        .filter(|&i| c.free[i] == 1)
        .map(|i| {
            let (row, col) = (i / c.cols, i % c.cols);
            (solver.rhs[i] - (c.diagonal[i] * values[i] - neighbour_sum(c, &values, row, col)))
                .abs()
        })
        .fold(0.0, f64::max);
    assert!(
        worst < 1e-6 * flowing,
        "residual {worst:e} of {flowing:e} W/m"
    );
}

#[test]
fn a_composite_wall_carries_the_series_flux() {
    // Two materials in series between fixed sides: the flux is ΔT over the resistances of the
    // half cells next to the sides, the interior faces and the interface, summed exactly.
    let size = GridSize::new(3, 40).unwrap();
    let mut problem = HeatProblem::uniform(size, 2e-3, find("carbon-steel").unwrap());
    let brick = problem
        .kind_index(CellKind::of(find("brick").unwrap()))
        .unwrap();
    problem.paint(brick, |_, c| c >= 25);
    problem.sides.left = SideCondition::Fixed { temperature: 100.0 };
    problem.sides.right = SideCondition::Fixed { temperature: 0.0 };
    let solver = ProblemSolver::of(&problem).unwrap();
    let mut field = vec![50.0f32; size.cells()];
    let tight = SolveOptions {
        tolerance: 1e-13,
        ..SolveOptions::default()
    };
    let (values, _) = cpu_solve(&solver, &mut field, SolveRequest::Steady, &tight);
    let (k1, k2) = (
        problem.kinds[0].material.conductivity,
        problem.kinds[1].material.conductivity,
    );
    let resistance =
        1.0 / (2.0 * k1) + 24.0 / k1 + (k1 + k2) / (2.0 * k1 * k2) + 14.0 / k2 + 1.0 / (2.0 * k2);
    let flux = 100.0 / resistance;
    let left_cell = 100.0 - flux / (2.0 * k1);
    let right_cell = flux / (2.0 * k2);
    for row in 0..3 {
        assert!(
            (values[row * 40] - left_cell).abs() < 1e-9,
            "{}",
            values[row * 40]
        );
        assert!((values[row * 40 + 39] - right_cell).abs() < 1e-9);
    }
}

#[test]
fn a_closed_problem_keeps_its_energy_and_one_with_a_net_source_is_refused() {
    let size = GridSize::new(16, 24).unwrap();
    let mut problem = HeatProblem::uniform(size, 1e-3, find("aluminium").unwrap());
    let steel = problem
        .kind_index(CellKind::of(find("carbon-steel").unwrap()))
        .unwrap();
    problem.paint(steel, |r, c| r < 8 && c < 12);
    let solver = ProblemSolver::of(&problem).unwrap();
    let mut field: Vec<f32> = (0..size.cells()).map(|i| (i % 17) as f32).collect();
    let before =
        solver.closed_energies(&field.iter().map(|&t| f64::from(t)).collect::<Vec<_>>())[0];
    let (values, _) = cpu_solve(
        &solver,
        &mut field,
        SolveRequest::Steady,
        &SolveOptions::default(),
    );
    let uniform = values[0];
    assert!(
        values.iter().all(|v| (v - uniform).abs() < 1e-6),
        "{values:?}"
    );
    assert!((solver.closed_energies(&values)[0] - before).abs() < 1e-9 * before.abs());
    problem.sides.left = SideCondition::Flux { flux: 100.0 };
    let solver = ProblemSolver::of(&problem).unwrap();
    let error = check_solvable(&problem, &solver, SolveRequest::Steady).unwrap_err();
    assert!(error.to_string().contains("no steady state"), "{error}");
    // Implicit steps of the same problem are fine: the temperature rises in time.
    check_solvable(
        &problem,
        &solver,
        SolveRequest::Implicit {
            scheme: ImplicitScheme::BackwardEuler,
            dt: 1.0,
        },
    )
    .unwrap();
}

#[test]
fn cycles_stay_nearly_level_as_the_grid_is_refined() {
    let mut counts = Vec::new();
    for n in [64usize, 128, 256, 512] {
        let problem = heat_sink_like(n, n);
        let solver = ProblemSolver::of(&problem).unwrap();
        let mut field = vec![20.0f32; problem.size.cells()];
        let (_, report) = cpu_solve(
            &solver,
            &mut field,
            SolveRequest::Steady,
            &SolveOptions::default(),
        );
        eprintln!("{n}²: {} cycles {:.3}s", report.cycles, report.seconds);
        counts.push(report.cycles);
    }
    assert!(
        counts[2] as f64 <= 1.5 * counts[0] as f64,
        "cycles {counts:?}"
    );
}

#[test]
fn implicit_steps_book_the_energy_their_equation_moves() {
    use crate::compute::CpuBackend;
    use crate::grid::Grid;
    use crate::sim::solve::Stepping;
    use crate::sim::Simulation;
    for scheme in ImplicitScheme::ALL {
        let problem = heat_sink_like(24, 32);
        let field = Grid::from_vec(problem.size, vec![20.0; problem.size.cells()]).unwrap();
        let mut sim =
            Simulation::new(Box::new(CpuBackend::new()), field, Default::default()).unwrap();
        let dt = 100.0 * problem.tables().unwrap().dt;
        sim.set_problem(Some(problem), true).unwrap();
        sim.set_stepping(Stepping::Implicit {
            scheme,
            dt,
            options: SolveOptions::default(),
        })
        .unwrap();
        assert!(sim.energy_since_last_balance().unwrap().is_none());
        sim.advance(25).unwrap();
        let balance = sim.energy_since_last_balance().unwrap().unwrap();
        let stored = balance.stored_after - balance.stored_before;
        let heaters = balance.exchange.sources;
        assert!(heaters > 0.0 && stored > 0.0, "{balance:?}");
        let closing = stored - balance.exchange.total();
        // The field is rounded to f32 after every step: at most half a unit in the last
        // place of each cell's temperature, 2^-25 of the stored energy, per step.
        let rounding = 25.0 * 2f64.powi(-25) * balance.stored_after.abs();
        assert!(
            closing.abs() <= 1e-7 * heaters + rounding,
            "{scheme}: closing error {closing:e} J/m of {heaters:e} from the heaters \
             (f32 rounding bound {rounding:e})"
        );
    }
}
