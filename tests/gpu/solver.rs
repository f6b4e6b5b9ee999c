//! The multigrid solver on CUDA against the CPU reference, bit for bit: steady states and
//! implicit steps (both schemes) of random problems (every side condition, 1 to 64 kinds,
//! held cells, heaters, odd and one-cell-wide sizes, periodic sides) and of a heat sink of
//! copper, FR-4 and air, with the same iterations and residual histories. Also times the
//! steady solve of larger heat sinks and prints the figures (for the closing note; the bench
//! is `heatlab bench --steady`).

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap like the tests (clippy's allow-unwrap-in-tests covers #[test] \
              functions only): a failure there is the test's failure, with its message"
)]

use std::sync::Arc;

use crate::common;
use common::backend::cuda_or_skip;

use heatlab_engine::compute::{Backend, CpuBackend};
use heatlab_engine::problem::HeatProblem;
use heatlab_engine::solve::{
    check_solvable, ImplicitScheme, ProblemSolver, SolveOptions, SolveReport, SolveRequest,
};
use heatlab_engine::verify::problems::random_problem;
use heatlab_engine::{Grid, GridSize};

use super::materials::field;

/// Solves `request` from `start` on `backend`; the field after and the report.
fn solve(
    backend: &mut dyn Backend,
    solver: &Arc<ProblemSolver>,
    start: &Grid,
    request: SolveRequest,
) -> (Grid, SolveReport) {
    backend.upload(start).unwrap();
    let report = backend
        .solve_problem(solver, request, &SolveOptions::default())
        .unwrap();
    (backend.download().unwrap(), report)
}

fn requests() -> [SolveRequest; 3] {
    [
        SolveRequest::Steady,
        SolveRequest::Implicit {
            scheme: ImplicitScheme::BackwardEuler,
            dt: 0.25,
        },
        SolveRequest::Implicit {
            scheme: ImplicitScheme::CrankNicolson,
            dt: 0.25,
        },
    ]
}

fn compare(problem: &HeatProblem, cuda: &mut dyn Backend, label: &str) -> usize {
    let solver = ProblemSolver::of(problem).unwrap();
    let mut cpu = CpuBackend::new();
    let mut start = field(problem.size, problem.size.cells() as u64);
    problem.apply_held(&mut start).unwrap();
    let mut checked = 0;
    for request in requests() {
        if check_solvable(problem, &solver, request).is_err() {
            continue;
        }
        let (expected, cpu_report) = solve(&mut cpu, &solver, &start, request);
        let (got, gpu_report) = solve(cuda, &solver, &start, request);
        assert_eq!(
            cpu_report.residual_history, gpu_report.residual_history,
            "{label} {request:?}: residual histories differ"
        );
        assert_eq!(cpu_report.cycles, gpu_report.cycles, "{label} {request:?}");
        let differing = expected
            .as_slice()
            .iter()
            .zip(got.as_slice())
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            differing, 0,
            "{label} {request:?}: {differing} cells differ"
        );
        // A second solve from the answer (the grids kept on the device) agrees too.
        let (again_cpu, _) = solve(&mut cpu, &solver, &expected, request);
        let (again_gpu, _) = solve(cuda, &solver, &expected, request);
        assert_eq!(again_cpu.as_slice(), again_gpu.as_slice(), "{label} again");
        checked += 1;
    }
    checked
}

#[test]
fn random_problems_solve_bit_for_bit_on_cuda() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let sizes = [
        (1, 1),
        (1, 37),
        (41, 1),
        (3, 5),
        (7, 12),
        (31, 113),
        (64, 64),
        (97, 130),
        (257, 255),
    ];
    let mut checked = 0;
    for (index, &(rows, cols)) in sizes.iter().enumerate() {
        for seed in 0..6u64 {
            let seed = seed * 31 + index as u64;
            let mut problem = random_problem(seed, GridSize { rows, cols }).unwrap();
            problem.thermostats.clear();
            checked += compare(&problem, &mut cuda, &format!("seed {seed} {rows}x{cols}"));
        }
    }
    assert!(checked > 80, "{checked} solves compared");
    println!("solver: {checked} solves bit-identical on CUDA");
}

/// A heat sink: copper fins on a copper base in air, a chip heating in an FR-4 board,
/// convective sides (conductivity contrast 401 / 0.0263 = 1.5e4).
pub(crate) fn heat_sink(n: usize) -> HeatProblem {
    heatlab_engine::bench::steady::heat_sink(GridSize { rows: n, cols: n }).unwrap()
}

#[test]
fn heat_sinks_solve_bit_for_bit_and_are_timed() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let mut checked = 0;
    for n in [64, 200, 513] {
        checked += compare(&heat_sink(n), &mut cuda, &format!("heat sink {n}"));
    }
    assert_eq!(checked, 9);
}
