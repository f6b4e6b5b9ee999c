//! Tests of the CPU backend's heat problems (the reference): energy kept and balanced, and the
//! same field for any number of threads.

use crate::compute::{Backend, CpuBackend, ProblemUpload};
use crate::grid::{Grid, GridSize};
use crate::problem::energy::{stored_energy, EnergyBalance};
use crate::problem::material::find;
use crate::problem::{
    CellKind, EnergyExchange, HeatProblem, Heater, HeaterPower, Side, SideCondition, Sides,
};

fn plate(rows: usize, cols: usize) -> HeatProblem {
    let size = GridSize::new(rows, cols).unwrap();
    HeatProblem::uniform(size, 0.001, find("aluminium").unwrap())
}

fn ramp(size: GridSize) -> Grid {
    Grid::from_vec(
        size,
        (0..size.cells()).map(|i| 20.0 + (i % 13) as f32).collect(),
    )
    .unwrap()
}

/// `steps` steps of `problem` from `field` on a CPU backend of `threads` threads, with the
/// energy booked.
fn run(problem: &HeatProblem, field: &Grid, threads: usize, steps: u64) -> (Grid, EnergyExchange) {
    let compiled = problem.compile().unwrap();
    let mut cpu = CpuBackend::with_threads(threads);
    cpu.upload(field).unwrap();
    cpu.set_problem(Some(ProblemUpload::of(&compiled, true)))
        .unwrap();
    cpu.advance(steps, &Default::default()).unwrap();
    (cpu.download().unwrap(), cpu.take_energy_exchange().unwrap())
}

#[test]
fn an_insulated_plate_keeps_its_energy_and_evens_out() {
    let problem = plate(23, 17);
    let field = ramp(problem.size);
    let tables = problem.tables().unwrap();
    let before = stored_energy(&tables, &problem.map, field.as_slice(), field.cols());
    let (after, exchange) = run(&problem, &field, 2, 3000);
    let stored = stored_energy(&tables, &problem.map, after.as_slice(), after.cols());
    assert_eq!(exchange.total(), 0.0);
    assert!(
        ((stored - before) / before).abs() < 1e-6,
        "{before} -> {stored}"
    );
    let (lo, hi) = after
        .as_slice()
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    assert!(hi - lo < 0.01, "not evened out: {lo}..{hi}");
}

#[test]
fn the_reference_does_not_depend_on_the_thread_count() {
    let mut problem = plate(37, 29);
    let copper = problem
        .kind_index(CellKind::of(find("copper").unwrap()))
        .unwrap();
    problem.paint(copper, |r, c| (r + 2 * c) % 5 == 0);
    problem.sides.left = SideCondition::Fixed { temperature: 80.0 };
    problem.sides.top = SideCondition::Convective {
        h: 50.0,
        ambient: 5.0,
    };
    problem.sides.bottom = SideCondition::Flux { flux: 2000.0 };
    let field = ramp(problem.size);
    let (one, _) = run(&problem, &field, 1, 57);
    let (three, _) = run(&problem, &field, 3, 57);
    assert_eq!(one.as_slice(), three.as_slice());
}

#[test]
fn held_cells_and_heaters_close_the_energy_balance() {
    let mut problem = plate(31, 41);
    let hot = CellKind {
        name: "hot plate".into(),
        held_temperature: Some(90.0),
        ..CellKind::of(find("copper").unwrap())
    };
    let heater = CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(150.0),
            on: true,
        }),
        ..CellKind::of(find("silicon").unwrap())
    };
    let hot = problem.kind_index(hot).unwrap();
    let heater = problem.kind_index(heater).unwrap();
    problem.paint(hot, |r, c| r < 3 && c < 10);
    problem.paint(heater, |r, c| {
        (10..14).contains(&r) && (20..25).contains(&c)
    });
    problem.sides = Sides::all(SideCondition::Convective {
        h: 25.0,
        ambient: 10.0,
    });
    problem.sides.right = SideCondition::Flux { flux: -500.0 };
    let mut field = ramp(problem.size);
    problem.apply_held(&mut field).unwrap();
    let tables = problem.tables().unwrap();
    let (after, exchange) = run(&problem, &field, 2, 500);
    assert!(
        after.as_slice()[0] == 90.0 && after.as_slice()[9] == 90.0,
        "held cells moved"
    );
    let balance = EnergyBalance::new(
        stored_energy(&tables, &problem.map, field.as_slice(), field.cols()),
        stored_energy(&tables, &problem.map, after.as_slice(), after.cols()),
        exchange,
        0.0,
    );
    assert!(exchange.sources > 0.0 && exchange.held > 0.0 && exchange.side(Side::Right) < 0.0);
    let sources = 150.0 * 500.0 * tables.dt;
    assert!((exchange.sources - sources).abs() < 1e-6 * sources); // f32 gains
    assert!(
        balance.relative_closing_error() < 1e-5,
        "energy balance does not close: {balance:?}"
    );
}
