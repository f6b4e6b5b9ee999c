//! `heatlab bench --steady`: the steady state of a heat sink solved directly, beside the
//! explicit marching it replaces, on one backend.
//!
//! Marching's cost is the explicit step's measured time times the steps the slowest mode needs
//! to decay to the same tolerance. That mode's rate is taken from the lumped estimate
//! `λ = Σ G_out / Σ C` (all the heat leaving through the sides, the whole sink at one
//! temperature), which is faster than the true slowest mode whenever the sink has internal
//! resistance: the steps are a lower bound and the speed-up an underestimate.

use std::time::Instant;

use crate::compute::{Backend, ProblemUpload, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::problem::material::find;
use crate::problem::{CellKind, HeatProblem, Heater, HeaterPower, SideCondition, Sides};
use crate::solve::{ImplicitScheme, ProblemSolver, SolveOptions, SolveRequest};

/// A heat sink on `size` cells of 25 µm: copper fins on a copper base in air, a chip heating
/// in an FR-4 board, convective sides (conductivity contrast 401 / 0.0263 = 1.5e4).
pub fn heat_sink(size: GridSize) -> Result<HeatProblem> {
    let (rows, cols) = (size.rows, size.cols);
    let material = |name: &str| {
        find(name).ok_or_else(|| HeatlabError::Internal(format!("no material {name}")))
    };
    let mut problem = HeatProblem::uniform(size, 25e-6, material("air")?);
    let copper = problem.kind_index(CellKind::of(material("copper")?))?;
    let board = problem.kind_index(CellKind::of(material("fr4")?))?;
    let mut chip = CellKind::of(material("silicon")?);
    chip.name = "chip".into();
    chip.heater = Some(Heater {
        power: HeaterPower::Total(20.0),
        on: true,
    });
    let chip = problem.kind_index(chip)?;
    let base = rows * 3 / 4;
    let fin_pitch = (cols / 16).max(1);
    problem.paint(board, |r, _| r >= base + rows / 16);
    problem.paint(copper, |r, c| {
        (r + rows / 16 >= base && r < base)
            || (r < base && r > rows / 8 && (c / fin_pitch) % 2 == 1)
    });
    problem.paint(chip, |r, c| {
        r >= base && r < base + rows / 16 && c > cols * 2 / 5 && c < cols * 3 / 5
    });
    problem.sides = Sides::all(SideCondition::Convective {
        h: 25.0,
        ambient: 20.0,
    });
    Ok(problem)
}

/// One row of the bench.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SteadyRow {
    /// Cells on a side.
    pub size: GridSize,
    /// Grids in the hierarchy.
    pub levels: usize,
    /// Iterations of the solve.
    pub iterations: u32,
    /// The solve's time (the first solve builds and uploads the grids; this is the second,
    /// from the same start), ms.
    pub solve_ms: f64,
    /// Building the grids on the host, ms.
    pub setup_ms: f64,
    /// One explicit step, µs (measured over `explicit_steps` steps).
    pub explicit_step_us: f64,
    /// Explicit steps the slowest mode needs to decay to the tolerance (lumped estimate, a
    /// lower bound).
    pub marching_steps: f64,
    /// Marching's time over the solve's.
    pub speedup: f64,
    /// One backward-Euler step of 100 explicit steps from the steady start, ms (the
    /// second; the first builds the coarsest matrix for its `σ`).
    pub implicit_step_ms: f64,
    /// Its iterations.
    pub implicit_iterations: u32,
}

/// The bench on `backend` for each size, to `options`' tolerance.
pub fn bench_steady(
    backend: &mut dyn Backend,
    sizes: &[usize],
    options: &SolveOptions,
    explicit_steps: u64,
) -> Result<Vec<SteadyRow>> {
    let mut rows = Vec::new();
    for &n in sizes {
        let size = GridSize { rows: n, cols: n };
        let problem = heat_sink(size)?;
        let started = Instant::now();
        let solver = ProblemSolver::of(&problem)?;
        let setup_ms = started.elapsed().as_secs_f64() * 1e3;
        let start = Grid::from_vec(size, vec![20.0; size.cells()])?;
        backend.upload(&start)?;
        backend.solve_problem(&solver, SolveRequest::Steady, options)?;
        backend.upload(&start)?;
        let report = backend.solve_problem(&solver, SolveRequest::Steady, options)?;
        let implicit = SolveRequest::Implicit {
            scheme: ImplicitScheme::BackwardEuler,
            dt: 100.0 * problem.tables()?.dt,
        };
        backend.upload(&start)?;
        backend.solve_problem(&solver, implicit, options)?;
        let step = backend.solve_problem(&solver, implicit, options)?;
        let compiled = problem.compile()?;
        backend.upload(&start)?;
        backend.set_problem(Some(ProblemUpload::of(&compiled, false)))?;
        backend.advance(10, &StepParams::default())?;
        let elapsed = backend.advance(explicit_steps, &StepParams::default())?;
        backend.set_problem(None)?;
        let step_seconds = elapsed.as_secs_f64() / explicit_steps as f64;
        let fine = solver.fine();
        let outlet: f64 = fine.extra_x.iter().chain(&fine.extra_y).sum();
        let capacity: f64 = fine.capacity.iter().sum();
        let rate = outlet / capacity;
        let marching_steps = (1.0 / options.tolerance).ln() / (rate * compiled.tables.dt);
        rows.push(SteadyRow {
            size,
            levels: report.levels,
            iterations: report.cycles,
            solve_ms: report.seconds * 1e3,
            setup_ms,
            explicit_step_us: step_seconds * 1e6,
            marching_steps,
            speedup: marching_steps * step_seconds / report.seconds,
            implicit_step_ms: step.seconds * 1e3,
            implicit_iterations: step.cycles,
        });
    }
    Ok(rows)
}
